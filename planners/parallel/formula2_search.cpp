#include "planners/parallel/formula2_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>

namespace dnnsim {

namespace {

// Up to this many prefixes per state (the Pareto set below, the fastest completions first); beyond
// it the search is a beam. 8 recovers the exhaustive optimum on every oracle instance of the unit
// tests (planner_oracle_test.cpp) and keeps the 64-GPU case in seconds (docs/performance.md).
constexpr std::size_t kPrefixesPerState = 8;

// What a prefix contributes to Formula 2 of any completion, each the lower the better. With the
// pivot after the prefix, L = forward_sum + (the completion's terms) + max(ending + …, …); with the
// pivot inside it, `alone` (the prefix's own Formula 2) stands for its part; `pressure` decides
// where Algorithm 1 puts the pivot (it leaves the prefix alone while the completion's steady phase
// exceeds it). The one-stage completion ranks prefixes within a state.
struct PrefixSummary {
  Seconds forward_sum{0};  // Σ F_s: the warm-up share of the prefix
  Seconds ending{0};       // max_s (AR_s + Σ_{a=s..k} B_a): T_e's term when the pivot is later
  Seconds pressure{0};     // max_s ((M−1)(F_s+B_s) − Σ_{a=s+1..k}(F_a+B_a)): pull on the pivot
  Seconds alone{0};        // Formula 2 of the prefix as a whole pipeline
  Seconds completed{0};    // Formula 2 of the prefix completed by one last stage

  [[nodiscard]] bool no_worse_than(const PrefixSummary& other) const {
    return forward_sum <= other.forward_sum && ending <= other.ending && pressure <= other.pressure &&
           alone <= other.alone && completed <= other.completed;
  }
};

PrefixSummary summarize(const std::vector<Formula2Stage>& entries, int micro_batches, Seconds completed) {
  PrefixSummary summary;
  summary.completed = completed;
  summary.alone = formula2_latency(entries, micro_batches);
  Seconds backward_after{0};  // Σ_{a=s..k} B_a
  Seconds work_after{0};      // Σ_{a=s+1..k} (F_a + B_a)
  for (std::size_t s = entries.size(); s-- > 0;) {
    const Formula2Stage& e = entries[s];
    summary.forward_sum += e.forward;
    backward_after += e.backward;
    summary.ending = std::max(summary.ending, e.all_reduce + backward_after);
    summary.pressure = std::max(summary.pressure, (e.forward + e.backward) * (micro_batches - 1.0) - work_after);
    work_after += e.forward + e.backward;
  }
  return summary;
}

// A planned prefix: its stages, their Formula 2 entries (with the cuts between them) and its GPUs.
struct Prefix {
  std::vector<StageSpec> stages;
  std::vector<Formula2Stage> entries;
  std::vector<bool> used;
  int used_count = 0;
  PrefixSummary summary;
};

// The prefixes kept for one state: none dominated by another with the same GPUs and the same last
// stage (the two then have exactly the same completions), at most kPrefixesPerState, ordered by
// their one-stage completion (ties: the one found first), so that the search is deterministic.
class PrefixSet {
 public:
  void offer(Prefix&& candidate) {
    const auto same_future = [&](const Prefix& kept) {
      return kept.used == candidate.used && kept.stages.back().devices == candidate.stages.back().devices;
    };
    for (const Prefix& kept : prefixes_)
      if (same_future(kept) && kept.summary.no_worse_than(candidate.summary)) return;
    std::erase_if(prefixes_, [&](const Prefix& kept) {
      return same_future(kept) && candidate.summary.no_worse_than(kept.summary);
    });
    const auto position = std::upper_bound(
        prefixes_.begin(), prefixes_.end(), candidate.summary.completed,
        [](Seconds latency, const Prefix& kept) { return latency < kept.summary.completed; });
    if (position - prefixes_.begin() >= static_cast<std::ptrdiff_t>(kPrefixesPerState)) return;
    prefixes_.insert(position, std::move(candidate));
    if (prefixes_.size() > kPrefixesPerState) prefixes_.pop_back();
  }
  [[nodiscard]] const std::vector<Prefix>& prefixes() const { return prefixes_; }

