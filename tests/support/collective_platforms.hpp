// Small platforms on which transfers and collectives are checked against hand-derived formulas
// (tests/component/collective_cost_test.cpp, collective_fidelity_test.cpp, simulation_test.cpp,
// executor_append_test.cpp, chakra_run_test.cpp, pipeline_run_test.cpp, pipeline_schedule_test.cpp,
// activation_offload_test.cpp, and with calibration tables collective_calibration_test.cpp,
// launch_queue_test.cpp). Graph device i is cluster GPU i.
#pragma once

#include <string>

#include "tests/support/temp_files.hpp"

namespace dnnsim::testing {

// The `workload:` section these platforms run under where the test drives the engine itself: data
// parallel, one layer of 1 GFlop, `global_batch` samples.
inline std::string one_layer_data_parallel(int global_batch) {
  return "workload:\n"
         "  kind: data_parallel\n"
         "  model: {layers: [{forward_flops: \"1GFlop\"}]}\n"
         "  global_batch: " +
         std::to_string(global_batch) + "\n";
}

// A `cluster:` section of one node of `gpus` × `gpu` on `fabric` whose GPU links are `port` and whose
// NIC is `nic` (flow maps of bandwidth and latency), each per direction.
inline std::string one_box_cluster(const std::string& gpu, int gpus, const std::string& fabric, const std::string& port,
                                   const std::string& nic) {
  return "cluster:\n"
         "  node_types:\n"
         "    box:\n"
         "      gpu: " +
         gpu +
         "\n"
         "      gpus_per_node: " +
         std::to_string(gpus) +
         "\n"
         "      fabric: " +
         fabric +
         "\n"
         "      gpu_link: " +
         port +
         "\n"
         "      nic: " +
         nic +
         "\n"
         "  nodes: [{type: box, count: 1}]\n";
}

// one_box_cluster on an NVSwitch.
inline std::string nvswitch_box(const std::string& gpu, int gpus, const std::string& port, const std::string& nic) {
  return one_box_cluster(gpu, gpus, "nvswitch", port, nic);
}

// A `cluster:` section of one node of `gpus` × `gpu` joined by a full mesh of per-direction links of
// 1 GB/s without latency (fabric nvlink_mesh, NIC 10 GB/s), so a transfer alone on its link takes
// exactly size / 1 GB/s: the platform of the pipeline component tests.
inline std::string mesh_box_cluster(const std::string& gpu, int gpus) {
  return one_box_cluster(gpu, gpus, "nvlink_mesh", R"({bandwidth: "1GB/s", latency: "0s"})",
                         R"({bandwidth: "10GB/s", latency: "0s"})");
}

// A `cluster:` section of `nodes` nodes of `gpus_per_node` V100-16GB on PCIe made transparent (huge,
// no latency), so that the NICs (10 GB/s, `nic_latency`) alone shape a route between nodes.
inline std::string transparent_pcie_nodes(int nodes, int gpus_per_node, const std::string& nic_latency) {
  return R"(cluster:
  node_types:
    box:
      gpu: V100-16GB
      gpus_per_node: )" +
         std::to_string(gpus_per_node) + R"(
      fabric: pcie
      gpu_link: {bandwidth: "1000GB/s", latency: "0s"}
      pcie: {bandwidth: "1000GB/s", latency: "0s"}
      nic: {bandwidth: "10GB/s", latency: ")" +
         nic_latency + R"("}
  nodes: [{type: box, count: )" +
         std::to_string(nodes) + "}]\n";
}

// transparent_pcie_nodes of one GPU each, NICs of 5 us: a route node a → node b has α = 10 us,
// β = 10 GB/s. `interconnect` (an `  interconnect:` line) ends the section; none: one non-blocking
// switch.
inline std::string single_gpu_nodes_cluster(int nodes, const std::string& interconnect = "") {
  return transparent_pcie_nodes(nodes, 1, "5us") + interconnect;
}

// A `cluster:` section of one node of `gpus` A100s on an NVSwitch, every port 100 GB/s and 1 us per
// direction: a step i → j crosses port i (up) and port j (down): α = 2 us, β = 100 GB/s. Also the
// platform of the Chakra runs (tests/component/chakra_run_test.cpp), under their own workload.
inline std::string nvswitch_cluster(int gpus) {
  return nvswitch_box("A100-40GB-SXM", gpus, R"({bandwidth: "100GB/s", latency: "1us"})",
                      R"({bandwidth: "25GB/s", latency: "2us"})");
}

// nvswitch_cluster under a one-layer data-parallel workload of one sample per GPU.
inline std::string nvswitch_node(int gpus) {
  return "\nname: nvswitch-node\n" + nvswitch_cluster(gpus) + one_layer_data_parallel(gpus);
}
inline const std::string kSwitch8 = nvswitch_node(8);
inline const std::string kSwitch4 = nvswitch_node(4);
// nvswitch_cluster's step i → j: its latency (s) and bandwidth (B/s).
inline constexpr double kSwitchAlpha = 2e-6;
inline constexpr double kSwitchBeta = 100e9;

// Simulated dates against hand-derived sums of latencies and size / bandwidth terms: SimGrid's default
// timing precision (`precision/timing`, 1e-9 s).
inline constexpr double kSimulationPrecision = 1e-9;
// A collective simulated on these platforms against its α-β formula where the engine adds what the
// formula leaves out (ring steps, barriers): 2% (tests/component/collective_cost_test.cpp).
inline constexpr double kFormulaTolerance = 0.02;

// transparent_pcie_nodes: two nodes of two GPUs on a non-blocking switch, under a one-layer workload;
// the inter-node path node0/gpu0 → node0/nic → switch → node1/nic → node1/gpu0.
inline std::string pcie_node_pair(const std::string& nic_latency) {
  return "\nname: two-nodes\n" + transparent_pcie_nodes(2, 2, nic_latency) + one_layer_data_parallel(4);
}

// 2 nodes × 4 GPUs: the same NVSwitch inside (α_in = 2 us, β_in = 100 GB/s); across nodes
// gpu → PCIe (64 GB/s, 1 us) → NIC (25 GB/s, 2 us) → non-blocking switch → NIC → PCIe:
// α_out = 6 us, β_out = 25 GB/s, on one NIC per GPU or one shared by the node's 4 GPUs.
inline std::string two_nodes(bool nic_per_gpu) {
  return std::string(R"(
name: two-nodes
cluster:
  node_types:
    box:
      gpu: A100-40GB-SXM
      gpus_per_node: 4
      fabric: nvswitch
      gpu_link: {bandwidth: "100GB/s", latency: "1us"}
      pcie: {bandwidth: "64GB/s", latency: "1us"}
      nic: {bandwidth: "25GB/s", latency: "2us", per_gpu: )") +
         (nic_per_gpu ? "true" : "false") + R"(}
  nodes: [{type: box, count: 2}]
)" + one_layer_data_parallel(8);
}

// A `cluster:` section of one node of two V100-16GB on an NVSwitch of 50 GB/s ports without latency:
// a 100 MB ring all-reduce over the 2 GPUs is 2 steps of 50 MB at 50 GB/s, 2 ms.
inline const std::string kV100PairSwitch =
    nvswitch_box("V100-16GB", 2, R"({bandwidth: "50GB/s", latency: "0s"})", R"({bandwidth: "25GB/s", latency: "2us"})");

// The model and gradient keys of a workload on kV100PairSwitch whose all-reduces overlap the backward
// or not (its kind and batch keys are the caller's): two layers measured on the V100 at one sample,
// t_f = 10 ms and t_b = 20 ms, 100 MB of fp32 parameters each (and `more` keys per layer), one 100 MB
// bucket per layer, SGD (no optimizer state), ring all-reduce. The data-parallel and pipeline overlap
// tests (simulation_test.cpp, pipeline_run_test.cpp) derive their times from these numbers.
inline std::string two_bucketed_layers(bool overlap, const std::string& more = "") {
  return R"(  model:
    measured_on: V100-16GB
    measured_batch: 1
    layers:
      - {name: first, forward_time: "10ms", backward_time: "20ms", parameter_bytes: "100MB")" +
         more + R"(}
      - {name: second, forward_time: "10ms", backward_time: "20ms", parameter_bytes: "100MB")" +
         more + R"(}
  bucket_size: "100MB"
  optimizer: sgd
  collective_algorithm: ring
  overlap: )" +
         (overlap ? "true" : "false") + "\n";
}

// One node of `gpus` × A100-80GB on an NVSwitch of 100 GB/s ports without latency: a flow alone
// on its route takes exactly size / bandwidth.
inline std::string a100_switch(int gpus) {
  return "\nname: a100-switch\n" +
         nvswitch_box("A100-80GB-SXM", gpus, R"({bandwidth: "100GB/s", latency: "0s"})",
                      R"({bandwidth: "25GB/s", latency: "0s"})") +
         one_layer_data_parallel(8);
}

// Writes a calibration table for the A100 of a100_switch that charges 30 µs per NCCL call and halves
// what the ports carry (its `collectives` section, plus `collectives_more` inside it), followed by
// the lines `more`; returns the scenario line that selects it.
inline std::string a100_calibration(const std::string& more = "", const std::string& collectives_more = "") {
  write_file("a100.yaml", R"(
device: "A100-80GB-SXM"
source: "test"
peak: {fp16: "312TFlops"}
memory_bandwidth: "2TB/s"
collectives: {latency: "30us", link_efficiency: 0.5)" +
                              collectives_more + "}\n" + more);
  return "calibration: a100.yaml\n";
}

}  // namespace dnnsim::testing
