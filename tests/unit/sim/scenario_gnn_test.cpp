// The `kind: gnn` workload (docs/gnn.md): its keys and its errors at their line and column, without
// an engine (sim/workloads/gnn/gnn_kind.hpp). The graphs are small real slices: the first edges of
// Cora (data/graphs/planetoid/cora.edges, node ids as shipped).
//
// Line numbers: kCluster ends with "workload:" (line 8) and "  kind: gnn" (line 9, where the
// workload mapping starts, 9:3); the body given to each test starts at line 10.
#include <gtest/gtest.h>

#include <tuple>

#include "sim/scenario/scenario.hpp"
#include "sim/workloads/gnn/gnn_kind.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

using namespace testing;

// Two servers of 2 × V100-32GB and 16 cores.
const std::string kCluster = R"(name: gnn
cluster:
  node_types:
    n: {gpu: V100-32GB, gpus_per_node: 2, cpu_cores: 16, nic: {link: Ethernet-100G}}
  nodes: [{type: n, count: 2}]
  interconnect: {kind: switch, latency: "1us"}
# the workload
workload:
  kind: gnn
)";

// kCluster with its node type's "cpu_cores: 16, " replaced.
std::string cluster_with_cores(const std::string& replacement) {
  return edited(kCluster, "cpu_cores: 16, ", replacement);
}

// Five edges of Cora as shipped (ids renumbered 0…2707 in data/graphs/planetoid).
const std::string kCoraIds = "# cora\n0 633\n0 1862\n0 2582\n1 2\n1 652\n";

std::string body(const std::string& graph, const std::string& extra = "") {
  return "  graph: {file: " + graph +
         ", nodes: 2708}\n  features: {dimension: 1433}\n  fanouts: [10, 5]\n"
         "  batch_size: 64\n  model: {layer: sage, hidden: 16, classes: 7}\n" +
         extra;
}

TEST(ScenarioGnn, ReadsEveryKey) {
  const std::string graph = write_file("cora.edges", kCoraIds);
  const Scenario s =
      load(kCluster +
           body(graph,
                "  training_nodes: 0.5\n  partitioner: metis\n  sampler: node-wise\n  ordering: {name: proximity, "
                "sequences: 3}\n"
                "  epochs: 2\n  cache: {policy: fifo, per_gpu: \"1MiB\"}\n"
                "  pipeline: {cores: isolated, queue_depth: 2, split: {sample: 8, gather: 4, copy: 1, dispatch: 2}}\n"
                "  cpu_costs: {sample_edge: \"0.2us\", gather_bandwidth: \"4GB/s\", op_dispatch: \"5us\"}\n"));
  const auto* spec = s.workload_as<GnnWorkload>();
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->node_count, 2708u);
  EXPECT_EQ(spec->setup.servers, 2u);
  EXPECT_EQ(spec->setup.gpus_per_server, 2u);
  EXPECT_EQ(spec->setup.fanouts, (std::vector<std::uint32_t>{10, 5}));
  EXPECT_EQ(spec->setup.epochs, 2u);
  EXPECT_EQ(spec->setup.ordering, "proximity");
  EXPECT_EQ(spec->setup.ordering_options.integer("sequences"), 3);
  // 1 MiB per GPU of 1,433 fp32 features (5,732 B): 182 nodes per GPU, 364 per server.
  EXPECT_EQ(spec->setup.cache_nodes_per_server, 364u);
  EXPECT_EQ(spec->split, (std::vector<std::uint32_t>{8, 4, 1, 2}));
  EXPECT_DOUBLE_EQ(spec->costs.sample_edge.value(), 0.2e-6);
  EXPECT_DOUBLE_EQ(spec->costs.gather_bandwidth.value(), 4e9);
  EXPECT_EQ(builtin_workload_kinds().at("gnn").value->check(s).substr(0, 2), "ok");
}

