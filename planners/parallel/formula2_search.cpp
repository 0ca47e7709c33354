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
#include <span>
#include <unordered_map>

#include "planners/parallel/formula2_bounds.hpp"
#include "planners/parallel/formula2_kept_plans.hpp"
#include "planners/parallel/formula2_prefix.hpp"

namespace dnnsim {

namespace {

// Into `result`, reused across candidate groups so that it allocates only while it grows.
void unused_devices(const std::vector<bool>& used, std::vector<DeviceId>& result) {
  result.clear();
  for (std::size_t d = 0; d < used.size(); ++d)
    if (!used[d]) result.push_back(d);
}

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

// The search of formula2_search.hpp in named steps: the single-stage plan, then boundary by boundary
// every kept prefix ending there (extend), every group the policy offers after it (take), and every
// cut that ends the group's stage (score_cut: bound, score, offer the complete plan, keep the longer
// prefix). The state it keeps across them is below.
class Formula2Search {
 public:
  Formula2Search(const StageCostModel& cost, const StagePlacementPolicy& policy, SearchOptions options)
      : cost_(cost),
        policy_(policy),
        options_(std::move(options)),
        layers_(cost.layer_count()),
        devices_(static_cast<int>(cost.device_count())),
        micro_batch_(cost.micro_batch_size()),
        micro_batches_(cost.request().micro_batches),
        best_plans_(options_.rerank),
        capacity_(static_cast<std::size_t>(std::max(1, options_.prefixes_per_state))),
        states_(layers_),
        slots_(layers_),
        none_(devices_, false) {}

  SearchOutcome run() {
    score_single_stage();
    // Where stages may begin and end: the request's block boundaries, or every layer.
    boundaries_ = cost_.request().boundaries;
    if (boundaries_.empty())
      for (std::size_t l = 0; l <= layers_; ++l) boundaries_.push_back(l);
    outcome_.units = boundaries_.size() - 1;
    // A prefix or a cut that leaves fewer GPUs than the rest of the layers needs cannot complete (a
    // bound from memory alone, so no feasible plan is lost).
    fewest_ = fewest_gpus(cost_, boundaries_);
    outcome_.fewest_gpus = fewest_[0];
    states_[0]
        .try_emplace(policy_.state_key(none_), capacity_)
        .first->second.keep(Prefix{{}, {}, &none_, 0, {}}, spare_);
    later_state_bound_.resize(boundaries_.size() + 1);
    for (std::size_t b = 0; b + 1 < boundaries_.size() && !outcome_.stopped; ++b) extend_prefixes_at(b);
    outcome_.kept = std::move(best_plans_).take();
    if (!outcome_.kept.empty()) {
      outcome_.stages = outcome_.kept.front().stages;
      outcome_.latency = outcome_.kept.front().latency;
    }
    return std::move(outcome_);
  }

 private:
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
    const std::string* next_key = nullptr;  // owned by key_ids_
    const StageCostModel::GroupCosts* stage_costs = nullptr;
    const StageCostModel::GroupCosts* rest_costs = nullptr;
    // The cut out of the group into the rest after the unit ending at each boundary: the same
    // transition is taken from several prefixes (GPT-2 XL: 8 on average), which score the same cuts.
    CutMemo cut_out;
  };
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

  // A kept prefix being extended from boundaries[b] = j: what all its candidates share.
  struct Extension {
    const Prefix& prefix;
    std::size_t b = 0;
    std::size_t j = 0;
    int free = 0;                        // GPUs the prefix leaves
    int stage_index = 0;                 // of the new stage
    int stages = 0;                      // of the candidates: the prefix, the new stage, the rest
    std::span<const DeviceId> previous;  // the prefix's last stage
    std::vector<std::size_t> replicas;   // the shape of the complete plans: the prefix's, the stage's, the rest's
  };

