#include "models/cost/memory_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>

namespace dnnsim {

Bytes MemoryBreakdown::total() const {
  return weights + stashed_weights + gradients + optimizer_state + activations + workspace + framework;
}

BytesPerParameter bytes_per_parameter(Precision precision, Optimizer optimizer) {
  switch (precision) {
    case Precision::fp32:
      // Everything in fp32; the optimizer adds its fp32 buffers: Adam m and v, SGD's momentum.
      switch (optimizer) {
        case Optimizer::sgd:
          return {4, 4, 0};
        case Optimizer::sgd_momentum:
          return {4, 4, 4};
        case Optimizer::adam:
          return {4, 4, 8};
      }
      break;
    case Precision::mixed:
      // fp16/bf16 weights and gradients; the optimizer updates an fp32 master copy (4 bytes), which
      // ZeRO counts as optimizer state (K = 12 for Adam: master 4 + m 4 + v 4).
      switch (optimizer) {
        case Optimizer::sgd:
          return {2, 2, 4};
        case Optimizer::sgd_momentum:
          return {2, 2, 8};
        case Optimizer::adam:
          return {2, 2, 12};
      }
      break;
  }
  assert(false && "unhandled precision or optimizer");
  return {};
}

MemoryBreakdown training_memory(std::span<const Layer> layers, const TrainingMemoryConfig& config) {
  assert(config.data_parallel >= 1 && "ZeRO partitions over at least one rank");
  assert(config.micro_batch >= 1 && "a micro-batch holds at least one sample");
  assert(config.micro_batches_in_flight >= 0 && "in-flight micro-batches cannot be negative");
  assert(config.stashed_weight_versions >= 0 && "stashed weight versions cannot be negative");
  assert((config.layer_input_bytes.empty() || config.layer_input_bytes.size() == layers.size()) &&
         "layer_input_bytes gives one input size per layer");

  MemoryBreakdown memory;

  // Model states: Ψ parameters (parameter_bytes is fp32), bytes per parameter from the table, then
  // ZeRO's partitioning over N_d ranks (stage s partitions the first s of optimizer, gradients,
  // weights).
  Bytes parameter_bytes{0};
  for (const Layer& layer : layers) parameter_bytes += layer.parameter_bytes;
  const double parameters = parameter_bytes.value() / kProfileBytesPerParameter;
  const BytesPerParameter per_parameter =
      config.per_parameter.value_or(bytes_per_parameter(config.precision, config.optimizer));
  const auto stage = static_cast<int>(config.zero);
  const auto share = [&](int partitioned_from_stage) {
    return stage >= partitioned_from_stage ? 1.0 / config.data_parallel : 1.0;
  };
  memory.optimizer_state = Bytes(parameters * per_parameter.optimizer_state * share(1));
  memory.gradients = Bytes(parameters * per_parameter.gradients * share(2));
  // ZeRO-3's partition is never a GEMM operand: an FP8 weight's transpose is held beside whole weights only.
  memory.weights = Bytes(parameters * (stage >= 3 ? per_parameter.weights * share(3) : per_parameter.whole_weights()));
  memory.stashed_weights = memory.weights * static_cast<double>(config.stashed_weight_versions);

  // Activations per sample, then scaled by the micro-batch and the stashed micro-batches.
  const double samples_stashed = static_cast<double>(config.micro_batch) * config.micro_batches_in_flight;
  if (!config.recompute) {
    Bytes stashed{0};
    for (const Layer& layer : layers) stashed += layer.activation_bytes;
    memory.activations = stashed * samples_stashed;
  } else {
    // Each stashed micro-batch keeps every layer's input (its checkpoint); the backward pass of one
    // micro-batch rebuilds one layer's full activations at a time on top of them.
    Bytes checkpoints{0};
    Bytes largest{0};
    for (std::size_t l = 0; l < layers.size(); ++l) {
      const bool given = !config.layer_input_bytes.empty();
      if (given)
        checkpoints += config.layer_input_bytes[l];
      else if (l > 0)
        checkpoints += layers[l - 1].bytes_across_cut();  // the predecessor's output, not what it keeps
      // A layer given all its activations as its checkpoint is not recomputed (Megatron's head and loss).
      if (!given || config.layer_input_bytes[l] < layers[l].activation_bytes)
        largest = std::max(largest, layers[l].activation_bytes);
    }
    memory.activations = checkpoints * samples_stashed + largest * static_cast<double>(config.micro_batch);
  }

  memory.workspace = config.workspace;
  memory.framework = config.framework_overhead;
  return memory;
}

MemoryFit check_fit(const std::string& device, Bytes total, Bytes capacity) {
  if (total <= capacity) return {true, ""};
  std::string needs = format_bytes(total);
  std::string has = format_bytes(capacity);
  // Four significant digits print the same figure for both when the excess is tiny; the exact byte
  // counts then show why it does not fit.
  if (needs == has) {
    needs += fmt::format(" ({:.0f} B)", total.value());
    has += fmt::format(" ({:.0f} B)", capacity.value());
  }
  return {false, fmt::format("out of memory on {}: needs {}, has {}", device, needs, has)};
}

std::string format_memory_breakdown(const MemoryBreakdown& breakdown) {
  std::string out;
  const auto line = [&out](std::string_view name, Bytes size) {
    out += fmt::format("{:<16} {}\n", name, format_bytes(size));
  };
  line("weights", breakdown.weights);
  if (breakdown.stashed_weights.value() > 0) line("stashed weights", breakdown.stashed_weights);
  line("gradients", breakdown.gradients);
  line("optimizer state", breakdown.optimizer_state);
  line("activations", breakdown.activations);
  line("workspace", breakdown.workspace);
  line("framework", breakdown.framework);
  line("total", breakdown.total());
  return out;
}

}  // namespace dnnsim
