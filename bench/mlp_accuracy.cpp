// Accuracy of the calibrated compute model on the one device every machine has: the CPU.
//
// 1. Calibrates this CPU with the "cpu" backend (square GEMMs, bias+ReLU, STREAM triad, memcpy) and
//    fits a table (models/calibration).
// 2. Predicts the forward + backward time of a small MLP (batch 64, layers 1024-4096-4096-1024, fp32,
//    ReLU on the hidden layers) as the sum of compute_time(task, cpu, table) over its kernels: the
//    GEMMs (forward, weight gradient, input gradient; each with its (m, n, k), read off the table's
//    shape grid of its operand layout: A·B forward, A·Bᵀ for dX, Aᵀ·B for dW) and the elementwise
//    kernels (bias+ReLU, ReLU mask, bias gradient), one after the other as a single core runs them.
//    The predictions without layouts (every GEMM on the A·B grid) and from the FLOPs curves alone
//    are printed beside.
// 3. Runs that MLP with Eigen on the same core and reports the median of N runs against the prediction.
// 4. Prints the machine's drift over the benchmark: the MLP's largest GEMM timed before the calibration,
//    as the table read it, and after the MLP runs.
//
// Not a test (its result depends on the machine); docs/performance.md records a run.
//   mlp_accuracy [--quick] [--runs N] [--table FILE]
// --quick calibrates with the quick sweep; --table writes the fitted table as YAML.
#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"
#include "models/cost/compute_cost.hpp"

namespace {

using dnnsim::Bytes;
using dnnsim::Compute;
using dnnsim::Dtype;
using dnnsim::Flop;
using dnnsim::LayerKind;

constexpr Eigen::Index kBatch = 64;
const std::vector<Eigen::Index> kWidths{1024, 4096, 4096, 1024};
// The layer whose forward GEMM (64 × 4,096 × 4,096, A·B) probes the machine's speed (probe_seconds).
constexpr std::size_t kProbeLayer = 1;

struct Kernel {
  std::string name;
  Compute compute;
};

Compute task(double flops, double bytes, LayerKind kind, dnnsim::GemmShape shape = {}) {
  Compute compute;
  compute.gemm = shape;
  compute.flops = Flop(flops);
  compute.bytes_accessed = Bytes(bytes);
  compute.dtype = Dtype::fp32;
  compute.kernel = kind;
  return compute;
}

dnnsim::GemmShape shape(Eigen::Index m, Eigen::Index n, Eigen::Index k, dnnsim::GemmOp op = dnnsim::GemmOp::nn) {
  return {static_cast<std::uint32_t>(m), static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(k), op};
}

// The kernels of one forward + backward pass, in the order the Eigen code below runs them.
std::vector<Kernel> mlp_kernels() {
  const double b = static_cast<double>(kBatch);
  std::vector<Kernel> kernels;
  const std::size_t layers = kWidths.size() - 1;
  for (std::size_t l = 0; l < layers; ++l) {
    const double in = static_cast<double>(kWidths[l]);
    const double out = static_cast<double>(kWidths[l + 1]);
    // Y[b×out] = X[b×in]·W[in×out]
    kernels.push_back(
        {fmt::format("fwd gemm {}", l), task(2 * b * in * out, 4 * (b * in + in * out + b * out), LayerKind::matmul,
                                             shape(kBatch, kWidths[l + 1], kWidths[l]))});
    // Z + bias, then ReLU on hidden layers: 2 FLOPs per element, read Z and write Y.
    kernels.push_back({fmt::format("fwd bias+relu {}", l), task(2 * b * out, 8 * b * out, LayerKind::elementwise)});
  }
  for (std::size_t l = layers; l-- > 0;) {
    const double in = static_cast<double>(kWidths[l]);
    const double out = static_cast<double>(kWidths[l + 1]);
    if (l + 1 < layers)  // ReLU mask: read dY and Z, write dZ
      kernels.push_back({fmt::format("bwd relu {}", l), task(b * out, 12 * b * out, LayerKind::elementwise)});
    // dW[in×out] = Xᵀ[in×b]·dY[b×out]: the inner dimension is the batch
    kernels.push_back(
        {fmt::format("bwd dW gemm {}", l), task(2 * b * in * out, 4 * (b * in + in * out + b * out), LayerKind::matmul,
                                                shape(kWidths[l], kWidths[l + 1], kBatch, dnnsim::GemmOp::tn))});
    kernels.push_back({fmt::format("bwd db {}", l), task(b * out, 4 * b * out, LayerKind::elementwise)});
    if (l > 0)
      // dX[b×in] = dY[b×out]·Wᵀ[out×in]
      kernels.push_back({fmt::format("bwd dX gemm {}", l),
                         task(2 * b * in * out, 4 * (b * in + in * out + b * out), LayerKind::matmul,
                              shape(kBatch, kWidths[l], kWidths[l + 1], dnnsim::GemmOp::nt))});
  }
  return kernels;
}

// The same MLP with Eigen, single-threaded; activations are batch × width.
class Mlp {
 public:
  Mlp() {
    const std::size_t layers = kWidths.size() - 1;
    for (std::size_t l = 0; l < layers; ++l) {
      weights_.push_back(Eigen::MatrixXf::Constant(kWidths[l], kWidths[l + 1], 0.01f));
      biases_.push_back(Eigen::RowVectorXf::Constant(kWidths[l + 1], 0.1f));
      weight_grads_.emplace_back(kWidths[l], kWidths[l + 1]);
      bias_grads_.emplace_back(kWidths[l + 1]);
      pre_.emplace_back(kBatch, kWidths[l + 1]);
      post_.emplace_back(kBatch, kWidths[l + 1]);
    }
    input_ = Eigen::MatrixXf::NullaryExpr(kBatch, kWidths[0], [](Eigen::Index i, Eigen::Index j) {
      return static_cast<float>(((i * 5 + j * 3) % 11) / 11.0 - 0.4);
    });
  }

