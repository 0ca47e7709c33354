// Readers of the workload keys that several workload kinds share: a model (layers, a model file, the
// zoo or a measured profile) and the training options (dtype, precision, optimizer, the collective
// algorithm of gradient reductions). Problems go to the reader's sink, located (docs/scenarios.md).
#pragma once

#include <string>

#include "models/common/yaml_reader.hpp"
#include "models/dnn/layer_model.hpp"
#include "models/cost/memory_model.hpp"
#include "models/program/task_graph.hpp"

namespace dnnsim {

// A path written in a scenario, relative to the scenario file's folder unless absolute.
[[nodiscard]] std::string resolve_scenario_path(const std::string& scenario_file, const std::string& path);

// `{layers: [...]}`, `{file: model.yaml}`, `{zoo: NAME, seq: N, image: N}` or `{profile: FILE, measured_on: GPU,
// measured_batch: N, saved_activations: {zoo: NAME, seq: N}}`.
[[nodiscard]] LayerModel read_layer_model(YamlReader& reader, const YAML::Node& node, const std::string& context);

struct TrainingOptions {
  Dtype dtype = Dtype::fp32;
  Precision precision = Precision::fp32;
  Optimizer optimizer = Optimizer::adam;
  std::string collective_algorithm;  // empty: the default rule of models/program/collective_algorithms
};
// The keys dtype, precision, optimizer and collective_algorithm of a workload section.
[[nodiscard]] TrainingOptions read_training_options(MapReader& map);

}  // namespace dnnsim
