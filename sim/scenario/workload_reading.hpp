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
#include "sim/scenario/scenario.hpp"

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
// `{name: ring}`), bucket_size and overlap of a workload section; the dtype as read_kernel_dtype.
[[nodiscard]] TrainingOptions read_training_options(MapReader& map, const Cluster& cluster);

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

// `dtype` of a section that takes no other training key; none when absent. A storage type (bytes
// per value): any GPU holds any of them.
[[nodiscard]] std::optional<Dtype> read_dtype(MapReader& map);
// `dtype` as the precision the kernels run at. A GPU without a tensor-core mode runs bf16, fp16 and
// tf32 kernels at its fp32 rate (docs/scenarios.md), but FP8 and MXFP8 kernels need FP8 units
// (Hopper, Ada, Blackwell; MXFP8 Blackwell only): naming one for a cluster with a GPU that has none
// is an error at the key, one per node type.
[[nodiscard]] std::optional<Dtype> read_kernel_dtype(MapReader& map, const Cluster& cluster);

}  // namespace dnnsim
