#include "sim/cluster/cluster_sim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <iostream>
#include <map>
#include <numeric>
#include <set>
#include <simgrid/s4u.hpp>
#include <stdexcept>

#include "planners/jobs/parameter_server.hpp"
#include "sim/cluster/job_attempts.hpp"
#include "sim/platform/actors.hpp"
#include "sim/run/progress.hpp"

namespace sg4 = simgrid::s4u;

namespace dnnsim {
namespace {

struct Event {
  SchedulerEvent kind;
  JobId job = 0;
  int generation = 0;
};

class ClusterSimulation {
 public:
  explicit ClusterSimulation(const ClusterSimInput& input) : in_(input) {
    result_.total_gpus = 0;
    for (const ServerInfo& server : in_.servers) result_.total_gpus += server.gpus;
    free_.reserve(in_.servers.size());
    for (const ServerInfo& server : in_.servers) free_.push_back(server.gpus);
    for (const ServerInfo& server : in_.servers) free_cpus_.push_back(server.cpus);
    const int total_cpus = std::accumulate(free_cpus_.begin(), free_cpus_.end(), 0);
    const auto& jobs = in_.trace->jobs;
    runs_.resize(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      JobRun& run = runs_[i];
      const JobRecord& record = jobs[i];
      run.view.id = i;
      run.view.record = &record;
      run.view.gpus = record.gpus;
      if (record.gpus > result_.total_gpus ||
          (record.ps_per_worker > 0 && default_ps_count(record, record.gpus) * record.ps_cores > total_cpus)) {
        run.phase = JobPhase::never_fits;
        continue;
      }
      if (const PolluxGoodput* goodput = in_.scheduler->goodput()) {
        // Work in the goodput model's progress; solo speed its goodput at the requested GPUs in the
        // first epoch (the oracle remaining time schedulers and reports use).
        run.view.total_iterations = goodput->target_progress(record);
        run.view.solo_rate = goodput->best(record, nominal_placement(in_.servers, record.gpus), 0).rate;
        continue;
      }
      const Placement nominal = nominal_placement(in_.servers, record.gpus);
      const IterationCost solo = in_.speed->iteration(record, nominal, in_.servers);
      run.view.solo_rate = 1.0 / solo.total().value();
      if (in_.speed->counts_progress()) {
        // Progress at a fixed batch: the solo speed is its mean over the run on the nominal placement.
        run.view.total_iterations = *in_.speed->iterations_to_target(record);
        double seconds = 0.0, from = 0.0;
        for (const ProgressSegment& segment : in_.speed->progress_curve(record, nominal, 0.0)) {
          seconds += (segment.to - from) / segment.rate;
          from = segment.to;
        }
        run.view.solo_rate = run.view.total_iterations / seconds;
      } else if (record.iterations > 0)
        run.view.total_iterations = record.iterations;
      else if (auto target = in_.speed->iterations_to_target(record))
        run.view.total_iterations = *target;
      else
        run.view.total_iterations = record.duration.value() * run.view.solo_rate;
    }
  }

  ClusterSimResult run() {
    cv_ = sg4::ConditionVariable::create();
    mutex_ = sg4::Mutex::create();
    wall_start_ = std::chrono::steady_clock::now();
    arrivals_ = start_actor("arrivals", in_.controller_host, ActorStack::small, [this] { arrivals(); });
    // The scheduler runs on this actor (a learned policy's forward pass, an LP solver's recursion).
    start_actor("controller", in_.controller_host, ActorStack::deep, [this] { control(); });
    if (auto period = in_.scheduler->round()) {
      start_actor("rounds", in_.controller_host, ActorStack::small, [this, period] {
        while (true) {
          sg4::this_actor::sleep_for(period->value());
          push(Event{SchedulerEvent::round});
        }
      })->daemonize();
    }
    sg4::Engine::get_instance()->run();
    finish_results();
    return std::move(result_);
  }

 private:
  void push(Event event) {
    std::unique_lock lock(*mutex_);
    events_.push_back(event);
    cv_->notify_all();
  }

  void arrivals() {
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      const double at = in_.trace->jobs[i].submit.value();
      if (at > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(at);
      push(Event{SchedulerEvent::arrival, i});
    }
  }