  // One group taken after that prefix (its transition): what the cuts ending its stage share.
  struct Step {
    Transition& transition;
    // With more rest GPUs than samples the completion is no plan, but the prefix may still grow.
    bool rest_has_samples = false;
    bool rest_built = false;          // rest_ and cut_out_ hold this step's last stage and cut pattern
    std::size_t stage_end_limit = 0;  // how far the stage may grow: beyond it, it does not fit
    // The candidate's entries after the prefix's: the cut in (none after the empty prefix), the
    // stage, the cut out and the last stage.
    std::array<Formula2Stage, 4> tail;
    bool has_prefix = false;
    std::size_t stage_entry = 0;
    Seconds cut_in{0};
    double plan_bound = 0;                                // what a complete plan of this shape must beat
    const std::vector<double>* next_admission = nullptr;  // admission_[transition.next_id]
    std::size_t reachable = 0;                            // one past the last cut the stage can reach
  };

  // The "DP" plan: one stage on all GPUs, when a micro-batch has a sample for each.
  void score_single_stage() {
    std::vector<DeviceId> all(devices_);
    std::iota(all.begin(), all.end(), DeviceId{0});
    const StageSpec whole{{0, layers_}, all};
    outcome_.first_problem = cost_.memory_problem(whole.layers, whole.devices, 0, 1);
    if (devices_ <= micro_batch_) {
      ++outcome_.candidates;
      const PlanEvaluation dp = evaluate_synchronous(cost_, {whole});
      if (dp.problem.empty()) best_plans_.offer({whole.devices.size()}, dp.latency, [&] { return std::vector{whole}; });
    }
  }

  // Every prefix kept at boundaries[b], in key order; progress is asked before each (one prefix's
  // transitions take milliseconds, a boundary's all of them can take seconds).
  void extend_prefixes_at(std::size_t b) {
    const std::size_t j = boundaries_[b];
    const double fraction = static_cast<double>(b) / static_cast<double>(boundaries_.size() - 1);
    const auto& progress = options_.progress ? options_.progress : cost_.request().progress;
    for (const auto& [key, kept] : states_[j])
      for (const Prefix& prefix : kept.prefixes()) {
        if (outcome_.stopped || (progress && !progress(fraction))) {
          outcome_.stopped = true;
          break;
        }
        extend(prefix, b);
      }
    states_[j].clear();  // every transition out of j has been taken
    slots_[j].clear();
  }

  void extend(const Prefix& prefix, std::size_t b) {
    Extension e{prefix};
    e.b = b;
    e.j = boundaries_[b];
    e.free = devices_ - prefix.used_count;
    if (fewest_[e.j] > e.free) return;
    e.stage_index = static_cast<int>(prefix.stages.size());
    e.stages = e.stage_index + 2;
    bool prefix_fits = true;
    for (int s = 0; s < e.stage_index && prefix_fits; ++s)
      prefix_fits = cost_.fits(prefix.stages[s].layers, *prefix.stages[s].devices, s, e.stages);
    if (!prefix_fits) return;  // more stages only keep more micro-batches in flight
    e.previous =
        prefix.stages.empty() ? std::span<const DeviceId>() : std::span<const DeviceId>(*prefix.stages.back().devices);
    for (const PrefixStage& kept_stage : prefix.stages) e.replicas.push_back(kept_stage.devices->size());
    e.replicas.resize(e.stage_index + 2);
    for (Transition* taken : transitions_of(*prefix.used, prefix.used_count, e.previous)) take(e, *taken);
  }

