// The SPMD planners' interface and registry (`dnnsim list spmd`): each takes an operator graph and the
// cluster and returns a program (planners/spmd/sharding.hpp) with its ratios and predicted time.
//   hap          HAP (Zhang et al., EuroSys'24): program synthesis alternated with the ratio LP (hap_planner)
//   rhino        Rhino-like (Zhang et al., arXiv 2302.08141; alibaba/TePDist): cones, ILP, DP, pipeline ILP
//   smsg         SMSG-like (Wang et al., IJPP 51, 2023): symbolic costs, recursive two-way cuts
//   sbp          OneFlow-SBP-like: HAP's search priced with SBP boxing bytes
//   dp-ev, dp-cp, megatron-tp, deepspeed   baselines of HAP's evaluation (spmd_baselines)
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/common/registry.hpp"
#include "planners/spmd/hap_search.hpp"
#include "planners/spmd/sharding.hpp"

namespace dnnsim {

// Rhino's pipeline (its stage partitioning of a non-linear graph, stage_plan.hpp): the graph's
// operators in stages, each stage on its devices running data parallelism, GPipe's micro-batches.
struct SpmdPipeline {
  std::vector<int> stage;                      // of each operator, non-decreasing along every edge
  std::vector<std::vector<DeviceId>> devices;  // of each stage
  int micro_batches = 1;
  double cut_bytes = 0;  // the ILP's objective: bytes crossing stage boundaries per sample batch
};

// A planner's answer.
struct SpmdPlan {
  std::string planner;  // its registry name (set by whoever chose it)
  SpmdProgram program;
  ShardRatios ratios;
  double predicted_iteration_s = 0;
  bool feasible = true;
  std::string reason;  // why not, when infeasible
  int rounds = 0;      // HAP: search + LP alternations run (of the chosen segment count)
  SearchStatistics statistics;
  std::vector<std::string> report;  // the planner's own lines: search statistics, proposals scored
  std::optional<SpmdPipeline> pipeline;
};

class SpmdPlanner {
 public:
  virtual ~SpmdPlanner() = default;
  // `options`: the planner's declared options (Registry::Entry::options), as the scenario gave them.
  [[nodiscard]] virtual SpmdPlan plan(const OpGraph& graph, const SpmdCluster& cluster,
                                      const Options& options) const = 0;
};
using SpmdPlannerRegistry = Registry<std::shared_ptr<const SpmdPlanner>>;
// hap, rhino, smsg, sbp, dp-ev, dp-cp, megatron-tp, deepspeed (`dnnsim list spmd`).
[[nodiscard]] const SpmdPlannerRegistry& builtin_spmd_planners();

// Registration of each family, in its own file.
void register_hap_planners(SpmdPlannerRegistry& registry);    // hap, sbp
void register_spmd_baselines(SpmdPlannerRegistry& registry);  // dp-ev, dp-cp, megatron-tp, deepspeed
void register_rhino_planner(SpmdPlannerRegistry& registry);   // rhino
void register_smsg_planner(SpmdPlannerRegistry& registry);    // smsg

// Data parallelism on one axis over all devices, even shares (DP-EV's program).
[[nodiscard]] SpmdProgram data_parallel_program(const OpGraph& graph, const SpmdCluster& cluster);

// Each device's share of the split dimension under FLOP/s-proportional ratios (HAP's B⁽⁰⁾, DP-CP).
[[nodiscard]] std::vector<double> proportional_to_speed(const SpmdCluster& cluster);

}  // namespace dnnsim
