// One layer's forward or backward pass on a batch, as a Compute task, and its time on a device:
// the one place where workload builders (data parallel, pipeline schedules) and planners turn a
// LayerModel into work, so that what a planner predicts is what the simulator runs.
#pragma once

#include <algorithm>

#include "models/cost/memory_model.hpp"
#include "models/dnn/layer_model.hpp"
#include "models/program/task_graph.hpp"
#include "planners/common/cluster_view.hpp"
#include "planners/common/pipeline_plan.hpp"

namespace dnnsim {

enum class Pass { forward, backward };

// Measured times scale linearly with the batch from LayerModel::measured_batch (the approximation
// PipeDream's and DAPPLE's planners make too); FLOP-described layers get the roofline's inputs: the
// weights read once per call plus the per-sample traffic (2 × activation_bytes when forward_bytes is
// not given), doubled for the backward pass; a forward pass that is one GEMM (one entry in
// Layer::matmuls) carries its shape, rows scaled by the batch, for a calibration's shape grid.
[[nodiscard]] Compute layer_compute(const LayerModel& model, const Layer& layer, DeviceId device, double batch,
                                    Dtype dtype, Pass pass);

// The time of any Compute on `device` with the cost model the executor uses (models/cost/compute_cost.hpp):
// its calibration table when it has one, else its compute_efficiency.
[[nodiscard]] Seconds compute_time_on(const Compute& compute, const ClusterDevice& device);

// The time of that Compute on `device` (compute_time_on); an attention core on a table with an attention
// curve reads it per head and sequence (reads_attention_curve): `batch` sequences × its heads, the rows of
// its first product (heads × tokens, the zoo's scores Q·Kᵀ) over the model's tokens per sample. Planners
// that call it run no context parallelism; an LLM step's cores are priced by step_layers_time.
[[nodiscard]] Seconds layer_time(const LayerModel& model, const Layer& layer, const ClusterDevice& device, double batch,
                                 Dtype dtype, Pass pass);

// The layers [range.begin, range.end) as ONE Compute (a pipeline chunk): measured times are summed
// when every layer of the range is measured, FLOPs and bytes accessed are summed when none is; the
// kernel kind is that of the layer with the most work, so a calibration curve picks the dominant
// kernel; `launches` is the number of layers (each a kernel or a sub-layer's few, issued by the host
// under a launch model). @throw InputError when the range mixes measured and FLOP-described layers (one Compute
// cannot carry both).
[[nodiscard]] Compute layers_compute(const LayerModel& model, LayerRange range, DeviceId device, double batch,
                                     Dtype dtype, Pass pass);

// The time of `whole` run as `calls` equal kernels one after another (calls ≥ 1; fractional for pairs
// of calls that share the GPU): each priced at its own FLOPs and bytes, because a calibration reads its
// efficiency curves at the size of a call (a fused attention's FLOP/s rises with it: docs/calibration.md).
// With `instances` > 1 a call is that many equal, independent problems (a fused attention's heads ×
// sequences) whose math reads the curve at the FLOPs of one, while its traffic stays the call's.
// A measured time or a GEMM of known shape prices the whole.
[[nodiscard]] Seconds compute_time_in_calls(const Compute& whole, double calls, const ClusterDevice& device,
                                            double instances = 1.0);

// Whether `device`'s calibration has an attention curve of its own for `dtype`: its sizes are then the
// FLOPs of one head over one sequence (docs/calibration.md, "Attention"); without one, an attention core
// reads the matmul curve at a call's FLOPs.
[[nodiscard]] bool reads_attention_curve(const ClusterDevice& device, Dtype dtype);

// What `kernels` kernels of `gpu` GPU time in all take on `device` when its host issues them one at
// a time (its calibration's launch model, LaunchCalibration; docs/calibration.md "Kernel launches"):
// max(h + G, n·h) from the first issue, the executor's launch queue for one task; `gpu` when the
// device has no launch model.
[[nodiscard]] Seconds issued_time(Seconds gpu, std::size_t kernels, const ClusterDevice& device);
// The same with the host's time per kernel h given (0: no launch model).
[[nodiscard]] inline Seconds issued_time(Seconds gpu, std::size_t kernels, Seconds host_overhead) {
  if (host_overhead.value() <= 0 || kernels == 0) return gpu;
  return std::max(host_overhead + gpu, host_overhead * static_cast<double>(kernels));
}
// h of the device's launch model, 0 without one.
[[nodiscard]] Seconds host_overhead(const ClusterDevice& device);

// Adding one micro-batch's weight gradients into those accumulated over the iteration's earlier
// micro-batches: read both, write the sum, 3 × the gradient bytes per parameter, memory-bound.
// PyTorch's AccumulateGrad does `grad += new` for every backward after the first of an update (DDP,
// DeepSpeed's engines); Megatron-LM's local DDP adds into its main_grad buffer in a hook
// (`param.main_grad.add_(param.grad.data)`, megatron/model/distributed.py). Builders add it to
// every backward of a chunk but the first since its last update.
[[nodiscard]] Compute gradient_accumulation(double parameter_count, const BytesPerParameter& per_parameter,
                                            DeviceId device);

// The optimizer update of `parameter_count` parameters on `device`: read the gradients, read and
// write the weights and the optimizer state; about 10 flop per parameter (Adam's moments, bias
// correction and update), so memory-bound on every GPU of the catalog. Phase::optimizer in builders.
[[nodiscard]] Compute optimizer_step(double parameter_count, const BytesPerParameter& per_parameter, DeviceId device);

}  // namespace dnnsim