  // The posted price at the committed load — GPUs allocated plus GPUs the queued jobs wait for, as
  // a fraction of the cluster (capped at 1): admitted jobs hold capacity until they end, as items
  // of an online knapsack do (planners/jobs/admission.hpp).
  bool admit(JobRun& run) {
    int committed = busy_;
    for (JobId id : active_)
      if (runs_[id].phase == JobPhase::queued) committed += runs_[id].view.gpus;
    const double load = std::min(1.0, static_cast<double>(committed) / std::max(1, result_.total_gpus));
    run.price = in_.admission->price(load);
    if (in_.job_values[run.view.id] >= run.price) return true;
    run.phase = JobPhase::rejected;
    return false;
  }

  // Time-integrals up to `now`: busy GPUs, jobs in the system, utilisation buckets.
  void advance(double now) {
    const double dt = now - last_time_;
    if (dt <= 0) return;
    result_.busy_gpu_seconds += dt * busy_;
    result_.jobs_in_system_seconds += dt * static_cast<double>(running_ + queued_);
    const double step = in_.utilisation_interval.value();
    double t = last_time_;
    // The bucket is counted, not recomputed from t: at a step that is not a binary fraction (3 ms),
    // (b + 1) × step / step can round to just under b + 1, and the loop stood still at that boundary.
    double index = std::floor(t / step);
    if ((index + 1) * step <= t) index += 1;
    for (; t < now; index += 1) {
      if (index >= static_cast<double>(in_.max_utilisation_samples)) {
        series_full_at_ = std::min(series_full_at_, t);
        break;
      }
      const auto bucket = static_cast<std::size_t>(index);
      const double bucket_end = std::min(now, (index + 1) * step);
      if (result_.utilisation.size() <= bucket) {
        const std::size_t old = result_.utilisation.size();
        result_.utilisation.resize(bucket + 1);
        for (std::size_t b = old; b <= bucket; ++b) result_.utilisation[b].start = static_cast<double>(b) * step;
      }
      UtilisationSample& sample = result_.utilisation[bucket];
      const double w = (bucket_end - t) / step;
      sample.busy_gpus += w * busy_;
      sample.running += w * running_;
      sample.queued += w * queued_;
      t = bucket_end;
    }
    last_time_ = now;
  }

  void control() {
    std::size_t arrived = 0;
    while (true) {
      std::vector<Event> batch;
      {
        std::unique_lock lock(*mutex_);
        cv_->wait(lock, [this] { return !events_.empty(); });
      }
      // Let every actor with an event at this same date post it, so that simultaneous events
      // (arrivals at one timestamp, jobs ending together) reach the scheduler as one decision.
      for (std::size_t seen = 0; seen != events_.size();) {
        seen = events_.size();
        sg4::this_actor::yield();
      }
      {
        std::unique_lock lock(*mutex_);
        batch.assign(events_.begin(), events_.end());
        events_.clear();
      }
      const double now = sg4::Engine::get_clock();
      advance(now);
      result_.events += batch.size();
      bool any_round = false, any_completion = false;
      for (const Event& event : batch) {
        if (event.kind == SchedulerEvent::round) {
          any_round = true;
        } else if (event.kind == SchedulerEvent::arrival) {
          ++arrived;
          JobRun& run = runs_[event.job];
          if (run.phase == JobPhase::never_fits) {
            ++done_;
            continue;
          }
          if (in_.admission != nullptr && !admit(run)) {
            ++done_;
            continue;
          }
          run.phase = JobPhase::queued;
          run.view.queued_since = Seconds(now);
          active_.insert(event.job);
          ++queued_;
        } else {
          JobRun& run = runs_[event.job];
          if (run.phase != JobPhase::running || run.generation != event.generation) continue;
          any_completion = true;
          account_attempt(run, now, true);
          run.view.done_iterations = run.view.total_iterations;
          release(run);
          run.actor = nullptr;  // let SimGrid free the finished actor's stack
          active_.erase(run.view.id);
          run.phase = JobPhase::finished;
          run.end = now;
          result_.makespan = std::max(result_.makespan, now);
          --running_;
          ++done_;
        }
      }
      report_progress(now);
      // Before the end: a run whose last event fell past a full series ends stopped, its series short.
      if (series_full_at_ < now) {
        const double samples = static_cast<double>(in_.max_utilisation_samples);
        result_.stopped = fmt::format(
            "the utilisation series every {} was full at simulated time {} ({:.0f} samples, all that "
            "run.memory_budget holds beside the jobs); the run stopped at the next event, at {}, as an "
            "interruption stops it. A utilisation_interval of at least {} reaches that event",
            format_seconds(in_.utilisation_interval), format_seconds(Seconds(series_full_at_)), samples,
            format_seconds(Seconds(now)), format_seconds(Seconds(now / samples)));
        stop_all(now);
        break;
      }
      if (done_ == runs_.size()) break;
      if (in_.progress && InterruptGuard::flag().load()) {
        result_.interrupted = true;
        stop_all(now);
        break;
      }
      const SchedulerEvent kind = any_round        ? SchedulerEvent::round
                                  : any_completion ? SchedulerEvent::completion
                                                   : SchedulerEvent::arrival;
      if (queued_ > 0 || any_round || in_.scheduler->observes_every_event())
        apply(in_.scheduler->decide(snapshot(now), kind), now);
      if (any_round) adapt_running(now);
      ++result_.scheduler_calls;
      // Nothing runs, nothing will arrive, and the scheduler starts nothing: the rest never run. A
      // scheduler with rounds that starts jobs only at a round (Pollux) gets that round first.
      if (arrived == runs_.size() && running_ == 0 && (!in_.scheduler->round() || any_round)) break;
    }
  }

