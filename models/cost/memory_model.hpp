// Analytical memory of one GPU during training: the bytes a device needs for the layers it holds (a
// pipeline stage, or the whole model under data parallelism), split into weights, gradients,
// optimizer state, stashed activations, workspace and framework overhead. docs/memory.md derives
// every formula; the planners use it to reject plans before simulating them, and a plan that does
// not fit is reported as a result (check_fit), never as an abort.
//
// Model states (Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter
// Models", SC'20, §3.1 and Figure 1). With Ψ parameters, one device holds, before partitioning,
//   weights   w·Ψ   gradients   g·Ψ   optimizer state   K·Ψ
// bytes, with (w, g, K) from the precision and the optimizer:
//   fp32  : w = 4, g = 4, K = adam 8 (m, v) | sgd_momentum 4 (momentum) | sgd 0
//   mixed : w = 2, g = 2, K = adam 12 (fp32 master 4 + m 4 + v 4) | sgd_momentum 8 (master 4 +
//           momentum 4) | sgd 4 (master)
// so mixed-precision Adam is the paper's 2 + 2 + 12 = 16 bytes per parameter, and fp32 Adam is also
// 4 + 4 + 8 = 16. ZeRO partitions over the N_d = data_parallel ranks: stage 1 (P_os) divides the
// optimizer state by N_d, stage 2 (P_os+g) the gradients too, stage 3 (P_os+g+p) the weights too.
// The gathered copies of stage 3's weights during forward/backward (one layer at a time) and
// communication buffers are workspace, which the caller sets.
//
// Parameter count: Layer::parameter_bytes counts parameters at 4 bytes each (fp32, as in the
// PipeDream/DAPPLE profiles), so Ψ = Σ parameter_bytes / 4 whatever the training precision.
//
// Activations, from Layer::activation_bytes A_l (bytes per sample a layer keeps from its forward
// pass to its backward pass), with b = micro_batch and m = micro_batches_in_flight:
//   without recomputation:  b · m · Σ_l A_l
//     every stashed micro-batch keeps all layers' activations (GPipe m·A, 1F1B min(p−i, m)·A:
//     Huang et al., GPipe, NeurIPS'19; Narayanan et al., Megatron-LM, SC'21 §2.2);
//   with recomputation:     b · m · Σ_l In_l + b · max_l A_l
//     checkpoints at layer boundaries (Chen et al., "Training Deep Nets with Sublinear Memory Cost",
//     arXiv:1604.06174, 2016; GPipe's re-materialization m·A_in + A_recompute): each stashed
//     micro-batch keeps only every layer's input In_l, and the backward pass rebuilds one layer's
//     full activations at a time.
// Weight stashing (PipeDream, Narayanan et al. SOSP'19 §3.3): an asynchronous pipeline stage keeps
// one copy of its weights per micro-batch in flight, so that a backward pass uses the version its
// forward used: stashed weights = versions × w·Ψ (after ZeRO's partitioning, as the weights), with
// versions = p − i on stage i (PipeDream's runtime: num_versions = warm-up minibatches + 1).
//
// In_l is layers[l−1].bytes_across_cut() (the predecessor's output, which is its activation_bytes
// unless the layer keeps more than it outputs: Layer::keep_activations) and 0 for the first
// layer (the stage's input belongs to the sender or the data loader, as in the formula without
// recomputation), unless TrainingMemoryConfig::layer_input_bytes gives it per layer. That is needed
// when activation_bytes counts a layer's internal tensors too — a transformer block stashes
// 34·s·h + 5·a·s² bytes per sample for an input of 2·s·h (Korthikanti et al., "Reducing Activation
// Recomputation in Large Transformer Models", MLSys'23) — since then a layer's input is not its
// predecessor's activation_bytes, and with the chain rule recomputing a uniform chain saves nothing.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "models/common/units.hpp"
#include "models/dnn/layer_model.hpp"

