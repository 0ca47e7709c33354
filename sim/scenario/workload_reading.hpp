// Readers of the workload keys that several workload kinds share: a model (layers, a model file, the
// zoo or a measured profile) and the training options (batch, dtype, precision, optimizer, the
// collective algorithm, buckets and overlap of gradient reductions). Problems go to the reader's sink, located
// (docs/scenarios.md).
#pragma once

#include <optional>
#include <string>

#include "models/common/yaml_reader.hpp"
#include "models/cost/memory_model.hpp"
#include "models/dnn/layer_model.hpp"
#include "models/program/task_graph.hpp"
#include "planners/data_parallel/data_parallel.hpp"

namespace dnnsim {

// A path written in a scenario, relative to the scenario file's folder unless absolute.
[[nodiscard]] std::string resolve_scenario_path(const std::string& scenario_file, const std::string& path);

// `{layers: [...]}`, `{file: model.yaml}`, `{zoo: NAME, seq: N, image: N}` or `{profile: FILE, measured_on: GPU,
// measured_batch: N, saved_activations: {zoo: NAME, seq: N}}`.
[[nodiscard]] LayerModel read_layer_model(YamlReader& reader, const YAML::Node& node, const std::string& context);

// The keys of a training workload that the data-parallel and pipeline kinds share, read and checked
// in one place so that a key means the same in both.
struct TrainingOptions {
  int global_batch = 1;  // required
  Dtype dtype = Dtype::fp32;
  Precision precision = Precision::fp32;
  Optimizer optimizer = Optimizer::adam;
  std::string collective_algorithm;  // empty: the default rule of models/program/collective_algorithms
  Bytes bucket_size = kDdpBucketSize;
  std::optional<bool> overlap;  // none: the kind's rule (DDP overlaps; a planner may say otherwise)
};
// The keys global_batch, dtype, precision, optimizer, collective_algorithm (a name or
// `{name: ring}`), bucket_size and overlap of a workload section.
[[nodiscard]] TrainingOptions read_training_options(MapReader& map);

// The options into a workload's fields of the same names (DataParallelConfig, PipelineWorkloadSpec);
// `overlap` stays with the caller, whose default is its own.
template <class Workload>
void assign_training_options(const TrainingOptions& options, Workload& workload) {
  workload.global_batch = options.global_batch;
  workload.dtype = options.dtype;
  workload.precision = options.precision;
  workload.optimizer = options.optimizer;
  workload.collective_algorithm = options.collective_algorithm;
  workload.bucket_size = options.bucket_size;
}

// `dtype` of a section that takes no other training key; none when absent.
[[nodiscard]] std::optional<Dtype> read_dtype(MapReader& map);

}  // namespace dnnsim
