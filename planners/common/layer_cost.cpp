#include "planners/common/layer_cost.hpp"

#include "models/cost/compute_cost.hpp"

namespace dnnsim {

Compute layer_compute(const LayerModel& model, const Layer& layer, DeviceId device, double batch, Dtype dtype,
                      Pass pass) {
  const bool backward = pass == Pass::backward;
  Compute compute;
  compute.device = device;
  compute.dtype = dtype;
  compute.kernel = layer.kind;
  const std::optional<Seconds>& measured = backward ? layer.backward_time : layer.forward_time;
  if (measured) {
    compute.measured_time = *measured * (batch / model.measured_batch);
    compute.measured_on = model.measured_on;
  } else {
    compute.flops = (backward ? layer.backward_flops : layer.forward_flops) * batch;
    // Weights read once per call, plus the per-sample traffic: enough for the roofline to catch
    // memory-bound layers. The backward pass moves about twice the forward's.
    const Bytes per_sample = layer.forward_bytes.value() > 0 ? layer.forward_bytes : layer.activation_bytes * 2.0;
    compute.bytes_accessed = layer.parameter_bytes + per_sample * (batch * (backward ? 2.0 : 1.0));
  }
  return compute;
}

Seconds layer_time(const LayerModel& model, const Layer& layer, const ClusterDevice& device, double batch, Dtype dtype,
                   Pass pass) {
  const Compute compute = layer_compute(model, layer, 0, batch, dtype, pass);
  return device.calibration ? compute_time(compute, device.gpu, *device.calibration)
                            : compute_time(compute, device.gpu, device.compute_efficiency);
}

}  // namespace dnnsim
