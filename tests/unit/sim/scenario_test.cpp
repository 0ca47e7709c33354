// Scenario reading: parsed values and defaults of a valid file, quantities and their units, keys and
// names with their did-you-mean, types and ranges, each error with its exact line and column
// (1-based) and message. Each YAML is written inline to a temporary file, read with load_scenario,
// and the InputError's diagnostics are checked one by one. The other sections of the format:
// scenario_errors_test.cpp, scenario_overrides_test.cpp, scenario_topology_test.cpp.
//
// Line numbers: every YAML text below starts right after R"( so that its first line is line 1; kTwoBoxBase
// (tests/support/scenario_files.hpp, kTwoBoxBase) is 12 lines long.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include <string>
#include <vector>

#include "tests/support/dapple_profiles.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workloads/data_parallel/data_parallel_kind.hpp"
#include "sim/workloads/taskgraph/taskgraph_kind.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

using namespace testing;

// ---- a valid scenario ----------------------------------------------------------------------

const std::string kValid = R"(name: valid
description: two 8-GPU boxes and a PCIe box
cluster:
  node_types:
    dgx:
      gpu: A100-80GB-SXM
      gpus_per_node: 8
      nic: {bandwidth: "200Gbps", latency: "2us", per_gpu: true}
    pcbox:
      gpu: {model: T4}
      compute_efficiency: 0.5
      gpus_per_node: 2
      host_bridge: "16GB/s"
      nic: {link: Ethernet-25G}
  nodes:
    - {type: dgx, count: 2}
    - {type: pcbox}
  interconnect: {kind: switch, latency: "1us"}
workload:
  kind: data_parallel
  model: {layers: [{forward_flops: "1GFlop", parameter_bytes: "4MB", repeat: 3}]}
  global_batch: 32
)";

