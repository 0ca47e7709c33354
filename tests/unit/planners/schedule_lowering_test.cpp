// The pipeline lowering (planners/schedules/pipeline_lowering.hpp) checked on its structure without
// an engine: task counts, split-concat transfer sizes, dependencies, streams and memory balance.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "models/common/diagnostics.hpp"
#include "models/dnn/zoo.hpp"
#include "planners/schedules/pipeline_lowering.hpp"
#include "tests/support/planner_entries.hpp"

namespace dnnsim {
namespace {

// Four measured layers (10 ms forward, 20 ms backward each at batch 1); parameters 4, 8, 12, 16 MB;
// activations per sample 1, 2, 3, 4 MB.
LayerModel four_layers() {
  LayerModel model;
  model.name = "four";
  model.measured_on = "V100-16GB";
  model.measured_batch = 1;
  for (int l = 0; l < 4; ++l) {
    Layer layer;
    layer.name = fmt::format("l{}", l);
    layer.forward_time = Seconds(0.010);
    layer.backward_time = Seconds(0.020);
    layer.parameter_bytes = Bytes(4e6 * (l + 1));
    layer.activation_bytes = Bytes(1e6 * (l + 1));
    model.layers.push_back(layer);
  }
  return model;
}

using testing::make_schedule;

// Stage 0 = layers [0, 2) on devices 0 and 1, stage 1 = [2, 4) on device 2; M micro-batches of
// `micro_batch` samples.
PipelineWorkload two_to_one(int micro_batches, int micro_batch) {
  PipelineWorkload workload;
  workload.model = four_layers();
  workload.plan.stages = {PipelineStage{{LayerRange{0, 2}}, {0, 1}}, PipelineStage{{LayerRange{2, 4}}, {2}}};
  workload.plan.micro_batches = micro_batches;
  workload.plan.global_batch = micro_batches * micro_batch;
  return workload;
}

const std::vector<std::string> kThreeDevices = {"a", "b", "c"};

TEST(PipelineLowering, TaskCountsOfAReplicatedStage) {
  // M = 2, 1F1B. Computes: stage 0 has 2 replicas × 2 micro-batches × (fwd + bwd) = 8, stage 1
  // 1 × 2 × 2 = 4. Transfers: each micro-batch's activation is concatenated from both replicas of
  // stage 0 (2 pieces) and its gradient split back (2 pieces): 2 × (2 + 2) = 8. One all-reduce
  // (stage 0; stage 1 has one replica), one optimizer step per device: 3. Total 8 + 4 + 8 + 1 + 3 = 24.
  TaskGraph graph;
  for (const auto& name : kThreeDevices) graph.add_device(name);
  const LoweredIteration lowered = lower_pipeline_iteration(graph, two_to_one(2, 4), *make_schedule("1f1b"), 0);
  EXPECT_EQ(graph.tasks().size(), 24u);
  EXPECT_TRUE(graph.validate().empty());
  EXPECT_EQ(graph.streams(), (std::vector<std::string>{"compute", "send-next", "send-prev", "allreduce"}));
  ASSERT_EQ(lowered.forward.size(), 2u);
  EXPECT_EQ(lowered.forward[0][1].size(), 2u);  // two replicas
  EXPECT_EQ(lowered.forward[1][1].size(), 1u);
  EXPECT_TRUE(lowered.recompute.empty());
  ASSERT_EQ(lowered.activation_transfers.size(), 1u);
  EXPECT_EQ(lowered.activation_transfers[0][0].size(), 2u);
  EXPECT_EQ(lowered.gradient_transfers[0][1].size(), 2u);
  EXPECT_TRUE(lowered.all_reduce[0].has_value());
  EXPECT_FALSE(lowered.all_reduce[1].has_value());
  EXPECT_EQ(lowered.optimizer[0].size(), 2u);

  // A chunk of two 10 ms layers on 2 samples (a replica's share of 4) is one Compute of 40 ms.
  const auto& forward = std::get<Compute>(graph.task(lowered.forward[0][0][0]).op);
  EXPECT_NEAR(forward.measured_time->value(), 2 * 0.010 * 2, 1e-15);
  EXPECT_EQ(forward.measured_on, "V100-16GB");

  // Split-concat: 2 samples from each replica of stage 0, × layer 1's 2 MB per sample = 4 MB each,
  // on the sender's send-next stream after its forward; stage 1's forward waits for both.
  for (TaskId id : lowered.activation_transfers[0][1]) {
    const Task& task = graph.task(id);
    EXPECT_DOUBLE_EQ(std::get<Transfer>(task.op).size.value(), 4e6);
    EXPECT_EQ(graph.streams()[task.stream], "send-next");
    EXPECT_EQ(graph.task(task.deps.at(0)).phase, Phase::forward);
    const auto& consumer = graph.task(lowered.forward[1][1][0]).deps;
    EXPECT_NE(std::find(consumer.begin(), consumer.end(), id), consumer.end());
  }
  // Gradients go back with the same sizes, from stage 1's send-prev stream.
  for (TaskId id : lowered.gradient_transfers[0][1]) {
    EXPECT_DOUBLE_EQ(std::get<Transfer>(graph.task(id).op).size.value(), 4e6);
    EXPECT_EQ(std::get<Transfer>(graph.task(id).op).src, 2u);
    EXPECT_EQ(graph.streams()[graph.task(id).stream], "send-prev");
  }
  // The all-reduce carries stage 0's 4 + 8 = 12 MB of parameters (fp32 gradients: 4 bytes a
  // parameter, as counted) and waits for both replicas' last backward (micro-batch 1).
  const Task& all_reduce = graph.task(*lowered.all_reduce[0]);
  EXPECT_DOUBLE_EQ(std::get<Collective>(all_reduce.op).size.value(), 12e6);
  EXPECT_EQ(all_reduce.deps, lowered.backward[0][1]);
  EXPECT_EQ(graph.task(lowered.optimizer[0][1]).deps, std::vector<TaskId>{*lowered.all_reduce[0]});
}

TEST(PipelineLowering, TheLastBackwardOfAReplicatedStageIsSplitIntoGradientBuckets) {
  // M = 2 micro-batches of 4, 8 MB buckets. Stage 0 (layers [0, 2), 4 and 8 MB, two replicas):
  // walking down, l1's 8 MB close a bucket, l0's 4 MB are the rest, so its last backward (mb1) is
  // two pieces per replica, l1 then l0, each all-reduced as soon as both replicas ran it. Stage 1
  // (one replica) has no all-reduce and stays whole. Tasks: the 24 of the unsplit case (above) + one
  // piece per replica + one all-reduce = 27.
  PipelineWorkload workload = two_to_one(2, 4);
  workload.bucket_size = Bytes(8e6);
  TaskGraph graph;
  for (const auto& name : kThreeDevices) graph.add_device(name);
  const LoweredIteration lowered = lower_pipeline_iteration(graph, workload, *make_schedule("1f1b"), 0);
  EXPECT_EQ(graph.tasks().size(), 27u);
  EXPECT_TRUE(graph.validate().empty());
  const auto& first = lowered.backward[0][1];
  const auto& last = lowered.backward_end[0][1];
  ASSERT_EQ(first.size(), 2u);
  ASSERT_EQ(last.size(), 2u);
  for (int q = 0; q < 2; ++q) {
    const Task& top = graph.task(first[q]);
    const Task& bottom = graph.task(last[q]);
    EXPECT_EQ(top.label, "bwd s0 mb1 bucket 0");
    EXPECT_EQ(bottom.label, "bwd s0 mb1 bucket 1");
    // Each piece is one 20 ms layer on the replica's 2 samples; the last frees the step's
    // activations (1 + 2 MB per sample × 2 samples), the first nothing.
    EXPECT_NEAR(std::get<Compute>(top.op).measured_time->value(), 0.040, 1e-15);
    EXPECT_NEAR(std::get<Compute>(bottom.op).measured_time->value(), 0.040, 1e-15);
    EXPECT_DOUBLE_EQ(top.free_bytes.value(), 0.0);
    EXPECT_DOUBLE_EQ(bottom.free_bytes.value(), 6e6);
    // The incoming gradient pieces feed the first piece.
    EXPECT_FALSE(top.deps.empty());
  }
  // Stage 1 and stage 0's first backward are not split.
  EXPECT_EQ(lowered.backward[1][1], lowered.backward_end[1][1]);
  EXPECT_EQ(lowered.backward[0][0], lowered.backward_end[0][0]);
  std::vector<const Task*> all_reduces;
  for (const Task& task : graph.tasks())
    if (task.is_collective()) all_reduces.push_back(&task);
  ASSERT_EQ(all_reduces.size(), 2u);
  EXPECT_DOUBLE_EQ(std::get<Collective>(all_reduces[0]->op).size.value(), 8e6);
  EXPECT_EQ(all_reduces[0]->deps, first);
  EXPECT_DOUBLE_EQ(std::get<Collective>(all_reduces[1]->op).size.value(), 4e6);
  EXPECT_EQ(all_reduces[1]->deps, last);
  // The chunk's last all-reduce (what the Ada-Grouper observation reads) is the lowest bucket's.
  ASSERT_TRUE(lowered.all_reduce[0].has_value());
  EXPECT_EQ(&graph.task(*lowered.all_reduce[0]), all_reduces[1]);
}

TEST(PipelineLowering, UnevenSplitConcatPieces) {
  // Micro-batch of 5 samples: stage 0 with 2 replicas holds [0, 3) and [3, 5); stage 1 with 3
  // replicas [0, 2), [2, 4), [4, 5). Overlaps: (0→0) 2, (0→1) 1, (1→1) 1, (1→2) 1 samples, each × layer
  // 1's 2 MB.
  PipelineWorkload workload = two_to_one(1, 5);
  workload.plan.stages[1].devices = {2, 3, 4};
  TaskGraph graph;
  for (int d = 0; d < 5; ++d) graph.add_device(fmt::format("gpu{}", d));
  const LoweredIteration lowered = lower_pipeline_iteration(graph, workload, *make_schedule("gpipe"), 0);
  std::map<std::pair<DeviceId, DeviceId>, double> sizes;
  for (TaskId id : lowered.activation_transfers[0][0]) {
    const auto& transfer = std::get<Transfer>(graph.task(id).op);
    sizes[{transfer.src, transfer.dst}] = transfer.size.value();
  }
  EXPECT_EQ(sizes, (std::map<std::pair<DeviceId, DeviceId>, double>{
                       {{0, 2}, 4e6}, {{0, 3}, 2e6}, {{1, 3}, 2e6}, {{1, 4}, 2e6}}));
  std::map<std::pair<DeviceId, DeviceId>, double> gradient_sizes;
  for (TaskId id : lowered.gradient_transfers[0][0]) {
    const auto& transfer = std::get<Transfer>(graph.task(id).op);
    gradient_sizes[{transfer.dst, transfer.src}] = transfer.size.value();
  }
  EXPECT_EQ(gradient_sizes, sizes);
}

// alloc − free per device over the whole graph.
std::vector<double> memory_balance(const TaskGraph& graph) {
  std::vector<double> balance(graph.devices().size(), 0.0);
  for (const Task& task : graph.tasks())
    for (DeviceId d : task.devices()) balance[d] += task.alloc_bytes.value() - task.free_bytes.value();
  return balance;
}

TEST(PipelineLowering, MemoryBalancesToTheModelStates) {
  // After every iteration only the weights, gradients and Adam state remain: fp32 Adam is 16 bytes
  // per parameter (4 + 4 + 8), i.e. 4 × parameter_bytes. Stage 0: 4 × 12 MB = 48 MB; stage 1:
  // 4 × (12 + 16) MB = 112 MB. Also with re-materialization, and over two iterations.
  for (const auto& schedule : {make_schedule("1f1b"), make_schedule("gpipe", {{"recompute", true}})}) {
    const TaskGraph graph = build_pipeline(two_to_one(3, 4), *schedule, kThreeDevices, 2);
    EXPECT_EQ(graph.iteration_count(), 2u);
    const auto balance = memory_balance(graph);
    EXPECT_DOUBLE_EQ(balance[0], 48e6);
    EXPECT_DOUBLE_EQ(balance[1], 48e6);
    EXPECT_DOUBLE_EQ(balance[2], 112e6);
  }
}

TEST(PipelineLowering, PipeDreamAsyncIsOneRunWithUpdatesAndStashedWeights) {
  // Two iterations of M = 2 under pipedream-async: one stream of 4 micro-batches. Computes: stage 0
  // 2 replicas × 4 × (fwd + bwd) = 16, stage 1 1 × 4 × 2 = 8; transfers 4 × (2 + 2) = 16. Weight
  // updates: stage 0 (2 replicas) after every 2nd backward, mb1 and mb3: an all-reduce of its 12 MB
  // of gradients (one bucket under DDP's 25 MB) each, 2, and an optimizer step per GPU, 2 × 2 = 4;
  // stage 1 (one replica) after every backward, 4 optimizer steps. Total 24 + 16 + 2 + 8 = 50.
  const auto async = make_schedule("pipedream-async");
  TaskGraph graph;
  for (const auto& name : kThreeDevices) graph.add_device(name);
  const LoweredIteration run = lower_pipeline_run(graph, two_to_one(2, 4), *async, 2);
  EXPECT_EQ(graph.tasks().size(), 50u);
  EXPECT_TRUE(graph.validate().empty());
  EXPECT_EQ(run.shape.micro_batches, 4);
  // Micro-batches 0, 1 are iteration 0; 2, 3 iteration 1.
  EXPECT_EQ(graph.iteration_count(), 2u);
  EXPECT_EQ(graph.task(run.forward[0][1][0]).iteration, 0u);
  EXPECT_EQ(graph.task(run.forward[0][2][0]).iteration, 1u);
  EXPECT_EQ(graph.task(run.backward[1][3][0]).iteration, 1u);
  // Each optimizer step of stage 0 waits for its micro-batch's all-reduce; the last micro-batch's
  // are the run's.
  std::map<std::string, std::vector<const Task*>> steps;
  for (const Task& task : graph.tasks())
    if (task.phase == Phase::optimizer) steps[task.label].push_back(&task);
  ASSERT_EQ(steps.size(), 4u);                        // "optimizer step mb0" … "mb3"
  EXPECT_EQ(steps["optimizer step mb0"].size(), 1u);  // stage 1's only
  EXPECT_EQ(steps["optimizer step mb1"].size(), 3u);  // stage 0's two replicas and stage 1
  ASSERT_EQ(run.optimizer[0].size(), 2u);
  ASSERT_TRUE(run.all_reduce[0].has_value());
  EXPECT_EQ(graph.task(run.optimizer[0][0]).label, "optimizer step mb3");
  const auto& deps = graph.task(run.optimizer[0][0]).deps;
  EXPECT_NE(std::find(deps.begin(), deps.end(), *run.all_reduce[0]), deps.end());
  EXPECT_EQ(graph.task(*run.all_reduce[0]).label, "all-reduce s0 mb3");
  // Memory: the model states (48 and 112 MB, as above) plus the stashed weights, fp32 (4 B a
  // parameter, = parameter_bytes) × stashed_weight_versions(p − i, r): stage 0 (2 in flight, 2
  // replicas) ⌈1/2⌉ + 1 = 2 × 12 MB, stage 1 1 × 28 MB.
  const auto balance = memory_balance(graph);
  EXPECT_DOUBLE_EQ(balance[0], 48e6 + 24e6);
  EXPECT_DOUBLE_EQ(balance[1], 48e6 + 24e6);
  EXPECT_DOUBLE_EQ(balance[2], 112e6 + 28e6);
  // build_pipeline lowers the same run; the per-iteration entry point refuses an asynchronous schedule.
  EXPECT_EQ(build_pipeline(two_to_one(2, 4), *async, kThreeDevices, 2).tasks().size(), 50u);
  TaskGraph other;
  for (const auto& name : kThreeDevices) other.add_device(name);
  EXPECT_THROW((void)lower_pipeline_iteration(other, two_to_one(2, 4), *async, 0), std::invalid_argument);
  EXPECT_THROW((void)lower_pipeline_run(other, two_to_one(2, 4), *make_schedule("1f1b"), 2), std::invalid_argument);
}

TEST(PipelineLowering, RecomputeKeepsOnlyTheChunkInputAndWaitsForTheGradient) {
  // GPipe with re-materialization, stage 1 (layers 2, 3; one replica, 4 samples): the forward keeps
  // layer 1's output, 2 MB × 4 = 8 MB; the recompute (a forward pass again, Phase::recompute) takes
  // the full (3 + 4) MB × 4 = 28 MB; the backward frees 36 MB. Stage 0 starts at layer 0: nothing kept.
  TaskGraph graph;
  for (const auto& name : kThreeDevices) graph.add_device(name);
  const LoweredIteration lowered =
      lower_pipeline_iteration(graph, two_to_one(2, 4), *make_schedule("gpipe", {{"recompute", true}}), 1);
  ASSERT_EQ(lowered.recompute.size(), 2u);
  const Task& forward = graph.task(lowered.forward[1][0][0]);
  const Task& recompute = graph.task(lowered.recompute[1][0][0]);
  const Task& backward = graph.task(lowered.backward[1][0][0]);
  EXPECT_DOUBLE_EQ(forward.alloc_bytes.value(), 8e6);
  EXPECT_EQ(recompute.phase, Phase::recompute);
  EXPECT_DOUBLE_EQ(recompute.alloc_bytes.value(), 28e6);
  EXPECT_DOUBLE_EQ(backward.free_bytes.value(), 36e6);
  EXPECT_DOUBLE_EQ(graph.task(lowered.forward[0][0][0]).alloc_bytes.value(), 0.0);  // iteration 1: no model states
  // The recompute immediately precedes its backward on the compute stream.
  EXPECT_EQ(lowered.recompute[1][0][0] + 1, lowered.backward[1][0][0]);
  EXPECT_EQ(forward.iteration, 1u);
  // Each replica's recompute on stage 0, like its backward, waits for the gradient pieces stage 1
  // sends it back: frameworks recompute inside the backward step, after the receive.
  const std::vector<TaskId>& gradients = lowered.gradient_transfers[0][0];
  ASSERT_FALSE(gradients.empty());
  std::size_t awaited = 0;
  for (std::size_t q = 0; q < lowered.backward[0][0].size(); ++q)
    for (TaskId transfer : gradients) {
      const auto waits = [&](TaskId id) { return std::ranges::count(graph.task(id).deps, transfer); };
      EXPECT_EQ(waits(lowered.recompute[0][0][q]), waits(lowered.backward[0][0][q])) << "replica " << q;
      awaited += static_cast<std::size_t>(waits(lowered.recompute[0][0][q]));
    }
  EXPECT_EQ(awaited, gradients.size());
}

TEST(PipelineLowering, ComputeStreamFollowsTheScheduleOrder) {
  TaskGraph graph;
  for (const auto& name : kThreeDevices) graph.add_device(name);
  const auto schedule = make_schedule("1f1b");
  const PipelineWorkload workload = two_to_one(4, 2);
  (void)lower_pipeline_iteration(graph, workload, *schedule, 0);
  std::vector<std::string> labels;
  for (const Task& task : graph.tasks())
    if (task.is_compute() && std::get<Compute>(task.op).device == 0) labels.push_back(task.label);
  // Stage 0 of 2 under 1F1B with M = 4: F0 F1 B0 F2 B1 F3 B2 B3, then the optimizer step.
  EXPECT_EQ(labels, (std::vector<std::string>{"fwd s0 mb0", "fwd s0 mb1", "bwd s0 mb0", "fwd s0 mb2", "bwd s0 mb1",
                                              "fwd s0 mb3", "bwd s0 mb2", "bwd s0 mb3", "optimizer step"}));
}

// p = 2, v = 2: virtual stages s0c0 = [0,1), s1c0 = [1,2), s0c1 = [2,3), s1c1 = [3,4), 2 micro-batches.
PipelineWorkload two_stages_two_chunks() {
  PipelineWorkload workload;
  workload.model = four_layers();
  workload.plan.stages = {PipelineStage{{LayerRange{0, 1}, LayerRange{2, 3}}, {0}},
                          PipelineStage{{LayerRange{1, 2}, LayerRange{3, 4}}, {1}}};
  workload.plan.micro_batches = 2;
  workload.plan.global_batch = 2;
  return workload;
}

TEST(PipelineLowering, InterleavedChainWrapsFromTheLastStageToTheFirst) {
  // Boundary 1 goes from device 1 back to device 0 with layer 1's 2 MB per sample.
  TaskGraph graph;
  graph.add_device("a");
  graph.add_device("b");
  const LoweredIteration lowered = lower_pipeline_iteration(
      graph, two_stages_two_chunks(), *make_schedule("interleaved", {{"chunks", std::int64_t{2}}}), 0);
  EXPECT_TRUE(graph.validate().empty());
  ASSERT_EQ(lowered.activation_transfers.size(), 3u);
  const Task& wrap = graph.task(lowered.activation_transfers[1][0].at(0));
  EXPECT_EQ(std::get<Transfer>(wrap.op).src, 1u);
  EXPECT_EQ(std::get<Transfer>(wrap.op).dst, 0u);
  EXPECT_DOUBLE_EQ(std::get<Transfer>(wrap.op).size.value(), 2e6);
  EXPECT_EQ(wrap.label, "act s1c0→s0c1 mb0");
  // 2 devices × 2 chunks × 2 micro-batches × 2 passes + 3 boundaries × 2 micro-batches × 2 directions + 2 optimizers.
  EXPECT_EQ(graph.tasks().size(), 16u + 12u + 2u);
}

// Megatron-Core's overlap_p2p_comm waits on its sends on the GPU stream, where the SC'21-era batched
// sends end with torch.cuda.synchronize(): every pipeline transfer says which (Transfer::host_synchronizes).
TEST(PipelineLowering, OverlappedInterleavedSendsDoNotSynchronizeTheHost) {
  for (const bool overlap : {false, true}) {
    TaskGraph graph;
    graph.add_device("a");
    graph.add_device("b");
    (void)lower_pipeline_iteration(
        graph, two_stages_two_chunks(),
        *make_schedule("interleaved", {{"chunks", std::int64_t{2}}, {"overlap_p2p", overlap}}), 0);
    int transfers = 0;
    for (const Task& task : graph.tasks())
      if (task.is_transfer()) {
        ++transfers;
        EXPECT_EQ(std::get<Transfer>(task.op).host_synchronizes, !overlap);
      }
    EXPECT_EQ(transfers, 12);  // 3 boundaries × 2 micro-batches × 2 directions
  }
}

TEST(PipelineLowering, RejectsPlansTheScheduleCannotRun) {
  TaskGraph graph;
  for (const auto& name : kThreeDevices) graph.add_device(name);
  EXPECT_THROW((void)lower_pipeline_iteration(graph, two_to_one(2, 4),
                                              *make_schedule("interleaved", {{"chunks", std::int64_t{2}}}), 0),
               InputError);
  PipelineWorkload bad = two_to_one(2, 4);
  bad.plan.stages[1].chunks[0].end = 3;  // the stages no longer cover the 4 layers
  EXPECT_FALSE(pipeline_problems(bad, *make_schedule("1f1b"), 3).empty());
  EXPECT_THROW((void)lower_pipeline_iteration(graph, bad, *make_schedule("1f1b"), 0), InputError);
  EXPECT_TRUE(pipeline_problems(two_to_one(2, 4), *make_schedule("1f1b"), 3).empty());
}

}  // namespace
}  // namespace dnnsim

