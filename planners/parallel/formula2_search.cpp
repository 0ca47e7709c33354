#include "planners/parallel/formula2_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <span>
#include <unordered_map>

#include "planners/parallel/formula2_prefix.hpp"

namespace dnnsim {

namespace {

// Up to this many prefixes per state (the Pareto set below, the fastest completions first); beyond
// it the search is a beam. 8 recovers the exhaustive optimum on every oracle instance of the unit
// tests (planner_oracle_test.cpp) and keeps the 64-GPU case in seconds (docs/performance.md).

// A stage of a prefix. Its GPUs and the prefix's are owned by the search's transitions (below),
// which live as long as the search, so that keeping a prefix copies no device lists.
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
// (SearchOptions::prefixes_per_state), ordered by
// their one-stage completion (ties: the one found first), so that the search is deterministic.
class PrefixSet {
 public:
  explicit PrefixSet(std::size_t capacity) : capacity_(capacity) {}
  // Whether a prefix with these GPUs, last stage and summary would be kept (checked before the
  // prefix is built: most candidates are not).
  [[nodiscard]] bool admits(const std::vector<bool>& used, const std::vector<DeviceId>& last_stage,
                            const PrefixSummary& summary) const {
    if (prefixes_.size() >= capacity_ && !(summary.completed < prefixes_.back().summary.completed)) return false;
    return std::none_of(prefixes_.begin(), prefixes_.end(), [&](const Prefix& kept) {
      return kept.summary.no_worse_than(summary) && same_future(kept, used, last_stage);
    });
  }
  // Keeps `candidate`, which admits() accepted, and moves what it dominates or pushes out to `spare`.
  void keep(Prefix&& candidate, std::vector<Prefix>& spare) {
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
    const auto position = std::upper_bound(
        prefixes_.begin(), prefixes_.end(), candidate.summary.completed,
        [](Seconds latency, const Prefix& kept) { return latency < kept.summary.completed; });
    prefixes_.insert(position, std::move(candidate));
    if (prefixes_.size() > capacity_) {
      spare.push_back(std::move(prefixes_.back()));
      prefixes_.pop_back();
    }
  }
  [[nodiscard]] const std::vector<Prefix>& prefixes() const { return prefixes_; }
  // The one-stage completion a new prefix must beat to be considered at all (+∞ while not full).
  [[nodiscard]] double admission_bound() const {
    return prefixes_.size() >= capacity_ ? prefixes_.back().summary.completed.value()
                                                 : std::numeric_limits<double>::infinity();
  }

