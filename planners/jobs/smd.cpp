#include "planners/jobs/smd.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "planners/jobs/job_speed.hpp"
#include "planners/jobs/parameter_server.hpp"

namespace dnnsim {

std::optional<SumOfRatiosResult> exact_sum_of_ratios(const std::vector<std::vector<RatioOption>>& jobs,
                                                     const std::vector<double>& capacity, double time_limit_s) {
  std::vector<std::vector<KnapsackOption>> groups;
  for (const auto& options : jobs) {
    std::vector<KnapsackOption> group;
    for (const RatioOption& o : options) group.push_back(KnapsackOption{o.n / o.d, o.use});
    groups.push_back(std::move(group));
  }
  const auto solution = solve_multiple_choice_knapsack(groups, capacity, time_limit_s);
  if (!solution) return std::nullopt;
  return SumOfRatiosResult{solution->choice, solution->cost, 1};
}

SumOfRatiosResult minimise_sum_of_ratios(const std::vector<std::vector<RatioOption>>& jobs,
                                         const std::vector<double>& capacity, std::vector<int> start, int max_rounds,
                                         double time_limit_s) {
  auto objective = [&](const std::vector<int>& choice) {
    double total = 0.0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const RatioOption& o = jobs[i][static_cast<std::size_t>(choice[i])];
      total += o.n / o.d;
    }
    return total;
  };
  SumOfRatiosResult best{start, objective(start), 0};
  std::vector<int> choice = std::move(start);
  for (int round = 1; round <= max_rounds; ++round) {
    std::vector<std::vector<KnapsackOption>> groups;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const RatioOption& current = jobs[i][static_cast<std::size_t>(choice[i])];
      const double beta = current.n / current.d, u = 1.0 / current.d;
      std::vector<KnapsackOption> options;
      for (const RatioOption& o : jobs[i]) options.push_back(KnapsackOption{u * (o.n - beta * o.d), o.use});
      groups.push_back(std::move(options));
    }
    const auto solution = solve_multiple_choice_knapsack(groups, capacity, time_limit_s);
    best.rounds = round;
    // The current choice scores 0 in its own knapsack: no strictly better one means a fixed point.
    if (!solution || solution->choice == choice || solution->cost > -1e-9) break;
    choice = solution->choice;
    if (const double value = objective(choice); value < best.objective) {
      best.objective = value;
      best.choice = choice;
    }
  }
  return best;
}

namespace {

struct Candidate {
  int w = 0, k = 0;  // 0 workers: the job's option 0 (keep running / wait)
};

class SmdScheduler final : public JobScheduler {
 public:
  explicit SmdScheduler(const SchedulerContext& ctx)
      : placement_(&ctx.placement),
        speed_(&ctx.speed),
        window_(static_cast<std::size_t>(ctx.options.integer("window"))),
        parametric_(ctx.options.flag("parametric")),
        rounds_(static_cast<int>(ctx.options.integer("iterations"))),
        time_limit_(ctx.options.quantity<Seconds>("time_limit").value()),
        slot_(ctx.options.quantity<Seconds>("slot")) {}

  std::optional<Seconds> round() const override {
    return slot_.value() > 0 ? std::optional<Seconds>(slot_) : std::nullopt;
  }