  // The prefix with `transition`'s group as its next stage, ended at every cut it can reach.
  void take(Extension& e, Transition& transition) {
    const Prefix& prefix = e.prefix;
    const int count = transition.count;
    Step step{transition};
    step.rest_has_samples = e.free - count <= micro_batch_;
    step.stage_end_limit = cost_.max_fitting_end(e.j, transition.group, e.stage_index, e.stages);
    step.has_prefix = !prefix.stages.empty();
    step.stage_entry = step.has_prefix ? 1 : 0;
    if (step.has_prefix) {
      step.cut_in = cost_.cut(prefix.stages.back().layers.end - 1, e.previous, transition.group);
      step.tail[0] = Formula2Stage{step.cut_in, step.cut_in, Seconds(0)};
    }
    e.replicas[e.stage_index] = transition.group.size();
    e.replicas[e.stage_index + 1] = static_cast<std::size_t>(e.free - count);
    step.plan_bound = step.rest_has_samples ? best_plans_.bound(e.replicas) : kLowest;
    // The bound (below) a candidate must beat for the set of the prefixes ending at each cut: at
    // every later cut the stage can still reach, the largest; sets only get harder to enter as the
    // search goes on. Cuts beyond stage_end_limit are never tried (the loop below stops there), so
    // they take no part.
    step.next_admission = &admission_of(transition.next_id);
    step.reachable = e.b + 1;
    while (step.reachable < boundaries_.size() && boundaries_[step.reachable] <= step.stage_end_limit) ++step.reachable;
    later_state_bound_[step.reachable] = kLowest;
    for (std::size_t c = step.reachable; c-- > e.b + 1;) {
      double here = kLowest;  // a prefix ending at the last cut leaves one unit: no split left
      if (c + 2 < boundaries_.size()) here = (*step.next_admission)[c];
      later_state_bound_[c] = std::max(here, later_state_bound_[c + 1]);
    }
    for (std::size_t c = e.b + 1; c + 1 < boundaries_.size(); ++c) {
      const std::size_t cut = boundaries_[c];
      // A longer stage needs more memory: once it does not fit, no longer one will.
      if (cut > step.stage_end_limit) break;
      if (fewest_[cut] > e.free - count) continue;
      if (!score_cut(e, step, c)) break;
    }
  }

  // The last stage's GPUs and the pattern of the cut into it, built when first needed: most groups
  // have no candidate scored, and most cuts out are in the memo.
  const std::vector<DeviceId>& last_stage(Step& step) {
    if (!step.rest_built) {
      unused_devices(step.transition.used, rest_);
      cost_.cut_pattern(step.transition.group, rest_, cut_out_);
      step.rest_built = true;
    }
    return rest_;
  }

  // The candidate whose new stage ends at boundaries[c]: bounded, scored, offered as a complete plan
  // and kept as a longer prefix. False when no longer stage can be worth trying.
  bool score_cut(Extension& e, Step& step, std::size_t c) {
    const Prefix& prefix = e.prefix;
    Transition& transition = step.transition;
    const StageCostModel::GroupCosts& stage_costs = *transition.stage_costs;
    const StageCostModel::GroupCosts& rest_costs = *transition.rest_costs;
    const std::vector<double>& next_admission = *step.next_admission;
    const std::size_t cut = boundaries_[c];
    const int count = transition.count;
    const LayerRange stage_layers{e.j, cut};
    const LayerRange last_layers{cut, layers_};
    const PassTimes stage_times = cost_.compute(stage_layers, stage_costs);
    const PassTimes last_times = cost_.compute(last_layers, rest_costs);
    // Branch and bound, exact: a lower bound on this candidate's Formula 2 (formula2_bounds.hpp)
    // that neither the kept plans nor the prefix set at this cut would take is not scored, and once
    // the new stage's own term exceeds what any later cut could still enter, no longer stage is tried.
    const Seconds last_all_reduce = cost_.all_reduce(last_layers, rest_costs);
    const LowerBound bound =
        formula2_lower_bound(prefix.summary, step.cut_in, stage_times, last_times, micro_batches_, last_all_reduce);
    if (options_.bound && exceeds(bound.stage, std::max(step.plan_bound, later_state_bound_[c]))) {
      for (std::size_t skipped = c; skipped + 1 < boundaries_.size() && boundaries_[skipped] <= step.stage_end_limit;
           ++skipped)
        outcome_.bounded += fewest_[boundaries_[skipped]] > e.free - count ? 0 : 1;
      return false;
    }
    double state_bound = kLowest;
    if (c + 2 < boundaries_.size()) state_bound = next_admission[c];
    if (options_.bound && exceeds(bound.whole, std::max(step.plan_bound, state_bound))) {
      ++outcome_.bounded;
      return true;
    }
    const std::size_t stage_entry = step.stage_entry;
    step.tail[stage_entry] =
        Formula2Stage{stage_times.forward, stage_times.backward, cost_.all_reduce(stage_layers, stage_costs)};
    double& known_cut_out = transition.cut_out.at(c, e.b + 1, step.reachable);
    if (std::isnan(known_cut_out)) {
      (void)last_stage(step);
      known_cut_out = cost_.cut(cut - 1, cut_out_).value();
    }
    const Seconds transfer(known_cut_out);
    step.tail[stage_entry + 1] = Formula2Stage{transfer, transfer, Seconds(0)};
    step.tail[stage_entry + 2] = Formula2Stage{last_times.forward, last_times.backward, last_all_reduce};
    const std::span<const Formula2Stage> entries(step.tail.data(), stage_entry + 3);
    ++outcome_.candidates;
    // Most candidates enter neither the kept plans nor the next state: the summary's Formula 2 shows
    // it without the prefix's entries, and only a candidate it cannot refuse beyond rounding gets
    // formula2_latency's exact value, so that every decision is the same.
    const double limit = std::max(step.rest_has_samples ? best_plans_.admission_bound() : kLowest,
                                  c + 2 < boundaries_.size() ? next_admission[c] : kLowest);
    if (exceeds(completed_latency(prefix.summary, step.has_prefix, entries, micro_batches_), limit)) return true;
    scratch_ = prefix.entries;
    scratch_.insert(scratch_.end(), entries.begin(), entries.end());
    const Seconds latency = formula2_latency(scratch_, micro_batches_);
    if (step.rest_has_samples && best_plans_.admits(latency) &&
        cost_.fits(last_layers, last_stage(step), e.stages - 1, e.stages))
      offer_complete_plan(e, step, stage_layers, last_layers, latency);
    if (c + 2 >= boundaries_.size()) return true;  // a prefix ending at the last cut leaves one unit: no split left
    keep_longer_prefix(e, step, c, stage_layers, latency);
    return true;
  }

