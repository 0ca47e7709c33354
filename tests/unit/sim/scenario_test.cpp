// Scenario reading: parsed values and defaults of a valid file, and every kind of input error with
// its exact line and column (1-based) and message. Each YAML is written inline to a temporary file,
// read with load_scenario, and the InputError's diagnostics are checked one by one.
//
// Line numbers: every YAML text below starts right after R"( so that its first line is line 1.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/scenario/layout.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workloads/data_parallel/data_parallel_kind.hpp"
#include "sim/workloads/taskgraph/taskgraph_kind.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/scenario_files.hpp"
#include "dnnsim/source_paths.hpp"

namespace dnnsim {
namespace {

using testing::diagnostics_thrown_by;
using testing::dump;
using testing::expect_error;

using testing::load;
using testing::test_dir;
using testing::write_file;

// The diagnostics of a file that must not load.
std::vector<Diagnostic> errors_of(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return diagnostics_thrown_by([&] { (void)load(yaml, overrides); });
}

// A valid two-node cluster of 2 GPUs each, 12 lines long: text appended to it starts at line 13.
const std::string kBase = R"(name: base
cluster:
  node_types:
    box:
      gpu: V100-16GB
      gpus_per_node: 2
      nic: {bandwidth: "25Gbps", latency: "5us"}
  nodes: [{type: box, count: 2}]
workload:
  kind: data_parallel
  model: {layers: [{forward_flops: "1GFlop"}]}
  global_batch: 4
)";

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
  const Scenario s = load(kBase + R"(network:
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
  std::string yaml = kBase;
  yaml.replace(yaml.find("{layers: [{forward_flops: \"1GFlop\"}]}"), 37, "{file: layers.yaml}");
  const Scenario s = load(yaml);
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
  std::string yaml = kBase;
  yaml.replace(yaml.find("\"25Gbps\""), 8, "25");
  // Line 7: `      nic: {bandwidth: 25, latency: "5us"}`
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 7, 24, "\"25\" has no unit; a bandwidth needs one of");
}

TEST(Scenario, FabricDefaultsFollowTheGpusNvlink) {
  // V100 SXM2 has board-level NVLink: NVSwitch by default. An RTX 3090's NVLink bridges only a pair
  // of cards, and a T4 has none: both default to PCIe, with the GPU link from the PCIe catalog entry.
  for (const auto& [gpu, fabric] : {std::pair{"V100-16GB", IntraNodeFabric::nvswitch},
                                    std::pair{"RTX3090", IntraNodeFabric::pcie}, std::pair{"T4", IntraNodeFabric::pcie}}) {
    std::string yaml = kBase;
    yaml.replace(yaml.find("V100-16GB"), 9, gpu);
    const Scenario s = load(yaml);
    EXPECT_EQ(s.cluster.node_types[0].fabric, fabric) << gpu;
  }
}

TEST(Scenario, ZooModelWithOptions) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("{layers: [{forward_flops: \"1GFlop\"}]}"), 37, "{zoo: bert-base, seq: 128}");
  const Scenario s = load(yaml);
  const auto& model = s.workload_as<DataParallelWorkload>()->config.model;
  EXPECT_EQ(model.name, "bert-base");
  EXPECT_GT(model.layers.size(), 12u);  // embeddings, 12 blocks' layers, head
  EXPECT_EQ(model.weight_layout, WeightLayout::in_out);

  std::string pytorch = kBase;
  pytorch.replace(pytorch.find("{layers: [{forward_flops: \"1GFlop\"}]}"), 37,
                  "{zoo: bert-base, weight_layout: out_in}");
  EXPECT_EQ(load(pytorch).workload_as<DataParallelWorkload>()->config.model.weight_layout, WeightLayout::out_in);
}

TEST(ScenarioErrors, UnknownWeightLayout) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("{layers: [{forward_flops: \"1GFlop\"}]}"), 37, "{zoo: bert-base, weight_layout: pytorch}");
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 11, 42, "unknown weight layout 'pytorch'; expected one of: in_out, out_in");
}

TEST(ScenarioErrors, UnknownZooModel) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("{layers: [{forward_flops: \"1GFlop\"}]}"), 37, "{zoo: bert-bse}");
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 11, 16, "unknown model 'bert-bse'; did you mean 'bert-base'?");
}

TEST(Scenario, ProfileGraphModel) {
  // The DAPPLE artifact's VGG-19 profile: 26 layers, micro-batch 32 from the file name.
  const std::string profile = DNNSIM_SOURCE_DIR "/data/profiles/dapple/vgg-19-pbs-32.txt";
  std::string yaml = kBase;
  yaml.replace(yaml.find("{layers: [{forward_flops: \"1GFlop\"}]}"), 37, "{profile: \"" + profile + "\"}");
  const Scenario s = load(yaml);
  const auto& model = s.workload_as<DataParallelWorkload>()->config.model;
  EXPECT_EQ(model.layers.size(), 26u);
  EXPECT_EQ(model.measured_on, "V100-16GB");
  EXPECT_EQ(model.measured_batch, 32);
}

TEST(Scenario, CalibrationTablesAttachToTheirGpu) {
  // kBase has V100-16GB nodes, which have a shipped table.
  const Scenario shipped = load(kBase + "calibration: shipped\n");
  ASSERT_NE(shipped.cluster.node_types[0].calibration, nullptr);
  EXPECT_EQ(shipped.cluster.node_types[0].calibration->device, "V100-16GB");
  EXPECT_EQ(load(kBase).cluster.node_types[0].calibration, nullptr);
}

