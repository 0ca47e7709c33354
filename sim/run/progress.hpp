// What a long run shows while it runs, and how it stops early (issue "Scale", docs/reports.md
// "Progress and interruption"): after two seconds of wall time a run prints simulated time, tasks
// and flows done and an ETA on stderr — one updating line on a terminal, a line every five seconds in a log —
// and Ctrl-C (SIGINT) or SIGTERM stops it at the next operation of any stream, after which the
// reports of what was simulated are written with status "interrupted".
#pragma once

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <optional>
#include <ostream>
#include <string>

#include "models/common/units.hpp"
#include "sim/exec/executor.hpp"

namespace dnnsim {

// While alive, SIGINT and SIGTERM set the flag instead of ending the process; the previous handlers
// come back on destruction. Guards nest (a run's around its simulation's); the outermost clears the flag.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  // The flag the executor polls (ExecutorOptions::stop).
  [[nodiscard]] static const std::atomic<bool>& flag();

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// Counts finished tasks and flows and prints progress on `out`, rate-limited by wall time. Flows
// count as much as tasks: one collective of 16,384 GPUs is one task and 16,384 flows that take
// minutes, during which counting tasks alone would print nothing.
class ProgressObserver : public ExecutionObserver {
 public:
  // `terminal`: redraw one line (carriage return) instead of appending lines. The executor's flow
  // count is read at each line (it grows when tasks are appended).
  ProgressObserver(std::ostream& out, bool terminal, std::size_t total_tasks, const Executor& executor);
  void on_task_end(TaskId task, double now) override;
  void on_transfer(TaskId task, DeviceId src, DeviceId dst, double bytes, double start, double end) override;
  void on_tasks_appended(const TaskGraph& graph, TaskId first) override;
  // Clears the terminal line if one was drawn.
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  void tick(double now);
  std::ostream& out_;
  bool terminal_;
  std::size_t total_;
  const Executor& executor_;
  std::size_t done_ = 0;
  std::size_t flows_done_ = 0;
  Clock::time_point start_ = Clock::now();
  Clock::time_point next_ = start_ + std::chrono::seconds(2);
  bool drawn_ = false;
};

// A planner's search progress (PlanRequest::progress): prints the fraction searched, time elapsed and
// an ETA on `out` as ProgressObserver does (after two seconds; one line redrawn on a terminal, a line
// every five seconds in a log), and stops the search once `time_limit` has passed, once the process's
// resident memory exceeds the budget given to stop_above (looked at every 100 ms: a search keeps
// its states, and a large one can outgrow the machine) or, with an InterruptGuard alive, on Ctrl-C
// — the planner then returns the best plan found so far.
class SearchProgress {
 public:
  // `of`: what the fraction is of, as printed after the percentage ("of the search" for a planner;
  // "of the batches trained" for a GNN epoch).
  SearchProgress(std::ostream& out, bool terminal, std::string what, std::optional<double> time_limit_s,
                 std::string of = "of the search");
  bool operator()(double fraction);
  // The same stops without printing anything.
  bool within_limits(double fraction);
  // Stops the search once the resident memory exceeds `budget` (run.memory_budget's).
  void stop_above(Bytes budget) { memory_budget_ = budget; }
  // Clears the terminal line if one was drawn.
  void finish();
  // Why the search was stopped; empty when it was not.
  [[nodiscard]] const std::string& stop_reason() const { return stop_reason_; }

 private:
  using Clock = std::chrono::steady_clock;
  std::ostream* out_;
  bool terminal_;
  std::string what_;
  std::optional<double> time_limit_s_;
  std::string of_;
  std::optional<Bytes> memory_budget_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point next_ = start_ + std::chrono::seconds(2);
  Clock::time_point next_memory_check_ = start_;
  bool drawn_ = false;
  std::string stop_reason_;
};

}  // namespace dnnsim
