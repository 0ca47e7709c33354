#include "planners/jobs/pollux.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>

#include "models/common/random.hpp"
#include "planners/jobs/job_speed.hpp"
#include "planners/jobs/measured_speed.hpp"
#include "planners/jobs/pollux_goodput.hpp"
#include "planners/jobs/pollux_marginal.hpp"
#include "planners/jobs/pollux_perf.hpp"
#include "planners/jobs/pollux_search.hpp"

namespace dnnsim {
namespace {

constexpr int kMaxExploredReplicas = 64;  // simulator.py: "simulator can't handle more"

class PolluxScheduler final : public JobScheduler {
 public:
  explicit PolluxScheduler(const SchedulerContext& ctx)
      : goodput_(*tables(ctx)),
        fairness_(ctx.options.number("fairness")),
        round_(ctx.options.quantity<Seconds>("round")),
        search_{static_cast<int>(ctx.options.integer("population")),
                static_cast<int>(ctx.options.integer("generations")), static_cast<int>(ctx.options.integer("patience")),
                ctx.options.choice("selection") == "nsga2"},
        delay_(ctx.options.quantity<Seconds>("restart_delay").value()),
        max_job_nodes_(static_cast<int>(ctx.options.integer("max_job_nodes"))),
        marginal_(ctx.options.choice("search") == "marginal"),
        search_uncontended_(ctx.options.choice("uncontended") == "genetic"),
        fair_share_unexplored_(ctx.options.choice("unexplored") == "fair-share"),
        fitted_(ctx.options.choice("throughput") == "fitted"),
        running_batch_(ctx.options.choice("batch_statistics") == "running"),
        operators_{ctx.options.choice("raise") == "per-node", ctx.options.choice("repair") == "after-second"},
        rng_(ctx.seed ^ 0x9011u) {
    if (const auto file = ctx.options.file("applications")) goodput_.read_settings(*file);
    goodput_.rank_at_running_batch(running_batch_);
  }

  std::optional<Seconds> round() const override { return round_; }
  const PolluxGoodput* goodput() const override { return &goodput_; }
  std::optional<std::vector<ProgressSegment>> adapted_curve(const JobView& job) override {
    if (!fitted_) return std::nullopt;
    return agent_curve(job);
  }

  std::vector<Decision> decide(const ClusterState& state, SchedulerEvent event) override {
    if (event != SchedulerEvent::round) return {};  // arrivals wait for the next round, as in the artifact
    std::vector<const JobView*> jobs;
    PolluxProblem pb = problem(state, jobs);
    if (pb.jobs == 0) return {};
    std::optional<PolluxAllocation> chosen;
    if (marginal_ || !search_uncontended_) chosen = pollux_uncontended(pb);
    if (!chosen && marginal_) chosen = pollux_marginal(pb);
    if (!chosen) {
      std::vector<PolluxAllocation> seeds = adapt_previous(jobs);
      seeds.push_back(pb.current);
      PolluxSearch search(pb, rng_, operators_);
      previous_ = search.run(std::move(seeds), search_);
      previous_jobs_.clear();
      for (const JobView* job : jobs) previous_jobs_.push_back(job->id);
      chosen = previous_.front();
    }
    return decisions(pb, jobs, *chosen);
  }

 private:
  static const PolluxSpeedModel* tables(const SchedulerContext& ctx) {
    const PolluxSpeedModel* tables = ctx.speed.pollux_tables();
    if (tables == nullptr)
      throw InputError(ctx.options.origin(),
                       "scheduler 'pollux' adapts batch sizes with Pollux's goodput model: it needs "
                       "workload.speed {source: pollux, tables: …} (the artifact's throughput tables)");
    return tables;
  }

