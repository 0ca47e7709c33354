// What `dnnsim regress` checks (docs/regress.md): the scenario files that have expectations and the
// comparison files, found under the given directories, turned into a plan of runs and checks.
//
//   a scenario with a top-level `expect:` list  → one run (the file as it is) and its expectations;
//   a comparison file (top-level `comparison:`) → named runs (a scenario with --set overrides) and
//      expectations on a metric of one run ("dapple:mean.iteration_time_s") or the ratio of two; a
//      named run with `over: {KEY: [values], …}` is one run per combination of the values (KEY=VALUE
//      overrides after its `set`), and its metric is their mean — a policy over unseen streams, a
//      scheduler over a paper's workloads;
//   any other YAML file (a sweep, a scenario without expectations) is skipped.
// A run wanted twice (the same scenario file with the same overrides) runs once.
//
// Reading goes parse → validate, with every problem of every file reported at once (InputError,
// FILE:LINE:COL): unknown keys with a suggestion, run names, and every run's scenario loaded with its
// overrides (load_scenario) so that nothing runs when any input is bad. A problem of a referenced
// scenario is reported at the comparison file's line that asks for it.
// Pure C++ (no SimGrid): the CLI reads everything before it starts any process.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"

namespace dnnsim {

// One `dnnsim run` of the regression.
struct RegressRun {
  std::string id;        // its directory under OUT/runs: the scenario file's stem, or "<comparison stem>.<run name>"
  std::string scenario;  // the scenario file
  std::vector<std::string> overrides;  // --set KEY=VALUE, as written
};

// A number of one run's summary.json, or the mean of it over the members of a run with `over:`.
struct RunMetric {
  std::size_t run = 0;  // index into RegressPlan::runs (the first member of a run with `over:`)
  std::string path;     // dotted path: "mean.iteration_time_s"
  // A run with `over:`: every member's index into RegressPlan::runs, and per member its group for the
  // spread the report shows (the value of the expectation's `spread` key, else the member's own
  // overrides): the groups' means are the samples of the spread. Empty for a single run.
  std::vector<std::size_t> members;
  std::vector<std::string> groups;
};

// One row of the verdict table: an expectation and where its simulated value comes from, a metric of
// one run or the ratio of two.
struct RegressCheck {
  std::string group;        // the scenario's name, or the comparison's title
  Expectation expectation;  // `metric`: the metric path of a scenario, or the name of a comparison expectation
  RunMetric numerator;
  std::optional<RunMetric> denominator;
  std::string spread;  // `spread: KEY`: the numerator's `over:` key whose values group its members
};

struct RegressPlan {
  std::vector<RegressRun> runs;      // in the order first asked for; every (scenario, overrides) once
  std::vector<RegressCheck> checks;  // files in sorted path order, expectations in file order
  std::vector<std::string> skipped;  // "FILE: why", for verbose output
};

// Reads every .yaml/.yml file under the directories (recursively, in sorted path order) and every
// file given by name. @throw InputError with every problem of every file; also when nothing is found
// to check (a wrong directory must not pass as an empty success).
[[nodiscard]] RegressPlan load_regress_plan(const std::vector<std::string>& inputs);

}  // namespace dnnsim
