// A model as a chain of layers with per-sample costs: the input of the data-parallel builder (and of
// the planners that later split it into stages). Costs are either FLOPs, turned into time by the
// roofline cost model on each GPU (models/cost/compute_cost.hpp), or times measured on one catalog
// GPU for `measured_batch` samples, as in the PipeDream/DAPPLE profiles (Narayanan et al., SOSP'19;
// Fan et al., PPoPP'21), scaled to other GPUs by the cost model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/units.hpp"

namespace dnnsim {

// What a layer computes, for efficiency curves (calibration tables are per kind) and sharding.
enum class LayerKind : std::uint8_t { matmul, convolution, attention, elementwise, normalization, embedding, pooling, other };
[[nodiscard]] std::string_view layer_kind_name(LayerKind kind);
[[nodiscard]] std::optional<LayerKind> layer_kind_from_name(std::string_view name);
[[nodiscard]] std::vector<std::string> layer_kind_names();

// One matrix product of a layer, per sample: C[m×n] = A[m×k]·B[k×n], 2·m·n·k FLOPs forward. A
// convolution is given as its implicit GEMM (m = output pixels, n = output channels, k = C_in·kh·kw).
// Sharding planners split these.
struct MatmulShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  [[nodiscard]] Flop flops() const { return Flop(2.0 * static_cast<double>(m) * n * k); }
};

struct Layer {
  std::string name;
  LayerKind kind = LayerKind::other;
  Flop forward_flops{0};   // per sample
  Flop backward_flops{0};  // per sample: input gradient + weight gradient (≈ 2× forward for matmuls)
  Flop backward_weight_flops{0};  // the weight-gradient part of backward_flops (0 when not known)
  std::optional<Seconds> forward_time;   // for LayerModel::measured_batch samples on LayerModel::measured_on
  std::optional<Seconds> backward_time;
  Bytes parameter_bytes{0};   // weights as stored; gradients have the same size
  Bytes activation_bytes{0};  // output activation per sample, kept for the backward pass
  // Forward memory traffic per sample (inputs read, outputs written; weights are counted once per
  // micro-batch separately). 0: estimated as 2 × activation_bytes.
  Bytes forward_bytes{0};
  std::vector<MatmulShape> matmuls;  // per sample; empty when the layer has none or they are not known
  // Per sample, every tensor that crosses a cut right after this layer when the model is a DAG (a
  // profile graph with skip edges: profile_graph.hpp); nullopt: a chain, where only this layer's
  // output crosses.
  std::optional<Bytes> cut_bytes;

  [[nodiscard]] Flop backward_input_flops() const { return backward_flops - backward_weight_flops; }
  // What a pipeline cut after this layer carries per sample (planners' costs and the lowering).
  [[nodiscard]] Bytes bytes_across_cut() const { return cut_bytes.value_or(activation_bytes); }
};

struct LayerModel {
  std::string name;
  std::vector<Layer> layers;
  std::string measured_on;  // catalog GPU of the measured times
  int measured_batch = 1;
  // Tokens in one sample (the sequence length of a language model; 0: not a token model), for
  // reports' tokens per second.
  int tokens_per_sample = 0;

  [[nodiscard]] Bytes parameter_bytes() const {
    Bytes total{0};
    for (const Layer& layer : layers) total += layer.parameter_bytes;
    return total;
  }
};

}  // namespace dnnsim
