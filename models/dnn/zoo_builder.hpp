// The zoo's model builder, shared by its generators (zoo.cpp, zoo_llm.cpp): a LayerModel accumulated
// operation by operation, every operation adding to the layer opened last, with the conventions of
// models/dnn/zoo.hpp (per-sample costs, 2 FLOPs per multiply-add, bytes per element from ModelOptions).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <utility>

#include "models/common/diagnostics.hpp"
#include "models/dnn/zoo.hpp"

namespace dnnsim::zoo_detail {

// Nominal FLOPs per element of the memory-bound operations (see the header): their time comes from
// forward_bytes, these only keep their FLOPs from being zero.
inline constexpr double kNormFlops = 5.0;     // mean, variance, normalize, scale, shift
inline constexpr double kSoftmaxFlops = 5.0;  // max, subtract, exp, sum, divide
inline constexpr double kGeluFlops = 8.0;     // tanh approximation
inline constexpr double kSimpleFlops = 1.0;   // ReLU, residual add, one pooling comparison
inline constexpr double kGateFlops = 5.0;     // LSTM: gate non-linearity and its share of the cell update

inline void require(bool condition, const std::string& model, const std::string& message) {
  if (!condition) throw InputError(SourceLocation{}, fmt::format("model '{}': {}", model, message));
}

// Accumulates a LayerModel; every operation adds to the layer opened last.
class Builder {
 public:
  Builder(const std::string& name, const ModelOptions& options) : options_(options) {
    require(options.seq >= 0 && options.image >= 0, name, "seq and image must be >= 0");
    require(options.parameter_bytes_per_element >= 1 && options.activation_bytes_per_element >= 1, name,
            "bytes per element must be >= 1");
    model_.name = name;
  }

  Builder& layer(std::string name, LayerKind kind) {
    model_.layers.emplace_back();
    model_.layers.back().name = std::move(name);
    model_.layers.back().kind = kind;
    model_.layers.back().activation_source = ActivationSource::zoo;
    return *this;
  }
  Builder& weights(double count) {
    last().parameter_bytes += Bytes(count * options_.parameter_bytes_per_element);
    return *this;
  }
  // C[m×n] = A[m×k]·B[k×n]; `with_weights`: B is a weight (its gradient is the weight part).
  Builder& product(double m, double n, double k, bool with_weights) {
    const MatmulShape shape{static_cast<std::int64_t>(m), static_cast<std::int64_t>(n), static_cast<std::int64_t>(k)};
    last().matmuls.push_back(shape);
    last().forward_flops += shape.flops();
    last().backward_flops += shape.flops() * 2.0;
    if (with_weights) last().backward_weight_flops += shape.flops();
    return *this;
  }
  // FLOPs without weights, as many backward as forward.
  Builder& work(double flops) {
    last().forward_flops += Flop(flops);
    last().backward_flops += Flop(flops);
    return *this;
  }
  // An element-wise operation folded into the layer: reads and writes `elements`.
  Builder& elementwise(double elements, double flops_per_element) {
    return work(elements * flops_per_element).io(2.0 * elements);
  }
  Builder& io(double elements) {
    last().forward_bytes += Bytes(elements * options_.activation_bytes_per_element);
    return *this;
  }
  // Backward traffic, for a layer whose backward is not twice its forward (Layer::backward_bytes).
  Builder& backward_io(double elements) {
    last().backward_bytes += Bytes(elements * options_.activation_bytes_per_element);
    return *this;
  }
  [[nodiscard]] double element_bytes() const { return options_.activation_bytes_per_element; }
  Builder& keep(double elements) {
    last().activation_bytes += Bytes(elements * options_.activation_bytes_per_element);
    return *this;
  }
  Layer& last() { return model_.layers.back(); }
  LayerModel build() { return std::move(model_); }

 private:
  const ModelOptions& options_;
  LayerModel model_;
};

}  // namespace dnnsim::zoo_detail
