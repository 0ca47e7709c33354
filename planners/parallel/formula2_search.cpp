#include "planners/parallel/formula2_search.hpp"

#include <fmt/format.h>

#include <limits>
#include <map>
#include <numeric>

namespace dnnsim {

namespace {

// A planned prefix: its stages, their Formula 2 entries (with the cuts between them) and its GPUs.
struct Prefix {
  std::vector<StageSpec> stages;
  std::vector<Formula2Stage> entries;
  std::vector<bool> used;
  int used_count = 0;
  Seconds latency{0};  // Formula 2 of the prefix completed by one last stage
};

std::vector<DeviceId> unused_devices(const std::vector<bool>& used) {
  std::vector<DeviceId> result;
  for (std::size_t d = 0; d < used.size(); ++d)
    if (!used[d]) result.push_back(d);
  return result;
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

  // states[j]: the best prefix covering layers [0, j) for each class of used GPU sets.
  std::vector<std::map<std::string, Prefix>> states(layers);
  const std::vector<bool> none(devices, false);
  states[0].emplace(policy.state_key(none), Prefix{{}, {}, none, 0, Seconds(0)});
  std::vector<Formula2Stage> scratch;
  for (std::size_t j = 0; j < layers; ++j) {
    for (const auto& [key, prefix] : states[j]) {
      const int free = devices - prefix.used_count;
      const int stage_index = static_cast<int>(prefix.stages.size());
      const int stages = stage_index + 2;  // the prefix, the new stage, the rest
      bool prefix_fits = true;
      for (int s = 0; s < stage_index && prefix_fits; ++s)
        prefix_fits = cost.fits(prefix.stages[s].layers, prefix.stages[s].devices, s, stages);
      if (!prefix_fits) continue;  // more stages only keep more micro-batches in flight
      const std::span<const DeviceId> previous =
          prefix.stages.empty() ? std::span<const DeviceId>() : std::span<const DeviceId>(prefix.stages.back().devices);
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
            auto [slot, inserted] = states[cut].try_emplace(next_key);
            if (inserted || latency < slot->second.latency) {
              Prefix& extended = slot->second;
              extended.stages = prefix.stages;
              extended.stages.push_back(stage);
              scratch.resize(prefix_entries);
              extended.entries = scratch;
              extended.used = used;
              extended.used_count = prefix.used_count + count;
              extended.latency = latency;
            }
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
