// Time of a compute task on a GPU.
//
// Roofline (Williams, Waterman, Patterson, "Roofline: an insightful visual performance model",
// CACM 2009): t = max(flops / (peak_dtype · e), bytes / (memory_bandwidth · e)), with e the kernel
// efficiency of the node type (1 = datasheet peak). A GPU without the task's dtype runs it at its
// fp32 rate (e.g. bf16 on V100 is emulated).
// A measured time is used as given on its GPU and scaled to another GPU by the ratio of their peaks
// for the task's dtype (fp32 when either lacks it) — the first-order scaling DAPPLE and PipeDream
// use across GPU types. models/cost will refine both with calibration tables.
#pragma once

#include "models/hardware/catalog.hpp"
#include "models/program/task_graph.hpp"

namespace dnnsim {

// The GPU's peak for `dtype`, falling back to fp32 when the GPU has no such mode.
[[nodiscard]] FlopsPerSecond effective_peak(const GpuSpec& gpu, Dtype dtype);

// @throw InputError when `measured_on` is not a catalog GPU.
[[nodiscard]] Seconds compute_time(const Compute& compute, const GpuSpec& gpu, double efficiency);

}  // namespace dnnsim
