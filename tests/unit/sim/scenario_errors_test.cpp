// Scenario reading, continued (scenario_test.cpp): the data-parallel window, the cluster's structure,
// network conditions, the workload section, expectations and lists, each error with its exact line,
// column and message, and every error of a file reported at once.
//
// Line numbers: every YAML text below starts right after R"( so that its first line is line 1; kTwoBoxBase
// (tests/support/scenario_files.hpp, kTwoBoxBase) is 12 lines long.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"
#include "sim/workloads/data_parallel/data_parallel_kind.hpp"
#include "sim/workloads/workload_kind.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

using namespace testing;

// ---- data_parallel_fidelity (docs/collectives.md, "Symmetric windows") ---------------------------

// kTwoBoxBase on `nodes` nodes with `batch` samples and `keys` appended to the workload (line 13 on).
std::string replicated(int nodes, int batch, const std::string& keys) {
  std::string yaml = kTwoBoxBase;
  yaml.replace(yaml.find("count: 2"), 8, "count: " + std::to_string(nodes));
  yaml.replace(yaml.find("global_batch: 4"), 15, "global_batch: " + std::to_string(batch));
  return yaml + keys;
}

// 8 nodes of 2 GPUs on one switch, 2 samples each: the window is the GPUs of 2 nodes.
TEST(Scenario, DataParallelWindowIsTwoNodesOfGpus) {
  const Scenario scenario = load(replicated(8, 32, "  data_parallel_fidelity: window\n"));
  const ReplicaWindow window = data_parallel_window(scenario);
  EXPECT_EQ(window.replicas, 4);
  EXPECT_TRUE(window.problems.empty());
  const TaskGraph graph = *builtin_workload_kinds().at("data_parallel").value->lower(scenario);
  EXPECT_EQ(graph.mirrors().size(), 12u);  // GPUs 4 … 15 mirror GPU d mod 4
}

// `window` where a translate is not exact: 36 samples over 16 GPUs, and 3 nodes (no window of fewer
// whole nodes divides them) — both errors at the key; `auto` simulates every GPU and says why.
TEST(ScenarioErrors, DataParallelWindowThatIsNotExactIsLocated) {
  expect_errors(errors_of(replicated(8, 36, "  data_parallel_fidelity: window\n")),
                {{13, 27, "the global batch of 36 samples does not split evenly over 16 replicas"}});
  expect_errors(errors_of(replicated(3, 6, "  data_parallel_fidelity: window\n")),
                {{13, 27, "a stage spans 3 node(s): no window of fewer whole nodes divides it"}});
  const Scenario automatic = load(replicated(3, 6, "  data_parallel_fidelity: auto\n"));
  const ReplicaWindow window = data_parallel_window(automatic);
  EXPECT_EQ(window.replicas, 0);
  ASSERT_EQ(window.problems.size(), 1u);
}

// Unset, the fidelity is `auto` above kMirroringByDefaultAbove GPUs (256: 128 nodes of kTwoBoxBase's 2 GPUs)
// and every replica at or below it.
TEST(Scenario, DataParallelWindowIsTheDefaultAbove256Gpus) {
  const Scenario at_limit = load(replicated(128, 256, ""));
  EXPECT_EQ(at_limit.workload_as<DataParallelWorkload>()->replica_fidelity, ReplicaFidelity::replicas);
  EXPECT_EQ(data_parallel_window(at_limit).replicas, 0);
  const Scenario above = load(replicated(130, 260, ""));
  EXPECT_EQ(above.workload_as<DataParallelWorkload>()->replica_fidelity, ReplicaFidelity::automatic);
  EXPECT_EQ(data_parallel_window(above).replicas, 4);  // 2 nodes of 2 GPUs
  const Scenario asked = load(replicated(130, 260, "  data_parallel_fidelity: replicas\n"));
  EXPECT_EQ(data_parallel_window(asked).replicas, 0);
}

TEST(ScenarioErrors, DataParallelWindowOnALeafSpineIsLocated) {
  expect_errors(
      errors_of(edited(
          replicated(8, 32, "  data_parallel_fidelity: window\n"), "  nodes: [{type: box, count: 8}]\n",
          "  nodes: [{type: box, count: 8}]\n  interconnect: {kind: leaf_spine, nodes_per_leaf: 4, spines: 2}\n")),
      {{14, 27, "the interconnect is not one non-blocking switch"}});
}

// ---- cluster structure ---------------------------------------------------------------------------

