// The CPU calibration backend: microbenchmarks of the host, so that the calibration chain
// (measure → fit → table → compute_time) can run and be checked on any machine, and so that
// bench/mlp_accuracy can compare a calibrated prediction with a real run on the same CPU.
//
// Sweeps (sizes in KernelSample::size: FLOPs for compute kernels, bytes otherwise):
//   gemm         kind matmul,           fp32, C = A·B on square n×n Eigen matrices, 2n³ FLOPs;
//                n = 64 … 1024 (quick: 64 … 256)
//   bias_relu    kind elementwise,      fp32, y = max(x + b, 0), 2 FLOPs per element;
//                2^14 … 2^24 elements (quick: … 2^20)
//   stream_triad kind memory,           fp64, a = b + s·c, 24 bytes moved per element as STREAM counts
//                them (McCalpin 1995; no write-allocate traffic); 1 MiB … 256 MiB moved (quick: … 16 MiB)
//   memcpy       kind device_to_device, std::memcpy between two host buffers; 1 MiB … 256 MiB
//                (quick: … 16 MiB) copied
// Each sample is the best of several repetitions (option `repetitions`: 5, quick: 3), a repetition
// repeating the kernel until it lasts at least `min_run_time` (10 ms, quick: 2 ms), after one warm-up
// call, and the repetitions stop once a sample has taken `kernel_budget` (1 s, quick: 0.1 s). The shape
// grids take `grid_repetitions` (3) runs of at least half `min_run_time`: they are 375 GEMMs.
//
// Eigen runs single-threaded (Eigen::setNbThreads(1); dnnsim is built without OpenMP anyway): a
// multi-threaded GEMM's rate depends on what else the machine runs and on thread placement, which
// would make tables and tests irreproducible. The table therefore describes one core.
#pragma once

#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"

namespace dnnsim {

class CpuCalibrationBackend final : public CalibrationBackend {
 public:
  [[nodiscard]] bool available(std::string& why) const override;  // always true
  [[nodiscard]] std::vector<KernelSample> run(bool quick, const Options& options,
                                              const CalibrationProgress& progress) const override;
  [[nodiscard]] std::string device() const override { return "cpu"; }
  [[nodiscard]] static OptionSchema options();
};

}  // namespace dnnsim