TEST(ScenarioErrors, CalibrationTableForAnotherGpuOrWithComputeEfficiency) {
  write_file("a100.yaml", R"(device: A100-80GB-SXM
source: test
peak: {fp32: "19.5TFlops"}
memory_bandwidth: "2039GB/s"
)");
  auto errors = errors_of(kBase + "calibration: a100.yaml\n");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 13, 14, "the calibration table for 'A100-80GB-SXM' matches no node type's GPU");

  std::string yaml = kBase;
  yaml.replace(yaml.find("gpus_per_node: 2"), 16, "gpus_per_node: 2\n      compute_efficiency: 0.5");
  errors = errors_of(yaml + "calibration: shipped\n");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 14, 14, "node type 'box' sets compute_efficiency, which a calibration table replaces");
}

TEST(Scenario, ZeroNeedsNoUnit) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("\"5us\""), 5, "0");
  const Scenario s = load(yaml);
  EXPECT_DOUBLE_EQ(s.cluster.node_types[0].nic_latency.value(), 0.0);
}

TEST(ScenarioErrors, WrongUnit) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("\"5us\""), 5, "\"5GB\"");
  // Line 7: `      nic: {bandwidth: "25Gbps", latency: "5GB"}`; the column is the opening quote.
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 7, 43, "unknown unit \"GB\" for a duration; expected one of: s, ms");
}

TEST(Scenario, BitsAreNotBytes) {
  // "Mb" is a megabit and "MB" a megabyte: both are valid sizes, eight times apart.
  std::string yaml = kBase;
  yaml += "network:\n  background_flows:\n    - {from: node0/gpu0, to: node1/gpu0, size: \"8Mb\"}\n";
  EXPECT_DOUBLE_EQ(load(yaml).network.background_flows[0].size.value(), 1e6);
}

// ---- keys and names ----------------------------------------------------------------------------

TEST(ScenarioErrors, UnknownKeyWithDidYouMean) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("gpus_per_node"), 13, "gpus_per_nod");
  const auto errors = errors_of(yaml);
  // The required key is missing (reported at the node type's mapping) and the typo is unknown.
  ASSERT_EQ(errors.size(), 2u) << dump(errors);
  expect_error(errors[0], 5, 7, "missing key 'gpus_per_node' in node type 'box'");
  expect_error(errors[1], 6, 7, "unknown key 'gpus_per_nod' in node type 'box'; did you mean 'gpus_per_node'?");
}

TEST(ScenarioErrors, UnknownOptionalKeyIsTheOnlyError) {
  const auto errors = errors_of(kBase + "run: {iterations: 2, sed: 3}\n");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 13, 22, "unknown key 'sed' in run; did you mean 'seed'?");
}

TEST(ScenarioErrors, UnknownTopLevelKey) {
  const auto errors = errors_of(kBase + "outptus: {dir: x}\n");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 13, 1, "unknown key 'outptus' in the scenario; did you mean 'outputs'?");
}

TEST(ScenarioErrors, UnknownGpuModelWithSuggestion) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("V100-16GB"), 9, "V100-32G");
  yaml.replace(yaml.find("gpus_per_node: 2"), 16, "gpus_per_node: 1");
  yaml.replace(yaml.find("global_batch: 4"), 15, "global_batch: 2");
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 5, 12, "unknown GPU model 'V100-32G'; did you mean 'V100-32GB'?");
}

TEST(ScenarioErrors, UnknownGpuModelInAMultiGpuNodeIsOneError) {
  // No follow-on "GPU  has no NVLink" error for the GPU that could not be found.
  std::string yaml = kBase;
  yaml.replace(yaml.find("V100-16GB"), 9, "V100-32G");
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 5, 12, "unknown GPU model 'V100-32G'; did you mean 'V100-32GB'?");
}

TEST(ScenarioErrors, GpuMapNeedsAModel) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("gpu: V100-16GB"), 14, "gpu: {memory: \"8GiB\"}");
  yaml.replace(yaml.find("gpus_per_node: 2"), 16, "gpus_per_node: 1");
  yaml.replace(yaml.find("global_batch: 4"), 15, "global_batch: 2");
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 5, 12, "missing key 'model' in a GPU");
}

TEST(Scenario, GpuOverridesReplaceCatalogFields) {
  // Regression: read_gpu once assigned a yaml-cpp node handle (operator= rewrites the tree node in
  // place), which turned the GPU mapping into the scalar "T4" and silently dropped every override.
  std::string yaml = kBase;
  yaml.replace(yaml.find("gpu: V100-16GB"), 14,
               "gpu: {model: T4, memory: \"8GiB\", memory_bandwidth: \"1TB/s\", nvlink_bandwidth: \"50GB/s\",\n"
               "             peak_fp32: \"10TFlops\", peak_tf32: \"20TFlops\", peak_fp16: \"50TFlops\",\n"
               "             peak_bf16: \"40TFlops\", peak_fp8: \"80TFlops\"}\n"
               "      fabric: pcie");
  const Scenario s = load(yaml);
  const GpuSpec& gpu = s.cluster.node_types[0].gpu;
  EXPECT_EQ(gpu.name, "T4");
  EXPECT_DOUBLE_EQ(gpu.memory.value(), 8.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(gpu.memory_bandwidth.value(), 1e12);
  EXPECT_DOUBLE_EQ(gpu.nvlink_bandwidth.value(), 50e9);
  ASSERT_TRUE(gpu.peak_fp32 && gpu.peak_tf32 && gpu.peak_fp16 && gpu.peak_bf16 && gpu.peak_fp8);
  EXPECT_DOUBLE_EQ(gpu.peak_fp32->value(), 10e12);
  EXPECT_DOUBLE_EQ(gpu.peak_tf32->value(), 20e12);  // a mode the T4 lacks, added by the override
  EXPECT_DOUBLE_EQ(gpu.peak_fp16->value(), 50e12);
  EXPECT_DOUBLE_EQ(gpu.peak_bf16->value(), 40e12);
  EXPECT_DOUBLE_EQ(gpu.peak_fp8->value(), 80e12);
}

TEST(ScenarioErrors, UnknownGpuOverrideKey) {
  // Regression, same cause as GpuOverridesReplaceCatalogFields: a misspelt override went unreported.
  std::string yaml = kBase;
  yaml.replace(yaml.find("gpu: V100-16GB"), 14, "gpu: {model: V100-16GB, memroy_bandwidth: \"1TB/s\"}");
  // Line 5: `      gpu: {model: V100-16GB, memroy_bandwidth: "1TB/s"}`
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 5, 31, "unknown key 'memroy_bandwidth' in a GPU; did you mean 'memory_bandwidth'?");
}

