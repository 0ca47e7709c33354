// Low-precision training recipes as Megatron-Core runs them with Transformer Engine
// (Megatron-Bridge src/megatron/bridge/training/mixed_precision.py; TE's recipes): which GEMMs run in
// FP8, what their scaling costs, and the bytes each parameter takes.
//
//  - bf16: every GEMM in BF16 (Micikevicius et al., ICLR'18 mixed precision).
//  - fp8-cs ("FP8 current scaling", bf16_with_fp8_current_scaling_mixed: E4M3 forward, E5M2
//    gradients, one scale per tensor computed from the tensor itself): the block linears and the
//    experts run FP8 GEMMs; each GEMM's input (forward) and output gradient (backward) is quantized by
//    an amax pass (read 2 bytes per element) and a cast-transpose writing the rowwise and columnwise
//    FP8 copies a GEMM and its transpose need (read 2, write 1 + 1): 6 bytes per element. On a GPU
//    whose FP8 GEMMs take a transposed operand (GpuSpec::fp8_gemm_any_layout: data-center Blackwell)
//    Transformer Engine writes the rowwise copy only and the backward GEMMs read it transposed
//    (transformer_engine/pytorch/csrc/quantizer.cpp, Float8CurrentScalingQuantizer::create_tensor:
//    a transpose only `columnwise_usage && !nvte_is_non_tn_fp8_gemm_supported()`): 5 bytes.
//  - mxfp8 (bf16_with_mxfp8_mixed: E4M3 with an E8M0 scale per 32 elements, OCP MX v1.0): the same
//    GEMMs; the scales come from the block itself, so one pass reads the BF16 tensor (2) and writes
//    both copies with their scales (1 + 1 + 2/32): 4.0625 bytes per element, on every GPU (the two
//    copies scale blocks of 32 along different axes, so neither is the other transposed). Blackwell
//    only (GpuSpec::peak_mxfp8).
// The attention core, norms, activations, router, LM head, loss and optimizer stay BF16/FP32 in both:
// Megatron quantizes Transformer Engine's Linear/GroupedLinear GEMMs only (first_last_layers_bf16 is
// off in the perf recipes: every block is FP8).
//
// Memory per parameter before any sharding (bytes): weights, gradients, optimizer state.
//  - bf16: 2 + 2 + 12 (fp32 master 4, Adam m 4 and v 4: ZeRO §3.1).
//  - fp8-cs with fp8_param_gather: the model's weights are FP8 (1) and the master copy lives in the
//    optimizer: 1 + 2 + 12.
//  - mxfp8 with fp8_param_gather: rowwise and columnwise MXFP8 weights with their scales,
//    2·(1 + 1/32) + 2 + 12.
//  Gradients are reduced in BF16 (grad_reduce_in_fp32 off in every perf recipe). Megatron's
//  precision-aware optimizer keeps Adam's moments in BF16: optimizer state 4 + 2 + 2 = 8.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/units.hpp"
#include "models/cost/memory_model.hpp"
#include "models/dnn/layer_model.hpp"
#include "models/hardware/catalog.hpp"
#include "models/program/task_graph.hpp"

namespace dnnsim {

enum class LowPrecision : std::uint8_t { none, fp8_current_scaling, mxfp8 };
[[nodiscard]] std::string_view low_precision_name(LowPrecision precision);  // "bf16", "fp8-cs", "mxfp8"
[[nodiscard]] std::optional<LowPrecision> low_precision_from_name(std::string_view name);
[[nodiscard]] std::vector<std::string> low_precision_names();

struct PrecisionRecipe {
  LowPrecision low = LowPrecision::none;
  bool precision_aware_optimizer = false;  // Adam's moments in BF16

  // The dtype the quantized GEMMs run in: mxfp8 (block-scaled, its own calibration where measured)
  // or fp8 (one scale per tensor).
  [[nodiscard]] Dtype low_dtype() const;
  // The dtype `layer` computes in: low_dtype() for the linears and experts under a low-precision
  // recipe, `base` for everything else.
  [[nodiscard]] Dtype dtype_of(const Layer& layer, Dtype base) const;
  // The dtype of most of the FLOPs of layers [begin, end) (forward and backward): what a task running
  // them all is reported in, so that its MFU is against the peak of the tensor cores doing most of
  // its work (low_dtype() for a recipe's block linears; `base` otherwise).
  [[nodiscard]] Dtype dominant_dtype(const std::vector<Layer>& layers, std::size_t begin, std::size_t end,
                                     Dtype base) const;
  // Bytes the quantization of one pass of `layer` moves per sample on `gpu` (0 where the layer is not
  // quantized): the forward's input and the backward's output gradient, as above.
  [[nodiscard]] Bytes scaling_bytes(const Layer& layer, bool backward, const GpuSpec& gpu) const;
  // What `layer` keeps per sample under the recipe: a quantized linear saves its input for the weight
  // gradient as the quantized copy the GEMM read (Transformer Engine 2.9 linear.py, layernorm_linear.py,
  // grouped_linear.py: the row-wise or the column-wise data only, 1 byte per element, plus MXFP8's
  // E8M0 scale per 32) instead of the BF16 tensor, which it then no longer holds (its input kept by
  // another layer — the attention core's output, the router's input — stays kept there);
  // activation_bytes for every other layer and without a recipe.
  [[nodiscard]] Bytes saved_input_bytes(const Layer& layer) const;
  // Weights, gradients and optimizer state per parameter (above), before any sharding.
  [[nodiscard]] BytesPerParameter bytes_per_parameter() const;
  // The same with the FP8 weight's transposed copy that Transformer Engine keeps beside each gathered
  // weight on `gpu` (BytesPerParameter::weight_transpose): under fp8-cs on a GPU whose FP8 GEMMs are
  // TN-only (Hopper) the backward's data gradient reads the weight transposed, and TE pre-creates that
  // copy after each parameter all-gather (transformer_engine/pytorch/tensor/utils.py,
  // post_all_gather_processing: "if backend does not support non-transposed FP8 GEMM, pre-create the
  // transpose"), 1 byte per parameter; none on data-center Blackwell, for MXFP8 (whose columnwise copy
  // is gathered with the weight, in `weights`) or without a recipe. Memory only: the all-gathers move
  // `weights`.
  [[nodiscard]] BytesPerParameter resident_bytes_per_parameter(const GpuSpec& gpu) const;
  // Why `gpu` cannot run the recipe (no FP8, or no MX formats); empty when it can.
  [[nodiscard]] std::string unsupported_on(const GpuSpec& gpu) const;
  [[nodiscard]] bool active() const { return low != LowPrecision::none; }
  // Whether Transformer Engine keeps a transposed FP8 copy of a tensor on `gpu`: per-tensor scaling on
  // a GPU whose FP8 GEMMs are TN-only (the quantizers and post_all_gather_processing above).
  [[nodiscard]] bool writes_fp8_transpose(const GpuSpec& gpu) const {
    return low == LowPrecision::fp8_current_scaling && !gpu.fp8_gemm_any_layout;
  }
};

}  // namespace dnnsim