TEST(ScenarioGnn, BadValuesAreLocatedAllAtOnce) {
  const std::string graph = write_file("cora.edges", kCoraIds);
  // Line 10 graph, 11 features, 12 fanouts, 13 batch_size, 14 model, 15 cache, 16 pipeline.
  const auto diagnostics = diagnostics_thrown_by([&] {
    (void)load(kCluster + "  graph: {file: " + graph +
               ", nodes: 2708}\n  features: {dimension: 1433}\n  fanouts: [10, 0, -2]\n"
               "  batch_size: 64\n  model: {layer: sage, hidden: 16, classes: 7}\n"
               "  cache: {policy: fifo, per_gpu: \"40GiB\"}\n"
               "  pipeline: {split: {sample: 8, gather: 6, copy: 1, dispatch: 2}}\n");
  });
  expect_errors(diagnostics, {{12, 17, "expected an integer in [1, "},  // fan-out 0
                              {12, 20, "got -2"},
                              {15, 34, "the cache takes 40 GiB per GPU, more than the 32 GiB of a V100-32GB"},
                              {16, 21, "the split takes 17 cores, but a node has 16"}});
}

// Partitioners, samplers and cache policies are registry entries: their options are declared and read by the
// shared reader (models/common/option_reader.hpp). Lines: the body's five lines end at 14; the extra
// keys are 15 (partitioner), 16 (sampler) and 17 (cache).
TEST(ScenarioGnn, EntriesTakeTheirDeclaredOptions) {
  const std::string graph = write_file("cora.edges", kCoraIds);
  const Scenario s = load(kCluster + body(graph,
                                          "  partitioner: {name: bfs-block, blocks_per_part: 4, slack: 1.2}\n"
                                          "  sampler: {name: layer-wise}\n  cache: {policy: none}\n"));
  const auto* spec = s.workload_as<GnnWorkload>();
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->partitioner, "bfs-block");
  EXPECT_EQ(spec->partitioner_options.integer("blocks_per_part"), 4);
  EXPECT_DOUBLE_EQ(spec->partitioner_options.number("slack"), 1.2);
  EXPECT_EQ(spec->setup.sampler, "layer-wise");
  // Defaults when the partitioner is named alone: METIS 5's own imbalance tolerance (ufactor 30).
  const Scenario metis = load(kCluster + body(graph, "  partitioner: metis\n"));
  EXPECT_DOUBLE_EQ(metis.workload_as<GnnWorkload>()->partitioner_options.number("imbalance"), 1.03);

  const auto diagnostics = diagnostics_thrown_by([&] {
    (void)load(kCluster + body(graph,
                               "  partitioner: {name: metis, slack: 1.1, imbalance: 9}\n"
                               "  sampler: {name: node-wise, sequences: 2}\n"
                               "  cache: {policy: none, fraction: 0.1}\n"));
  });
  expect_errors(diagnostics, {{15, 30, "partitioner 'metis' has no option 'slack' (an option of bfs-block)"},
                              {15, 53, "expected a number in [1.001, 3]"},
                              {16, 30, "sampler 'node-wise' has no option 'sequences'; it has no options"},
                              {17, 35, "cache policy 'none' keeps no features in GPU memory: give it no size"}});
}

// A misspelt cache policy is one error at it: its size is not also judged against the default policy
// ('none', which holds no features) put in its place. Line 15: `  cache: {policy: fifx, per_gpu: "1MiB"}`.
TEST(ScenarioGnn, AnUnknownCachePolicyIsOneError) {
  const std::string graph = write_file("cora.edges", kCoraIds);
  const auto diagnostics = diagnostics_thrown_by(
      [&] { (void)load(kCluster + body(graph, "  cache: {policy: fifx, per_gpu: \"1MiB\"}\n")); });
  expect_errors(diagnostics, {{15, 19, "unknown cache policy 'fifx'; did you mean 'fifo'?"}});
}

// An unknown or misspelt generator is one error: an rmat's `edges` is not also an unknown key of the
// graph section (line 10: `  graph: {generate: rmatt, …}`, the value at column 21, the key at 11).
TEST(ScenarioGnn, AnUnknownGeneratorIsOneError) {
  for (const auto& [graph, column, message] :
       {std::tuple{"{generate: rmatt, nodes: 2708, edges: 10000}", 21, "unknown graph generator 'rmatt'"},
        std::tuple{"{generat: rmat, nodes: 2708, edges: 10000}", 11,
                   "unknown key 'generat' in the graph section; did you mean 'generate'?"}}) {
    std::string yaml = kCluster + body("GRAPH");
    yaml.replace(yaml.find("{file: GRAPH, nodes: 2708}"), 26, graph);
    expect_errors(diagnostics_thrown_by([&] { (void)load(yaml); }), {{10, column, message}});
  }
}

