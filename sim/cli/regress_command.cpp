// `dnnsim regress` (docs/regress.md): reads every scenario with expectations and every comparison file
// under the given directories, runs each run as its own process, prints the verdict table and writes
// it as OUT/regress.csv and OUT/regress.md. Bad input is thrown as InputError, which main() prints and
// turns into exit code 2 before anything runs.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "models/common/units.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/exit_codes.hpp"
#include "sim/regress/regress_report.hpp"
#include "sim/regress/regress_runner.hpp"
#include "sim/regress/regress_spec.hpp"

namespace dnnsim::cli {
namespace {

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", path.string()));
}

}  // namespace

Seconds parse_time_limit(const std::string& text) {
  const SourceLocation where{"--timeout " + text, 0, 0};
  Seconds limit{0};
  try {
    limit = Seconds(parse_quantity(text, Dimension::seconds));
  } catch (const UnitError& e) {
    throw InputError(where, e.what());
  }
  if (limit.value() <= 0) throw InputError(where, "the time limit must be positive");
  return limit;
}

int run_regress_command(const RegressCommandOptions& options) {
  RegressRunOptions run;
  run.out_dir = options.out;
  run.jobs = options.jobs;
  run.progress = &std::cerr;
  if (!options.timeout.empty()) run.timeout = parse_time_limit(options.timeout);

  const RegressPlan plan = load_regress_plan(options.inputs);  // checks every input before anything runs
  if (options.verbose)
    for (const std::string& skipped : plan.skipped) std::cerr << "skipped " << skipped << '\n';
  std::cerr << fmt::format("regress: {} on {}, time limit {} per run → {}/\n", counted(plan.checks.size(), "check"),
                           counted(plan.runs.size(), "run"), format_seconds(run.timeout), run.out_dir);

  const RegressRunResult result = run_regress(plan, run);
  const std::vector<RegressRow> rows = judge_checks(plan, result.outcomes);
  write_file(std::filesystem::path(run.out_dir) / "regress.csv", make_regress_csv(rows));
  write_file(std::filesystem::path(run.out_dir) / "regress.md", make_regress_markdown(rows));
  std::cout << format_regress_table(rows);
  std::cout << fmt::format("\nverdicts in {0}/regress.csv and {0}/regress.md; runs in {0}/runs/\n", run.out_dir);
  if (result.interrupted) {
    std::cerr << "interrupted: the table shows the runs that finished\n";
    return kExitInterrupted;
  }
  return regress_exit_code(rows);
}

}  // namespace dnnsim::cli
