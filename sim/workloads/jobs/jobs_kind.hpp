// The `jobs` workload kind (docs/scenarios.md, "Several jobs on one fabric"): two or more training
// jobs, each any workload that lowers to one TaskGraph (data parallel, pipeline, SPMD, a TaskGraph or
// Chakra file), each on its own nodes of the cluster, simulated together in one
// engine so that their traffic contends on the links they share (a leaf-spine's uplinks, a switch
// backplane, a preempted link). Each job is read, planned and lowered as if its nodes were the whole
// cluster; the graphs are then appended into one (append_graph). Nothing of a job is mirrored: another
// job's traffic may cross any of its links (NetworkConditions::shared_with_other_jobs).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"
#include "sim/workloads/workload_kind.hpp"

namespace dnnsim {

struct JobSpec {
  std::string name;
  std::vector<std::size_t> nodes;  // indices into the scenario's Cluster::nodes, in the job's GPU order
  std::string kind;                // a name of builtin_workload_kinds() whose entry lowers_to_one_graph()
  std::shared_ptr<const WorkloadSpec> workload;
  std::optional<int> iterations;  // the job's own count of iterations; run.iterations when empty
  Cluster cluster;  // the job's nodes, named as in the scenario's cluster
  SourceLocation where;
};

struct JobsWorkload : WorkloadSpec {
  std::vector<JobSpec> jobs;
  // A network section applies to every job's links: any job that cannot take one refuses it.
  [[nodiscard]] std::string network_unsupported() const override;
  [[nodiscard]] std::string failures_unsupported() const override;
  // Each job's count where a job has its own ("iterations per job (a 3, b 1)").
  [[nodiscard]] std::string iterations_phrase(int run_iterations) const override;
};

// The scenario as job `job` sees it: its nodes as the cluster, its workload, its iterations, the
// network marked as shared with the other jobs. What its kind plans and lowers.
[[nodiscard]] Scenario job_scenario(const Scenario& scenario, const JobSpec& job);

[[nodiscard]] std::shared_ptr<const WorkloadKind> make_jobs_kind();

}  // namespace dnnsim
