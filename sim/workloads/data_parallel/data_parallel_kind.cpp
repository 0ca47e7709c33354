#include "sim/workloads/data_parallel/data_parallel_kind.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "sim/run/simulation.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/workload_reading.hpp"

namespace dnnsim {
namespace {

// Every GPU of the cluster is a replica of the one stage, with global_batch / GPUs samples.
ReplicaWindow window_of(const Cluster& cluster, const DataParallelConfig& config) {
  std::vector<DeviceId> gpus(cluster.gpu_count());
  std::iota(gpus.begin(), gpus.end(), DeviceId{0});
  return replica_window(cluster, {gpus}, 1, config.global_batch, config.collective_algorithm, "the global batch");
}

class DataParallelKind final : public TaskGraphKind {
 public:
  std::shared_ptr<const WorkloadSpec> parse(WorkloadParseContext& ctx) const override {
    auto spec = std::make_shared<DataParallelWorkload>();
    MapReader& map = ctx.map;
    DataParallelConfig& config = spec->config;
    spec->where = ctx.reader.where(map.node());
    if (YAML::Node model = map.require("model"); model.IsDefined())
      config.model = read_layer_model(ctx.reader, model, "the model");
    const TrainingOptions training = read_training_options(map, ctx.cluster);
    assign_training_options(training, config);
    config.overlap = training.overlap.value_or(true);
    const std::size_t gpus = ctx.cluster.gpu_count();
    if (gpus > 0 && !map.refused("global_batch") && static_cast<std::size_t>(config.global_batch) < gpus)
      ctx.reader.error(
          map.get("global_batch"),
          fmt::format("global_batch {} is smaller than the {} GPUs of the cluster: every GPU needs a sample",
                      config.global_batch, gpus));
    spec->replica_fidelity = read_replica_fidelity(ctx.reader, map, ctx.cluster, config.collective_algorithm);
    // Every GPU is a replica, so the whole window is known now: `window` where it is not exact is an
    // error at the key (the platform's problems were reported by read_replica_fidelity).
    if (spec->replica_fidelity == ReplicaFidelity::window && gpus > 0) {
      const std::vector<std::string> platform =
          replica_window_platform_problems(ctx.cluster, config.collective_algorithm);
      for (const std::string& problem : window_of(ctx.cluster, config).problems)
        if (std::find(platform.begin(), platform.end(), problem) == platform.end())
          ctx.reader.error(map.get("data_parallel_fidelity"), window_refused(problem));
    }
    return spec;
  }

  std::optional<TaskGraph> lower(const Scenario& scenario) const override {
    DataParallelConfig config = scenario.workload_as<DataParallelWorkload>()->config;
    config.replica_window = data_parallel_window(scenario).replicas;
    return build_data_parallel(config, scenario.cluster.gpu_names(), scenario.run.iterations);
  }

  std::vector<SummaryField> summary_fields() const override {
    return {{"data_parallel.data_parallel_fidelity", FieldType::text},
            {"data_parallel.data_parallel_window"},
            {"data_parallel.data_parallel_fidelity_reason", FieldType::text}};
  }

  // With data_parallel_fidelity asked: what ran, and why not a window where `auto` fell back.
  void add_to_summary(const Scenario& scenario, const SimulationResult&,
                      nlohmann::ordered_json& summary) const override {
    if (scenario.workload_as<DataParallelWorkload>()->replica_fidelity == ReplicaFidelity::replicas) return;
    const ReplicaWindow window = data_parallel_window(scenario);
    nlohmann::ordered_json section;
    section["data_parallel_fidelity"] = window.replicas > 0 ? "window" : "replicas";
    if (window.replicas > 0) section["data_parallel_window"] = window.replicas;
    if (!window.problems.empty()) section["data_parallel_fidelity_reason"] = window.problems.front();
    summary["data_parallel"] = std::move(section);
  }

  // Every GPU holds the whole model's states (planners/data_parallel's first task allocates them).
  std::vector<MemoryBreakdown> model_state_memory(const Scenario& scenario,
                                                  const SimulationResult& result) const override {
    const DataParallelConfig& config = scenario.workload_as<DataParallelWorkload>()->config;
    const double parameters = config.model.parameter_bytes().value() / kProfileBytesPerParameter;
    return std::vector<MemoryBreakdown>(result.graph.devices().size(),
                                        model_states(parameters, config.precision, config.optimizer));
  }
};

}  // namespace

std::shared_ptr<const WorkloadKind> make_data_parallel_kind() { return std::make_shared<DataParallelKind>(); }

ReplicaWindow data_parallel_window(const Scenario& scenario) {
  const auto& spec = *scenario.workload_as<DataParallelWorkload>();
  if (spec.replica_fidelity == ReplicaFidelity::replicas) return {};
  ReplicaWindow window = window_of(scenario.cluster, spec.config);
  if (std::string why = network_breaks_mirroring(scenario.network, "replicas'"); !why.empty())
    window.problems.push_back(std::move(why));
  if (!window.problems.empty()) window.replicas = 0;
  return window;
}

}  // namespace dnnsim
