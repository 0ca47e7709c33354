#include "models/dnn/model_table.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/common/units.hpp"

namespace dnnsim {
namespace {

constexpr std::size_t kMaxNameWidth = 40;

std::string format_count(double count) {
  if (count >= 1e9) return fmt::format("{:.3f}B", count / 1e9);
  if (count >= 1e6) return fmt::format("{:.2f}M", count / 1e6);
  if (count >= 1e3) return fmt::format("{:.1f}K", count / 1e3);
  return fmt::format("{:.0f}", count);
}

std::string format_flop(Flop work) {
  const double f = work.value();
  if (f >= 1e15) return fmt::format("{:.4g} PFLOP", f / 1e15);
  if (f >= 1e12) return fmt::format("{:.4g} TFLOP", f / 1e12);
  return fmt::format("{:.4g} GFLOP", f / 1e9);
}

std::string shorten(const std::string& name) {
  return name.size() <= kMaxNameWidth ? name : name.substr(0, kMaxNameWidth - 3) + "...";
}

}  // namespace

ModelTotals model_totals(const LayerModel& model, int bytes_per_parameter) {
  ModelTotals totals;
  for (const Layer& layer : model.layers) {
    totals.parameter_bytes += layer.parameter_bytes;
    totals.forward_flops += layer.forward_flops;
    totals.backward_flops += layer.backward_flops;
    totals.activation_bytes += layer.activation_bytes;
    if (layer.forward_time || layer.backward_time) totals.measured = true;
    totals.forward_time += layer.forward_time.value_or(Seconds(0));
    totals.backward_time += layer.backward_time.value_or(Seconds(0));
  }
  totals.parameters = totals.parameter_bytes.value() / bytes_per_parameter;
  return totals;
}

std::string format_model_table(const LayerModel& model, int batch, int bytes_per_parameter) {
  const ModelTotals totals = model_totals(model, bytes_per_parameter);
  const auto samples = [](int n) { return counted(static_cast<std::size_t>(n), "sample"); };
  // Measured times scale linearly with the batch (docs/scenarios.md).
  const double time_scale = static_cast<double>(batch) / std::max(model.measured_batch, 1);
  std::size_t width = 5;
  for (const Layer& layer : model.layers) width = std::max(width, shorten(layer.name).size());

  std::string out = fmt::format("model {}: {} layers, batch {}", model.name, model.layers.size(), batch);
  if (totals.measured)
    out += fmt::format(" (times measured on {} for {}, scaled linearly)", model.measured_on,
                       samples(model.measured_batch));
  out += '\n';
  out += fmt::format("{:>4}  {:<{}}  {:<13}  {:>12}  {:>12}  {:>9}  {:>11}  {:>11}\n", "#", "layer", width, "kind",
                     totals.measured ? "forward" : "fwd GFLOP", totals.measured ? "backward" : "bwd GFLOP", "params",
                     "param bytes", "activations");
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const Layer& layer = model.layers[i];
    const std::string forward = totals.measured ? format_seconds(layer.forward_time.value_or(Seconds(0)) * time_scale)
                                                : fmt::format("{:.3f}", layer.forward_flops.value() * batch / 1e9);
    const std::string backward = totals.measured ? format_seconds(layer.backward_time.value_or(Seconds(0)) * time_scale)
                                                 : fmt::format("{:.3f}", layer.backward_flops.value() * batch / 1e9);
    out += fmt::format("{:>4}  {:<{}}  {:<13}  {:>12}  {:>12}  {:>9}  {:>11}  {:>11}\n", i, shorten(layer.name), width,
                       layer_kind_name(layer.kind), forward, backward,
                       format_count(layer.parameter_bytes.value() / bytes_per_parameter),
                       format_bytes(layer.parameter_bytes), format_bytes(layer.activation_bytes * batch));
  }
  out += fmt::format("parameters: {} ({}, {} B each)\n", format_count(totals.parameters),
                     format_bytes(totals.parameter_bytes), bytes_per_parameter);
  if (totals.measured)
    out += fmt::format("measured: forward {}, backward {} for {} on {}\n",
                       format_seconds(totals.forward_time * time_scale),
                       format_seconds(totals.backward_time * time_scale), samples(batch), model.measured_on);
  if (totals.forward_flops.value() > 0 || !totals.measured)
    out += fmt::format("FLOPs for {}: forward {}, backward {}, total {}\n", samples(batch),
                       format_flop(totals.forward_flops * batch), format_flop(totals.backward_flops * batch),
                       format_flop((totals.forward_flops + totals.backward_flops) * batch));
  out += fmt::format("activations kept for {}: {}\n", samples(batch), format_bytes(totals.activation_bytes * batch));
  return out;
}

}  // namespace dnnsim
