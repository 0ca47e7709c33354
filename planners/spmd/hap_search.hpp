// HAP's program synthesis on one mesh axis over all devices (Zhang et al., EuroSys'24, §5.4, Fig. 10,
// with its code's simplifications, alibaba/hap hap.rs `a_star`): operators are taken in topological
// order; a state is the set of layouts every live tensor has (HAP's properties {e | I}), with HAP's
// heuristics — at most one communication per tensor (its Communicated property), no communication of
// parameters (Parameter-Shard instead), properties dropped once no later operator reads them — and
// the segment whose ratios a split tensor's shards follow. The best cost per distinct state is kept:
// HAP's A* with its code's admissible estimate 0 and memoization per property set, i.e. a uniform-cost
// search over the layered state graph. Conversions are fused into their consumers (HAP's
// fuse_communication); the cheapest collective reaching a rule's layout is taken, HAP's grouped
// Broadcast/Reduce among them when allowed (§5.6, the communication-method choice), an all-to-all where
// a split tensor enters a segment of other ratios (§5.5).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "planners/spmd/sharding.hpp"
#include "planners/spmd/spmd_cost.hpp"

namespace dnnsim {

// Which rules a search may use (baselines restrict the space: data parallelism, tensor parallelism).
using RuleFilter = std::function<bool(const SpmdOp& op, const ShardingRule& rule)>;

struct ProgramSearchOptions {
  SpmdCostModel model = SpmdCostModel::hap;
  RuleFilter filter;              // empty: every rule
  bool grouped = false;           // HAP's grouped Broadcast/Reduce as alternatives to padded collectives
  bool sfb = false;               // sufficient-factor broadcasting rules
  std::size_t max_states = 4096;  // kept per operator (the cheapest); never binds on the zoo's models
};

struct SearchStatistics {
  std::size_t states = 0;       // states kept over all operators
  std::size_t transitions = 0;  // rules tried from a state
  std::size_t pruned = 0;       // states dropped by max_states
};

// The cheapest program on the one-axis mesh of all devices under `ratios` (ShardRatios over that
// mesh, one vector per segment), `segment` giving each operator's segment (empty: one).
// @throw std::runtime_error when the filter leaves no complete program (a baseline's programming error).
[[nodiscard]] SpmdProgram search_program(const OpGraph& graph, const std::vector<int>& segment,
                                         const ShardRatios& ratios, const SpmdCluster& cluster,
                                         const ProgramSearchOptions& options, SearchStatistics* statistics = nullptr);

}  // namespace dnnsim
