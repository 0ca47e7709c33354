#include "sim/workloads/workload_kind.hpp"

#include <fmt/format.h>

#include "sim/run/simulation.hpp"
#include "sim/scenario/workload_reading.hpp"

namespace dnnsim {

std::string WorkloadParseContext::resolve_path(const std::string& path) const {
  return resolve_scenario_path(reader.file(), path);
}

std::optional<TaskGraph> WorkloadKind::lower(const Scenario&) const { return std::nullopt; }

void WorkloadKind::add_to_summary(const Scenario&, const SimulationResult&, nlohmann::ordered_json&) const {}

void WorkloadKind::write_files(const Scenario&, const SimulationResult&, const std::string&) const {}

std::string TaskGraphKind::check(const Scenario& scenario) const {
  const std::optional<TaskGraph> graph = lower(scenario);
  return fmt::format("ok ({} GPUs, {} tasks)", scenario.cluster.gpu_count(), graph->tasks().size());
}

SimulationResult TaskGraphKind::run(const Scenario& scenario, const SimulationOptions& options) const {
  return simulate(scenario, std::move(*lower(scenario)), options);
}

}  // namespace dnnsim