  std::vector<Decision> decide(const ClusterState& state, SchedulerEvent event) override {
    const bool replan = event == SchedulerEvent::round;
    std::vector<const JobView*> window;  // running jobs (when replanning), then the first queued ones
    double gpus = state.total_free();
    double cpus = std::accumulate(state.free_cpus.begin(), state.free_cpus.end(), 0.0);
    if (replan)
      for (const JobView& job : state.running) {
        window.push_back(&job);
        gpus += job.placement->gpus();
        cpus += job.placement->parameter_servers() * job.record->ps_cores;
      }
    for (std::size_t i = 0; i < state.queued.size() && i < window_; ++i) window.push_back(&state.queued[i]);
    if (window.empty() || (state.queued.empty() && !replan)) return {};

    std::vector<std::vector<RatioOption>> options(window.size());
    std::vector<std::vector<Candidate>> candidates(window.size());
    for (std::size_t i = 0; i < window.size(); ++i) {
      const JobView& job = *window[i];
      const JobRecord& record = *job.record;
      for (const auto& [w, k] : worker_ps_choices(record, job.gpus, static_cast<int>(gpus))) {
        if (static_cast<double>(k) * record.ps_cores > cpus) continue;
        candidates[i].push_back(Candidate{w, k});
        options[i].push_back(RatioOption{job.remaining_iterations(),
                                         nominal_rate(*speed_, state.servers, record, w, k),
                                         {static_cast<double>(w), static_cast<double>(k * record.ps_cores)}});
      }
    }
    // Option 0: a running job keeps its placement; a queued one waits (waiting_price), at most until the
    // next slot.
    const WaitingPrice waiting = waiting_price(*speed_, state, window);
    const double wait = slot_.value() > 0 ? std::min(waiting.wait, slot_.value()) : waiting.wait;
    std::vector<int> start(window.size(), 0);
    double left_gpus = gpus, left_cpus = cpus;
    for (std::size_t i = 0; i < window.size(); ++i) {
      const JobView& job = *window[i];
      if (job.placement) {
        const double cores = job.placement->parameter_servers() * job.record->ps_cores;
        options[i].insert(options[i].begin(),
                          RatioOption{job.remaining_iterations(),
                                      speed_->iterations_per_second(*job.record, *job.placement, state.servers),
                                      {static_cast<double>(job.placement->gpus()), cores}});
        left_gpus -= job.placement->gpus();
        left_cpus -= cores;
      } else {
        options[i].insert(
            options[i].begin(),
            RatioOption{job.remaining_iterations() + wait * waiting.rate[i], waiting.rate[i], {0.0, 0.0}});
      }
      candidates[i].insert(candidates[i].begin(), Candidate{});
    }
    for (std::size_t i = 0; i < window.size(); ++i) {
      if (window[i]->placement) continue;
      for (std::size_t o = options[i].size(); o-- > 1;) {  // the largest candidate that fits, in queue order
        const RatioOption& option = options[i][o];
        if (option.use[0] <= left_gpus && option.use[1] <= left_cpus) {
          start[i] = static_cast<int>(o);
          left_gpus -= option.use[0];
          left_cpus -= option.use[1];
          break;
        }
      }
    }
    SumOfRatiosResult chosen{start, 0.0, 0};
    if (parametric_) {
      chosen = minimise_sum_of_ratios(options, {gpus, cpus}, start, rounds_, time_limit_);
    } else if (auto exact = exact_sum_of_ratios(options, {gpus, cpus}, time_limit_)) {
      chosen = std::move(*exact);
    }

    // Running jobs that change are preempted first, giving their GPUs and cores back; then every
    // chosen job is started in window order on what is free (a preempted one that no longer fits
    // waits in the queue).
    std::vector<Decision> decisions;
    std::vector<int> free = state.free_gpus, free_cpus = state.free_cpus;
    for (std::size_t i = 0; i < window.size(); ++i) {
      if (!window[i]->placement || chosen.choice[i] == 0) continue;
      decisions.push_back(Decision{Decision::Kind::preempt, window[i]->id, {}});
      for (const auto& [server, n] : window[i]->placement->slices) free[server] += n;
      for (const auto& [server, n] : window[i]->placement->ps) free_cpus[server] += n * window[i]->record->ps_cores;
    }
    for (std::size_t i = 0; i < window.size(); ++i) {
      const Candidate c = candidates[i][static_cast<std::size_t>(chosen.choice[i])];
      if (c.w == 0) continue;
      JobView sized = *window[i];
      sized.gpus = c.w;
      auto where = placement_->place(state, free, sized);
      if (where && c.k > 0) {
        if (auto ps = place_parameter_servers(free_cpus, *where, c.k, window[i]->record->ps_cores)) {
          where->ps = std::move(*ps);
          for (const auto& [server, n] : where->ps) free_cpus[server] -= n * window[i]->record->ps_cores;
        } else {
          where.reset();
        }
      }
      if (!where) continue;
      for (const auto& [server, n] : where->slices) free[server] -= n;
      decisions.push_back(Decision{Decision::Kind::start, window[i]->id, std::move(*where)});
    }
    return decisions;
  }

 private:
  const PlacementPolicy* placement_;
  const JobSpeedModel* speed_;
  std::size_t window_;
  bool parametric_;
  int rounds_;
  double time_limit_;
  Seconds slot_;
};

}  // namespace

OptionSchema smd_options() {
  OptionSchema schema;
  schema.integer("window", 16, "queued jobs considered per decision").range(1, 1000000);
  schema.boolean("parametric", false, "the paper's parametric outer loop over the sum-of-ratios objective");
  schema.integer("iterations", 20, "rounds of the parametric loop at most").range(1, 10000);
  schema.quantity<Seconds>("time_limit", Seconds(1), "Cbc's time limit per knapsack").range(1e-3, 1e6);
  schema.quantity<Seconds>("slot", Seconds(600), "running jobs re-decided every slot; 0: never").at_least(0);
  return schema;
}

std::unique_ptr<JobScheduler> make_smd_scheduler(const SchedulerContext& context) {
  return std::make_unique<SmdScheduler>(context);
}

}  // namespace dnnsim
