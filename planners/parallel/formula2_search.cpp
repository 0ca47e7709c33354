#include "planners/parallel/formula2_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

namespace dnnsim {

namespace {

// Up to this many prefixes per state (the Pareto set below, the fastest completions first); beyond
// it the search is a beam. 8 recovers the exhaustive optimum on every oracle instance of the unit
// tests (planner_oracle_test.cpp) and keeps the 64-GPU case in seconds (docs/performance.md).
constexpr std::size_t kPrefixesPerState = 8;

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
    summary.pressure =
        std::max(summary.pressure, summary.forward_sum + (e.forward + e.backward) * (micro_batches - 1.0) - backward_from);
    backward_from = backward_from - e.backward;
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
  // Whether a prefix with these GPUs, last stage and summary would be kept (checked before the
  // prefix is built: most candidates are not).
  [[nodiscard]] bool admits(const std::vector<bool>& used, std::span<const DeviceId> last_stage,
                            const PrefixSummary& summary) const {
    if (prefixes_.size() >= kPrefixesPerState && !(summary.completed < prefixes_.back().summary.completed)) return false;
    return std::none_of(prefixes_.begin(), prefixes_.end(), [&](const Prefix& kept) {
      return same_future(kept, used, last_stage) && kept.summary.no_worse_than(summary);
    });
  }
  // Keeps `candidate`, which admits() accepted, and drops what it dominates or pushes out.
  void keep(Prefix&& candidate) {
    std::erase_if(prefixes_, [&](const Prefix& kept) {
      return same_future(kept, candidate.used, candidate.stages.back().devices) &&
             candidate.summary.no_worse_than(kept.summary);
    });
    const auto position = std::upper_bound(
        prefixes_.begin(), prefixes_.end(), candidate.summary.completed,
        [](Seconds latency, const Prefix& kept) { return latency < kept.summary.completed; });
    prefixes_.insert(position, std::move(candidate));
    if (prefixes_.size() > kPrefixesPerState) prefixes_.pop_back();
  }
  [[nodiscard]] const std::vector<Prefix>& prefixes() const { return prefixes_; }

 private:
  static bool same_future(const Prefix& kept, const std::vector<bool>& used, std::span<const DeviceId> last_stage) {
    return kept.used == used && std::ranges::equal(kept.stages.back().devices, last_stage);
  }
  std::vector<Prefix> prefixes_;
};

std::vector<DeviceId> unused_devices(const std::vector<bool>& used) {
  std::vector<DeviceId> result;
  for (std::size_t d = 0; d < used.size(); ++d)
    if (!used[d]) result.push_back(d);
  return result;
}

// fewest[j]: a lower bound on the GPUs that layers [j, N) need, from memory alone. A stage with t
// stages after it has at least I(t) micro-batches in flight, I(t) the fewest the schedule gives such
// a stage over every pipeline length; on r GPUs it ends at most at max_stage_end(j, r, I(t)). With
// G(j, t) the fewest GPUs of t + 1 stages covering [j, N):
//   G(j, t) = min_r min_{j < e ≤ max_stage_end(j, r, I(t))} r + G(e, t − 1),  G(N, −1) = 0,
// and fewest[j] = min_t G(j, t); greater than the device count when no plan on these GPUs fits.
// Stages begin and end at `boundaries` only (the search's cuts); fewest is set at those.
std::vector<int> fewest_gpus(const StageCostModel& cost, const std::vector<std::size_t>& boundaries) {
  const std::size_t layers = cost.layer_count();
  const int devices = static_cast<int>(cost.device_count());
  const int impossible = devices + 1;
  const int max_replicas = std::min(devices, cost.micro_batch_size());
  std::vector<int> fewest(layers + 1, impossible);
  fewest[layers] = 0;
  std::vector<int> shorter(layers + 1, impossible);  // G(·, t − 1)
  shorter[layers] = 0;
  for (int followers = 0; followers < std::min<int>(devices, static_cast<int>(layers)); ++followers) {
    int in_flight = cost.request().micro_batches;  // I(t)
    for (int stages = followers + 1; stages <= devices; ++stages)
      in_flight = std::min(in_flight, cost.in_flight(stages - 1 - followers, stages));
    std::vector<int> current(layers + 1, impossible);  // G(·, t); a stage is never empty
    for (std::size_t b = 0; b + 1 < boundaries.size(); ++b) {
      const std::size_t j = boundaries[b];
      for (int replicas = 1; replicas <= max_replicas; ++replicas) {
        const std::size_t last_end = cost.max_stage_end(j, replicas, std::max(0, in_flight));
        for (std::size_t e = b + 1; e < boundaries.size() && boundaries[e] <= last_end; ++e)
          current[j] = std::min(current[j], replicas + shorter[boundaries[e]]);
      }
    }
    for (std::size_t j = 0; j < layers; ++j) fewest[j] = std::min(fewest[j], current[j]);
    shorter = std::move(current);
  }
  return fewest;
}

// The plans the re-ranking sees (PlanRequest::rerank = K): the K best plans by Formula 2 of each of
// its K best stage shapes (replicas per stage; plans of one shape differ in their cuts and GPUs),
// and the single-stage plan, on which Formula 2 is exact (no pivot bubble to leave out), so that it
// is never dropped for another plan's underestimate. Ties: the plan offered first.
class KeptPlans {
 public:
  explicit KeptPlans(int limit) : limit_(static_cast<std::size_t>(std::max(1, limit))) {}
  // Whether a plan of this latency could be kept (checked before anything is built: most are not):
  // a new shape must beat the worst kept shape's best, a kept shape's plan that shape's K-th.
  [[nodiscard]] bool admits(Seconds latency) const {
    if (shapes_.size() < limit_) return true;
    double bound = shapes_.back().plans.front().latency.value();
    for (const Shape& shape : shapes_)
      bound = std::max(bound, shape.plans.size() < limit_ ? std::numeric_limits<double>::infinity()
                                                          : shape.plans.back().latency.value());
    return latency.value() < bound;
  }
  // `replicas`: the plan's replicas per stage; `build` makes its stages, called only if it is kept.
  void offer(std::vector<std::size_t> replicas, Seconds latency, const std::function<std::vector<StageSpec>()>& build) {
    if (replicas.size() == 1) {
      if (!single_stage_ || latency < single_stage_->latency) single_stage_ = KeptPlan{build(), latency};
      return;
    }
    const auto by_latency = [](Seconds l, const KeptPlan& kept) { return l < kept.latency; };
    auto shape = std::find_if(shapes_.begin(), shapes_.end(), [&](const Shape& s) { return s.replicas == replicas; });
    if (shape == shapes_.end()) {
      if (shapes_.size() >= limit_ && !(latency < shapes_.back().plans.front().latency)) return;
      shapes_.push_back(Shape{std::move(replicas), {KeptPlan{build(), latency}}});
    } else {
      if (shape->plans.size() >= limit_ && !(latency < shape->plans.back().latency)) return;
      shape->plans.insert(std::upper_bound(shape->plans.begin(), shape->plans.end(), latency, by_latency),
                          KeptPlan{build(), latency});
      if (shape->plans.size() > limit_) shape->plans.pop_back();
    }
    // Shapes by their best plan (stable: ties keep the shape found first), the worst dropped.
    std::stable_sort(shapes_.begin(), shapes_.end(),
                     [](const Shape& a, const Shape& b) { return a.plans.front().latency < b.plans.front().latency; });
    if (shapes_.size() > limit_) shapes_.pop_back();
  }
  // Every kept plan, best first by Formula 2.
  [[nodiscard]] std::vector<KeptPlan> take() && {
    std::vector<KeptPlan> plans;
    if (single_stage_) plans.push_back(std::move(*single_stage_));
    for (Shape& shape : shapes_)
      for (KeptPlan& plan : shape.plans) plans.push_back(std::move(plan));
    std::stable_sort(plans.begin(), plans.end(), [](const KeptPlan& a, const KeptPlan& b) { return a.latency < b.latency; });
    return plans;
  }

