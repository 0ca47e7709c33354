// DAPPLE's planning dynamic program (Fan et al., PPoPP'21 §4.2, Formulas 4–5), with the device
// placement left to a policy so that the DAPPLE planner (machine-level Fresh/Append/Scatter-first)
// and the pipeline-mapping planner (placements read off the bandwidth matrix) share it.
//
// Sub-problem T_PL(j, m, g): the first j layers planned as stages on the m GPUs of set g; the layers
// [j, N) form one last stage replicated on all the other GPUs, and T_PL is the Formula 2 latency of
// that complete plan. A transition cuts the last stage at j' > j: (j, j'] goes to m' GPUs that the
// policy proposes, [j', N) to the G − m − m' left, and T_PL(j', m + m', g + g') keeps the better
// prefix. The answer is the best complete plan scored on the way, starting with "DP" (one stage on
// all GPUs); "straight" plans (one GPU per stage) are in the space (m' = 1 throughout).
//
// The paper keeps one prefix per state. Formula 2 is not decomposable over prefixes (the pivot
// depends on the whole plan), so we keep up to 2 per state by default (SearchOptions::prefixes_per_state,
// a beam width; 1 is the paper's DP): those that no other prefix with the same
// GPUs and last stage beats in every component of what a prefix contributes to Formula 2 (ΣF, the
// T_e term, the pull on the pivot, its own latency, its one-stage completion), fastest completion
// first. A beam, so not exact in general: it reaches the minimum on all 30 of the oracle test's
// instances, but on the irregular GNMT-16 search 2 prefixes miss the Formula 2 minimum 8 find
// (docs/planners.md).
// Pruning, none of which loses a feasible plan: a lower bound on the GPUs the remaining layers need
// (memory of the most favourable stage shape at each distance from the end) cuts prefixes and cuts
// that leave too few; a stage stops growing once it no longer fits.
//
// Cuts: only at PlanRequest::boundaries when given (a zoo model's blocks), so the search is over
// blocks, not sub-layers. Progress: PlanRequest::progress after each prefix end; when it returns
// false the search stops with the best complete plan scored so far.
//
// Kept plans: besides the best, the best few of the best few stage shapes (SearchOutcome::kept),
// which search_result re-ranks with the pipeline estimator.
//
// Branch and bound, exact (SearchOptions::bound): a candidate is a prefix, a new stage X and the
// rest as a last stage Y, and it matters only if the kept plans or the prefix set at its cut would
// take it: each has a latency it must beat (the K-th plan of its shape, the 8th prefix of a full
// set). A lower bound on its Formula 2 from compute times alone (no all-reduce, no cut out of X)
// that exceeds both skips it unscored, and once X's own term L(X) — non-decreasing as X grows —
// exceeds what any later cut could still enter, the longer X are not tried (branch and bound, Land
// & Doig, Econometrica 28(3), 1960, over the DP's transitions; the bound and why it is one:
// formula2_lower_bound in formula2_bounds.hpp, docs/planners.md "Search over blocks").
// The costs a candidate needs of its two groups are looked up once per group, not per cut
// (StageCostModel::GroupCosts, CutPattern), to the same numbers.
//
// Memory: a candidate counts as a result only if every stage fits with the schedule's in-flight
// count for its position; a prefix is kept for extension when its own stages fit (the last stage
// may still be split further).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "planners/parallel/stage_cost.hpp"

namespace dnnsim {

class StagePlacementPolicy {
 public:
  virtual ~StagePlacementPolicy() = default;
  // Candidate groups of `count` GPUs among the unused ones for the stage after `previous` (empty
  // for the first stage); each group sorted, no two equal.
  [[nodiscard]] virtual std::vector<std::vector<DeviceId>> place(const std::vector<bool>& used,
                                                                 std::span<const DeviceId> previous,
                                                                 int count) const = 0;
  // Sets of used GPUs with equal keys are interchangeable for the rest of the search.
  [[nodiscard]] virtual std::string state_key(const std::vector<bool>& used) const = 0;
};

// A complete plan the search scored, with its Formula 2 latency.
struct KeptPlan {
  std::vector<StageSpec> stages;
  Seconds latency{0};
};

struct SearchOutcome {
  std::vector<StageSpec> stages;  // empty when no candidate fits in memory
  Seconds latency{0};
  // The plans kept for the re-ranking, best first by Formula 2 (the first is `stages`): with
  // K = SearchOptions::rerank, the K best plans of each of the K best stage shapes (replicas per
  // stage) and the single-stage plan, on which Formula 2 is exact. Ties: the plan scored first.
  std::vector<KeptPlan> kept;
  std::string first_problem;  // why the "DP" plan does not fit, for the infeasible reason
  int fewest_gpus = 0;        // a lower bound on the GPUs the model needs (memory alone)
  std::size_t candidates = 0;
  std::size_t bounded = 0;  // candidates not scored: their lower bound could not enter any kept set
  std::size_t units = 0;    // the stage boundaries searched, minus one (PlanRequest::boundaries)
  bool stopped = false;     // PlanRequest::progress asked to stop: `stages` is the best found so far
};

struct SearchOptions {
  // Branch and bound (formula2_bounds.hpp): skip a candidate whose lower bound on Formula 2 no kept
  // set would take. Exact: the outcome is the same without it (tests compare the two); only the
  // candidates scored differ.
  bool bound = true;
  // The plans kept for the re-ranking: the `rerank` best of each of the `rerank` best stage shapes
  // (SearchOutcome::kept); 1: Formula 2 alone chooses and predicts, as in the paper.
  int rerank = 4;
  // The prefixes the DP keeps per state, a beam width (1 is the paper's DP; see above).
  int prefixes_per_state = 2;
  // Told the fraction of the search done; returning false stops it. Empty: PlanRequest::progress
  // (pipeline-mapping runs two searches at once and reports them as one bar).
  std::function<bool(double fraction)> progress;
};

// The options of the planners that run this search (dapple, pipeline-mapping: `rerank`, `prefixes`),
// and the search's settings from them.
[[nodiscard]] OptionSchema formula2_options();
[[nodiscard]] SearchOptions formula2_settings(const Options& options);

[[nodiscard]] SearchOutcome formula2_search(const StageCostModel& cost, const StagePlacementPolicy& policy,
                                            SearchOptions options = {});

// The planner result of a search: its plan or, when nothing fits, the reason. With
// `rerank` > 1 (SearchOptions::rerank) the kept plans are re-ranked by estimate_synchronous (the schedule's exact
// timeline): the plan is the one it times fastest (ties: the better Formula 2), predicted with that
// time, and PlanResult::reranked lists every kept plan with both estimates. Formula 2 ignores the
// pivot stage's bubbles and so favours deep pipelines on its own error; the estimator does not, and
// costs O(M·p) per plan, so a few plans are affordable where the whole search space is not.
[[nodiscard]] PlanResult search_result(const SearchOutcome& outcome, const StageCostModel& cost,
                                       const std::string& cost_model, double wall_seconds, int rerank);

// The kept plans of two searches as one outcome (pipeline-mapping runs two): every kept plan of both,
// best first by Formula 2, so the re-ranking sees a superset of each search's; `stages` the better.
[[nodiscard]] SearchOutcome merge_outcomes(SearchOutcome first, SearchOutcome second);

}  // namespace dnnsim
