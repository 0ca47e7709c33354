#include "sim/workloads/workload_kind.hpp"

#include <fmt/format.h>

#include "models/common/units.hpp"
#include "sim/run/resource_guard.hpp"
#include "sim/run/simulation.hpp"
#include "sim/scenario/workload_reading.hpp"

namespace dnnsim {

std::string WorkloadParseContext::resolve_path(const std::string& path) const {
  return resolve_scenario_path(reader.file(), path);
}

std::optional<TaskGraph> WorkloadKind::lower(const Scenario&) const { return std::nullopt; }

std::optional<WorkloadSize> WorkloadKind::size(const Scenario& scenario) const {
  const std::optional<TaskGraph> graph = lower(scenario);
  if (!graph) return std::nullopt;
  return size_of(scenario, *graph);
}

WorkloadSize size_of(const Scenario& scenario, const TaskGraph& graph) {
  // Only the trace's link counters need the flows' routes: the platform's layout is built for them.
  WorkloadSize size = count_task_graph(graph, device_topology(scenario, graph), scenario.run.collective_fidelity,
                                       calibrated_devices(scenario, graph),
                                       scenario.outputs.trace ? route_links(scenario, graph) : nullptr);
  size.basis =
      fmt::format("{} on {} GPUs at {} fidelity", scenario.workload->iterations_phrase(scenario.run.iterations),
                  graph.devices().size(),
                  scenario.run.collective_fidelity ? collective_fidelity_name(*scenario.run.collective_fidelity)
                                                   : "default collective");
  return size;
}

std::string WorkloadSpec::iterations_phrase(int run_iterations) const {
  return counted(static_cast<std::size_t>(run_iterations), "iteration");
}

void WorkloadKind::add_to_summary(const Scenario&, const SimulationResult&, nlohmann::ordered_json&) const {}

std::vector<MemoryBreakdown> WorkloadKind::model_state_memory(const Scenario&, const SimulationResult&) const {
  return {};
}

MemoryBreakdown model_states(double parameters, Precision precision, Optimizer optimizer) {
  const BytesPerParameter per = bytes_per_parameter(precision, optimizer);
  MemoryBreakdown memory;
  memory.weights = Bytes(parameters * per.weights);
  memory.gradients = Bytes(parameters * per.gradients);
  memory.optimizer_state = Bytes(parameters * per.optimizer_state);
  return memory;
}

void WorkloadKind::write_files(const Scenario&, const SimulationResult&, const std::string&) const {}

std::string TaskGraphKind::check(const Scenario& scenario) const {
  const std::optional<TaskGraph> graph = lower(scenario);
  return fmt::format("ok ({} GPUs, {} tasks)", scenario.cluster.gpu_count(), graph->tasks().size());
}

SimulationResult TaskGraphKind::run(const Scenario& scenario, const SimulationOptions& options) const {
  return simulate(scenario, std::move(*lower(scenario)), options);
}

}  // namespace dnnsim
