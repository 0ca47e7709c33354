// What `dnnsim model describe NAME [--batch N] [--seq N]` prints: a LayerModel as a per-layer table
// with its totals.
#pragma once

#include <string>

#include "models/common/units.hpp"
#include "models/dnn/layer_model.hpp"

namespace dnnsim {

// Sums over the layers, per sample (the measured times: for model.measured_batch samples).
struct ModelTotals {
  double parameters = 0;  // parameter_bytes / bytes_per_parameter
  Bytes parameter_bytes{0};
  Flop forward_flops{0};
  Flop backward_flops{0};
  Bytes activation_bytes{0};  // kept for the backward pass, all layers
  Seconds forward_time{0};    // sum of the measured times (0 without any)
  Seconds backward_time{0};
  bool measured = false;  // some layer has measured times
};

// `bytes_per_parameter`: the element size the parameter_bytes were counted with (4 for the zoo's
// default and the PipeDream/DAPPLE profiles).
[[nodiscard]] ModelTotals model_totals(const LayerModel& model, int bytes_per_parameter = 4);

// One row per layer: name, kind, forward and backward GFLOP for `batch` samples (or, for a measured
// model, the measured times scaled linearly from measured_batch to `batch`, on measured_on),
// parameters (count and bytes) and activation bytes kept for `batch` samples; then the totals.
[[nodiscard]] std::string format_model_table(const LayerModel& model, int batch, int bytes_per_parameter = 4);

}  // namespace dnnsim