TEST(ScenarioErrors, UnknownCatalogLink) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("{bandwidth: \"25Gbps\", latency: \"5us\"}"), 37, "{link: IB-HRD}");
  const auto errors = errors_of(yaml);
  const auto it = std::find_if(errors.begin(), errors.end(),
                               [](const Diagnostic& d) { return d.message.find("unknown link") != std::string::npos; });
  ASSERT_NE(it, errors.end()) << dump(errors);  // and nothing else: see UnknownCatalogLinkIsOneError
  expect_error(*it, 7, 19, "unknown link 'IB-HRD'; did you mean 'IB-HDR'?");
}

TEST(ScenarioErrors, UnknownCatalogLinkIsOneError) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("{bandwidth: \"25Gbps\", latency: \"5us\"}"), 37, "{link: IB-HRD}");
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 7, 19, "unknown link 'IB-HRD'; did you mean 'IB-HDR'?");
}

// ---- types and ranges --------------------------------------------------------------------------

TEST(ScenarioErrors, ListWhereANumberIsExpected) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("gpus_per_node: 2"), 16, "gpus_per_node: [2]");
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 6, 22, "expected an integer, got a list");
}

TEST(ScenarioErrors, ListWhereAQuantityIsExpected) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("\"25Gbps\""), 8, "[25Gbps]");
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 7, 24, "expected a bandwidth with a unit (bps, Mbps, Gbps");
}

TEST(ScenarioErrors, StringWhereANumberIsExpected) {
  const auto errors = errors_of(kBase + "run:\n  iterations: three\n");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 14, 15, "expected an integer, got \"three\"");
}

TEST(ScenarioErrors, ScalarWhereAMappingIsExpected) {
  const auto errors = errors_of(kBase + "run: 5\n");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 13, 6, "expected a mapping for run, got \"5\"");
}

TEST(ScenarioErrors, GpusPerNodeOutOfRange) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("gpus_per_node: 2"), 16, "gpus_per_node: 0");
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 6, 22, "expected an integer in [1, 1024], got 0");
}

TEST(ScenarioErrors, BusyFractionOutOfRange) {
  const auto errors = errors_of(kBase + R"(network:
  conditions:
    - links: "node1/nic"
      preemption: {mean_busy: "20ms", mean_idle: "80ms", busy_fraction: 1.5}
)");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 16, 73, "expected a number in [0, 1], got 1.5");
}

TEST(ScenarioErrors, PreemptionNeedsPositiveMeans) {
  const auto errors = errors_of(kBase + R"(network:
  conditions:
    - links: "node1/nic"
      preemption: {mean_busy: "0s", mean_idle: "80ms", busy_fraction: 0.5}
)");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 16, 19, "mean_busy and mean_idle must be positive");
}

TEST(ScenarioErrors, GlobalBatchSmallerThanTheGpuCount) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("global_batch: 4"), 15, "global_batch: 3");
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 12, 17, "global_batch 3 is smaller than the 4 GPUs of the cluster");
}

// ---- data_parallel_fidelity (docs/collectives.md, "Symmetric windows") ---------------------------

// kBase on `nodes` nodes with `batch` samples and `keys` appended to the workload (line 13 on).
std::string replicated(int nodes, int batch, const std::string& keys) {
  std::string yaml = kBase;
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
  const auto errors = errors_of(replicated(8, 36, "  data_parallel_fidelity: window\n"));
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 13, 27, "the global batch of 36 samples does not split evenly over 16 replicas");
  const auto prime = errors_of(replicated(3, 6, "  data_parallel_fidelity: window\n"));
  ASSERT_EQ(prime.size(), 1u) << dump(prime);
  expect_error(prime[0], 13, 27, "a stage spans 3 node(s): no window of fewer whole nodes divides it");
  const Scenario automatic = load(replicated(3, 6, "  data_parallel_fidelity: auto\n"));
  const ReplicaWindow window = data_parallel_window(automatic);
  EXPECT_EQ(window.replicas, 0);
  ASSERT_EQ(window.problems.size(), 1u);
}

// Unset, the fidelity is `auto` above kMirroringByDefaultAbove GPUs (256: 128 nodes of kBase's 2 GPUs)
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
  std::string yaml = replicated(8, 32, "  data_parallel_fidelity: window\n");
  yaml.replace(yaml.find("  nodes: [{type: box, count: 8}]\n"), 33,
               "  nodes: [{type: box, count: 8}]\n  interconnect: {kind: leaf_spine, nodes_per_leaf: 4, spines: 2}\n");
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 14, 27, "the interconnect is not one non-blocking switch");
}

// ---- cluster structure ---------------------------------------------------------------------------

TEST(ScenarioErrors, NodeGroupNamesAnUndefinedNodeType) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("{type: box, count: 2}"), 21, "{type: bx, count: 2}");
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 8, 18, "unknown node type 'bx'; did you mean 'box'?");
}

TEST(ScenarioErrors, GpuWithoutNvlinkNeedsAGpuLinkOnAnNvswitch) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("gpu: V100-16GB"), 14, "gpu: T4\n      fabric: nvswitch");
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 5, 7, "node type 'box': GPU T4 has no NVLink; set 'gpu_link' or use fabric: pcie");
}

