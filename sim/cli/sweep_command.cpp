// `dnnsim sweep`: reads and checks a sweep file, runs its points (sim/sweep/sweep_runner.hpp) or merges
// the CSVs of slices. Bad input is thrown as InputError, which main() prints and turns into exit code 2.
#include <fmt/format.h>

#include <iostream>

#include "models/common/parse_number.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/exit_codes.hpp"
#include "sim/sweep/sweep_runner.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace dnnsim::cli {
namespace {

constexpr int kExitMissingPoints = 1;

SweepSlice parse_slice(const std::string& text) {
  const SourceLocation where{"--slice " + text, 0, 0};
  const auto slash = text.find('/');
  SweepSlice slice;
  const auto read = [&](std::string_view part, std::size_t& value) {
    const auto parsed = parse_number<std::size_t>(part);
    value = parsed.value_or(0);
    return parsed.has_value();
  };
  if (slash == std::string::npos || !read(std::string_view(text).substr(0, slash), slice.index) ||
      !read(std::string_view(text).substr(slash + 1), slice.count) || slice.count == 0 || slice.index >= slice.count)
    throw InputError(where, "expected I/K with 0 <= I < K, e.g. --slice 0/4");
  return slice;
}

int merge(const std::string& dir) {
  const SweepMergeResult result = merge_sweep(dir);
  std::cout << fmt::format("merged {} of {} points into {}\n", result.present, result.total, result.csv_path);
  if (result.missing.empty()) return 0;
  std::cerr << fmt::format("missing {} of {} points: {}\n", result.missing.size(), result.total,
                           fmt::join(result.missing, " "));
  // Which slices to rerun, for each slice count whose files were found.
  for (const std::size_t count : result.slice_counts) {
    std::vector<std::string> incomplete;
    for (std::size_t index = 0; index < count; ++index) {
      std::size_t missing = 0;
      for (const std::string& id : result.missing)
        if (parse_number<std::size_t>(std::string_view(id).substr(1)).value_or(count) % count == index) ++missing;
      if (missing > 0) incomplete.push_back(fmt::format("{}/{} ({} missing)", index, count, missing));
    }
    std::cerr << fmt::format("incomplete slices: {}\n", fmt::join(incomplete, ", "));
  }
  return kExitMissingPoints;
}

}  // namespace

int run_sweep_command(const SweepCommandOptions& options) {
  if (options.sweep_file.empty() == options.merge_dir.empty())
    throw InputError(SourceLocation{"dnnsim sweep", 0, 0}, "give either SWEEP.yaml or --merge DIR");
  if (!options.merge_dir.empty()) return merge(options.merge_dir);

  SweepRunOptions run;
  run.out_dir = options.out;
  run.jobs = options.jobs;
  run.progress = &std::cerr;
  if (!options.timeout.empty()) {
    try {
      run.timeout = Seconds(parse_quantity(options.timeout, Dimension::seconds));
    } catch (const UnitError& e) {
      throw InputError(SourceLocation{"--timeout " + options.timeout, 0, 0}, e.what());
    }
    if (run.timeout->value() <= 0)
      throw InputError(SourceLocation{"--timeout " + options.timeout, 0, 0}, "the time limit must be positive");
  }
  if (!options.slice.empty()) run.slice = parse_slice(options.slice);

  const SweepSpec spec = load_sweep(options.sweep_file);  // checks every point before anything runs
  const SweepRunResult result = run_sweep(spec, run);
  const std::size_t finished = result.ok + result.failed + result.expectation_missed + result.timed_out;
  std::cout << fmt::format("{} of {} points in {}: {} run now ({} ok, {} failed, {} expectation missed, {} timeout)\n",
                           result.already_done + finished, result.selected, result.csv_path, finished, result.ok,
                           result.failed, result.expectation_missed, result.timed_out);
  if (result.interrupted) {
    std::cerr << "interrupted: the rows written are kept; run the same command again to resume\n";
    return kExitInterrupted;
  }
  return 0;
}

}  // namespace dnnsim::cli