  // The prefix, the new stage and the rest as a complete plan, to the kept plans.
  void offer_complete_plan(const Extension& e, Step& step, const LayerRange& stage_layers,
                           const LayerRange& last_layers, Seconds latency) {
    best_plans_.offer(e.replicas, latency, [&] {
      std::vector<StageSpec> complete;
      complete.reserve(e.prefix.stages.size() + 2);
      for (const PrefixStage& kept_stage : e.prefix.stages)
        complete.push_back(StageSpec{kept_stage.layers, *kept_stage.devices});
      complete.push_back(StageSpec{stage_layers, step.transition.group});
      complete.push_back(StageSpec{last_layers, last_stage(step)});
      return complete;
    });
    step.plan_bound = best_plans_.bound(e.replicas);
  }

  // The prefix and the new stage as a prefix ending at boundaries[c], to that state's set. scratch_
  // holds the candidate's entries, whose one-stage completion is `latency`.
  void keep_longer_prefix(const Extension& e, const Step& step, std::size_t c, const LayerRange& stage_layers,
                          Seconds latency) {
    const Transition& transition = step.transition;
    // A full set takes only a faster one-stage completion (PrefixSet::admits), and the candidate's
    // is `latency`: most are refused here, before anything is summarized.
    if (!(latency.value() < (*step.next_admission)[c])) return;
    scratch_.resize(e.prefix.entries.size() + step.stage_entry + 1);
    const PrefixSummary summary = summarize(scratch_, micro_batches_, latency);
    PrefixSet& kept_here = make_set(boundaries_[c], transition.next_id, *transition.next_key);
    if (!kept_here.admits(transition.used, transition.group, summary)) return;
    Prefix extended;
    if (!spare_.empty()) {
      extended = std::move(spare_.back());
      spare_.pop_back();
    }
    extended.entries.assign(scratch_.begin(), scratch_.end());
    extended.stages.assign(e.prefix.stages.begin(), e.prefix.stages.end());
    extended.stages.push_back(PrefixStage{stage_layers, &transition.group});
    extended.used = &transition.used;
    extended.used_count = e.prefix.used_count + transition.count;
    extended.summary = summary;
    kept_here.keep(std::move(extended), spare_);
    admission_[transition.next_id][c] = kept_here.admission_bound();
  }