TEST(ScenarioErrors, HostBridgeNeedsThePcieFabric) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("gpus_per_node: 2"), 16, "gpus_per_node: 2\n      host_bridge: \"16GB/s\"");
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 7, 20, "'host_bridge' applies to fabric: pcie only");
}

TEST(ScenarioErrors, MissingClusterAndNic) {
  // No cluster at all.
  const std::string no_cluster = R"(name: nothing
workload:
  kind: data_parallel
  model: {layers: [{forward_flops: "1GFlop"}]}
  global_batch: 4
)";
  auto errors = errors_of(no_cluster);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 1, 1, "missing key 'cluster' in the scenario");

  // A node type without a NIC.
  std::string yaml = kBase;
  yaml.replace(yaml.find("      nic: {bandwidth: \"25Gbps\", latency: \"5us\"}\n"), 49, "");
  errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 5, 7, "missing key 'nic' in node type 'box'");
}

TEST(ScenarioErrors, LeafSpineNeedsItsSizes) {
  std::string yaml = kBase;
  yaml.replace(
      yaml.find("  nodes: [{type: box, count: 2}]\n"), 33,
      "  nodes: [{type: box, count: 2}]\n  interconnect: {kind: leaf_spine, spines: 2, bandwidth: \"1GB/s\"}\n");
  // Line 9: `  interconnect: {kind: leaf_spine, spines: 2, bandwidth: "1GB/s"}`
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 2u) << dump(errors);
  expect_error(errors[0], 9, 17, "missing key 'nodes_per_leaf' in the interconnect");
  expect_error(errors[1], 9, 47, "unknown key 'bandwidth' in the interconnect");
}

// ---- network conditions ------------------------------------------------------------------------

TEST(ScenarioErrors, LinkPatternMatchingNoLinkWithSuggestion) {
  const auto errors = errors_of(kBase + R"(network:
  conditions:
    - {links: "node1/nik", bandwidth: "1GB/s"}
)");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 15, 15,
               "links pattern 'node1/nik' matches no link of the cluster; did you mean 'node1/nic'?");
}

TEST(Scenario, GlobsMatchAcrossSlashes) {
  // fnmatch without FNM_PATHNAME: '*' also matches '/', so "*nic" names every NIC.
  const Scenario s = load(kBase + R"(network:
  conditions:
    - {links: "*nic", bandwidth: "1GB/s"}
    - {links: "node?/gpu[01]/pcie", bandwidth: "1GB/s"}
)");
  EXPECT_EQ(s.network.conditions.size(), 2u);
}

TEST(ScenarioErrors, ConditionNeedsExactlyOneModel) {
  const auto errors = errors_of(kBase + R"(network:
  conditions:
    - {links: "node1/nic"}
    - {links: "node0/nic", bandwidth: "1GB/s", period: "1s"}
)");
  ASSERT_EQ(errors.size(), 2u) << dump(errors);
  expect_error(errors[0], 15, 7, "exactly one of 'bandwidth', 'schedule', 'trace' or 'preemption'");
  expect_error(errors[1], 16, 7, "'period' applies to 'schedule' and 'trace' only");
}

TEST(ScenarioErrors, ScheduleTimesMustIncrease) {
  const auto errors = errors_of(kBase + R"(network:
  conditions:
    - links: "node1/nic"
      schedule:
        - {at: "0s", bandwidth: "10GB/s"}
        - {at: "0s", bandwidth: "1GB/s"}
      period: "0s"
)");
  ASSERT_EQ(errors.size(), 2u) << dump(errors);
  // In file order: the period's error is reported at the schedule list (line 17).
  expect_error(errors[0], 17, 9, "'period' must be longer than the last schedule time");
  expect_error(errors[1], 18, 11, "schedule times must be strictly increasing");
}

TEST(ScenarioErrors, BandwidthTraceErrorsKeepTheirOwnFile) {
  const std::string trace = write_file("trace.csv", "time_s,bandwidth\n0,10Gbps\n1,5parsecs\n");
  const auto errors = errors_of(kBase + R"(network:
  conditions:
    - {links: "node1/nic", trace: trace.csv}
)");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].location.file, trace);
  EXPECT_EQ(errors[0].location.line, 3);
}

TEST(ScenarioErrors, BackgroundFlowNamesAnUnknownGpu) {
  const auto errors = errors_of(kBase + R"(network:
  background_flows:
    - {from: node0/gpu9, to: node1/gpu0, size: "1GB"}
)");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 15, 14, "'node0/gpu9'; did you mean 'node0/gpu0'?");
}

TEST(ScenarioErrors, BackgroundFlowUnknownGpuMessageNamesAGpu) {
  const auto errors = errors_of(kBase + R"(network:
  background_flows:
    - {from: node0/gpu9, to: node1/gpu0, size: "1GB"}
)");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 15, 14, "unknown GPU 'node0/gpu9'; did you mean 'node0/gpu0'?");
}

TEST(ScenarioErrors, BackgroundFlowChecks) {
  const auto errors = errors_of(kBase + R"(network:
  background_flows:
    - {from: node0/gpu0, to: node0/gpu0, size: "1GB"}
    - {from: node0/gpu0, to: node1/gpu0, size: "1GB", count: 3}
    - {from: node0/gpu0, to: node1/gpu0, size: "1GB", interval: "0s"}
)");
  ASSERT_EQ(errors.size(), 3u) << dump(errors);
  expect_error(errors[0], 15, 7, "a background flow needs two different GPUs");
  expect_error(errors[1], 16, 7, "'count' > 1 needs an 'interval'");
  expect_error(errors[2], 17, 7, "'interval' must be positive");
}

