// SMD-like scheduling of parameter-server jobs: Yu, Wu, Ji, Liu, "A Sum-of-Ratios
// Multi-Dimensional-Knapsack Decomposition for DNN Resource Scheduling", INFOCOM 2021
// (arXiv 2105.13855). Only the abstract was available: the model and the algorithm below are the
// reconstruction of docs/research/papers-cluster.md §5 (marked [D] there), hence "-like".
//
// Job i's completion is a ratio, remaining work over throughput: with candidate c = (w workers,
// k PSs), JCT_{i,c} = n_{i,c} / d_{i,c} with n = R_i (iterations left) and d = 1 / T_iter(w, k)
// (the layered push/pull recursion, parameter_server.hpp). Online, a job may also wait: its "wait"
// option has n = R_i + T_wait·d̄, d = d̄ (d̄ its rate at the GPUs it asked for, T_wait the earliest
// oracle completion of a running job, when GPUs next free up), i.e. JCT = T_wait + R_i / d̄.
// Objective: min Σ_i N_i(z) / D_i(z) over the choices z (one option per job), subject to the free
// GPUs and CPU cores — a sum of ratios over a multi-dimensional knapsack.
//
// Two solvers (option `parametric`):
//   exact (0, default)  the candidates are enumerated, so each option's ratio n/d is a number and
//                       Σ N/D is linear in the choice: one multiple-choice knapsack with costs n/d
//                       (Cbc, planners/jobs/knapsack.hpp) is the exact optimum.
//   parametric (1)      the paper's outer loop, needed there because (w, k) sit inside the ratios:
//                       Jong's transformation of sum-of-ratios problems ("Dinkelbach-style"): for
//                       multipliers (β, u) solve the knapsack
//                         min_z Σ_i u_i · (N_i(z) − β_i · D_i(z))
//                       then set β_i = N_i(z)/D_i(z) and u_i = 1/D_i(z) at its solution; stop when
//                       no choice improves it or after `iterations` rounds, keeping the best Σ N/D
//                       seen. On discrete options this Newton-like step is local: on the unit test's
//                       3-job instance it cycles, its best 489.3 where the optimum is 475 (+3%).
// The parametric loop starts from every job at the largest candidate that fits, in queue order.
//
// Candidates per job: w ∈ {1, 2, 4, …} ∪ {W_i} up to the GPUs it asked for, and
// k ∈ {⌈w/4⌉, ⌈w/2⌉, w} ∪ {its default} (ring all-reduce jobs: k = 0). Time slots, as in the
// paper: at every arrival and completion the first `window` queued jobs are placed on what is free
// (running jobs keep theirs); every `slot_s` the running jobs join the decision too, their option 0
// being "keep the current placement" (priced at its current rate), and those given another
// (w, k) are preempted and restarted on it (the restart cost is the simulator's). When waiting is
// an option, T_wait is the earliest of the next oracle completion and the next slot. Chosen jobs
// are placed in queue order through the placement policy, their PSs by place_parameter_servers;
// one that no longer fits (fragmentation) waits.
// Options: window (default 16), slot_s (600; 0: no slots, never preempts), parametric (0),
// iterations (20), time_limit_s (Cbc's limit per knapsack, 1 s; the best choice found so far is
// used when it stops the search).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "planners/jobs/job_scheduler.hpp"
#include "planners/jobs/knapsack.hpp"

namespace dnnsim {

// One job's options as the outer loop sees them: a ratio n/d and the resources it takes.
struct RatioOption {
  double n = 0.0, d = 1.0;
  std::vector<double> use;  // GPUs, CPU cores
};

struct SumOfRatiosResult {
  std::vector<int> choice;  // per job, its option
  double objective = 0.0;   // Σ n/d at the choice
  int rounds = 0;
};

// The exact knapsack on explicit options (nullopt: Cbc found no feasible choice in time).
[[nodiscard]] std::optional<SumOfRatiosResult> exact_sum_of_ratios(const std::vector<std::vector<RatioOption>>& jobs,
                                                                   const std::vector<double>& capacity,
                                                                   double time_limit_s);

// The parametric loop above on explicit options; `start` is the initial choice (must fit).
[[nodiscard]] SumOfRatiosResult minimise_sum_of_ratios(const std::vector<std::vector<RatioOption>>& jobs,
                                                       const std::vector<double>& capacity, std::vector<int> start,
                                                       int max_rounds, double time_limit_s);

[[nodiscard]] OptionSchema smd_options();
[[nodiscard]] std::unique_ptr<JobScheduler> make_smd_scheduler(const SchedulerContext& context);

}  // namespace dnnsim
