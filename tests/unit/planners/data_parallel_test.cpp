// The data-parallel lowering (DDP-style buckets), checked on its structure without an engine.
#include "planners/data_parallel/data_parallel.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace dnnsim {
namespace {

// Four layers of 10, 0, 30 and 20 MB of parameters; 1 MB of activations per sample each.
LayerModel four_layers() {
  LayerModel model;
  model.name = "four";
  const double mb[] = {10, 0, 30, 20};
  for (int l = 0; l < 4; ++l) {
    Layer layer;
    layer.name = "l" + std::to_string(l);
    layer.forward_flops = Flop(1e9);
    layer.backward_flops = Flop(2e9);
    layer.parameter_bytes = Bytes(mb[l] * 1e6);
    layer.activation_bytes = Bytes(1e6);
    model.layers.push_back(layer);
  }
  return model;
}

TEST(DataParallel, BucketsFillInBackwardOrder) {
  // Backward order is l3, l2, l1, l0. With 25 MB buckets: l3 (20) + l2 (30) = 50 ≥ 25 closes the
  // first; l1 (0) + l0 (10) = 10 is what is left. With 15 MB: l3 (20); l2 (30); l1 + l0 (10).
  EXPECT_EQ(gradient_buckets(four_layers(), Bytes(25e6)), (std::vector<LayerRange>{{2, 4}, {0, 2}}));
  EXPECT_EQ(gradient_buckets(four_layers(), Bytes(15e6)), (std::vector<LayerRange>{{3, 4}, {2, 3}, {0, 2}}));
  // Layers [1, 3) alone (a pipeline stage's): l2 (30) closes one; l1 (0) is left over.
  EXPECT_EQ(gradient_buckets(four_layers(), Bytes(25e6), LayerRange{1, 3}), (std::vector<LayerRange>{{2, 3}, {1, 2}}));
}

TEST(DataParallel, GraphShapePerIteration) {
  // 3 GPUs, 2 iterations, 25 MB buckets (2 buckets): per iteration and GPU 4 forward + 4 backward +
  // 1 optimizer task, plus one all-reduce per bucket over all GPUs: 2 × (3 × 9 + 2) = 58 tasks.
  DataParallelConfig config;
  config.model = four_layers();
  config.global_batch = 7;  // split 3, 2, 2
  config.bucket_size = Bytes(25e6);
  const TaskGraph graph = build_data_parallel(config, {"a", "b", "c"}, 2);
  ASSERT_EQ(graph.tasks().size(), 58u);
  EXPECT_TRUE(graph.validate().empty());
  EXPECT_EQ(graph.iteration_count(), 2u);

  std::vector<const Task*> all_reduces;
  for (const Task& t : graph.tasks())
    if (t.is_collective() && t.iteration == 0) all_reduces.push_back(&t);
  ASSERT_EQ(all_reduces.size(), 2u);
  // Bucket {l3, l2} holds 50 MB and waits for l2's backward on every GPU (overlap on).
  const auto& first = std::get<Collective>(all_reduces[0]->op);
  EXPECT_DOUBLE_EQ(first.size.value(), 50e6);
  EXPECT_EQ(first.group.size(), 3u);
  ASSERT_EQ(all_reduces[0]->deps.size(), 3u);
  for (TaskId dep : all_reduces[0]->deps) EXPECT_EQ(graph.task(dep).label, "bwd l2");

  // GPU a has 3 samples: its first forward task takes activations (3 × 1 MB) plus weights, grads and
  // Adam state: 60 MB × (1 + 1 + 2) = 240 MB.
  const Task& first_forward = graph.task(0);
  EXPECT_EQ(first_forward.label, "fwd l0");
  EXPECT_DOUBLE_EQ(first_forward.alloc_bytes.value(), 3e6 + 240e6);
  EXPECT_DOUBLE_EQ(std::get<Compute>(first_forward.op).flops.value(), 3e9);
}

TEST(DataParallel, WithoutOverlapEveryBucketWaitsForTheWholeBackward) {
  DataParallelConfig config;
  config.model = four_layers();
  config.global_batch = 2;
  config.bucket_size = Bytes(15e6);
  config.overlap = false;
  const TaskGraph graph = build_data_parallel(config, {"a", "b"}, 1);
  for (const Task& t : graph.tasks()) {
    if (!t.is_collective()) continue;
    for (TaskId dep : t.deps) EXPECT_EQ(graph.task(dep).label, "bwd l0");
  }
}

TEST(DataParallel, PrecisionSetsStateAndGradientSizes) {
  // 60 MB of 4-byte parameters = 15 M parameters. Mixed-precision SGD holds 2 + 2 + 4 = 8 bytes per
  // parameter (ZeRO's accounting): 120 MB; its fp16 gradients halve the all-reduce of the first
  // bucket (50 MB of fp32 weights → 25 MB).
  DataParallelConfig config;
  config.model = four_layers();
  config.global_batch = 2;
  config.bucket_size = Bytes(25e6);
  config.precision = Precision::mixed;
  config.optimizer = Optimizer::sgd;
  const TaskGraph graph = build_data_parallel(config, {"a", "b"}, 1);
  EXPECT_DOUBLE_EQ(graph.task(0).alloc_bytes.value(), 1e6 + 120e6);
  for (const Task& t : graph.tasks())
    if (t.is_collective()) {
      EXPECT_DOUBLE_EQ(std::get<Collective>(t.op).size.value(), 25e6);
      break;
    }
}

TEST(DataParallel, OneGpuHasNoCollective) {
  DataParallelConfig config;
  config.model = four_layers();
  const TaskGraph graph = build_data_parallel(config, {"solo"}, 1);
  EXPECT_TRUE(
      std::none_of(graph.tasks().begin(), graph.tasks().end(), [](const Task& t) { return t.is_collective(); }));
  EXPECT_EQ(graph.tasks().size(), 9u);
}

}  // namespace
}  // namespace dnnsim
