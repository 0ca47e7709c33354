// Megatron-Core's activation offload as the pipeline lowering places it and the simulator runs it
// (pipeline_lowering.hpp; Transformer Engine 2.9's AsyncDoubleBufferGroupOffloadHandler, offload_windows
// in models/dnn/llm_parallel.hpp): each offloaded block's copies on their own streams over the GPU↔host
// link, the compute stream waiting where Transformer Engine waits. One TEST per process (one engine).
//
// Platform: one V100 whose PCIe link (its GPU↔host link) is 1 GB/s per direction without latency, so
// a copy of B bytes alone takes B / 1 GB/s. Model: 4 blocks of one layer (t_f = 1 s, t_b = 2 s per
// sample, measured on the V100) and a head (1 s, 2 s); the first 2 blocks offloaded, B bytes each;
// one sample, one micro-batch, one iteration. offload_windows(4, 2) = {1, 3}:
//  forward  block0 [0,1] → offload0 issued at 1; block1 [1,2] → the compute waits for offload0 and
//           offload1 is issued (after offload0 on its stream); blocks 2–3 (2 s); after block 3 the
//           compute waits for offload1; the head (1 s);
//  backward head (2 s) → reload1 issued; blocks 3–2 (4 s) → the compute waits for reload1, reload0
//           issued (after reload1 on its stream); block1 (2 s) → waits for reload0; block0 (2 s).
// Without offload the iteration takes 5 + 10 = 15 s.
//  - copy longer than its window (B = 3 GB, 3 s): offload0 1–4, offload1 4–7 (it waits for offload0),
//    blocks 2–3 4–6, head 7–8; head backward 8–10, reload1 10–13, blocks 3–2 10–14, reload0 14–17,
//    block1 14–16, block0 17–19: 19 s, 4 s exposed.
//  - copy shorter than its window (B = 0.5 GB, 0.5 s): every copy ends before its wait: 15 s, none exposed.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "planners/schedules/pipeline_lowering.hpp"
#include "sim/run/simulation.hpp"
#include "tests/support/collective_platforms.hpp"
#include "tests/support/planner_entries.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

const std::string kOneGpu = R"(name: offload
cluster:
  node_types:
    box:
      gpu: V100-32GB
      gpus_per_node: 1
      fabric: pcie
      pcie: {bandwidth: "1GB/s", latency: "0s"}
      nic: {bandwidth: "10GB/s", latency: "0s"}
  nodes: [{type: box}]
)" + testing::one_layer_data_parallel(1);

PipelineWorkload offloading(double block_bytes) {
  PipelineWorkload workload;
  workload.model.name = "four-blocks";
  workload.model.measured_on = "V100-32GB";
  workload.model.measured_batch = 1;
  for (int l = 0; l < 5; ++l) {
    Layer layer;
    layer.name = l < 4 ? fmt::format("block{}.mlp", l) : "head";
    layer.forward_time = Seconds(1.0);
    layer.backward_time = Seconds(2.0);
    // What offload_activations moves to the host: the first 2 blocks' kept activations.
    layer.offloaded_bytes = Bytes(l < 2 ? block_bytes : 0.0);
    workload.model.layers.push_back(layer);
  }
  workload.llm.offloaded_layers = 2;
  workload.plan.stages.push_back(PipelineStage{{LayerRange{0, 5}}, {0}});
  workload.plan.micro_batches = 1;
  workload.plan.global_batch = 1;
  return workload;
}

double iteration_time(double block_bytes) {
  const Scenario scenario = testing::load(kOneGpu);
  TaskGraph graph = testing::graph_on_gpus(scenario);
  (void)lower_pipeline_iteration(graph, offloading(block_bytes), *testing::make_schedule("1f1b"), 0);
  std::size_t copies = 0;
  for (const Task& task : graph.tasks())
    if (const auto* transfer = std::get_if<Transfer>(&task.op); transfer && transfer->host != HostCopy::none) {
      ++copies;
      EXPECT_DOUBLE_EQ(transfer->size.value(), block_bytes);
    }
  EXPECT_EQ(copies, 4u);  // two blocks, each out and back
  const SimulationResult result = simulate(scenario, std::move(graph), {});
  return *std::max_element(result.task_end.begin(), result.task_end.end());
}

TEST(ActivationOffload, ACopyLongerThanItsWindowIsExposed) { EXPECT_NEAR(iteration_time(3e9), 19.0, 1e-9); }

TEST(ActivationOffload, ACopyShorterThanItsWindowIsHidden) { EXPECT_NEAR(iteration_time(0.5e9), 15.0, 1e-9); }

}  // namespace
}  // namespace dnnsim
