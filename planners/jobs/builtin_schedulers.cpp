// The built-in job schedulers (papers-cluster.md §11). Each class cites its source; helpers shared
// by several are in priority_allocation.hpp.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "planners/jobs/gadget.hpp"
#include "planners/jobs/job_scheduler.hpp"
#include "planners/jobs/job_speed.hpp"
#include "planners/jobs/marl/marl_scheduler.hpp"
#include "planners/jobs/online_ps.hpp"
#include "planners/jobs/pollux.hpp"
#include "planners/jobs/pollux_goodput.hpp"
#include "planners/jobs/priority_allocation.hpp"
#include "planners/jobs/smd.hpp"

namespace dnnsim {
namespace {

std::vector<const JobView*> active_jobs(const ClusterState& state) {
  std::vector<const JobView*> jobs;
  for (const JobView& job : state.running) jobs.push_back(&job);
  for (const JobView& job : state.queued) jobs.push_back(&job);
  std::sort(jobs.begin(), jobs.end(), [](const JobView* a, const JobView* b) { return a->id < b->id; });
  return jobs;
}

// Job ids sorted by `key` ascending, ties by id (= submission order).
template <class Key>
std::vector<JobId> order_by(const std::vector<const JobView*>& jobs, Key key) {
  std::vector<std::pair<decltype(key(*jobs.front())), JobId>> keyed;
  for (const JobView* job : jobs) keyed.emplace_back(key(*job), job->id);
  std::sort(keyed.begin(), keyed.end());
  std::vector<JobId> order;
  for (const auto& [k, id] : keyed) order.push_back(id);
  return order;
}

// FIFO, SJF, SRTF: a fixed key, one allocation mode.
class KeyedScheduler final : public JobScheduler {
 public:
  using KeyFn = double (*)(const JobView&);
  KeyedScheduler(const PlacementPolicy& placement, KeyFn key, AllocationMode mode)
      : placement_(&placement), key_(key), mode_(mode) {}
  std::vector<Decision> decide(const ClusterState& state, SchedulerEvent) override {
    const auto jobs = active_jobs(state);
    if (jobs.empty()) return {};
    return allocate_in_order(state, order_by(jobs, key_), *placement_, mode_);
  }

 private:
  const PlacementPolicy* placement_;
  KeyFn key_;
  AllocationMode mode_;
};

// Pollux's artifact simulator (simulator.py Cluster.step) calls its Tiresias and Optimus policies only
// every `interval` (60 s): arrivals wait for the next round, freed GPUs stay idle until it.
void declare_rounds_only(OptionSchema& schema) {
  schema.boolean("rounds_only", false,
                 "decide only at rounds, not on arrivals and completions (Pollux's artifact, simulator.py)");
}

// A policy with a `round` option (its period) and `rounds_only` (declare_rounds_only): Tiresias and
// Optimus share this gate, so the artifact's round-only calling is the same rule for both.
class RoundsScheduler : public JobScheduler {
 public:
  std::optional<Seconds> round() const final { return round_; }

 protected:
  explicit RoundsScheduler(const SchedulerContext& ctx)
      : round_(ctx.options.quantity<Seconds>("round")), rounds_only_(ctx.options.flag("rounds_only")) {}

  // The jobs to decide for at `event`: none under rounds_only unless the event is a round.
  std::vector<const JobView*> jobs_to_decide(const ClusterState& state, SchedulerEvent event) const {
    if (rounds_only_ && event != SchedulerEvent::round) return {};
    return active_jobs(state);
  }

