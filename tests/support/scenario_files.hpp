// Scenario YAML written inline in a test and loaded from a temporary file (tests/support/temp_files.hpp).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/hardware/catalog.hpp"
#include "models/program/task_graph.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/temp_files.hpp"

namespace dnnsim::testing {

// A `cluster:` section of `nodes` DGX-A100-like nodes of `gpus_per_node` A100-80GB on NVSwitch, an
// IB-HDR NIC per GPU or one per node that the node's GPUs share, one non-blocking switch (1 µs): the
// platform of the tensor-parallel and symmetric-window tests.
inline std::string dgx_cluster(int gpus_per_node, int nodes, bool nic_per_gpu) {
  return "cluster:\n"
         "  node_types:\n"
         "    dgx:\n"
         "      gpu: A100-80GB-SXM\n"
         "      gpus_per_node: " +
         std::to_string(gpus_per_node) +
         "\n"
         "      fabric: nvswitch\n"
         "      nic: {link: IB-HDR" +
         std::string(nic_per_gpu ? ", per_gpu: true" : "") +
         "}\n"
         "  nodes: [{type: dgx, count: " +
         std::to_string(nodes) +
         "}]\n"
         "  interconnect: {kind: switch, latency: \"1us\"}\n";
}

// The small GPT-like model those tests train (a workload's `model:` line): 4 blocks, hidden 1024.
inline const std::string kMiniGptModel =
    "  model: {name: gpt-mini, transformer: {layers: 4, hidden: 1024, heads: 16, seq: 512, vocab: 8192}}\n";

// A valid scenario named `base`: one node of 2 A100-40GB, one data-parallel layer. The base of the
// regress and sweep specification tests (their comparisons and overrides edit it).
inline const std::string kTwoGpuBase = R"(name: base
cluster:
  node_types:
    box:
      gpu: A100-40GB-SXM
      gpus_per_node: 2
      nic: {link: IB-HDR}
  nodes: [{type: box, count: 1}]
workload:
  kind: data_parallel
  model: {layers: [{forward_flops: "10GFlop", parameter_bytes: "10MB", activation_bytes: "1MB"}]}
  global_batch: 8
)";

// A plain SGD step on a V100-16GB over `parameter_bytes` of fp32 weights: read the weights and the
// gradients, write the weights, 3 × parameter_bytes at the V100's memory bandwidth (memory-bound:
// 10 flop per 4-byte parameter is far below its fp32 peak).
inline double v100_sgd_step_seconds(double parameter_bytes) {
  return 3 * parameter_bytes / HardwareCatalog::builtin().find_gpu("V100-16GB")->memory_bandwidth.value();
}

inline Scenario load(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return load_scenario(write_file("scenario.yaml", yaml), overrides);
}

// An empty task graph whose device i is cluster GPU i, the order simulate() binds them in.
inline TaskGraph graph_on_gpus(const Scenario& scenario) {
  TaskGraph graph;
  for (const std::string& gpu : scenario.cluster.gpu_names()) graph.add_device(gpu);
  return graph;
}

// `yaml` with its first `from` replaced by `to`: a test's edit of a base scenario. A `from` the text
// lacks fails the test (and leaves the text as it is).
inline std::string edited(std::string yaml, const std::string& from, const std::string& to) {
  const auto at = yaml.find(from);
  if (at == std::string::npos)
    ADD_FAILURE() << "'" << from << "' is not in the scenario:\n" << yaml;
  else
    yaml.replace(at, from.size(), to);
  return yaml;
}

// The diagnostics of a scenario that must not load.
inline std::vector<Diagnostic> errors_of(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return diagnostics_thrown_by([&] { (void)load(yaml, overrides); });
}

// A `cluster:` section of `nodes` nodes of `gpus_per_node` V100-16GB (16 GiB each) with a 25 Gbps NIC
// (5 µs) per node: 7 lines.
inline std::string box_cluster(int gpus_per_node, int nodes) {
  return "cluster:\n"
         "  node_types:\n"
         "    box:\n"
         "      gpu: V100-16GB\n"
         "      gpus_per_node: " +
         std::to_string(gpus_per_node) +
         "\n"
         "      nic: {bandwidth: \"25Gbps\", latency: \"5us\"}\n"
         "  nodes: [{type: box, count: " +
         std::to_string(nodes) + "}]\n";
}

// Two nodes of two V100-16GB: GPUs node0/gpu0, node0/gpu1, node1/gpu0, node1/gpu1 in cluster order
// (indices 0 … 3).
inline const std::string kTwoBoxCluster = box_cluster(2, 2);

// A valid two-node cluster of 2 V100 GPUs each under a data-parallel workload, 12 lines long: text
// appended to it starts at line 13 (the base of the scenario reading tests).
inline const std::string kTwoBoxBase = "name: base\n" + kTwoBoxCluster + R"(workload:
  kind: data_parallel
  model: {layers: [{forward_flops: "1GFlop"}]}
  global_batch: 4
)";

}  // namespace dnnsim::testing