// The pipeline has no failure model: a failure window is refused at its key (line 16: the body's
// five lines end at 14, `network:` is 15), not left to cut a transfer and end the epoch.
TEST(ScenarioGnn, FailureWindowsAreRefused) {
  const std::string graph = write_file("cora.edges", kCoraIds);
  const auto diagnostics = diagnostics_thrown_by(
      [&] { (void)load(kCluster + body(graph) + "network:\n  failures: [{link: node1/nic, from: 1s, to: 2s}]\n"); });
  expect_errors(diagnostics, {{16, 13, "the gnn pipeline has no failure model"}});
}

TEST(ScenarioGnn, GraphFileErrorsKeepTheirLineAndColumn) {
  // Line 3 has a letter where an id should be; line 4 an id beyond `nodes: 2708`.
  const std::string graph = write_file("bad.edges", "# cora\n0 633\n0 x1\n0 2708\n");
  const auto diagnostics = diagnostics_thrown_by([&] { (void)load(kCluster + body(graph)); });
  ASSERT_EQ(diagnostics.size(), 2u) << dump(diagnostics);
  EXPECT_EQ(diagnostics[0].location.file, graph);
  expect_error(diagnostics[0], 3, 3, "not a node id");
  expect_error(diagnostics[1], 4, 3, "out of range");
}

TEST(ScenarioGnn, NodesNeedCpuCores) {
  const std::string graph = write_file("cora.edges", kCoraIds);
  const std::string cluster = cluster_with_cores("");
  const auto diagnostics = diagnostics_thrown_by([&] {
    (void)load(cluster + "  graph: {file: " + graph +
               "}\n  features: {dimension: 8}\n"
               "  fanouts: [2]\n  batch_size: 4\n  model: {classes: 2}\n");
  });
  expect_errors(diagnostics, {{9, 3, "node type 'n' has no cpu_cores"}});
}

// A cpu_cores refused where it is written (line 4, the value at column 54) is the one error: the
// workload's checks of the cores (none given, too few to isolate) skip it.
TEST(ScenarioGnn, ARefusedCpuCoresIsTheOneError) {
  const std::string graph = write_file("cora.edges", kCoraIds);
  const auto diagnostics =
      diagnostics_thrown_by([&] { (void)load(cluster_with_cores("cpu_cores: -1, ") + body(graph)); });
  expect_errors(diagnostics, {{4, 54, "expected an integer in [1, 65536], got -1"}});
}

TEST(ScenarioGnn, IsolationNeedsACorePerRole) {
  const std::string graph = write_file("cora.edges", kCoraIds);
  // Isolation needs a core for each of the four roles: 3 cores do not do, unless the pool is shared.
  const std::string small = cluster_with_cores("cpu_cores: 3, ");
  const auto diagnostics = diagnostics_thrown_by([&] { (void)load(small + body(graph)); });
  expect_errors(
      diagnostics,
      {{9, 3,
        "isolated stages (the default) need 4 cores per node (sample, gather, copy, dispatch), the nodes have 3"}});
  EXPECT_NO_THROW((void)load(small + body(graph, "  pipeline: {cores: shared}\n")));
}