  ClusterState snapshot(double now) {
    ClusterState state;
    state.now = Seconds(now);
    state.servers = in_.servers;
    state.free_gpus = free_;
    state.free_cpus = free_cpus_;
    for (JobId id : active_) {
      JobRun& run = runs_[id];
      if (run.phase == JobPhase::running) {
        JobView view = run.view;
        const double elapsed = now - run.attempt_start;
        view.attained = view.attained + Seconds(elapsed);
        view.attained_gpu_seconds += elapsed * view.placement->gpus();
        view.done_iterations = std::min(view.total_iterations, view.done_iterations + progress_of(run, now));
        state.running.push_back(std::move(view));
      } else if (run.phase == JobPhase::queued) {
        state.queued.push_back(run.view);
      }
    }
    return state;
  }

  // Iterations done by the current attempt so far and not yet in done_iterations. Job level: exact
  // from the execution. Network: finished batches are in done_iterations; of the batch in flight,
  // the iterations its elapsed time covers at the solo rate (a checkpoint keeps every finished
  // iteration, as at job level; contention inside a cut batch is not charged).
  double progress_of(const JobRun& run, double now) const {
    if (!in_.server_gpus.empty())
      return run.batch_start >= 0
                 ? std::min(run.batch_iterations, std::max(0.0, now - run.batch_start) * run.rate / run.batch_slowdown)
                 : 0.0;
    const double started = run.attempt_start + restart_of(run);
    const double from = std::max(started, run.segment_start);
    return run.progress_in(std::max(0.0, std::min(now - from, run.attempt_seconds)));
  }

  double restart_of(const JobRun& run) const {
    return run.view.preemptions > 0 || in_.restart_cost_on_start ? in_.restart_cost.value() : 0.0;
  }

  void account_attempt(JobRun& run, double now, bool completed) {
    const double elapsed = now - run.attempt_start;
    run.view.attained = run.view.attained + Seconds(elapsed);
    run.view.attained_gpu_seconds += elapsed * run.view.placement->gpus();
    if (!completed)
      run.view.done_iterations = std::min(run.view.total_iterations, run.view.done_iterations + progress_of(run, now));
  }

  // The job's GPUs go back to the pool — unless it was packed: then its partner keeps them and runs
  // alone again.
  void release(JobRun& run) {
    const double now = sg4::Engine::get_clock();
    result_.attempts.push_back(JobAttempt{run.view.id, *run.view.placement, run.attempt_start, now});
    if (run.partner) {
      JobRun& partner = runs_[*run.partner];
      run.packed_seconds += now - run.packed_since;
      partner.packed_seconds += now - partner.packed_since;
      run.partner.reset();
      run.view.packed_with.reset();
      partner.partner.reset();
      partner.view.packed_with.reset();
      reprice(partner, now, [&partner] { partner.slowdown = 1.0; });
      run.slowdown = 1;
    } else {
      for (const auto& [server, count] : run.view.placement->slices) free_[server] += count;
      for (const auto& [server, count] : run.view.placement->ps)
        free_cpus_[server] += count * run.view.record->ps_cores;
      busy_ -= run.view.placement->gpus();
    }
    last_placement_[run.view.id] = run.view.placement->to_string();
    run.view.placement.reset();
  }