 private:
  // Prefixes made by one transition share its GPU sets: the addresses settle most comparisons.
  static bool same_future(const Prefix& kept, const std::vector<bool>& used, const std::vector<DeviceId>& last_stage) {
    const std::vector<DeviceId>& kept_last = *kept.stages.back().devices;
    return (kept.used == &used || *kept.used == used) && (&kept_last == &last_stage || kept_last == last_stage);
  }
  std::size_t capacity_;
  std::vector<Prefix> prefixes_;
};

// Into `result`, reused across candidate groups so that it allocates only while it grows.
void unused_devices(const std::vector<bool>& used, std::vector<DeviceId>& result) {
  result.clear();
  for (std::size_t d = 0; d < used.size(); ++d)
    if (!used[d]) result.push_back(d);
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

LowerBound formula2_lower_bound(const PrefixSummary& prefix, Seconds cut_in, PassTimes stage, PassTimes last,
                                int micro_batches, Seconds last_all_reduce) {
  const double m = micro_batches - 1.0;
  const double warm_up = prefix.forward_sum.value() + cut_in.value() + stage.forward.value();
  const double ending = prefix.ending.value() + cut_in.value();
  LowerBound bound;
  bound.stage = warm_up + m * (stage.forward + stage.backward).value() + std::max(ending, 0.0) + stage.backward.value();
  const double last_term = warm_up + last.forward.value() + m * (last.forward + last.backward).value() +
                           std::max(ending + stage.backward.value(), last_all_reduce.value()) + last.backward.value();
  bound.whole = std::max({prefix.alone.value(), bound.stage, last_term});
  return bound;
}

// Whether a lower bound computed by another sum than formula2_latency's is above `limit` beyond any
// rounding difference between the two (a relative 1e-9, far above the few ulps of either sum), so
// that no candidate the unbounded search would keep is skipped.
bool exceeds(double lower_bound, double limit) {
  if (limit == std::numeric_limits<double>::infinity()) return false;
  if (limit == -std::numeric_limits<double>::infinity()) return true;
  return lower_bound > limit + 1e-9 * std::abs(limit);
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
  [[nodiscard]] bool admits(Seconds latency) const { return latency.value() < admission_bound_; }
  // The latency below which admits() holds (+∞: any plan).
  [[nodiscard]] double admission_bound() const { return admission_bound_; }
  // The latency below which a plan of this shape (replicas per stage, two stages or more) would be
  // kept now, by offer()'s own rule (+∞: any would). It only rises when such a plan is kept.
  [[nodiscard]] double bound(const std::vector<std::size_t>& replicas) const {
    const double any = std::numeric_limits<double>::infinity();
    const auto shape =
        std::find_if(shapes_.begin(), shapes_.end(), [&](const Shape& s) { return s.replicas == replicas; });
    if (shape != shapes_.end()) return shape->plans.size() < limit_ ? any : shape->plans.back().latency.value();
    return shapes_.size() < limit_ ? any : shapes_.back().plans.front().latency.value();
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
    // Asked for every candidate scored, changed only here.
    if (shapes_.size() < limit_) return;
    admission_bound_ = shapes_.back().plans.front().latency.value();
    for (const Shape& s : shapes_)
      admission_bound_ = std::max(admission_bound_, s.plans.size() < limit_ ? std::numeric_limits<double>::infinity()
                                                                            : s.plans.back().latency.value());
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
  double admission_bound_ = std::numeric_limits<double>::infinity();
};

// Values by boundary index, NaN until priced, held for the indices a search has asked about only
// (a stage reaches a few cuts from where it starts; a table over every boundary per transition
// doubled the GPT-3 search's memory).
class CutMemo {
 public:
  // The value at c, the memo covering [from, to) (c in it) from now on.
  double& at(std::size_t c, std::size_t from, std::size_t to) {
    const double unknown = std::numeric_limits<double>::quiet_NaN();
    if (values_.empty()) {
      first_ = from;
      values_.assign(to - from, unknown);
    } else {
      if (from < first_) {
        values_.insert(values_.begin(), first_ - from, unknown);
        first_ = from;
      }
      if (to > first_ + values_.size()) values_.resize(to - first_, unknown);
    }
    return values_[c - first_];
  }

 private:
  std::size_t first_ = 0;
  std::vector<double> values_;
};

}  // namespace

SearchOutcome formula2_search(const StageCostModel& cost, const StagePlacementPolicy& policy, SearchOptions options) {
  const std::size_t layers = cost.layer_count();
  const int devices = static_cast<int>(cost.device_count());
  const int micro_batch = cost.micro_batch_size();
  const int micro_batches = cost.request().micro_batches;
  SearchOutcome outcome;
  KeptPlans best_plans(options.rerank);

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
  // states[j]: the kept prefixes covering layers [0, j) for each class of used GPU sets, iterated
  // in key order; slots[j][id] the same sets by the interned key, found without a string lookup.
  const auto capacity = static_cast<std::size_t>(std::max(1, options.prefixes_per_state));
  std::vector<std::map<std::string, PrefixSet>> states(layers);
  std::vector<std::vector<PrefixSet*>> slots(layers);
  std::unordered_map<std::string, std::size_t> key_ids;  // asked once per candidate group
  const auto find_set = [&](std::size_t cut, std::size_t id) -> PrefixSet* {
    return id < slots[cut].size() ? slots[cut][id] : nullptr;
  };
  // admission[id][c]: the admission_bound of the set of class id at boundaries[c] (+∞ while it has
  // none), copied out of the sets whenever one keeps a prefix: a candidate group reads it for every
  // cut it can reach, and reading it here, contiguous by cut, is what keeps that cheap.
  const double anything = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> admission;
  const auto admission_of = [&](std::size_t id) -> std::vector<double>& {
    if (admission.size() <= id) admission.resize(id + 1);
    if (admission[id].empty()) admission[id].assign(boundaries.size(), anything);
    return admission[id];
  };
  const auto make_set = [&](std::size_t cut, std::size_t id, const std::string& key) -> PrefixSet& {
    if (PrefixSet* known = find_set(cut, id)) return *known;
    if (slots[cut].size() <= id) slots[cut].resize(id + 1, nullptr);
    return *(slots[cut][id] = &states[cut].try_emplace(key, capacity).first->second);
  };
  const std::vector<bool> none(devices, false);
  // Prefixes pushed out of their sets, whose vectors the next kept prefixes reuse: the search keeps
  // millions of prefixes over its course, most of them soon pushed out by a better one.
  std::vector<Prefix> spare;
  states[0].try_emplace(policy.state_key(none), capacity).first->second.keep(Prefix{{}, {}, &none, 0, {}}, spare);
  // What a candidate group needs that depends neither on the prefix's layers nor on the cut: the
  // state it leads to and the costs of the group and of the GPUs it leaves. It is a function of the
  // prefix's used GPUs and the group alone, and those pairs repeat across block boundaries and
  // across the last stages that lead to one used set (GPT-2 XL over 32 GPUs, DAPPLE's placements:
  // 207 k groups offered, 98 k distinct; the bandwidth matrix's: 187 k, 40 k), so it is built once per
  // pair and kept for the whole search: the kept prefixes point at its groups and GPU sets.
  struct Transition {
    int count = 0;
    std::vector<DeviceId> group;
    std::vector<bool> used;  // the prefix's GPUs and the group's
    std::size_t next_id = 0;
    const std::string* next_key = nullptr;  // owned by key_ids
    const StageCostModel::GroupCosts* stage_costs = nullptr;
    const StageCostModel::GroupCosts* rest_costs = nullptr;
    // The cut out of the group into the rest after the unit ending at each boundary: the same
    // transition is taken from several prefixes (GPT-2 XL: 8 on average), which score the same cuts.
    CutMemo cut_out;
  };
  // By the prefix's used GPUs, every group offered after them so far (a deque: prefixes point
  // into it).
  std::unordered_map<std::vector<bool>, std::deque<Transition>> made;
  // The groups the policy offers depend on the prefix's last stage too (pipeline-mapping's
  // "nearest to the previous stage"), so what a prefix takes is listed per (used GPUs, last stage),
  // in the policy's order.
  struct TransitionKey {
    std::vector<bool> used;
    std::vector<DeviceId> previous;
    bool operator==(const TransitionKey&) const = default;
  };
  struct TransitionHash {
    std::size_t operator()(const TransitionKey& key) const {
      std::size_t hash = std::hash<std::vector<bool>>{}(key.used);
      for (DeviceId d : key.previous) hash = (hash ^ d) * 1099511628211ull;
      return hash;
    }
  };
  std::unordered_map<TransitionKey, std::vector<Transition*>, TransitionHash> transitions;
  std::vector<DeviceId> rest;  // a candidate's last stage: the GPUs its transition leaves unused
  const auto transitions_of = [&](const std::vector<bool>& prefix_used, int used_count,
                                  std::span<const DeviceId> previous) -> const std::vector<Transition*>& {
    auto [it, inserted] =
        transitions.try_emplace(TransitionKey{prefix_used, std::vector<DeviceId>(previous.begin(), previous.end())});
    if (!inserted) return it->second;
    std::deque<Transition>& after = made[prefix_used];
    const int free = devices - used_count;
    for (int count = 1; count < free && count <= micro_batch; ++count)
      for (std::vector<DeviceId>& group : policy.place(prefix_used, previous, count)) {
        const auto known = std::find_if(after.begin(), after.end(),
                                        [&](const Transition& t) { return t.count == count && t.group == group; });
        if (known != after.end()) {
          it->second.push_back(&*known);
          continue;
        }
        Transition& t = after.emplace_back();
        t.count = count;
        t.used = prefix_used;
        for (DeviceId d : group) t.used[d] = true;
        unused_devices(t.used, rest);
        const auto key = key_ids.try_emplace(policy.state_key(t.used), key_ids.size()).first;
        t.next_id = key->second;
        t.next_key = &key->first;
        t.stage_costs = &cost.group_costs(group);
        t.rest_costs = &cost.group_costs(rest);
        t.group = std::move(group);
        it->second.push_back(&t);
      }
    return it->second;
  };
  std::vector<Formula2Stage> scratch;
  // The cut out of a candidate's stage, rebuilt per group in the same storage when a cut out is not
  // in the transition's memo (kept per transition, the patterns would take most of the search's
  // memory: up to senders + receivers transfers each).
  StageCostModel::CutPattern cut_out;
  std::vector<double> later_state_bound(boundaries.size() + 1);
  const double lowest = -std::numeric_limits<double>::infinity();
  // Asked before every prefix is extended: one prefix's transitions take milliseconds, a boundary's
  // all of them can take seconds.
  const auto& progress = options.progress ? options.progress : cost.request().progress;
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
          prefix_fits = cost.fits(prefix.stages[s].layers, *prefix.stages[s].devices, s, stages);
        if (!prefix_fits) continue;  // more stages only keep more micro-batches in flight
        const std::span<const DeviceId> previous = prefix.stages.empty()
                                                       ? std::span<const DeviceId>()
                                                       : std::span<const DeviceId>(*prefix.stages.back().devices);
        std::vector<std::size_t> replicas;  // the shape of the complete plans: the prefix's, the stage's, the rest's
        for (const PrefixStage& kept_stage : prefix.stages) replicas.push_back(kept_stage.devices->size());
        replicas.resize(stage_index + 2);
        for (Transition* taken : transitions_of(*prefix.used, prefix.used_count, previous)) {
          Transition& transition = *taken;
          const int count = transition.count;
          // With more rest GPUs than samples the completion is no plan, but the prefix may still grow.
          const bool rest_has_samples = free - count <= micro_batch;
          const std::vector<DeviceId>& group = transition.group;
          const std::vector<bool>& used = transition.used;
          // The last stage's GPUs and the pattern of the cut into it, built when first needed: most
          // groups have no candidate scored, and most cuts out are in the memo.
          bool rest_built = false;
          const auto last_stage = [&]() -> const std::vector<DeviceId>& {
            if (!rest_built) {
              unused_devices(used, rest);
              cost.cut_pattern(group, rest, cut_out);
              rest_built = true;
            }
            return rest;
          };
          const std::size_t next_id = transition.next_id;
          const StageCostModel::GroupCosts& stage_costs = *transition.stage_costs;
          const StageCostModel::GroupCosts& rest_costs = *transition.rest_costs;
          // How far the stage may grow depends on where it starts and how many stages follow.
          const std::size_t stage_end_limit = cost.max_fitting_end(j, group, stage_index, stages);
          // The candidate's entries after the prefix's: the cut in (none after the empty prefix),
          // the stage, the cut out and the last stage.
          std::array<Formula2Stage, 4> tail;
          const bool has_prefix = !prefix.stages.empty();
          const std::size_t stage_entry = has_prefix ? 1 : 0;
          Seconds cut_in{0};
          if (has_prefix) {
            cut_in = cost.cut(prefix.stages.back().layers.end - 1, previous, group);
            tail[0] = Formula2Stage{cut_in, cut_in, Seconds(0)};
          }
          replicas[stage_index] = group.size();
          replicas[stage_index + 1] = static_cast<std::size_t>(free - count);
          double plan_bound = rest_has_samples ? best_plans.bound(replicas) : lowest;
          // The bound (below) a candidate must beat for the set of the prefixes ending at each cut:
          // at every later cut the stage can still reach, the largest; sets only get harder to
          // enter as the search goes on. Cuts beyond stage_end_limit are never tried (the loop
          // below stops there), so they take no part.
          const std::vector<double>& next_admission = admission_of(next_id);
          std::size_t reachable = b + 1;  // one past the last cut the stage can reach
          while (reachable < boundaries.size() && boundaries[reachable] <= stage_end_limit) ++reachable;
          later_state_bound[reachable] = lowest;
          for (std::size_t c = reachable; c-- > b + 1;) {
            double here = lowest;  // a prefix ending at the last cut leaves one unit: no split left
            if (c + 2 < boundaries.size()) here = next_admission[c];
            later_state_bound[c] = std::max(here, later_state_bound[c + 1]);
          }
          for (std::size_t c = b + 1; c + 1 < boundaries.size(); ++c) {
            const std::size_t cut = boundaries[c];
            // A longer stage needs more memory: once it does not fit, no longer one will.
            if (cut > stage_end_limit) break;
            if (fewest[cut] > free - count) continue;
            const LayerRange stage_layers{j, cut};
            const LayerRange last_layers{cut, layers};
            const PassTimes stage_times = cost.compute(stage_layers, stage_costs);
            const PassTimes last_times = cost.compute(last_layers, rest_costs);
            // Branch and bound, exact: a lower bound on this candidate's Formula 2 (below) that
            // neither the kept plans nor the prefix set at this cut would take is not scored, and
            // once the new stage's own term exceeds what any later cut could still enter, no
            // longer stage is tried.
            const Seconds last_all_reduce = cost.all_reduce(last_layers, rest_costs);
            const LowerBound bound =
                formula2_lower_bound(prefix.summary, cut_in, stage_times, last_times, micro_batches, last_all_reduce);
            if (options.bound && exceeds(bound.stage, std::max(plan_bound, later_state_bound[c]))) {
              for (std::size_t skipped = c; skipped + 1 < boundaries.size() && boundaries[skipped] <= stage_end_limit;
                   ++skipped)
                outcome.bounded += fewest[boundaries[skipped]] > free - count ? 0 : 1;
              break;
            }
            double state_bound = lowest;
            if (c + 2 < boundaries.size()) state_bound = next_admission[c];
            if (options.bound && exceeds(bound.whole, std::max(plan_bound, state_bound))) {
              ++outcome.bounded;
              continue;
            }
            tail[stage_entry] =
                Formula2Stage{stage_times.forward, stage_times.backward, cost.all_reduce(stage_layers, stage_costs)};
            double& known_cut_out = transition.cut_out.at(c, b + 1, reachable);
            if (std::isnan(known_cut_out)) {
              (void)last_stage();
              known_cut_out = cost.cut(cut - 1, cut_out).value();
            }
            const Seconds transfer(known_cut_out);
            tail[stage_entry + 1] = Formula2Stage{transfer, transfer, Seconds(0)};
            tail[stage_entry + 2] =
                Formula2Stage{last_times.forward, last_times.backward, last_all_reduce};
            const std::span<const Formula2Stage> entries(tail.data(), stage_entry + 3);
            ++outcome.candidates;
            // Most candidates enter neither the kept plans nor the next state: the summary's Formula 2
            // shows it without the prefix's entries, and only a candidate it cannot refuse beyond
            // rounding gets formula2_latency's exact value, so that every decision is the same.
            const double limit = std::max(rest_has_samples ? best_plans.admission_bound() : lowest,
                                          c + 2 < boundaries.size() ? next_admission[c] : lowest);
            if (exceeds(completed_latency(prefix.summary, has_prefix, entries, micro_batches), limit)) continue;
            scratch = prefix.entries;
            scratch.insert(scratch.end(), entries.begin(), entries.end());
            const std::size_t prefix_entries = prefix.entries.size() + stage_entry + 1;
            const Seconds latency = formula2_latency(scratch, micro_batches);
            if (rest_has_samples && best_plans.admits(latency) && cost.fits(last_layers, last_stage(), stages - 1, stages)) {
              best_plans.offer(replicas, latency, [&] {
                std::vector<StageSpec> complete;
                complete.reserve(prefix.stages.size() + 2);
                for (const PrefixStage& kept_stage : prefix.stages)
                  complete.push_back(StageSpec{kept_stage.layers, *kept_stage.devices});
                complete.push_back(StageSpec{stage_layers, group});
                complete.push_back(StageSpec{last_layers, last_stage()});
                return complete;
              });
              plan_bound = best_plans.bound(replicas);
            }
            if (c + 2 >= boundaries.size()) continue;  // a prefix ending at the last cut leaves one unit: no split left
            // A full set takes only a faster one-stage completion (PrefixSet::admits), and the
            // candidate's is `latency`: most are refused here, before anything is summarized.
            if (!(latency.value() < next_admission[c])) continue;
            scratch.resize(prefix_entries);
            const PrefixSummary summary = summarize(scratch, micro_batches, latency);
            PrefixSet& kept_here = make_set(cut, next_id, *transition.next_key);
            if (!kept_here.admits(used, group, summary)) continue;
            Prefix extended;
            if (!spare.empty()) {
              extended = std::move(spare.back());
              spare.pop_back();
            }
            extended.entries.assign(scratch.begin(), scratch.end());
            extended.stages.assign(prefix.stages.begin(), prefix.stages.end());
            extended.stages.push_back(PrefixStage{stage_layers, &group});
            extended.used = &used;
            extended.used_count = prefix.used_count + count;
            extended.summary = summary;
            kept_here.keep(std::move(extended), spare);
            admission[next_id][c] = kept_here.admission_bound();
          }
        }
      }
    states[j].clear();  // every transition out of j has been taken
    slots[j].clear();
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
  merged.bounded += second.bounded;
  merged.stopped = merged.stopped || second.stopped;
  merged.fewest_gpus = std::min(merged.fewest_gpus, second.fewest_gpus);
  return merged;
}

OptionSchema formula2_options() {
  OptionSchema schema;
  schema.integer("rerank", 4,
                 "K: the pipeline estimator re-ranks the K best plans of each of Formula 2's K best stage shapes; 1: "
                 "Formula 2 alone chooses, as in the paper")
      .range(1, 1024);
  schema.integer("prefixes", 2, "prefixes the DP keeps per state, a beam width (1: the paper's DP)").range(1, 1024);
  return schema;
}

SearchOptions formula2_settings(const Options& options) {
  SearchOptions settings;
  settings.rerank = static_cast<int>(options.integer("rerank"));
  settings.prefixes_per_state = static_cast<int>(options.integer("prefixes"));
  return settings;
}

PlanResult search_result(const SearchOutcome& outcome, const StageCostModel& cost, const std::string& cost_model,
                         double wall_seconds, int rerank) {
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
  if (rerank > 1) {
    std::size_t chosen = 0;
    for (std::size_t i = 0; i < outcome.kept.size(); ++i) {
      const KeptPlan& kept = outcome.kept[i];
      result.reranked.push_back(
          PlanResult::RankedPlan{make_plan(kept.stages, request), kept.latency, estimate_synchronous(cost, kept.stages)});
      if (result.reranked[i].estimate < result.reranked[chosen].estimate) chosen = i;
    }
    result.plan = result.reranked[chosen].plan;
    result.predicted_iteration_time = result.reranked[chosen].estimate;
    result.cost_model = fmt::format("pipeline estimator over the plans kept by {} (rerank {})", cost_model, rerank);
  }
  result.statistics = PlanStatistics{outcome.candidates, wall_seconds, outcome.bounded};
  if (!request.boundaries.empty()) result.searched_blocks = outcome.units;
  result.stopped_early = outcome.stopped;
  return result;
}

}  // namespace dnnsim