TEST(ScenarioErrors, FailureWindowEndingBeforeItStarts) {
  const auto errors = errors_of(kBase + R"(network:
  failures:
    - {link: "node0/nic", from: "2s", to: "1s"}
    - {host: node1/gpu1, from: "1s", to: "1s"}
)");
  ASSERT_EQ(errors.size(), 2u) << dump(errors);
  expect_error(errors[0], 15, 7, "'to' must be later than 'from'");
  expect_error(errors[1], 16, 7, "'to' must be later than 'from'");
}

TEST(ScenarioErrors, FailureWindowNamesOneTarget) {
  const auto errors = errors_of(kBase + R"(network:
  failures:
    - {link: "node0/nic", host: node0/gpu0, from: "1s", to: "2s"}
    - {link: "node9/*", from: "1s", to: "2s"}
)");
  ASSERT_EQ(errors.size(), 2u) << dump(errors);
  expect_error(errors[0], 15, 7, "a failure window names exactly one of 'link' or 'host'");
  expect_error(errors[1], 16, 14, "links pattern 'node9/*' matches no link of the cluster");
}

TEST(ScenarioErrors, FailureWindowMissingToIsOneError) {
  const auto errors = errors_of(kBase + R"(network:
  failures:
    - {link: "node0/nic", from: "2s"}
)");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 15, 7, "missing key 'to' in a failure window");
}

// ---- workload ------------------------------------------------------------------------------------

TEST(ScenarioErrors, LayerChecks) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("{layers: [{forward_flops: \"1GFlop\"}]}"), 37, R"(
    layers:
      - {forward_time: "1ms"}
      - {forward_flops: "1GFlop", forward_time: "1ms", backward_time: "2ms"}
      - {forward_flops: "1GFlop", repeat: 0})");
  // The model starts on line 12; global_batch moves to line 16.
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 4u) << dump(errors);
  expect_error(errors[0], 12, 5, "layers with measured times need 'measured_on'");
  expect_error(errors[1], 13, 9, "give both 'forward_time' and 'backward_time', or neither");
  expect_error(errors[2], 14, 9, "give either measured times or FLOPs for a layer, not both");
  expect_error(errors[3], 15, 43, "expected an integer in [1, 100000], got 0");
}

TEST(ScenarioErrors, UnknownWorkloadKindIsOneError) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("kind: data_parallel"), 19, "kind: data_paralel");
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 10, 9, "unknown workload kind 'data_paralel'; did you mean 'data_parallel'?");
}

TEST(ScenarioErrors, UnknownDtypeAndAlgorithm) {
  const auto errors = errors_of(kBase + "  dtype: fp64\n  collective_algorithm: rign\n");
  ASSERT_EQ(errors.size(), 2u) << dump(errors);
  expect_error(errors[0], 13, 10, "unknown dtype 'fp64'; did you mean 'fp32'?");
  expect_error(errors[1], 14, 25, "unknown collective_algorithm 'rign'; did you mean 'ring'?");
}

// ---- expectations ----------------------------------------------------------------------------------

TEST(ScenarioErrors, ExpectationChecks) {
  const auto errors = errors_of(kBase + R"(expect:
  - {metric: makespan_s, compare: around}
)");
  ASSERT_EQ(errors.size(), 2u) << dump(errors);
  expect_error(errors[0], 14, 5, "missing key 'value' in an expectation");
  expect_error(errors[1], 14, 35, "unknown compare 'around'");
}

TEST(ScenarioErrors, BadPercentToleranceIsOneLocatedError) {
  const auto errors = errors_of(kBase + R"(expect:
  - {metric: makespan_s, value: 1, tolerance: "x%"}
)");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 14, 47, "expected a tolerance such as \"5%\" or 0.01, got \"x%\"");
}

// ---- lists -------------------------------------------------------------------------------------

TEST(ScenarioErrors, MappingWhereAListIsExpected) {
  const auto errors = errors_of(kBase + R"(network:
  conditions: {links: "node0/nic", bandwidth: "1GB/s"}
)");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 14, 15, "expected a list");
}

TEST(ScenarioErrors, ScalarWhereAListIsExpected) {
  const auto errors = errors_of(kBase + R"(network:
  failures: 5
  background_flows: x
)");
  ASSERT_EQ(errors.size(), 2u) << dump(errors);
  expect_error(errors[0], 14, 13, "expected a list");
  expect_error(errors[1], 15, 21, "expected a list");
}

TEST(ScenarioErrors, BackgroundFlowCountBeyondIntIsAnError) {
  const auto errors = errors_of(kBase + R"(network:
  background_flows:
    - {from: node0/gpu0, to: node1/gpu0, size: "1GB", interval: "1s", count: 3000000000}
)");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 15, 78, "expected an integer in [1, 2147483647], got 3000000000");
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
  ASSERT_EQ(errors.size(), 4u) << dump(errors);
  expect_error(errors[0], 7, 7,
               "unknown key 'compute_eficiency' in node type 'box'; did you mean 'compute_efficiency'?");
  expect_error(errors[1], 8, 24, "\"25\" has no unit");
  expect_error(errors[2], 14, 10, "unknown dtype 'fp64'");
  expect_error(errors[3], 15, 19, "expected an integer in [1, 1000000], got 0");
  for (const Diagnostic& d : errors) EXPECT_EQ(d.location.file, (test_dir() / "scenario.yaml").string());
}

TEST(ScenarioErrors, LinkPatternsAreCheckedEvenWhenAnotherSectionHasErrors) {
  const auto errors = errors_of(kBase + R"(run: {iterations: 0}
network:
  conditions:
    - {links: "node1/nik", bandwidth: "1GB/s"}
)");
  ASSERT_EQ(errors.size(), 2u) << dump(errors);
  expect_error(errors[0], 13, 19, "expected an integer in [1, 1000000], got 0");
  expect_error(errors[1], 16, 15, "links pattern 'node1/nik' matches no link");
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
  std::string yaml = kBase;
  yaml.replace(yaml.find("gpus_per_node: 2"), 16, "gpus_per_node: 0");
  try {
    (void)load(yaml);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              (test_dir() / "scenario.yaml").string() + ":6:22: error: expected an integer in [1, 1024], got 0");
  }
}

