// Scale-out of a parameter sweep on Slurm: one job array whose task i runs slice i of K
// (`dnnsim sweep SWEEP --slice i/K`), each task writing OUT/results-slice-i-of-K.csv; once the array
// has finished, `dnnsim sweep --merge OUT` joins the slices. Pure C++: no SimGrid, no Slurm library —
// the job is handed to the `sbatch` command. docs/slurm.md has the workflow and a local test cluster.
#pragma once

#include <cstddef>
#include <string>

namespace dnnsim {

// Largest default number of array tasks: enough to fill a partition, few enough for MaxArraySize
// (1001 by default) and for the controller to handle without noticing.
inline constexpr int kDefaultMaxArraySize = 100;

struct SlurmOptions {
  int array_size = 0;      // K, the number of array tasks (= slices); 0: min(points, kDefaultMaxArraySize)
  std::string partition;   // empty: the cluster's default partition
  bool emit_only = false;  // write OUT/sweep.sbatch and print how to submit it, without calling sbatch
};

// The number of array tasks for a sweep of `point_count` points: `requested` (> 0) or, when 0,
// min(point_count, kDefaultMaxArraySize); never more than point_count, so no task gets an empty slice.
// Requires point_count >= 1 and requested >= 0.
[[nodiscard]] int job_array_size(std::size_t point_count, int requested);

// The text of an sbatch job-array script:
//   #SBATCH --job-name=<job_name>
//   #SBATCH --array=0-<array_size - 1>
//   #SBATCH --output=<out_dir>/slurm/%A_%a.out      (%A: array job id, %a: task index)
//   #SBATCH --cpus-per-task=1
//   #SBATCH --partition=<partition>                 (only when partition is not empty)
// whose task runs
//   <dnnsim_path> sweep <sweep_path> --slice ${SLURM_ARRAY_TASK_ID}/<array_size> --out <out_dir> --jobs 1
// The three paths must be absolute (tasks may start in any directory, on any node sharing the file
// system); they are shell-quoted in the command when needed. Slurm does not create the output folder:
// the caller makes <out_dir>/slurm before submitting. Requires array_size >= 1.
[[nodiscard]] std::string make_job_array_script(const std::string& dnnsim_path, const std::string& sweep_path,
                                                const std::string& out_dir, int array_size,
                                                const std::string& partition, const std::string& job_name);

// `word` as one word for a POSIX shell: unchanged when it holds only letters, digits and _-./,:=+@%,
// else single-quoted ("it's" → 'it'\''s'). For commands printed for the user to paste.
[[nodiscard]] std::string shell_quote(const std::string& word);

// Submits a batch script with `sbatch --parsable <script_path>` (sbatch found on PATH; SLURM_CONF and
// the rest of the environment passed on). Returns 0 and sets `job_id_or_error` to the job id, or
// returns non-zero and sets it to the reason: sbatch not found, or sbatch's exit code and its output.
int submit_job_array(const std::string& script_path, std::string& job_id_or_error);

}  // namespace dnnsim
