#include "sim/workloads/parameter_server/ps_sim.hpp"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <mutex>

#include "sim/platform/actors.hpp"
#include "sim/run/progress.hpp"

namespace sg4 = simgrid::s4u;

namespace dnnsim {
namespace {

class ParameterServerRun {
 public:
  explicit ParameterServerRun(const PsSimInput& in)
      : in_(in),
        n_(static_cast<int>(in.workers.size())),
        commits_(static_cast<std::size_t>(n_), 0),
        pulled_version_(static_cast<std::size_t>(n_), 0),
        released_(static_cast<std::size_t>(n_), false),
        held_(static_cast<std::size_t>(n_), false),
        mutex_(sg4::Mutex::create()),
        cv_(sg4::ConditionVariable::create()),
        progress_line_(std::cerr, ::isatty(STDERR_FILENO) != 0, "parameter server", std::nullopt,
                       "of the way to the target loss") {
    result_.workers.resize(static_cast<std::size_t>(n_));
    initial_loss_ = in.efficiency->loss(0);
  }

  PsSimResult run() {
    {
      // The workers and the ticker call the sync policy, whose decisions may run any code.
      const ActorLauncher launcher(ActorStack::deep);
      for (int k = 0; k < n_; ++k)
        launcher.start("worker" + std::to_string(k), in_.workers[static_cast<std::size_t>(k)],
                       [this, k] { worker(k); });
      if (in_.policy->tick_period() > 0)
        launcher.start("sync-ticker", in_.servers.front(), [this] { ticker(); })->daemonize();
      launcher.start("loss-sampler", in_.servers.front(), [this] { sampler(); });
    }
    sg4::Engine::get_instance()->run();
    progress_line_.finish();
    result_.final_loss = in_.efficiency->loss(result_.progress);
    result_.policy_state = in_.policy->state();
    return std::move(result_);
  }

 private:
  void record(PsEvent::Kind kind, int k) {
    if (in_.record_events)
      result_.events.push_back(PsEvent{sg4::Engine::get_clock(), k, kind, commits_[static_cast<std::size_t>(k)]});
  }

  void worker(int k) {
    const auto index = static_cast<std::size_t>(k);
    sg4::Host* host = in_.workers[index];
    PsWorkerStats& stats = result_.workers[index];
    const double shard = in_.update_bytes / static_cast<double>(in_.servers.size());
    long since_commit = 0;
    double last_commit_end = 0, commit_cost = 0;
    for (;;) {
      record(PsEvent::Kind::step_start, k);
      const double start = sg4::Engine::get_clock();
      ++result_.executions;
      sg4::this_actor::execute(in_.step_seconds[index] * slowdown_factor(in_.slowdowns, k, start) * host->get_speed());
      if (done_) return;  // the run ended while this step ran: it does not count
      stats.compute_s += sg4::Engine::get_clock() - start;
      ++stats.steps;
      ++since_commit;
      const double now = sg4::Engine::get_clock();
      if (!in_.policy->commit_after_step(k, since_commit, now - last_commit_end, commit_cost)) continue;

      const double commit_start = now;
      std::vector<sg4::ActivityPtr> pushes;
      for (sg4::Host* server : in_.servers) pushes.push_back(start_transfer(host, server, shard));
      result_.flows += static_cast<long>(pushes.size());
      std::vector<sg4::ExecPtr> receives;
      for (sg4::Host* process : in_.server_processes)
        receives.push_back(sg4::this_actor::exec_init(shard / in_.receive_rate)->set_host(process)->start());
      result_.executions += static_cast<long>(receives.size());
      finish_transfers(pushes);
      for (const sg4::ExecPtr& receive : receives) receive->wait();
      if (in_.apply_seconds > 0) {
        std::vector<sg4::ExecPtr> applies;
        for (sg4::Host* server : in_.servers)
          applies.push_back(
              sg4::this_actor::exec_init(in_.apply_seconds * server->get_speed())->set_host(server)->start());
        result_.executions += static_cast<long>(applies.size());
        for (const sg4::ExecPtr& apply : applies) apply->wait();
      }
      if (done_) return;
      const double arrived = sg4::Engine::get_clock();
      const bool converged = commit(k, since_commit);
      // Counted when the server applies it, as global_steps is: a worker still held when the run ends
      // (ADSP-like's first commits reach the target) made its commit all the same.
      ++stats.commits;
      record(PsEvent::Kind::commit, k);
      if (converged) {
        finish(arrived, true);
        return;
      }
      // A held worker's server thread spins until its release: an execution longer than any run,
      // cancelled then.
      std::vector<sg4::ExecPtr> spins;
      if (in_.busy_wait > 0 && !released_[index])
        for (sg4::Host* process : in_.server_processes)
          spins.push_back(sg4::this_actor::exec_init(2 * in_.max_time + 1)
                              ->set_priority(in_.busy_wait)
                              ->set_host(process)
                              ->start());
      {
        std::unique_lock lock(*mutex_);
        while (!released_[index] && !done_) cv_->wait(lock);
        released_[index] = false;
      }
      for (const sg4::ExecPtr& spin : spins) spin->cancel();
      if (done_) return;
      const double blocked = sg4::Engine::get_clock() - arrived;
      stats.blocked_s += blocked;
      record(PsEvent::Kind::release, k);
      std::vector<sg4::ActivityPtr> pulls;
      for (sg4::Host* server : in_.servers) pulls.push_back(start_transfer(server, host, shard));
      result_.flows += static_cast<long>(pulls.size());
      finish_transfers(pulls);
      if (done_) return;
      last_commit_end = sg4::Engine::get_clock();
      commit_cost = last_commit_end - commit_start;
      stats.communication_s += commit_cost - blocked;
      since_commit = 0;
    }
  }