 private:
  Seconds round_;
  bool rounds_only_;
};

double submit_key(const JobView& job) { return static_cast<double>(job.id); }
double duration_key(const JobView& job) { return job.oracle_duration().value(); }
double remaining_key(const JobView& job) { return job.oracle_remaining().value(); }

// Tiresias (NSDI'19 §4, SymbioticLab/Tiresias simulator): discretised 2D attained service
// (Σ run time × GPUs) in K queues split by `thresholds` (GPU·s); higher queues first, FIFO by arrival
// inside a queue; preemptive. Starvation guard: a job waiting at least `starvation_knob` × its run
// time returns to Q0 (its service is counted from then on). With `gittins`, jobs inside a queue are
// ordered by the Gittins index of their attained service over the distribution of the GPU-time of
// the jobs seen so far (the 2D-Gittins variant; Tiresias profiles this distribution from history).
class TiresiasScheduler final : public RoundsScheduler {
 public:
  TiresiasScheduler(const SchedulerContext& ctx, bool gittins)
      : RoundsScheduler(ctx),
        placement_(&ctx.placement),
        gittins_(gittins),
        knob_(ctx.options.number("starvation_knob")) {
    for (Seconds threshold : ctx.options.quantities<Seconds>("thresholds")) thresholds_.push_back(threshold.value());
    if (!std::is_sorted(thresholds_.begin(), thresholds_.end()))
      throw ctx.options.error("thresholds", "Tiresias thresholds must increase");
  }
  static OptionSchema options() {
    OptionSchema schema;
    schema
        .quantities<Seconds>("thresholds", {Seconds(3250), Seconds(7200), Seconds(18000)},
                             "attained GPU-time (GPU·s) between the K = thresholds + 1 queues, increasing")
        .at_least(0);
    schema
        .number("starvation_knob", 0.0, "a job waiting at least knob × its run time returns to the first queue; 0: off")
        .range(0, 1e9);
    schema.quantity<Seconds>("round", Seconds(60), "period of the scheduling rounds").at_least(1e-3);
    declare_rounds_only(schema);
    return schema;
  }

  std::vector<Decision> decide(const ClusterState& state, SchedulerEvent event) override {
    const auto jobs = jobs_to_decide(state, event);
    if (jobs.empty()) return {};
    for (const JobView* job : jobs) {
      if (gittins_ && !seen_.count(job->id)) {
        seen_.insert(job->id);
        sizes_.insert(std::upper_bound(sizes_.begin(), sizes_.end(), gpu_time(*job)), gpu_time(*job));
      }
      const bool waiting = !job->placement.has_value();
      if (knob_ > 0.0 && waiting && job->attained.value() > 0.0 &&
          (state.now - job->queued_since).value() >= knob_ * job->attained.value())
        base_[job->id] = job->attained_gpu_seconds;
    }
    if (gittins_ && prefix_.size() != sizes_.size() + 1) {
      prefix_.assign(sizes_.size() + 1, 0.0);
      for (std::size_t i = 0; i < sizes_.size(); ++i) prefix_[i + 1] = prefix_[i] + sizes_[i];
    }
    auto key = [&](const JobView& job) {
      const double service = job.attained_gpu_seconds - base_[job.id];
      const auto queue =
          static_cast<double>(std::upper_bound(thresholds_.begin(), thresholds_.end(), service) - thresholds_.begin());
      const double inner = gittins_ ? -gittins_index(service, queue) : static_cast<double>(job.id);
      return std::pair<double, double>{queue, inner};
    };
    return allocate_in_order(state, order_by(jobs, key), *placement_, AllocationMode::preemptive);
  }

 private:
  static double gpu_time(const JobView& job) { return job.oracle_duration().value() * job.gpus; }

  // Gittins index with the quantum up to the next threshold (Tiresias §4.2):
  //   G(a) = P(S − a ≤ Δ | S > a) / E[min(S − a, Δ) | S > a]  over the empirical sizes S,
  // in O(log n) from the sorted sizes and their prefix sums (rebuilt once per decision).
  double gittins_index(double attained, double queue) const {
    const auto q = static_cast<std::size_t>(queue);
    const double delta = q < thresholds_.size() ? thresholds_[q] - attained : 1e18;
    const auto first = std::upper_bound(sizes_.begin(), sizes_.end(), attained) - sizes_.begin();
    const auto last = std::upper_bound(sizes_.begin(), sizes_.end(), attained + delta) - sizes_.begin();
    const double survivors = static_cast<double>(sizes_.size() - first);
    const double finish = static_cast<double>(last - first);
    const double expected =
        (prefix_[last] - prefix_[first]) - finish * attained + delta * static_cast<double>(sizes_.size() - last);
    return survivors == 0.0 || expected <= 0.0 ? 0.0 : (finish / survivors) / (expected / survivors);
  }

