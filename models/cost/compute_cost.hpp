// Time of a compute task on a GPU.
//
// Roofline (Williams, Waterman, Patterson, "Roofline: an insightful visual performance model",
// CACM 2009): t = max(flops / (peak_dtype · e), bytes / (memory_bandwidth · e)), with e the kernel
// efficiency of the node type (1 = datasheet peak). A GPU without the task's dtype runs it at its
// fp32 rate (e.g. bf16 on V100 is emulated).
// A measured time is used as given on its GPU and scaled to another GPU by the ratio of their peaks
// for the task's dtype (fp32 when either lacks it) — the first-order scaling DAPPLE and PipeDream
// use across GPU types.
//
// Calibrated roofline (docs/calibration.md): with a CalibrationTable the single efficiency becomes
// two measured curves, one for the math side by kernel kind, dtype and FLOPs (by GEMM shape when the
// task is one GEMM of known shape and the table has a shape grid), one for the memory side by bytes
// moved:
//   t = max(flops / (peak_dtype · e_kind,dtype(flops)), bytes / (memory_bandwidth · e_mem(bytes)))
// Peaks and bandwidth are the GPU's (so scenario overrides of them still apply); the table supplies
// only the efficiencies, which were measured against its own peaks — for a shipped table the
// GPU's datasheet figures.
#pragma once

#include <optional>
#include <string>

#include "models/calibration/calibration.hpp"
#include "models/hardware/catalog.hpp"
#include "models/program/task_graph.hpp"

namespace dnnsim {

// The GPU's peak for `dtype`, falling back to fp32 when the GPU has no such mode.
[[nodiscard]] FlopsPerSecond effective_peak(const GpuSpec& gpu, Dtype dtype);

// @throw InputError when `measured_on` is not a catalog GPU.
[[nodiscard]] Seconds compute_time(const Compute& compute, const GpuSpec& gpu, double efficiency);

// The math-side efficiency of the table for a task. The dtype is the one the GPU runs the task in
// (fp32 when it lacks `dtype`, as effective_peak). A GEMM of known shape with a shape grid for that
// dtype reads the grid of its layout (the nn grid when the table has none for it), e(m, n, k). A
// backward pair (GemmOp::backward) is two GEMMs of equal FLOPs, the nt (m, k, n) and the tn (k, n, m),
// run one after the other, so its efficiency is their harmonic mean,
//   e = 2 / (1 / e_nt(m, k, n) + 1 / e_tn(k, n, m)),
// the rate at which the pair's FLOPs complete; that of an nt product (GemmOp::backward_nt, weights
// stored out × in) is 2 / (1 / e_nn(m, k, n) + 1 / e_tn(n, k, m)). Otherwise the FLOPs curve
// e_kind,dtype(flops), looked up as (kind, dtype), then ("matmul", dtype), then 1.0 (no curve:
// datasheet peak); an mxfp8 task reads the fp8 curves and grids of a table with none of mxfp8's; a
// `backward` task reads its kind's backward curve first
// (CalibrationTable::backward_compute), an `unmasked` forward one its kind's unmasked curve
// (CalibrationTable::unmasked_compute).
[[nodiscard]] double calibrated_compute_efficiency(const CalibrationTable& table, const GpuSpec& gpu, LayerKind kind,
                                                   Dtype dtype, Flop flops, GemmShape shape = {}, bool backward = false,
                                                   bool unmasked = false);

// Roofline with calibrated efficiencies (formula above), the math rate times the table's
// sustained_compute (the clock a power-limited GPU holds under load, CalibrationTable); a measured
// time overrides as in the efficiency overload (scaled by the ratio of peaks, no curve applied).
// @throw InputError when `measured_on` is not a catalog GPU.
[[nodiscard]] Seconds compute_time(const Compute& compute, const GpuSpec& gpu, const CalibrationTable& table);

// A device described only by a table's peaks and memory bandwidth, named after the table's device:
// how the CPU (which has no catalog entry) is fed to compute_time.
[[nodiscard]] GpuSpec device_spec_from_calibration(const CalibrationTable& table);

// The table shipped with dnnsim for a catalog GPU: `<directory>/<gpu_name>.yaml` (the project's
// directory is data/calibration/), or nullopt when there is no such file.
// @throw InputError when the file is malformed or names another device.
[[nodiscard]] std::optional<CalibrationTable> load_shipped_calibration(const std::string& directory,
                                                                       const std::string& gpu_name);

}  // namespace dnnsim
