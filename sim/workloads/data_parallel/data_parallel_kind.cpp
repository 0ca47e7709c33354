#include "sim/workloads/data_parallel/data_parallel_kind.hpp"

#include <fmt/format.h>

#include "sim/scenario/scenario.hpp"
#include "sim/run/simulation.hpp"
#include "sim/scenario/workload_reading.hpp"

namespace dnnsim {
namespace {

class DataParallelKind final : public TaskGraphKind {
 public:
  std::shared_ptr<const WorkloadSpec> parse(WorkloadParseContext& ctx) const override {
    auto spec = std::make_shared<DataParallelWorkload>();
    MapReader& map = ctx.map;
    DataParallelConfig& config = spec->config;
    spec->where = ctx.reader.where(map.node());
    if (YAML::Node model = map.require("model"); model.IsDefined())
      config.model = read_layer_model(ctx.reader, model, "the model");
    config.global_batch = static_cast<int>(map.integer("global_batch", 1, 1 << 30, true).value_or(1));
    const TrainingOptions training = read_training_options(map);
    config.dtype = training.dtype;
    config.precision = training.precision;
    config.optimizer = training.optimizer;
    config.collective_algorithm = training.collective_algorithm;
    config.bucket_size = map.quantity<Bytes>("bucket_size").value_or(config.bucket_size);
    config.overlap = map.boolean("overlap").value_or(true);
    if (config.bucket_size.value() <= 0) ctx.reader.error(map.get("bucket_size"), "bucket_size must be positive");
    const std::size_t gpus = ctx.cluster.gpu_count();
    if (gpus > 0 && static_cast<std::size_t>(config.global_batch) < gpus)
      ctx.reader.error(map.get("global_batch"),
                       fmt::format("global_batch {} is smaller than the {} GPUs of the cluster: every GPU needs a sample",
                                   config.global_batch, gpus));
    return spec;
  }

  std::optional<TaskGraph> lower(const Scenario& scenario) const override {
    return build_data_parallel(scenario.workload_as<DataParallelWorkload>()->config, scenario.cluster.gpu_names(),
                               scenario.run.iterations);
  }

  // Every GPU holds the whole model's states (planners/data_parallel's first task allocates them).
  std::vector<MemoryBreakdown> model_state_memory(const Scenario& scenario, const SimulationResult& result) const override {
    const DataParallelConfig& config = scenario.workload_as<DataParallelWorkload>()->config;
    const double parameters = config.model.parameter_bytes().value() / kProfileBytesPerParameter;
    return std::vector<MemoryBreakdown>(result.graph.devices().size(),
                                        model_states(parameters, config.precision, config.optimizer));
  }
};

}  // namespace

std::shared_ptr<const WorkloadKind> make_data_parallel_kind() { return std::make_shared<DataParallelKind>(); }

}  // namespace dnnsim