// The interference model is a registry entry (models/gnn/cpu_interference.hpp) whose options the
// shared reader checks; the memory bandwidth it shares is the node type's. Lines: the node type is
// line 4, `pipeline:` line 15 (the body's five lines end at 14).
TEST(ScenarioGnn, InterferenceModelTakesTheNodesMemoryBandwidth) {
  const std::string graph = write_file("cora.edges", kCoraIds);
  const std::string cluster = cluster_with_cores("cpu_cores: 16, cpu_memory_bandwidth: \"26GB/s\", ");
  const Scenario s =
      load(cluster + body(graph, "  pipeline: {interference: {name: measured, gather_time_sliced: 0.9}}\n"));
  const auto* spec = s.workload_as<GnnWorkload>();
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->interference, "measured");
  EXPECT_DOUBLE_EQ(spec->memory_bandwidth->value(), 26e9);
  const gnn::CpuInterference& model = spec->interference_model;
  EXPECT_TRUE(model.enabled);
  EXPECT_DOUBLE_EQ(model.time_sliced[static_cast<int>(gnn::CpuRole::gather)], 0.9);
  EXPECT_DOUBLE_EQ(model.time_sliced[static_cast<int>(gnn::CpuRole::sample)], 0.73);  // the fitted default
  const Scenario without = load(kCluster + body(graph));
  const auto* plain = without.workload_as<GnnWorkload>();
  EXPECT_EQ(plain->interference, "none");
  EXPECT_FALSE(plain->interference_model.enabled);

  const auto diagnostics = diagnostics_thrown_by([&] {
    (void)load(cluster_with_cores("cpu_cores: 16, cpu_memory_bandwidth: \"0GB/s\", ") +
               body(graph, "  pipeline: {interference: {name: measured, sample_time_sliced: 1.5}}\n"));
  });
  // The zero bandwidth is the one error about it: the model is not also told it has none to share.
  expect_errors(diagnostics,
                {{4, 80, "cpu_memory_bandwidth must be positive"}, {15, 65, "expected a number in [0.05, 1]"}});
  const auto missing =
      diagnostics_thrown_by([&] { (void)load(kCluster + body(graph, "  pipeline: {interference: measured}\n")); });
  expect_errors(missing, {{15, 28, "give the node types `cpu_memory_bandwidth`"}});
}

TEST(ScenarioGnn, GeneratedGraphOverTheMemoryBudgetIsRefused) {
  // 10^9 drawn edges need about 24 GB (24 B each), over a budget of 1 GiB: refused at the budget's
  // line (line 15, after the five lines of the workload) before anything is generated; 10^6 edges
  // (24 MB) fit. 24 × 10^9 + 64 × 10^5 B = 22.36 GiB.
  const std::string workload =
      "  graph: {generate: rmat, nodes: 100000, edges: EDGES}\n  features: {dimension: 8}\n"
      "  fanouts: [2]\n  batch_size: 4\n  model: {classes: 2}\nrun: {memory_budget: \"1GiB\"}\n";
  const auto with = [&](const std::string& edges) { return load(kCluster + edited(workload, "EDGES", edges)); };
  const WorkloadKind& kind = *builtin_workload_kinds().at("gnn").value;
  const Scenario big = with("1000000000");
  const auto diagnostics = diagnostics_thrown_by([&] { (void)kind.check(big); });
  expect_errors(
      diagnostics,
      {{15, 22, "rmat graph of 100000 nodes and about 1000000000 edges would need about 22.36 GiB of memory"}});
  EXPECT_EQ(kind.check(with("1000000")).substr(0, 2), "ok");
}

TEST(ScenarioGnn, PowerLawGraphIsSizedFromItsCredits) {
  // PLOD with α = 2 and β = 10^9 on 10^6 nodes draws β·Σ_{x≤10^6} x^−2 / 2 ≈ 10^9 × 1.6449 / 2 =
  // 8.2 × 10^8 edges: about 18.4 GiB (24 B each), refused under a 1 GiB budget.
  const Scenario s = load(kCluster +
                          "  graph: {generate: power_law, nodes: 1000000, alpha: 2, beta: 1000000000}\n"
                          "  features: {dimension: 8}\n  fanouts: [2]\n  batch_size: 4\n  model: {classes: 2}\n"
                          "run: {memory_budget: \"1GiB\"}\n");
  const auto diagnostics = diagnostics_thrown_by([&] { (void)builtin_workload_kinds().at("gnn").value->check(s); });
  ASSERT_EQ(diagnostics.size(), 1u) << dump(diagnostics);
  EXPECT_NE(diagnostics[0].message.find("about 8224665"), std::string::npos) << dump(diagnostics);
}

}  // namespace
}  // namespace dnnsim
