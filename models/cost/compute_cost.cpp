#include "models/cost/compute_cost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace dnnsim {

FlopsPerSecond effective_peak(const GpuSpec& gpu, Dtype dtype) {
  if (auto peak = gpu.peak(dtype)) return *peak;
  return gpu.peak_fp32.value_or(FlopsPerSecond(0));
}

Seconds compute_time(const Compute& compute, const GpuSpec& gpu, double efficiency) {
  if (compute.measured_time) {
    const GpuSpec* reference = HardwareCatalog::builtin().find_gpu(compute.measured_on);
    if (reference == nullptr)
      throw InputError(SourceLocation{}, fmt::format("measured_on '{}' is not a catalog GPU", compute.measured_on));
    const bool both_have_dtype = reference->peak(compute.dtype) && gpu.peak(compute.dtype);
    const Dtype basis = both_have_dtype ? compute.dtype : Dtype::fp32;
    return *compute.measured_time * (effective_peak(*reference, basis) / effective_peak(gpu, basis));
  }
  const Seconds math = compute.flops / (effective_peak(gpu, compute.dtype) * efficiency);
  const Seconds memory = compute.bytes_accessed / (gpu.memory_bandwidth * efficiency);
  return std::max(math, memory);
}

namespace {

// Whether `table` has any curve or grid of `dtype`.
bool has_dtype(const CalibrationTable& table, Dtype dtype) {
  const auto in = [dtype](const auto& entries) {
    return std::any_of(entries.begin(), entries.end(),
                       [dtype](const auto& entry) { return entry.first.second == dtype; });
  };
  return in(table.compute) || in(table.backward_compute) || in(table.unmasked_compute) ||
         std::any_of(table.gemm.begin(), table.gemm.end(),
                     [dtype](const auto& entry) { return entry.first.first == dtype; });
}

}  // namespace

double calibrated_compute_efficiency(const CalibrationTable& table, const GpuSpec& gpu, LayerKind kind, Dtype dtype,
                                     Flop flops, GemmShape shape, bool backward, bool unmasked) {
  Dtype runs_as = gpu.peak(dtype) ? dtype : Dtype::fp32;
  // MXFP8 runs on the FP8 tensor cores' path: a table that measured none reads its FP8 rates.
  if (runs_as == Dtype::mxfp8 && !has_dtype(table, Dtype::mxfp8)) runs_as = Dtype::fp8;
  const auto grid_of = [&](GemmOp layout) -> const GemmEfficiencyGrid* {
    auto grid = table.gemm.find({runs_as, layout});
    if (grid == table.gemm.end()) grid = table.gemm.find({runs_as, GemmOp::nn});
    return grid == table.gemm.end() ? nullptr : &grid->second;
  };
  if (shape.known() && is_backward_pair(shape.op)) {
    // dA (m × k) is dC·Bᵀ, or dC·B for an nt product; dB is Aᵀ·dC (k × n), or dCᵀ·A (n × k).
    const bool nt_product = shape.op == GemmOp::backward_nt;
    const GemmEfficiencyGrid* input_gradient = grid_of(nt_product ? GemmOp::nn : GemmOp::nt);
    const GemmEfficiencyGrid* weight_gradient = grid_of(GemmOp::tn);
    if (input_gradient != nullptr && weight_gradient != nullptr)
      return 2.0 / (1.0 / input_gradient->at(shape.m, shape.k, shape.n) +
                    1.0 / (nt_product ? weight_gradient->at(shape.n, shape.k, shape.m)
                                      : weight_gradient->at(shape.k, shape.n, shape.m)));
  } else if (shape.known()) {
    if (const GemmEfficiencyGrid* grid = grid_of(shape.op)) return grid->at(shape.m, shape.n, shape.k);
  }
  const std::pair<std::string, Dtype> key{std::string(layer_kind_name(kind)), runs_as};
  if (backward)
    if (auto own = table.backward_compute.find(key); own != table.backward_compute.end())
      return own->second.at(flops.value());
  if (unmasked && !backward)
    if (auto own = table.unmasked_compute.find(key); own != table.unmasked_compute.end())
      return own->second.at(flops.value());
  auto curve = table.compute.find(key);
  if (curve == table.compute.end())
    curve = table.compute.find({std::string(layer_kind_name(LayerKind::matmul)), runs_as});
  if (curve == table.compute.end()) return 1.0;
  return curve->second.at(flops.value());
}

Seconds compute_time(const Compute& compute, const GpuSpec& gpu, const CalibrationTable& table) {
  if (compute.measured_time) return compute_time(compute, gpu, 1.0);
  const double math_efficiency = calibrated_compute_efficiency(table, gpu, compute.kernel, compute.dtype, compute.flops,
                                                               compute.gemm, compute.backward, compute.unmasked);
  const double memory_efficiency = table.memory.at(compute.bytes_accessed.value());
  const Seconds math = compute.flops / (effective_peak(gpu, compute.dtype) * math_efficiency * table.sustained_compute);
  const Seconds memory = compute.bytes_accessed / (gpu.memory_bandwidth * memory_efficiency);
  return std::max(math, memory);
}

GpuSpec device_spec_from_calibration(const CalibrationTable& table) {
  GpuSpec spec;
  spec.name = table.device;
  spec.description = fmt::format("device of calibration table '{}'", table.device);
  for (const auto& [dtype, rate] : table.peak) {
    switch (dtype) {
      case Dtype::fp32:
        spec.peak_fp32 = rate;
        break;
      case Dtype::tf32:
        spec.peak_tf32 = rate;
        break;
      case Dtype::fp16:
        spec.peak_fp16 = rate;
        break;
      case Dtype::bf16:
        spec.peak_bf16 = rate;
        break;
      case Dtype::fp8:
        spec.peak_fp8 = rate;
        break;
      case Dtype::mxfp8:
        spec.peak_mxfp8 = rate;
        break;
    }
  }
  spec.memory_bandwidth = table.memory_bandwidth;
  spec.source = table.source;
  return spec;
}

std::optional<CalibrationTable> load_shipped_calibration(const std::string& directory, const std::string& gpu_name) {
  const std::filesystem::path path = std::filesystem::path(directory) / (gpu_name + ".yaml");
  std::error_code not_a_file;  // a path the OS refuses (too long) is no file, not an exception
  if (!std::filesystem::is_regular_file(path, not_a_file)) return std::nullopt;
  CalibrationTable table = load_calibration(path.string());
  if (table.device != gpu_name)
    throw InputError(SourceLocation{path.string(), 0, 0},
                     fmt::format("calibration table for '{}' names device '{}'", gpu_name, table.device));
  return table;
}

}  // namespace dnnsim