 private:
  struct Shape {
    std::vector<std::size_t> replicas;
    std::vector<KeptPlan> plans;  // best first
  };
  std::size_t limit_;
  std::vector<Shape> shapes_;  // by their best plan
  std::optional<KeptPlan> single_stage_;
};

}  // namespace

SearchOutcome formula2_search(const StageCostModel& cost, const PlacementPolicy& policy) {
  const std::size_t layers = cost.layer_count();
  const int devices = static_cast<int>(cost.device_count());
  const int micro_batch = cost.micro_batch_size();
  const int micro_batches = cost.request().micro_batches;
  SearchOutcome outcome;
  KeptPlans best_plans(cost.request().rerank);

  std::vector<DeviceId> all(devices);
  std::iota(all.begin(), all.end(), DeviceId{0});
  const StageSpec whole{{0, layers}, all};
  outcome.first_problem = cost.memory_problem(whole.layers, whole.devices, 0, 1);
  if (devices <= micro_batch) {
    ++outcome.candidates;
    const PlanEvaluation dp = evaluate_synchronous(cost, {whole});
    if (dp.problem.empty()) best_plans.offer({whole.devices.size()}, dp.latency, [&] { return std::vector{whole}; });
  }

  // Where stages may begin and end: the request's block boundaries, or every layer.
  std::vector<std::size_t> boundaries = cost.request().boundaries;
  if (boundaries.empty())
    for (std::size_t l = 0; l <= layers; ++l) boundaries.push_back(l);
  outcome.units = boundaries.size() - 1;
  // A prefix or a cut that leaves fewer GPUs than the rest of the layers needs cannot complete (a
  // bound from memory alone, so no feasible plan is lost).
  const std::vector<int> fewest = fewest_gpus(cost, boundaries);
  outcome.fewest_gpus = fewest[0];
  // states[j]: the kept prefixes covering layers [0, j) for each class of used GPU sets.
  std::vector<std::map<std::string, PrefixSet>> states(layers);
  const std::vector<bool> none(devices, false);
  states[0][policy.state_key(none)].keep(Prefix{{}, {}, none, 0, {}});
  std::vector<Formula2Stage> scratch;
  // Asked before every prefix is extended: one prefix's transitions take milliseconds, a boundary's
  // all of them can take seconds.
  const auto& progress = cost.request().progress;
  for (std::size_t b = 0; b + 1 < boundaries.size() && !outcome.stopped; ++b) {
    const std::size_t j = boundaries[b];
    const double fraction = static_cast<double>(b) / static_cast<double>(boundaries.size() - 1);
    for (const auto& [key, kept] : states[j])
      for (const Prefix& prefix : kept.prefixes()) {
        if (outcome.stopped || (progress && !progress(fraction))) {
          outcome.stopped = true;
          break;
        }
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
            for (std::size_t c = b + 1; c + 1 < boundaries.size(); ++c) {
              const std::size_t cut = boundaries[c];
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
              if (rest_has_samples && best_plans.admits(latency) && cost.fits(last.layers, rest, stages - 1, stages)) {
                std::vector<std::size_t> replicas;
                for (const StageSpec& kept : prefix.stages) replicas.push_back(kept.devices.size());
                replicas.push_back(group.size());
                replicas.push_back(rest.size());
                best_plans.offer(std::move(replicas), latency, [&] {
                  std::vector<StageSpec> complete = prefix.stages;
                  complete.push_back(stage);
                  complete.push_back(last);
                  return complete;
                });
              }
              if (c + 2 >= boundaries.size()) continue;  // a prefix ending at the last cut leaves one unit: no split left
              scratch.resize(prefix_entries);
              const PrefixSummary summary = summarize(scratch, micro_batches, latency);
              PrefixSet& kept = states[cut][next_key];
              if (!kept.admits(used, group, summary)) continue;
              Prefix extended{prefix.stages, scratch, used, prefix.used_count + count, summary};
              extended.stages.push_back(stage);
              kept.keep(std::move(extended));
            }
          }
        }
      }
    states[j].clear();  // every transition out of j has been taken
  }
  outcome.kept = std::move(best_plans).take();
  if (!outcome.kept.empty()) {
    outcome.stages = outcome.kept.front().stages;
    outcome.latency = outcome.kept.front().latency;
  }
  return outcome;
}

