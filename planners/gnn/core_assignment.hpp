// BGL's resource isolation as a planner (Liu et al., NSDI'23 §4.3): given each pipeline stage's
// profiled CPU work per mini-batch (core-seconds, e.g. sampling, feature retrieval, H2D
// preparation), give every stage its own cores so that the slowest stage — which bounds the
// pipelined throughput — is as fast as possible:  minimise max_i work_i / cores_i,  Σ cores_i = C,
// cores_i ≥ 1. Greedy: start from one core each and hand each further core to the current
// bottleneck. This is optimal because each stage's time work_i / c is decreasing in c, so the
// bottleneck can only be lowered by giving it a core (an exchange argument), and ties are broken
// by the lower stage index so that the result is deterministic.
#pragma once

#include <cstdint>
#include <vector>

namespace dnnsim::gnn {

struct CoreAssignment {
  std::vector<std::uint32_t> cores;  // per stage
  double bottleneck = 0;             // max work_i / cores_i (seconds per mini-batch)
  std::uint32_t bottleneck_stage = 0;
};

// @pre total_cores ≥ stage_work.size() ≥ 1, work ≥ 0.
// @throw std::invalid_argument when there are fewer cores than stages.
[[nodiscard]] CoreAssignment assign_cores(const std::vector<double>& stage_work, std::uint32_t total_cores);

}  // namespace dnnsim::gnn