namespace dnnsim {

// fp32: weights, gradients and optimizer state in fp32. mixed: fp16/bf16 weights and gradients, fp32
// master weights and optimizer moments (Micikevicius et al., "Mixed Precision Training", ICLR'18;
// ZeRO §3.1: 2 + 2 + 12 = 16 bytes per parameter for Adam, K = 12).
enum class Precision { fp32, mixed };
enum class Optimizer { sgd, sgd_momentum, adam };
// ZeRO-1/2/3 (Rajbhandari et al., SC'20, Figure 1): which model states are partitioned over the
// data-parallel group. none: every rank holds all of them.
enum class ZeroStage { none = 0, optimizer = 1, gradients = 2, parameters = 3 };

// Bytes per parameter of each model state before ZeRO partitioning (the table above).
struct BytesPerParameter {
  double weights = 0;
  double gradients = 0;
  double optimizer_state = 0;
  // Held beside each gathered weight and never communicated: the transposed copy of an FP8 weight on a
  // GPU whose FP8 GEMMs are TN-only (PrecisionRecipe::resident_bytes_per_parameter); 0 otherwise.
  double weight_transpose = 0;
  // What a weight a GEMM reads takes whole (unpartitioned, or gathered): itself and its transpose.
  [[nodiscard]] double whole_weights() const { return weights + weight_transpose; }
  [[nodiscard]] double total() const { return whole_weights() + gradients + optimizer_state; }
};
struct TrainingMemoryConfig {
  Precision precision = Precision::mixed;
  Optimizer optimizer = Optimizer::adam;
  ZeroStage zero = ZeroStage::none;
  int data_parallel = 1;  // N_d: ZeRO partitions over this many ranks (≥ 1)
  // Activation checkpointing at layer boundaries (Chen et al. 2016): keep only each layer's input;
  // one layer's full activations live during its recomputation.
  bool recompute = false;
  int micro_batch = 1;              // samples per micro-batch (≥ 1)
  int micro_batches_in_flight = 1;  // stashed micro-batches: 1 for plain DP, the schedule's in-flight
                                    // count for a pipeline stage (GPipe m, 1F1B min(p−i, m)) (≥ 0)
  int stashed_weight_versions = 0;  // weight stashing: copies of the weights kept (pipedream-async p−i) (≥ 0)
  // Per-sample input bytes of each layer, the checkpoint kept under recomputation; same length as
  // the layers when given. Empty: the predecessor's bytes_across_cut(), 0 for the first layer. A
  // layer given at least its activation_bytes keeps them all and is not recomputed (Megatron
  // checkpoints its transformer blocks only).
  std::vector<Bytes> layer_input_bytes;
  // Bytes per model state, when a precision recipe says (models/dnn/precision_recipe.hpp: FP8
  // weights, BF16 Adam moments); nullopt: bytes_per_parameter(precision, optimizer).
  std::optional<BytesPerParameter> per_parameter;
  Bytes workspace{0};  // cuBLAS/cuDNN workspace, communication buffers, ZeRO-3 gathered weights
  // CUDA context + library handles + allocator fragmentation. 0 here; callers set it, and 1 GiB is
  // the default we recommend for a CUDA 11/12 process with cuBLAS/cuDNN/NCCL (docs/memory.md).
  Bytes framework_overhead{0};
};

struct MemoryBreakdown {
  Bytes weights{0};
  Bytes stashed_weights{0};  // weight stashing's extra versions
  Bytes gradients{0};
  Bytes optimizer_state{0};
  Bytes activations{0};
  Bytes workspace{0};
  Bytes framework{0};
  [[nodiscard]] Bytes total() const;
};

[[nodiscard]] BytesPerParameter bytes_per_parameter(Precision precision, Optimizer optimizer);

// Bytes that Layer::parameter_bytes counts per parameter (fp32, as in the DAPPLE profiles).
inline constexpr double kProfileBytesPerParameter = 4.0;

// Memory of one device holding `layers`. Asserts data_parallel ≥ 1, micro_batch ≥ 1,
// micro_batches_in_flight ≥ 0 and, when given, layer_input_bytes.size() == layers.size().
// A span, so that the planners price a range of a model's layers without copying them.
[[nodiscard]] MemoryBreakdown training_memory(std::span<const Layer> layers, const TrainingMemoryConfig& config);
[[nodiscard]] inline MemoryBreakdown training_memory(const std::vector<Layer>& layers,
                                                     const TrainingMemoryConfig& config) {
  return training_memory(std::span<const Layer>(layers), config);
}

struct MemoryFit {
  bool fits = true;
  std::string message;  // "out of memory on gpu3: needs 41.2 GiB, has 40 GiB"; empty when it fits
};
// Whether `need` fits in `capacity` (fits when equal); `device` names the GPU in the message. The
// simulation report (sim/report/report.cpp) words measured peaks the same way through it.
[[nodiscard]] MemoryFit check_fit(const std::string& device, Bytes need, Bytes capacity);
[[nodiscard]] inline MemoryFit check_fit(const std::string& device, const MemoryBreakdown& need, Bytes capacity) {
  return check_fit(device, need.total(), capacity);
}

// One line per component (stashed weights only when there are some), then the total, e.g.
// "weights          13.97 GiB\n…total 41.2 GiB\n".
[[nodiscard]] std::string format_memory_breakdown(const MemoryBreakdown& breakdown);

}  // namespace dnnsim