  // A running job's speed changes at `now` (packed or unpacked, or its curve re-chosen): `change` sets
  // it. Job level: the progress of the execution in flight is kept and the execution replaced at the
  // new speed; network mode: the next batch runs at it.
  template <class Change>
  void reprice(JobRun& run, double now, Change change) {
    if (!in_.server_gpus.empty() || run.exec == nullptr) {
      change();
      return;
    }
    run.view.done_iterations = std::min(run.view.total_iterations, run.view.done_iterations + progress_of(run, now));
    change();
    run.segment_start = now;
    ++run.speed_version;
    // Only a running execution is cancelled: one already cancelled (a partner ended, another packs on
    // at the same date) or not started yet is replaced by the actor at the latest speed anyway, and
    // cancelling an execution twice crashes SimGrid 3.32.
    if (run.exec->get_state() != sg4::Activity::State::STARTED) return;
    run.repricing = true;
    run.exec->cancel();
  }

  // Jobs that re-choose their batch as they run (JobScheduler::adapted_curve) do so every round: a
  // running job whose curve from its progress now differs goes on at the new one (reprice), as the
  // artifact's agent re-picks its batch after every step (simulator.py Job.step). Jobs started at this
  // round have theirs already.
  void adapt_running(double now) {
    for (const JobId id : active_) {
      JobRun& run = runs_[id];
      if (run.phase != JobPhase::running || run.attempt_start == now) continue;
      JobView view = run.view;
      view.done_iterations = std::min(view.total_iterations, view.done_iterations + progress_of(run, now));
      auto curve = in_.scheduler->adapted_curve(view);
      if (!curve) return;
      const auto ahead = std::find_if(run.curve.begin(), run.curve.end(), [&](const ProgressSegment& segment) {
        return segment.to > view.done_iterations;
      });
      const auto same = [](const ProgressSegment& a, const ProgressSegment& b) {
        return a.to == b.to && a.rate == b.rate;
      };
      if (std::equal(ahead, run.curve.end(), curve->begin(), curve->end(), same)) continue;
      reprice(run, now, [&run, &curve] { run.curve = std::move(*curve); });
    }
  }

  // Gandiva's packing: `run` (queued, one GPU) starts on the GPU of `host` (running alone, one GPU);
  // both then run at their measured packed slowdowns.
  void pack(JobRun& run, JobRun& host, double now) {
    if (run.phase != JobPhase::queued || host.phase != JobPhase::running || host.partner || run.view.gpus != 1 ||
        host.view.gpus != 1)
      throw std::logic_error(
          fmt::format("scheduler packed job {} onto job {}: packing needs a waiting and a running single-GPU job, "
                      "the latter not packed",
                      run.view.record->id, host.view.record->id));
    const std::string& gpu_type = in_.servers[host.view.placement->slices.front().first].gpu_type;
    const auto run_slowdown = in_.speed->packed_slowdown(*run.view.record, *host.view.record, gpu_type);
    const auto host_slowdown = in_.speed->packed_slowdown(*host.view.record, *run.view.record, gpu_type);
    if (!run_slowdown || !host_slowdown)
      throw std::logic_error(
          fmt::format("scheduler packed job {} onto job {}, a pair the speed model has no measurement of",
                      run.view.record->id, host.view.record->id));
    run.partner = host.view.id;
    run.view.packed_with = host.view.id;
    host.partner = run.view.id;
    host.view.packed_with = run.view.id;
    run.packed_since = host.packed_since = now;
    run.slowdown = *run_slowdown;
    start(run, *host.view.placement, now, true);
    reprice(host, now, [&host, slowdown = *host_slowdown] { host.slowdown = slowdown; });
  }

