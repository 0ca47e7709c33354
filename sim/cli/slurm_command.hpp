// `dnnsim sweep SWEEP.yaml --slurm`: runs a sweep as a Slurm job array (docs/slurm.md).
#pragma once

#include <string>

#include "sim/sweep/slurm.hpp"

namespace dnnsim::cli {

// Reads and validates the sweep (an InputError propagates to main: exit 2, nothing submitted), writes
// OUT/sweep.sbatch — a job array of K tasks, task i running `dnnsim sweep SWEEP --slice i/K --out OUT
// --jobs 1` with absolute paths — and, unless options.emit_only, submits it with `sbatch --parsable`,
// then prints the job id and the merge command to run once the array has finished. `out_dir` empty:
// out/<sweep name>, as `dnnsim sweep` itself. Returns 0, or 1 when the script cannot be written or
// sbatch is missing or refuses the job (the reason on stderr).
int run_slurm_command(const std::string& sweep_path, const std::string& out_dir, const SlurmOptions& options);

}  // namespace dnnsim::cli
