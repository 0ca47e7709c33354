#include "planners/parallel/formula2_prefix.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <limits>

namespace dnnsim {

PrefixSummary summarize(const std::vector<Formula2Stage>& entries, int micro_batches, Seconds completed) {
  PrefixSummary summary;
  summary.completed = completed;
  summary.alone = formula2_latency(entries, micro_batches);
  Seconds backward_after{0};  // Σ_{a=s..k} B_a
  for (std::size_t s = entries.size(); s-- > 0;) {
    backward_after += entries[s].backward;
    summary.ending = std::max(summary.ending, entries[s].all_reduce + backward_after);
  }
  Seconds backward_from = backward_after;  // Σ_{a=Q..k} B_a
  summary.pressure = Seconds(-std::numeric_limits<double>::infinity());
  for (const Formula2Stage& e : entries) {
    summary.forward_sum += e.forward;
    summary.pressure = std::max(summary.pressure,
                                summary.forward_sum + (e.forward + e.backward) * (micro_batches - 1.0) - backward_from);
    backward_from = backward_from - e.backward;
  }
  return summary;
}

double completed_latency(const PrefixSummary& prefix, bool has_prefix, std::span<const Formula2Stage> tail,
                         int micro_batches) {
  assert(tail.size() <= kMaxTail);
  const double lowest = -std::numeric_limits<double>::infinity();
  const double m = micro_batches - 1.0;
  const std::size_t n = tail.size();
  // later[q] = max_{s>q} (AR_s − Σ_{i=q..s} B_i) = beyond(q) − B_q, with beyond(q) =
  // max_{s>q} (AR_s − Σ_{i=q+1..s} B_i) = max(AR_{q+1}, beyond(q+1)) − B_{q+1}, built from the end.
  std::array<double, kMaxTail> later;
  double beyond = lowest;
  for (std::size_t q = n; q-- > 0;) {
    later[q] = beyond - tail[q].backward.value();
    beyond = std::max(tail[q].all_reduce.value(), beyond) - tail[q].backward.value();
  }
  // Now beyond = max_s (AR_s − Σ_{i≤s} B_i): the tail's pull on a pivot in the prefix.
  double latency = has_prefix ? std::max(prefix.alone.value(), prefix.pressure.value() + beyond) : lowest;
  double forward = prefix.forward_sum.value();
  double backward = 0;      // Σ_{i≤q} B_i
  double earlier = lowest;  // max_{s≤q} (AR_s − Σ_{i<s} B_i)
  for (std::size_t q = 0; q < n; ++q) {
    const Formula2Stage& e = tail[q];
    forward += e.forward.value();
    earlier = std::max(earlier, e.all_reduce.value() - backward);
    backward += e.backward.value();
    const double ending = std::max({prefix.ending.value() + backward, earlier + backward, later[q]});
    latency = std::max(latency, forward + m * (e.forward + e.backward).value() + ending);
  }
  return latency;
}

namespace {

// Prefixes made by one transition share its GPU sets: the addresses settle most comparisons.
bool same_future(const Prefix& kept, const std::vector<bool>& used, const std::vector<DeviceId>& last_stage) {
  const std::vector<DeviceId>& kept_last = *kept.stages.back().devices;
  return (kept.used == &used || *kept.used == used) && (&kept_last == &last_stage || kept_last == last_stage);
}

}  // namespace

bool PrefixSet::admits(const std::vector<bool>& used, const std::vector<DeviceId>& last_stage,
                       const PrefixSummary& summary) const {
  if (prefixes_.size() >= capacity_ && !(summary.completed < prefixes_.back().summary.completed)) return false;
  return std::none_of(prefixes_.begin(), prefixes_.end(), [&](const Prefix& kept) {
    return kept.summary.no_worse_than(summary) && same_future(kept, used, last_stage);
  });
}

void PrefixSet::keep(Prefix&& candidate, std::vector<Prefix>& spare) {
  std::size_t staying = 0;
  for (std::size_t k = 0; k < prefixes_.size(); ++k) {
    Prefix& kept = prefixes_[k];
    if (candidate.summary.no_worse_than(kept.summary) &&
        same_future(kept, *candidate.used, *candidate.stages.back().devices))
      spare.push_back(std::move(kept));
    else if (staying++ != k)  // a vector moved onto itself would be left empty
      prefixes_[staying - 1] = std::move(kept);
  }
  prefixes_.resize(staying);
  const auto position =
      std::upper_bound(prefixes_.begin(), prefixes_.end(), candidate.summary.completed,
                       [](Seconds latency, const Prefix& kept) { return latency < kept.summary.completed; });
  prefixes_.insert(position, std::move(candidate));
  if (prefixes_.size() > capacity_) {
    spare.push_back(std::move(prefixes_.back()));
    prefixes_.pop_back();
  }
}

}  // namespace dnnsim