// ---- --set overrides -----------------------------------------------------------------------------

TEST(ScenarioOverrides, SetReplacesOrAddsValues) {
  const Scenario s = load(kBase + "run: {iterations: 2}\n",
                          {"run.iterations=7", "run.seed=9", "cluster.nodes.0.count=3", "workload.dtype=fp16",
                           "workload.global_batch=6", "cluster.node_types.box.nic.bandwidth=\"100Gbps\""});
  EXPECT_EQ(s.run.iterations, 7);        // replaced
  EXPECT_EQ(s.run.seed, 9u);             // added to an existing mapping
  EXPECT_EQ(s.cluster.gpu_count(), 6u);  // list entries by index
  EXPECT_EQ(s.workload_as<DataParallelWorkload>()->config.dtype, Dtype::fp16);
  EXPECT_DOUBLE_EQ(s.cluster.node_types[0].nic_bandwidth.value(), 12.5e9);
}

TEST(ScenarioOverrides, SetCreatesAMissingSection) {
  const Scenario s = load(kBase, {"run.iterations=7", "outputs.dir=elsewhere"});
  EXPECT_EQ(s.run.iterations, 7);
  EXPECT_EQ(s.outputs.dir, "elsewhere");
}

TEST(ScenarioOverrides, BadPaths) {
  auto errors = errors_of(kBase, {"cluster.nodes.first.count=3"});
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].location.file, "--set cluster.nodes.first.count=3");
  EXPECT_EQ(errors[0].location.line, 0);
  EXPECT_EQ(errors[0].message, "'nodes' is a list; expected an index, got 'first'");

  errors = errors_of(kBase, {"cluster.nodes.5.count=3"});
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].message, "index 5 is out of range (1 entries)");

  errors = errors_of(kBase, {"name.first=x"});
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].message, "cannot set 'name.first': 'name' is a scalar");

  errors = errors_of(kBase, {"run.iterations"});
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].message, "expected KEY.PATH=VALUE");

  // Every bad override is reported, and the file is not read on.
  errors = errors_of(kBase, {"=1", "run.iterations=[1"});
  ASSERT_EQ(errors.size(), 2u) << dump(errors);
  EXPECT_NE(errors[1].message.find("the value is not valid YAML"), std::string::npos) << dump(errors);
}

TEST(ScenarioOverrides, UnknownKeyFromAnOverrideIsReported) {
  const auto errors = errors_of(kBase + "run: {iterations: 2}\n", {"run.iteratons=7"});
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_NE(errors[0].message.find("unknown key 'iteratons' in run; did you mean 'iterations'?"), std::string::npos)
      << dump(errors);
}

TEST(ScenarioOverrides, BadOverriddenValueIsNotLocatedInTheFile) {
  const auto errors = errors_of(kBase + "run: {iterations: 2}\n", {"run.iterations=0"});
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].location.file, "--set run.iterations=0");
  EXPECT_EQ(errors[0].location.line, 0);
  EXPECT_NE(errors[0].message.find("expected an integer in [1, 1000000], got 0"), std::string::npos);
}

// `--set ~KEY.PATH` removes a map key, as if the file did not have it (the run section's
// iterations fall back to their default, 1); a path to nothing is left as it is; a list element is
// not removed (the error names the list).
TEST(ScenarioOverrides, TildeRemovesAKey) {
  const Scenario s = load(kBase + "run: {iterations: 2, seed: 5}\n", {"~run.iterations", "~run.nothing", "~no.such.path"});
  EXPECT_EQ(s.run.iterations, 1);
  EXPECT_EQ(s.run.seed, 5u);
  // Removed, then set again: the overrides apply in order.
  EXPECT_EQ(load(kBase + "run: {iterations: 2}\n", {"~run.iterations", "run.iterations=4"}).run.iterations, 4);

  auto errors = errors_of(kBase, {"~cluster.nodes"});  // a required section gone: the file's own check
  ASSERT_FALSE(errors.empty());
  errors = errors_of(kBase, {"~cluster.nodes.0"});
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].location.file, "--set ~cluster.nodes.0");
  EXPECT_EQ(errors[0].message, "'nodes' is a list: ~ removes a map key; set the whole list instead");
  errors = errors_of(kBase, {"~run.iterations=3"});
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].message, "expected ~KEY.PATH (removes the key) or KEY.PATH=VALUE");
}

// A map or list given whole by an override: a problem inside it is located at the override too, not
// at the line and column of the override string (its marks).
TEST(ScenarioOverrides, ProblemInsideAnOverriddenMapIsLocatedAtTheOverride) {
  auto errors = errors_of(kBase, {"run={iterations: 0}"});
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].location.file, "--set run={iterations: 0}");
  EXPECT_EQ(errors[0].location.line, 0);
  errors = errors_of(kBase, {"run={iteratons: 2}"});
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].location.file, "--set run={iteratons: 2}");
}

// ---- explicit topologies -------------------------------------------------------------------------

// Three one-GPU nodes; text appended (from line 10 on) sets the interconnect.
const std::string kThreeNodes = R"(name: explicit
workload: {kind: data_parallel, model: {layers: [{forward_flops: "1GFlop"}]}, global_batch: 3}
cluster:
  node_types:
    box:
      gpu: V100-16GB
      gpus_per_node: 1
      nic: {bandwidth: "25Gbps", latency: "5us"}
  nodes: [{type: box, count: 3}]
)";

