// Megatron tensor parallelism of a zoo transformer (models/dnn/tensor_parallel.hpp). The shapes are
// rows of Narayanan et al. SC'21 Table 1 (docs/research/megatron-targets.md): 1.7B (24 heads,
// hidden 2,304, 24 layers) and 18.4B (48 heads, hidden 6,144, 40 layers), sequence 2,048, vocabulary
// 51,200. Expected values are Korthikanti et al.'s (arXiv:2205.05198) Table 2 and Megatron-LM's
// (arXiv:1909.08053 §3) collective counts, computed by hand in the comments.
#include "models/dnn/tensor_parallel.hpp"

#include <gtest/gtest.h>

#include "models/dnn/zoo.hpp"

namespace dnnsim {
namespace {

LayerModel table1_row(int layers, int hidden, int heads) {
  return transformer_model(
      TransformerConfig{.name = "gpt", .layers = layers, .hidden = hidden, .heads = heads, .seq = 2048, .vocab = 51200},
      ModelOptions{});
}

TEST(TensorParallel, ShapeIsReadBackFromTheZooLayers) {
  const auto shape = transformer_shape(table1_row(24, 2304, 24));
  ASSERT_TRUE(shape.has_value());
  EXPECT_EQ(shape->blocks, 24);
  EXPECT_EQ(shape->hidden, 2304);
  EXPECT_EQ(shape->heads, 24);
  EXPECT_EQ(shape->seq, 2048);
}

// Per block forward without SP: 2 all-reduces of b·s·h fp16 = 2 × 2·2048·6144·2 B (b = 2)
// = 2 × 50,331,648 B = 100,663,296 B. With SP: all-gather and reduce-scatter of the same buffers.
TEST(TensorParallel, BlockCollectivesAreTwoAllReducesOfBsh) {
  const TransformerShape shape{40, 6144, 48, 2048};
  const TensorParallelTraffic tp = block_traffic(shape, 2, {.degree = 8});
  EXPECT_DOUBLE_EQ(tp.all_reduce.value(), 100663296.0);
  EXPECT_DOUBLE_EQ(tp.all_gather.value(), 0.0);
  const TensorParallelTraffic sp = block_traffic(shape, 2, {.degree = 8, .sequence_parallel = true});
  EXPECT_DOUBLE_EQ(sp.all_reduce.value(), 0.0);
  EXPECT_DOUBLE_EQ(sp.all_gather.value(), 100663296.0);
  EXPECT_DOUBLE_EQ(sp.reduce_scatter.value(), 100663296.0);
  EXPECT_DOUBLE_EQ(block_traffic(shape, 2, {.degree = 1}).all_reduce.value(), 0.0);  // no group, no traffic
}

// The whole model's forward: 40 blocks × 2 all-reduces + 1 for the vocabulary-parallel embedding =
// 81 × b·s·h·2 B; backward 80 × (no embedding term: its input needs no gradient).
TEST(TensorParallel, ModelForwardAndBackwardCounts) {
  const LayerModel model = table1_row(40, 6144, 48);
  const auto shape = *transformer_shape(model);
  const double bsh = 1.0 * 2048 * 6144 * 2;
  const TensorParallelOptions options{.degree = 8};
  EXPECT_DOUBLE_EQ(range_traffic(model, shape, 0, model.layers.size(), 1, options, false).all_reduce.value(), 81 * bsh);
  EXPECT_DOUBLE_EQ(range_traffic(model, shape, 0, model.layers.size(), 1, options, true).all_reduce.value(), 80 * bsh);
}

// Korthikanti et al. Table 2 for s = 2048, b = 1, h = 6144, a = 48, t = 8: sbh = 12,582,912 and
// 5as/h = 80, so 5as/(ht) = 10.
//   no parallelism          sbh·(34 + 80)        = 1,434,451,968
//   TP                      sbh·(10 + 3 + 10)    =   289,406,976
//   TP + SP                 sbh·(4.25 + 10)      =   179,306,496
//   TP + selective          sbh·13               =   163,577,856
//   TP + SP + selective     sbh·4.25             =    53,477,376
//   full                    sbh·2                =    25,165,824  (SP: /8 = 3,145,728)
TEST(TensorParallel, ActivationMemoryFollowsKorthikantiTable2) {
  const TransformerShape shape{40, 6144, 48, 2048};
  const auto bytes = [&](TensorParallelOptions o) { return layer_activation_bytes(shape, 1, o).value(); };
  EXPECT_DOUBLE_EQ(bytes({.degree = 1}), 1434451968.0);
  EXPECT_DOUBLE_EQ(bytes({.degree = 8}), 289406976.0);
  EXPECT_DOUBLE_EQ(bytes({.degree = 8, .sequence_parallel = true}), 179306496.0);
  EXPECT_DOUBLE_EQ(bytes({.degree = 8, .recompute = Recompute::selective}), 163577856.0);
  EXPECT_DOUBLE_EQ(bytes({.degree = 8, .sequence_parallel = true, .recompute = Recompute::selective}), 53477376.0);
  EXPECT_DOUBLE_EQ(bytes({.degree = 8, .recompute = Recompute::full}), 25165824.0);
  EXPECT_DOUBLE_EQ(bytes({.degree = 8, .sequence_parallel = true, .recompute = Recompute::full}), 3145728.0);
}

// A shard holds 1/t of the GEMM/attention/embedding FLOPs and weights; the norms' weights stay
// whole, so the shard's weights are within the norms' share (4·h per block) of 1/t. Every block's
// layers keep exactly Korthikanti's per-sequence bytes.
TEST(TensorParallel, ShardDividesWorkAndWeights) {
  const LayerModel model = table1_row(24, 2304, 24);
  const LayerModel shard = shard_for_tensor_parallel(model, {.degree = 4});
  double flops = 0, sharded_flops = 0;
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    if (model.layers[l].kind != LayerKind::matmul && model.layers[l].kind != LayerKind::attention) continue;
    flops += model.layers[l].forward_flops.value();
    sharded_flops += shard.layers[l].forward_flops.value();
  }
  EXPECT_NEAR(sharded_flops, flops / 4, flops * 1e-12);
  const double norms = 24 * 4.0 * 2304 * 4 + 2.0 * 2304 * 4;  // 2 LayerNorms (scale + shift) per block + final, fp32
  EXPECT_NEAR(shard.parameter_bytes().value(), (model.parameter_bytes().value() - norms) / 4 + norms, 1.0);
  double block0 = 0;
  for (const Layer& layer : shard.layers)
    if (layer.name.rfind("block0.", 0) == 0) block0 += layer.activation_bytes.value();
  EXPECT_NEAR(block0, layer_activation_bytes(*transformer_shape(model), 1, {.degree = 4}).value(), 1.0);
  // The vocabulary-parallel loss (the last layer) moves a quarter of its traffic each way, the
  // backward's own count (not twice the forward's) included, and keeps a quarter of the softmax.
  const Layer& loss = shard.layers.back();
  EXPECT_EQ(loss.kind, LayerKind::loss);
  EXPECT_DOUBLE_EQ(loss.forward_bytes.value(), model.layers.back().forward_bytes.value() / 4);
  EXPECT_DOUBLE_EQ(loss.backward_bytes.value(), model.layers.back().backward_bytes.value() / 4);
  EXPECT_DOUBLE_EQ(loss.activation_bytes.value(), model.layers.back().activation_bytes.value() / 4);
  // The head keeps its input, s·h: whole on every rank, split by t with sequence parallelism.
  const std::size_t head = model.layers.size() - 2;
  EXPECT_DOUBLE_EQ(shard.layers[head].activation_bytes.value(), 2048.0 * 2304 * 2);
  const LayerModel sequence_parallel = shard_for_tensor_parallel(model, {.degree = 4, .sequence_parallel = true});
  EXPECT_DOUBLE_EQ(sequence_parallel.layers[head].activation_bytes.value(), 2048.0 * 2304 * 2 / 4);
}

// Selective recomputation re-runs the attention core's forward before its backward (Korthikanti et
// al. §5): the core's backward pays the forward's FLOPs and memory traffic once more — a sharded core's
// backward is 2× its forward's FLOPs + 1× (recompute), and its traffic 2× + 1× the forward's — while
// every other layer is as without recomputation.
TEST(TensorParallel, SelectiveRecomputationRepeatsTheCoresForwardWorkAndTraffic) {
  const LayerModel model = table1_row(24, 2304, 24);
  const LayerModel plain = shard_for_tensor_parallel(model, {.degree = 4, .sequence_parallel = true});
  const LayerModel selective =
      shard_for_tensor_parallel(model, {.degree = 4, .sequence_parallel = true, .recompute = Recompute::selective});
  int cores = 0;
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    const Layer& before = plain.layers[l];
    const Layer& after = selective.layers[l];
    if (before.kind != LayerKind::attention) {
      EXPECT_EQ(after.backward_flops.value(), before.backward_flops.value()) << before.name;
      EXPECT_EQ(after.backward_traffic().value(), before.backward_traffic().value()) << before.name;
      continue;
    }
    ++cores;
    EXPECT_DOUBLE_EQ(after.backward_flops.value(), before.backward_flops.value() + before.forward_flops.value());
    EXPECT_DOUBLE_EQ(after.backward_traffic().value(),
                     before.backward_traffic().value() + before.forward_traffic().value());
    EXPECT_DOUBLE_EQ(after.forward_traffic().value(), before.forward_traffic().value());
  }
  EXPECT_EQ(cores, 24);
}