  const PlacementPolicy* placement_;
  bool gittins_;
  std::vector<double> thresholds_;
  double knob_;
  std::map<JobId, double> base_;
  std::set<JobId> seen_;
  std::vector<double> sizes_;   // sorted
  std::vector<double> prefix_;  // prefix_[i] = Σ sizes_[0..i)
};

// Gandiva-like time slicing (OSDI'18 §4: suspend/resume in ~60 s quanta when oversubscribed): every
// round, the jobs that have waited longest (queued: since they queued; running: since their current
// attempt started) are served first, so running jobs yield to waiting ones round-robin. Arrivals and
// completions only fill free GPUs (its reactive mode).
// With `packing: 1`, Gandiva's packing (§4.3) follows: each single-GPU job still waiting shares the
// GPU of the running single-GPU job (not packed, not being preempted) with which the pair's combined
// normalised throughput 1/s_a + 1/s_b is highest, if above `min_throughput` (1: any gain; Gandiva's
// trial packs only pairs that beat time slicing by a margin) — the speed model's measured co-located
// slowdowns (Gavel's tables) stand in for Gandiva's trial-and-measure, so a pair that would lose is
// never packed and nothing needs unpacking; a pair ends when either job ends or is preempted.
class GandivaScheduler final : public JobScheduler {
 public:
  explicit GandivaScheduler(const SchedulerContext& ctx)
      : placement_(&ctx.placement),
        speed_(&ctx.speed),
        round_(ctx.options.quantity<Seconds>("quantum")),
        packing_(ctx.options.flag("packing")),
        min_throughput_(ctx.options.number("min_throughput")) {}
  static OptionSchema options() {
    OptionSchema schema;
    schema.quantity<Seconds>("quantum", Seconds(60), "time-slicing quantum when GPUs are oversubscribed")
        .at_least(1e-3);
    schema.boolean("packing", false, "pack single-GPU jobs in pairs on one GPU where Gavel's tables say it pays");
    schema.number("min_throughput", 1.0, "packing: the least combined normalised throughput 1/s_a + 1/s_b of a pair")
        .range(1.0, 2.0);
    return schema;
  }
  std::optional<Seconds> round() const override { return round_; }
  std::vector<Decision> decide(const ClusterState& state, SchedulerEvent event) override {
    const auto jobs = active_jobs(state);
    if (jobs.empty()) return {};
    std::vector<Decision> decisions;
    if (event != SchedulerEvent::round) {
      decisions =
          allocate_in_order(state, order_by(jobs, submit_key), *placement_, AllocationMode::non_preemptive_backfill);
    } else {
      auto since = [](const JobView& job) {
        return std::pair<double, double>{(job.placement ? job.last_started : job.queued_since).value(),
                                         static_cast<double>(job.id)};
      };
      decisions = allocate_in_order(state, order_by(jobs, since), *placement_, AllocationMode::preemptive);
    }
    if (packing_) pack(state, decisions);
    return decisions;
  }

