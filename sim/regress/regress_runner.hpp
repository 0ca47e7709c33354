// Runs the runs of a regression plan, each as its own `dnnsim run` process (sim/process/process_pool.hpp),
// at most `jobs` at a time, and collects their summaries (docs/regress.md).
//
// A run is `EXE run SCENARIO --out OUT/runs/ID --set … --set outputs.trace=false --set
// outputs.tasks_csv=false` (only summary.json is needed), with stdout/stderr in OUT/runs/ID/. A run that
// fails (exit code other than 0 or 3, a crash, the time limit) gets the reason instead of a summary;
// the others go on. Exit code 3 is not a failure: the run's own expectations are judged here, with
// everything else.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "models/common/units.hpp"
#include "sim/regress/regress_report.hpp"
#include "sim/regress/regress_spec.hpp"

namespace dnnsim {

struct RegressRunOptions {
  std::string out_dir = "out/regress";
  unsigned jobs = 0;                 // runs at once; 0: one per core
  Seconds timeout{600};              // per run
  std::string executable;            // the dnnsim binary; empty: this process's
  std::ostream* progress = nullptr;  // "[3/7] dapple.gpipe: ok"; nullptr: quiet
};

struct RegressRunResult {
  std::vector<RunOutcome> outcomes;  // one per plan run; "interrupted" for those that did not finish
  bool interrupted = false;          // SIGINT/SIGTERM: the CLI exits with 130
};

// @throw std::runtime_error when a process cannot be started or a directory cannot be made.
[[nodiscard]] RegressRunResult run_regress(const RegressPlan& plan, const RegressRunOptions& options);

}  // namespace dnnsim