  void apply(const std::vector<Decision>& decisions, double now) {
    for (const Decision& decision : decisions) {
      if (decision.job >= runs_.size())
        throw std::logic_error(fmt::format("scheduler decided on unknown job {}", decision.job));
      JobRun& run = runs_[decision.job];
      if (decision.kind == Decision::Kind::pack) {
        if (decision.partner >= runs_.size())
          throw std::logic_error(fmt::format("scheduler packed onto unknown job {}", decision.partner));
        pack(run, runs_[decision.partner], now);
        continue;
      }
      if (decision.kind == Decision::Kind::preempt || decision.kind == Decision::Kind::migrate) {
        if (run.phase != JobPhase::running)
          throw std::logic_error(fmt::format("scheduler preempted job {} which is not running", run.view.record->id));
        stop(run, now);
        ++run.view.preemptions;
        if (decision.kind == Decision::Kind::preempt) continue;
      }
      if (run.phase != JobPhase::queued)
        throw std::logic_error(fmt::format("scheduler started job {} which is not waiting", run.view.record->id));
      Placement placement = decision.placement;
      if (!with_parameter_servers(run, placement)) {
        ++result_.ps_deferred;
        continue;
      }
      start(run, placement, now);
    }
  }

  // A parameter-server job's PSs: those the scheduler chose (their cores must be free), or placed
  // here by place_parameter_servers for schedulers that allocate GPUs only. false: the free cores
  // cannot hold them, and the job waits for the next scheduling event.
  bool with_parameter_servers(const JobRun& run, Placement& placement) const {
    const JobRecord& job = *run.view.record;
    if (job.ps_per_worker <= 0) {
      if (!placement.ps.empty())
        throw std::logic_error(
            fmt::format("scheduler gave parameter servers to job {}, a ring all-reduce job", job.id));
      return true;
    }
    if (placement.ps.empty()) {
      auto ps = place_parameter_servers(free_cpus_, placement, default_ps_count(job, placement.gpus()), job.ps_cores);
      if (!ps) return false;
      placement.ps = std::move(*ps);
      return true;
    }
    std::vector<int> free = free_cpus_;
    for (const auto& [server, count] : placement.ps)
      if (server < 0 || static_cast<std::size_t>(server) >= free.size() || (free[server] -= count * job.ps_cores) < 0)
        throw std::logic_error(
            fmt::format("scheduler placed the parameter servers of job {} on {} whose cores are not free", job.id,
                        placement.to_string()));
    return true;
  }

  void stop(JobRun& run, double now) {
    // Kill the job's actor before cancelling what it waits on: a cancelled transfer fails in its
    // waiter, which would escape a still-living actor.
    if (run.actor) run.actor->kill();
    if (run.exec && run.exec->get_state() == sg4::Activity::State::STARTED) run.exec->cancel();
    run.repricing = false;
    for (auto& transfer : run.transfers) transfer->cancel();
    account_attempt(run, now, false);
    run.batch_start = -1;
    run.actor = nullptr;
    run.exec = nullptr;
    run.transfers.clear();
    release(run);
    run.phase = JobPhase::queued;
    run.view.queued_since = Seconds(now);
    ++run.generation;
    --running_;
    ++queued_;
  }

  // `packed`: on a GPU another job holds (pack()), so no GPU is taken from the pool.
  void start(JobRun& run, const Placement& placement, double now, bool packed = false) {
    if (placement.gpus() <= 0) throw std::logic_error("scheduler started a job on no GPU");
    if (!packed) {
      for (const auto& [server, count] : placement.slices)
        if (server < 0 || static_cast<std::size_t>(server) >= free_.size() || count > free_[server])
          throw std::logic_error(fmt::format("scheduler placed job {} on {} whose GPUs are not free",
                                             run.view.record->id, placement.to_string()));
      for (const auto& [server, count] : placement.slices) free_[server] -= count;
      for (const auto& [server, count] : placement.ps) free_cpus_[server] -= count * run.view.record->ps_cores;
      busy_ += placement.gpus();
    }
    run.view.placement = placement;
    run.view.last_started = Seconds(now);
    run.phase = JobPhase::running;
    run.attempt_start = now;
    if (run.first_start < 0) run.first_start = now;
    --queued_;
    ++running_;
    const IterationCost cost = in_.speed->iteration(*run.view.record, placement, in_.servers);
    run.rate = 1.0 / cost.total().value();
    if (auto adapted = in_.scheduler->adapted_curve(run.view))
      run.curve = std::move(*adapted);
    else if (const PolluxGoodput* goodput = in_.scheduler->goodput())
      run.curve = goodput->segments(*run.view.record, placement, run.view.done_iterations);
    else if (in_.speed->counts_progress())
      run.curve = in_.speed->progress_curve(*run.view.record, placement, run.view.done_iterations);
    start_attempt(run, placement, cost, restart_of(run), run.generation, now, attempts_);
  }

