#include "models/calibration/cpu_backend.hpp"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

namespace dnnsim {
namespace {

struct Timing {
  int repetitions;
  double min_repetition_seconds;
  // Repetitions stop once the sample has taken this long (warm-up included), after at least one: the
  // grids' largest products take seconds a call and, five calls each, were most of a 3-minute
  // calibration, in which a shared machine's speed drifts by 10–20% (docs/performance.md, mlp_accuracy).
  double budget_seconds;
};

// Results are read into this so that the compiler cannot drop a kernel whose output is unused.
volatile double g_sink = 0;

// Best time of one call of `kernel`: a timed warm-up call (page faults, caches, lazy allocation), then
// up to `repetitions` runs of `calls` back-to-back calls, `calls` chosen so that a run lasts at least
// `min_repetition_seconds` (a single short call is below the clock's useful resolution; a short one is
// timed again warm to choose it). A warm-up that alone fills the budget is the measurement.
template <class Kernel>
Seconds best_time(Kernel&& kernel, const Timing& timing) {
  using Clock = std::chrono::steady_clock;
  const auto elapsed = [](Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  const Clock::time_point first = Clock::now();
  kernel();
  double once = elapsed(first);
  if (once >= timing.budget_seconds) return Seconds(once);
  if (once < timing.min_repetition_seconds) {
    const Clock::time_point probe = Clock::now();
    kernel();
    once = elapsed(probe);
  }
  const long calls =
      std::clamp(static_cast<long>(std::ceil(timing.min_repetition_seconds / std::max(once, 1e-9))), 1L, 1'000'000L);
  double best = std::numeric_limits<double>::infinity();
  for (int repetition = 0; repetition < timing.repetitions; ++repetition) {
    if (repetition > 0 && elapsed(first) >= timing.budget_seconds) break;
    const Clock::time_point start = Clock::now();
    for (long call = 0; call < calls; ++call) kernel();
    best = std::min(best, elapsed(start) / static_cast<double>(calls));
  }
  return Seconds(best);
}

// Deterministic, well-scaled contents (no denormals, no overflow over repeated products).
template <class Matrix>
Matrix pattern(Eigen::Index rows, Eigen::Index cols) {
  using Scalar = typename Matrix::Scalar;
  return Matrix::NullaryExpr(rows, cols, [](Eigen::Index i, Eigen::Index j) {
    return static_cast<Scalar>(((i * 7 + j * 3) % 13) / 13.0 - 0.5);
  });
}

void gemm_sweep(bool quick, const Timing& timing, std::vector<KernelSample>& out) {
  const std::vector<Eigen::Index> sizes = quick ? std::vector<Eigen::Index>{64, 128, 256}
                                                : std::vector<Eigen::Index>{64, 96, 128, 192, 256, 384, 512, 768, 1024};
  for (Eigen::Index n : sizes) {
    const Eigen::MatrixXf a = pattern<Eigen::MatrixXf>(n, n);
    const Eigen::MatrixXf b = pattern<Eigen::MatrixXf>(n, n);
    Eigen::MatrixXf c(n, n);
    const Seconds time = best_time([&] { c.noalias() = a * b; }, timing);
    g_sink = g_sink + c(n / 2, n / 2);
    out.push_back(KernelSample{"gemm", "matmul", Dtype::fp32, 2.0 * static_cast<double>(n * n * n), time});
  }
}

// Every (m, n, k) of a grid, C[m×n] = op(A)·op(B) with A·B, A·Bᵀ and Aᵀ·B (the forward product and
// the two gradients of a layer's backward pass): the shape grids of the table. Dimensions a power of
// 4 apart from 16 (a skinny side: a batch, a head dimension) to 4,096, a common layer width: the grid
// is flat beyond its last point, and on one VM A·Bᵀ at (64, 4096, 4096) ran 30% below its
// (64, 2048, 2048) rate (docs/performance.md, mlp_accuracy). The three sweeps are most of the
// calibration's minute, their m = 4,096 rows the largest part, so each (layout, m) row is a stage of
// `progress`.
void gemm_shape_sweep(bool quick, const Timing& timing, std::vector<KernelSample>& out,
                      const CalibrationProgress& progress) {
  const std::vector<Eigen::Index> dims =
      quick ? std::vector<Eigen::Index>{16, 64} : std::vector<Eigen::Index>{16, 64, 256, 1024, 4096};
  for (const GemmOp op : {GemmOp::nn, GemmOp::nt, GemmOp::tn})
    for (Eigen::Index m : dims) {
      report_calibration_stage(progress, fmt::format("GEMM shape grid {}, m = {}", gemm_op_name(op), m), out.size());
      for (Eigen::Index n : dims)
        for (Eigen::Index k : dims) {
          // Stored as the layout reads them: Bᵀ is an n × k matrix, Aᵀ a k × m one.
          const Eigen::MatrixXf a = op == GemmOp::tn ? pattern<Eigen::MatrixXf>(k, m) : pattern<Eigen::MatrixXf>(m, k);
          const Eigen::MatrixXf b = op == GemmOp::nt ? pattern<Eigen::MatrixXf>(n, k) : pattern<Eigen::MatrixXf>(k, n);
          Eigen::MatrixXf c = Eigen::MatrixXf::Zero(m, n);  // its pages faulted in before the timed warm-up
          const auto product = [&] {
            if (op == GemmOp::nt)
              c.noalias() = a * b.transpose();
            else if (op == GemmOp::tn)
              c.noalias() = a.transpose() * b;
            else
              c.noalias() = a * b;
          };
          const Seconds time = best_time(product, timing);
          g_sink = g_sink + c(m / 2, n / 2);
          KernelSample sample{"gemm_shape", "matmul", Dtype::fp32, 2.0 * static_cast<double>(m * n * k), time};
          sample.shape = GemmShape{static_cast<std::uint32_t>(m), static_cast<std::uint32_t>(n),
                                   static_cast<std::uint32_t>(k), op};
          out.push_back(sample);
        }
    }
}

void bias_relu_sweep(bool quick, const Timing& timing, std::vector<KernelSample>& out) {
  const int largest = quick ? 20 : 24;
  for (int log2 = 14; log2 <= largest; log2 += 2) {
    const Eigen::Index n = Eigen::Index{1} << log2;
    const Eigen::ArrayXf x = pattern<Eigen::ArrayXf>(n, 1);
    Eigen::ArrayXf y(n);
    const float bias = 0.25f;
    const Seconds time = best_time([&] { y = (x + bias).max(0.0f); }, timing);
    g_sink = g_sink + y(n / 2);
    out.push_back(KernelSample{"bias_relu", "elementwise", Dtype::fp32, 2.0 * static_cast<double>(n), time});
  }
}

void triad_sweep(bool quick, const Timing& timing, std::vector<KernelSample>& out) {
  const int largest_mib = quick ? 16 : 256;
  for (int mib = 1; mib <= largest_mib; mib *= 4) {
    const double bytes = mib * 1048576.0;
    const auto n = static_cast<Eigen::Index>(bytes / 24.0);  // three doubles per element
    Eigen::ArrayXd a(n);
    const Eigen::ArrayXd b = pattern<Eigen::ArrayXd>(n, 1);
    const Eigen::ArrayXd c = pattern<Eigen::ArrayXd>(n, 1);
    const double scalar = 3.0;
    const Seconds time = best_time([&] { a = b + scalar * c; }, timing);
    g_sink = g_sink + a(n / 2);
    out.push_back(KernelSample{"stream_triad", "memory", Dtype::fp32, 24.0 * static_cast<double>(n), time});
  }
}

void memcpy_sweep(bool quick, const Timing& timing, std::vector<KernelSample>& out) {
  const int largest_mib = quick ? 16 : 256;
  for (int mib = 1; mib <= largest_mib; mib *= 4) {
    const std::size_t bytes = static_cast<std::size_t>(mib) * 1048576;
    std::vector<char> source(bytes, 1);
    std::vector<char> destination(bytes, 0);
    const Seconds time = best_time([&] { std::memcpy(destination.data(), source.data(), bytes); }, timing);
    g_sink = g_sink + destination[bytes / 2];
    out.push_back(KernelSample{"memcpy", "device_to_device", Dtype::fp32, static_cast<double>(bytes), time});
  }
}

}  // namespace

bool CpuCalibrationBackend::available(std::string& why) const {
  why.clear();
  return true;
}

OptionSchema CpuCalibrationBackend::options() {
  OptionSchema schema;
  schema.integer("repetitions", 5, "timed runs per sample, the fastest counts (quick: 3)").range(1, 1000);
  schema.integer("grid_repetitions", 3, "timed runs per GEMM of the shape grids (quick: as repetitions)")
      .range(1, 1000);
  schema
      .quantity<Seconds>("min_run_time", Seconds(0.010),
                         "a run repeats the kernel until it lasts this long: below it the clock's resolution "
                         "shows (quick: 2 ms; the shape grids: half)")
      .range(1e-6, 60);
  schema
      .quantity<Seconds>("kernel_budget", Seconds(1.0),
                         "no new run of a sample once it has taken this long, after at least one (quick: 0.1 s)")
      .range(1e-6, 3600);
  return schema;
}

std::vector<KernelSample> CpuCalibrationBackend::run(bool quick, const Options& options,
                                                     const CalibrationProgress& progress) const {
  Eigen::setNbThreads(1);
  // An option the user gave wins; the others take their quick values under --quick.
  const auto integer = [&](std::string_view name, std::int64_t quick_value) {
    return static_cast<int>(quick && !options.given(name) ? quick_value : options.integer(name));
  };
  const auto seconds = [&](std::string_view name, double quick_value) {
    return quick && !options.given(name) ? quick_value : options.quantity<Seconds>(name).value();
  };
  const Timing timing{integer("repetitions", 3), seconds("min_run_time", 0.002), seconds("kernel_budget", 0.1)};
  std::vector<KernelSample> samples;
  const auto next = [&](std::string_view stage) { report_calibration_stage(progress, stage, samples.size()); };
  next("square GEMMs");
  gemm_sweep(quick, timing, samples);
  // Fewer, shorter repetitions: the grids are 3 × 125 GEMMs (3 × 8 quick), up to 137 GFlop each.
  const Timing grid_timing{integer("grid_repetitions", timing.repetitions),
                           quick ? timing.min_repetition_seconds : timing.min_repetition_seconds / 2,
                           timing.budget_seconds};
  gemm_shape_sweep(quick, grid_timing, samples, progress);
  next("bias + ReLU");
  bias_relu_sweep(quick, timing, samples);
  next("STREAM triad");
  triad_sweep(quick, timing, samples);
  next("memcpy");
  memcpy_sweep(quick, timing, samples);
  return samples;
}

}  // namespace dnnsim
