#include "models/cost/compute_cost.hpp"

#include <fmt/format.h>

#include <algorithm>

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

}  // namespace dnnsim