 private:
  void pack(const ClusterState& state, std::vector<Decision>& decisions) const {
    std::set<JobId> decided;  // started, preempted or already given a partner in this call
    for (const Decision& d : decisions) decided.insert(d.job);
    for (const JobView& guest : state.queued) {
      if (guest.gpus != 1 || decided.count(guest.id)) continue;
      const JobView* best = nullptr;
      double best_throughput = min_throughput_;
      for (const JobView& host : state.running) {
        if (host.gpus != 1 || host.packed_with || decided.count(host.id)) continue;
        const std::string& gpu_type = state.servers[host.placement->slices.front().first].gpu_type;
        const auto guest_slowdown = speed_->packed_slowdown(*guest.record, *host.record, gpu_type);
        const auto host_slowdown = speed_->packed_slowdown(*host.record, *guest.record, gpu_type);
        if (!guest_slowdown || !host_slowdown) continue;
        const double throughput = 1.0 / *guest_slowdown + 1.0 / *host_slowdown;
        if (throughput > best_throughput) {
          best_throughput = throughput;
          best = &host;
        }
      }
      if (best == nullptr) continue;
      decisions.push_back(Decision{Decision::Kind::pack, guest.id, {}, best->id});
      decided.insert(guest.id);
      decided.insert(best->id);
    }
  }

  const PlacementPolicy* placement_;
  const JobSpeedModel* speed_;
  Seconds round_;
  bool packing_;
  double min_throughput_;
};

// Optimus-like (EuroSys'18 §4.2; DL2's re-implementation): every job that can run gets one GPU
// (arrival order), then GPUs go one at a time to the job with the largest marginal reduction of its
// remaining time rem/f(w) − rem/f(w+1), f = the speed model's rate at w GPUs consolidated (Pollux's
// "Optimus+Oracle" uses the exact speed, as here); a job grows up to the GPUs it asked for, or with
// `max_gpus: batch` up to the replicas that split its batch at the smallest measured local batch, as
// Pollux's Optimus+Oracle+TunedJobs (artifact simulator.py get_optimus_job_info, optimus.py). Counts
// are recomputed every round; a job whose count changes is preempted and restarted at the new count,
// placed in arrival order or (place_order: fewest-gpus) smallest count first, as the artifact's optimus.py.
class OptimusScheduler final : public RoundsScheduler {
 public:
  explicit OptimusScheduler(const SchedulerContext& ctx)
      : RoundsScheduler(ctx),
        placement_(&ctx.placement),
        speed_(&ctx.speed),
        fewest_first_(ctx.options.choice("place_order") == "fewest-gpus") {
    if (ctx.options.choice("max_gpus") == "batch") {
      const PolluxSpeedModel* tables = ctx.speed.pollux_tables();
      if (tables == nullptr)
        throw ctx.options.error("max_gpus", "max_gpus: batch needs workload.speed {source: pollux, tables: …}");
      batch_limit_.emplace(*tables);
      if (const auto file = ctx.options.file("applications")) batch_limit_->read_settings(*file);
    }
  }
  static OptionSchema options() {
    OptionSchema schema;
    schema.quantity<Seconds>("round", Seconds(60), "period of the re-allocation rounds").at_least(1e-3);
    schema.choice("max_gpus", "requested", {"requested", "batch"},
                  "a job grows up to the GPUs it asked for, or (batch) to its batch / the smallest measured "
                  "local batch (Pollux artifact simulator.py; needs Pollux's tables)");
    schema.file("applications",
                "max_gpus batch: per-application settings whose max_replicas caps a job "
                "(data/traces/pollux-osdi21/applications.csv: ncf 1, as the artifact)");
    schema.choice("place_order", "arrival", {"arrival", "fewest-gpus"},
                  "order in which jobs given a new count are placed: arrival, or fewest GPUs first, ties by "
                  "arrival (Pollux artifact optimus.py: sorted by num_replicas)");
    declare_rounds_only(schema);
    return schema;
  }

