// The `kind: spmd` workload (docs/spmd.md): its keys, its errors at their line and column, and its
// plan and lowering without an engine (sim/workloads/spmd/spmd_kind.hpp).
//
// Line numbers: kCluster ends with "workload:" (line 7) and "  kind: spmd" (line 8, where the workload
// mapping starts, 8:3); the body given to each test starts at line 9.
#include <gtest/gtest.h>

#include "planners/spmd/spmd_cost.hpp"
#include "planners/spmd/spmd_lowering.hpp"
#include "sim/scenario/cluster_view_builder.hpp"
#include "sim/scenario/layout.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workloads/spmd/spmd_kind.hpp"
#include "sim/workloads/workload_kind.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

using namespace testing;

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
  expect_errors(both,
                {{8, 3, "give exactly one of 'model'"}, {11, 12, "unknown SPMD planner 'happ'; did you mean 'hap'?"}});
  const auto no_batch = diagnostics_thrown_by([] { (void)load(kCluster + "  model: {zoo: bert-base}\n"); });
  expect_errors(no_batch, {{8, 3, "a model needs 'global_batch'"}});
  // A refused global batch is said once, at its value: a graph of the zoo is not also missing one.
  const auto bad_batch =
      diagnostics_thrown_by([] { (void)load(kCluster + "  graph: {zoo: hap-vgg19}\n  global_batch: -128\n"); });
  expect_errors(bad_batch, {{10, 17, "got -128"}});
  // Errors inside the graph file are located in that file.
  write_file("bad.yaml", "ops:\n  - {name: x, kind: input, shape: [4, 4]}\n  - {name: l, kind: loss, inputs: [y]}\n");
  const auto in_file = diagnostics_thrown_by([] { (void)load(kCluster + "  graph: bad.yaml\n"); });
  ASSERT_EQ(in_file.size(), 1u) << dump(in_file);
  EXPECT_NE(in_file[0].location.file.find("bad.yaml"), std::string::npos);
  expect_error(in_file[0], 3, 36, "unknown operator 'y'");
}

// Two nodes of two P100 on PCIe (15.754 GB/s, 1 µs), one 10 Gbps NIC each (5 µs), a 1 µs switch; two
// weights of 64 × 256 fp32 (65,536 B each).
const std::string kTwoNodes = R"(name: spmd
cluster:
  node_types:
    p100x2: {gpu: P100, gpus_per_node: 2, fabric: pcie, nic: {bandwidth: "10Gbps", latency: "5us"}}
  nodes: [{type: p100x2, count: 2}]
  interconnect: {kind: switch, latency: "1us"}
workload:
  kind: spmd
)";
// kGraph with a second product: its loss reads y = h · w2[256 × 64].
const std::string kTwoWeights = [] {
  std::string graph = kGraph;
  graph.replace(graph.find("  - {name: loss"), std::string::npos,
                "  - {name: w2, kind: parameter, shape: [256, 64]}\n"
                "  - {name: y, kind: matmul, inputs: [h, w2]}\n"
                "  - {name: loss, kind: loss, inputs: [y]}\n");
  return graph;
}();

std::vector<const Collective*> all_reduces(const TaskGraph& graph) {
  std::vector<const Collective*> found;
  for (const Task& t : graph.tasks())
    if (const auto* c = std::get_if<Collective>(&t.op); c != nullptr && c->kind == CollectiveKind::all_reduce)
      found.push_back(c);
  return found;
}

TEST(ScenarioSpmd, AllReducesRunTheGivenAlgorithmInBuckets) {
  write_file("mlp2.yaml", kTwoWeights);
  const std::string base = kTwoNodes + "  graph: mlp2.yaml\n  planner: dp-ev\n  global_batch: 4096\n";
  const auto lowered = [](const Scenario& s) { return *builtin_workload_kinds().at("spmd").value->lower(s); };
  // Unset: one all-reduce per weight, the default rule's algorithm (left empty).
  const TaskGraph per_weight = lowered(load(base));
  ASSERT_EQ(all_reduces(per_weight).size(), 2u);
  EXPECT_EQ(all_reduces(per_weight)[0]->algorithm, "");
  EXPECT_DOUBLE_EQ(all_reduces(per_weight)[0]->size.value(), 65536);
  // A 100 kB bucket holds both 65,536 B gradients (it closes at ≥ 100 kB, i.e. with the second): one
  // all-reduce of 131,072 B, a ring.
  const TaskGraph bucketed = lowered(load(base + "  collective_algorithm: ring\n  bucket_size: 100kB\n"));
  ASSERT_EQ(all_reduces(bucketed).size(), 1u);
  EXPECT_EQ(all_reduces(bucketed)[0]->algorithm, "ring");
  EXPECT_DOUBLE_EQ(all_reduces(bucketed)[0]->size.value(), 131072);
  // A 65,536 B bucket is full with each gradient: one call per weight again.
  EXPECT_EQ(all_reduces(lowered(load(base + "  bucket_size: 65536B\n"))).size(), 2u);
}