  // The groups the policy offers after a prefix with these used GPUs and last stage, each made into
  // a transition once for the whole search.
  const std::vector<Transition*>& transitions_of(const std::vector<bool>& prefix_used, int used_count,
                                                 std::span<const DeviceId> previous) {
    auto [it, inserted] =
        transitions_.try_emplace(TransitionKey{prefix_used, std::vector<DeviceId>(previous.begin(), previous.end())});
    if (!inserted) return it->second;
    std::deque<Transition>& after = made_[prefix_used];
    const int free = devices_ - used_count;
    for (int count = 1; count < free && count <= micro_batch_; ++count)
      for (std::vector<DeviceId>& group : policy_.place(prefix_used, previous, count)) {
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
        unused_devices(t.used, rest_);
        const auto key = key_ids_.try_emplace(policy_.state_key(t.used), key_ids_.size()).first;
        t.next_id = key->second;
        t.next_key = &key->first;
        t.stage_costs = &cost_.group_costs(group);
        t.rest_costs = &cost_.group_costs(rest_);
        t.group = std::move(group);
        it->second.push_back(&t);
      }
    return it->second;
  }

  // admission_[id][c]: the admission_bound of the set of class id at boundaries[c] (+∞ while it has
  // none), copied out of the sets whenever one keeps a prefix: a candidate group reads it for every
  // cut it can reach, and reading it here, contiguous by cut, is what keeps that cheap.
  std::vector<double>& admission_of(std::size_t id) {
    if (admission_.size() <= id) admission_.resize(id + 1);
    if (admission_[id].empty()) admission_[id].assign(boundaries_.size(), std::numeric_limits<double>::infinity());
    return admission_[id];
  }

  PrefixSet& make_set(std::size_t cut, std::size_t id, const std::string& key) {
    if (id < slots_[cut].size() && slots_[cut][id] != nullptr) return *slots_[cut][id];
    if (slots_[cut].size() <= id) slots_[cut].resize(id + 1, nullptr);
    return *(slots_[cut][id] = &states_[cut].try_emplace(key, capacity_).first->second);
  }

  static constexpr double kLowest = -std::numeric_limits<double>::infinity();

  const StageCostModel& cost_;
  const StagePlacementPolicy& policy_;
  SearchOptions options_;
  const std::size_t layers_;
  const int devices_;
  const int micro_batch_;
  const int micro_batches_;
  SearchOutcome outcome_;
  KeptPlans best_plans_;
  const std::size_t capacity_;  // prefixes per state
  std::vector<std::size_t> boundaries_;
  std::vector<int> fewest_;  // fewest_gpus by layer
  // states_[j]: the kept prefixes covering layers [0, j) for each class of used GPU sets, iterated
  // in key order; slots_[j][id] the same sets by the interned key, found without a string lookup.
  std::vector<std::map<std::string, PrefixSet>> states_;
  std::vector<std::vector<PrefixSet*>> slots_;
  std::unordered_map<std::string, std::size_t> key_ids_;  // asked once per candidate group
  std::vector<std::vector<double>> admission_;
  const std::vector<bool> none_;
  // Prefixes pushed out of their sets, whose vectors the next kept prefixes reuse: the search keeps
  // millions of prefixes over its course, most of them soon pushed out by a better one.
  std::vector<Prefix> spare_;
  // By the prefix's used GPUs, every group offered after them so far (a deque: prefixes point into it).
  std::unordered_map<std::vector<bool>, std::deque<Transition>> made_;
  std::unordered_map<TransitionKey, std::vector<Transition*>, TransitionHash> transitions_;
  std::vector<DeviceId> rest_;  // a candidate's last stage: the GPUs its transition leaves unused
  std::vector<Formula2Stage> scratch_;
  // The cut out of a candidate's stage, rebuilt per group in the same storage when a cut out is not
  // in the transition's memo (kept per transition, the patterns would take most of the search's
  // memory: up to senders + receivers transfers each).
  StageCostModel::CutPattern cut_out_;
  std::vector<double> later_state_bound_;  // by cut: the largest admission bound of the later cuts
};

}  // namespace

SearchOutcome formula2_search(const StageCostModel& cost, const StagePlacementPolicy& policy, SearchOptions options) {
  return Formula2Search(cost, policy, std::move(options)).run();
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
  schema
      .integer("rerank", 4,
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
    PlanResult stopped =
        infeasible(fmt::format("the search was stopped before it found a plan that fits ({} candidates "
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
        fmt::format(
            "no plan fits in GPU memory ({} candidates scored); the data-parallel plan: {}", outcome.candidates,
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
      result.reranked.push_back(PlanResult::RankedPlan{make_plan(kept.stages, request), kept.latency,
                                                       estimate_synchronous(cost, kept.stages)});
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