  std::vector<Decision> decide(const ClusterState& state, SchedulerEvent event) override {
    const auto jobs = jobs_to_decide(state, event);
    if (jobs.empty()) return {};
    int budget = state.total_gpus();
    std::map<JobId, int> count;
    for (const JobView* job : jobs)
      if (budget > 0) {
        count[job->id] = 1;
        --budget;
      }
    auto remaining_time = [&](const JobView& job, int w) {
      return speed_->iterations_left(*job.record, job.done_iterations, job.total_iterations) /
             speed_->iterations_per_second(*job.record, nominal_placement(state.servers, w), state.servers);
    };
    while (budget > 0) {
      const JobView* best = nullptr;
      double best_gain = 0.0;
      for (const JobView* job : jobs) {
        auto it = count.find(job->id);
        if (it == count.end() || it->second >= max_gpus(*job)) continue;
        const double gain = remaining_time(*job, it->second) - remaining_time(*job, it->second + 1);
        if (gain > best_gain) {
          best_gain = gain;
          best = job;
        }
      }
      if (best == nullptr) break;
      ++count[best->id];
      --budget;
    }
    std::vector<Decision> decisions;
    std::vector<int> free = state.free_gpus;
    for (const JobView& job : state.running) {
      auto it = count.find(job.id);
      if (it != count.end() && it->second == job.placement->gpus()) continue;
      decisions.push_back(Decision{Decision::Kind::preempt, job.id, {}});
      for (const auto& [server, n] : job.placement->slices) free[server] += n;
    }
    std::vector<const JobView*> order = jobs;
    if (fewest_first_) {
      const auto gpus = [&](const JobView* job) {
        const auto it = count.find(job->id);
        return it == count.end() ? 0 : it->second;
      };
      std::stable_sort(order.begin(), order.end(),
                       [&](const JobView* a, const JobView* b) { return gpus(a) < gpus(b); });
    }
    for (const JobView* job : order) {
      auto it = count.find(job->id);
      if (it == count.end()) continue;
      if (job->placement && it->second == job->placement->gpus()) continue;
      JobView sized = *job;
      sized.gpus = it->second;
      if (auto where = placement_->place(state, free, sized)) {
        for (const auto& [server, n] : where->slices) free[server] -= n;
        decisions.push_back(Decision{Decision::Kind::start, job->id, std::move(*where)});
      }
    }
    return decisions;
  }

 private:
  int max_gpus(const JobView& job) const {
    if (!batch_limit_) return job.gpus;
    const auto& app = batch_limit_->speed().application(*job.record);
    return batch_limit_->max_replicas(*job.record,
                                      job.record->batch_size > 0 ? job.record->batch_size : app.target.front().first);
  }

  const PlacementPolicy* placement_;
  const JobSpeedModel* speed_;
  bool fewest_first_;                         // place_order: fewest-gpus
  std::optional<PolluxGoodput> batch_limit_;  // max_gpus: batch
};

// DRF (Ghodsi et al., NSDI'11) with GPUs as the only resource, as in DL2's baseline: progressive
// filling — repeatedly start the oldest waiting job of the user with the smallest share of GPUs in
// use (jobs without a user are their own user); non-preemptive.
class DrfScheduler final : public JobScheduler {
 public:
  explicit DrfScheduler(const SchedulerContext& ctx) : placement_(&ctx.placement) {}
  std::vector<Decision> decide(const ClusterState& state, SchedulerEvent) override {
    auto user_of = [](const JobView& job) {
      return job.record->user.empty() ? "#" + std::to_string(job.id) : job.record->user;
    };
    std::map<std::string, int> share;
    for (const JobView& job : state.running) share[user_of(job)] += job.placement->gpus();
    std::vector<const JobView*> waiting;
    for (const JobView& job : state.queued) waiting.push_back(&job);
    std::vector<Decision> decisions;
    std::vector<int> free = state.free_gpus;
    while (!waiting.empty()) {
      auto next = std::min_element(waiting.begin(), waiting.end(), [&](const JobView* a, const JobView* b) {
        return std::pair{share[user_of(*a)], a->id} < std::pair{share[user_of(*b)], b->id};
      });
      const JobView& job = **next;
      waiting.erase(next);
      auto where = placement_->place(state, free, job);
      if (!where) continue;
      for (const auto& [server, n] : where->slices) free[server] -= n;
      share[user_of(job)] += job.gpus;
      decisions.push_back(Decision{Decision::Kind::start, job.id, std::move(*where)});
    }
    return decisions;
  }

