// SMSG-like planner (planners/spmd/smsg_*.hpp): its symbolic costs against hand derivations (SMSG,
// IJPP 51, 2023, §4; MindSpore rec_cost.cc), and its claim that no hardware figure moves its strategy.
#include <gtest/gtest.h>

#include "models/dnn/zoo.hpp"
#include "planners/spmd/smsg_cost.hpp"
#include "tests/support/spmd_fixtures.hpp"

namespace dnnsim {
namespace {

using testing::cluster_of;
using testing::plan_with;

// C[m×n] = A[m×k]·B[k×n], m = 64, k = 32, n = 16, on a two-way cut (units of (q − 1)/q elements):
//  - rows of A and C split (data parallel): every shard needs all of B, k·n = 512;
//  - columns of B and C split (column parallel): every shard needs all of A, m·k = 2048;
//  - k split (A by columns, B by rows): each shard holds a full-size partial C, m·n = 1024 to sum.
TEST(SmsgCost, MatmulCutsAreTheDataEachShardLacks) {
  OpGraph g("matmul", Dtype::fp32);
  const OpId a = g.add({"a", OpKind::input, {}, 64, 32});
  const OpId b = g.add({"b", OpKind::parameter, {}, 32, 16});
  const OpId c = g.add({"c", OpKind::matmul, {a, b}, 64, 16, Flop(2.0 * 64 * 32 * 16)});
  g.add({"loss", OpKind::loss, {c}, 1, 1, Flop(64)});
  std::vector<LocalShape> shapes;
  for (const SpmdOp& op : g.ops()) shapes.push_back({op.rows, op.columns});
  const auto cost_of = [&](Layout in_a, Layout in_b, Layout out) {
    for (const ShardingRule& r : sharding_rules(g, c))
      if (r.sharded && !r.sfb && r.inputs == std::vector<Layout>{in_a, in_b} && r.output == out)
        return symbolic_rule_cost(g, c, r, shapes);
    ADD_FAILURE() << "no such rule";
    return std::int64_t{-1};
  };
  EXPECT_EQ(cost_of(Layout::split_rows, Layout::replicated, Layout::split_rows), 32 * 16);
  EXPECT_EQ(cost_of(Layout::replicated, Layout::split_columns, Layout::split_columns), 64 * 32);
  EXPECT_EQ(cost_of(Layout::split_columns, Layout::split_rows, Layout::partial), 64 * 16);
  // After a cut of the rows in two, the next cut sees A as 32 × 32: its column cut needs 32·32.
  const LocalShape half = after_cut(shapes[a], Layout::split_rows, 2);
  EXPECT_EQ(half.rows, 32);
  EXPECT_EQ(half.columns, 32);
}

// Redistribution (rec_cost's CostRedis): the local elements × the weight, free from replicated to a split.
TEST(SmsgCost, RedistributionCountsLocalElementsOnceWeighted) {
  EXPECT_EQ(symbolic_redistribution(Layout::split_rows, Layout::split_columns, 1000, 16), 16000);
  EXPECT_EQ(symbolic_redistribution(Layout::partial, Layout::replicated, 1000, 16), 16000);
  EXPECT_EQ(symbolic_redistribution(Layout::replicated, Layout::split_rows, 1000, 16), 0);
  EXPECT_EQ(symbolic_redistribution(Layout::split_rows, Layout::split_rows, 1000, 16), 0);
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
