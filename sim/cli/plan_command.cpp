// `dnnsim plan SCENARIO [--planner NAME] [--simulate | --simulate-top K]` (docs/pipeline.md): the plan
// a planner chooses for a scenario's pipeline workload (or SPMD workload, docs/spmd.md: printed only),
// its predicted iteration time and search statistics; with --simulate the simulated time beside the prediction, and
// with --simulate-top the megatron planner's K best configurations each simulated in a child process (SimGrid runs one
// engine per process), ranked by simulated time.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "models/common/units.hpp"
#include "sim/cli/commands.hpp"
#include "sim/process/process_pool.hpp"
#include "sim/report/report.hpp"
#include "sim/run/progress.hpp"
#include "sim/run/resource_guard.hpp"
#include "sim/run/simulation.hpp"
#include "sim/workloads/pipeline/pipeline_workload.hpp"
#include "sim/workloads/spmd/spmd_kind.hpp"

namespace dnnsim::cli {

namespace {

// Each of the `count` best configurations of `ranking` simulated by `EXE plan … --candidate k
// --simulate --out DIR/candidate-k`, then listed fastest first with the estimate beside.
void simulate_candidates(const PlanCommandOptions& options, const std::vector<std::string>& ranking, Seconds limit) {
  namespace fs = std::filesystem;
  const std::size_t count = std::min(options.simulate_top, ranking.size());
  const fs::path dir = options.out.empty() ? fs::path("out/plan") : fs::path(options.out);
  const std::string executable = current_executable();
  struct Outcome {
    std::string status;  // the run's status, or why the child failed
    double predicted = 0, simulated = 0;
  };
  std::vector<Outcome> outcomes(count);
  std::size_t done = 0;
  std::cerr << fmt::format("simulating the {} best of {} configurations, each in its own process → {}/\n", count,
                           ranking.size(), dir.string());
  const auto folder = [&](std::size_t i) { return dir / fmt::format("candidate-{}", i + 1); };
  const bool completed = run_child_processes(
      count, options.jobs,
      [&](std::size_t i) {
        fs::remove_all(folder(i));  // a killed earlier attempt must not leave a summary.json behind
        fs::create_directories(folder(i));
        ChildCommand child{{executable, "plan", options.scenario},
                           (folder(i) / "stdout.txt").string(),
                           (folder(i) / "stderr.txt").string(),
                           limit};
        for (const std::string& assignment : options.overrides)
          child.argv.insert(child.argv.end(), {"--set", assignment});
        if (!options.planner.empty()) child.argv.insert(child.argv.end(), {"--planner", options.planner});
        child.argv.insert(child.argv.end(),
                          {"--candidate", std::to_string(i + 1), "--simulate", "--out", folder(i).string()});
        return child;
      },
      [&](std::size_t i, const ChildExit& exit) {
        Outcome& outcome = outcomes[i];
        if (exit.how == ChildExit::How::exited && exit.code == 0) {
          const auto summary = nlohmann::ordered_json::parse(read_text_file(folder(i) / "summary.json"));
          outcome.status = summary["status"].get<std::string>();
          outcome.simulated = summary_metric(summary, "mean.iteration_time_s").value_or(0);
          outcome.predicted = summary_metric(summary, "pipeline.predicted_iteration_time_s").value_or(0);
        } else {
          outcome.status = failure_reason(exit, read_text_file(folder(i) / "stderr.txt"), limit);
        }
        std::cerr << fmt::format("[{}/{}] candidate {}: {}\n", ++done, count, i + 1, outcome.status);
      });
  if (!completed) throw std::runtime_error("interrupted: the candidates simulated so far are in " + dir.string());
  std::vector<std::size_t> order(count);
  for (std::size_t i = 0; i < count; ++i) order[i] = i;
  // Simulated runs first, fastest first; ties and failures keep the estimate's order.
  const auto ran = [&](std::size_t i) { return outcomes[i].status == "ok" && outcomes[i].simulated > 0; };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (ran(a) != ran(b)) return ran(a);
    return ran(a) && outcomes[a].simulated < outcomes[b].simulated;
  });
  std::cout << fmt::format("\nsimulated, fastest first (candidate: the estimate's rank):\n");
  for (const std::size_t i : order) {
    const Outcome& outcome = outcomes[i];
    if (ran(i))
      std::cout << fmt::format("  candidate {:>2}: simulated {:>12}, estimate {:+.1f}%   {}\n", i + 1,
                               format_seconds(Seconds(outcome.simulated)),
                               100.0 * (outcome.predicted - outcome.simulated) / outcome.simulated, ranking[i]);
    else
      std::cout << fmt::format("  candidate {:>2}: {}   {}\n", i + 1, outcome.status, ranking[i]);
  }
}