 private:
  const PlacementPolicy* placement_;
};

// Tetris (Grandl et al., SIGCOMM'14 §3) on one resource: start repeatedly the waiting job with the
// highest alignment (demand/total · free/total) + `srtf_weight` × (shortest remaining / its
// remaining), the paper's packing score combined with its SRTF term; non-preemptive.
class TetrisScheduler final : public JobScheduler {
 public:
  explicit TetrisScheduler(const SchedulerContext& ctx)
      : placement_(&ctx.placement), weight_(ctx.options.number("srtf_weight")) {}
  static OptionSchema options() {
    OptionSchema schema;
    schema.number("srtf_weight", 1.0, "weight of the SRTF term beside the packing alignment (0: pure packing)")
        .range(0, 1e9);
    return schema;
  }
  std::vector<Decision> decide(const ClusterState& state, SchedulerEvent) override {
    std::vector<const JobView*> waiting;
    for (const JobView& job : state.queued) waiting.push_back(&job);
    std::vector<Decision> decisions;
    std::vector<int> free = state.free_gpus;
    const double total = state.total_gpus();
    while (!waiting.empty()) {
      const double free_total = std::accumulate(free.begin(), free.end(), 0);
      double shortest = 1e300;
      for (const JobView* job : waiting) shortest = std::min(shortest, std::max(job->oracle_remaining().value(), 1e-9));
      auto score = [&](const JobView* job) {
        return (job->gpus / total) * (free_total / total) +
               weight_ * shortest / std::max(job->oracle_remaining().value(), 1e-9);
      };
      const JobView* best = nullptr;
      for (const JobView* job : waiting)
        if (job->gpus <= free_total && (best == nullptr || score(job) > score(best))) best = job;
      if (best == nullptr) break;
      waiting.erase(std::find(waiting.begin(), waiting.end(), best));
      auto where = placement_->place(state, free, *best);
      if (!where) continue;
      for (const auto& [server, n] : where->slices) free[server] -= n;
      decisions.push_back(Decision{Decision::Kind::start, best->id, std::move(*where)});
    }
    return decisions;
  }

 private:
  const PlacementPolicy* placement_;
  double weight_;
};

// Helios QSSF (Hu et al., SC'21 §5.1): Quasi-Shortest-Service-First — waiting jobs by expected GPU
// service = GPUs × predicted duration, the prediction being the mean duration of the same user's
// finished jobs (Helios learns it from history; the user mean is its simplest estimator), else the
// mean over all finished jobs, else the job is ranked by GPU count alone; non-preemptive, backfill.
class QssfScheduler final : public JobScheduler {
 public:
  explicit QssfScheduler(const SchedulerContext& ctx) : placement_(&ctx.placement) {}
  std::vector<Decision> decide(const ClusterState& state, SchedulerEvent) override {
    // Jobs that were running at the last call and are gone now have finished: learn their duration.
    std::map<JobId, const JobView*> present;
    for (const JobView* job : active_jobs(state)) present.emplace(job->id, job);
    for (const auto& [id, snapshot] : last_running_)
      if (!present.count(id)) {
        auto& [sum, n] = history_[snapshot.first];
        sum += snapshot.second;
        n += 1;
        global_sum_ += snapshot.second;
        global_n_ += 1;
      }
    last_running_.clear();
    for (const JobView& job : state.running) last_running_[job.id] = {job.record->user, job.oracle_duration().value()};
    auto key = [&](const JobView& job) {
      auto it = history_.find(job.record->user);
      const double predicted = it != history_.end() ? it->second.first / it->second.second
                               : global_n_ > 0      ? global_sum_ / global_n_
                                                    : 1.0;
      return predicted * job.gpus;
    };
    const auto jobs = active_jobs(state);
    if (jobs.empty()) return {};
    auto decisions =
        allocate_in_order(state, order_by(jobs, key), *placement_, AllocationMode::non_preemptive_backfill);
    // A job started now may end before anything else happens: the next call must know it ran.
    for (const Decision& d : decisions)
      if (const JobView* job = present.at(d.job); d.kind == Decision::Kind::start)
        last_running_[job->id] = {job->record->user, job->oracle_duration().value()};
    return decisions;
  }

