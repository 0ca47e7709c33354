#include "planners/jobs/online_ps.hpp"

#include <ClpSimplex.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>

#include "planners/jobs/job_speed.hpp"
#include "planners/jobs/parameter_server.hpp"

namespace dnnsim {

std::vector<std::vector<double>> solve_packing_covering_lp(const std::vector<std::vector<PackingOption>>& jobs,
                                                           const std::vector<double>& capacity) {
  int columns = 0;
  for (const auto& options : jobs) columns += static_cast<int>(options.size());
  ClpSimplex lp;
  lp.setLogLevel(0);
  lp.resize(0, columns);
  std::vector<std::vector<std::pair<int, double>>> rows(capacity.size());  // packing rows: (column, use)
  int column = 0;
  for (const auto& options : jobs) {
    std::vector<int> covering;
    for (const PackingOption& option : options) {
      lp.setObjectiveCoefficient(column, option.cost);
      lp.setColumnBounds(column, 0.0, 1.0);
      for (const auto& [row, amount] : option.use) rows[static_cast<std::size_t>(row)].emplace_back(column, amount);
      covering.push_back(column++);
    }
    const std::vector<double> ones(covering.size(), 1.0);
    lp.addRow(static_cast<int>(covering.size()), covering.data(), ones.data(), 1.0, COIN_DBL_MAX);
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].empty()) continue;
    std::vector<int> index;
    std::vector<double> value;
    for (const auto& [c, amount] : rows[r]) {
      index.push_back(c);
      value.push_back(amount);
    }
    lp.addRow(static_cast<int>(index.size()), index.data(), value.data(), -COIN_DBL_MAX, capacity[r]);
  }
  lp.primal();
  if (!lp.isProvenOptimal())
    throw std::runtime_error("the packing-covering LP has no optimum (a bug: waiting is always feasible)");
  const double* solution = lp.primalColumnSolution();
  std::vector<std::vector<double>> z;
  column = 0;
  for (const auto& options : jobs) {
    std::vector<double> weights;
    for (std::size_t o = 0; o < options.size(); ++o) weights.push_back(std::clamp(solution[column++], 0.0, 1.0));
    z.push_back(std::move(weights));
  }
  return z;
}

RoundedChoice round_with_repair(const std::vector<std::vector<PackingOption>>& jobs,
                                const std::vector<double>& capacity, const std::vector<std::vector<double>>& lp,
                                int rounds, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  RoundedChoice best{std::vector<int>(jobs.size(), 0), std::numeric_limits<double>::infinity()};
  for (int round = 0; round < rounds; ++round) {
    std::vector<double> left = capacity;
    RoundedChoice draw{std::vector<int>(jobs.size(), 0), 0.0};
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const auto& options = jobs[i];
      const auto& z = lp[i];
      const double total = std::accumulate(z.begin(), z.end(), 0.0);
      double target = uniform(random) * total;
      std::size_t drawn = 0;
      for (std::size_t o = 0; o < options.size(); ++o) {
        drawn = o;
        if ((target -= z[o]) < 0) break;
      }
      // Repair: the draw, then the job's other schedules by LP weight (ties: cheaper), then option 0.
      std::vector<std::size_t> order(options.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if ((a == drawn) != (b == drawn)) return a == drawn;
        if ((a == 0) != (b == 0)) return b == 0;
        if (z[a] != z[b]) return z[a] > z[b];
        return options[a].cost < options[b].cost;
      });
      for (std::size_t o : order) {
        const bool fits = std::all_of(options[o].use.begin(), options[o].use.end(), [&](const auto& use) {
          return use.second <= left[static_cast<std::size_t>(use.first)] + 1e-9;
        });
        if (!fits) continue;
        for (const auto& [row, amount] : options[o].use) left[static_cast<std::size_t>(row)] -= amount;
        draw.choice[i] = static_cast<int>(o);
        draw.cost += options[o].cost;
        break;
      }
    }
    if (draw.cost < best.cost) best = std::move(draw);
  }
  return best;
}

namespace {

class OnlinePsScheduler final : public JobScheduler {
 public:
  explicit OnlinePsScheduler(const SchedulerContext& ctx)
      : placement_(&ctx.placement),
        speed_(&ctx.speed),
        seed_(ctx.seed),
        window_(static_cast<std::size_t>(ctx.options.integer("window"))),
        colocated_servers_(static_cast<std::size_t>(ctx.options.integer("colocated_servers"))),
        rounds_(static_cast<int>(ctx.options.integer("rounds"))) {}

