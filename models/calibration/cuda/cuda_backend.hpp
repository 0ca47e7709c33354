// The "cuda" calibration backend: dnnsim's CUDA microkernels (GEMM tiled and cuBLAS, STREAM triad,
// elementwise, memcpy host/device/peer; docs/calibration-cuda.md) behind the CalibrationBackend
// interface. This library (dnnsim::calibration_cuda) exists only when CMake found nvcc
// (cmake/OptionalCuda.cmake); dnnsim loads it as a module when the backend is asked for
// (cuda_module.cc, sim/cli/calibrate.cpp).
// On a machine without a usable device, available() is false with "no CUDA device is present (…)"
// and run() throws instead of touching the GPU.
#pragma once

#include <string>

#include "models/calibration/calibration.hpp"

namespace dnnsim {

// Adds "cuda" (CUDA device 0) to `registry`.
void register_cuda_calibration_backend(CalibrationBackendRegistry& registry);

// The catalog GPU (models/hardware/catalog.hpp) that a CUDA device name denotes, e.g.
// "NVIDIA A100-SXM4-80GB" -> "A100-80GB-SXM", "Tesla V100-PCIE-32GB" -> "V100-32GB",
// "NVIDIA H100 PCIe" -> "H100-PCIe"; `cuda_name` itself when no entry matches (e.g. "NVIDIA L40S").
// Form-factor variants the catalog lacks map to the entry of the same chip and memory (A100 PCIe ->
// A100 SXM of that capacity, P100 PCIe -> P100, A10G -> A10); laptop parts never match.
[[nodiscard]] std::string catalog_name_for_device(const std::string& cuda_name);

}  // namespace dnnsim
