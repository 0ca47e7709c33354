// The SPMD workload kind (`workload.kind: spmd`, docs/spmd.md): a model's operator graph sharded
// operator by operator over all the cluster's GPUs by an SPMD planner (planners/spmd: HAP-like, SBP-like,
// and the DP-EV, DP-CP and Megatron baselines), uneven shards on heterogeneous GPUs included.
#pragma once

#include <memory>
#include <string>

#include "models/spmd/op_graph.hpp"
#include "planners/spmd/spmd_planner.hpp"
#include "sim/workloads/workload_kind.hpp"

namespace dnnsim {

struct SpmdWorkload : WorkloadSpec {
  OpGraph graph;  // built from the model for the global batch, or read from a graph file
  std::optional<int> global_batch;
  std::string planner = "hap";  // a name of builtin_spmd_planners()
  Options planner_options;      // its declared options
  SpmdCommOptions comm;         // `collective_algorithm` and `bucket_size`: for the planners' cost and the lowering
  [[nodiscard]] std::optional<int> samples_per_iteration() const override { return global_batch; }
};

struct SpmdRunReport : WorkloadResult {
  SpmdPlan plan;
  std::shared_ptr<const OpGraph> graph;
};

[[nodiscard]] std::shared_ptr<const WorkloadKind> make_spmd_kind();

// The plan of a scenario's SPMD workload over its cluster (pure: no engine).
[[nodiscard]] SpmdPlan plan_spmd(const Scenario& scenario, const SpmdWorkload& spec);

}  // namespace dnnsim
