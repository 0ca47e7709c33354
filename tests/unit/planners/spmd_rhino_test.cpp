// The Rhino-like planner (planners/spmd/rhino_*.hpp) re-discovers the expert strategies (Rhino,
// arXiv 2302.08141, §6): Megatron's column/row pattern on a transformer block at large hidden size,
// data parallelism on a convolutional network, and a balanced pipeline cut of a graph with branches.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/dnn/zoo.hpp"
#include "models/spmd/graph_zoo.hpp"
#include "planners/spmd/rhino_graph.hpp"
#include "planners/spmd/rhino_search.hpp"
#include "planners/spmd/rhino_stages.hpp"
#include "planners/spmd/spmd_cost.hpp"
#include "planners/spmd/spmd_lowering.hpp"
#include "tests/support/spmd_fixtures.hpp"

namespace dnnsim {
namespace {

using testing::chosen;
using testing::cluster_of;
using testing::op_named;
using testing::plan_with;

// One GPT block of hidden h = 8192 (64 heads), 2 samples of 64 tokens: rows m = 128, on 8 devices of
// 10 TFLOP/s joined at 10 GB/s.
//  - Data parallelism all-reduces the block's 12h² weights' gradients: 2 × 12 × 8192² × 4 B / 10 GB/s
//    ≈ 0.64 s.
//  - Megatron's pattern (QKV and fc1 column-split, the attention's output projection and fc2 row-split)
//    reduces one m × h activation per projection pair: 128 × 8192 × 4 B = 4.2 MB, all-reduced in
//    2 × 0.42 ms forward (plus the same backward), and leaves 1/8 of the 24·m·h² FLOPs per device.
//  - Replicating the output projection instead (gathering the heads' context, 0.42 ms) computes its
//    2·m·h² = 17 GFLOP × 3 (forward and backward) on every device: 5.2 ms against 0.64 ms split.
// So every weight is split, the fused QKV weight by Rhino's strided split (each device the same heads
// of Q, K and V), and the only collectives are the two partial sums' conversions: one per MLP, one
// per attention. `fast` and `thorough` agree on it.
TEST(RhinoPlanner, GptBlockAtLargeHiddenIsMegatronsColumnRowPattern) {
  TransformerConfig config{.name = "gpt-block", .layers = 1, .hidden = 8192, .heads = 64, .seq = 64};
  const OpGraph g = build_op_graph(transformer_model(config, {}), 2, Dtype::fp32, {});
  const SpmdCluster c = cluster_of(std::vector<double>(8, 10e12));
  for (const char* level : {"fast", "thorough"}) {
    SCOPED_TRACE(level);
    const SpmdPlan p = plan_with("rhino", g, c, {{"level", level}});
    ASSERT_TRUE(p.feasible);
    ASSERT_FALSE(p.pipeline.has_value());
    const std::string program = p.program.describe(g);
    EXPECT_EQ(chosen(g, p.program, "block0.attn.qkv.weight").rule.output, Layout::split_strided) << program;
    EXPECT_EQ(chosen(g, p.program, "block0.attn.core").rule.output, Layout::split_columns) << program;
    EXPECT_EQ(chosen(g, p.program, "block0.attn.out.weight").rule.output, Layout::split_rows) << program;
    EXPECT_EQ(chosen(g, p.program, "block0.attn.out").rule.output, Layout::partial) << program;
    EXPECT_EQ(chosen(g, p.program, "block0.mlp.fc1.weight").rule.output, Layout::split_columns) << program;
    EXPECT_EQ(chosen(g, p.program, "block0.mlp.fc2.weight").rule.output, Layout::split_rows) << program;
    EXPECT_EQ(chosen(g, p.program, "block0.mlp.fc2").rule.output, Layout::partial) << program;
    // One collective per MLP (fc2's partial sum) and one per attention; no gradient all-reduce.
    EXPECT_EQ(p.program.collective_count(), 2u) << program;
  }
}

// VGG-19 of the zoo at 224 pixels, 256 samples on 8 devices at 10 TFLOP/s, 10 GB/s. Its convolutions'
// activations dwarf their weights: the last one, conv5_4, outputs 256 × 14² rows × 512 channels × 4 B
// = 103 MB against 512 × 4608 × 4 B = 9.4 MB of weights (the first: 3.3 GB against 7 KB). Splitting
// samples moves nothing forward and all-reduces the weights' gradients once (2 × 9.4 MB); any other
// split converts activations of 100 MB or more. So every convolution is data parallel: its A operand
// split by rows, its weights replicated. (The classifier's fc6, 25088 × 4096 × 4 B = 411 MB of weights
// against 256 × 4096 × 4 B = 4.2 MB of output, is model parallel: Krizhevsky's "one weird trick",
// not asserted here.)
TEST(RhinoPlanner, ConvolutionalNetworkIsDataParallel) {
  const OpGraph g = build_op_graph(builtin_models().at("vgg19").value({}), 256, Dtype::fp32, {});
  const SpmdCluster c = cluster_of(std::vector<double>(8, 10e12));
  for (const char* level : {"fast", "thorough"}) {
    SCOPED_TRACE(level);
    const SpmdPlan p = plan_with("rhino", g, c, {{"level", level}});
    ASSERT_FALSE(p.pipeline.has_value());
    const std::string program = p.program.describe(g);
    int convolutions = 0;
    for (OpId id = 0; id < g.size(); ++id) {
      const SpmdOp& op = g.op(id);
      if (op.kind != OpKind::matmul || op.name.rfind("conv", 0) != 0) continue;
      ++convolutions;
      SCOPED_TRACE(op.name);
      EXPECT_EQ(p.program.ops()[id].rule.output, Layout::split_rows) << program;
      EXPECT_EQ(p.program.ops()[op.inputs[1]].rule.output, Layout::replicated) << program;
    }
    EXPECT_EQ(convolutions, 16);
  }
}

// The GPT block's 12 × 8192² weights are 3.2 GB; with Adam, 4× that is 12.9 GB of model state, 1.6 GB
// per device when all 8 share every weight. A limit of 1 GB per device admits no proposal: an
// infeasible plan whose reason gives the smallest need.
TEST(RhinoPlanner, MemoryLimitBelowEveryProposalIsAnInfeasiblePlan) {
  TransformerConfig config{.name = "gpt-block", .layers = 1, .hidden = 8192, .heads = 64, .seq = 64};
  const OpGraph g = build_op_graph(transformer_model(config, {}), 2, Dtype::fp32, {});
  const SpmdPlan p = plan_with("rhino", g, cluster_of(std::vector<double>(8, 10e12)), {{"memory_limit", 1e9}});
  EXPECT_FALSE(p.feasible);
  EXPECT_NE(p.reason.find("no proposal fits the memory limit of 1 GB per GPU"), std::string::npos) << p.reason;
  const SpmdPlan fits = plan_with("rhino", g, cluster_of(std::vector<double>(8, 10e12)), {{"memory_limit", 2e9}});
  EXPECT_TRUE(fits.feasible);
}

// A transformer MLP (h = 1024, 65,536 token rows) on 8 devices of 10 TFLOP/s, collectives α = 10 µs
// plus bytes / 10 GB/s (an all-reduce moving 2 bytes per byte, an all-gather or reduce-scatter 1).
// Its weights are 2 × 1024 × 4096 × 4 B = 33.5 MB, 134 MB of model state replicated. Unpriced, data
// parallelism is the optimum: its two gradient all-reduces take 2 × (α + 2 × 16.8 MB / 10 GB/s) =
// 6.7 ms where any feature split converts a 65,536 × 1024 × 4 B = 268 MB activation (≥ 27 ms each
// way). Memory at the end of the forward pass (what the lowering allocates): the outputs kept for the
// backward pass, split by rows 8 ways — x (the first operator, 65,536 × 1024), h and gelu (× 4096), y
// and norm (× 1024): 65,536 × 1024 × 11 × 4 B / 8 = 369.1 MB — plus the model state, 134.2 MB
// replicated (503.3 MB), 75.5 MB with one weight split (444.6 MB) or 16.8 MB with both (385.9 MB).
// A limit of 400 MB, which the model state alone (134 MB) would meet, thus forces every weight to be
// split 8 ways; the cheapest way left keeps the matmuls data parallel and gathers each weight for them
// (ZeRO-3's, FSDP's layout): an all-gather forward and its mirror, a reduce-scatter, backward, α + B / 10 GB/s
// each (B = 16,777,216 B), on the compute stream, in place of the all-reduces, α + 2B / 10 GB/s each,
// on the comm stream. Data parallelism hides w2's all-reduce behind h's backward (13.7 ms of
// computation) and exposes only w1's, after the last backward; so the split weights cost
// 4 (α + B/β) − (α + 2B/β) = 6.7509 − 3.3654 = 3.3854 ms more, the computation unchanged.
TEST(RhinoPlanner, MemoryLimitShardsTheWeightsOfDataParallelism) {
  const OpGraph g = testing::mlp(65536, 1024);
  const SpmdCluster c = cluster_of(std::vector<double>(8, 10e12));
  const SpmdPlan dp = plan_with("dp-ev", g, c);
  const SpmdPlan free = plan_with("rhino", g, c, {{"level", "fast"}});
  EXPECT_DOUBLE_EQ(free.predicted_iteration_s, dp.predicted_iteration_s) << free.program.describe(g);
  EXPECT_EQ(chosen(g, free.program, "w1").rule.output, Layout::replicated);
  for (const char* level : {"fast", "thorough"}) {
    SCOPED_TRACE(level);
    const SpmdPlan p = plan_with("rhino", g, c, {{"level", level}, {"memory_limit", 400e6}});
    ASSERT_TRUE(p.feasible) << p.reason;
    ASSERT_FALSE(p.pipeline.has_value());
    const std::string program = p.program.describe(g);
    const double kept = 65536.0 * 1024 * 11 * 4 / 8, state = 2 * 1024.0 * 4096 * 4 * 4 / 8;
    for (double memory : device_memory(g, p.program, p.ratios))
      EXPECT_NEAR(memory, kept + state, 4) << program;  // and the loss, 4 B
    for (const char* weight : {"w1", "w2"}) EXPECT_TRUE(is_split(chosen(g, p.program, weight).rule.output)) << program;
    for (const char* product : {"h", "y"})
      EXPECT_EQ(chosen(g, p.program, product).rule.output, Layout::split_rows) << program;
    const double bytes = 1024.0 * 4096 * 4, alpha = 10e-6, beta = 10e9;
    EXPECT_NEAR(p.predicted_iteration_s - dp.predicted_iteration_s,
                4 * (alpha + bytes / beta) - (alpha + 2 * bytes / beta), 1e-9)
        << program;
  }
}

// The MLP above holds at least 385.9 MB per device whatever the program: its kept outputs are split
// at most 8 ways (369.1 MB) and its weights' state too (16.8 MB). Below that, priced as high as the
// search goes, no proposal fits: an infeasible plan whose reason gives that floor — the memory the
// model state alone (16.8 MB) would have declared ample.
TEST(RhinoPlanner, ActivationsBelowTheLimitMakeThePlanInfeasible) {
  const OpGraph g = testing::mlp(65536, 1024);
  const SpmdPlan p =
      plan_with("rhino", g, cluster_of(std::vector<double>(8, 10e12)), {{"level", "fast"}, {"memory_limit", 380e6}});
  EXPECT_FALSE(p.feasible);
  EXPECT_NE(p.reason.find("the smallest needs 0.3859 GB"), std::string::npos) << p.reason;
}

// A transformer MLP (h = 1024, 6,144 token rows) on 8 devices of 1 TFLOP/s, collectives α = 10 µs
// plus bytes / 10 GB/s (an all-reduce moving 2 bytes per byte). Its weights are B = 1024 × 4096 × 4 B
// = 16.8 MB each; its activation A = 6144 × 1024 × 4 B = 25.2 MB.
//  - Data parallelism all-reduces both weights' gradients, α + 2B/β = 3.37 ms each: 6.73 ms summed.
//    On the two streams w2's hides behind h's backward (2 × 2 × 6144 × 1024 × 4096 / 8 / 10^12 =
//    12.9 ms) and only w1's, after the last backward, is exposed: 3.37 ms.
//  - Megatron's column/row split with the LayerNorm on rows (sequence parallel) reduce-scatters y's
//    partial sum forward and all-gathers its gradient backward, 2 (α + A/β) = 5.05 ms, on the compute
//    stream either way (an all-reduce instead, 2 (α + 2A/β) = 10.1 ms, is dearer).
// Summed, Megatron's pattern is cheaper (5.05 < 6.73 ms); on the streams the lowering runs, data
// parallelism is (3.37 < 5.05 ms), the computation being the same. Rhino's proposals are ranked on the
// streams, and its search with the all-reduces as hidden finds data parallelism: its plan is DP-EV's,
// whose summed cost exceeds its prediction by w2's hidden all-reduce.
TEST(RhinoPlanner, OverlappedGradientAllReducesMakeDataParallelismCheaper) {
  const OpGraph g = testing::mlp(6144, 1024);
  const SpmdCluster c = cluster_of(std::vector<double>(8, 1e12));
  const SpmdPlan dp = plan_with("dp-ev", g, c);
  // The search charging every all-reduce in full (the summed model) takes Megatron's pattern.
  const SpmdProgram summed = rhino_search(g, c, RhinoSearchOptions{Mesh{{8}}, 1, false, 10});
  EXPECT_EQ(chosen(g, summed, "h").rule.output, Layout::split_columns) << summed.describe(g);
  EXPECT_EQ(chosen(g, summed, "y").rule.output, Layout::partial) << summed.describe(g);
  for (const char* level : {"fast", "thorough"}) {
    SCOPED_TRACE(level);
    const SpmdPlan p = plan_with("rhino", g, c, {{"level", level}});
    const std::string program = p.program.describe(g);
    ASSERT_FALSE(p.pipeline.has_value()) << program;
    for (const char* weight : {"w1", "w2"})
      EXPECT_EQ(chosen(g, p.program, weight).rule.output, Layout::replicated) << program;
    for (const char* product : {"h", "y"})
      EXPECT_EQ(chosen(g, p.program, product).rule.output, Layout::split_rows) << program;
    EXPECT_DOUBLE_EQ(p.predicted_iteration_s, dp.predicted_iteration_s) << program;
    const double all_reduce = 10e-6 + 2 * 1024.0 * 4096 * 4 / 10e9;
    EXPECT_NEAR(program_cost(g, p.program, p.ratios, c) - p.predicted_iteration_s, all_reduce, 1e-12);
  }
}

// A diamond a → {b, c} → d → e of 1, 4, 4, 1 and 2 GFLOP; a's output 100 B, b's and c's 12 B. Two
// stages of 6 GFLOP, 20% tolerance: stage 0 holds 4.8 to 7.2 GFLOP. The windows put a in stage 0
// (11 GFLOP after it) and d, e in stage 1 (9 before d); b and c are free. Both in stage 0 would hold
// 9 GFLOP, both in stage 1 leave 1 before the cut; one of them in each (5 GFLOP) is the only balanced
// choice, crossing a → (the other) 100 B and (the one) → d 12 B: 112 B.
TEST(RhinoStages, DiamondIsCutAcrossItsBranches) {
  OpGraph g("diamond", Dtype::fp32);
  const auto add = [&](const char* name, std::vector<OpId> inputs, std::int64_t bytes, double gflop) {
    return g.add({name, inputs.empty() ? OpKind::input : OpKind::elementwise, std::move(inputs), 1, bytes / 4,
                  Flop(gflop * 1e9)});
  };
  const OpId a = add("a", {}, 100, 1);
  const OpId b = add("b", {a}, 12, 4);
  const OpId c = add("c", {a}, 12, 4);
  const OpId d = add("d", {b, c}, 4, 1);
  const OpId e = add("e", {d}, 4, 2);
  const std::optional<StagePartition> p = partition_stages(g, 2, 0.2, 10);
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->optimal);
  EXPECT_EQ(p->stage[a], 0);
  EXPECT_EQ(p->stage[b] + p->stage[c], 1);  // one branch in each stage
  EXPECT_EQ(p->stage[d], 1);
  EXPECT_EQ(p->stage[e], 1);
  EXPECT_DOUBLE_EQ(p->cut_bytes, 100 + 12);
  // No tolerance: 6 GFLOP exactly cannot be had.
  EXPECT_FALSE(partition_stages(g, 2, 0.0, 10).has_value());
}

// Inception-like (four-branch blocks), 64 samples, cut in 2 and 4 stages at Rhino's 8% tolerance:
// every edge goes forward, every stage holds total/S FLOPs within ±2 × 8% (each prefix within 8%),
// and two stages cross no more bytes than the best balanced single cut of the operators' id order (a
// chain through the DAG), found here by trying every position.
TEST(RhinoStages, InceptionIsCutIntoBalancedStages) {
  const OpGraph g = builtin_graph_models().at("inception").value(GraphRequest{.batch = 64, .devices = 8});
  const double total = g.forward_flops().value();
  for (int stages : {2, 4}) {
    SCOPED_TRACE(stages);
    const std::optional<StagePartition> p = partition_stages(g, stages, 0.08, 60);
    ASSERT_TRUE(p.has_value());
    for (OpId v = 0; v < g.size(); ++v)
      for (OpId u : g.op(v).inputs) EXPECT_LE(p->stage[u], p->stage[v]) << g.op(u).name << " → " << g.op(v).name;
    for (double flops : stage_flops(g, p->stage, stages)) EXPECT_NEAR(flops / (total / stages), 1.0, 0.16 + 1e-9);
    if (stages != 2) continue;
    double best_chain = std::numeric_limits<double>::infinity(), before = 0;
    for (OpId cut = 0; cut + 1 < g.size(); ++cut) {
      before += g.op(cut).forward_flops.value();
      if (std::abs(before / (total / 2) - 1) > 0.08) continue;
      double crossing = 0;
      for (OpId v = cut + 1; v < g.size(); ++v)
        for (OpId u : g.op(v).inputs)
          if (u <= cut && g.op(u).kind != OpKind::parameter) crossing += g.bytes(u).value();
      best_chain = std::min(best_chain, crossing);
    }
    EXPECT_LE(p->cut_bytes, best_chain);
  }
}

// A pipeline plan of the Inception graph (2 stages × 2 GPUs, 4 micro-batches of its 64 samples) lowers
// to a GPipe task graph in which every GPU computes, and the FLOPs of one iteration over all tasks
// are the graph's: forward once and backward twice (the weight-gradient part inside the backward),
// 3 × the forward FLOPs, however the stages and replicas divide them (the optimizer step's tasks,
// which the pipeline lowering adds, aside).
TEST(RhinoStages, PipelinePlanLowersWithTheGraphsFlops) {
  const OpGraph g = builtin_graph_models().at("inception").value(GraphRequest{.batch = 64, .devices = 4});
  const std::optional<StagePartition> partition = partition_stages(g, 2, 0.08, 60);
  ASSERT_TRUE(partition.has_value());
  SpmdPlan plan;
  plan.pipeline = SpmdPipeline{partition->stage, {{0, 1}, {2, 3}}, 4, partition->cut_bytes};
  const TaskGraph tasks = lower_spmd(g, plan, {"gpu0", "gpu1", "gpu2", "gpu3"}, 1);
  std::vector<double> flops(4, 0.0);
  for (const Task& t : tasks.tasks())
    if (const auto* c = std::get_if<Compute>(&t.op); c != nullptr && !t.label.str().starts_with("optimizer"))
      flops[c->device] += c->flops.value();
  double total = 0;
  for (double f : flops) {
    EXPECT_GT(f, 0);
    total += f;
  }
  EXPECT_NEAR(total, 3 * g.forward_flops().value(), 1e-9 * total);
}

}  // namespace
}  // namespace dnnsim
