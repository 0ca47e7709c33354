// SPMD sharding (planners/spmd/sharding.hpp): OneFlow's boxing table, HAP's sharding-ratio LP and
// rounding, and the program search on MLPs where the answer is known (papers-parallelism.md §9 B1, B2, H5).
#include <gtest/gtest.h>

#include <cmath>

#include "models/spmd/op_graph.hpp"
#include "planners/spmd/hap_ratios.hpp"
#include "planners/spmd/spmd_lowering.hpp"
#include "tests/support/spmd_fixtures.hpp"

namespace dnnsim {
namespace {

using testing::chosen;
using testing::cluster_of;
using testing::mlp;
using testing::plan_with;

// B1: the boxing table of papers-parallelism.md §6.1 for one placement of p devices, T = 1000 bytes.
TEST(SbpBoxing, TableOnOnePlacementForTwoFourAndEightDevices) {
  const double t = 1000;
  for (int p : {2, 4, 8}) {
    SCOPED_TRACE(p);
    EXPECT_EQ(sbp_boxing_bytes(Layout::split_rows, Layout::split_rows, t, p, p), 0);
    EXPECT_EQ(sbp_boxing_bytes(Layout::replicated, Layout::replicated, t, p, p), 0);
    EXPECT_DOUBLE_EQ(sbp_boxing_bytes(Layout::split_rows, Layout::split_columns, t, p, p),
                     t * (p - 1) / p);                                                                    // all-to-all
    EXPECT_DOUBLE_EQ(sbp_boxing_bytes(Layout::split_columns, Layout::replicated, t, p, p), t * (p - 1));  // all-gather
    EXPECT_DOUBLE_EQ(sbp_boxing_bytes(Layout::partial, Layout::split_rows, t, p, p), t * (p - 1));  // reduce-scatter
    EXPECT_DOUBLE_EQ(sbp_boxing_bytes(Layout::partial, Layout::replicated, t, p, p), 2 * t * (p - 1));  // all-reduce
    EXPECT_EQ(sbp_boxing_bytes(Layout::replicated, Layout::split_columns, t, p, p), 1);                 // ≈ free
    EXPECT_EQ(sbp_boxing_bytes(Layout::replicated, Layout::partial, t, p, p), kPartialPenaltyBytes);
  }
  // Different placements: a copy, plus the reduction on the producer's side and the gather on the consumer's.
  EXPECT_DOUBLE_EQ(sbp_boxing_bytes(Layout::partial, Layout::replicated, t, 2, 4), t + 1 * t + 3 * t);
  EXPECT_DOUBLE_EQ(sbp_boxing_bytes(Layout::split_rows, Layout::split_rows, t, 2, 4), t);
}

// HAP's rounding: floor(ratio × length), then one more to the largest remainders.
// 10 × (0.642, 0.358) = (6.42, 3.58) → floors (6, 3), the larger remainder 0.58 gets the missing one.
TEST(ShardLengths, FloorThenLargestRemainder) {
  EXPECT_EQ(shard_lengths(10, {0.642, 0.358}), (std::vector<std::int64_t>{6, 4}));
  EXPECT_EQ(shard_lengths(7, {0.25, 0.25, 0.25, 0.25}), (std::vector<std::int64_t>{2, 2, 2, 1}));
  EXPECT_EQ(shard_lengths(3, {1.0, 0.0}), (std::vector<std::int64_t>{3, 0}));
}

// B2, large hidden: 8 rows of h = 8192 on 8 devices. Data parallelism all-reduces the weights' gradients,
// 2 × 8192 × 32768 × 4 B = 2.1 GB ≈ 0.43 s at 10 GB/s; Megatron's pattern reduces the activation y once
// (8 × 8192 × 4 B = 262 KB) and splits both weights: it must win. The one collective is an all-reduce
// (Megatron) or a reduce-scatter into a row-split LayerNorm (its sequence-parallel variant: the same
// bytes over forward and backward; cheaper here because nothing after the norm needs it gathered).
TEST(SpmdSearch, LargeHiddenChoosesColumnThenRowParallelWithOneAllReduce) {
  const OpGraph g = mlp(8, 8192);
  const SpmdCluster c = cluster_of(std::vector<double>(8, 100e12));
  for (const char* planner : {"hap", "sbp"}) {
    SCOPED_TRACE(planner);
    const SpmdPlan p = plan_with(planner, g, c);
    EXPECT_EQ(chosen(g, p.program, "w1").rule.output, Layout::split_columns) << p.program.describe(g);
    EXPECT_EQ(chosen(g, p.program, "h").rule.output, Layout::split_columns);
    EXPECT_EQ(chosen(g, p.program, "w2").rule.output, Layout::split_rows);
    EXPECT_EQ(chosen(g, p.program, "y").rule.output, Layout::partial);
    EXPECT_EQ(p.program.collective_count(), 1u) << p.program.describe(g);
    ASSERT_EQ(chosen(g, p.program, "norm").converts.size(), 1u);
    const Conversion reduction = chosen(g, p.program, "norm").converts[0].conversion;
    EXPECT_TRUE(reduction == Conversion::all_reduce || reduction == Conversion::reduce_scatter);
  }
}

// B2, small hidden and a large batch: 65,536 rows of h = 64. The weights are 2 × 64 × 256 × 4 B = 131 KB
// (a cheap gradient all-reduce) while an activation is 65,536 × 64 × 4 B = 16.8 MB: pure data parallelism.
TEST(SpmdSearch, SmallHiddenLargeBatchChoosesDataParallelism) {
  const OpGraph g = mlp(65536, 64);
  const SpmdCluster c = cluster_of(std::vector<double>(8, 100e12));
  for (const char* planner : {"hap", "sbp"}) {
    SCOPED_TRACE(planner);
    const SpmdPlan p = plan_with(planner, g, c);
    for (const char* activation : {"x", "h", "gelu", "y", "norm"})
      EXPECT_EQ(chosen(g, p.program, activation).rule.output, Layout::split_rows) << activation << "\n"
                                                                                  << p.program.describe(g);
    EXPECT_EQ(chosen(g, p.program, "w1").rule.output, Layout::replicated);
    EXPECT_EQ(chosen(g, p.program, "h").synchronizes, std::vector<std::size_t>{1});
    EXPECT_EQ(chosen(g, p.program, "y").synchronizes, std::vector<std::size_t>{1});
  }
}

// The baselines stay inside their spaces whatever the costs say.
TEST(SpmdSearch, BaselinesStayDataOrTensorParallel) {
  const OpGraph g = mlp(8, 8192);  // where tensor parallelism wins
  const SpmdCluster c = cluster_of(std::vector<double>(4, 100e12));
  const SpmdPlan dp = plan_with("dp-ev", g, c);
  EXPECT_EQ(chosen(g, dp.program, "h").rule.output, Layout::split_rows);
  EXPECT_EQ(chosen(g, dp.program, "w2").rule.output, Layout::replicated);
  const OpGraph small = mlp(65536, 64);  // where data parallelism wins
  const SpmdPlan tp_small = plan_with("megatron-tp", small, c);
  EXPECT_EQ(chosen(small, tp_small.program, "x").rule.output, Layout::replicated);
  EXPECT_NE(chosen(small, tp_small.program, "h").rule.output, Layout::split_rows);
  // The restricted spaces cost at least what the full search finds.
  const SpmdPlan hap = plan_with("hap", small, c);
  EXPECT_LE(hap.predicted_iteration_s, tp_small.predicted_iteration_s * (1 + 1e-12));
}

// H5: on a compute-bound program the LP gives shares proportional to FLOP/s: minimising
// max_j F·B_j/s_j under Σ B = 1 gives B_j = s_j / Σ s (V100 : P100 = 3.86 : 2.15 → 0.642 : 0.358).
TEST(SpmdRatios, ComputeBoundSharesFollowFlops) {
  const OpGraph g = mlp(65536, 64);
  const SpmdCluster c = cluster_of({3.86e12, 2.15e12}, /*bandwidth=*/1e15, /*alpha=*/0);
  const SpmdPlan dp = plan_with("dp-ev", g, c);
  const std::vector<double> ratios = balance_ratios(g, dp.program, c).of(0, 0);
  EXPECT_NEAR(ratios[0], 3.86 / (3.86 + 2.15), 1e-6);
  EXPECT_NEAR(ratios[1], 2.15 / (3.86 + 2.15), 1e-6);
}

// H5: when communication of padded shards dominates (an all-to-all of a 16.8 MB tensor costs κ·max B
// with κ ≫ any compute term), the LP minimises the largest share: B → even.
TEST(SpmdRatios, CommunicationBoundSharesTendToEven) {
  OpGraph g("exchange", Dtype::fp32);
  const OpId x = g.add({"x", OpKind::input, {}, 65536, 64});
  const OpId a = g.add({"a", OpKind::attention, {x}, 65536, 64, Flop(1e3)});
  g.add({"loss", OpKind::loss, {a}, 1, 1, Flop(1)});
  SpmdProgram program;
  program.mesh = Mesh{{2}};
  program.axes.assign(1, {});
  program.axes[0].push_back({0, {{}, Layout::split_rows, true}, {}, {}});
  program.axes[0].push_back({1,
                             {{Layout::split_columns}, Layout::split_columns, true},
                             {{0, Layout::split_rows, Layout::split_columns, Conversion::all_to_all}},
                             {}});
  program.axes[0].push_back({2, {{Layout::split_columns}, Layout::partial, true}, {}, {}});
  const SpmdCluster c = cluster_of({3.86e12, 2.15e12}, /*bandwidth=*/1e9);
  const std::vector<double> ratios = balance_ratios(g, program, c).of(0, 0);
  EXPECT_NEAR(ratios[0], 0.5, 1e-6);
  EXPECT_NEAR(ratios[1], 0.5, 1e-6);
}

// HAP's alternation never does worse than its first search at speed-proportional ratios, and on a
// heterogeneous compute-bound MLP ends at shares ∝ speed.
TEST(SpmdHap, AlternationBalancesHeterogeneousDevices) {
  const OpGraph g = mlp(65536, 64);
  const SpmdCluster c = cluster_of({3.86e12, 3.86e12, 2.15e12, 2.15e12});
  const SpmdPlan hap = plan_with("hap", g, c);
  const SpmdPlan dp_ev = plan_with("dp-ev", g, c);
  const SpmdPlan dp_cp = plan_with("dp-cp", g, c);
  // HAP predicts with its own additive model (program_cost); the baselines with the two-stream
  // timeline (iteration_time): compared on HAP's.
  EXPECT_LE(hap.predicted_iteration_s, program_cost(g, dp_cp.program, dp_cp.ratios, c) * (1 + 1e-9));
  EXPECT_LT(dp_cp.predicted_iteration_s, dp_ev.predicted_iteration_s);
  EXPECT_GT(hap.ratios.of(0, 0)[0], hap.ratios.of(0, 0)[2]);
  EXPECT_GE(hap.rounds, 1);
}

// The first compute task of `device` whose label is `label`.
const Compute& compute_task(const TaskGraph& graph, DeviceId device, const std::string& label) {
  for (const Task& t : graph.tasks())
    if (const auto* c = std::get_if<Compute>(&t.op); c != nullptr && c->device == device && t.label == label) return *c;
  throw std::logic_error("no task " + label);
}

// The two-stream timeline (iteration_time) of data parallelism on the transformer MLP (h = 1024,
// 65,536 rows, 8 devices of 10 TFLOP/s): no conversions, and two gradient all-reduces of
// B = 1024 × 4096 × 4 B, each α + 2B/β. The backward runs loss, norm, y, gelu, h; w2's all-reduce is
// ready after y's backward, w1's after h's (the last).
//  - At β = 10 GB/s an all-reduce takes 10 µs + 3.355 ms, less than h's backward, 2 × 2 × 65,536 ×
//    1024 × 4096 / 8 / 10^13 = 13.74 ms: w2's is hidden, w1's runs after the compute stream ends.
//    The timeline is the sum (program_cost) less w2's all-reduce.
//  - At β = 0.1 GB/s an all-reduce takes 335.5 ms: w1's waits for w2's, and the comm stream ends two
//    all-reduces after y's backward. The timeline is the sum less the backward of gelu and h, which
//    run under w2's all-reduce: 2 × 8 × 65,536 × 4096 / 8 / 10^13 + 13.74 ms = 13.80 ms.
TEST(SpmdCost, GradientAllReducesOverlapTheBackwardOfEarlierLayers) {
  const OpGraph g = mlp(65536, 1024);
  const double bytes = 1024.0 * 4096 * 4, alpha = 10e-6;
  for (const double beta : {10e9, 0.1e9}) {
    SCOPED_TRACE(beta);
    const SpmdCluster c = cluster_of(std::vector<double>(8, 10e12), beta, alpha);
    const SpmdPlan dp = plan_with("dp-ev", g, c);
    const double summed = program_cost(g, dp.program, dp.ratios, c);
    const double all_reduce = alpha + 2 * bytes / beta;
    const double hidden =
        beta > 1e9 ? all_reduce : 2 * 8.0 * 65536 * 4096 / 8 / 10e12 + 2 * 2.0 * 65536 * 1024 * 4096 / 8 / 10e12;
    EXPECT_NEAR(iteration_time(g, dp.program, dp.ratios, c), summed - hidden, 1e-12 * summed);
    EXPECT_DOUBLE_EQ(dp.predicted_iteration_s, iteration_time(g, dp.program, dp.ratios, c));
  }
}

// Megatron's MLP pattern on 2 devices with uneven ratios 3 : 1: h = x·w1 is column-parallel
// (C[8 × 32,768] split by columns: 24,576 and 8,192 columns, k = 8,192), y = gelu·w2 row-parallel
// (its contraction k = 32,768 split the same way into partial sums, n = 8,192). Each task carries its
// shard's GEMM, forward as the product, backward as the pair of its gradients.
TEST(SpmdLowering, MatmulTasksCarryTheirShardsGemmShape) {
  const OpGraph g = mlp(8, 8192);
  SpmdPlan plan = plan_with("megatron-tp", g, cluster_of({100e12, 100e12}));
  ASSERT_EQ(chosen(g, plan.program, "h").rule.output, Layout::split_columns) << plan.program.describe(g);
  ASSERT_EQ(chosen(g, plan.program, "y").rule.output, Layout::partial) << plan.program.describe(g);
  plan.ratios.values = {{{0.75, 0.25}}};
  const TaskGraph tg = lower_spmd(g, plan, {"gpu0", "gpu1"}, 1);
  const auto expect_shape = [&](DeviceId d, const std::string& label, std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                GemmOp op) {
    const GemmShape shape = compute_task(tg, d, label).gemm;
    EXPECT_EQ(shape.m, m) << label << " on " << d;
    EXPECT_EQ(shape.n, n) << label << " on " << d;
    EXPECT_EQ(shape.k, k) << label << " on " << d;
    EXPECT_EQ(shape.op, op) << label << " on " << d;
  };
  expect_shape(0, "fwd h", 8, 24576, 8192, GemmOp::nn);
  expect_shape(1, "fwd h", 8, 8192, 8192, GemmOp::nn);
  expect_shape(1, "bwd h", 8, 8192, 8192, GemmOp::backward);
  expect_shape(0, "fwd y", 8, 8192, 24576, GemmOp::nn);
  expect_shape(1, "bwd y", 8, 8192, 8192, GemmOp::backward);
  // Not a matmul: no shape.
  EXPECT_FALSE(compute_task(tg, 0, "fwd gelu").gemm.known());
}

}  // namespace
}  // namespace dnnsim