  // The round's jobs (running and waiting, by attained GPU-time then arrival: pollux.py optimize's
  // order) and their problem.
  PolluxProblem problem(const ClusterState& state, std::vector<const JobView*>& jobs) {
    for (const JobView& job : state.running) jobs.push_back(&job);
    for (const JobView& job : state.queued) jobs.push_back(&job);
    std::stable_sort(jobs.begin(), jobs.end(), [](const JobView* a, const JobView* b) {
      return std::pair{a->attained_gpu_seconds, a->id} < std::pair{b->attained_gpu_seconds, b->id};
    });
    PolluxProblem pb;
    pb.jobs = static_cast<int>(jobs.size());
    pb.total_gpus = std::max(1, state.total_gpus());
    pb.max_job_nodes = max_job_nodes_;
    pb.fairness = fairness_;
    for (const ServerInfo& server : state.servers) pb.capacity.push_back(server.gpus);
    const int fair = (pb.total_gpus + pb.jobs - 1) / std::max(1, pb.jobs);
    std::vector<std::function<double(int, int)>> rates;
    std::vector<int> base_replicas;
    std::vector<char> unexplored;
    for (const JobView* job : jobs) {
      Known& known = known_of(*job);
      pb.current.rows.emplace_back();
      if (job->placement) {
        pb.current.rows.back() = job->placement->slices;
        known.explored = std::max(known.explored, job->placement->gpus());
      }
      pb.max_replicas.push_back(
          std::min({std::max(2 * known.explored, 1), kMaxExploredReplicas, known.batch_limit, pb.total_gpus}));
      const double age = std::max(0.0, state.now.value() - job->record->submit.value());
      pb.factor.push_back(std::max(age - job->preemptions * delay_, 0.0) / (age + delay_));
      const int epoch = goodput_.epoch(*job->record, job->done_iterations);
      if (fitted_) observe_entered(*job, epoch, known);
      if (!known.observations.empty())
        rates.push_back(fitted_rates(*job, epoch));
      else
        rates.push_back(goodput_.rates(*job->record, epoch));
      base_replicas.push_back(std::min(fair, known.batch_limit));
      unexplored.push_back(fair_share_unexplored_ && known.explored == 0 ? 1 : 0);
    }
    forget_finished(jobs);
    pb.speedup = pollux_speedup_function(std::move(rates), std::move(base_replicas), std::move(unexplored), fair);
    return pb;
  }

  // A finished job keeps nothing: its memoised predictions, picks and observations are a trace's worth
  // (its 1,105 predictions alone 8.8 kB: most of the 791 MB peak over Philly, docs/performance.md). A
  // job is in every round (running or queued) until it ends, so one gone from the round never comes
  // back. Assigned a fresh Known, not `= {}`: that clears a vector but keeps its capacity.
  void forget_finished(const std::vector<const JobView*>& jobs) {
    std::vector<JobId> active;
    for (const JobView* job : jobs) active.push_back(job->id);
    std::sort(active.begin(), active.end());
    for (const JobId id : active_)
      if (!std::binary_search(active.begin(), active.end(), id)) known_[id] = Known{};
    active_ = std::move(active);
  }

  // What the scheduler keeps per job across rounds (by JobId, the job's index in the trace).
  struct Known {
    int batch_limit = 0;  // PolluxGoodput::max_replicas: constant per job
    int explored = 0;     // the most replicas it has run with
    // throughput: fitted — one observation per (nodes, replicas, local batch) run, the model fitted to
    // them, the batch it ran last (its gradient statistics rank the candidates with batch_statistics:
    // running), and its predictions memoised as [nodes × 65 + replicas] while epoch, statistics and
    // model hold (NaN: not computed yet).
    std::vector<PolluxPerfObservation> observations;
    PolluxPerfParams params;
    std::size_t fitted_on = 0;  // observations `params` were fitted to (refitted when next used)
    double batch = 0;
    std::tuple<int, double, std::size_t> memo_key{-1, 0.0, 0};
    std::vector<double> memo;
    // step_times() by (nodes, replicas), for the model fitted to `times_for` observations.
    std::map<std::pair<int, int>, std::vector<PolluxGoodput::StepTimes>> times;
    std::size_t times_for = 0;
    // The configuration its agent runs in each epoch of its current curve from `plan_epoch` on (the
    // last one beyond: agent_curve), and the agent's picks by (epoch, statistics' batch, statistics'
    // epoch), memoised while its model and placement shape (`picks_for`) hold.
    std::vector<PolluxGoodput::Config> plan;
    int plan_epoch = 0;
    std::map<std::tuple<int, double, int>, PolluxGoodput::Config> picks;
    std::pair<std::size_t, std::vector<int>> picks_for{0, {}};
  };