 private:
  std::vector<Prefix> prefixes_;
};

std::vector<DeviceId> unused_devices(const std::vector<bool>& used) {
  std::vector<DeviceId> result;
  for (std::size_t d = 0; d < used.size(); ++d)
    if (!used[d]) result.push_back(d);
  return result;
}

// fewest_stages[j]: a lower bound on the stages (so GPUs) that layers [j, N) need: greedy covering
// with the longest range any stage can hold (StageCostModel::max_stage_end), optimal for intervals
// because that end never decreases with the start. Infinite (devices + 1) when a layer fits nowhere.
std::vector<int> fewest_stages(const StageCostModel& cost) {
  const std::size_t layers = cost.layer_count();
  const int impossible = static_cast<int>(cost.device_count()) + 1;
  std::vector<int> fewest(layers + 1, 0);
  for (std::size_t j = layers; j-- > 0;) {
    const std::size_t end = cost.max_stage_end(j);
    fewest[j] = end <= j ? impossible : std::min(impossible, 1 + fewest[end]);
  }
  return fewest;
}

}  // namespace

SearchOutcome formula2_search(const StageCostModel& cost, const PlacementPolicy& policy) {
  const std::size_t layers = cost.layer_count();
  const int devices = static_cast<int>(cost.device_count());
  const int micro_batch = cost.micro_batch_size();
  const int micro_batches = cost.request().micro_batches;
  SearchOutcome outcome;
  Seconds best{std::numeric_limits<double>::infinity()};

  std::vector<DeviceId> all(devices);
  std::iota(all.begin(), all.end(), DeviceId{0});
  const StageSpec whole{{0, layers}, all};
  outcome.first_problem = cost.memory_problem(whole.layers, whole.devices, 0, 1);
  if (devices <= micro_batch) {
    ++outcome.candidates;
    const PlanEvaluation dp = evaluate_synchronous(cost, {whole});
    if (dp.problem.empty()) {
      best = dp.latency;
      outcome.stages = {whole};
    }
  }

  // Every stage needs a GPU: a prefix or a cut that leaves fewer GPUs than the rest of the layers
  // needs stages cannot complete (a bound from memory alone, so no feasible plan is lost).
  const std::vector<int> fewest = fewest_stages(cost);
  // states[j]: the kept prefixes covering layers [0, j) for each class of used GPU sets.
  std::vector<std::map<std::string, PrefixSet>> states(layers);
  const std::vector<bool> none(devices, false);
  states[0][policy.state_key(none)].offer(Prefix{{}, {}, none, 0, {}});
  std::vector<Formula2Stage> scratch;
  for (std::size_t j = 0; j < layers; ++j) {
    for (const auto& [key, kept] : states[j])
      for (const Prefix& prefix : kept.prefixes()) {
        const int free = devices - prefix.used_count;
        if (fewest[j] > free) continue;
        const int stage_index = static_cast<int>(prefix.stages.size());
        const int stages = stage_index + 2;  // the prefix, the new stage, the rest
        bool prefix_fits = true;
        for (int s = 0; s < stage_index && prefix_fits; ++s)
          prefix_fits = cost.fits(prefix.stages[s].layers, prefix.stages[s].devices, s, stages);
        if (!prefix_fits) continue;  // more stages only keep more micro-batches in flight
        const std::span<const DeviceId> previous = prefix.stages.empty()
                                                       ? std::span<const DeviceId>()
                                                       : std::span<const DeviceId>(prefix.stages.back().devices);
        for (int count = 1; count < free && count <= micro_batch; ++count) {
          // With more rest GPUs than samples the completion is no plan, but the prefix may still grow.
          const bool rest_has_samples = free - count <= micro_batch;
          for (const std::vector<DeviceId>& group : policy.place(prefix.used, previous, count)) {
            std::vector<bool> used = prefix.used;
            for (DeviceId d : group) used[d] = true;
            const std::vector<DeviceId> rest = unused_devices(used);
            const std::string next_key = policy.state_key(used);
            for (std::size_t cut = j + 1; cut < layers; ++cut) {
              const StageSpec stage{{j, cut}, group};
              // A longer stage needs more memory: once it does not fit, no longer one will.
              if (!cost.fits(stage.layers, group, stage_index, stages)) break;
              if (fewest[cut] > free - count) continue;
              const StageSpec last{{cut, layers}, rest};
              scratch = prefix.entries;
              append_formula2_stage(cost, scratch, prefix.stages.empty() ? nullptr : &prefix.stages.back(), stage);
              const std::size_t prefix_entries = scratch.size();
              append_formula2_stage(cost, scratch, &stage, last);
              const Seconds latency = formula2_latency(scratch, micro_batches);
              ++outcome.candidates;
              if (rest_has_samples && latency < best && cost.fits(last.layers, rest, stages - 1, stages)) {
                best = latency;
                outcome.stages = prefix.stages;
                outcome.stages.push_back(stage);
                outcome.stages.push_back(last);
              }
              if (cut + 1 >= layers) continue;  // a prefix ending at N − 1 leaves one layer: no split left
              Prefix extended{prefix.stages, {}, used, prefix.used_count + count, {}};
              extended.stages.push_back(stage);
              scratch.resize(prefix_entries);
              extended.summary = summarize(scratch, micro_batches, latency);
              extended.entries = scratch;
              states[cut][next_key].offer(std::move(extended));
            }
          }
        }
      }
    states[j].clear();  // every transition out of j has been taken
  }
  outcome.latency = best;
  return outcome;
}

PlanResult search_result(const SearchOutcome& outcome, const PlanRequest& request, const std::string& cost_model,
                         double wall_seconds) {
  if (outcome.stages.empty())
    return infeasible(
        fmt::format("no plan fits in GPU memory ({} candidates scored); the data-parallel plan: {}", outcome.candidates,
                    outcome.first_problem.empty() ? "a micro-batch has fewer samples than the GPUs" : outcome.first_problem),
        cost_model, outcome.candidates, wall_seconds);
  PlanResult result;
  result.feasible = true;
  result.plan = make_plan(outcome.stages, request);
  result.predicted_iteration_time = outcome.latency;
  result.cost_model = cost_model;
  result.statistics = PlanStatistics{outcome.candidates, wall_seconds};
  return result;
}

}  // namespace dnnsim
