// TaskGraph operations and collective groups built in one call, for tests that assemble them by hand.
#pragma once

#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "models/program/collective_algorithms.hpp"
#include "models/program/task_graph.hpp"

namespace dnnsim::testing {

inline Compute compute_op(DeviceId device, double flops = 0, double bytes = 0, Dtype dtype = Dtype::fp32) {
  Compute op;
  op.device = device;
  op.flops = Flop(flops);
  op.bytes_accessed = Bytes(bytes);
  op.dtype = dtype;
  return op;
}

inline Transfer transfer_op(DeviceId src, DeviceId dst, double size = 0) {
  Transfer op;
  op.src = src;
  op.dst = dst;
  op.size = Bytes(size);
  return op;
}

inline Collective collective_op(CollectiveKind kind, std::vector<DeviceId> group, double size = 0,
                                std::string algorithm = "", DeviceId root = 0) {
  Collective op;
  op.kind = kind;
  op.group = std::move(group);
  op.size = Bytes(size);
  op.algorithm = std::move(algorithm);
  op.root = root;
  return op;
}

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * kKiB;
inline constexpr double kGiB = 1024.0 * kMiB;

// The group 0, 1, …, p−1.
inline std::vector<DeviceId> iota_group(std::size_t p) {
  std::vector<DeviceId> group(p);
  std::iota(group.begin(), group.end(), DeviceId{0});
  return group;
}

// Devices 0..devices-1, `per_node` consecutive devices on each node.
inline DeviceTopology nodes_of(std::size_t devices, std::size_t per_node) {
  DeviceTopology topology;
  for (std::size_t d = 0; d < devices; ++d) topology.node_of_device.push_back(static_cast<std::uint32_t>(d / per_node));
  return topology;
}

// The head of a TaskGraph JSON document on two GPUs with streams compute and comm, 2 lines long: the
// tasks of a document start on line 3.
inline const std::string kTaskGraphHeader = R"({"format": "dnnsim-taskgraph", "version": 1, "devices": ["gpu0", "gpu1"],
"streams": ["compute", "comm"], "tasks": [
)";

// A TaskGraph JSON document of `tasks` (JSON objects, comma-separated) after kTaskGraphHeader.
inline std::string document(const std::string& tasks) { return kTaskGraphHeader + tasks + "]}\n"; }

}  // namespace dnnsim::testing
