#include "planners/spmd/spmd_pipeline.hpp"

#include <algorithm>

#include "planners/schedules/pipeline_lowering.hpp"
#include "planners/spmd/spmd_lowering.hpp"

namespace dnnsim {

TaskGraph lower_spmd_pipeline(const OpGraph& graph, const SpmdPlan& plan, const std::vector<std::string>& devices,
                              int iterations, const SpmdCommOptions& comm) {
  const SpmdPipeline& pipe = *plan.pipeline;
  const double samples = std::max(1, graph.samples());
  // The operators but parameters, stage by stage (a topological order: stages never go back).
  std::vector<OpId> order;
  for (OpId id = 0; id < graph.size(); ++id)
    if (graph.op(id).kind != OpKind::parameter) order.push_back(id);
  std::stable_sort(order.begin(), order.end(), [&](OpId a, OpId b) { return pipe.stage[a] < pipe.stage[b]; });
  std::vector<std::size_t> position(graph.size(), 0);
  for (std::size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  // Where each tensor is last read, in the new order.
  std::vector<std::size_t> last(graph.size(), 0);
  for (OpId id : order)
    for (OpId in : graph.op(id).inputs) last[in] = std::max(last[in], position[id]);
  const std::vector<std::vector<OpId>> users = graph.users();
  LayerModel model;
  model.name = graph.name();
  for (std::size_t i = 0; i < order.size(); ++i) {
    const SpmdOp& op = graph.op(order[i]);
    Layer layer;
    layer.name = op.name;
    layer.kind = layer_kind_of(op.kind);
    layer.forward_flops = op.forward_flops / samples;
    layer.backward_flops = op.forward_flops * (2.0 / samples);
    for (OpId in : op.inputs)
      if (graph.op(in).kind == OpKind::parameter) {
        layer.backward_weight_flops = op.forward_flops / samples;
        if (users[in].front() == order[i]) layer.parameter_bytes += graph.bytes(in);
      }
    layer.activation_bytes = graph.bytes(order[i]) / samples;
    // Everything produced so far and read later crosses a cut after this layer.
    Bytes crossing{0};
    for (std::size_t j = 0; j <= i; ++j)
      if (last[order[j]] > i) crossing += graph.bytes(order[j]) / samples;
    layer.cut_bytes = crossing;
    model.layers.push_back(std::move(layer));
  }
  PipelinePlan pipeline;
  pipeline.global_batch = static_cast<int>(samples);
  pipeline.micro_batches = pipe.micro_batches;
  std::size_t begin = 0;
  for (std::size_t s = 0; s < pipe.devices.size(); ++s) {
    std::size_t end = begin;
    while (end < order.size() && pipe.stage[order[end]] == static_cast<int>(s)) ++end;
    pipeline.stages.push_back(PipelineStage{{LayerRange{begin, end}}, pipe.devices[s]});
    begin = end;
  }
  PipelineWorkload workload;
  workload.model = std::move(model);
  workload.plan = std::move(pipeline);
  workload.dtype = graph.dtype();
  workload.collective_algorithm = comm.all_reduce_algorithm;
  if (comm.bucket_bytes > 0) workload.bucket_size = Bytes(comm.bucket_bytes);
  const auto& gpipe = builtin_schedules().at("gpipe");
  return build_pipeline(workload, *gpipe.value(gpipe.defaults("schedule"), pipe.micro_batches), devices, iterations);
}

}  // namespace dnnsim