// An SPMD workload's plan (docs/spmd.md): the planner's choice, its prediction and search statistics;
// the plan is simulated by `dnnsim run`.
int print_spmd_plan(const Scenario& scenario, const SpmdWorkload& spec, const PlanCommandOptions& options) {
  if (options.simulate || options.simulate_top > 0 || options.candidate > 0)
    throw InputError(SourceLocation{options.simulate        ? "--simulate"
                                    : options.candidate > 0 ? "--candidate"
                                                            : "--simulate-top",
                                    0, 0},
                     "an SPMD workload's plan is printed only: dnnsim run simulates it");
  const auto start = std::chrono::steady_clock::now();
  const SpmdPlan plan = plan_spmd(scenario, spec);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << fmt::format("scenario {}: SPMD planner {}, {} operators on {} GPUs\n", scenario.name, plan.planner,
                           spec.graph.size(), scenario.cluster.gpu_count());
  for (const std::string& line : plan.report) std::cout << "  " << line << "\n";
  if (!plan.feasible) {
    std::cout << fmt::format("no feasible plan: {}\n", plan.reason);
    std::cerr << fmt::format("search took {:.3f} s wall\n", wall);
    return 0;
  }
  std::cout << fmt::format("mesh {}{}, {} collectives per iteration, {} rounds, {} states searched\n",
                           plan.program.mesh.describe(),
                           plan.pipeline ? fmt::format(" ({} pipeline stages)", plan.pipeline->devices.size()) : "",
                           plan.program.collective_count(), plan.rounds, plan.statistics.states);
  std::cout << fmt::format("predicted iteration {:>12}\n", format_seconds(Seconds(plan.predicted_iteration_s)));
  std::cerr << fmt::format("search took {:.3f} s wall\n", wall);  // varies run to run: stderr
  return 0;
}

}  // namespace

