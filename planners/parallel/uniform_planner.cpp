// GPipe's equal split (Huang et al., "GPipe", NeurIPS'19 §2.2), by whole transformer blocks as
// Megatron-LM splits (Narayanan et al., SC'21 §2.2), with Megatron's interleaved chunk numbering
// (SC'21 §2.2.2): chunk c of stage s is virtual stage c·p + s.
#include <fmt/format.h>

#include "planners/parallel/pipeline_layout.hpp"
#include "planners/parallel/plan_clock.hpp"
#include "planners/parallel/planners.hpp"

namespace dnnsim {

std::vector<LayerRange> equal_split(std::size_t layers, std::size_t parts) {
  std::vector<LayerRange> result;
  std::size_t begin = 0;
  for (std::size_t k = 0; k < parts; ++k) {
    const std::size_t size = layers / parts + (k < layers % parts ? 1 : 0);
    result.push_back(LayerRange{begin, begin + size});
    begin += size;
  }
  return result;
}

std::vector<LayerRange> uniform_split(const LayerModel& model, std::size_t parts) {
  const std::vector<LayerRange> blocks = model_blocks(model);
  if (parts == 0 || blocks.size() < parts) return equal_split(model.layers.size(), parts);
  // Part k begins at its first block (part 0 at layer 0) and ends where part k + 1 begins (the last
  // part at the model's end), so layers outside the blocks stay with the block before them.
  const std::vector<LayerRange> counts = equal_split(blocks.size(), parts);
  std::vector<LayerRange> result;
  for (std::size_t k = 0; k < parts; ++k)
    result.push_back(LayerRange{k == 0 ? 0 : blocks[counts[k].begin].begin,
                                k + 1 == parts ? model.layers.size() : blocks[counts[k + 1].begin].begin});
  return result;
}

OptionSchema UniformPlanner::options() {
  OptionSchema schema;
  schema.integer("stages", std::nullopt, "p, the number of stages (dividing the GPUs); none: one per GPU").at_least(1);
  schema
      .text("layout", std::nullopt,
            "Megatron's pipeline layout of the p × chunks virtual stages, e.g. Et*3|(t*4|)*14ttL "
            "(planners/parallel/pipeline_layout.hpp); none: whole blocks split evenly")
      .check(layout_syntax_problem);
  return schema;
}

PlanResult UniformPlanner::plan(const PlanRequest& request) const {
  const PlanClock timer;
  const std::string cost_model = "DAPPLE Formula 2 over the virtual stages";
  if (std::string problem = request_problem(request, true); !problem.empty())
    return infeasible(std::move(problem), cost_model, 0, timer.elapsed());
  const std::size_t devices = request.cluster.size();
  const std::size_t layers = request.model.layers.size();
  const int p =
      request.options.has("stages") ? static_cast<int>(request.options.integer("stages")) : static_cast<int>(devices);
  const int v = request.chunks_per_stage;
  if (p < 1 || static_cast<std::size_t>(p) > devices || devices % static_cast<std::size_t>(p) != 0)
    return infeasible(fmt::format("{} GPUs cannot be split evenly into {} stages", devices, p), cost_model, 0,
                      timer.elapsed());
  if (static_cast<std::size_t>(p) * v > layers)
    return infeasible(fmt::format("{} stages × {} chunks need at least as many layers; the model has {}", p, v, layers),
                      cost_model, 0, timer.elapsed());
  const int replicas = static_cast<int>(devices) / p;
  const int micro_batch = request.global_batch / request.micro_batches;
  if (replicas > micro_batch)
    return infeasible(fmt::format("{} replicas per stage but a micro-batch has only {} samples", replicas, micro_batch),
                      cost_model, 0, timer.elapsed());

  PlanResult result;
  result.plan.global_batch = request.global_batch;
  result.plan.micro_batches = request.micro_batches;
  std::vector<LayerRange> virtual_ranges;
  if (request.options.has("layout")) {
    LayoutSplit split = split_by_layout(request.options.text("layout"), request.model, static_cast<std::size_t>(p) * v);
    if (!split.problem.empty()) return infeasible(std::move(split.problem), cost_model, 0, timer.elapsed());
    virtual_ranges = std::move(split.virtual_stages);
  } else {
    virtual_ranges = uniform_split(request.model, static_cast<std::size_t>(p) * v);
  }
  if (model_blocks(request.model).size() >= static_cast<std::size_t>(p) * v)
    result.searched_blocks = block_boundaries(request.model).size() - 1;
  for (int s = 0; s < p; ++s) {
    PipelineStage stage;
    for (int d = s * replicas; d < (s + 1) * replicas; ++d) stage.devices.push_back(static_cast<DeviceId>(d));
    for (int c = 0; c < v; ++c) stage.chunks.push_back(virtual_ranges[static_cast<std::size_t>(c) * p + s]);
    result.plan.stages.push_back(std::move(stage));
  }
  const StageCostModel cost(request);
  const PlanEvaluation evaluation = evaluate_plan(cost, result.plan);
  if (!evaluation.problem.empty()) return infeasible(evaluation.problem, cost_model, 1, timer.elapsed());
  result.feasible = true;
  result.predicted_iteration_time = evaluation.latency;
  result.cost_model = cost_model;
  result.statistics = PlanStatistics{1, timer.elapsed()};
  return result;
}

}  // namespace dnnsim
