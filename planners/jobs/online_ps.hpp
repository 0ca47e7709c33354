// Online worker/PS scheduling with locality, -like: Yu, Liu, Wu, Ji, Bentley, "Toward Efficient
// Online Scheduling for Distributed Machine Learning Systems" (IEEE TNSE; arXiv 2108.02917). Only
// the abstract was available: the formulation is papers-cluster.md §4's reconstruction ([D]).
//
// At every arrival and completion, each of the first `window` queued jobs gets candidate schedules
// s — a (workers, PSs) choice on concrete servers — and a "wait" schedule:
//   co-located   all w workers and k PSs on one server h (the `colocated_servers` best-fit servers
//                that can hold them: fewest free GPUs, then lowest index), push/pull over its bus;
//   distributed  the workers where the placement policy puts them, the PSs by
//                place_parameter_servers (parameter_server.hpp), push/pull over the NICs;
//   wait         JCT = T_wait + R / rate at its requested GPUs (T_wait: the earliest oracle end of
//                a running job), as in SMD-like (smd.hpp).
// Each schedule's cost is its JCT, R / rate(placement) — the locality enters through the
// placement's push/pull time. Binary z_{i,s}, per-server packing rows for GPUs and cores:
//   min Σ cost_{i,s} z_{i,s}   s.t.  Σ_s z_{i,s} ≥ 1 (covering, per job),
//                                    Σ_{i,s} use_{i,s}(h, r) z_{i,s} ≤ free(h, r) (packing), 0 ≤ z ≤ 1.
// The LP relaxation is solved with COIN-OR Clp; randomized rounding (Raghavan–Thompson): each job
// draws a schedule with probability z*_{i,s}; repair, in queue order: a draw that no longer fits the
// residual capacity is replaced by the job's other schedules that fit, most LP weight first (ties:
// cheaper), else wait. `rounds` draws (seeded), the cheapest kept. Non-preemptive.
// Options: window (16), colocated_servers (4), rounds (8).
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "planners/jobs/job_scheduler.hpp"

namespace dnnsim {

// One schedule of one job: its cost and what it takes from each packing row.
struct PackingOption {
  double cost = 0.0;
  std::vector<std::pair<int, double>> use;  // (row, amount)
};

// z* per job per option: the covering LP above (every job needs an option with no use, so it is
// always feasible).
[[nodiscard]] std::vector<std::vector<double>> solve_packing_covering_lp(
    const std::vector<std::vector<PackingOption>>& jobs, const std::vector<double>& capacity);

struct RoundedChoice {
  std::vector<int> choice;  // per job
  double cost = 0.0;
};

// Randomized rounding with repair, `rounds` draws from `seed`, the cheapest kept. Option 0 of every
// job must be its fallback with no use.
[[nodiscard]] RoundedChoice round_with_repair(const std::vector<std::vector<PackingOption>>& jobs,
                                              const std::vector<double>& capacity,
                                              const std::vector<std::vector<double>>& lp, int rounds,
                                              std::uint64_t seed);

[[nodiscard]] OptionSchema online_ps_options();
[[nodiscard]] std::unique_ptr<JobScheduler> make_online_ps_scheduler(const SchedulerContext& context);

}  // namespace dnnsim
