#include "sim/run/progress.hpp"

#include <fmt/format.h>

#include "sim/run/resource_guard.hpp"

namespace dnnsim {

namespace {

std::atomic<bool> g_interrupted{false};
int g_guards = 0;  // guards alive: a run's guard encloses the simulation's (run_scenario, simulate)

extern "C" void request_interrupt(int) { g_interrupted.store(true); }

}  // namespace

InterruptGuard::InterruptGuard() {
  // Only the outermost guard starts afresh: a Ctrl-C while the workload was lowered, before the
  // simulation's own guard, still stops the simulation at its first operation.
  if (g_guards++ == 0) g_interrupted.store(false);
  // The first signal asks for a stop at the next operation, and the handler goes back to the default
  // (SA_RESETHAND): a run that ends no operation (SimGrid busy with a link's bandwidth events while
  // every transfer waits) is ended by a second one.
  struct sigaction action {};
  action.sa_handler = request_interrupt;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, &old_int_);
  ::sigaction(SIGTERM, &action, &old_term_);
}

InterruptGuard::~InterruptGuard() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
  --g_guards;
}

const std::atomic<bool>& InterruptGuard::flag() { return g_interrupted; }

ProgressObserver::ProgressObserver(std::ostream& out, bool terminal, std::size_t total_tasks, const Executor& executor)
    : out_(out), terminal_(terminal), total_(total_tasks), executor_(executor) {}

void ProgressObserver::on_tasks_appended(const TaskGraph& graph, TaskId /*first*/) { total_ = graph.tasks().size(); }

void ProgressObserver::on_task_end(TaskId /*task*/, double now) {
  ++done_;
  tick(now);
}

void ProgressObserver::on_transfer(TaskId /*task*/, DeviceId /*src*/, DeviceId /*dst*/, double /*bytes*/,
                                   double /*start*/, double end) {
  ++flows_done_;
  tick(end);
}

void ProgressObserver::tick(double now) {
  // The clock is read once every 256 events: a million-task run ends a task every microsecond.
  if ((done_ + flows_done_) % 256 != 0) return;
  const Clock::time_point wall = Clock::now();
  if (wall < next_) return;
  next_ = wall + (terminal_ ? std::chrono::milliseconds(250) : std::chrono::milliseconds(5000));
  const double elapsed = std::chrono::duration<double>(wall - start_).count();
  const std::size_t flows = executor_.flow_count();
  const std::size_t events = total_ + flows;
  const double fraction = events > 0 ? static_cast<double>(done_ + flows_done_) / static_cast<double>(events) : 0;
  const std::string eta = fraction > 0 ? fmt::format("{:.0f} s", elapsed * (1 - fraction) / fraction) : "?";
  const std::string line =
      fmt::format("simulating: {:.6g} s simulated, {} of {} tasks, {} of {} flows ({:.0f}%), {:.0f} s elapsed, ETA {}",
                  now, done_, total_, flows_done_, flows, 100 * fraction, elapsed, eta);
  if (terminal_)
    out_ << "\r\033[K" << line << std::flush;
  else
    out_ << line << '\n' << std::flush;
  drawn_ = true;
}

void ProgressObserver::finish() {
  if (terminal_ && drawn_) out_ << "\r\033[K" << std::flush;
}

SearchProgress::SearchProgress(std::ostream& out, bool terminal, std::string what, std::optional<double> time_limit_s,
                               std::string of)
    : out_(&out), terminal_(terminal), what_(std::move(what)), time_limit_s_(time_limit_s), of_(std::move(of)) {}

bool SearchProgress::operator()(double fraction) {
  if (!within_limits(fraction)) return false;
  const Clock::time_point wall = Clock::now();
  if (wall < next_) return true;
  const double elapsed = std::chrono::duration<double>(wall - start_).count();
  next_ = wall + (terminal_ ? std::chrono::milliseconds(250) : std::chrono::milliseconds(5000));
  const std::string eta = fraction > 0 ? fmt::format("{:.0f} s", elapsed * (1 - fraction) / fraction) : "?";
  const std::string line =
      fmt::format("{}: {:.0f}% {}, {:.0f} s elapsed, ETA {}", what_, 100 * fraction, of_, elapsed, eta);
  if (terminal_)
    *out_ << "\r\033[K" << line << std::flush;
  else
    *out_ << line << '\n' << std::flush;
  drawn_ = true;
  return true;
}

bool SearchProgress::within_limits(double fraction) {
  const Clock::time_point wall = Clock::now();
  const double elapsed = std::chrono::duration<double>(wall - start_).count();
  if (time_limit_s_ && elapsed >= *time_limit_s_) {
    stop_reason_ = fmt::format("time limit of {:g} s reached at {:.0f}% {}", *time_limit_s_, 100 * fraction, of_);
    return false;
  }
  if (g_interrupted.load()) {
    stop_reason_ = fmt::format("interrupted at {:.0f}% {}", 100 * fraction, of_);
    return false;
  }
  if (memory_budget_ && wall >= next_memory_check_) {
    next_memory_check_ = wall + std::chrono::milliseconds(100);
    if (const Bytes resident = resident_memory(); resident > *memory_budget_) {
      stop_reason_ = fmt::format("{} resident, over the memory budget of {} (run.memory_budget), at {:.0f}% {}",
                                 format_bytes(resident), format_bytes(*memory_budget_), 100 * fraction, of_);
      return false;
    }
  }
  return true;
}

void SearchProgress::finish() {
  if (terminal_ && drawn_) *out_ << "\r\033[K" << std::flush;
}

}  // namespace dnnsim
