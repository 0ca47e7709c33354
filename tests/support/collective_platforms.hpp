// Small platforms on which collectives are checked against hand-derived formulas
// (tests/component/collective_cost_test.cpp, collective_fidelity_test.cpp). Graph device i is
// cluster GPU i.
#pragma once

#include <string>

namespace dnnsim::testing {

// One node of 8 GPUs on an NVSwitch, every port 100 GB/s and 1 us per direction: a step i → j
// crosses port i (up) and port j (down): α = 2 us, β = 100 GB/s.
inline const std::string kSwitch8 = R"(
name: switch8
cluster:
  node_types:
    box:
      gpu: A100-40GB-SXM
      gpus_per_node: 8
      fabric: nvswitch
      gpu_link: {bandwidth: "100GB/s", latency: "1us"}
      nic: {bandwidth: "25GB/s", latency: "2us"}
  nodes: [{type: box, count: 1}]
workload:
  kind: data_parallel
  model: {layers: [{forward_flops: "1GFlop"}]}
  global_batch: 8
)";

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
workload:
  kind: data_parallel
  model: {layers: [{forward_flops: "1GFlop"}]}
  global_batch: 8
)";
}

}  // namespace dnnsim::testing