  // The coordinator: prices the commit, decides who may pull. @return whether the target is reached.
  bool commit(int k, long steps) {
    const auto index = static_cast<std::size_t>(k);
    ++commits_[index];
    const StatisticalEfficiency& model = *in_.efficiency;
    if (in_.policy->synchronous()) {
      round_steps_ += static_cast<double>(steps);
      if (++round_commits_ < n_) return false;
      result_.progress += model.synchronous_round(n_, round_steps_ / n_);
      round_steps_ = 0;
      round_commits_ = 0;
      ++version_;
      ++result_.global_steps;
      std::fill(held_.begin(), held_.end(), true);
    } else {
      const double staleness = static_cast<double>(version_ - pulled_version_[index]);
      result_.progress += model.asynchronous_commit(static_cast<double>(steps), staleness);
      ++version_;
      ++result_.global_steps;
      held_[index] = true;
    }
    if (model.loss(result_.progress) <= in_.target_loss) return true;
    for (int j = 0; j < n_; ++j) {
      const auto w = static_cast<std::size_t>(j);
      if (!held_[w] || !(in_.policy->synchronous() || in_.policy->may_release(j, commits_))) continue;
      held_[w] = false;
      released_[w] = true;
      pulled_version_[w] = version_;
    }
    cv_->notify_all();
    return false;
  }

  // Ends the run at `time` (convergence, max_time or an interruption) with the last loss sample.
  // The actors end by themselves: a held worker is woken, the others return when the activity they
  // are in ends, and nothing after `time` is counted. (Killing them would unwind their stacks with an
  // exception, which AddressSanitizer cannot follow across SimGrid's context switches.)
  void finish(double time, bool converged) {
    done_ = true;
    result_.end_time = time;
    result_.converged = converged;
    result_.loss_samples.emplace_back(time, in_.efficiency->loss(result_.progress));
    cv_->notify_all();
  }

  // Ticks until the run ends: a policy ticked after it would report a state the run never had (and
  // keep the engine busy while an activity left running drains).
  void ticker() {
    while (!done_) {
      in_.policy->on_tick(sg4::Engine::get_clock(), in_.efficiency->loss(result_.progress));
      sg4::this_actor::sleep_for(in_.policy->tick_period());
    }
  }

  void sampler() {
    for (double next = 0;; next += in_.sample_interval) {
      if (next >= in_.max_time) {
        sg4::this_actor::sleep_until(in_.max_time);
        if (!done_) finish(in_.max_time, false);
        return;
      }
      sg4::this_actor::sleep_until(next);
      if (done_) return;
      const double loss = in_.efficiency->loss(result_.progress);
      result_.loss_samples.emplace_back(next, loss);
      const double span = initial_loss_ - in_.target_loss;
      const double fraction = std::clamp(span > 0 ? (initial_loss_ - loss) / span : 1.0, 0.0, 1.0);
      if (in_.progress && !progress_line_(fraction)) {
        result_.interrupted = true;
        finish(next, false);
        return;
      }
    }
  }

  const PsSimInput& in_;
  int n_;
  std::vector<long> commits_;
  std::vector<long> pulled_version_;
  std::vector<bool> released_, held_;
  long version_ = 0;
  int round_commits_ = 0;
  double round_steps_ = 0;
  bool done_ = false;
  double initial_loss_ = 0;
  sg4::MutexPtr mutex_;
  sg4::ConditionVariablePtr cv_;
  SearchProgress progress_line_;
  PsSimResult result_;
};

}  // namespace

double slowdown_factor(const std::vector<SlowdownWindow>& windows, int worker, double time) {
  double factor = 1;
  for (const SlowdownWindow& window : windows)
    if (time >= window.from && time < window.until &&
        std::find(window.workers.begin(), window.workers.end(), worker) != window.workers.end())
      factor = window.factor;
  return factor;
}

PsSimResult simulate_parameter_server(const PsSimInput& input) { return ParameterServerRun(input).run(); }

}  // namespace dnnsim
