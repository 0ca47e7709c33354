// Wall time of the parallelization planners (docs/performance.md, "Planner wall time"): BERT-48 on
// 2 × 8 V100-16GB and a 96-block GPT (gpt3-175b) on 8 × 8 A100-80GB, NVLink inside a node and
// 25 Gbps between nodes. Each transformer block of the zoo model (its norm, QKV, attention,
// projection and MLP layers) is merged into one layer, so that the planners cut between blocks as
// the papers do ("BERT-48", "96-layer GPT"). Prints, per planner, the best of 3 wall times, the
// candidates scored and the plan.
#include <fmt/format.h>

#include <chrono>
#include <map>
#include <string>
#include <utility>

#include "models/dnn/zoo.hpp"
#include "models/hardware/catalog.hpp"
#include "planners/parallel/planner.hpp"

namespace {

using namespace dnnsim;

// One layer per "block<i>." prefix; other layers (embedding, final norm, head) stay as they are.
// `inputs` receives each merged layer's per-sample input (the output of the original layer before
// it), the checkpoint that recomputation keeps (TrainingMemoryConfig::layer_input_bytes).
LayerModel merge_blocks(const LayerModel& model, std::vector<Bytes>& inputs) {
  LayerModel merged = model;
  merged.layers.clear();
  inputs.clear();
  std::string current;
  const Layer* before = nullptr;
  for (const Layer& layer : model.layers) {
    const Layer* previous = before;
    before = &layer;
    const std::size_t dot = layer.name.find('.');
    const std::string block =
        layer.name.rfind("block", 0) == 0 && dot != std::string::npos ? layer.name.substr(0, dot) : "";
    if (block.empty() || block != current) {
      merged.layers.push_back(layer);
      inputs.push_back(previous != nullptr ? previous->activation_bytes : Bytes(0));
      if (!block.empty()) merged.layers.back().name = block;
      current = block;
      continue;
    }
    Layer& into = merged.layers.back();
    into.forward_flops += layer.forward_flops;
    into.backward_flops += layer.backward_flops;
    into.backward_weight_flops += layer.backward_weight_flops;
    into.parameter_bytes += layer.parameter_bytes;
    into.forward_bytes += layer.forward_bytes.value() > 0 ? layer.forward_bytes : layer.activation_bytes * 2.0;
    into.activation_bytes += layer.activation_bytes;
    into.matmuls.insert(into.matmuls.end(), layer.matmuls.begin(), layer.matmuls.end());
  }
  return merged;
}

ClusterView cluster(int nodes, int per_node, const std::string& gpu) {
  ClusterView view;
  const GpuSpec& spec = *HardwareCatalog::builtin().find_gpu(gpu);
  for (int n = 0; n < nodes; ++n)
    for (int g = 0; g < per_node; ++g)
      view.devices.push_back(ClusterDevice{fmt::format("node{}/gpu{}", n, g), spec, static_cast<std::uint32_t>(n)});
  const auto gpus_per_node = static_cast<DeviceId>(per_node);
  view.path_cost = [gpus_per_node](DeviceId a, DeviceId b) {
    return a / gpus_per_node == b / gpus_per_node ? PathCost{Seconds(1e-6), BytesPerSecond(150e9)}     // NVLink
                                                  : PathCost{Seconds(5e-6), BytesPerSecond(3.125e9)};  // 25 Gbps
  };
  return view;
}

// An fp16 request to train the built-in `model`, its blocks merged, on `gpus`.
PlanRequest request(const std::string& model, ClusterView gpus, int global_batch, int micro_batches) {
  PlanRequest r;
  r.model = merge_blocks(builtin_models().at(model).value(ModelOptions{}), r.memory.layer_input_bytes);
  r.cluster = std::move(gpus);
  r.global_batch = global_batch;
  r.micro_batches = micro_batches;
  r.dtype = Dtype::fp16;
  return r;
}

void run(const std::string& title, PlanRequest request) {
  fmt::print("{} ({} layers, {} GPUs, GBS {}, M {})\n", title, request.model.layers.size(), request.cluster.size(),
             request.global_batch, request.micro_batches);
  for (const auto& entry : builtin_planners().entries()) {
    double best = 1e300;
    PlanResult result;
    request.options = entry.defaults(builtin_planners().what());
    for (int repeat = 0; repeat < 3; ++repeat) {
      const auto start = std::chrono::steady_clock::now();
      result = entry.value->plan(request);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    fmt::print("  {:<17} {:>9.3f} s  {:>11} candidates  {}\n", entry.name, best, result.statistics.candidates,
               result.feasible ? fmt::format("L = {:.4f} s: {} stages", result.predicted_iteration_time.value(),
                                             result.plan.stages.size())
                               : "infeasible: " + result.reason);
  }
}

}  // namespace

int main() {
  run("BERT-48 on 2×8 V100-16GB", request("bert-48", cluster(2, 8, "V100-16GB"), 64, 32));
  PlanRequest gpt = request("gpt3-175b", cluster(8, 8, "A100-80GB-SXM"), 512, 64);
  gpt.memory.recompute = true;
  run("GPT-3 175B (96 blocks) on 8×8 A100-80GB", gpt);
}