  std::vector<Decision> decide(const ClusterState& state, SchedulerEvent) override {
    if (state.queued.empty()) return {};
    ++calls_;
    const std::size_t servers = state.servers.size();
    std::vector<double> capacity(2 * servers);  // rows 2h: GPUs of server h, 2h + 1: its cores
    for (std::size_t h = 0; h < servers; ++h) {
      capacity[2 * h] = state.free_gpus[h];
      capacity[2 * h + 1] = state.free_cpus[h];
    }

    std::vector<const JobView*> window;
    for (std::size_t i = 0; i < state.queued.size() && i < window_; ++i) window.push_back(&state.queued[i]);
    std::vector<std::vector<PackingOption>> options(window.size());
    std::vector<std::vector<Placement>> schedules(window.size());
    for (std::size_t i = 0; i < window.size(); ++i) {
      const JobView& job = *window[i];
      const JobRecord& record = *job.record;
      options[i].push_back(PackingOption{});  // wait: priced below
      schedules[i].emplace_back();
      auto add = [&](const Placement& placement) {
        if (std::find(schedules[i].begin(), schedules[i].end(), placement) != schedules[i].end()) return;
        PackingOption option{
            job.remaining_iterations() / speed_->iterations_per_second(record, placement, state.servers), {}};
        for (const auto& [server, n] : placement.slices) option.use.emplace_back(2 * server, n);
        for (const auto& [server, n] : placement.ps) option.use.emplace_back(2 * server + 1, n * record.ps_cores);
        options[i].push_back(std::move(option));
        schedules[i].push_back(placement);
      };
      for (const auto& [w, k] : worker_ps_choices(record, job.gpus, state.total_free())) {
        const int cores = k * record.ps_cores;
        std::vector<int> fit;
        for (std::size_t h = 0; h < servers; ++h)
          if (state.free_gpus[h] >= w && state.free_cpus[h] >= cores) fit.push_back(static_cast<int>(h));
        std::stable_sort(fit.begin(), fit.end(), [&](int a, int b) { return state.free_gpus[a] < state.free_gpus[b]; });
        for (std::size_t n = 0; n < fit.size() && n < colocated_servers_; ++n) {
          Placement colocated{{{fit[n], w}}, {}};
          if (k > 0) colocated.ps = {{fit[n], k}};
          add(colocated);
        }
        JobView sized = job;
        sized.gpus = w;
        auto distributed = placement_->place(state, state.free_gpus, sized);
        if (!distributed) continue;
        if (k > 0) {
          auto ps = place_parameter_servers(state.free_cpus, *distributed, k, record.ps_cores);
          if (!ps) continue;
          distributed->ps = std::move(*ps);
        }
        add(*distributed);
      }
    }
    const WaitingPrice waiting = waiting_price(*speed_, state, window);
    for (std::size_t i = 0; i < window.size(); ++i)
      options[i][0].cost = waiting.wait + window[i]->remaining_iterations() / waiting.rate[i];

    const auto lp = solve_packing_covering_lp(options, capacity);
    const RoundedChoice chosen =
        round_with_repair(options, capacity, lp, rounds_, seed_ * 0x9E3779B97F4A7C15ULL + calls_);
    std::vector<Decision> decisions;
    for (std::size_t i = 0; i < window.size(); ++i)
      if (chosen.choice[i] > 0)
        decisions.push_back(
            Decision{Decision::Kind::start, window[i]->id, schedules[i][static_cast<std::size_t>(chosen.choice[i])]});
    return decisions;
  }

 private:
  const PlacementPolicy* placement_;
  const JobSpeedModel* speed_;
  std::uint64_t seed_;
  std::size_t window_;
  std::size_t colocated_servers_;
  int rounds_;
  std::uint64_t calls_ = 0;
};

}  // namespace

OptionSchema online_ps_options() {
  OptionSchema schema;
  schema.integer("window", 16, "queued jobs considered per arrival").range(1, 1000000);
  schema.integer("colocated_servers", 4, "best-fit servers tried for a co-located schedule").range(0, 1000000);
  schema.integer("rounds", 8, "randomized-rounding draws, the cheapest kept").range(1, 1000000);
  return schema;
}

std::unique_ptr<JobScheduler> make_online_ps_scheduler(const SchedulerContext& context) {
  return std::make_unique<OnlinePsScheduler>(context);
}

}  // namespace dnnsim
