#include "planners/common/layer_cost.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/cost/compute_cost.hpp"

namespace dnnsim {

Compute layer_compute(const LayerModel& model, const Layer& layer, DeviceId device, double batch, Dtype dtype,
                      Pass pass) {
  const bool backward = pass == Pass::backward;
  Compute compute;
  compute.device = device;
  compute.dtype = dtype;
  compute.kernel = layer.kind;
  compute.backward = backward;
  const std::optional<Seconds>& measured = backward ? layer.backward_time : layer.forward_time;
  if (measured) {
    compute.measured_time = *measured * (batch / model.measured_batch);
    compute.measured_on = model.measured_on;
  } else {
    compute.flops = (backward ? layer.backward_flops : layer.forward_flops) * batch;
    // Weights read once per call, plus the per-sample traffic: enough for the roofline to catch
    // memory-bound layers.
    compute.bytes_accessed =
        layer.parameter_bytes + (backward ? layer.backward_traffic() : layer.forward_traffic()) * batch;
    // A layer that is one GEMM has a shape for the calibration's shape grids: the product itself
    // forward, and its two gradients backward (GemmOp::backward or backward_nt, by how the weights
    // are stored) — the weight gradient's inner dimension is the batch, the skinny shape a FLOPs
    // curve misprices.
    if (layer.matmuls.size() == 1) {
      const MatmulShape& product = layer.matmuls.front();
      const double rows = static_cast<double>(product.m) * batch;
      const bool out_in = model.weight_layout == WeightLayout::out_in;
      const GemmOp op =
          backward ? (out_in ? GemmOp::backward_nt : GemmOp::backward) : (out_in ? GemmOp::nt : GemmOp::nn);
      if (rows >= 1 && rows <= 4294967295.0)
        compute.gemm = GemmShape{static_cast<std::uint32_t>(rows), static_cast<std::uint32_t>(product.n),
                                 static_cast<std::uint32_t>(product.k), op};
    }
  }
  return compute;
}

Seconds layer_time(const LayerModel& model, const Layer& layer, const ClusterDevice& device, double batch, Dtype dtype,
                   Pass pass) {
  const Compute compute = layer_compute(model, layer, 0, batch, dtype, pass);
  double instances = 1.0;
  if (layer.kind == LayerKind::attention && !layer.matmuls.empty() && model.tokens_per_sample > 0 &&
      reads_attention_curve(device, compute.dtype))
    instances = batch * std::max(1.0, static_cast<double>(layer.matmuls.front().m) / model.tokens_per_sample);
  return compute_time_in_calls(compute, 1.0, device, instances);
}

Seconds compute_time_on(const Compute& compute, const ClusterDevice& device) {
  return device.calibration ? compute_time(compute, device.gpu, *device.calibration)
                            : compute_time(compute, device.gpu, device.compute_efficiency);
}

Seconds compute_time_in_calls(const Compute& whole, double calls, const ClusterDevice& device, double instances) {
  const double n = std::max(1.0, calls);
  const double each = std::max(1.0, instances);
  if (whole.measured_time || whole.gemm.known() || n * each == 1.0) return compute_time_on(whole, device);
  // Priced apart, the math and the traffic of a call take max(math, traffic) as one Compute would.
  Compute math = whole;  // one instance of one call, without traffic
  math.flops = whole.flops / (n * each);
  math.bytes_accessed = Bytes(0);
  Compute traffic = whole;  // one call's traffic, without math
  traffic.flops = Flop(0);
  traffic.bytes_accessed = whole.bytes_accessed / n;
  return std::max(compute_time_on(math, device) * each, compute_time_on(traffic, device)) * n;
}

bool reads_attention_curve(const ClusterDevice& device, Dtype dtype) {
  if (!device.calibration) return false;
  const Dtype runs_as = device.gpu.peak(dtype) ? dtype : Dtype::fp32;  // as calibrated_compute_efficiency reads it
  return device.calibration->compute.contains({std::string(layer_kind_name(LayerKind::attention)), runs_as});
}

Seconds host_overhead(const ClusterDevice& device) {
  return device.calibration && device.calibration->launch ? device.calibration->launch->host_overhead : Seconds(0);
}

Seconds issued_time(Seconds gpu, std::size_t kernels, const ClusterDevice& device) {
  return issued_time(gpu, kernels, host_overhead(device));
}

Compute layers_compute(const LayerModel& model, LayerRange range, DeviceId device, double batch, Dtype dtype,
                       Pass pass) {
  Compute total;
  total.device = device;
  total.dtype = dtype;
  // One zoo task (a sub-layer's kernels) per layer; a chunk of more than 65,535 layers is not a model.
  total.launches = static_cast<std::uint16_t>(std::min<std::size_t>(range.size(), 65535));
  std::size_t measured_layers = 0;
  double heaviest = -1;
  for (std::size_t l = range.begin; l < range.end; ++l) {
    const Compute part = layer_compute(model, model.layers[l], device, batch, dtype, pass);
    const double work = part.measured_time ? part.measured_time->value() : part.flops.value();
    if (work > heaviest) {
      heaviest = work;
      total.kernel = part.kernel;
    }
    if (part.measured_time) {
      ++measured_layers;
      total.measured_time = total.measured_time.value_or(Seconds(0)) + *part.measured_time;
      total.measured_on = part.measured_on;
    }
    total.flops += part.flops;
    total.bytes_accessed += part.bytes_accessed;
  }
  if (measured_layers != 0 && measured_layers != range.size())
    throw InputError(SourceLocation{}, fmt::format("model '{}': layers [{}, {}) mix measured times and FLOPs; a "
                                                   "pipeline chunk needs one or the other for all its layers",
                                                   model.name, range.begin, range.end));
  return total;
}

namespace {

// An elementwise pass over the parameters (gradient accumulation, the optimizer step), priced at fp32.
Compute fp32_elementwise(DeviceId device, Flop flops, Bytes bytes_accessed) {
  Compute kernel;
  kernel.device = device;
  kernel.dtype = Dtype::fp32;
  kernel.kernel = LayerKind::elementwise;
  kernel.flops = flops;
  kernel.bytes_accessed = bytes_accessed;
  return kernel;
}

}  // namespace

Compute gradient_accumulation(double parameter_count, const BytesPerParameter& per_parameter, DeviceId device) {
  return fp32_elementwise(device, Flop(parameter_count), Bytes(3.0 * parameter_count * per_parameter.gradients));
}

Compute optimizer_step(double parameter_count, const BytesPerParameter& per_parameter, DeviceId device) {
  return fp32_elementwise(device, Flop(10.0 * parameter_count),
                          Bytes(parameter_count * (2.0 * (per_parameter.weights + per_parameter.optimizer_state) +
                                                   per_parameter.gradients)));
}

}  // namespace dnnsim
