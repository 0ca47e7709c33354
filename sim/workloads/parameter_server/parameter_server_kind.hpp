// The parameter-server workload kind (`workload.kind: parameter_server`, docs/parameter-server.md):
// workers on the cluster's devices (heterogeneous GPUs, edge devices of the catalog, slowed down by
// windows as ADSP emulates heterogeneity) train one model through one or more parameter servers
// under a sync policy (planners/sync: BSP, SSP, ASP, ADACOMM-like, ADSP-like) until the global loss
// of the statistical-efficiency model (models/sync) reaches a target: time to convergence, global
// steps, and per worker computing, communication and blocked time — the quantities of ADSP's table.
// The same PS model is the one the PS-architecture job schedulers of the cluster level build on.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/dnn/layer_model.hpp"
#include "models/sync/statistical_efficiency.hpp"
#include "planners/sync/sync_policy.hpp"
#include "sim/workloads/parameter_server/ps_sim.hpp"
#include "sim/workloads/workload_kind.hpp"

namespace dnnsim {

// Per worker, the seconds of one local step at factor 1 (forward + backward of `batch_size` samples
// with the cost model the executor uses), and one server's apply of its shard of a commit (an SGD
// update: read the gradient, read and write the weights).
struct ParameterServerCosts {
  std::vector<double> step_seconds;
  double apply_seconds = 0;
  double update_bytes = 0;
  // The step times at the start of the run (slowdown windows in force at t = 0 applied), and ADSP's
  // heterogeneity degree H = Σ v_k / (n · min v_k) with v_k = 1/that time.
  std::vector<double> initial_step_seconds;
  double heterogeneity = 1;
};

// `server_process`: each server as one process with one core that must take in every push
// (ps_sim.hpp; measured for ADSP's Python PS by bench/adsp_ps_recv_bench.py, docs/parameter-server.md
// "The server's process").
struct ServerProcess {
  BytesPerSecond receive_rate{0};  // bytes taken in per second of the process's core
  // 0: a held worker's server thread sleeps; w > 0: it spins on that core, taking w times the share of
  // a thread that is receiving (1: a fair scheduler; Python's interpreter lock favours spinners).
  double busy_wait = 0;
};

struct ParameterServerWorkload : WorkloadSpec {
  LayerModel model;
  int batch_size = 1;  // per worker per local step
  Dtype dtype = Dtype::fp32;
  std::vector<std::size_t> servers;  // GPU indices (Cluster::gpu_names order)
  std::vector<std::size_t> workers;
  std::vector<SlowdownWindow> slowdowns;  // worker indices into `workers`
  std::string policy = "bsp";
  Options sync;  // the policy's declared options (planners/sync/sync_policy.hpp)
  StatisticalEfficiency efficiency;
  std::string efficiency_file;
  double target_loss = 0;
  Seconds max_time{0};
  Seconds sample_interval{0};  // 0: max_time / 1000
  std::optional<ServerProcess> server_process;  // absent: pushes cost their transfer only
  // Priced once when the workload is read (they depend on the cluster and the keys above only).
  ParameterServerCosts costs;

  [[nodiscard]] std::string failures_unsupported() const override {
    return "the parameter-server simulation has no failure model (a cut push or pull would end the run); "
           "network.failures is for workloads lowered to a task graph (docs/scenarios.md)";
  }
};

struct ParameterServerReport : WorkloadResult {
  PsSimResult sim;
  std::shared_ptr<const ParameterServerWorkload> spec;
};

[[nodiscard]] std::shared_ptr<const WorkloadKind> make_parameter_server_kind();

}  // namespace dnnsim
