// The bounds that prune the Formula 2 search (formula2_search.hpp) without losing a plan it would
// keep: the fewest GPUs the remaining layers need (memory alone), and a lower bound on a candidate's
// Formula 2 from its compute times alone (branch and bound; docs/planners.md, "Search over blocks").
#pragma once

#include <cstddef>
#include <vector>

#include "planners/parallel/formula2_prefix.hpp"
#include "planners/parallel/stage_cost.hpp"

namespace dnnsim {

// fewest[j]: a lower bound on the GPUs that layers [j, N) need, from memory alone. A stage with t
// stages after it has at least I(t) micro-batches in flight, I(t) the fewest the schedule gives such
// a stage over every pipeline length; on r GPUs it ends at most at max_stage_end(j, r, I(t)). With
// G(j, t) the fewest GPUs of t + 1 stages covering [j, N):
//   G(j, t) = min_r min_{j < e ≤ max_stage_end(j, r, I(t))} r + G(e, t − 1),  G(N, −1) = 0,
// and fewest[j] = min_t G(j, t); greater than the device count when no plan on these GPUs fits.
// Stages begin and end at `boundaries` only (the search's cuts); fewest is set at those.
[[nodiscard]] std::vector<int> fewest_gpus(const StageCostModel& cost, const std::vector<std::size_t>& boundaries);

// A lower bound on Formula 2 of prefix + stage X + last stage Y (formula2_latency over their
// entries), from the prefix's summary, the cut into X (C), the two stages' compute and Y's exposed
// all-reduce AR_Y: each L(Q) ≥ Σ_{s≤Q} F_s + (M−1)(F_Q+B_Q) + max_{s≤Q}(AR_s + Σ_{a=s..Q} B_a),
// dropping the terms that are ≥ 0 and not known without X's all-reduce and the cut out of X:
//   L(X) ≥ ΣF_P + F_C + F_X + (M−1)(F_X+B_X) + max(ending_P + B_C, 0) + B_X           (`stage`)
//   L(Y) ≥ ΣF_P + F_C + F_X + F_Y + (M−1)(F_Y+B_Y) + max(ending_P + B_C + B_X, AR_Y) + B_Y
// and L ≥ the prefix's own Formula 2 (each of its L(Q) only gains terms). `stage` does not decrease
// as X grows (its layers' times are non-negative), which lets the search stop lengthening X; AR_Y
// need not be monotone in the cut, so only `whole` has it. AR_Y is memoized per group for the ranges
// ending at the last layer, and with it a GPT-2 XL search scores a quarter of the candidates it
// scored without it (docs/performance.md).
struct LowerBound {
  double stage = 0;  // L(X)'s bound
  double whole = 0;  // the largest of the three
};

[[nodiscard]] LowerBound formula2_lower_bound(const PrefixSummary& prefix, Seconds cut_in, PassTimes stage,
                                              PassTimes last, int micro_batches, Seconds last_all_reduce);

// Whether a lower bound computed by another sum than formula2_latency's is above `limit` beyond any
// rounding difference between the two (a relative 1e-9, far above the few ulps of either sum), so
// that no candidate the unbounded search would keep is skipped.
[[nodiscard]] bool exceeds(double lower_bound, double limit);

}  // namespace dnnsim
