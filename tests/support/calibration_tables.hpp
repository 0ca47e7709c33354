// Calibration tables and computes the calibration tests share (tests/unit/models/calibration_*_test.cpp).
#pragma once

#include <string>

#include "models/calibration/calibration.hpp"
#include "models/program/task_graph.hpp"

namespace dnnsim::testing {

// An n × n × n GEMM in `dtype`: 2n³ FLOPs over three n × n matrices of 4-byte elements.
inline Compute gemm(double n, Dtype dtype = Dtype::fp32) {
  Compute compute;
  compute.flops = Flop(2 * n * n * n);
  compute.bytes_accessed = Bytes(3 * n * n * 4);
  compute.dtype = dtype;
  compute.kernel = LayerKind::matmul;
  return compute;
}

// A hand-made V100 table with every section: compute curves for two kernels, memory, two copies.
inline CalibrationTable example_table() {
  CalibrationTable table;
  table.device = "V100-16GB";
  table.source = "hand-made for a test: \"quoted\"\nsecond line";
  table.peak = {{Dtype::fp32, FlopsPerSecond(15.7e12)}, {Dtype::fp16, FlopsPerSecond(125e12)}};
  table.memory_bandwidth = BytesPerSecond(900e9);
  table.compute[{"matmul", Dtype::fp16}] = EfficiencyCurve{{{1e9, 0.35}, {1e11, 0.8}}};
  table.compute[{"elementwise", Dtype::fp32}] = EfficiencyCurve{{{524288, 0.0123456789}, {3.3e7, 0.05}}};
  table.memory = EfficiencyCurve{{{1048576, 0.5}, {1073741824, 0.9}}};
  table.copies["device_to_device"] = EfficiencyCurve{{{1048576, 3.5e11}, {268435456, 7.7e11}}};
  table.copies["host_to_device"] = EfficiencyCurve{{{65536, 1.2e10}}};
  return table;
}

// The head of a valid table file (4 lines): what follows it is the section a test checks.
inline const std::string kValidHead = R"(device: V100-16GB
source: "test"
peak: {fp16: "125TFlops"}
memory_bandwidth: "900GB/s"
)";

}  // namespace dnnsim::testing
