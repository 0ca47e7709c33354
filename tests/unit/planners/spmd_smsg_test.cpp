// SMSG-like planner (planners/spmd/smsg_*.hpp): its symbolic costs against hand derivations (SMSG,
// IJPP 51, 2023: amounts of data computed and communicated; MindSpore rec_cost.cc), and its claim that no hardware
// figure moves its strategy.
#include <gtest/gtest.h>

#include "models/dnn/zoo.hpp"
#include "planners/spmd/smsg_cost.hpp"
#include "planners/spmd/spmd_cost.hpp"
#include "tests/support/spmd_fixtures.hpp"

namespace dnnsim {
namespace {

using testing::cluster_of;
using testing::plan_with;

// C[m×n] = A[m×k]·B[k×n], m = 64, k = 32, n = 16, B a weight and A produced split by rows, on a
// two-way cut of two devices (elements per device, forward and backward; a ring over p devices moves
// (p − 1)/p of a tensor per device, an all-to-all (p − 1)/p of the device's 1/p):
//  - rows of A and C split (data parallel): B's gradient all-reduced, 2 · k·n/2 = 512;
//  - columns of B and C split (column parallel): A gathered and its gradient reduce-scattered,
//    2 · m·k/2 = 2048;
//  - k split (A by columns, B by rows): A's rows-to-columns all-to-all each way, 2 · m·k/4 = 1024; the
//    partial C is summed by its reader.
TEST(SmsgCost, MatmulCutsAreTheDataTheirCollectivesMove) {
  OpGraph g("matmul", Dtype::fp32);
  const OpId a = g.add({"a", OpKind::input, {}, 64, 32});
  const OpId b = g.add({"b", OpKind::parameter, {}, 32, 16});
  const OpId c = g.add({"c", OpKind::matmul, {a, b}, 64, 16, Flop(2.0 * 64 * 32 * 16)});
  g.add({"loss", OpKind::loss, {c}, 1, 1, Flop(64)});
  std::vector<LocalShape> shapes;
  for (const SpmdOp& op : g.ops()) shapes.push_back({op.rows, op.columns});
  const Reach two{1, 2};
  const auto cost_of = [&](Layout in_a, Layout in_b, Layout out) {
    for (const ShardingRule& r : sharding_rules(g, c))
      if (r.sharded && !r.sfb && r.inputs == std::vector<Layout>{in_a, in_b} && r.output == out)
        return symbolic_rule_cost(g, c, r, shapes, two) +
               symbolic_operand_cost(g, c, r, 0, Layout::split_rows, shapes, two) +
               symbolic_operand_cost(g, c, r, 1, in_b, shapes, two);
    ADD_FAILURE() << "no such rule";
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(cost_of(Layout::split_rows, Layout::replicated, Layout::split_rows), 32 * 16);
  EXPECT_DOUBLE_EQ(cost_of(Layout::replicated, Layout::split_columns, Layout::split_columns), 64 * 32);
  EXPECT_DOUBLE_EQ(cost_of(Layout::split_columns, Layout::split_rows, Layout::partial), 64 * 32 / 2);
  // B's gradient already all-reduced over 4 devices (two earlier cuts) grows to 8 for
  // 2 · 512 · (7/8 − 3/4) = 128 more per device, not another 512.
  const ShardingRule data_parallel{{Layout::split_rows, Layout::replicated}, Layout::split_rows, true};
  EXPECT_DOUBLE_EQ(symbolic_operand_cost(g, c, data_parallel, 1, Layout::replicated, shapes, {4, 2}), 128);
  // After a cut of the rows in two, the next cut sees A as 32 × 32.
  const LocalShape half = after_cut(shapes[a], Layout::split_rows, 2);
  EXPECT_EQ(half.rows, 32);
  EXPECT_EQ(half.columns, 32);
}

// Redistribution of a tensor of E = 1000 local elements, forward and its backward mirror. On a first
// cut of two devices: an all-to-all each way, 2 · 1000/4 = 500; a partial sum all-reduced (two ring
// passes of 1000/2) and its gradient all-reduced, 2000; reduce-scattered and gathered back, 1000; a
// split gathered and its gradient reduce-scattered, 1000; a replicated tensor sliced (free) and its
// gradient gathered, 500.
// Shares of merged collectives: a shard of 1000 of an all-to-all already over 2 devices (2000 in all)
// growing to 4 moves 2 · 2000 · (3/16 − 1/4) = −250 more (each device's piece shrinks); a shard of
// 1000 gathered over 2 growing to 8, 2 · 2000 · (7/8 − 1/2) = 1500.
TEST(SmsgCost, RedistributionIsItsShareOfTheMergedCollective) {
  const Reach two{1, 2};
  EXPECT_DOUBLE_EQ(symbolic_redistribution(Layout::split_rows, Layout::split_columns, 1000, two), 500);
  EXPECT_DOUBLE_EQ(symbolic_redistribution(Layout::partial, Layout::replicated, 1000, two), 2000);
  EXPECT_DOUBLE_EQ(symbolic_redistribution(Layout::partial, Layout::split_rows, 1000, two), 1000);
  EXPECT_DOUBLE_EQ(symbolic_redistribution(Layout::split_rows, Layout::replicated, 1000, two), 1000);
  EXPECT_DOUBLE_EQ(symbolic_redistribution(Layout::replicated, Layout::split_rows, 1000, two), 500);
  EXPECT_DOUBLE_EQ(symbolic_redistribution(Layout::split_rows, Layout::split_rows, 1000, two), 0);

  EXPECT_DOUBLE_EQ(symbolic_redistribution(Layout::split_rows, Layout::split_columns, 1000, {2, 2}), -250);
  EXPECT_DOUBLE_EQ(symbolic_redistribution(Layout::split_rows, Layout::replicated, 1000, {2, 4}), 1500);
}

// Topology: a tensor of E = 1000 elements gathered and its gradient reduce-scattered (two ring passes
// of E (p − 1)/p per device), counted also through each node's interface, D·n/p rings of a node's D
// devices leaving it by one link each:
//  - a cut of 2 inside a node: 2 · 500 = 1000, nothing through the interface;
//  - a cut of 2 across two nodes of D = 8: each of the 8 devices' rings leaves the node, 2 · (500 +
//    8 · 500) = 9000;
//  - 4 devices on 2 nodes of 2 (this cut and the next): a device 750 per pass, one ring per node
//    (2 · 2/4), 2 · (750 + 750) = 3000.
// An all-to-all each way over those 4: E · 3/16 = 187.5 per device; from each of a node's 2 devices
// (4 − 2)/4 of its piece E/4 leaves the node, 2 · 0.5 · 250 = 250: 2 · 437.5 = 875.
TEST(SmsgCost, CollectivesAcrossNodesCountTheirInterfaces) {
  EXPECT_DOUBLE_EQ(symbolic_redistribution(Layout::split_rows, Layout::replicated, 1000, {1, 2, 1, 1, 8}), 1000);
  EXPECT_DOUBLE_EQ(symbolic_redistribution(Layout::split_rows, Layout::replicated, 1000, {1, 2, 1, 2, 8}), 9000);
  EXPECT_DOUBLE_EQ(symbolic_redistribution(Layout::split_rows, Layout::replicated, 1000, {1, 4, 1, 2, 2}), 3000);
  EXPECT_DOUBLE_EQ(symbolic_redistribution(Layout::split_rows, Layout::split_columns, 1000, {1, 4, 1, 2, 2}), 875);
}

// A classifier whose weight outweighs its activations is cut by its reduction dimension, one whose
// activations outweigh it stays data parallel. x[m × k] → LayerNorm (rows only) → · W[k × n] →
// LayerNorm → loss on two devices (one cut), m = 64, k = 4096, n = 1024, elements per device:
//   data parallel    2 · k·n/2 = 4,194,304 (W's gradient)
//   k split          2 · m·k/4 = 131,072 (x to columns and back) + 2 · m·n/2 = 65,536 (the partial
//                    sums reduce-scattered to rows for the LayerNorm, gathered back) = 196,608
//   n split          2 · m·k/2 = 262,144 (x gathered) + 2 · m·n/4 = 32,768 (columns to rows) = 294,912
// so k. With m = 65,536 the same cuts cost 4,194,304, 201,326,592 and 301,989,888: data parallel.
TEST(SmsgPlanner, CutsAHeavyWeightByItsReductionAndKeepsALightOneDataParallel) {
  const auto fc_rule = [](std::int64_t m) {
    OpGraph g("fc", Dtype::fp32);
    const OpId x = g.add({"x", OpKind::input, {}, m, 4096});
    const OpId n1 = g.add({"n1", OpKind::rowwise, {x}, m, 4096, Flop(5.0 * m * 4096)});
    const OpId w = g.add({"w", OpKind::parameter, {}, 4096, 1024});
    const OpId y = g.add({"y", OpKind::matmul, {n1, w}, m, 1024, Flop(2.0 * m * 4096 * 1024)});
    const OpId n2 = g.add({"n2", OpKind::rowwise, {y}, m, 1024, Flop(5.0 * m * 1024)});
    g.add({"loss", OpKind::loss, {n2}, 1, 1, Flop(static_cast<double>(m))});
    return plan_with("smsg", g, cluster_of(std::vector<double>(2, 15.7e12))).program.ops()[y].rule;
  };
  EXPECT_EQ(fc_rule(64).output, Layout::partial);
  EXPECT_EQ(fc_rule(65536).output, Layout::split_rows);
}

// Expert parallelism over two mesh axes (SMSG's [2 × 2]) runs one all-to-all over the four devices,
// as DeepSpeed-MoE runs its expert-parallel group, not one per axis. x[64 × 16] through 4 experts of
// 16 → 32 → 16, 2 routed rows per input row, fp32, even shares: each device's dispatch buffer is its
// 64/4 rows × 2 × 16 × 4 B = 2048 B, the combine's the same, each forward and backward, so the
// exchanges cost 4 all-to-alls of 2048 B: 4 × (10 µs + 2048 B / 10 GB/s). Per axis they were 8.
TEST(SpmdCost, ExpertParallelismOverTwoAxesIsOneAllToAll) {
  const OpGraph g = testing::experts_layer(4);
  const OpId e = testing::op_named(g, "experts");
  const ShardedOp split{
      e,
      {{Layout::split_rows, Layout::split_rows, Layout::split_rows, Layout::split_rows}, Layout::split_rows, true},
      {},
      {}};
  const Mesh mesh{{2, 2}};
  const OpCost cost = op_cost(g, mesh, {&split, &split}, {}, ShardRatios::even(mesh),
                              cluster_of(std::vector<double>(4, 15.7e12)), SpmdCostModel::hap);
  EXPECT_NEAR(cost.communication, 4 * (10e-6 + 2048 / 10e9), 1e-15);
}

// SMSG's portability claim: 8 V100s (15.7 TFLOP/s fp32, NVLink 2 at 150 GB/s), 8 A100s (156 TFLOP/s
// TF32, 300 GB/s) and 8 H100s (495 TFLOP/s TF32, 450 GB/s) get the same strategy for BERT-Base — no
// device figure enters a choice — while the predicted time, priced on each cluster's profile, differs.
// Cutting the operator list in pieces solved concurrently does not move it either (the list
// homomorphism).
TEST(SmsgPlanner, SameStrategyOnV100A100AndH100) {
  ModelOptions options;
  options.seq = 128;
  const OpGraph g = build_op_graph(builtin_models().at("bert-base").value(options), 32, Dtype::fp32, {});
  const SpmdPlan v100 = plan_with("smsg", g, cluster_of(std::vector<double>(8, 15.7e12), 150e9));
  const SpmdPlan a100 = plan_with("smsg", g, cluster_of(std::vector<double>(8, 156e12), 300e9));
  const SpmdPlan h100 = plan_with("smsg", g, cluster_of(std::vector<double>(8, 495e12), 450e9));
  const std::string strategy = v100.program.describe(g);
  EXPECT_EQ(a100.program.describe(g), strategy);
  EXPECT_EQ(h100.program.describe(g), strategy);
  EXPECT_GT(v100.predicted_iteration_s, a100.predicted_iteration_s);
  EXPECT_GT(a100.predicted_iteration_s, h100.predicted_iteration_s);
  for (int parts : {2, 3, 7}) {
    SCOPED_TRACE(parts);
    EXPECT_EQ(plan_with("smsg", g, cluster_of(std::vector<double>(8, 15.7e12), 150e9), {{"parts", std::int64_t{parts}}})
                  .program.describe(g),
              strategy);
  }
}

}  // namespace
}  // namespace dnnsim