  float step() {
    const std::size_t layers = weights_.size();
    for (std::size_t l = 0; l < layers; ++l) {
      const Eigen::MatrixXf& x = l == 0 ? input_ : post_[l - 1];
      pre_[l].noalias() = x * weights_[l];
      if (l + 1 < layers)
        post_[l] = (pre_[l].rowwise() + biases_[l]).cwiseMax(0.0f);
      else
        post_[l] = pre_[l].rowwise() + biases_[l];
    }
    Eigen::MatrixXf grad = post_.back();  // d(½‖y‖²)/dy = y
    for (std::size_t l = layers; l-- > 0;) {
      if (l + 1 < layers) grad = (post_[l].array() > 0.0f).select(grad, 0.0f);
      const Eigen::MatrixXf& x = l == 0 ? input_ : post_[l - 1];
      weight_grads_[l].noalias() = x.transpose() * grad;
      bias_grads_[l] = grad.colwise().sum();
      if (l > 0) {
        Eigen::MatrixXf next(kBatch, kWidths[l]);
        next.noalias() = grad * weights_[l].transpose();
        grad.swap(next);
      }
    }
    return weight_grads_[0](0, 0) + bias_grads_[0](0);
  }

 private:
  std::vector<Eigen::MatrixXf> weights_, weight_grads_, pre_, post_;
  std::vector<Eigen::RowVectorXf> biases_, bias_grads_;
  Eigen::MatrixXf input_;
};

// The machine's own speed, read before the calibration and after the MLP runs: the forward GEMM of
// kProbeLayer, the MLP's largest (a fifth of its time), best of 3 after a warm-up. On a shared VM the
// speed drifts by 10–20% within minutes (docs/performance.md), and the error printed is the model's
// plus that drift: this says how much of it there was. Diagnostic only: nothing is corrected by it.
double probe_seconds() {
  using Clock = std::chrono::steady_clock;
  const Eigen::Index in = kWidths[kProbeLayer];
  const Eigen::Index out = kWidths[kProbeLayer + 1];
  const Eigen::MatrixXf a = Eigen::MatrixXf::Constant(kBatch, in, 0.5f);
  const Eigen::MatrixXf b = Eigen::MatrixXf::Constant(in, out, 0.25f);
  Eigen::MatrixXf c = Eigen::MatrixXf::Zero(kBatch, out);
  c.noalias() = a * b;
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 3; ++i) {
    const Clock::time_point start = Clock::now();
    c.noalias() = a * b;
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  volatile float sink = c(0, 0);
  (void)sink;
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int runs = 15;
  std::string table_path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      quick = true;
    } else if (arg == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--table" && i + 1 < argc) {
      table_path = argv[++i];
    } else {
      fmt::print(stderr, "usage: mlp_accuracy [--quick] [--runs N] [--table FILE]\n");
      return 2;
    }
  }
  Eigen::setNbThreads(1);

  using Clock = std::chrono::steady_clock;
  const double probe_before = probe_seconds();
  const Clock::time_point calibration_start = Clock::now();
  dnnsim::CalibrationBackendRegistry backends("calibration backend");
  dnnsim::register_builtin_calibration_backends(backends);
  const std::vector<dnnsim::KernelSample> samples = backends.at("cpu").value->run(
      quick, backends.defaults("cpu"),
      [](const std::string& stage) { fmt::print(stderr, "  calibrating: {}…\n", stage); });
  const dnnsim::CalibrationTable table = dnnsim::fit_calibration(
      "cpu", samples, std::nullopt, std::nullopt,
      fmt::format("measured by bench/mlp_accuracy ({} sweep, CPU backend, one core)", quick ? "quick" : "full"));
  const double calibration_seconds = std::chrono::duration<double>(Clock::now() - calibration_start).count();
  if (!table_path.empty()) std::ofstream(table_path) << dnnsim::dump_calibration(table);

  const dnnsim::GpuSpec cpu = dnnsim::device_spec_from_calibration(table);
  double predicted = 0, predicted_gemm = 0, as_nn = 0, by_flops = 0, roofline = 0, flops = 0, probe_table = 0;
  for (const Kernel& kernel : mlp_kernels()) {
    const double t = dnnsim::compute_time(kernel.compute, cpu, table).value();
    predicted += t;
    if (kernel.name == fmt::format("fwd gemm {}", kProbeLayer)) probe_table = t;
    Compute untransposed = kernel.compute;
    untransposed.gemm.op = dnnsim::GemmOp::nn;
    as_nn += dnnsim::compute_time(untransposed, cpu, table).value();
    Compute unshaped = kernel.compute;
    unshaped.gemm = {};
    by_flops += dnnsim::compute_time(unshaped, cpu, table).value();
    if (kernel.compute.kernel == LayerKind::matmul) predicted_gemm += t;
    roofline += dnnsim::compute_time(kernel.compute, cpu, 1.0).value();
    flops += kernel.compute.flops.value();
  }

  Mlp mlp;
  volatile float sink = 0;
  for (int i = 0; i < 2; ++i) sink = sink + mlp.step();  // warm-up: page faults, caches
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    const Clock::time_point start = Clock::now();
    sink = sink + mlp.step();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  const double measured = times[times.size() / 2];
  const double probe_after = probe_seconds();

  fmt::print("calibration: {} samples in {:.1f} s; peak fp32 {} (best GEMM), memory {} (best triad)\n", samples.size(),
             calibration_seconds, dnnsim::format_flop_rate(table.peak.at(Dtype::fp32)),
             dnnsim::format_bandwidth(table.memory_bandwidth));
  fmt::print("MLP batch {} widths 1024-4096-4096-1024 fp32, forward+backward: {:.3g} GFlop\n", kBatch, flops / 1e9);
  fmt::print("predicted (calibrated): {:.2f} ms  (GEMMs {:.2f} ms, elementwise {:.2f} ms)\n", predicted * 1e3,
             predicted_gemm * 1e3, (predicted - predicted_gemm) * 1e3);
  fmt::print("predicted (every GEMM read off the A·B grid, no operand layouts): {:.2f} ms\n", as_nn * 1e3);
  fmt::print("predicted (FLOPs curves only, no shape grid): {:.2f} ms\n", by_flops * 1e3);
  fmt::print("predicted (roofline at the best rates, e = 1): {:.2f} ms\n", roofline * 1e3);
  fmt::print("measured (median of {} runs, min {:.2f} ms, max {:.2f} ms): {:.2f} ms\n", runs, times.front() * 1e3,
             times.back() * 1e3, measured * 1e3);
  fmt::print(
      "error (predicted - measured) / measured: calibrated {:+.1f}%, without layouts {:+.1f}%, FLOPs curves "
      "only {:+.1f}%, roofline {:+.1f}%\n",
      (predicted - measured) / measured * 100, (as_nn - measured) / measured * 100,
      (by_flops - measured) / measured * 100, (roofline - measured) / measured * 100);
  // The calibration keeps each kernel's best repetition; the fastest run is the like-for-like
  // measurement, and the one other load on a shared machine disturbs least.
  const double fastest = times.front();
  fmt::print(
      "error against the fastest run: calibrated {:+.1f}%, without layouts {:+.1f}%, FLOPs curves only "
      "{:+.1f}%, roofline {:+.1f}%\n",
      (predicted - fastest) / fastest * 100, (as_nn - fastest) / fastest * 100, (by_flops - fastest) / fastest * 100,
      (roofline - fastest) / fastest * 100);
  fmt::print(
      "machine drift, the MLP's {} x {} x {} GEMM: {:.2f} ms before the calibration, {:.2f} ms in the "
      "table, {:.2f} ms after the MLP runs ({:+.1f}% from the table to after the runs)\n",
      kBatch, kWidths[kProbeLayer + 1], kWidths[kProbeLayer], probe_before * 1e3, probe_table * 1e3, probe_after * 1e3,
      (probe_after - probe_table) / probe_table * 100);
  return 0;
}