// GpuPathCosts is route_latency and route_bandwidth of gpu_route, summed in the same order: equal to
// the bit for every pair of GPUs (the planners' cluster view asks it).
void expect_route_costs_match_routes(const PlatformLayout& layout) {
  const auto gpus = static_cast<std::uint32_t>(layout.first_gpu.back() + layout.nodes.back().gpus.size());
  const GpuPathCosts costs(layout);
  for (std::uint32_t a = 0; a < gpus; ++a)
    for (std::uint32_t b = 0; b < gpus; ++b) {
      const Route route = layout.gpu_route(a, b);
      const PathCost cost = costs(a, b);
      EXPECT_EQ(cost.latency.value(), layout.route_latency(route).value()) << a << " → " << b;
      EXPECT_EQ(cost.bandwidth.value(), layout.route_bandwidth(route).value()) << a << " → " << b;
    }
  EXPECT_THROW((void)costs(gpus, 0), std::out_of_range);
}

TEST(ScenarioExplicit, LinksRoutesAndLayout) {
  const Scenario s = load(kThreeNodes + R"(  interconnect:
    kind: explicit
    switches: [sw0, sw1]
    links:
      - {name: a, between: [node0, sw0], bandwidth: "10GB/s", latency: "1us"}
      - {name: b, between: [sw0, node1], link: IB-HDR}
      - {name: c, between: [sw0, sw1], link: IB-HDR, bandwidth: "1GB/s"}
      - {name: d, between: [sw1, node2], bandwidth: "10GB/s", latency: "1us"}
      - {name: e, between: [node1, node2], bandwidth: "10GB/s", latency: "1us"}
    routes:
      - {from: node2, to: node0, links: [d, c, a]}
)");
  const InterNodeNetwork& net = s.cluster.network;
  EXPECT_EQ(net.kind, InterNodeKind::explicit_links);
  ASSERT_EQ(net.links.size(), 5u);
  EXPECT_EQ(net.links[1].a, "sw0");
  EXPECT_EQ(net.links[1].b, "node1");
  EXPECT_DOUBLE_EQ(net.links[1].bandwidth.value(), 25e9);  // IB-HDR
  EXPECT_DOUBLE_EQ(net.links[2].bandwidth.value(), 1e9);   // catalog link, bandwidth overridden
  EXPECT_DOUBLE_EQ(net.links[2].latency.value(), 1e-6);    // … latency from the catalog
  ASSERT_EQ(net.routes.size(), 1u);
  EXPECT_EQ(net.routes[0].links, (std::vector<std::string>{"d", "c", "a"}));

  const PlatformLayout layout = make_layout(s.cluster);
  // node0 → node1: the fewest hops (a, b); plus PCIe and NIC at both ends.
  EXPECT_EQ(layout.gpu_route(0, 1).size(), 2u + 2u + 2u);
  // node0 → node2: the route given from node2 to node0, mirrored (a, c, d). Nodes do not forward
  // traffic, so a, b, e is no path at all.
  const Route route = layout.gpu_route(0, 2);
  ASSERT_EQ(route.size(), 3u + 4u);
  EXPECT_EQ(layout.links[route[2].link].name, "a");
  EXPECT_EQ(layout.links[route[3].link].name, "c");
  EXPECT_EQ(layout.links[route[4].link].name, "d");
  expect_route_costs_match_routes(layout);
}

TEST(ScenarioExplicit, UnconnectedNodesHaveNoRoute) {
  const auto errors = errors_of(kThreeNodes + R"(  interconnect:
    kind: explicit
    switches: [sw0]
    links:
      - {name: a, between: [node0, sw0], bandwidth: "10GB/s", latency: "1us"}
      - {name: b, between: [node1, sw0], bandwidth: "10GB/s", latency: "1us"}
)");
  // Reported at the interconnect (line 11, the first key of its mapping).
  ASSERT_EQ(errors.size(), 2u) << dump(errors);
  expect_error(errors[0], 11, 5, "no route between node0 and node2: the explicit links do not connect them");
  expect_error(errors[1], 11, 5, "no route between node1 and node2");
}

TEST(ScenarioExplicit, NodesAreNotTransit) {
  // node1 sits between node0 and node2, but a node does not forward traffic.
  const auto errors = errors_of(kThreeNodes + R"(  interconnect:
    kind: explicit
    links:
      - {name: a, between: [node0, node1], bandwidth: "10GB/s", latency: "1us"}
      - {name: b, between: [node1, node2], bandwidth: "10GB/s", latency: "1us"}
)");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 11, 5, "no route between node0 and node2");
}

TEST(ScenarioExplicit, LinkNamesAndEndpointsAreChecked) {
  const auto errors = errors_of(kThreeNodes + R"(  interconnect:
    kind: explicit
    switches: [sw0]
    links:
      - {name: a, between: [node0, sw1], bandwidth: "10GB/s", latency: "1us"}
      - {name: a, between: [node1, sw0], bandwidth: "10GB/s"}
      - {name: c, between: [node2], link: IB-HDR}
)");
  ASSERT_EQ(errors.size(), 4u) << dump(errors);
  expect_error(errors[0], 14, 36, "unknown node or switch 'sw1'; did you mean 'sw0'?");
  expect_error(errors[1], 15, 9, "link 'a' is declared twice");
  expect_error(errors[2], 15, 9, "link 'a' needs 'link' (a catalog name) or both 'bandwidth' and 'latency'");
  expect_error(errors[3], 16, 28, "expected 'between: [A, B]', two node or switch names");
}

