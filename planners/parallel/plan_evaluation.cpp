// The Formula 2 latency of a synchronous plan and the timings it hands the schedule estimator: DAPPLE's
// Formula 2 (Fan et al., PPoPP'21), evaluated for every pivot stage at once.
#include <algorithm>
#include <cassert>
#include <limits>
#include <vector>

#include "planners/parallel/stage_cost.hpp"
#include "planners/schedules/critical_path.hpp"
#include "planners/schedules/pipeline_estimator.hpp"

namespace dnnsim {

namespace {

struct PivotLatency {
  std::size_t pivot = 0;
  Seconds latency{0};
};

// L(Q) for every Q with P(k) = Σ_{a<k} B_a: the s ≤ Q terms are P(Q+1) + max_{s≤Q}(AR_s − P(s)) and
// the s > Q terms P(Q) + max_{s>Q}(AR_s − P(s+1)), a running maximum each way.
PivotLatency formula2_pivot(const std::vector<Formula2Stage>& stages, int micro_batches) {
  assert(!stages.empty());
  const std::size_t count = stages.size();
  const double lowest = -std::numeric_limits<double>::infinity();
  // Reused between calls: the searches call this once per candidate.
  thread_local std::vector<double> backward_before;
  thread_local std::vector<double> later_terms;  // max_{s>Q}(AR_s − P(s+1))
  backward_before.assign(count + 1, 0);
  later_terms.assign(count, lowest);
  for (std::size_t k = 0; k < count; ++k) backward_before[k + 1] = backward_before[k] + stages[k].backward.value();
  for (std::size_t q = count - 1; q-- > 0;)
    later_terms[q] = std::max(later_terms[q + 1], stages[q + 1].all_reduce.value() - backward_before[q + 2]);
  PivotLatency best{0, Seconds(lowest)};
  double warm_up = 0;
  double earlier_terms = lowest;  // max_{s≤Q}(AR_s − P(s))
  for (std::size_t q = 0; q < count; ++q) {
    const Formula2Stage& stage = stages[q];
    warm_up += stage.forward.value();
    earlier_terms = std::max(earlier_terms, stage.all_reduce.value() - backward_before[q]);
    const double ending = std::max(backward_before[q + 1] + earlier_terms, backward_before[q] + later_terms[q]);
    const double latency = warm_up + (micro_batches - 1.0) * (stage.forward + stage.backward).value() + ending;
    if (latency >= best.latency.value()) best = PivotLatency{q, Seconds(latency)};
  }
  return best;
}

}  // namespace

std::size_t pivot_stage(const std::vector<Formula2Stage>& stages, int micro_batches) {
  return formula2_pivot(stages, micro_batches).pivot;
}

Seconds formula2_latency(const std::vector<Formula2Stage>& stages, int micro_batches) {
  return formula2_pivot(stages, micro_batches).latency;
}

void append_formula2_stage(const StageCostModel& cost, std::vector<Formula2Stage>& entries, const StageSpec* previous,
                           const StageSpec& stage) {
  if (previous != nullptr) {
    const Seconds transfer = cost.cut(previous->layers.end - 1, previous->devices, stage.devices);
    entries.push_back(Formula2Stage{transfer, transfer, Seconds(0)});
  }
  const PassTimes times = cost.compute(stage.layers, stage.devices);
  entries.push_back(Formula2Stage{times.forward, times.backward, cost.all_reduce(stage.layers, stage.devices)});
}

std::vector<Formula2Stage> formula2_stages(const StageCostModel& cost, const std::vector<StageSpec>& stages) {
  std::vector<Formula2Stage> entries;
  for (std::size_t s = 0; s < stages.size(); ++s)
    append_formula2_stage(cost, entries, s == 0 ? nullptr : &stages[s - 1], stages[s]);
  return entries;
}

PlanEvaluation evaluate_synchronous(const StageCostModel& cost, const std::vector<StageSpec>& stages) {
  PlanEvaluation evaluation;
  evaluation.latency = formula2_latency(formula2_stages(cost, stages), cost.request().micro_batches);
  const int p = static_cast<int>(stages.size());
  for (int s = 0; s < p && evaluation.problem.empty() && cost.request().check_memory; ++s)
    evaluation.problem = cost.memory_problem(stages[s].layers, stages[s].devices, s, p);
  return evaluation;
}

PlanEvaluation evaluate_plan(const StageCostModel& cost, const PipelinePlan& plan) {
  const std::vector<LayerRange> ranges = plan.virtual_stages();
  std::vector<StageSpec> chain;
  for (std::size_t k = 0; k < ranges.size(); ++k)
    chain.push_back(StageSpec{ranges[k], plan.stages[k % plan.stages.size()].devices});
  return evaluate_synchronous(cost, chain);
}

PipelineTimings predicted_timings(const StageCostModel& cost, const std::vector<StageSpec>& stages) {
  PipelineTimings timings;
  timings.stages = static_cast<int>(stages.size());
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const PassTimes times = cost.compute(stages[s].layers, stages[s].devices);
    timings.forward.push_back(times.forward);
    timings.backward.push_back(times.backward);
    timings.tail.push_back(cost.all_reduce(stages[s].layers, stages[s].devices));
    if (s + 1 < stages.size()) {
      const Seconds transfer = cost.cut(stages[s].layers.end - 1, stages[s].devices, stages[s + 1].devices);
      timings.activation_transfer.push_back(transfer);
      timings.gradient_transfer.push_back(transfer);
    }
  }
  return timings;
}

Seconds estimate_synchronous(const StageCostModel& cost, const std::vector<StageSpec>& stages) {
  const PlanRequest& request = cost.request();
  PipelineTimings timings = predicted_timings(cost, stages);
  const std::shared_ptr<const PipelineSchedule> schedule =
      bind_timings(request.schedule ? request.schedule : make_group_schedule(1), timings);
  if (schedule->asynchronous()) {
    // A run that is never flushed: a stage of r replicas all-reduces once every r backwards (the part
    // the backward does not hide; pipeline_lowering.hpp), spread here as 1/r of it after each, and an
    // iteration is what M more micro-batches add to a warm run. The first iteration holds the fill
    // and the last the drain, so the third minus the second.
    for (std::size_t s = 0; s < stages.size(); ++s)
      timings.update.push_back(timings.tail[s] / static_cast<double>(stages[s].devices.size()));
    timings.tail.clear();
    const auto run = [&](int iterations) {
      return estimate_pipeline(*schedule, PipelineShape{timings.stages, iterations * request.micro_batches, 1}, timings)
          .iteration;
    };
    return run(3) - run(2);
  }
  const PipelineShape shape{timings.stages, request.micro_batches, 1};
  return estimate_pipeline(*schedule, shape, timings).iteration;
}

}  // namespace dnnsim
