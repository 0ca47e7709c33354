// Child processes: a program started with fork + exec, or a function run in a forked child whose
// result comes back through a pipe (a simulation in a process of its own: SimGrid cannot reset its
// engine, so a second simulation needs a fresh process). The one place dnnsim forks: the process pool
// of sweeps and `dnnsim regress` (process_pool.hpp), gnuplot (sim/report/gnuplot), sbatch
// (sim/sweep/slurm), `dnnsim.run` (sim/python), the episodes of `dnnsim train-scheduler`, the
// benchmarks and the tests.
//
// Between fork and exec the child calls only async-signal-safe functions: everything it needs (the
// argument vector, the files, a message for a failed exec) is prepared before fork.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dnnsim {

struct ChildExit {
  enum class How { exited, killed_by_signal, timed_out };
  How how = How::exited;
  int code = 0;  // exited: the exit code; killed_by_signal: the signal number; timed_out: 0
};

// A failed system call as an exception: `what`, then errno's message (call it right after the call
// that failed, before anything else can set errno).
[[nodiscard]] std::runtime_error system_error(const std::string& what);

// A shell's exit status for `exit`: the exit code, or 128 + the signal that killed the child.
[[nodiscard]] int shell_status(const ChildExit& exit);

struct ProgramCommand {
  std::vector<std::string> argv;  // argv[0]: the program's path, or a name looked up in PATH (search_path)
  bool search_path = false;
  // Written to the child's standard input, through a socket so that a child that exits without reading
  // it all fails the write (EPIPE) instead of killing this process with SIGPIPE. Empty: /dev/null.
  std::string input;
  // Files the child's standard output and error go to, created or truncated (the same path twice:
  // one file for both). Empty: captured, both into ChildResult::output in the order written.
  std::string stdout_path;
  std::string stderr_path;
  bool own_process_group = false;         // the child leads a process group; kill() reaches all of it
  bool die_with_parent = false;           // SIGKILL to the child when this process dies (PR_SET_PDEATHSIG)
  const sigset_t* signal_mask = nullptr;  // the child's signal mask; null: this process's
};

struct ChildResult {
  ChildExit exit;
  std::string output;     // the captured standard output and error, or the function's result
  int exec_error = 0;     // the errno of an exec that failed (ENOENT: no such program); exit is then 127
  long peak_rss_kib = 0;  // the child's maximum resident set size (getrusage's ru_maxrss)
};

// A running child. Moving it moves the ownership; destroying one that was not waited for kills it
// (SIGKILL, to its group when it leads one) and reaps it, so that no path leaves a child behind.
class ChildProcess {
 public:
  // fork + exec of `command`. A failed exec is not an exception: wait() reports it (exec_error).
  // @throw std::runtime_error when the child cannot be started (pipes, files, fork).
  [[nodiscard]] static ChildProcess start(const ProgramCommand& command);
  // `body` in a forked child; what it returns comes back as ChildResult::output and the child exits
  // with 0, or with 1 and the exception's message as the output when `body` throws. The child ends
  // with _exit: no atexit handlers, no destructors of this process's objects (nor a Python or gtest
  // teardown). @throw std::runtime_error when it cannot fork.
  [[nodiscard]] static ChildProcess run_function(const std::function<std::string()>& body);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  [[nodiscard]] pid_t pid() const { return pid_; }
  // Feeds the input, collects the captured output, and waits for the child to end.
  ChildResult wait();
  // The child's exit if it has ended, without blocking (for a pool that watches deadlines).
  [[nodiscard]] std::optional<ChildExit> poll();
  // SIGKILL to the child (to its group when it leads one), then reaps it.
  void kill();

 private:
  ChildProcess() = default;
  void close_pipes();

  pid_t pid_ = -1;
  bool group_ = false;
  int input_fd_ = -1;   // our end of the child's stdin socket
  int output_fd_ = -1;  // our end of the captured output or the function's result
  std::string input_;
  int exec_error_ = 0;
};

// The path of the running executable (/proc/self/exe): children run the same dnnsim binary.
[[nodiscard]] std::string current_executable();

}  // namespace dnnsim
