#include "sim/sweep/slurm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cctype>
#include <stdexcept>
#include <string_view>

#include "sim/process/child_process.hpp"

namespace dnnsim {
namespace {

// Characters a POSIX shell takes literally outside quotes; a word with any other gets single-quoted.
bool shell_safe(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("_-./,:=+@%").find(c) != std::string_view::npos;
}

// A value on an #SBATCH line. sbatch splits those lines itself (src/sbatch/opt.c, _get_argument):
// whitespace ends a value even after a backslash, quotes group, and an unquoted '#' starts a comment.
// So a value holding any of those is double-quoted, with '"' and '\\' backslash-escaped inside.
std::string directive_value(const std::string& value) {
  const bool plain = std::none_of(value.begin(), value.end(), [](char c) {
    return std::isspace(static_cast<unsigned char>(c)) || c == '"' || c == '\'' || c == '\\' || c == '#';
  });
  if (plain) return value;
  std::string quoted = "\"";
  for (const char c : value) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

// In --output, '%' introduces a replacement (%A, %a, %j…); "%%" is a literal '%'.
std::string escape_filename_pattern(const std::string& path) {
  std::string escaped;
  for (const char c : path) escaped += c == '%' ? std::string("%%") : std::string(1, c);
  return escaped;
}

std::string trim(std::string text) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  text.erase(text.begin(), std::find_if(text.begin(), text.end(), not_space));
  text.erase(std::find_if(text.rbegin(), text.rend(), not_space).base(), text.end());
  return text;
}

// The job id in `sbatch --parsable` output: the last non-empty line, "<id>" or "<id>;<cluster>" (any
// warnings come first). Empty when that line is not a number.
std::string parse_job_id(const std::string& output) {
  std::string last;
  std::size_t start = 0;
  while (start <= output.size()) {
    const std::size_t end = std::min(output.find('\n', start), output.size());
    if (std::string line = trim(output.substr(start, end - start)); !line.empty()) last = line;
    start = end + 1;
  }
  const std::string id = last.substr(0, last.find(';'));
  const bool numeric = !id.empty() && std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; });
  return numeric ? id : std::string();
}

}  // namespace

std::string shell_quote(const std::string& word) {
  if (!word.empty() && std::all_of(word.begin(), word.end(), shell_safe)) return word;
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

int job_array_size(std::size_t point_count, int requested) {
  assert(point_count >= 1 && "a sweep has at least one point");
  assert(requested >= 0 && "the array size is positive, or 0 for the default");
  const std::size_t wanted =
      requested > 0 ? static_cast<std::size_t>(requested) : static_cast<std::size_t>(kDefaultMaxArraySize);
  return static_cast<int>(std::min(wanted, point_count));
}

std::string make_job_array_script(const std::string& dnnsim_path, const std::string& sweep_path,
                                  const std::string& out_dir, int array_size, const std::string& partition,
                                  const std::string& job_name) {
  assert(array_size >= 1 && "a job array has at least one task");
  assert(!dnnsim_path.empty() && dnnsim_path.front() == '/' && "tasks need the absolute path of dnnsim");
  assert(!sweep_path.empty() && sweep_path.front() == '/' && "tasks need the absolute path of the sweep");
  assert(!out_dir.empty() && out_dir.front() == '/' && "tasks need the absolute output folder");
  // sbatch reads #SBATCH lines only before the first command, so they all come first.
  std::string script = "#!/bin/bash\n";
  script += fmt::format("# dnnsim sweep as a Slurm job array: task i of {} runs slice i/{} of the sweep's points.\n",
                        array_size, array_size);
  script += fmt::format("# Submit: sbatch {}/sweep.sbatch    When all tasks are done: {} sweep --merge {}\n",
                        shell_quote(out_dir), shell_quote(dnnsim_path), shell_quote(out_dir));
  script += fmt::format("#SBATCH --job-name={}\n", directive_value(job_name));
  script += fmt::format("#SBATCH --array=0-{}\n", array_size - 1);
  script +=
      fmt::format("#SBATCH --output={}\n", directive_value(escape_filename_pattern(out_dir) + "/slurm/%A_%a.out"));
  script += "#SBATCH --cpus-per-task=1\n";
  if (!partition.empty()) script += fmt::format("#SBATCH --partition={}\n", directive_value(partition));
  script += "set -euo pipefail\n";
  script += fmt::format("exec {} sweep {} --slice ${{SLURM_ARRAY_TASK_ID}}/{} --out {} --jobs 1\n",
                        shell_quote(dnnsim_path), shell_quote(sweep_path), array_size, shell_quote(out_dir));
  return script;
}

int submit_job_array(const std::string& script_path, std::string& job_id_or_error) {
  ProgramCommand command;
  command.argv = {"sbatch", "--parsable", script_path};
  command.search_path = true;  // its standard output and error both captured
  ChildResult run;
  try {
    run = ChildProcess::start(command).wait();
  } catch (const std::runtime_error& e) {
    job_id_or_error = e.what();
    return 1;
  }
  if (run.exec_error != 0) {
    job_id_or_error = "sbatch not found on PATH (is Slurm installed? Debian: apt-get install slurm-client)";
    return 1;
  }
  const std::string output = trim(run.output);
  if (run.exit.how != ChildExit::How::exited || run.exit.code != 0) {
    const std::string how = run.exit.how == ChildExit::How::exited
                                ? fmt::format("exited with code {}", run.exit.code)
                                : fmt::format("was killed by signal {}", run.exit.code);
    job_id_or_error = fmt::format("sbatch {}{}{}", how, output.empty() ? "" : ": ", output);
    return 1;
  }
  const std::string id = parse_job_id(output);
  if (id.empty()) {
    job_id_or_error = fmt::format("sbatch printed no job id: '{}'", output);
    return 1;
  }
  job_id_or_error = id;
  return 0;
}

}  // namespace dnnsim
