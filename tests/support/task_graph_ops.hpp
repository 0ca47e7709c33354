// TaskGraph operations built in one call, for tests that assemble graphs by hand.
#pragma once

#include <string>
#include <utility>
#include <vector>

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

}  // namespace dnnsim::testing