 private:
  const PlacementPolicy* placement_;
  // The jobs running after the previous call (those it found running and those it started).
  std::map<JobId, std::pair<std::string, double>> last_running_;
  std::map<std::string, std::pair<double, double>> history_;
  double global_sum_ = 0.0, global_n_ = 0.0;
};

template <class Make>
SchedulerFactory factory(Make make) {
  return [make](const SchedulerContext& ctx) -> std::unique_ptr<JobScheduler> { return make(ctx); };
}

}  // namespace

void register_builtin_schedulers(SchedulerRegistry& registry) {
  registry.add("fifo", "strict FIFO, gang, non-preemptive: the head blocks the queue (YARN-CS-like)",
               "Tiresias NSDI'19 §6 baseline (YARN-CS)", factory([](const SchedulerContext& ctx) {
                 return std::make_unique<KeyedScheduler>(ctx.placement, submit_key,
                                                         AllocationMode::non_preemptive_strict);
               }));
  registry.add("fifo-backfill", "FIFO order, later jobs that fit start when the head does not (fit-job-first)",
               "Tiresias NSDI'19 simulator `fjf`", factory([](const SchedulerContext& ctx) {
                 return std::make_unique<KeyedScheduler>(ctx.placement, submit_key,
                                                         AllocationMode::non_preemptive_backfill);
               }));
  registry.add("sjf", "shortest job first by oracle duration, non-preemptive, backfill", "Helios SC'21 §5 baseline",
               factory([](const SchedulerContext& ctx) {
                 return std::make_unique<KeyedScheduler>(ctx.placement, duration_key,
                                                         AllocationMode::non_preemptive_backfill);
               }));
  registry.add("srtf", "shortest remaining time first by oracle remaining time, preemptive", "DL2 / Tiresias baselines",
               factory([](const SchedulerContext& ctx) {
                 return std::make_unique<KeyedScheduler>(ctx.placement, remaining_key, AllocationMode::preemptive);
               }));
  registry.add("tiresias-las", "2D-LAS: attained GPU-time in K queues (thresholds), starvation knob, preemptive",
               "Tiresias NSDI'19 §4.1",
               factory([](const SchedulerContext& ctx) { return std::make_unique<TiresiasScheduler>(ctx, false); }),
               TiresiasScheduler::options());
  registry.add("tiresias-gittins", "2D-Gittins: Gittins index of attained GPU-time over the seen GPU-time distribution",
               "Tiresias NSDI'19 §4.2",
               factory([](const SchedulerContext& ctx) { return std::make_unique<TiresiasScheduler>(ctx, true); }),
               TiresiasScheduler::options());
  registry.add(
      "gandiva",
      "Gandiva-like time slicing in quanta when oversubscribed; packing of single-GPU jobs with `packing: true`",
      "Gandiva OSDI'18 §4, §4.3",
      factory([](const SchedulerContext& ctx) { return std::make_unique<GandivaScheduler>(ctx); }),
      GandivaScheduler::options());
  registry.add("optimus", "Optimus-like: GPUs one by one to the largest marginal reduction of remaining time",
               "Optimus EuroSys'18 §4.2",
               factory([](const SchedulerContext& ctx) { return std::make_unique<OptimusScheduler>(ctx); }),
               OptimusScheduler::options());
  registry.add("drf", "dominant-resource fairness over users (GPUs only), progressive filling",
               "DRF NSDI'11; DL2 baseline",
               factory([](const SchedulerContext& ctx) { return std::make_unique<DrfScheduler>(ctx); }));
  registry.add("tetris", "packing alignment score + SRTF term, non-preemptive", "Tetris SIGCOMM'14 §3; DL2 baseline",
               factory([](const SchedulerContext& ctx) { return std::make_unique<TetrisScheduler>(ctx); }),
               TetrisScheduler::options());
  registry.add("qssf", "quasi-shortest-service-first: GPUs × user's mean past duration, backfill", "Helios SC'21 §5.1",
               factory([](const SchedulerContext& ctx) { return std::make_unique<QssfScheduler>(ctx); }));
  registry.add("gadget",
               "GADGET-like: greedy ring embedding + marginal-utility admission, ring contention on shared NICs; "
               "utility: progress without excess training",
               "Yu et al., GADGET, INFOCOM'22 (reconstructed, papers-cluster.md §1)",
               factory([](const SchedulerContext& ctx) { return make_gadget_scheduler(ctx, GadgetUtility::excess); }),
               gadget_options(GadgetUtility::excess));
  registry.add("gadget-energy", "GADGET-like, utility: progress minus energy_weight per GPU-hour",
               "Yu et al., GADGET, INFOCOM'22 (reconstructed, papers-cluster.md §1)",
               factory([](const SchedulerContext& ctx) { return make_gadget_scheduler(ctx, GadgetUtility::energy); }),
               gadget_options(GadgetUtility::energy));
  registry.add("gadget-fair", "GADGET-like, utility: alpha-fair progress (alpha in [0, 1))",
               "Yu et al., GADGET, INFOCOM'22 (reconstructed, papers-cluster.md §1)",
               factory([](const SchedulerContext& ctx) { return make_gadget_scheduler(ctx, GadgetUtility::fair); }),
               gadget_options(GadgetUtility::fair));
  registry.add(
      "smd",
      "SMD-like: per job (workers, PSs) by a sum-of-ratios JCT objective, parametric loop over a multiple-choice "
      "GPU + CPU knapsack (Cbc); non-preemptive",
      "Yu et al., SMD, INFOCOM'21 (reconstructed, papers-cluster.md §5)",
      factory([](const SchedulerContext& ctx) { return make_smd_scheduler(ctx); }), smd_options());
  registry.add(
      "online-ps",
      "online worker/PS scheduling with locality -like: co-located and distributed candidate schedules, per-server "
      "packing-covering LP (Clp), randomized rounding with repair, on every arrival",
      "Yu, Liu, Wu, Ji, Bentley, IEEE TNSE (arXiv 2108.02917; reconstructed, papers-cluster.md §4)",
      factory([](const SchedulerContext& ctx) { return make_online_ps_scheduler(ctx); }), online_ps_options());
  registry.add("pollux",
               "Pollux-like: goodput (measured throughput × gradient-noise efficiency, batch size re-picked per "
               "allocation), per-job speedup, genetic search of the allocation maximising a power mean (fairness p)",
               "Qiao et al., OSDI'21 §3–4; artifact petuum/adaptdl osdi21-artifact simulator/",
               factory([](const SchedulerContext& ctx) { return make_pollux_scheduler(ctx); }), pollux_options());
  registry.add("marl",
               "interference-aware multi-agent RL -like: agents per server partition, hierarchical GNN (server graph, "
               "data-centre graph) actor-critic policy trained by `dnnsim train-scheduler`; which waiting job to serve "
               "and where (place, pack, or stop when only packing is left)",
               "Zhao & Wu, IEEE TNSM 2021 (arXiv 2112.13354; reconstructed, papers-cluster.md §2)",
               factory([](const SchedulerContext& ctx) { return make_marl_scheduler(ctx); }), marl_options());
}

}  // namespace dnnsim