TEST(ScenarioErrors, NodeGroupNamesAnUndefinedNodeType) {
  expect_errors(errors_of(edited(kTwoBoxBase, "{type: box, count: 2}", "{type: bx, count: 2}")),
                {{8, 18, "unknown node type 'bx'; did you mean 'box'?"}});
}

TEST(ScenarioErrors, GpuWithoutNvlinkNeedsAGpuLinkOnAnNvswitch) {
  expect_errors(errors_of(edited(kTwoBoxBase, "gpu: V100-16GB", "gpu: T4\n      fabric: nvswitch")),
                {{5, 7, "node type 'box': GPU T4 has no NVLink; set 'gpu_link' or use fabric: pcie"}});
}

TEST(ScenarioErrors, HostBridgeNeedsThePcieFabric) {
  expect_errors(errors_of(edited(kTwoBoxBase, "gpus_per_node: 2", "gpus_per_node: 2\n      host_bridge: \"16GB/s\"")),
                {{7, 20, "'host_bridge' applies to fabric: pcie only"}});
}

TEST(ScenarioErrors, MissingClusterAndNic) {
  // No cluster at all.
  const std::string no_cluster = R"(name: nothing
workload:
  kind: data_parallel
  model: {layers: [{forward_flops: "1GFlop"}]}
  global_batch: 4
)";
  expect_errors(errors_of(no_cluster), {{1, 1, "missing key 'cluster' in the scenario"}});

  // A node type without a NIC.
  expect_errors(errors_of(edited(kTwoBoxBase, "      nic: {bandwidth: \"25Gbps\", latency: \"5us\"}\n", "")),
                {{5, 7, "missing key 'nic' in node type 'box'"}});
}

TEST(ScenarioErrors, LeafSpineNeedsItsSizes) {
  // Line 9: `  interconnect: {kind: leaf_spine, spines: 2, bandwidth: "1GB/s"}`
  expect_errors(
      errors_of(edited(
          kTwoBoxBase, "  nodes: [{type: box, count: 2}]\n",
          "  nodes: [{type: box, count: 2}]\n  interconnect: {kind: leaf_spine, spines: 2, bandwidth: \"1GB/s\"}\n")),
      {{9, 17, "missing key 'nodes_per_leaf' in the interconnect"},
       {9, 47, "unknown key 'bandwidth' in the interconnect"}});
}

// ---- network conditions ------------------------------------------------------------------------

TEST(ScenarioErrors, LinkPatternMatchingNoLinkWithSuggestion) {
  expect_errors(errors_of(kTwoBoxBase + R"(network:
  conditions:
    - {links: "node1/nik", bandwidth: "1GB/s"}
)"),
                {{15, 15, "links pattern 'node1/nik' matches no link of the cluster; did you mean 'node1/nic'?"}});
}

TEST(Scenario, GlobsMatchAcrossSlashes) {
  // fnmatch without FNM_PATHNAME: '*' also matches '/', so "*nic" names every NIC.
  const Scenario s = load(kTwoBoxBase + R"(network:
  conditions:
    - {links: "*nic", bandwidth: "1GB/s"}
    - {links: "node?/gpu[01]/pcie", bandwidth: "1GB/s"}
)");
  EXPECT_EQ(s.network.conditions.size(), 2u);
}

TEST(ScenarioErrors, ConditionNeedsExactlyOneModel) {
  expect_errors(errors_of(kTwoBoxBase + R"(network:
  conditions:
    - {links: "node1/nic"}
    - {links: "node0/nic", bandwidth: "1GB/s", period: "1s"}
)"),
                {{15, 7, "exactly one of 'bandwidth', 'schedule', 'trace' or 'preemption'"},
                 {16, 7, "'period' applies to 'schedule' and 'trace' only"}});
}

TEST(ScenarioErrors, ScheduleTimesMustIncrease) {
  // In file order: the period's error is reported at the schedule list (line 17).
  expect_errors(errors_of(kTwoBoxBase + R"(network:
  conditions:
    - links: "node1/nic"
      schedule:
        - {at: "0s", bandwidth: "10GB/s"}
        - {at: "0s", bandwidth: "1GB/s"}
      period: "0s"
)"),
                {{17, 9, "'period' must be longer than the last schedule time"},
                 {18, 11, "schedule times must be strictly increasing"}});
}

TEST(ScenarioErrors, BandwidthTraceErrorsKeepTheirOwnFile) {
  const std::string trace = write_file("trace.csv", "time_s,bandwidth\n0,10Gbps\n1,5parsecs\n");
  const auto errors = errors_of(kTwoBoxBase + R"(network:
  conditions:
    - {links: "node1/nic", trace: trace.csv}
)");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].location.file, trace);
  EXPECT_EQ(errors[0].location.line, 3);
}