  // throughput: fitted — the artifact's agent (simulator.py Job.update_local_bsz, Job.step): the
  // batch chosen with the job's fitted model on its placement, at the statistics of the batch it runs
  // (of B₀ with batch_statistics: smallest) in its epoch, and chosen again at each epoch's end with
  // the statistics of the epoch just ended (its last step's). The configuration it starts is observed
  // (the artifact's next step records it). Chosen epoch by epoch until two rounds ahead, the last
  // choice held to the end of the work: the simulation asks again at the next round, before then.
  std::vector<ProgressSegment> agent_curve(const JobView& job) {
    Known& known = known_of(job);
    const std::vector<double>& ends = goodput_.epoch_ends(*job.record);
    const double initial = goodput_.speed().application(*job.record).validation.front().batch;
    const int first = goodput_.epoch(*job.record, job.done_iterations);
    const double horizon = 2 * round_.value();
    double stats = running_batch_ && known.batch > 0 ? known.batch : initial;
    int stats_epoch = first;
    double at = job.done_iterations, seconds = 0;
    known.plan.clear();
    known.plan_epoch = first;
    std::vector<ProgressSegment> curve;
    for (int e = first;; ++e) {
      const PolluxGoodput::Config c = agent_pick(job, known, e, stats, stats_epoch);
      if (e == first) enter(job, known, c);
      known.plan.push_back(c);
      seconds += (ends[e] - at) / c.rate;
      at = ends[e];
      const bool last = static_cast<std::size_t>(e) + 1 == ends.size() || seconds >= horizon;
      curve.push_back(ProgressSegment{last ? ends.back() : ends[e], c.rate});
      if (last) return curve;
      stats = running_batch_ ? c.batch : initial;
      stats_epoch = e;
    }
  }

  PolluxGoodput::Config agent_pick(const JobView& job, Known& known, int epoch, double stats, int stats_epoch) {
    std::pair model{known.observations.size(), job.placement->shape()};
    if (known.picks_for != model) {
      known.picks.clear();
      known.picks_for = std::move(model);
    }
    const std::tuple key{epoch, stats, stats_epoch};
    if (const auto it = known.picks.find(key); it != known.picks.end()) return it->second;
    if (known.picks.empty()) active_.push_back(job.id);  // forgotten at the next round it is not in
    const PolluxPerfParams* params = known.observations.empty() ? nullptr : &fitted(known);
    return known.picks[key] = goodput_.chosen(*job.record, *job.placement, params, epoch, stats, stats_epoch);
  }

  // The configuration `c` the job runs from now: observed, with its measured times (the first kept per
  // configuration), and the model refitted on a new one, as the artifact's Job.update_params.
  void enter(const JobView& job, Known& known, const PolluxGoodput::Config& c) {
    if (c.rate <= 0) return;
    known.batch = c.batch;
    const int nodes = static_cast<int>(job.placement->slices.size());
    const int replicas = job.placement->gpus();
    for (const PolluxPerfObservation& o : known.observations)
      if (o.nodes == nodes && o.replicas == replicas && o.local_batch == c.atomic) return;
    const IterationCost step = goodput_.speed().measured(*job.record, *job.placement, c.atomic);
    known.observations.push_back(
        {nodes, replicas, static_cast<double>(c.atomic), step.compute.value(), step.total().value()});
  }

  // The model fitted to the job's observations (not empty), refitted only when it is used after new
  // ones. The fit depends on the observations alone, so several new ones between uses cost one fit,
  // and jobs of one application that ran the same configurations in the same order (their times come
  // from the same tables) share it.
  const PolluxPerfParams& fitted(Known& known) {
    if (known.fitted_on != known.observations.size()) {
      const auto [it, fresh] = fits_.try_emplace(known.observations);
      if (fresh) it->second = fit_pollux_perf_params(known.observations);
      known.params = it->second;
      known.fitted_on = known.observations.size();
    }
    return known.params;
  }
  struct ObservationsOrder {
    bool operator()(const std::vector<PolluxPerfObservation>& a, const std::vector<PolluxPerfObservation>& b) const {
      const auto key = [](const PolluxPerfObservation& o) {
        return std::tuple{o.nodes, o.replicas, o.local_batch, o.accum_time, o.step_time};
      };
      return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                          [&](const auto& x, const auto& y) { return key(x) < key(y); });
    }
  };

  // The configurations the running job's curve has entered since it was chosen: one per epoch begun.
  void observe_entered(const JobView& job, int epoch, Known& known) {
    if (!job.placement || known.plan.empty()) return;
    for (int e = known.plan_epoch + 1; e <= epoch; ++e)
      enter(job, known, known.plan[std::min<std::size_t>(e - known.plan_epoch, known.plan.size() - 1)]);
  }