SearchOutcome merge_outcomes(SearchOutcome first, SearchOutcome second) {
  SearchOutcome merged = std::move(first);
  for (KeptPlan& plan : second.kept) {
    const bool known = std::any_of(merged.kept.begin(), merged.kept.end(),
                                   [&](const KeptPlan& kept) { return kept.stages == plan.stages; });
    if (known) continue;
    const auto position = std::upper_bound(merged.kept.begin(), merged.kept.end(), plan.latency,
                                           [](Seconds l, const KeptPlan& kept) { return l < kept.latency; });
    merged.kept.insert(position, std::move(plan));
  }
  if (!merged.kept.empty()) {
    merged.stages = merged.kept.front().stages;
    merged.latency = merged.kept.front().latency;
  }
  merged.candidates += second.candidates;
  merged.stopped = merged.stopped || second.stopped;
  merged.fewest_gpus = std::min(merged.fewest_gpus, second.fewest_gpus);
  return merged;
}

PlanResult search_result(const SearchOutcome& outcome, const StageCostModel& cost, const std::string& cost_model,
                         double wall_seconds) {
  const PlanRequest& request = cost.request();
  if (outcome.stages.empty() && outcome.stopped) {
    PlanResult stopped = infeasible(fmt::format("the search was stopped before it found a plan that fits ({} candidates "
                                                "scored); give it more time",
                                                outcome.candidates),
                                    cost_model, outcome.candidates, wall_seconds);
    stopped.stopped_early = true;
    return stopped;
  }
  if (outcome.stages.empty() && outcome.fewest_gpus > static_cast<int>(request.cluster.size()))
    return infeasible(fmt::format("no plan fits in GPU memory: the layers need more than {} GPUs under this schedule's "
                                  "in-flight counts (a lower bound from the memory model); the data-parallel plan: {}",
                                  request.cluster.size(),
                                  outcome.first_problem.empty() ? "a micro-batch has fewer samples than the GPUs"
                                                                : outcome.first_problem),
                      cost_model, outcome.candidates, wall_seconds);
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
  if (request.rerank > 1) {
    std::size_t chosen = 0;
    for (std::size_t i = 0; i < outcome.kept.size(); ++i) {
      const KeptPlan& kept = outcome.kept[i];
      result.reranked.push_back(
          PlanResult::RankedPlan{make_plan(kept.stages, request), kept.latency, estimate_synchronous(cost, kept.stages)});
      if (result.reranked[i].estimate < result.reranked[chosen].estimate) chosen = i;
    }
    result.plan = result.reranked[chosen].plan;
    result.predicted_iteration_time = result.reranked[chosen].estimate;
    result.cost_model = fmt::format("pipeline estimator over the plans kept by {} (rerank {})", cost_model, request.rerank);
  }
  result.statistics = PlanStatistics{outcome.candidates, wall_seconds};
  if (!request.boundaries.empty()) result.searched_blocks = outcome.units;
  result.stopped_early = outcome.stopped;
  return result;
}

}  // namespace dnnsim