TEST(ScenarioErrors, BackgroundFlowUnknownGpuMessageNamesAGpu) {
  expect_errors(errors_of(kTwoBoxBase + R"(network:
  background_flows:
    - {from: node0/gpu9, to: node1/gpu0, size: "1GB"}
)"),
                {{15, 14, "unknown GPU 'node0/gpu9'; did you mean 'node0/gpu0'?"}});
}

TEST(ScenarioErrors, BackgroundFlowChecks) {
  expect_errors(errors_of(kTwoBoxBase + R"(network:
  background_flows:
    - {from: node0/gpu0, to: node0/gpu0, size: "1GB"}
    - {from: node0/gpu0, to: node1/gpu0, size: "1GB", count: 3}
    - {from: node0/gpu0, to: node1/gpu0, size: "1GB", interval: "0s"}
)"),
                {{15, 7, "a background flow needs two different GPUs"},
                 {16, 7, "'count' > 1 needs an 'interval'"},
                 {17, 65, "interval must be positive"}});
}

TEST(ScenarioErrors, FailureWindowEndingBeforeItStarts) {
  expect_errors(errors_of(kTwoBoxBase + R"(network:
  failures:
    - {link: "node0/nic", from: "2s", to: "1s"}
    - {host: node1/gpu1, from: "1s", to: "1s"}
)"),
                {{15, 7, "'to' must be later than 'from'"}, {16, 7, "'to' must be later than 'from'"}});
}

// A capacity or rate of zero is refused where it is written: SimGrid's max-min solver leaves a link
// of capacity 0 out (its flows would run as if it had no limit), and a GPU without a rate never ends
// a kernel. The constant link condition says what a link that carries nothing is.
TEST(ScenarioErrors, ZeroCapacitiesAndRatesAreErrors) {
  expect_errors(errors_of(R"(name: zero
cluster:
  node_types:
    box:
      gpu: {model: V100-16GB, peak_fp32: 0}
      gpus_per_node: 2
      fabric: pcie
      host_bridge: "0GB/s"
      nic: {bandwidth: "0Gbps", latency: "5us"}
  nodes: [{type: box, count: 2}]
workload:
  kind: data_parallel
  model: {layers: [{forward_flops: "1GFlop"}]}
  global_batch: 4
network:
  conditions:
    - {links: "node1/nic", bandwidth: "0GB/s"}
)"),
                {{5, 42, "peak_fp32 must be positive"},
                 {8, 20, "host_bridge must be positive"},
                 {9, 24, "bandwidth must be positive"},
                 {17, 39, "bandwidth must be positive: a link that carries nothing for the whole run is down"}});
}

// A schedule may stall a link (bandwidth 0) for a while, but one that ends at 0 with no period to
// bring the bandwidth back leaves the flows crossing it unfinished forever.
TEST(ScenarioErrors, ScheduleEndingAtZeroBandwidthNeedsSomethingAfter) {
  expect_errors(errors_of(kTwoBoxBase + R"(network:
  conditions:
    - links: "node1/nic"
      schedule: [{at: "0s", bandwidth: "1GB/s"}, {at: "1s", bandwidth: 0}]
    - links: "node1/nic"
      schedule: [{at: "0s", bandwidth: 0}, {at: "1s", bandwidth: "1GB/s"}]
    - links: "node1/nic"
      schedule: [{at: "0s", bandwidth: "1GB/s"}, {at: "1s", bandwidth: 0}]
      period: "2s"
)"),
                {{16, 17, "the bandwidth is 0 from 1 s on and nothing restores it"}});
}

// FP8 kernels need FP8 tensor cores (bf16 on a V100 runs at its fp32 rate instead: docs/scenarios.md);
// MXFP8 needs Blackwell's MX formats.
TEST(ScenarioErrors, Fp8DtypeNeedsFp8TensorCores) {
  expect_errors(errors_of(kTwoBoxBase + "  dtype: fp8\n"),
                {{13, 10, "node type 'box': V100-16GB has no FP8 tensor cores to run dtype fp8 on"}});
  std::string h100 = kTwoBoxBase;
  h100.replace(h100.find("V100-16GB"), 9, "H100-SXM");
  expect_errors(
      errors_of(h100 + "  dtype: mxfp8\n"),
      {{13, 10, "node type 'box': H100-SXM has no MXFP8 tensor cores to run dtype mxfp8 on (fp8 runs on it)"}});
  EXPECT_NO_THROW((void)load(h100 + "  dtype: fp8\n"));
}