int run_plan_command(const PlanCommandOptions& options) {
  // Checked before anything runs: a bad flag is an error, not a surprise after the search.
  const Seconds limit = options.timeout.empty() ? Seconds(3600) : parse_time_limit(options.timeout);
  if (!options.planner.empty())
    (void)builtin_planners().at(options.planner, SourceLocation{"--planner " + options.planner, 0, 0});
  Scenario scenario = load_scenario(options.scenario, options.overrides,
                                    options.planner.empty() ? ScenarioTreeEdit{} : replace_planner(options.planner));
  if (const auto* spmd = scenario.workload_as<SpmdWorkload>()) return print_spmd_plan(scenario, *spmd, options);
  if (scenario.workload_as<PipelineWorkloadSpec>() == nullptr)
    throw InputError(SourceLocation{scenario.file, 0, 0},
                     "dnnsim plan needs a pipeline or SPMD workload (workload.kind: pipeline, docs/pipeline.md; "
                     "spmd, docs/spmd.md)");
  const std::shared_ptr<PipelineWorkloadSpec> spec = plannable_spec(scenario);
  if (options.candidate > 0 || options.simulate_top > 0) {
    const PlannerRegistry::Entry* planner = builtin_planners().find(spec->planner);
    if (planner == nullptr || !planner->value->ranks_configurations()) {
      std::vector<std::string> rankers;
      for (const auto& entry : builtin_planners().entries())
        if (entry.value->ranks_configurations()) rankers.push_back(entry.name);
      throw InputError(SourceLocation{options.candidate > 0 ? "--candidate" : "--simulate-top", 0, 0},
                       fmt::format("only a planner that ranks configurations ({}) has candidates; this plan's planner "
                                   "is '{}'",
                                   fmt::join(rankers, ", "),
                                   spec->planner.empty() ? std::string("explicit stages") : spec->planner));
    }
    if (options.candidate > 0) spec->planner_options.set("candidate", static_cast<std::int64_t>(options.candidate));
  }
  // Progress on stderr; Ctrl-C or --time-limit stop the search with the best plan found so far.
  const InterruptGuard interrupt_guard;
  SearchProgress progress(std::cerr, ::isatty(STDERR_FILENO) != 0, fmt::format("planning ({})", spec->planner),
                          options.time_limit_s);
  progress.stop_above(memory_budget(scenario));
  const PipelineSetup setup =
      plan_pipeline(scenario, *spec, [&progress](double fraction) { return progress(fraction); });
  progress.finish();
  const PipelineRunReport& report = setup.report;
  const DeviceNames gpus = report.device_names(scenario.cluster.gpu_names());
  std::cout << fmt::format("scenario {}: planner {}, schedule {}\n", scenario.name, report.planner, report.schedule);
  std::cout << fmt::format("activation memory: {}\n", report.activation_memory);
  if (report.plan.searched_blocks > 0)
    std::cout << fmt::format("searched as {} blocks of {} layers: stages begin and end at block boundaries\n",
                             report.plan.searched_blocks, spec->model.layers.size());
  if (report.plan.stopped_early)
    std::cout << fmt::format("search stopped ({}): the best plan found so far\n", progress.stop_reason());
  if (report.tensor_parallel)
    std::cout << fmt::format(
        "tensor parallel {} (groups of consecutive GPUs), sequence parallel {}, recompute {}, "
        "distributed optimizer {}\n",
        report.tensor_parallel->degree, report.tensor_parallel->sequence_parallel ? "on" : "off",
        recompute_name(report.tensor_parallel->recompute),
        report.tensor_parallel->distributed_optimizer ? "on" : "off");
  if (const auto& layout = report.plan.llm_layout) std::cout << fmt::format("layout {}\n", layout->describe);
  if (const PlanStatistics& counts = report.plan.statistics; counts.enumerated > 0) {
    std::cout << fmt::format("layouts: {} enumerated, {} out of memory, {} pruned by the compute bound, {} priced\n",
                             counts.enumerated, counts.out_of_memory, counts.bounded, counts.candidates);
  }
  if (!report.plan.reference.empty()) std::cout << report.plan.reference << "\n";
  if (report.mirror_ranks)
    std::cout << "tensor-parallel fidelity: group (rank 0 of each group simulated, the others mirror it)\n";
  if (!report.all_ranks_because.empty())
    std::cout << fmt::format("tensor-parallel fidelity: every rank simulated ({})\n", report.all_ranks_because);
  for (const std::string& problem : setup.mirror_problems)
    std::cout << fmt::format(
        "tensor-parallel fidelity: group cannot simulate this plan ({}); --simulate needs "
        "tensor_parallel_fidelity: ranks\n",
        problem);
  if (report.replica_window > 0)
    std::cout << fmt::format(
        "data-parallel fidelity: window ({} replicas per stage simulated, the others mirror "
        "them)\n",
        report.replica_window);
  if (!report.all_replicas_because.empty())
    std::cout << fmt::format("data-parallel fidelity: every replica simulated ({})\n", report.all_replicas_because);
  for (const std::string& problem : setup.window_problems)
    std::cout << fmt::format(
        "data-parallel fidelity: window cannot simulate this plan ({}); --simulate needs "
        "data_parallel_fidelity: replicas\n",
        problem);
  if (!report.plan.ranking.empty()) {
    constexpr std::size_t kShown = 10;
    // The planner's search space, where its options narrowed it (a framework's limits).
    const std::vector<std::string>& limits = report.plan.search_limits;
    std::cout << fmt::format(
        "{} ({}){}, best first:\n", report.plan.llm_layout ? "best layouts kept" : "candidates that fit",
        report.plan.ranking.size(), limits.empty() ? "" : fmt::format(" with {}", fmt::join(limits, ", ")));
    for (std::size_t i = 0; i < std::min(kShown, report.plan.ranking.size()); ++i)
      std::cout << fmt::format("  {:>2}. {}\n", i + 1, report.plan.ranking[i]);
  }
  if (!report.plan.reranked.empty()) {
    // The plans Formula 2 kept, in its order, with the estimator's time that chose among them.
    if (report.planner == "explicit")
      std::cout << "the given stages under both estimates:\n";
    else
      std::cout << fmt::format("kept by Formula 2 ({}), re-ranked by the pipeline estimator (* chosen):\n",
                               report.plan.reranked.size());
    std::cout << fmt::format("  {:>11} {:>11}  {}\n", "Formula 2", "estimator", "plan");
    // The first ten by Formula 2, and the chosen one wherever it ranks.
    constexpr std::size_t kShown = 10;
    std::size_t hidden = 0;
    for (std::size_t i = 0; i < report.plan.reranked.size(); ++i) {
      const PlanResult::RankedPlan& kept = report.plan.reranked[i];
      const bool chosen = kept.plan == report.plan.plan;
      if (i >= kShown && !chosen) {
        ++hidden;
        continue;
      }
      std::cout << fmt::format("{} {:>11} {:>11}  {}\n", chosen ? "*" : " ", format_seconds(kept.formula2),
                               format_seconds(kept.estimate), kept.plan.describe(gpus));
    }
    if (hidden > 0) std::cout << fmt::format("  … {} more not shown\n", hidden);
  }
  if (!report.plan.feasible) {
    std::cout << fmt::format("infeasible: {}\n", report.plan.reason);
    return 0;
  }
  const PipelinePlan& plan = report.plan.plan;
  std::cout << fmt::format("plan: {}\n\n{:<6} {:<18} {:>5}  {}\n", plan.describe(gpus), "stage", "layers", "gpus",
                           "devices");
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    std::vector<std::string> chunks;
    for (const LayerRange& range : plan.stages[s].chunks)
      chunks.push_back(fmt::format("[{},{})", range.begin, range.end));
    std::cout << fmt::format("{:<6} {:<18} {:>5}  {}\n", s, fmt::format("{}", fmt::join(chunks, "+")),
                             plan.stages[s].devices.size(), describe_devices(plan.stages[s].devices, gpus));
  }
  const std::size_t candidates = report.plan.statistics.candidates;
  const std::string search =
      report.planner == "explicit"
          ? std::string("explicit stages")
          : fmt::format("{} scored{}", counted(candidates, "candidate"),
                        report.plan.statistics.bounded == 0
                            ? std::string()
                            : fmt::format(", {} more skipped by the lower bound", report.plan.statistics.bounded));
  std::cout << fmt::format("\npredicted iteration {:>12}   ({}; {})\n",
                           format_seconds(report.plan.predicted_iteration_time), report.plan.cost_model, search)
            << std::flush;
  // Wall time varies run to run: stderr, so that stdout stays byte-identical.
  std::cerr << fmt::format("search took {:.3f} s wall\n", report.plan.statistics.wall_seconds);
  if (options.simulate_top > 0) simulate_candidates(options, report.plan.ranking, limit);
  if (!options.simulate) return 0;

  const SimulationResult result = run_scenario(scenario, SimulationOptions{false});
  const auto summary = make_summary(scenario, result);
  if (!options.out.empty()) write_reports(scenario, result, summary, options.out);
  const double simulated = summary["mean"]["iteration_time_s"].get<double>();
  std::cout << fmt::format("simulated iteration {:>12}   ({}, status {})\n", format_seconds(Seconds(simulated)),
                           counted(summary["iterations"].get<std::size_t>(), "iteration"),
                           summary["status"].get<std::string>());
  if (simulated > 0)
    std::cout << fmt::format("prediction error     {:+.1f}%\n",
                             100.0 * (report.plan.predicted_iteration_time.value() - simulated) / simulated);
  return 0;
}

}  // namespace dnnsim::cli
