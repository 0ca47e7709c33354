// dnnsim: the command line. Thin: it parses arguments, calls the libraries, prints, and decides the
// exit code — 0 success, 1 internal error, 2 bad input (nothing simulated), 3 an expectation missed.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>

#include "models/hardware/catalog.hpp"
#include "models/program/collective_algorithms.hpp"
#include "sim/cli/commands.hpp"
#include "sim/report/report.hpp"
#include "sim/run/simulation.hpp"
#include "sim/scenario/scenario.hpp"

namespace {

constexpr int kExitInputError = 2;
constexpr int kExitExpectationMissed = 3;

void print_input_error(const dnnsim::InputError& error) {
  for (const auto& d : error.diagnostics()) std::cerr << dnnsim::format_diagnostic(d) << '\n';
  std::cerr << fmt::format("{} error{}; nothing was simulated\n", error.diagnostics().size(),
                           error.diagnostics().size() == 1 ? "" : "s");
}

int command_run(const std::string& path, const std::string& out, const std::vector<std::string>& overrides) {
  dnnsim::Scenario scenario = dnnsim::load_scenario(path, overrides);
  if (!out.empty()) scenario.outputs.dir = out;
  dnnsim::TaskGraph graph = dnnsim::build_workload(scenario);
  const dnnsim::SimulationResult result =
      dnnsim::simulate(scenario, std::move(graph), dnnsim::SimulationOptions{scenario.outputs.trace});
  const auto summary = dnnsim::make_summary(scenario, result);
  dnnsim::write_reports(scenario, result, summary, scenario.outputs.dir);
  std::cout << dnnsim::format_summary_table(summary);
  std::cout << fmt::format("\nreports in {}/\n", scenario.outputs.dir);
  std::cerr << fmt::format("simulated {} operations ({} flows) in {:.3f} s wall\n", result.operations,
                           result.flow_count, result.wall_seconds);
  if (scenario.expectations.empty()) return 0;
  const auto verdicts = dnnsim::check_expectations(scenario.expectations, summary);
  std::cout << dnnsim::format_verdicts(verdicts, summary);
  const bool all_passed = std::all_of(verdicts.begin(), verdicts.end(), [](const auto& v) { return v.passed; });
  return all_passed ? 0 : kExitExpectationMissed;
}

int command_validate(const std::vector<std::string>& paths) {
  int status = 0;
  for (const std::string& path : paths) {
    try {
      const dnnsim::Scenario scenario = dnnsim::load_scenario(path);
      const dnnsim::TaskGraph graph = dnnsim::build_workload(scenario);
      std::cout << fmt::format("{}: ok ({} GPUs, {} tasks)\n", path, scenario.cluster.gpu_count(),
                               graph.tasks().size());
    } catch (const dnnsim::InputError& e) {
      print_input_error(e);
      status = kExitInputError;
    }
  }
  return status;
}

int command_list(const std::string& what) {
  const auto& catalog = dnnsim::HardwareCatalog::builtin();
  if (what == "gpus") {
    std::cout << dnnsim::format_gpu_table(catalog);
  } else if (what == "links") {
    std::cout << dnnsim::format_link_table(catalog);
  } else {
    const auto& registry = dnnsim::builtin_collective_algorithms();
    for (const auto& entry : registry.entries())
      std::cout << fmt::format("{:<14} {}\n{:<14} source: {}\n", entry.name, entry.description, "", entry.source);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dnnsim: simulate distributed deep-learning training on GPU clusters (SimGrid-based)"};
  app.set_version_flag("--version", std::string("dnnsim ") + DNNSIM_VERSION);
  app.require_subcommand(1);

  std::string scenario_path;
  std::string out_dir;
  std::vector<std::string> overrides;
  auto* run = app.add_subcommand("run", "simulate a scenario and write OUT/summary.json, tasks.csv, trace.json");
  run->add_option("SCENARIO", scenario_path, "scenario YAML file")->required()->check(CLI::ExistingFile);
  run->add_option("--out", out_dir, "output directory (default: outputs.dir, or out/<scenario name>)");
  run->add_option("--set", overrides, "override a scenario key: --set run.iterations=5 (repeatable)");

  std::vector<std::string> validate_paths;
  auto* validate = app.add_subcommand("validate", "check scenario files and report every problem; simulate nothing");
  validate->add_option("SCENARIO", validate_paths, "scenario YAML files")->required();

  std::string list_what;
  auto* list = app.add_subcommand("list", "print a catalog or a registry");
  list->add_option("WHAT", list_what, "gpus, links or collectives")
      ->required()
      ->check(CLI::IsMember({"gpus", "links", "collectives"}));

  dnnsim::cli::BenchOptions bench_options;
  auto* bench = app.add_subcommand("bench", "executor throughput against a bare SimGrid loop (docs/performance.md)");
  bench->add_option("--gpus", bench_options.gpu_counts, "cluster sizes to measure (multiples of 8)")->delimiter(',');
  bench->add_option("--iterations", bench_options.iterations, "training iterations per measurement")
      ->check(CLI::PositiveNumber);
  bench->add_option("--repeat", bench_options.repeat, "runs of the ring and raw loops per size; the fastest counts")
      ->check(CLI::PositiveNumber);

  CLI11_PARSE(app, argc, argv);
  try {
    if (*run) return command_run(scenario_path, out_dir, overrides);
    if (*validate) return command_validate(validate_paths);
    if (*list) return command_list(list_what);
    if (*bench) return dnnsim::cli::run_bench(bench_options);
  } catch (const dnnsim::InputError& e) {
    print_input_error(e);
    return kExitInputError;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