namespace dnnsim {
namespace {

// Tensor parallelism t = 2 over a 2-block GPT-like model (hidden 64, 4 heads, sequence 16, vocabulary
// 128), 2 stages × 1 replica on 4 GPUs (stage 0 = GPUs 0–1, stage 1 = GPUs 2–3), M = 2 micro-batches
// of 1 sequence, 1F1B, full recomputation.
PipelineWorkload tiny_tensor_parallel_workload() {
  const LayerModel model = transformer_model(
      TransformerConfig{.name = "tiny", .layers = 2, .hidden = 64, .heads = 4, .seq = 16, .vocab = 128},
      ModelOptions{});
  PipelineWorkload workload;
  workload.tensor_parallel = TensorParallelOptions{.degree = 2, .recompute = Recompute::full};
  workload.transformer = transformer_shape(model);
  workload.model = shard_for_tensor_parallel(model, workload.tensor_parallel);
  // Layers: embedding, 2 × 7 block layers, final norm, head, cross_entropy = 18; block 0 + embedding
  // on stage 0.
  workload.plan.stages = {PipelineStage{{LayerRange{0, 8}}, {0}}, PipelineStage{{LayerRange{8, 18}}, {1}}};
  workload.plan.micro_batches = 2;
  workload.plan.global_batch = 2;
  return workload;
}

TaskGraph four_gpus() {
  TaskGraph graph;
  for (const char* name : {"g0", "g1", "g2", "g3"}) graph.add_device(name);
  return graph;
}

TEST(PipelineLowering, TensorParallelGroupsRunEveryStepPerRankWithTheirCollectives) {
  const PipelineWorkload workload = tiny_tensor_parallel_workload();
  TaskGraph graph = four_gpus();
  const LoweredIteration lowered = lower_pipeline_iteration(graph, workload, *make_schedule("1f1b"), 0);
  EXPECT_TRUE(graph.validate().empty());
  // Per stage and micro-batch: forward, recompute and backward, each one Compute per rank (2) and
  // one all-reduce over the pair (each stage holds one block, so every step has traffic): 2 stages ×
  // 2 micro-batches × 3 steps × (2 + 1) = 36. Transfers: 2 micro-batches × (act + grad) × 2 ranks = 8.
  // Optimizer steps: 4 GPUs. No data-parallel all-reduce (one replica). Total 48.
  std::map<std::string, int> kinds;
  double stage0_forward_bytes = 0;
  for (const Task& task : graph.tasks()) {
    if (const auto* c = std::get_if<Collective>(&task.op)) {
      kinds[std::string(collective_kind_name(c->kind))]++;
      EXPECT_EQ(c->group.size(), 2u);
      if (task.label == "tp all_reduce fwd s0 mb0") stage0_forward_bytes = c->size.value();
    } else if (const auto* t = std::get_if<Transfer>(&task.op)) {
      kinds["transfer"]++;
      EXPECT_EQ(t->size.value(), 16.0 * 64 * 2 / 2);                       // rank r sends s·h fp16 / t per sequence
      EXPECT_EQ(std::max(t->dst, t->src) - std::min(t->dst, t->src), 2u);  // rank r to rank r of the other group
    } else {
      kinds["compute"]++;
    }
  }
  EXPECT_EQ(kinds["all_reduce"], 12);
  EXPECT_EQ(kinds["transfer"], 8);
  EXPECT_EQ(kinds["compute"], 24 + 4);
  EXPECT_EQ(graph.tasks().size(), 48u);
  // Stage 0's forward: the embedding's all-reduce + block 0's two, of b·s·h·2 = 2,048 B each.
  EXPECT_DOUBLE_EQ(stage0_forward_bytes, 3 * 2048.0);
  EXPECT_EQ(lowered.forward[0][0].size(), 2u);  // [replica · ranks + rank]
}

// Megatron's full recomputation re-runs the transformer blocks only: stage 0 recomputes block 0
// (layers 1–7) without the embedding, stage 1 block 1 (layers 8–14) without the final norm, head and
// loss, whose activations its forward keeps beside the block's checkpoint, 2·s·b·h = 2·16·1·64 =
// 2,048 bytes (no sequence parallelism). Stage 0's recompute all-reduces block 0's two b·s·h·2 =
// 2,048-byte buffers, not the embedding's third.
TEST(PipelineLowering, FullRecomputationRerunsTheBlocksOnly) {
  const PipelineWorkload workload = tiny_tensor_parallel_workload();
  TaskGraph graph = four_gpus();
  (void)lower_pipeline_iteration(graph, workload, *make_schedule("1f1b"), 0);
  const auto forward_flops = [&](std::size_t begin, std::size_t end) {
    double total = 0;
    for (std::size_t l = begin; l < end; ++l) total += workload.model.layers[l].forward_flops.value();
    return total;
  };
  const auto task = [&](const std::string& label, bool compute) -> const Task& {
    for (const Task& t : graph.tasks())
      if (t.label == label && std::holds_alternative<Compute>(t.op) == compute) return t;
    throw std::runtime_error("no task " + label);
  };
  EXPECT_DOUBLE_EQ(std::get<Compute>(task("recompute s0 mb0", true).op).flops.value(), forward_flops(1, 8));
  EXPECT_DOUBLE_EQ(std::get<Compute>(task("recompute s1 mb0", true).op).flops.value(), forward_flops(8, 15));
  EXPECT_DOUBLE_EQ(std::get<Compute>(task("fwd s1 mb0", true).op).flops.value(), forward_flops(8, 18));
  EXPECT_DOUBLE_EQ(std::get<Collective>(task("tp all_reduce recompute s0 mb0", false).op).size.value(), 2 * 2048.0);
  double outside = 0;
  for (std::size_t l = 15; l < 18; ++l) outside += workload.model.layers[l].activation_bytes.value();
  EXPECT_GT(outside, 0.0);
  EXPECT_DOUBLE_EQ(task("fwd s1 mb1", true).alloc_bytes.value(), 2048.0 + outside);
}

// The bytes the first compute task labelled `label` moves.
double compute_bytes(const TaskGraph& graph, const std::string& label) {
  for (const Task& t : graph.tasks())
    if (t.label == label && std::holds_alternative<Compute>(t.op))
      return std::get<Compute>(t.op).bytes_accessed.value();
  throw std::runtime_error("no task " + label);
}

// Gradient accumulation: under 1F1B with M = 2 each stage runs B0 then B1, and B1 adds its weight
// gradients to B0's: 3 × 4 bytes (fp32 gradients: the workload's default precision) per parameter of
// the stage's shard more than B0 moves (without per-GPU layer times the bytes join the step's
// roofline).
TEST(PipelineLowering, EveryBackwardButTheFirstAccumulatesItsGradients) {
  const PipelineWorkload workload = tiny_tensor_parallel_workload();
  ASSERT_EQ(workload.precision, Precision::fp32);
  TaskGraph graph = four_gpus();
  (void)lower_pipeline_iteration(graph, workload, *make_schedule("1f1b"), 0);
  const auto bytes = [&](const std::string& label) { return compute_bytes(graph, label); };
  for (std::size_t s = 0; s < 2; ++s) {
    const LayerRange layers = workload.plan.stages[s].chunks.front();
    double parameters = 0;
    for (std::size_t l = layers.begin; l < layers.end; ++l)
      parameters += workload.model.layers[l].parameter_bytes.value() / kProfileBytesPerParameter;
    EXPECT_GT(parameters, 0.0);
    EXPECT_DOUBLE_EQ(bytes(fmt::format("bwd s{} mb1", s)) - bytes(fmt::format("bwd s{} mb0", s)), 12.0 * parameters);
  }
}

// Under FSDP Megatron-FSDP adds every micro-batch's reduce-scattered shard on the reduce-scatter's
// stream (step_collectives): the tiny model without tensor parallelism on one stage of 4 replicas,
// FSDP (so the LLM recipe's 2-byte BF16 gradients, PrecisionRecipe::bytes_per_parameter), M = 2
// micro-batches of 1F1B. Both backwards move the same bytes (nothing added on the compute stream), and
// after each one's reduce-scatter, on its stream, an add of 1/4 of the P parameters: 3 × 2 bytes × P / 4
// = 1.5·P bytes (without per-GPU layer times its bytes alone), the first micro-batch's too.
TEST(PipelineLowering, FsdpAddsTheReduceScatteredShardOnItsStream) {
  const LayerModel model = transformer_model(
      TransformerConfig{.name = "tiny", .layers = 2, .hidden = 64, .heads = 4, .seq = 16, .vocab = 128},
      ModelOptions{});
  PipelineWorkload workload;
  workload.transformer = transformer_shape(model);
  workload.llm.fsdp = true;
  workload.model = shard_for_llm(model, workload.tensor_parallel, workload.llm, 0);
  workload.plan.stages = {PipelineStage{{LayerRange{0, workload.model.layers.size()}}, {0, 1, 2, 3}}};
  workload.plan.micro_batches = 2;
  workload.plan.global_batch = 8;
  ASSERT_DOUBLE_EQ(workload.bytes_per_parameter().gradients, 2.0);
  TaskGraph graph = four_gpus();
  (void)lower_pipeline_iteration(graph, workload, *make_schedule("1f1b"), 0);
  const auto bytes = [&](const std::string& label) { return compute_bytes(graph, label); };
  double parameters = 0;
  for (const Layer& layer : workload.model.layers)
    parameters += layer.parameter_bytes.value() / kProfileBytesPerParameter;
  EXPECT_GT(parameters, 0.0);
  EXPECT_DOUBLE_EQ(bytes("bwd s0 mb1"), bytes("bwd s0 mb0"));
  for (const std::string micro_batch : {"mb0", "mb1"}) {
    int adds = 0;
    for (const Task& task : graph.tasks()) {
      if (task.label != "fsdp accumulate bwd s0 " + micro_batch) continue;
      ++adds;
      EXPECT_DOUBLE_EQ(std::get<Compute>(task.op).bytes_accessed.value(), 1.5 * parameters);
      EXPECT_EQ(std::get<Compute>(task.op).flops.value(), 0.0);
      ASSERT_EQ(task.deps.size(), 1u);
      const Task& scatter = graph.task(task.deps.front());
      EXPECT_EQ(scatter.label, "fsdp reduce-scatter bwd s0 " + micro_batch);
      EXPECT_EQ(scatter.stream, task.stream);
    }
    EXPECT_EQ(adds, 4) << micro_batch;  // one per replica
  }
}

// The same workload with ranks 1 mirroring ranks 0 (tensor_parallel_fidelity: group): of the 48
// tasks above, rank 1's go — its 12 computes, 4 transfers and 2 optimizer steps — and the 12
// all-reduces stay, over both GPUs, marked mirrored: 12 + 4 + 12 + 2 = 30, all on g0 and g2.
TEST(PipelineLowering, MirroredRanksLowerRankZeroOnlyWithTheGroupsCollectives) {
  PipelineWorkload workload = tiny_tensor_parallel_workload();
  workload.mirror_ranks = true;
  TaskGraph graph = four_gpus();
  const LoweredIteration lowered = lower_pipeline_iteration(graph, workload, *make_schedule("1f1b"), 0);
  EXPECT_TRUE(graph.validate().empty());
  std::map<std::string, int> kinds;
  for (const Task& task : graph.tasks()) {
    if (const auto* c = std::get_if<Collective>(&task.op)) {
      kinds["all_reduce"] += c->kind == CollectiveKind::all_reduce ? 1 : 0;
      EXPECT_TRUE(c->mirrored);
      EXPECT_EQ(c->group.front() % 2, 0u);
      EXPECT_EQ(c->group.size(), 2u);
    } else if (const auto* t = std::get_if<Transfer>(&task.op)) {
      kinds["transfer"]++;
      EXPECT_EQ(t->src % 2, 0u);
      EXPECT_EQ(t->dst % 2, 0u);
    } else {
      kinds["compute"]++;
      EXPECT_EQ(std::get<Compute>(task.op).device % 2, 0u);
    }
  }
  EXPECT_EQ(kinds["all_reduce"], 12);
  EXPECT_EQ(kinds["transfer"], 4);
  EXPECT_EQ(kinds["compute"], 12 + 2);
  EXPECT_EQ(graph.tasks().size(), 30u);
  ASSERT_EQ(lowered.forward[1][0].size(), 1u);  // [replica · 1 + 0]
  // Stage 1's first forward waits for the activation g0 sent to g2.
  const Task& forward = graph.task(lowered.forward[1][0][0]);
  EXPECT_NE(std::find(forward.deps.begin(), forward.deps.end(), lowered.activation_transfers[0][0].at(0)),
            forward.deps.end());
}

}  // namespace
}  // namespace dnnsim
