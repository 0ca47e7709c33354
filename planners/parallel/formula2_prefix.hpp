// What a prefix of a pipeline plan (its stages 0..k) contributes to DAPPLE's Formula 2 (Fan et al.,
// PPoPP'21 §4.2; formula2_latency in stage_cost.hpp) of any completion: the summary the Formula 2
// search keeps per prefix to compare prefixes and to score completions without their entries, and
// the sets of prefixes it keeps per state.
#pragma once

#include <limits>
#include <span>
#include <vector>

#include "planners/parallel/stage_cost.hpp"

namespace dnnsim {

// What a prefix (stages 0..k) contributes to Formula 2 of any completion, each the lower the better.
// L = max_Q L(Q) (stage_cost.hpp). With Q in the completion, L(Q) sees the prefix only through
// forward_sum (warm-up) and ending (its T_e terms, to which the completion adds Σ B up to Q). With Q
// in the prefix, L(Q) = max(the prefix's own L(Q), W(Q) + (M−1)(F_Q+B_Q) − Σ_{a=Q..k} B_a + a term of
// the completion alone), whose maxima over Q are `alone` and `pressure`. So a prefix no worse in these
// four is no worse with every completion: the dominance is exact for latency (memory can still differ:
// a longer prefix puts more micro-batches in flight on its stages). The one-stage completion ranks
// prefixes within a state.
struct PrefixSummary {
  Seconds forward_sum{0};  // Σ F_s: the warm-up share of the prefix
  Seconds ending{0};       // max_s (AR_s + Σ_{a=s..k} B_a)
  Seconds pressure{0};     // max_Q (Σ_{s≤Q} F_s + (M−1)(F_Q+B_Q) − Σ_{a=Q..k} B_a)
  Seconds alone{0};        // Formula 2 of the prefix as a whole pipeline
  Seconds completed{0};    // Formula 2 of the prefix completed by one last stage

  [[nodiscard]] bool no_worse_than(const PrefixSummary& other) const {
    return forward_sum <= other.forward_sum && ending <= other.ending && pressure <= other.pressure &&
           alone <= other.alone;
  }
};

// The summary of a prefix of these Formula 2 entries (stages and cuts); `completed` is its one-stage
// completion's latency, which the search computed already.
[[nodiscard]] PrefixSummary summarize(const std::vector<Formula2Stage>& entries, int micro_batches, Seconds completed);

// Formula 2 of a prefix completed by `tail` (the entries after its last: cut in, stage, cut out,
// last stage), from the prefix's summary instead of its entries, O(|tail|). With k the prefix's last
// entry and the tail's entries i = 1..n:
//  - Q in the prefix: its own terms give `alone`; a tail entry s adds AR_s − Σ_{a=Q..k} B_a −
//    Σ_{i≤s} B_i, whose maximum over Q and s is pressure + max_s (AR_s − Σ_{i≤s} B_i);
//  - Q = q in the tail: Σ_{s≤Q} F_s = forward_sum + Σ_{i≤q} F_i, the prefix's s ≤ Q terms are
//    ending + Σ_{i≤q} B_i, and the tail's own terms are those of formula2_latency.
// `has_prefix`: false for the empty prefix, whose summary is all zero but has no pivot.
// The sums run in another order than formula2_latency's, so the two differ by rounding: the search
// decides with it only where the difference cannot matter (`exceeds`, formula2_bounds.hpp).
inline constexpr std::size_t kMaxTail = 8;  // the search's tails have 3 or 4 entries
[[nodiscard]] double completed_latency(const PrefixSummary& prefix, bool has_prefix,
                                       std::span<const Formula2Stage> tail, int micro_batches);

// A stage of a prefix. Its GPUs and the prefix's are owned by the search's transitions
// (formula2_search.cpp), which live as long as the search, so that keeping a prefix copies no device
// lists.
struct PrefixStage {
  LayerRange layers;
  const std::vector<DeviceId>* devices = nullptr;
};

// A planned prefix: its stages, their Formula 2 entries (with the cuts between them) and its GPUs.
struct Prefix {
  std::vector<PrefixStage> stages;
  std::vector<Formula2Stage> entries;
  const std::vector<bool>* used = nullptr;
  int used_count = 0;
  PrefixSummary summary;
};

// The prefixes kept for one state: none dominated by another with the same GPUs and the same last
// stage (the two then have exactly the same completions), at most `capacity`
// (SearchOptions::prefixes_per_state), ordered by their one-stage completion (ties: the one found
// first), so that the search is deterministic.
class PrefixSet {
 public:
  explicit PrefixSet(std::size_t capacity) : capacity_(capacity) {}
  // Whether a prefix with these GPUs, last stage and summary would be kept (checked before the
  // prefix is built: most candidates are not).
  [[nodiscard]] bool admits(const std::vector<bool>& used, const std::vector<DeviceId>& last_stage,
                            const PrefixSummary& summary) const;
  // Keeps `candidate`, which admits() accepted, and moves what it dominates or pushes out to `spare`.
  void keep(Prefix&& candidate, std::vector<Prefix>& spare);
  [[nodiscard]] const std::vector<Prefix>& prefixes() const { return prefixes_; }
  // The one-stage completion a new prefix must beat to be considered at all (+∞ while not full).
  [[nodiscard]] double admission_bound() const {
    return prefixes_.size() >= capacity_ ? prefixes_.back().summary.completed.value()
                                         : std::numeric_limits<double>::infinity();
  }

 private:
  std::size_t capacity_;
  std::vector<Prefix> prefixes_;
};

}  // namespace dnnsim