TEST(ScenarioErrors, FailureWindowNamesOneTarget) {
  expect_errors(errors_of(kTwoBoxBase + R"(network:
  failures:
    - {link: "node0/nic", host: node0/gpu0, from: "1s", to: "2s"}
    - {link: "node9/*", from: "1s", to: "2s"}
)"),
                {{15, 7, "a failure window names exactly one of 'link' or 'host'"},
                 {16, 14, "links pattern 'node9/*' matches no link of the cluster"}});
}

TEST(ScenarioErrors, FailureWindowMissingToIsOneError) {
  expect_errors(errors_of(kTwoBoxBase + R"(network:
  failures:
    - {link: "node0/nic", from: "2s"}
)"),
                {{15, 7, "missing key 'to' in a failure window"}});
}

// ---- workload ------------------------------------------------------------------------------------

TEST(ScenarioErrors, LayerChecks) {
  // The model starts on line 12; global_batch moves to line 16.
  expect_errors(errors_of(edited(kTwoBoxBase, "{layers: [{forward_flops: \"1GFlop\"}]}", R"(
    layers:
      - {forward_time: "1ms"}
      - {forward_flops: "1GFlop", forward_time: "1ms", backward_time: "2ms"}
      - {forward_flops: "1GFlop", repeat: 0})")),
                {{12, 5, "layers with measured times need 'measured_on'"},
                 {13, 9, "give both 'forward_time' and 'backward_time', or neither"},
                 {14, 9, "give either measured times or FLOPs for a layer, not both"},
                 {15, 43, "expected an integer in [1, 100000], got 0"}});
}

// A measured_on naming no catalog GPU is the one error, not also "need 'measured_on'" (line 11 is the
// model, line 12 "    measured_on: V100-16GBx": the name at column 18).
TEST(ScenarioErrors, UnknownMeasuredOnIsOneError) {
  expect_errors(errors_of(edited(kTwoBoxBase, "{layers: [{forward_flops: \"1GFlop\"}]}", R"(
    measured_on: V100-16GBx
    layers:
      - {forward_time: "1ms", backward_time: "2ms"})")),
                {{12, 18, "unknown measured_on 'V100-16GBx'; did you mean 'V100-16GB'?"}});
}

// A misspelt measured_on, a misspelt or refused backward_time: each said where it is written, not also
// "need 'measured_on'" or "give both 'forward_time' and 'backward_time'". Lines: measured_o on 12, the
// layers on 14 and 15 (backward_tim at column 31, the -2ms at 46).
TEST(ScenarioErrors, AMisspeltOrRefusedMeasurementKeyIsOneError) {
  expect_errors(errors_of(edited(kTwoBoxBase, "{layers: [{forward_flops: \"1GFlop\"}]}", R"(
    measured_o: V100-16GB
    layers:
      - {forward_time: "1ms", backward_tim: "2ms"}
      - {forward_time: "1ms", backward_time: "-2ms"})")),
                {{12, 5, "unknown key 'measured_o' in the model; did you mean 'measured_on'?"},
                 {14, 31, "unknown key 'backward_tim' in a layer; did you mean 'backward_time'?"},
                 {15, 46, "expected a non-negative value for a duration"}});
}

// A global_batch refused where it is written (line 12, the value at column 17) is the one error, not
// also "smaller than the GPUs" for the 1 in its place.
TEST(ScenarioErrors, ARefusedGlobalBatchIsOneError) {
  expect_errors(errors_of(edited(kTwoBoxBase, "global_batch: 4", "global_batch: -1")),
                {{12, 17, "expected an integer in [1, 1073741824], got -1"}});
}

TEST(ScenarioErrors, UnknownWorkloadKindIsOneError) {
  expect_errors(errors_of(edited(kTwoBoxBase, "kind: data_parallel", "kind: data_paralel")),
                {{10, 9, "unknown workload kind 'data_paralel'; did you mean 'data_parallel'?"}});
}

TEST(ScenarioErrors, UnknownDtypeAndAlgorithm) {
  expect_errors(errors_of(kTwoBoxBase + "  dtype: fp64\n  collective_algorithm: rign\n"),
                {{13, 10, "unknown dtype 'fp64'; did you mean 'fp32'?"},
                 {14, 25, "unknown collective algorithm 'rign'; did you mean 'ring'?"}});
  // A collective algorithm is a registry entry like any other: `{name: ring}` names it too, and it
  // declares no options.
  expect_errors(errors_of(kTwoBoxBase + "  collective_algorithm: {name: ring, chunks: 4}\n"),
                {{13, 38, "collective algorithm 'ring' has no option 'chunks'; it has no options"}});
}

// ---- expectations ----------------------------------------------------------------------------------

TEST(ScenarioErrors, ExpectationChecks) {
  expect_errors(errors_of(kTwoBoxBase + R"(expect:
  - {metric: makespan_s, compare: around}
)"),
                {{14, 5, "missing key 'value' in an expectation"}, {14, 35, "unknown compare 'around'"}});
}

TEST(ScenarioErrors, BadPercentToleranceIsOneLocatedError) {
  expect_errors(errors_of(kTwoBoxBase + R"(expect:
  - {metric: makespan_s, value: 1, tolerance: "x%"}
)"),
                {{14, 47, "expected a tolerance such as \"5%\" or 0.01, got \"x%\""}});
}

// ---- lists -------------------------------------------------------------------------------------

TEST(ScenarioErrors, MappingWhereAListIsExpected) {
  expect_errors(errors_of(kTwoBoxBase + R"(network:
  conditions: {links: "node0/nic", bandwidth: "1GB/s"}
)"),
                {{14, 15, "expected a list"}});
}

TEST(ScenarioErrors, ScalarWhereAListIsExpected) {
  expect_errors(errors_of(kTwoBoxBase + R"(network:
  failures: 5
  background_flows: x
)"),
                {{14, 13, "expected a list"}, {15, 21, "expected a list"}});
}

TEST(ScenarioErrors, BackgroundFlowCountBeyondIntIsAnError) {
  expect_errors(errors_of(kTwoBoxBase + R"(network:
  background_flows:
    - {from: node0/gpu0, to: node1/gpu0, size: "1GB", interval: "1s", count: 3000000000}
)"),
                {{15, 78, "expected an integer in [1, 2147483647], got 3000000000"}});
}

// ---- several errors at once ------------------------------------------------------------------------

TEST(ScenarioErrors, EveryErrorOfTheFileIsReported) {
  const auto errors = errors_of(R"(name: many
cluster:
  node_types:
    box:
      gpu: V100-16GB
      gpus_per_node: 2
      compute_eficiency: 0.9
      nic: {bandwidth: 25, latency: "5us"}
  nodes: [{type: box, count: 2}]
workload:
  kind: data_parallel
  model: {layers: [{forward_flops: "1GFlop"}]}
  global_batch: 4
  dtype: fp64
run: {iterations: 0}
)");
  // All four, in file order (the unknown key is found after the NIC is read, but is listed first).
  ASSERT_NO_FATAL_FAILURE(expect_errors(
      errors, {{7, 7, "unknown key 'compute_eficiency' in node type 'box'; did you mean 'compute_efficiency'?"},
               {8, 24, "\"25\" has no unit"},
               {14, 10, "unknown dtype 'fp64'"},
               {15, 19, "expected an integer in [1, 1000000], got 0"}}));
  for (const Diagnostic& d : errors) EXPECT_EQ(d.location.file, (test_dir() / "scenario.yaml").string());
}

TEST(ScenarioErrors, LinkPatternsAreCheckedEvenWhenAnotherSectionHasErrors) {
  expect_errors(
      errors_of(kTwoBoxBase + R"(run: {iterations: 0}
network:
  conditions:
    - {links: "node1/nik", bandwidth: "1GB/s"}
)"),
      {{13, 19, "expected an integer in [1, 1000000], got 0"}, {16, 15, "links pattern 'node1/nik' matches no link"}});
}

TEST(ScenarioErrors, YamlSyntaxErrorIsLocated) {
  const auto errors = errors_of("name: x\ncluster: {node_types: [\n");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_GT(errors[0].location.line, 0);
  EXPECT_NE(errors[0].message.find("YAML syntax error"), std::string::npos) << dump(errors);
}

TEST(ScenarioErrors, MissingFile) {
  try {
    (void)load_scenario((test_dir() / "absent.yaml").string());
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].message, "cannot open file");
  }
}

TEST(ScenarioErrors, FormattedAsFileLineColumn) {
  const std::string yaml = edited(kTwoBoxBase, "gpus_per_node: 2", "gpus_per_node: 0");
  try {
    (void)load(yaml);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              (test_dir() / "scenario.yaml").string() + ":6:22: error: expected an integer in [1, 1024], got 0");
  }
}

}  // namespace
}  // namespace dnnsim