TEST(Scenario, ValidScenarioParsesValuesAndDefaults) {
  const Scenario s = load(kValid);
  EXPECT_EQ(s.name, "valid");
  EXPECT_EQ(s.description, "two 8-GPU boxes and a PCIe box");

  // Nodes are numbered across groups in order; GPUs in node order.
  ASSERT_EQ(s.cluster.nodes.size(), 3u);
  EXPECT_EQ(s.cluster.nodes[2].name, "node2");
  EXPECT_EQ(s.cluster.gpu_count(), 18u);
  const std::vector<std::string> gpus = s.cluster.gpu_names();
  ASSERT_EQ(gpus.size(), 18u);
  EXPECT_EQ(gpus[0], "node0/gpu0");
  EXPECT_EQ(gpus[7], "node0/gpu7");
  EXPECT_EQ(gpus[8], "node1/gpu0");
  EXPECT_EQ(gpus[17], "node2/gpu1");
  EXPECT_EQ(s.cluster.node_of_gpu()[17], 2u);

  // Units are converted to bytes, bytes/s and seconds.
  const NodeType& dgx = s.cluster.node_types.at(0);
  EXPECT_EQ(dgx.name, "dgx");
  EXPECT_EQ(dgx.gpu.name, "A100-80GB-SXM");
  EXPECT_DOUBLE_EQ(dgx.nic_bandwidth.value(), 25e9);  // 200 Gbps = 25 GB/s
  EXPECT_DOUBLE_EQ(dgx.nic_latency.value(), 2e-6);
  EXPECT_TRUE(dgx.nic_per_gpu);
  // Defaults: an NVLink GPU sits on an NVSwitch port of its whole NVLink bandwidth; PCIe from the catalog.
  EXPECT_EQ(dgx.fabric, IntraNodeFabric::nvswitch);
  EXPECT_DOUBLE_EQ(dgx.gpu_link_bandwidth.value(), 300e9);
  EXPECT_DOUBLE_EQ(dgx.gpu_link_latency.value(), 0.6e-6);
  EXPECT_DOUBLE_EQ(dgx.pcie_bandwidth.value(), 31.508e9);
  EXPECT_DOUBLE_EQ(dgx.compute_efficiency, 1.0);
  EXPECT_FALSE(dgx.host_bridge_bandwidth.has_value());

  // A GPU without NVLink defaults to the pcie fabric, whose GPU links are its PCIe links.
  const NodeType& box = s.cluster.node_types.at(1);
  EXPECT_EQ(box.fabric, IntraNodeFabric::pcie);
  EXPECT_EQ(box.gpu.name, "T4");
  EXPECT_DOUBLE_EQ(box.gpu.memory.value(), 16.0 * 1024 * 1024 * 1024);  // 16 GiB
  EXPECT_DOUBLE_EQ(box.compute_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(box.gpu_link_bandwidth.value(), 15.754e9);
  EXPECT_DOUBLE_EQ(box.pcie_bandwidth.value(), 15.754e9);
  ASSERT_TRUE(box.host_bridge_bandwidth.has_value());
  EXPECT_DOUBLE_EQ(box.host_bridge_bandwidth->value(), 16e9);
  EXPECT_DOUBLE_EQ(box.nic_bandwidth.value(), 25e9 / 8);  // Ethernet-25G
  EXPECT_DOUBLE_EQ(box.nic_latency.value(), 10e-6);
  EXPECT_FALSE(box.nic_per_gpu);

  EXPECT_EQ(s.cluster.network.kind, InterNodeKind::single_switch);
  EXPECT_FALSE(s.cluster.network.switch_bandwidth.has_value());  // non-blocking
  EXPECT_DOUBLE_EQ(s.cluster.network.switch_latency.value(), 1e-6);

  // Workload defaults.
  const auto* spec = s.workload_as<DataParallelWorkload>();
  ASSERT_NE(spec, nullptr);
  const DataParallelConfig* dp = &spec->config;
  EXPECT_EQ(dp->global_batch, 32);
  EXPECT_EQ(dp->dtype, Dtype::fp32);
  EXPECT_DOUBLE_EQ(dp->bucket_size.value(), 25e6);
  EXPECT_TRUE(dp->overlap);
  EXPECT_EQ(dp->collective_algorithm, "");
  EXPECT_EQ(dp->optimizer, Optimizer::adam);
  EXPECT_EQ(dp->precision, Precision::fp32);
  EXPECT_EQ(dp->model.name, "model");
  ASSERT_EQ(dp->model.layers.size(), 3u);  // repeat: 3
  EXPECT_EQ(dp->model.layers[0].name, "layer0.0");
  EXPECT_EQ(dp->model.layers[2].name, "layer0.2");
  EXPECT_DOUBLE_EQ(dp->model.layers[1].forward_flops.value(), 1e9);
  EXPECT_DOUBLE_EQ(dp->model.layers[1].backward_flops.value(), 2e9);  // default: twice the forward
  EXPECT_DOUBLE_EQ(dp->model.layers[1].parameter_bytes.value(), 4e6);

  // Run, outputs and expectations.
  EXPECT_EQ(s.run.iterations, 1);
  EXPECT_EQ(s.run.seed, 1u);
  EXPECT_FALSE(s.run.collective_fidelity.has_value());
  EXPECT_EQ(s.outputs.dir, "out/valid");
  EXPECT_TRUE(s.outputs.tasks_csv);
  EXPECT_TRUE(s.outputs.trace);
  EXPECT_TRUE(s.expectations.empty());
  EXPECT_TRUE(s.network.conditions.empty());
}

TEST(Scenario, NetworkRunOutputsAndExpectationsAreRead) {
  const Scenario s = load(kTwoBoxBase + R"(network:
  conditions:
    - {links: "node*/nic", bandwidth: "1GB/s"}
    - links: "node1/nic"
      schedule: [{at: "0s", bandwidth: "10GB/s"}, {at: "50ms", bandwidth: "2GB/s"}]
      period: "100ms"
    - {links: "node0/gpu*/pcie", preemption: {mean_busy: "20ms", mean_idle: "80ms", busy_fraction: 0.25}}
  background_flows:
    - {from: node0/gpu0, to: node1/gpu1, size: "1GB", start: "1ms", interval: "10ms", count: 5}
  failures:
    - {link: "node0/nic", from: "1s", to: "2s"}
    - {host: node1/gpu0, from: "0.5s", to: "1min"}
run: {iterations: 3, seed: 42, collective_fidelity: flow}
outputs: {dir: results, tasks_csv: false, trace: false}
expect:
  - {metric: mean.iteration_time_s, value: 0.5, tolerance: "5%", source: "paper, table 2"}
  - {metric: makespan_s, value: 2, compare: at_most, tolerance: 0.1}
)");
  ASSERT_EQ(s.network.conditions.size(), 3u);
  EXPECT_EQ(s.network.conditions[0].links, "node*/nic");
  EXPECT_EQ(s.network.conditions[0].where.line, 15);
  EXPECT_DOUBLE_EQ(std::get<ConstantBandwidth>(s.network.conditions[0].model).bandwidth.value(), 1e9);
  const auto& schedule = std::get<BandwidthSchedule>(s.network.conditions[1].model);
  ASSERT_EQ(schedule.points.size(), 2u);
  EXPECT_DOUBLE_EQ(schedule.points[1].at.value(), 0.05);
  EXPECT_DOUBLE_EQ(schedule.points[1].bandwidth.value(), 2e9);
  ASSERT_TRUE(schedule.period.has_value());
  EXPECT_DOUBLE_EQ(schedule.period->value(), 0.1);
  const auto& preemption = std::get<PreemptionSpec>(s.network.conditions[2].model);
  EXPECT_DOUBLE_EQ(preemption.mean_busy.value(), 0.02);
  EXPECT_DOUBLE_EQ(preemption.mean_idle.value(), 0.08);
  EXPECT_DOUBLE_EQ(preemption.busy_fraction, 0.25);

  ASSERT_EQ(s.network.background_flows.size(), 1u);
  const BackgroundFlow& flow = s.network.background_flows[0];
  EXPECT_EQ(flow.from, "node0/gpu0");
  EXPECT_EQ(flow.to, "node1/gpu1");
  EXPECT_DOUBLE_EQ(flow.size.value(), 1e9);
  EXPECT_DOUBLE_EQ(flow.start.value(), 1e-3);
  ASSERT_TRUE(flow.interval.has_value());
  EXPECT_DOUBLE_EQ(flow.interval->value(), 0.01);
  EXPECT_EQ(flow.count, 5);

  ASSERT_EQ(s.network.failures.size(), 2u);
  EXPECT_FALSE(s.network.failures[0].is_host);
  EXPECT_EQ(s.network.failures[0].target, "node0/nic");
  EXPECT_TRUE(s.network.failures[1].is_host);
  EXPECT_EQ(s.network.failures[1].target, "node1/gpu0");
  EXPECT_DOUBLE_EQ(s.network.failures[1].to.value(), 60.0);

  EXPECT_EQ(s.run.iterations, 3);
  EXPECT_EQ(s.run.seed, 42u);
  EXPECT_EQ(s.run.collective_fidelity, CollectiveFidelity::flow);
  EXPECT_EQ(s.outputs.dir, "results");
  EXPECT_FALSE(s.outputs.tasks_csv);
  EXPECT_FALSE(s.outputs.trace);

  ASSERT_EQ(s.expectations.size(), 2u);
  EXPECT_EQ(s.expectations[0].metric, "mean.iteration_time_s");
  EXPECT_EQ(s.expectations[0].comparison, Comparison::approx);
  EXPECT_TRUE(s.expectations[0].relative);
  EXPECT_DOUBLE_EQ(s.expectations[0].tolerance, 0.05);
  EXPECT_EQ(s.expectations[0].source, "paper, table 2");
  EXPECT_EQ(s.expectations[0].where.line, 28);
  EXPECT_EQ(s.expectations[1].comparison, Comparison::at_most);
  EXPECT_FALSE(s.expectations[1].relative);
  EXPECT_DOUBLE_EQ(s.expectations[1].tolerance, 0.1);
}

TEST(Scenario, ModelFileIsReadRelativeToTheScenario) {
  (void)write_file("layers.yaml", R"(name: tiny
measured_on: V100-16GB
measured_batch: 8
layers:
  - {name: conv, forward_time: "1ms", backward_time: "2ms", parameter_bytes: "1MB"}
)");
  const Scenario s = load(edited(kTwoBoxBase, "{layers: [{forward_flops: \"1GFlop\"}]}", "{file: layers.yaml}"));
  const auto& model = s.workload_as<DataParallelWorkload>()->config.model;
  EXPECT_EQ(model.name, "tiny");
  EXPECT_EQ(model.measured_on, "V100-16GB");
  EXPECT_EQ(model.measured_batch, 8);
  ASSERT_EQ(model.layers.size(), 1u);
  ASSERT_TRUE(model.layers[0].forward_time.has_value());
  EXPECT_DOUBLE_EQ(model.layers[0].forward_time->value(), 1e-3);
}

TEST(Scenario, TaskGraphWorkloadPathIsResolvedAgainstTheScenarioDirectory) {
  const Scenario s = load(R"(name: tg
cluster:
  node_types:
    box: {gpu: H100-SXM, gpus_per_node: 4, nic: {link: IB-NDR}}
  nodes: [{type: box}]
workload: {kind: taskgraph, file: graphs/g.json}
)");
  const auto* workload = s.workload_as<TaskGraphWorkload>();
  ASSERT_NE(workload, nullptr);
  EXPECT_EQ(workload->path, (test_dir() / "graphs/g.json").string());
  EXPECT_DOUBLE_EQ(s.cluster.node_types[0].nic_bandwidth.value(), 50e9);  // IB-NDR: 400 Gbps
}

// ---- quantities ------------------------------------------------------------------------------

TEST(ScenarioErrors, UnitLessNonZeroQuantity) {
  // Line 7: `      nic: {bandwidth: 25, latency: "5us"}`
  expect_errors(errors_of(edited(kTwoBoxBase, "\"25Gbps\"", "25")),
                {{7, 24, "\"25\" has no unit; a bandwidth needs one of"}});
}

TEST(Scenario, FabricDefaultsFollowTheGpusNvlink) {
  // V100 SXM2 has board-level NVLink: NVSwitch by default. An RTX 3090's NVLink bridges only a pair
  // of cards, and a T4 has none: both default to PCIe, with the GPU link from the PCIe catalog entry.
  for (const auto& [gpu, fabric] :
       {std::pair{"V100-16GB", IntraNodeFabric::nvswitch}, std::pair{"RTX3090", IntraNodeFabric::pcie},
        std::pair{"T4", IntraNodeFabric::pcie}}) {
    const Scenario s = load(edited(kTwoBoxBase, "V100-16GB", gpu));
    EXPECT_EQ(s.cluster.node_types[0].fabric, fabric) << gpu;
  }
}

TEST(Scenario, ZooModelWithOptions) {
  const Scenario s = load(edited(kTwoBoxBase, "{layers: [{forward_flops: \"1GFlop\"}]}", "{zoo: bert-base, seq: 128}"));
  const auto& model = s.workload_as<DataParallelWorkload>()->config.model;
  EXPECT_EQ(model.name, "bert-base");
  EXPECT_GT(model.layers.size(), 12u);  // embeddings, 12 blocks' layers, head
  EXPECT_EQ(model.weight_layout, WeightLayout::in_out);

  EXPECT_EQ(
      load(edited(kTwoBoxBase, "{layers: [{forward_flops: \"1GFlop\"}]}", "{zoo: bert-base, weight_layout: out_in}"))
          .workload_as<DataParallelWorkload>()
          ->config.model.weight_layout,
      WeightLayout::out_in);
}

TEST(ScenarioErrors, UnknownWeightLayout) {
  expect_errors(errors_of(edited(kTwoBoxBase, "{layers: [{forward_flops: \"1GFlop\"}]}",
                                 "{zoo: bert-base, weight_layout: pytorch}")),
                {{11, 42, "unknown weight layout 'pytorch'; expected one of: in_out, out_in"}});
}

TEST(ScenarioErrors, UnknownZooModel) {
  expect_errors(errors_of(edited(kTwoBoxBase, "{layers: [{forward_flops: \"1GFlop\"}]}", "{zoo: bert-bse}")),
                {{11, 16, "unknown model 'bert-bse'; did you mean 'bert-base'?"}});
}

TEST(Scenario, ProfileGraphModel) {
  // The DAPPLE artifact's VGG-19 profile: 26 layers, micro-batch 32 from the file name.
  const std::string profile = testing::dapple_profile("vgg-19-pbs-32.txt");
  const Scenario s =
      load(edited(kTwoBoxBase, "{layers: [{forward_flops: \"1GFlop\"}]}", "{profile: \"" + profile + "\"}"));
  const auto& model = s.workload_as<DataParallelWorkload>()->config.model;
  EXPECT_EQ(model.layers.size(), 26u);
  EXPECT_EQ(model.measured_on, "V100-16GB");
  EXPECT_EQ(model.measured_batch, 32);
}

// A refused measured_batch is one error: a profile whose file name gives no micro-batch is not also read
// without one ("no micro-batch size").
TEST(ScenarioErrors, ARefusedMeasuredBatchIsOneError) {
  std::ifstream shipped(testing::dapple_profile("vgg-19-pbs-32.txt"));
  const std::string profile = write_file("vgg19.txt", std::string(std::istreambuf_iterator<char>(shipped), {}));
  const std::string model = "{profile: \"" + profile + "\", measured_batch: 32x}";
  // Line 11 "  model: {profile: "…", measured_batch: 32x}": the value after the key.
  const int column = static_cast<int>(("  model: " + model).find("32x")) + 1;
  expect_errors(errors_of(edited(kTwoBoxBase, "{layers: [{forward_flops: \"1GFlop\"}]}", model)),
                {{11, column, "expected an integer"}});
}

TEST(Scenario, CalibrationTablesAttachToTheirGpu) {
  // kTwoBoxBase has V100-16GB nodes, which have a shipped table.
  const Scenario shipped = load(kTwoBoxBase + "calibration: shipped\n");
  ASSERT_NE(shipped.cluster.node_types[0].calibration, nullptr);
  EXPECT_EQ(shipped.cluster.node_types[0].calibration->device, "V100-16GB");
  EXPECT_EQ(load(kTwoBoxBase).cluster.node_types[0].calibration, nullptr);
}

TEST(ScenarioErrors, CalibrationTableForAnotherGpuOrWithComputeEfficiency) {
  write_file("a100.yaml", R"(device: A100-80GB-SXM
source: test
peak: {fp32: "19.5TFlops"}
memory_bandwidth: "2039GB/s"
)");
  expect_errors(errors_of(kTwoBoxBase + "calibration: a100.yaml\n"),
                {{13, 14, "the calibration table for 'A100-80GB-SXM' matches no node type's GPU"}});

  expect_errors(errors_of(edited(kTwoBoxBase, "gpus_per_node: 2", "gpus_per_node: 2\n      compute_efficiency: 0.5") +
                          "calibration: shipped\n"),
                {{14, 14, "node type 'box' sets compute_efficiency, which a calibration table replaces"}});
}

TEST(Scenario, ZeroNeedsNoUnit) {
  const Scenario s = load(edited(kTwoBoxBase, "\"5us\"", "0"));
  EXPECT_DOUBLE_EQ(s.cluster.node_types[0].nic_latency.value(), 0.0);
}

TEST(ScenarioErrors, WrongUnit) {
  // Line 7: `      nic: {bandwidth: "25Gbps", latency: "5GB"}`; the column is the opening quote.
  expect_errors(errors_of(edited(kTwoBoxBase, "\"5us\"", "\"5GB\"")),
                {{7, 43, "unknown unit \"GB\" for a duration; expected one of: s, ms"}});
}

TEST(Scenario, BitsAreNotBytes) {
  // "Mb" is a megabit and "MB" a megabyte: both are valid sizes, eight times apart.
  std::string yaml = kTwoBoxBase;
  yaml += "network:\n  background_flows:\n    - {from: node0/gpu0, to: node1/gpu0, size: \"8Mb\"}\n";
  EXPECT_DOUBLE_EQ(load(yaml).network.background_flows[0].size.value(), 1e6);
}

// ---- keys and names ----------------------------------------------------------------------------

TEST(ScenarioErrors, UnknownKeyWithDidYouMean) {
  // The typo is the mistake: it names the required key it misspells, which is therefore not also
  // reported missing.
  expect_errors(errors_of(edited(kTwoBoxBase, "gpus_per_node", "gpus_per_nod")),
                {{6, 7, "unknown key 'gpus_per_nod' in node type 'box'; did you mean 'gpus_per_node'?"}});
  // A required key absent with no key that misspells it is missing.
  expect_errors(
      errors_of(edited(kTwoBoxBase, "gpus_per_node", "cpus")),
      {{5, 7, "missing key 'gpus_per_node' in node type 'box'"}, {6, 7, "unknown key 'cpus' in node type 'box'"}});
}

// After errors in the cluster, what the workload and the network name is not judged against the
// cluster the errors left: with the misspelt count's default of one node, node1/gpu0 would be "no GPU".
TEST(ScenarioErrors, AMisspeltClusterKeyIsOneError) {
  std::string yaml = edited(kTwoBoxBase, "count: 2", "coun: 2");
  yaml += "network:\n  background_flows:\n    - {from: node0/gpu0, to: node1/gpu0, size: \"8MB\"}\n";
  expect_errors(errors_of(yaml), {{8, 23, "unknown key 'coun' in a node group; did you mean 'count'?"}});
}

// A misspelt interconnect kind is the one error: the keys of the kind it names are not unknown too.
TEST(ScenarioErrors, AMisspeltInterconnectKindIsOneError) {
  const std::string yaml =
      edited(kTwoBoxBase, "  nodes: [", "  interconnect: {kin: leaf_spine, nodes_per_leaf: 1, spines: 2}\n  nodes: [");
  expect_errors(errors_of(yaml), {{8, 18, "unknown key 'kin' in the interconnect; did you mean 'kind'?"}});
}

// `latency:5us` without a space is one key with no value in YAML: the error says so and names the key it
// begins with, which is therefore not also missing ("nic needs … both 'bandwidth' and 'latency'").
TEST(ScenarioErrors, AKeyRunTogetherWithItsValueIsOneError) {
  // Line 7: `      nic: {bandwidth: "25Gbps", latency:5us}`; the key starts at column 34.
  expect_errors(errors_of(edited(kTwoBoxBase, "latency: \"5us\"", "latency:5us")),
                {{7, 34,
                  "unknown key 'latency:5us' in the NIC of node type 'box'; did you mean 'latency: 5us'? (YAML "
                  "needs a space after the colon)"}});
}

// An unknown GPU leaves the links it would have supplied (its PCIe generation) unknown: a pcie section
// that overrides only their latency is not also incomplete.
TEST(ScenarioErrors, AnUnknownGpuIsNotAlsoEveryLinkItWouldSupply) {
  const std::string yaml = edited(edited(kTwoBoxBase, "gpu: V100-16GB", "gpu: V100-16GBx"),
                                  "      nic:", "      pcie: {latency: \"0s\"}\n      nic:");
  expect_errors(errors_of(yaml), {{5, 12, "unknown GPU model 'V100-16GBx'; did you mean 'V100-16GB'?"}});
}

// A misspelt gpu key leaves those links unknown too (line 5, the key at column 7).
TEST(ScenarioErrors, AMisspeltGpuKeyIsNotAlsoEveryLinkItWouldSupply) {
  const std::string yaml = edited(edited(kTwoBoxBase, "gpu: V100-16GB", "gp: V100-16GB"),
                                  "      nic:", "      pcie: {latency: \"0s\"}\n      nic:");
  expect_errors(errors_of(yaml), {{5, 7, "unknown key 'gp' in node type 'box'; did you mean 'gpu'?"}});
}

TEST(ScenarioErrors, UnknownOptionalKeyIsTheOnlyError) {
  expect_errors(errors_of(kTwoBoxBase + "run: {iterations: 2, sed: 3}\n"),
                {{13, 22, "unknown key 'sed' in run; did you mean 'seed'?"}});
}

TEST(ScenarioErrors, UnknownTopLevelKey) {
  expect_errors(errors_of(kTwoBoxBase + "outptus: {dir: x}\n"),
                {{13, 1, "unknown key 'outptus' in the scenario; did you mean 'outputs'?"}});
}

// kTwoBoxBase on one GPU per node (a batch of 2, one sample each) whose GPU, line 5 from column 12, is `gpu`.
std::string one_gpu_nodes_of(const std::string& gpu) {
  std::string yaml = kTwoBoxBase;
  yaml.replace(yaml.find("V100-16GB"), 9, gpu);
  yaml.replace(yaml.find("gpus_per_node: 2"), 16, "gpus_per_node: 1");
  yaml.replace(yaml.find("global_batch: 4"), 15, "global_batch: 2");
  return yaml;
}

TEST(ScenarioErrors, UnknownGpuModelWithSuggestion) {
  expect_errors(errors_of(one_gpu_nodes_of("V100-32G")),
                {{5, 12, "unknown GPU model 'V100-32G'; did you mean 'V100-32GB'?"}});
}

TEST(ScenarioErrors, UnknownGpuModelInAMultiGpuNodeIsOneError) {
  // No follow-on "GPU  has no NVLink" error for the GPU that could not be found.
  expect_errors(errors_of(edited(kTwoBoxBase, "V100-16GB", "V100-32G")),
                {{5, 12, "unknown GPU model 'V100-32G'; did you mean 'V100-32GB'?"}});
}

TEST(ScenarioErrors, GpuMapNeedsAModel) {
  expect_errors(errors_of(one_gpu_nodes_of("{memory: \"8GiB\"}")), {{5, 12, "missing key 'model' in a GPU"}});
}

TEST(Scenario, GpuOverridesReplaceCatalogFields) {
  // Regression: read_gpu once assigned a yaml-cpp node handle (operator= rewrites the tree node in
  // place), which turned the GPU mapping into the scalar "T4" and silently dropped every override.
  const Scenario s =
      load(edited(kTwoBoxBase, "gpu: V100-16GB",
                  "gpu: {model: T4, memory: \"8GiB\", memory_bandwidth: \"1TB/s\", nvlink_bandwidth: \"50GB/s\",\n"
                  "             peak_fp32: \"10TFlops\", peak_tf32: \"20TFlops\", peak_fp16: \"50TFlops\",\n"
                  "             peak_bf16: \"40TFlops\", peak_fp8: \"80TFlops\", peak_mxfp8: \"70TFlops\"}\n"
                  "      fabric: pcie"));
  const GpuSpec& gpu = s.cluster.node_types[0].gpu;
  EXPECT_EQ(gpu.name, "T4");
  EXPECT_DOUBLE_EQ(gpu.memory.value(), 8.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(gpu.memory_bandwidth.value(), 1e12);
  EXPECT_DOUBLE_EQ(gpu.nvlink_bandwidth.value(), 50e9);
  ASSERT_TRUE(gpu.peak_fp32 && gpu.peak_tf32 && gpu.peak_fp16 && gpu.peak_bf16 && gpu.peak_fp8 && gpu.peak_mxfp8);
  EXPECT_DOUBLE_EQ(gpu.peak_fp32->value(), 10e12);
  EXPECT_DOUBLE_EQ(gpu.peak_tf32->value(), 20e12);  // a mode the T4 lacks, added by the override
  EXPECT_DOUBLE_EQ(gpu.peak_fp16->value(), 50e12);
  EXPECT_DOUBLE_EQ(gpu.peak_bf16->value(), 40e12);
  EXPECT_DOUBLE_EQ(gpu.peak_fp8->value(), 80e12);
  EXPECT_DOUBLE_EQ(gpu.peak_mxfp8->value(), 70e12);  // the MX formats, which the T4 lacks
}

TEST(ScenarioErrors, UnknownGpuOverrideKey) {
  // Regression, same cause as GpuOverridesReplaceCatalogFields: a misspelt override went unreported.
  // Line 5: `      gpu: {model: V100-16GB, memroy_bandwidth: "1TB/s"}`
  expect_errors(
      errors_of(edited(kTwoBoxBase, "gpu: V100-16GB", "gpu: {model: V100-16GB, memroy_bandwidth: \"1TB/s\"}")),
      {{5, 31, "unknown key 'memroy_bandwidth' in a GPU; did you mean 'memory_bandwidth'?"}});
}

TEST(ScenarioErrors, UnknownCatalogLink) {
  const auto errors = errors_of(edited(kTwoBoxBase, "{bandwidth: \"25Gbps\", latency: \"5us\"}", "{link: IB-HRD}"));
  const auto it = std::find_if(errors.begin(), errors.end(),
                               [](const Diagnostic& d) { return d.message.find("unknown link") != std::string::npos; });
  ASSERT_NE(it, errors.end()) << dump(errors);  // and nothing else: see UnknownCatalogLinkIsOneError
  expect_error(*it, 7, 19, "unknown link 'IB-HRD'; did you mean 'IB-HDR'?");
}

TEST(ScenarioErrors, UnknownCatalogLinkIsOneError) {
  expect_errors(errors_of(edited(kTwoBoxBase, "{bandwidth: \"25Gbps\", latency: \"5us\"}", "{link: IB-HRD}")),
                {{7, 19, "unknown link 'IB-HRD'; did you mean 'IB-HDR'?"}});
}

// ---- types and ranges --------------------------------------------------------------------------

TEST(ScenarioErrors, ListWhereANumberIsExpected) {
  expect_errors(errors_of(edited(kTwoBoxBase, "gpus_per_node: 2", "gpus_per_node: [2]")),
                {{6, 22, "expected an integer, got a list"}});
}

TEST(ScenarioErrors, ListWhereAQuantityIsExpected) {
  expect_errors(errors_of(edited(kTwoBoxBase, "\"25Gbps\"", "[25Gbps]")),
                {{7, 24, "expected a bandwidth with a unit (bps, Mbps, Gbps"}});
}

TEST(ScenarioErrors, StringWhereANumberIsExpected) {
  expect_errors(errors_of(kTwoBoxBase + "run:\n  iterations: three\n"),
                {{14, 15, "expected an integer, got \"three\""}});
}

TEST(ScenarioErrors, ScalarWhereAMappingIsExpected) {
  expect_errors(errors_of(kTwoBoxBase + "run: 5\n"), {{13, 6, "expected a mapping for run, got \"5\""}});
}

TEST(ScenarioErrors, GpusPerNodeOutOfRange) {
  expect_errors(errors_of(edited(kTwoBoxBase, "gpus_per_node: 2", "gpus_per_node: 0")),
                {{6, 22, "expected an integer in [1, 1024], got 0"}});
}

TEST(ScenarioErrors, BusyFractionOutOfRange) {
  expect_errors(errors_of(kTwoBoxBase + R"(network:
  conditions:
    - links: "node1/nic"
      preemption: {mean_busy: "20ms", mean_idle: "80ms", busy_fraction: 1.5}
)"),
                {{16, 73, "expected a number in [0, 1], got 1.5"}});
}

TEST(ScenarioErrors, PreemptionNeedsPositiveMeans) {
  expect_errors(errors_of(kTwoBoxBase + R"(network:
  conditions:
    - links: "node1/nic"
      preemption: {mean_busy: "0s", mean_idle: "80ms", busy_fraction: 0.5}
)"),
                {{16, 31, "mean_busy must be positive"}});
}

TEST(ScenarioErrors, GlobalBatchSmallerThanTheGpuCount) {
  expect_errors(errors_of(edited(kTwoBoxBase, "global_batch: 4", "global_batch: 3")),
                {{12, 17, "global_batch 3 is smaller than the 4 GPUs of the cluster"}});
}

}  // namespace
}  // namespace dnnsim
