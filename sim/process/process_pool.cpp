// Child processes N at a time with time limits (see process_pool.hpp).
#include "sim/process/process_pool.hpp"

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace dnnsim {
namespace {

using Clock = std::chrono::steady_clock;

std::string trim(std::string text) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  text.erase(text.begin(), std::find_if(text.begin(), text.end(), not_space));
  text.erase(std::find_if(text.rbegin(), text.rend(), not_space).base(), text.end());
  return text;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// A child's error: its first line that mentions an error, else its first non-empty line. The first,
// not the last: `dnnsim run` ends with a count ("2 errors; nothing was simulated"), the cause comes first.
std::string error_line(const std::string& stderr_text) {
  std::string line = first_line_matching(
      stderr_text, [](const std::string& l) { return lower(l).find("error") != std::string::npos; });
  if (line.empty()) line = first_line_matching(stderr_text, [](const std::string& l) { return !trim(l).empty(); });
  return line;
}

// Blocks SIGCHLD/SIGINT/SIGTERM for the lifetime of the object and gives them handlers that do
// nothing (a blocked signal whose action is "ignore" may be discarded, and a non-interactive shell
// starts background jobs with SIGINT ignored); restores everything on destruction.
class SignalScope {
 public:
  SignalScope() {
    sigemptyset(&set_);
    for (const int s : kSignals) sigaddset(&set_, s);
    if (::sigprocmask(SIG_BLOCK, &set_, &old_mask_) != 0) throw system_error("sigprocmask");
    struct sigaction action {};
    action.sa_handler = &SignalScope::ignore;
    sigemptyset(&action.sa_mask);
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &action, &old_actions_[i]);
  }
  ~SignalScope() {
    // Discard what is still pending so that restoring the old actions does not fire them.
    timespec zero{0, 0};
    while (::sigtimedwait(&set_, nullptr, &zero) > 0) {
    }
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &old_actions_[i], nullptr);
    ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

  [[nodiscard]] const sigset_t& set() const { return set_; }
  [[nodiscard]] const sigset_t& old_mask() const { return old_mask_; }

 private:
  static void ignore(int) {}
  static constexpr std::array<int, 3> kSignals{SIGCHLD, SIGINT, SIGTERM};
  sigset_t set_{};
  sigset_t old_mask_{};
  std::array<struct sigaction, 3> old_actions_{};
};

struct Child {
  ChildProcess process;
  std::size_t index = 0;
  Clock::time_point deadline;
};

// `command` in a new process group, with stdin from /dev/null and stdout/stderr in the command's
// files; the child gets the signal mask the caller had before the pool blocked its signals. A driver
// killed outright (SIGKILL, the OOM killer) takes its children with it: an orphan would go on writing
// the point's folder while a resumed sweep runs the same point again.
Child launch(std::size_t index, const ChildCommand& command, const sigset_t& old_mask) {
  ProgramCommand program;
  program.argv = command.argv;
  program.stdout_path = command.stdout_path;
  program.stderr_path = command.stderr_path;
  program.own_process_group = true;
  program.die_with_parent = true;
  program.signal_mask = &old_mask;
  const auto limit =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(command.time_limit.value()));
  return Child{ChildProcess::start(program), index, Clock::now() + limit};
}

// The loop of run_child_processes; `running` is the caller's, so that it can kill what runs when a
// callback throws.
bool run_loop(std::size_t count, unsigned jobs, const std::function<ChildCommand(std::size_t)>& start,
              const std::function<void(std::size_t, const ChildExit&)>& finished, const SignalScope& signals,
              std::vector<Child>& running) {
  std::size_t next = 0;
  while (true) {
    while (running.size() < jobs && next < count) {
      running.push_back(launch(next, start(next), signals.old_mask()));
      ++next;
    }
    if (running.empty()) return true;
    const auto nearest = std::min_element(running.begin(), running.end(), [](const Child& a, const Child& b) {
                           return a.deadline < b.deadline;
                         })->deadline;
    const auto wait = std::max(Clock::duration::zero(), nearest - Clock::now());
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
    const timespec limit{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    const int signal = ::sigtimedwait(&signals.set(), nullptr, &limit);
    if (signal == SIGINT || signal == SIGTERM) {
      running.clear();  // kills them
      return false;
    }
    // A SIGCHLD, a deadline, or EINTR/EAGAIN: look at every child either way (signals coalesce).
    for (auto it = running.begin(); it != running.end();) {
      std::optional<ChildExit> exit = it->process.poll();
      if (!exit && Clock::now() >= it->deadline) {
        it->process.kill();
        exit = ChildExit{ChildExit::How::timed_out, 0};
      }
      if (!exit) {
        ++it;
        continue;
      }
      const std::size_t index = it->index;
      it = running.erase(it);
      finished(index, *exit);
    }
  }
}

}  // namespace

bool run_child_processes(std::size_t count, unsigned jobs, const std::function<ChildCommand(std::size_t)>& start,
                         const std::function<void(std::size_t, const ChildExit&)>& finished) {
  if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
  SignalScope signals;
  std::vector<Child> running;
  try {
    return run_loop(count, jobs, start, finished, signals, running);
  } catch (...) {
    running.clear();  // kills them
    throw;
  }
}

std::string failure_reason(const ChildExit& exit, const std::string& stderr_text, Seconds time_limit) {
  const std::string line = error_line(stderr_text);
  switch (exit.how) {
    case ChildExit::How::timed_out:
      return fmt::format("exceeded the time limit of {}", format_seconds(time_limit));
    case ChildExit::How::killed_by_signal:
      return fmt::format("killed by signal {} ({}){}", exit.code, ::strsignal(exit.code),
                         line.empty() ? "" : ": " + line);
    case ChildExit::How::exited:
      return line.empty() ? fmt::format("exit code {}", exit.code) : line;
  }
  return line;
}

std::string first_line_matching(const std::string& text, const std::function<bool(const std::string&)>& wanted) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (wanted(line)) return trim(line);
  return "";
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace dnnsim