  // Ctrl-C, SIGTERM (docs/reports.md, "Progress and interruption") or a full utilisation series: the
  // running jobs stop where they are, as a preemption stops them but not counted as one (the scheduler
  // did not decide it), and no job arrives any more, so the engine returns at `now` and the reports
  // cover what was simulated, the jobs not finished counted as unfinished.
  void stop_all(double now) {
    result_.stopped_at = now;
    arrivals_->kill();
    for (JobRun& run : runs_)
      if (run.phase == JobPhase::running) stop(run, now);
  }

  void report_progress(double now) {
    if (!in_.progress) return;
    const auto wall = std::chrono::steady_clock::now();
    if (wall - last_report_ < std::chrono::seconds(5) && done_ != runs_.size()) return;
    last_report_ = wall;
    std::cerr << fmt::format("cluster: t={:.0f}s  {}/{} jobs done, {} running, {} queued, {:.0f}s wall\n", now, done_,
                             runs_.size(), running_, queued_,
                             std::chrono::duration<double>(wall - wall_start_).count());
  }

  void finish_results() {
    for (JobRun& run : runs_) {
      JobOutcome outcome;
      const JobRecord& record = *run.view.record;
      outcome.submit = record.submit.value();
      outcome.gpus = record.gpus;
      outcome.iterations = run.view.total_iterations;
      outcome.solo_seconds = run.view.solo_rate > 0 ? run.view.total_iterations / run.view.solo_rate : 0.0;
      outcome.preemptions = run.view.preemptions;
      outcome.start = run.first_start;
      outcome.end = run.end;
      if (auto it = last_placement_.find(run.view.id); it != last_placement_.end()) outcome.placement = it->second;
      if (run.view.placement) outcome.placement = run.view.placement->to_string();
      if (run.batches > 0) outcome.contention_slowdown = run.slowdown_sum / run.batches;
      outcome.packed_s = run.packed_seconds;
      outcome.status = run.phase == JobPhase::finished     ? JobOutcome::Status::finished
                       : run.phase == JobPhase::never_fits ? JobOutcome::Status::never_fits
                       : run.phase == JobPhase::rejected   ? JobOutcome::Status::rejected
                                                           : JobOutcome::Status::unfinished;
      outcome.price = run.price;
      if (!in_.job_values.empty()) outcome.value = in_.job_values[run.view.id];
      result_.jobs.push_back(std::move(outcome));
    }
  }

  const ClusterSimInput& in_;
  ClusterSimResult result_;
  const AttemptContext attempts_{&in_, &result_.flows, [this](JobId job, int generation) {
                                   push(Event{SchedulerEvent::completion, job, generation});
                                 }};
  std::vector<JobRun> runs_;
  std::vector<int> free_;
  std::vector<int> free_cpus_;
  std::map<JobId, std::string> last_placement_;
  std::set<JobId> active_;  // queued or running, so that a snapshot costs O(active), not O(trace)
  std::deque<Event> events_;
  sg4::ActorPtr arrivals_;
  sg4::ConditionVariablePtr cv_;
  sg4::MutexPtr mutex_;
  std::size_t done_ = 0;
  int busy_ = 0, running_ = 0, queued_ = 0;
  double last_time_ = 0;
  // Where the utilisation series reached in_.max_utilisation_samples (infinity: it has not).
  double series_full_at_ = std::numeric_limits<double>::infinity();
  std::chrono::steady_clock::time_point wall_start_, last_report_;
};

}  // namespace

ClusterSimResult simulate_cluster(const ClusterSimInput& input) {
  ClusterSimulation simulation(input);
  return simulation.run();
}

}  // namespace dnnsim
