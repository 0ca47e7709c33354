// The cluster workload kind (`workload.kind: cluster`, docs/cluster.md): a job stream (a trace file
// or the seeded generator) replayed on the scenario's cluster under a job scheduler and a placement
// policy (planners/jobs/), at job level or with the network simulated (sim/cluster/cluster_sim.hpp).
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "planners/jobs/admission.hpp"
#include "planners/jobs/job_scheduler.hpp"
#include "planners/jobs/job_speed.hpp"
#include "sim/cluster/cluster_sim.hpp"
#include "sim/workloads/workload_kind.hpp"
#include "traces/jobs/job_trace.hpp"

namespace dnnsim {

struct ClusterWorkload : WorkloadSpec {
  JobTrace trace;  // filtered, models mapped
  std::shared_ptr<const JobSpeedModel> speed;
  std::string speed_source = "duration";  // a name of builtin_speed_models()
  Options speed_options;                  // its declared options
  std::string scheduler = "fifo";
  Options scheduler_options;  // its declared options (planners/jobs/job_scheduler.hpp)
  std::string placement = "consolidated";
  Options placement_options;
  bool network = false;
  bool report_oversized = false;  // oversized_jobs: report (never_fits rows) instead of an error
  Seconds restart_cost{0};
  bool restart_cost_on_start = false;
  Seconds batch{60};
  Seconds utilisation_interval{3600};
  int servers_per_rack = 0;  // 0: the leaf size of a leaf-spine network, else one rack
  std::string admission;     // an admission policy (planners/jobs/admission.hpp); empty: no admission step
  AdmissionConfig admission_config;
  Options admission_options;  // the policy's declared options
  // architecture: parameter-server (planners/jobs/parameter_server.hpp): every job runs with
  // ceil(workers × ps_per_worker) PSs of ps_cores cores each; 0: ring all-reduce jobs.
  double ps_per_worker = 0.0;
  int ps_cores = 1;

  [[nodiscard]] std::string network_unsupported() const override {
    if (network) return {};
    return "a job-level cluster run (workload.network: false) puts no flows on the links, so the network "
           "section would change nothing; set workload.network: true to simulate it";
  }
  [[nodiscard]] std::string failures_unsupported() const override {
    return "the cluster simulation has no failure model for links and GPUs (a cut ring flow would end the run); "
           "network.failures is for workloads lowered to a task graph (docs/scenarios.md)";
  }
};

struct ClusterRunReport : WorkloadResult {
  ClusterSimResult sim;
  std::shared_ptr<const ClusterWorkload> spec;
};

[[nodiscard]] std::shared_ptr<const WorkloadKind> make_cluster_kind();

// jobs_trace.json (docs/reports.md), a Chrome trace (chrome://tracing, Perfetto): one process per
// server, one row per job attempt on it, named by the job and its GPUs there. Written to `out` as it
// is formatted, one event per attempt and server: the text one nlohmann dump() of the document
// {"traceEvents": [...], "displayTimeUnit": "ms"} gives.
void write_jobs_trace(std::ostream& out, const ClusterSimResult& sim, const JobTrace& trace);

// The servers of the scenario's cluster as the schedulers see them.
[[nodiscard]] std::vector<ServerInfo> cluster_servers(const Scenario& scenario, const ClusterWorkload& spec);
// The same for a cluster and the workload's `servers_per_rack` (0: its leaf size, else one rack).
[[nodiscard]] std::vector<ServerInfo> cluster_servers(const Cluster& cluster, int servers_per_rack);

}  // namespace dnnsim