// The 1.7B row's layers: embedding (0), 24 blocks of 7 (1 … 168), final norm (169), head (170),
// cross_entropy (171). Full recomputation re-runs the blocks' span of a range only.
TEST(TensorParallel, RecomputationSpansTheBlocksOfARange) {
  const LayerModel model = table1_row(24, 2304, 24);
  ASSERT_EQ(model.layers.size(), 172u);
  using Span = std::pair<std::size_t, std::size_t>;
  EXPECT_EQ(checkpointed_span(model, 0, 172), (Span{1, 169}));
  EXPECT_EQ(checkpointed_span(model, 0, 8), (Span{1, 8}));          // the first stage of 24: block 0
  EXPECT_EQ(checkpointed_span(model, 162, 172), (Span{162, 169}));  // the last: block 23
  EXPECT_EQ(checkpointed_span(model, 169, 172), (Span{172, 172}));  // no block: nothing re-run
  EXPECT_EQ(checkpointed_span(model, 0, 1), (Span{1, 1}));
}

TEST(TensorParallel, DegreeMustDivideHeadsAndHidden) {
  const LayerModel model = table1_row(24, 2304, 24);
  EXPECT_TRUE(tensor_parallel_problems(model, 8).empty());  // 24 heads, 2304 hidden: both multiples of 8
  const auto problems = tensor_parallel_problems(model, 16);
  ASSERT_EQ(problems.size(), 1U);  // 2304 = 16 × 144 divides; 24 heads do not
  EXPECT_NE(problems[0].find("24 attention heads"), std::string::npos);
  EXPECT_EQ(tensor_parallel_problems(model, 5).size(), 2U);
}

}  // namespace
}  // namespace dnnsim