// A pipelined plan's stages bucket their gradients by the workload's bucket_size too. One stage of the
// four GPUs (x, h, y, loss; h holds w1 and y holds w2, 65,536 B each): the pipeline lowering's own
// 25 MB bucket takes both gradients in one all-reduce of 131,072 B; 65,536 B buckets, walking down from
// the loss, close at y and at h: one all-reduce of 65,536 B each.
TEST(ScenarioSpmd, PipelinedPlansBucketByTheWorkloadsBucketSize) {
  write_file("mlp2.yaml", kTwoWeights);
  const Scenario s = load(kTwoNodes + "  graph: mlp2.yaml\n  planner: dp-ev\n  global_batch: 4096\n");
  const auto* spec = s.workload_as<SpmdWorkload>();
  SpmdPlan plan = plan_spmd(s, *spec);
  plan.pipeline = SpmdPipeline{std::vector<int>(spec->graph.size(), 0), {{0, 1, 2, 3}}, 1, 0};
  const auto sizes = [&](double bucket_bytes) {
    const TaskGraph graph = lower_spmd(spec->graph, plan, s.cluster.gpu_names(), 1, SpmdCommOptions{"", bucket_bytes});
    std::vector<double> found;
    for (const Collective* c : all_reduces(graph))
      if (c->size.value() > 0) found.push_back(c->size.value());
    return found;
  };
  EXPECT_EQ(sizes(0), std::vector<double>({131072}));
  EXPECT_EQ(sizes(65536), std::vector<double>({65536, 65536}));
}

TEST(ScenarioSpmd, PlannersPriceARingAcrossASharedNicOncePerNode) {
  write_file("mlp2.yaml", kTwoWeights);
  const Scenario s =
      load(kTwoNodes + "  graph: mlp2.yaml\n  planner: dp-ev\n  collective_algorithm: ring\n  global_batch: 4096\n");
  const auto* spec = s.workload_as<SpmdWorkload>();
  const SpmdCluster cluster =
      make_spmd_cluster(make_cluster_view(s.cluster, make_layout(s.cluster)), Dtype::fp32, spec->comm);
  // The ring n0g0 → n0g1 → n1g0 → n1g1 → n0g0 leaves each node by one edge, so each NIC carries one
  // send per round at its full 1.25 GB/s (both devices of a node sending at once would halve it). Per
  // round, the slowest edge: S/4 over 1.25e9 B/s at 13 µs (PCIe 1 µs + NIC 5 + switch 1 + NIC 5 +
  // PCIe 1). The ring all-reduce's 6 rounds: 6/4 / 1.25e9 = 1.2e-9 s/B and α = 78 µs; the default
  // rule's all-gather, a ring of 3 rounds: 6e-10 s/B and 39 µs.
  EXPECT_NEAR(cluster.all.all_reduce.seconds_per_byte, 1.2e-9, 1e-15);
  EXPECT_NEAR(cluster.all.all_reduce.alpha, 78e-6, 1e-9);
  EXPECT_NEAR(cluster.all.all_gather.seconds_per_byte, 6e-10, 1e-15);
  EXPECT_NEAR(cluster.all.all_gather.alpha, 39e-6, 1e-9);
  // The buckets in the two-stream estimate: one all-reduce of both gradients (131,072 B) once the
  // backward pass has ended, so the iteration is the compute stream (the estimate with free
  // all-reduces) plus that one call.
  const SpmdPlan plan = plan_spmd(s, *spec);
  SpmdCluster bucketed = cluster, free = cluster;
  bucketed.comm.bucket_bytes = 1e6;
  free.all.all_reduce = {};
  EXPECT_NEAR(iteration_time(spec->graph, plan.program, plan.ratios, bucketed),
              iteration_time(spec->graph, plan.program, plan.ratios, free) + cluster.all.all_reduce.at(131072), 1e-12);
}

TEST(ScenarioSpmd, HierarchicalIsNotAnSpmdAlgorithm) {
  write_file("mlp2.yaml", kTwoWeights);
  const auto errors = diagnostics_thrown_by(
      [] { (void)load(kTwoNodes + "  graph: mlp2.yaml\n  collective_algorithm: hierarchical\n  bucket_size: 0B\n"); });
  expect_errors(errors,
                {{10, 25, "an spmd workload's all-reduces run one of ring, p2p-ring, tree, direct (hierarchical needs"},
                 {11, 16, "bucket_size must be positive"}});
}

}  // namespace
}  // namespace dnnsim
