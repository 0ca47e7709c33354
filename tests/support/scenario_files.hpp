// Scenario YAML written inline in a test and loaded from a temporary file (tests/support/temp_files.hpp).
#pragma once

#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"
#include "tests/support/temp_files.hpp"

namespace dnnsim::testing {

// A `cluster:` section of one node of `gpus` × `gpu` joined by a full mesh of per-direction links of
// 1 GB/s without latency (fabric nvlink_mesh, NIC 10 GB/s), so a transfer alone on its link takes
// exactly size / 1 GB/s: the platform of the pipeline component tests.
inline std::string mesh_box_cluster(const std::string& gpu, int gpus) {
  return "cluster:\n"
         "  node_types:\n"
         "    box:\n"
         "      gpu: " + gpu + "\n"
         "      gpus_per_node: " + std::to_string(gpus) + "\n"
         "      fabric: nvlink_mesh\n"
         "      gpu_link: {bandwidth: \"1GB/s\", latency: \"0s\"}\n"
         "      nic: {bandwidth: \"10GB/s\", latency: \"0s\"}\n"
         "  nodes: [{type: box}]\n";
}

inline Scenario load(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return load_scenario(write_file("scenario.yaml", yaml), overrides);
}

}  // namespace dnnsim::testing
