// Child processes run N at a time, each with a time limit: the process handling of `dnnsim sweep`
// (sweep_runner.hpp) and `dnnsim regress` (sim/regress/regress_runner.hpp).
//
// One simulation per process because SimGrid cannot reset its engine (a second engine in a process
// keeps the clock of the first, docs research: simgrid-recipes §4); the driver never creates an
// engine. Every child (child_process.hpp) runs in a process group of its own, with stdin from
// /dev/null and stdout/stderr in files; one that exceeds its time limit is killed (SIGKILL to its group).
//
// Signals are handled synchronously: SIGCHLD, SIGINT and SIGTERM are blocked while the pool runs and
// collected with sigtimedwait, whose timeout is the nearest deadline. So there is no handler racing
// the callbacks: a callback runs whole, and an interrupt only ever arrives between two of them.
// SIGINT/SIGTERM stop the pool: no new child starts, running children are killed (their `finished`
// is not called), and the pool reports the interruption. The signal mask and the previous signal
// dispositions are restored before it returns.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "models/common/units.hpp"
#include "sim/process/child_process.hpp"

namespace dnnsim {

struct ChildCommand {
  std::vector<std::string> argv;  // argv[0]: the executable's path (no PATH search)
  std::string stdout_path;        // created or truncated
  std::string stderr_path;
  Seconds time_limit;
};

// Runs children 0 … count−1 in index order, at most `jobs` at once (0: one per core).
// `start(i)` is called right before child i is forked and returns its command (it may prepare the
// child's directory); `finished(i, exit)` is called once child i has ended, in completion order.
// Returns false when SIGINT or SIGTERM interrupted the run.
// @throw std::runtime_error when a child cannot be started; an exception from a callback kills the
// running children and propagates.
[[nodiscard]] bool run_child_processes(std::size_t count, unsigned jobs,
                                       const std::function<ChildCommand(std::size_t)>& start,
                                       const std::function<void(std::size_t, const ChildExit&)>& finished);

// Why a child failed, in one line: "exceeded the time limit of 30 s", "killed by signal 11
// (Segmentation fault): <line>", or the first line of its stderr that mentions an error (else its
// first non-empty line, else "exit code N"). `stderr_text` is what the child wrote to stderr.
[[nodiscard]] std::string failure_reason(const ChildExit& exit, const std::string& stderr_text, Seconds time_limit);

// The first line of a child's output for which `wanted` holds, without surrounding blanks; empty if none.
[[nodiscard]] std::string first_line_matching(const std::string& text,
                                              const std::function<bool(const std::string&)>& wanted);

// The whole content of a file; empty when it cannot be read.
[[nodiscard]] std::string read_text_file(const std::string& path);

}  // namespace dnnsim
