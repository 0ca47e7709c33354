// A model as a chain of layers with per-sample costs: the input of the data-parallel builder (and of
// the planners that later split it into stages). Costs are either FLOPs, turned into time by the
// roofline cost model on each GPU (models/cost/compute_cost.hpp), or times measured on one catalog
// GPU for `measured_batch` samples, as in the PipeDream/DAPPLE profiles (Narayanan et al., SOSP'19;
// Fan et al., PPoPP'21), scaled to other GPUs by the cost model.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/common/units.hpp"

namespace dnnsim {

struct Layer {
  std::string name;
  Flop forward_flops{0};   // per sample
  Flop backward_flops{0};  // per sample: input gradient + weight gradient (≈ 2× forward for matmuls)
  std::optional<Seconds> forward_time;   // for LayerModel::measured_batch samples on LayerModel::measured_on
  std::optional<Seconds> backward_time;
  Bytes parameter_bytes{0};   // weights as stored; gradients have the same size
  Bytes activation_bytes{0};  // output activation per sample, kept until the layer's backward pass
};

struct LayerModel {
  std::string name;
  std::vector<Layer> layers;
  std::string measured_on;  // catalog GPU of the measured times
  int measured_batch = 1;

  [[nodiscard]] Bytes parameter_bytes() const {
    Bytes total{0};
    for (const Layer& layer : layers) total += layer.parameter_bytes;
    return total;
  }
};

}  // namespace dnnsim
