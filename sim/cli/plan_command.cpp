// `dnnsim plan SCENARIO [--planner NAME] [--simulate]` (docs/pipeline.md): the plan a planner
// chooses for a scenario's pipeline workload, its predicted iteration time and search statistics,
// and with --simulate the simulated time beside the prediction.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>

#include "models/common/units.hpp"
#include "sim/cli/commands.hpp"
#include "sim/report/report.hpp"
#include "sim/workloads/pipeline/pipeline_workload.hpp"
#include "sim/run/simulation.hpp"

namespace dnnsim::cli {

int run_plan_command(const PlanCommandOptions& options) {
  Scenario scenario = load_scenario(options.scenario, options.overrides);
  const auto* given = scenario.workload_as<PipelineWorkloadSpec>();
  if (given == nullptr)
    throw InputError(SourceLocation{scenario.file, 0, 0},
                     "dnnsim plan needs a pipeline workload (workload.kind: pipeline, docs/pipeline.md)");
  // --planner replaces the scenario's planner or stages in a copy of its spec.
  auto spec = std::make_shared<PipelineWorkloadSpec>(*given);
  scenario.workload = spec;
  if (!options.planner.empty()) {
    (void)builtin_planners().at(options.planner, SourceLocation{"--planner " + options.planner, 0, 0});
    spec->planner = options.planner;
    spec->stages.clear();
    if (options.planner != "uniform") spec->planner_stages.reset();
  }
  const PipelineSetup setup = plan_pipeline(scenario, *spec);
  const PipelineRunReport& report = setup.report;
  const std::vector<std::string> gpus = scenario.cluster.gpu_names();
  std::cout << fmt::format("scenario {}: planner {}, schedule {}\n", scenario.name, report.planner, report.schedule);
  if (!report.plan.feasible) {
    std::cout << fmt::format("infeasible: {}\n", report.plan.reason);
    return 0;
  }
  const PipelinePlan& plan = report.plan.plan;
  std::cout << fmt::format("plan: {}\n\n{:<6} {:<18} {:>5}  {}\n", plan.describe(gpus), "stage", "layers", "gpus",
                           "devices");
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    std::vector<std::string> chunks;
    for (const LayerRange& range : plan.stages[s].chunks) chunks.push_back(fmt::format("[{},{})", range.begin, range.end));
    std::cout << fmt::format("{:<6} {:<18} {:>5}  {}\n", s, fmt::format("{}", fmt::join(chunks, "+")),
                             plan.stages[s].devices.size(), describe_devices(plan.stages[s].devices, gpus));
  }
  const std::size_t candidates = report.plan.statistics.candidates;
  const std::string search = report.planner == "explicit"
                                 ? std::string("explicit stages")
                                 : fmt::format("{} candidate{} scored", candidates, candidates == 1 ? "" : "s");
  std::cout << fmt::format("\npredicted iteration {:>12}   ({}; {})\n",
                           format_seconds(report.plan.predicted_iteration_time), report.plan.cost_model, search)
            << std::flush;
  // Wall time varies run to run: stderr, so that stdout stays byte-identical.
  std::cerr << fmt::format("search took {:.3f} s wall\n", report.plan.statistics.wall_seconds);
  if (!options.simulate) return 0;

  const SimulationResult result = run_scenario(scenario, SimulationOptions{false});
  const auto summary = make_summary(scenario, result);
  const double simulated = summary["mean"]["iteration_time_s"].get<double>();
  std::cout << fmt::format("simulated iteration {:>12}   ({} iteration{}, status {})\n", format_seconds(Seconds(simulated)),
                           summary["iterations"].get<int>(), summary["iterations"].get<int>() == 1 ? "" : "s",
                           summary["status"].get<std::string>());
  if (simulated > 0)
    std::cout << fmt::format("prediction error     {:+.1f}%\n",
                             100.0 * (report.plan.predicted_iteration_time.value() - simulated) / simulated);
  return 0;
}

}  // namespace dnnsim::cli
