// Calibration: microbenchmarks measure how close real kernels come to a device's peak, and the
// fitted efficiency curves refine the roofline of models/cost (efficiency as a function of kernel
// size, per kind of work). Tables are YAML files (docs/calibration.md): `dnnsim calibrate` writes
// them, a scenario references one (`calibration: FILE`), and the project ships tables for catalog
// GPUs derived from published measurements (data/calibration/), each citing its source.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/common/options.hpp"
#include "models/common/registry.hpp"
#include "models/common/units.hpp"
#include "models/program/task_graph.hpp"

namespace dnnsim {

// Efficiency (achieved / peak, in (0, 1]) against kernel size: piecewise linear in log(size),
// constant beyond the first and last points. Copy curves hold achieved bytes/s instead of an
// efficiency (see CalibrationTable::copies); the interpolation is the same.
struct EfficiencyCurve {
  std::vector<std::pair<double, double>> points;  // (size, efficiency), sizes > 0 and strictly increasing
  // 1.0 for an empty curve; sizes <= 0 read the first point.
  [[nodiscard]] double at(double size) const;
};

// Efficiency of one GEMM by its shape, measured on the full grid m × n × k of three axes (each
// strictly increasing, > 0); multilinear in log m, log n, log k between grid points, constant above an
// axis' last point and, below its first, the power law of its first cell (at). Why not FLOPs alone: a product with one
// small dimension reuses each element it loads fewer times (2mnk FLOPs over mk + kn + mn elements), so a skinny GEMM
// runs further from peak than a square one of the same FLOPs — e.g. a weight gradient Xᵀ·dY whose inner dimension is
// the batch (Goto & van de Geijn, "Anatomy of high-performance matrix multiplication", ACM TOMS
// 34(3), 2008, §6: the blocking that reaches peak needs every dimension above the kernel's block).
struct GemmEfficiencyGrid {
  std::vector<double> m, n, k;
  std::vector<double> efficiency;  // m-major: efficiency[(i · n.size() + j) · k.size() + l]
  [[nodiscard]] double at(double m_size, double n_size, double k_size) const;
};

// NCCL collectives among GPUs of one node, as fitted on nccl-tests timings (docs/calibration.md,
// "Collectives"): the time of a collective call is latency + what its flows take on links that
// reach link_efficiency of their nominal bandwidth. For a ring all-reduce of S bytes over p GPUs on
// links of bandwidth B: latency + 2(p−1)/p · S / (link_efficiency · B), plus the links' own latencies.
//
// `compute_share`: the fraction of the GPU's math rate an NCCL kernel takes from the computations
// running beside it while it communicates (its CTAs hold SMs: e.g. 24 of an H100's 132 for an
// all-gather). The executor runs each communicating op with a SimGrid execution bounded at that share
// of its device's speed, so an overlapped GEMM of time T under D seconds of communication ends after
// T + share · D. A table fitted on isolated kernels needs it; a table fitted on whole training runs
// (data/calibration/megatron/) already holds what overlap cost those runs and leaves it 0. At most 0.49:
// SimGrid shares a host max-min fairly, so a bound above half its speed would not be reached.
struct CollectiveCalibration {
  Seconds latency{0};            // fixed cost per collective call (kernel launch, protocol set-up), ≥ 0
  double link_efficiency = 1.0;  // in (0, 1]: scales the node's GPU-to-GPU links (gpu_link)
  double compute_share = 0;      // in [0, 0.49]: taken from concurrent computations while communicating
};

// The host that launches a GPU's kernels (docs/calibration.md, "Kernel launches"): a framework's
// host thread spends `host_overhead` per kernel it issues (Python, the framework's dispatch, the
// CUDA launch call) while the GPU runs what was issued before, as a launch queue: kernel i is issued
// at issue_{i−1} + h and runs from max(its issue, the end of kernel i − 1). The host waits for the
// GPU only where the framework synchronizes: Megatron-LM's pipeline point-to-point calls end with
// torch.cuda.synchronize() (megatron/p2p_communication.py, _communicate). Without the section a
// kernel's whole time is GPU time and nothing waits for a host.
struct LaunchCalibration {
  Seconds host_overhead{0};  // host time per kernel issued, > 0
};

// What a curve is indexed by: compute curves by FLOPs per kernel, the memory curve by bytes moved.
struct CalibrationTable {
  std::string device;  // catalog GPU name, or "cpu" for the host
  std::string source;  // how the numbers were obtained: "measured by dnnsim calibrate on …" or a citation
  // Peaks the efficiencies refer to. For a catalog GPU they are its datasheet figures; for the CPU
  // backend they are measured (best observed rate), since no catalog entry exists.
  std::map<Dtype, FlopsPerSecond> peak;
  BytesPerSecond memory_bandwidth{0};
  // Compute efficiency by layer-kind name ("matmul", "convolution", "elementwise", …, see
  // models/dnn/layer_model.hpp) and dtype; a kind without a curve uses "matmul", then 1.0.
  std::map<std::pair<std::string, Dtype>, EfficiencyCurve> compute;
  // The curves of a kind's backward tasks where they run at other efficiencies than its forward ones
  // (`pass: backward` in the file): a fused attention's backward, five products over one tile
  // sweep against the forward's two, has its own measured rate (FlashAttention-3, arXiv:2407.08608,
  // Fig. 5 against Fig. 6). A backward task reads its kind's curve here first, then `compute`.
  std::map<std::pair<std::string, Dtype>, EfficiencyCurve> backward_compute;
  // The forward curves of a kind's calls without a mask, where the `compute` curve is of masked ones
  // (`mask: none` in the file): a fused attention over keys it sees whole, as a CP ring's off-diagonal
  // steps and all_gather's earlier key chunks are, runs at cuDNN's rate without the causal mask
  // (FlashAttention-3, arXiv:2407.08608, Fig. 5: 497-617 against 315-539 TFLOP/s at head dim 128). A
  // forward task marked Compute::unmasked reads its kind's curve here first, then `compute`.
  std::map<std::pair<std::string, Dtype>, EfficiencyCurve> unmasked_compute;
  // Shape-aware GEMM efficiency by dtype and operand layout (GemmOp nn, nt or tn); a GEMM task of
  // known shape (Compute::gemm) uses it instead of its FLOPs curve, the nn grid where its layout has
  // none. A backward pair (GemmOp::backward, backward_nt) is two of its GEMMs: compute_cost.hpp.
  std::map<std::pair<Dtype, GemmOp>, GemmEfficiencyGrid> gemm;
  EfficiencyCurve memory;  // efficiency of memory-bound kernels against bytes moved
  // Copies, bytes/s against bytes: "host_to_device", "device_to_host", "device_to_device", "peer".
  std::map<std::string, EfficiencyCurve> copies;
  // Collectives inside a node on this GPU; unset: none (no latency, nominal links).
  std::optional<CollectiveCalibration> collectives;
  // Kernel launches from a host thread; unset: no host model (compute time is GPU time alone).
  std::optional<LaunchCalibration> launch;
  // The fraction of the curves' and grids' math rates a kernel keeps while the GPU runs at its power
  // limit, as in a training step that issues large GEMMs back to back (`sustained_compute`; 1: the
  // rates were measured in that regime). Microbenchmarks that time short bursts of a kernel on an idle
  // GPU see its boost clock; under sustained load the clock settles lower. Measured as the ratio of
  // sustained to burst matmul throughput on the same GPU (Bekman, ml-engineering, MSMF / MAMF;
  // data/gpu-perf/mamf/): e.g. H200 BF16 755 / 850 TFLOP/s = 0.888. Memory traffic is not scaled
  // (HBM's clock is not the SM clock).
  double sustained_compute = 1.0;
};

// A device's collectives section, or for a device without one (no table, or a table without the
// section) what that means: no latency per call, nominal links, nothing taken from the computations.
[[nodiscard]] CollectiveCalibration collectives_of(const CalibrationTable* table);

// The copy kinds a table may hold, in file order.
[[nodiscard]] std::vector<std::string> calibration_copy_names();

// @throw InputError (file:line:col) for a malformed table, with every problem of the file.
[[nodiscard]] CalibrationTable load_calibration(const std::string& path);
[[nodiscard]] std::string dump_calibration(const CalibrationTable& table);  // YAML text, deterministic

// One measurement of a microbenchmark.
struct KernelSample {
  std::string kernel;  // "gemm", "stream_triad", "elementwise", "memcpy_h2d", …
  std::string kind;    // layer-kind name for compute kernels, "memory" or a copy name otherwise
  Dtype dtype = Dtype::fp32;
  double size = 0;  // FLOPs for compute kernels, bytes otherwise
  Seconds time{0};  // best of the repetitions
  GemmShape shape;  // for the GEMM shape sweep: its (m, n, k) and layout; such samples fill CalibrationTable::gemm
};

// Told one line before each stage of a sweep (what comes next, the samples so far), so that a
// calibration of minutes shows progress; empty: silent.
using CalibrationProgress = std::function<void(const std::string&)>;
// The line of a stage, "STAGE (N samples so far)", to `progress` when it is set.
void report_calibration_stage(const CalibrationProgress& progress, std::string_view stage, std::size_t samples_so_far);

// A place where microbenchmarks run. The CPU backend always works; the CUDA backend exists when the
// project was built with nvcc and reports "no CUDA device" at run time on a machine without one.
class CalibrationBackend {
 public:
  virtual ~CalibrationBackend() = default;
  // Whether the backend can run here; when not, `why` says why (e.g. "no CUDA device is present").
  [[nodiscard]] virtual bool available(std::string& why) const = 0;
  // Runs the sweep; `quick` keeps sizes small (for tests) and sets the repetition options the user did
  // not give to their quick values. `options` are the backend's declared options as read
  // (CalibrationBackendRegistry::defaults when none were given).
  [[nodiscard]] virtual std::vector<KernelSample> run(bool quick, const Options& options,
                                                      const CalibrationProgress& progress) const = 0;
  // The device the samples describe ("cpu", or the catalog name closest to the CUDA device found).
  [[nodiscard]] virtual std::string device() const = 0;
};

using CalibrationBackendRegistry = Registry<std::shared_ptr<const CalibrationBackend>>;
// Registers "cpu". The "cuda" backend lives in its own library (models/calibration/cuda/, built only
// when CMake finds nvcc) and is added by register_cuda_calibration_backend() from there.
void register_builtin_calibration_backends(CalibrationBackendRegistry& registry);
// The "cuda" backend's options, declared here so that a build without nvcc lists the same ones.
[[nodiscard]] OptionSchema cuda_calibration_options();

// Fits a table from samples: peaks as the best observed rates (CPU) or given (GPU), curves as
// achieved rate / peak at each measured size (capped at 1; the best sample of a repeated size wins).
// Samples with a GEMM shape make the shape grid of their dtype and layout instead of the curve (and
// count for the dtype's peak); they must cover a full grid, and none may be a backward pair.
// Copy curves are the achieved bytes/s. A dtype missing from `known_peak` uses its best observed rate.
// @throw std::invalid_argument for a sample with a non-positive size or time, an unknown kind, a
// shaped backward pair or an incomplete grid.
[[nodiscard]] CalibrationTable fit_calibration(const std::string& device, const std::vector<KernelSample>& samples,
                                               std::optional<std::map<Dtype, FlopsPerSecond>> known_peak,
                                               std::optional<BytesPerSecond> known_memory_bandwidth,
                                               std::string source);

}  // namespace dnnsim
