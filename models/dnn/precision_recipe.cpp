#include "models/dnn/precision_recipe.hpp"

#include <fmt/format.h>

#include <array>

#include "models/common/enum_names.hpp"

namespace dnnsim {
namespace {

// Indexed by LowPrecision, in declaration order.
constexpr std::array<std::string_view, 3> kLowPrecisionNames{"bf16", "fp8-cs", "mxfp8"};

bool quantized(const Layer& layer) { return layer.role == LayerRole::linear || layer.role == LayerRole::experts; }

// The GEMM's rows × its input (forward) or output (backward) columns, per sample: the tensor quantized.
double quantized_elements(const Layer& layer, bool backward) {
  double elements = 0;
  for (const MatmulShape& product : layer.matmuls) {
    // An expert's product carries one expert's rows with the FLOPs of all: count the rows of all.
    const double rows = product.m > 0 ? layer.forward_flops.value() / (2.0 * product.n * product.k) : 0.0;
    elements += rows * static_cast<double>(backward ? product.n : product.k);
  }
  return elements;
}

}  // namespace

std::string_view low_precision_name(LowPrecision precision) {
  return kLowPrecisionNames.at(static_cast<std::size_t>(precision));
}
std::optional<LowPrecision> low_precision_from_name(std::string_view name) {
  return enum_from_name<LowPrecision>(kLowPrecisionNames, name);
}
std::vector<std::string> low_precision_names() { return enum_names(kLowPrecisionNames); }

Dtype PrecisionRecipe::low_dtype() const { return low == LowPrecision::mxfp8 ? Dtype::mxfp8 : Dtype::fp8; }

Dtype PrecisionRecipe::dtype_of(const Layer& layer, Dtype base) const {
  return active() && quantized(layer) ? low_dtype() : base;
}

Dtype PrecisionRecipe::dominant_dtype(const std::vector<Layer>& layers, std::size_t begin, std::size_t end,
                                      Dtype base) const {
  double low_flops = 0, other_flops = 0;
  for (std::size_t l = begin; l < end && l < layers.size(); ++l) {
    const double flops = layers[l].forward_flops.value() + layers[l].backward_flops.value();
    (dtype_of(layers[l], base) == base ? other_flops : low_flops) += flops;
  }
  return low_flops > other_flops ? low_dtype() : base;
}

Bytes PrecisionRecipe::scaling_bytes(const Layer& layer, bool backward, const GpuSpec& gpu) const {
  if (!active() || !quantized(layer)) return Bytes(0);
  const double transpose = writes_fp8_transpose(gpu) ? 1.0 : 0.0;
  const double per_element = low == LowPrecision::mxfp8 ? 2.0 + 2.0 * (1.0 + 1.0 / 32.0) : 2.0 + 2.0 + 1.0 + transpose;
  return Bytes(quantized_elements(layer, backward) * per_element);
}

Bytes PrecisionRecipe::saved_input_bytes(const Layer& layer) const {
  if (!active() || !quantized(layer) || layer.saved_input_elements <= 0) return layer.activation_bytes;
  return Bytes(layer.saved_input_elements * (low == LowPrecision::mxfp8 ? 1.0 + 1.0 / 32.0 : 1.0));
}

BytesPerParameter PrecisionRecipe::bytes_per_parameter() const {
  const double weights = low == LowPrecision::none                  ? 2.0
                         : low == LowPrecision::fp8_current_scaling ? 1.0
                                                                    : 2.0 * (1.0 + 1.0 / 32.0);
  return {weights, 2.0, precision_aware_optimizer ? 8.0 : 12.0};
}

BytesPerParameter PrecisionRecipe::resident_bytes_per_parameter(const GpuSpec& gpu) const {
  BytesPerParameter per = bytes_per_parameter();
  if (writes_fp8_transpose(gpu)) per.weight_transpose = 1.0;
  return per;
}

std::string PrecisionRecipe::unsupported_on(const GpuSpec& gpu) const {
  if (!active()) return {};
  if (!gpu.peak_fp8)
    return fmt::format("the {} recipe runs FP8 GEMMs, but {} has no FP8 tensor cores", low_precision_name(low),
                       gpu.name);
  if (low == LowPrecision::mxfp8 && !gpu.peak_mxfp8)
    return fmt::format("the mxfp8 recipe needs MX formats (Blackwell), which {} does not have; fp8-cs runs on it",
                       gpu.name);
  return {};
}

}  // namespace dnnsim
