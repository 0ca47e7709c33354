// HAP's load balancing (Zhang et al., EuroSys'24, §5.5; alibaba/hap hap.rs
// `sharding_ratio_optimization`): for a fixed one-axis program, the sharding ratios of every segment
// minimizing the program's cost — a linear program, since every computation is linear in a device's
// ratio and every padded collective in the largest ratio of its segment(s):
//   min Σ_i c_i + Σ_terms κ_term · M_term
//   c_i ≥ a_ij · B[s(i)][j] + b_ij             for every operator i and device j (its computation)
//   M_s ≥ B[s][j]                              for every segment s and device j (its largest share)
//   M_st ≥ M_s, M_st ≥ M_t                     a conversion from segment t into s pads to both
//   Σ_j B[s][j] = 1, B ≥ 0
// (HAP's code writes it with epigraph variables per instruction, as here, and solves it with CBC; it
// is an LP and COIN-OR Clp solves it.) The constant terms (all-reduces of whole tensors, latencies,
// grouped collectives) do not depend on the ratios and are left out.
#pragma once

#include "planners/spmd/sharding.hpp"

namespace dnnsim {

// @throw std::runtime_error when Clp finds no optimum (a bug: the LP is always feasible and bounded).
[[nodiscard]] ShardRatios balance_ratios(const OpGraph& graph, const SpmdProgram& program, const SpmdCluster& cluster);

}  // namespace dnnsim