TEST(ScenarioExplicit, RoutesMustBeWalks) {
  const auto errors = errors_of(kThreeNodes + R"(  interconnect:
    kind: explicit
    switches: [sw0]
    links:
      - {name: a, between: [node0, sw0], link: IB-HDR}
      - {name: b, between: [node1, sw0], link: IB-HDR}
      - {name: c, between: [node2, sw0], link: IB-HDR}
    routes:
      - {from: node0, to: node1, links: [a, c]}
      - {from: node0, to: node1, links: [b]}
      - {from: node0, to: node3, links: [a, x]}
)");
  // An unknown destination is reported once (the walk is not compared with it).
  ASSERT_EQ(errors.size(), 4u) << dump(errors);
  expect_error(errors[0], 18, 41, "the route ends at 'node2', not at 'node1'");
  expect_error(errors[1], 19, 42, "link 'b' does not touch 'node0', where the route has arrived");
  expect_error(errors[2], 20, 27, "unknown node 'node3'; did you mean 'node0'?");
  expect_error(errors[3], 20, 45, "unknown link 'x'");
}

// ---- layout --------------------------------------------------------------------------------------


TEST(ScenarioLayout, LeafSpineLinkNamesAndRoutes) {
  const Scenario s = load(R"(name: fabric
cluster:
  node_types:
    box:
      gpu: V100-16GB
      gpus_per_node: 2
      nic: {bandwidth: "100Gbps", latency: "1us"}
  nodes: [{type: box, count: 2}]
  interconnect:
    kind: leaf_spine
    nodes_per_leaf: 1
    spines: 2
    oversubscription: 2
    latency: "1us"
    uplink_latency: "2us"
workload: {kind: data_parallel, model: {layers: [{forward_flops: "1GFlop"}]}, global_batch: 4}
)");
  const PlatformLayout layout = make_layout(s.cluster);
  EXPECT_EQ(layout.link_names(),
            (std::vector<std::string>{"node0/gpu0/pcie", "node0/gpu1/pcie", "node0/gpu0/nvswitch",
                                      "node0/gpu1/nvswitch", "node0/nic", "node1/gpu0/pcie", "node1/gpu1/pcie",
                                      "node1/gpu0/nvswitch", "node1/gpu1/nvswitch", "node1/nic", "leaf0",
                                      "leaf0/spine0", "leaf0/spine1", "leaf1", "leaf1/spine0", "leaf1/spine1"}));
  // Within a node: two NVSwitch ports.
  const Route local = layout.gpu_route(0, 1);
  ASSERT_EQ(local.size(), 2u);
  EXPECT_EQ(layout.links[local[0].link].name, "node0/gpu0/nvswitch");
  EXPECT_TRUE(local[0].up);
  EXPECT_EQ(layout.links[local[1].link].name, "node0/gpu1/nvswitch");
  EXPECT_FALSE(local[1].up);
  // Across leaves: pcie, nic, leaf0, leaf0/spineS, leaf1/spineS, leaf1, nic, pcie with
  // S = (leaf 0 + leaf 1 + node 0 + node 1) mod 2 = 0.
  const Route across = layout.gpu_route(0, 2);
  ASSERT_EQ(across.size(), 8u);
  std::vector<std::string> names;
  for (const Hop& hop : across) names.push_back(layout.links[hop.link].name);
  EXPECT_EQ(names, (std::vector<std::string>{"node0/gpu0/pcie", "node0/nic", "leaf0", "leaf0/spine0", "leaf1/spine0",
                                             "leaf1", "node1/nic", "node1/gpu0/pcie"}));
  // Uplinks: the leaf's downlink capacity (one 12.5 GB/s NIC) / (oversubscription 2 × 2 spines).
  EXPECT_DOUBLE_EQ(layout.links[11].bandwidth.value(), 12.5e9 / 4);
  EXPECT_DOUBLE_EQ(layout.links[10].latency.value(), 1e-6);  // leaf: the interconnect latency
  // Latency: PCIe3 1 us ×2, NIC 1 us ×2, leaf 1 us ×2, uplink 2 us ×2.
  EXPECT_NEAR(layout.route_latency(across).value(), 10e-6, 1e-15);
  EXPECT_DOUBLE_EQ(layout.route_bandwidth(across).value(), 12.5e9 / 4);
  expect_route_costs_match_routes(layout);
}

TEST(ScenarioLayout, PerGpuNicsMeshAndHostBridgeNames) {
  const Scenario s = load(R"(name: names
cluster:
  node_types:
    mesh:
      gpu: V100-16GB
      gpus_per_node: 3
      fabric: nvlink_mesh
      nic: {link: IB-EDR, per_gpu: true}
    pc:
      gpu: T4
      gpus_per_node: 2
      host_bridge: "16GB/s"
      nic: {link: Ethernet-25G}
  nodes: [{type: mesh}, {type: pc}]
  interconnect: {bandwidth: "100GB/s"}
workload: {kind: data_parallel, model: {layers: [{forward_flops: "1GFlop"}]}, global_batch: 5}
)");
  // The mesh splits the V100's 150 GB/s of NVLink among its 2 peers.
  EXPECT_DOUBLE_EQ(s.cluster.node_types[0].gpu_link_bandwidth.value(), 75e9);
  const PlatformLayout layout = make_layout(s.cluster);
  const std::vector<std::string> names = layout.link_names();
  for (const char* expected :
       {"node0/gpu0-gpu1/nvlink", "node0/gpu0-gpu2/nvlink", "node0/gpu1-gpu2/nvlink", "node0/gpu0/nic",
        "node0/gpu2/nic", "node1/host_bridge", "node1/gpu1/pcie", "node1/nic", "switch"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  EXPECT_EQ(std::find(names.begin(), names.end(), "node0/nic"), names.end());
  // PCIe fabric: GPU → its PCIe link → host bridge → the other GPU's PCIe link.
  EXPECT_EQ(layout.gpu_route(3, 4).size(), 3u);
  // node0/gpu0 → node1/gpu0: pcie, own nic, switch, nic, host bridge, pcie.
  EXPECT_EQ(layout.gpu_route(0, 3).size(), 6u);
  expect_route_costs_match_routes(layout);
}

}  // namespace
}  // namespace dnnsim
