// The memory a pipeline stage's GPUs hold for the lowering's allocations (pipeline_lowering.hpp):
// model states as the precision recipe stores them and the layout shards them, and the activations
// a chunk keeps.
#include <algorithm>
#include <map>
#include <string>

#include "planners/schedules/pipeline_lowering.hpp"

namespace dnnsim {
namespace {

// The parameters of the largest transformer block among `chunks` (a layer outside the blocks counts alone).
double largest_block_parameters(const LayerModel& model, const std::vector<LayerRange>& chunks) {
  std::map<std::string, double> blocks;
  for (const LayerRange& range : chunks)
    for (std::size_t l = range.begin; l < range.end; ++l) {
      const std::string& name = model.layers[l].name;
      const auto dot = name.find('.', name.find("block"));
      blocks[dot == std::string::npos ? name : name.substr(0, dot)] +=
          model.layers[l].parameter_bytes.value() / kProfileBytesPerParameter;
    }
  double largest = 0;
  for (const auto& [block, parameters] : blocks) largest = std::max(largest, parameters);
  return largest;
}

}  // namespace

Bytes chunk_activation_bytes(const LayerModel& model, LayerRange range, int samples) {
  Bytes total{0};
  for (std::size_t l = range.begin; l < range.end; ++l) total += model.layers[l].activation_bytes;
  return total * samples;
}

ModelStates stage_llm_model_states(const PipelineWorkload& workload, std::size_t stage) {
  const PipelineStage& replicas = workload.plan.stages[stage];
  ParameterSplit split;
  for (const LayerRange& range : replicas.chunks) {
    const ParameterSplit part = parameter_split(workload.model, range.begin, range.end);
    split.dense += part.dense;
    split.experts += part.experts;
  }
  return llm_model_states(split, workload.resident_bytes_per_parameter(replicas), workload.optimizer_shards(replicas),
                          workload.tensor_parallel.degree, workload.llm.expert, workload.llm.fsdp);
}

Bytes stage_model_state_bytes(const PipelineWorkload& workload, std::size_t stage) {
  double parameters = 0;
  for (const LayerRange& range : workload.plan.stages[stage].chunks)
    parameters += parameter_count(workload.model, range);
  const BytesPerParameter per_parameter = workload.bytes_per_parameter();
  const PipelineStage& replicas = workload.plan.stages[stage];
  // An LLM's routed experts are sharded over their own (expert data-parallel) ranks (llm_model_states).
  if (workload.llm.any()) {
    // FSDP also holds two layers' gathered weights (the one computing and the one prefetched:
    // Megatron-FSDP's double buffer), each with its FP8 transpose where the GPU needs one.
    const double gathered = workload.llm.fsdp ? 2.0 * largest_block_parameters(workload.model, replicas.chunks) *
                                                    workload.resident_bytes_per_parameter(replicas).whole_weights()
                                              : 0.0;
    return stage_llm_model_states(workload, stage).total() + Bytes(gathered);
  }
  // Megatron's distributed optimizer shards the optimizer state (with the fp32 master weights) over the
  // replicas (ZeRO stage 1, Rajbhandari et al. SC'20 §5.1).
  return Bytes(parameters * (per_parameter.weights + per_parameter.gradients +
                             per_parameter.optimizer_state / workload.optimizer_shards(replicas)));
}

}  // namespace dnnsim
