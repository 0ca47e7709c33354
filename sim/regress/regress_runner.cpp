// Runs the processes of a regression (see regress_runner.hpp).
#include "sim/regress/regress_runner.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <ostream>

#include "models/common/input_file.hpp"
#include "sim/process/process_pool.hpp"

namespace dnnsim {
namespace {

namespace fs = std::filesystem;

constexpr int kExitExpectationMissed = 3;  // `dnnsim run`: the summary is written all the same

}  // namespace

RegressRunResult run_regress(const RegressPlan& plan, const RegressRunOptions& options) {
  const std::string executable = options.executable.empty() ? current_executable() : options.executable;
  create_output_directory(options.out_dir);  // a file there is named as it was given
  create_output_directory((fs::path(options.out_dir) / "runs").string());
  const auto run_dir = [&](std::size_t i) { return fs::path(options.out_dir) / "runs" / plan.runs[i].id; };
  RegressRunResult result;
  result.outcomes.assign(plan.runs.size(), RunOutcome{std::nullopt, "interrupted before the run finished"});
  std::size_t finished = 0;

  const auto start = [&](std::size_t i) {
    const fs::path dir = run_dir(i);
    fs::remove_all(dir);  // an earlier regression's summary.json must not be read for this run
    fs::create_directories(dir);
    ChildCommand command{{executable, "run", plan.runs[i].scenario, "--out", dir.string()},
                         (dir / "stdout.txt").string(),
                         (dir / "stderr.txt").string(),
                         options.timeout};
    for (const std::string& assignment : plan.runs[i].overrides) {
      command.argv.emplace_back("--set");
      command.argv.push_back(assignment);
    }
    for (const char* only_the_summary : {"outputs.trace=false", "outputs.tasks_csv=false"}) {
      command.argv.emplace_back("--set");
      command.argv.emplace_back(only_the_summary);
    }
    return command;
  };
  const auto done = [&](std::size_t i, const ChildExit& exit) {
    const fs::path dir = run_dir(i);
    RunOutcome& outcome = result.outcomes[i];
    if (exit.how == ChildExit::How::exited && (exit.code == 0 || exit.code == kExitExpectationMissed)) {
      try {
        outcome = RunOutcome{nlohmann::ordered_json::parse(read_text_file((dir / "summary.json").string())), ""};
      } catch (const nlohmann::json::exception&) {
        outcome.error = "the run wrote no readable summary.json";
      }
    } else {
      outcome.error = failure_reason(exit, read_text_file((dir / "stderr.txt").string()), options.timeout);
    }
    ++finished;
    if (options.progress != nullptr)
      *options.progress << fmt::format("[{}/{}] {}: {}\n", finished, plan.runs.size(), plan.runs[i].id,
                                       outcome.summary ? "ok" : "failed: " + outcome.error)
                        << std::flush;
  };
  result.interrupted = !run_child_processes(plan.runs.size(), options.jobs, start, done);
  return result;
}

}  // namespace dnnsim