  // The fitted model's goodput(nodes, replicas), ranked at the statistics of the batch the job ran
  // last (batch_statistics: running) or of B₀.
  // Held by job id, not by reference: known_ may grow while a round's functions are made.
  std::function<double(int, int)> fitted_rates(const JobView& job, int epoch) {
    constexpr int kNodes = 16, kReplicas = 64;
    const JobRecord& record = *job.record;
    Known& known = known_[job.id];
    const double initial = goodput_.speed().application(record).validation.front().batch;
    const double stats = running_batch_ && known.batch > 0 ? known.batch : initial;
    const std::tuple key{epoch, stats, known.observations.size()};
    if (known.memo_key != key) {
      known.memo_key = key;
      known.memo.assign((kNodes + 1) * (kReplicas + 1), std::nan(""));
    }
    return [this, &record, epoch, stats, id = job.id](int nodes, int replicas) {
      Known& known = known_[id];
      const auto predict = [&] {
        return goodput_.predicted(record, step_times(known, record, nodes, replicas), replicas, epoch, stats);
      };
      if (nodes > kNodes || replicas > kReplicas) return predict();
      double& cell = known.memo[static_cast<std::size_t>(nodes * (kReplicas + 1) + replicas)];
      if (std::isnan(cell)) cell = predict();
      return cell;
    };
  }
  // The fitted model's step times of the job's candidate batches on (nodes, replicas): they do not
  // depend on the epoch or the statistics, so they are kept while the model holds.
  const std::vector<PolluxGoodput::StepTimes>& step_times(Known& known, const JobRecord& record, int nodes,
                                                          int replicas) {
    const PolluxPerfParams& params = fitted(known);
    if (known.times_for != known.observations.size()) {
      known.times.clear();
      known.times_for = known.observations.size();
    }
    auto [it, fresh] = known.times.try_emplace(std::pair{nodes, replicas});
    if (fresh) it->second = goodput_.predicted_times(record, params, nodes, replicas);
    return it->second;
  }
  Known& known_of(const JobView& job) {
    if (known_.size() <= job.id) known_.resize(job.id + 1);
    Known& known = known_[job.id];
    if (known.batch_limit == 0) known.batch_limit = goodput_.max_replicas(*job.record);
    return known;
  }

  // The previous round's population on this round's jobs (pollux.py _adapt_prev_states): rows of
  // jobs still here copied, new jobs' rows empty.
  std::vector<PolluxAllocation> adapt_previous(const std::vector<const JobView*>& jobs) const {
    std::map<JobId, std::size_t> was;
    for (std::size_t k = 0; k < previous_jobs_.size(); ++k) was[previous_jobs_[k]] = k;
    std::vector<PolluxAllocation> seeds;
    for (const PolluxAllocation& old : previous_) {
      PolluxAllocation a;
      for (const JobView* job : jobs) {
        const auto it = was.find(job->id);
        a.rows.push_back(it != was.end() ? old.rows[it->second] : std::vector<std::pair<int, int>>{});
      }
      seeds.push_back(std::move(a));
    }
    return seeds;
  }

  // Jobs whose allocation changes are preempted (checkpointed), then every job with a new allocation
  // starts on it: a change is a restart, as in the artifact.
  static std::vector<Decision> decisions(const PolluxProblem& pb, const std::vector<const JobView*>& jobs,
                                         const PolluxAllocation& chosen) {
    std::vector<Decision> result;
    std::vector<std::size_t> changed;
    for (std::size_t j = 0; j < jobs.size(); ++j)
      if (chosen.rows[j] != pb.current.rows[j]) changed.push_back(j);
    for (const std::size_t j : changed)
      if (jobs[j]->placement) result.push_back(Decision{Decision::Kind::preempt, jobs[j]->id, {}, 0});
    for (const std::size_t j : changed)
      if (!chosen.rows[j].empty())
        result.push_back(Decision{Decision::Kind::start, jobs[j]->id, Placement{chosen.rows[j], {}}, 0});
    return result;
  }

  PolluxGoodput goodput_;
  double fairness_;
  Seconds round_;
  PolluxSearchOptions search_;
  double delay_;
  int max_job_nodes_;
  bool marginal_;  // search: marginal (pollux_marginal.hpp) instead of the genetic search
  bool search_uncontended_;     // uncontended: genetic
  bool fair_share_unexplored_;  // unexplored: fair-share
  bool fitted_;                 // throughput: fitted
  bool running_batch_;          // batch_statistics: running
  PolluxOperators operators_;   // raise, repair
  SplitMix64 rng_;
  std::vector<Known> known_;                // by JobId
  std::vector<PolluxAllocation> previous_;  // the last GA population, over previous_jobs_
  std::vector<JobId> previous_jobs_;
  std::vector<JobId> active_;  // the last round's jobs and those given picks since (forget_finished)
  std::map<std::vector<PolluxPerfObservation>, PolluxPerfParams, ObservationsOrder> fits_;  // fitted()'s
};

}  // namespace

