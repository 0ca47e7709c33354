// The `kind: spmd` workload (docs/spmd.md): its keys, its errors at their line and column, and its
// plan and lowering without an engine (sim/workloads/spmd/spmd_kind.hpp).
//
// Line numbers: kCluster ends with "workload:" (line 7) and "  kind: spmd" (line 8, where the workload
// mapping starts, 8:3); the body given to each test starts at line 9.
#include <gtest/gtest.h>

#include "sim/scenario/scenario.hpp"
#include "sim/workloads/spmd/spmd_kind.hpp"
#include "sim/workloads/workload_kind.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

using testing::diagnostics_thrown_by;
using testing::dump;
using testing::expect_error;
using testing::load;
using testing::write_file;

// One V100 node and one P100 node of one GPU each, 10 Gbps between them.
const std::string kCluster = R"(name: spmd
cluster:
  node_types:
    v100: {gpu: V100-16GB, gpus_per_node: 1, nic: {bandwidth: "10Gbps", latency: "5us"}}
    p100: {gpu: P100, gpus_per_node: 1, nic: {bandwidth: "10Gbps", latency: "5us"}}
  nodes: [{type: v100, count: 1}, {type: p100, count: 1}]
workload:
  kind: spmd
)";

const std::string kGraph = R"(name: mlp
ops:
  - {name: x, kind: input, shape: [4096, 64]}
  - {name: w1, kind: parameter, shape: [64, 256]}
  - {name: h, kind: matmul, inputs: [x, w1]}
  - {name: loss, kind: loss, inputs: [h]}
)";

TEST(ScenarioSpmd, GraphFilePlannedAndLoweredWithUnevenShards) {
  write_file("mlp.yaml", kGraph);
  const Scenario s = load(kCluster + "  graph: mlp.yaml\n  planner: dp-cp\n  global_batch: 4096\n");
  const auto* spec = s.workload_as<SpmdWorkload>();
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->graph.size(), 4u);
  EXPECT_EQ(spec->planner, "dp-cp");
  const SpmdPlan plan = plan_spmd(s, *spec);
  // DP-CP: shares ∝ the fp32 peaks 15.7 : 10.6 TFlops → 0.597 : 0.403.
  EXPECT_NEAR(plan.ratios.of(0, 0)[0], 15.7 / 26.3, 1e-9);
  const auto graph = builtin_workload_kinds().at("spmd").value->lower(s);
  ASSERT_TRUE(graph.has_value());
  // The matmul's forward tasks split 4096 rows as HAP rounds them: 4096 × 0.59696 = 2445.1 → 2445 and
  // 1650.9 → 1651 (the larger remainder takes the missing row).
  std::vector<double> forward_flops;
  for (const Task& t : graph->tasks())
    if (t.label == "fwd h") forward_flops.push_back(std::get<Compute>(t.op).flops.value());
  ASSERT_EQ(forward_flops.size(), 2u);
  EXPECT_DOUBLE_EQ(forward_flops[0], 2.0 * 2445 * 64 * 256);
  EXPECT_DOUBLE_EQ(forward_flops[1], 2.0 * 1651 * 64 * 256);
}

TEST(ScenarioSpmd, ErrorsAreLocated) {
  write_file("mlp.yaml", kGraph);
  const auto both = diagnostics_thrown_by(
      [] { (void)load(kCluster + "  graph: mlp.yaml\n  model: {zoo: bert-base}\n  planner: happ\n"); });
  ASSERT_EQ(both.size(), 2u) << dump(both);
  expect_error(both[0], 8, 3, "give exactly one of 'model'");
  expect_error(both[1], 11, 12, "unknown SPMD planner 'happ'; did you mean 'hap'?");
  const auto no_batch = diagnostics_thrown_by([] { (void)load(kCluster + "  model: {zoo: bert-base}\n"); });
  ASSERT_EQ(no_batch.size(), 1u) << dump(no_batch);
  expect_error(no_batch[0], 8, 3, "a model needs 'global_batch'");
  // Errors inside the graph file are located in that file.
  write_file("bad.yaml", "ops:\n  - {name: x, kind: input, shape: [4, 4]}\n  - {name: l, kind: loss, inputs: [y]}\n");
  const auto in_file = diagnostics_thrown_by([] { (void)load(kCluster + "  graph: bad.yaml\n"); });
  ASSERT_EQ(in_file.size(), 1u) << dump(in_file);
  EXPECT_NE(in_file[0].location.file.find("bad.yaml"), std::string::npos);
  expect_error(in_file[0], 3, 36, "unknown operator 'y'");
}

}  // namespace
}  // namespace dnnsim
