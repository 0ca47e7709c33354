// One layer's forward or backward pass on a batch, as a Compute task, and its time on a device:
// the one place where workload builders (data parallel, pipeline schedules) and planners turn a
// LayerModel into work, so that what a planner predicts is what the simulator runs.
#pragma once

#include "models/dnn/layer_model.hpp"
#include "models/program/task_graph.hpp"
#include "planners/common/cluster_view.hpp"

namespace dnnsim {

enum class Pass { forward, backward };

// Measured times scale linearly with the batch from LayerModel::measured_batch (the approximation
// PipeDream's and DAPPLE's planners make too); FLOP-described layers get the roofline's inputs: the
// weights read once per call plus the per-sample traffic (2 × activation_bytes when forward_bytes is
// not given), doubled for the backward pass.
[[nodiscard]] Compute layer_compute(const LayerModel& model, const Layer& layer, DeviceId device, double batch,
                                    Dtype dtype, Pass pass);

// The time of that Compute on `device` with the cost model the executor uses (models/cost/compute_cost.hpp).
[[nodiscard]] Seconds layer_time(const LayerModel& model, const Layer& layer, const ClusterDevice& device, double batch,
                                 Dtype dtype, Pass pass);

}  // namespace dnnsim
