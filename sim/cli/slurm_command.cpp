#include "sim/cli/slurm_command.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <system_error>

#include "sim/sweep/slurm.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace dnnsim::cli {
namespace fs = std::filesystem;

namespace {

// This executable, for the tasks to run: they may start in another directory (or on another node
// that mounts the same file system), so the path is absolute. Empty when it cannot be told.
std::string own_executable() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string() : self.string();
}

std::string absolute_path(const std::string& path) { return fs::absolute(path).lexically_normal().string(); }

}  // namespace

int run_slurm_command(const std::string& sweep_path, const std::string& out_dir, const SlurmOptions& options) {
  if (sweep_path.empty())
    throw InputError(SourceLocation{"dnnsim sweep --slurm", 0, 0}, "give the SWEEP.yaml to submit");
  const SweepSpec spec = load_sweep(sweep_path);  // InputError: nothing written, nothing submitted
  const std::string dnnsim = own_executable();
  if (dnnsim.empty()) {
    std::cerr << "dnnsim sweep --slurm: cannot tell the path of this executable (/proc/self/exe)\n";
    return 1;
  }
  const std::string out = absolute_path(out_dir.empty() ? "out/" + spec.name : out_dir);
  const int tasks = job_array_size(spec.points.size(), options.array_size);
  if (options.array_size > tasks)
    std::cerr << fmt::format("dnnsim sweep --slurm: {} array tasks asked for {} points; using {}\n", options.array_size,
                             spec.points.size(), tasks);

  // Slurm opens each task's log in OUT/slurm/ but does not create the folder.
  std::error_code error;
  fs::create_directories(fs::path(out) / "slurm", error);
  if (error) {
    std::cerr << fmt::format("dnnsim sweep --slurm: cannot create {}/slurm: {}\n", out, error.message());
    return 1;
  }
  const std::string script_path = out + "/sweep.sbatch";
  {
    std::ofstream file(script_path);
    file << make_job_array_script(dnnsim, absolute_path(sweep_path), out, tasks, options.partition,
                                  "dnnsim-" + spec.name);
    if (!file.flush()) {
      std::cerr << fmt::format("dnnsim sweep --slurm: cannot write {}\n", script_path);
      return 1;
    }
  }
  const std::string merge = fmt::format("{} sweep --merge {}", shell_quote(dnnsim), shell_quote(out));
  std::cout << fmt::format("wrote {}: {} points in {} array tasks\n", script_path, spec.points.size(), tasks);
  if (options.emit_only) {
    std::cout << fmt::format("submit it:             sbatch {}\nonce it has finished:  {}\n", shell_quote(script_path),
                             merge);
    return 0;
  }
  std::string job_id;
  if (submit_job_array(script_path, job_id) != 0) {
    std::cerr << fmt::format("dnnsim sweep --slurm: {}\nthe script is ready: submit it with `sbatch {}`\n", job_id,
                             shell_quote(script_path));
    return 1;
  }
  std::cout << fmt::format("submitted job array {} ({} tasks); task logs in {}/slurm/\n", job_id, tasks, out);
  std::cout << fmt::format("follow it:             squeue -j {}\nonce it has finished:  {}\n", job_id, merge);
  return 0;
}

}  // namespace dnnsim::cli