std::function<double(int, int, int)> pollux_speedup_function(std::vector<std::function<double(int, int)>> rates,
                                                             std::vector<int> base_replicas,
                                                             std::vector<char> unexplored, int fair) {
  std::vector<double> base_rates;
  for (std::size_t j = 0; j < rates.size(); ++j)
    base_rates.push_back(unexplored[j] != 0 ? 0.0 : rates[j](1, base_replicas[j]));
  return [rates = std::move(rates), base_rates = std::move(base_rates), unexplored = std::move(unexplored), fair](
             int j, int nodes, int replicas) {
    const auto k = static_cast<std::size_t>(j);
    if (unexplored[k] != 0) return static_cast<double>(replicas) / fair;
    const double base = base_rates[k];
    return base > 0 ? rates[k](nodes, replicas) / base : 0.0;
  };
}

OptionSchema pollux_options() {
  OptionSchema schema;
  schema
      .number("fairness", -1.0,
              "p of the power mean of the jobs' speedups (Pollux's fairness knob, §4.2: 1 the sum, 0 the "
              "geometric mean, lower fairer; the artifact uses −1)")
      .range(-10, 1);
  schema.quantity<Seconds>("round", Seconds(60), "period of the re-allocation rounds (the artifact's 60 s)")
      .at_least(1);
  schema.choice("search", "genetic", {"genetic", "marginal"},
                "how a contended round is searched: the artifact's genetic algorithm, or GPUs by marginal "
                "gain of the same objective (pollux_marginal.hpp: for Philly-sized clusters)");
  schema.choice("uncontended", "exact", {"exact", "genetic"},
                "a round where every job's best allocation fits: taken directly, or searched by the genetic "
                "search as any other, the artifact's (pollux.py optimize runs NSGA-II every round, from the empty "
                "allocation at the first); with search: marginal always taken directly");
  schema.integer("population", 100, "individuals the genetic search keeps (pymoo's pop_size in the artifact)")
      .range(2, 100000);
  schema.integer("generations", 100, "generations of the genetic search per round (the artifact's n_gen)")
      .range(0, 100000);
  schema
      .integer("patience", 10,
               "generations without a better allocation after which a round's search stops (the artifact "
               "always runs all generations: patience ≥ generations; the early stop is dnnsim's, for speed)")
      .range(1, 100000);
  schema.choice("selection", "fitness", {"fitness", "nsga2"},
                "how the genetic search selects and keeps individuals: by the power mean alone, or NSGA-II's "
                "ranking on the power mean and the cluster utility, the artifact's (pollux.py: pymoo NSGA2, "
                "n_obj=2; the chosen allocation is still the best power mean)");
  schema.choice("raise", "per-node", {"per-node", "per-job"},
                "which entries the mutation raises: each node with room for about one job, whichever, the "
                "artifact's (pollux.py _mutation: odds normalised over the jobs), or each job on about one node "
                "with room (dnnsim's reading until 2026-11-30: new jobs, first in the repair's order, took the room)");
  schema.choice("repair", "after-second", {"after-second", "distributed"},
                "what the repair takes off a node two distributed jobs share: every later job's replicas from the "
                "second distributed one on, the artifact's (pollux.py _repair: cumsum over the jobs), or the later "
                "distributed jobs' only");
  schema
      .quantity<Seconds>("restart_delay", Seconds(30),
                         "re-allocation delay the search charges a job it moves (the artifact's 30 s)")
      .at_least(0);
  schema.choice("unexplored", "goodput", {"goodput", "fair-share"},
                "speedup of a job that has never run: its goodput ratio as for the others, or replicas / fair "
                "share replicas, the artifact's (pollux.py Problem: its agent has no fitted model yet)");
  schema.choice("batch_statistics", "smallest", {"smallest", "running"},
                "gradient statistics the agent ranks candidate batch sizes with: the smallest batch's at the "
                "epoch, or the running batch's, the artifact's (simulator.py Job.step: its last step's)");
  schema.choice("throughput", "measured", {"measured", "fitted"},
                "throughput the speedup function predicts and a job picks its batch by: the measured tables (an "
                "oracle), or the artifact's model fitted to each job's own runs (goodput.py fit_perf_params; "
                "pollux_perf.hpp), its batch re-picked every round and epoch");
  schema.integer("max_job_nodes", 16, "nodes one job may span (the artifact's repair: 16)").range(1, 1 << 20);
  schema.file("applications",
              "per-application settings, application,max_local_bsz,fixed_batch_size,max_replicas "
              "(data/traces/pollux-osdi21/applications.csv: the artifact's)");
  return schema;
}

std::unique_ptr<JobScheduler> make_pollux_scheduler(const SchedulerContext& context) {
  return std::make_unique<PolluxScheduler>(context);
}

}  // namespace dnnsim
