// `pollux`: Pollux's cluster scheduler, -like reconstruction of Qiao et al., "Pollux: Co-adaptive
// Cluster Scheduling for Goodput-Optimized Deep Learning", OSDI'21 §4 (PolluxSched), from its artifact
// (petuum/adaptdl, branch osdi21-artifact, simulator/pollux.py, speedup.py; docs/cluster.md "Pollux").
//   speedup     each job's SPEEDUP(nodes, replicas) = its goodput there (pollux_goodput.hpp: the
//               batch size re-picked for the allocation) over its goodput at the fair share
//               (⌈GPUs / jobs⌉ replicas on one node), at the job's current epoch (§4.1, eq. 6); a job
//               never run: the same, or with `unexplored: fair-share` r / fair share (the artifact's:
//               its agent has no fitted model yet); with `throughput: fitted` a job that has run is
//               predicted by the model fitted to the configurations it has run (pollux_perf.hpp, the
//               artifact's agent: simulator.py Job.update_params, speedup.py), not by the tables;
//   fitness     the power mean (Σ_j (s_j + 10⁻³)^p / J)^{1/p} of the speedups scaled by one node's
//               share of the cluster, p = `fairness` (−1 in the artifact; p = 1 the sum, 0 the
//               geometric mean, lower is fairer: §4.2, eq. 7); a job whose allocation changes has its
//               speedup multiplied by max(age − restarts·d, 0)/(age + d), d = `restart_delay`;
//   search      a genetic algorithm over allocation matrices (jobs × nodes, replicas per node),
//               seeded with the previous round's population: single-point crossover over jobs,
//               mutation (a row reset to the current allocation, elements zeroed, elements raised
//               where the node has room) and repair (at most one distributed job per node, at most
//               the job's replicas and `max_job_nodes` nodes, node capacity in job order), elitist
//               survival of `population` individuals for `generations` generations (§4.2; the
//               artifact runs pymoo's NSGA-II with the cluster utility as a second objective, which
//               only ranks and keeps individuals there: `selection: nsga2` does the same);
//   exploration a job may get at most twice the replicas it has run with (one before it ran), as the
//               artifact limits jobs whose throughput model is not fitted beyond those replicas;
//   rounds      every `round` (60 s): jobs whose allocation changes are checkpointed and restarted
//               there (preempt, then start); arrivals wait for the next round, as in the artifact;
//   agent       with `throughput: fitted` a job's batch is its agent's choice with the fitted model
//               (simulator.py Job.update_local_bsz; PolluxGoodput::chosen): when it starts, at each
//               epoch's end and at every round (adapted_curve), each configuration it enters observed.
//               Jobs are ordered by attained GPU-time, then arrival (the repair's capacity order).
// When the cluster has room for every job's best allocation, the search is exact without the GA:
// each job's speedup is maximised on its own (the power mean rises with each argument); with
// `uncontended: genetic` the GA searches such rounds too, as the artifact's (pollux.py optimize). With
// `search: marginal` a contended round is not searched by the GA but by marginal allocation of the
// GPUs (pollux_marginal.hpp), whose cost does not grow with population × generations.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "planners/jobs/job_scheduler.hpp"
#include "planners/jobs/pollux_goodput.hpp"

namespace dnnsim {

// Options: fairness, round, search, uncontended, population, generations, patience, selection, raise,
// repair, restart_delay, unexplored, batch_statistics, throughput, max_job_nodes, applications.
[[nodiscard]] OptionSchema pollux_options();
// The search's speedup(job, nodes, replicas): job j's rate there over its rate on one node with
// base_replicas[j] (the fair share, capped by what its batch allows); a job marked `unexplored`
// (never run, with `unexplored: fair-share`) replicas / fair instead — the artifact's agent has no fitted
// model for it, and pollux.py Problem.__init__ gives it lambda n, r: r / fair_replicas.
[[nodiscard]] std::function<double(int, int, int)> pollux_speedup_function(
    std::vector<std::function<double(int, int)>> rates, std::vector<int> base_replicas, std::vector<char> unexplored,
    int fair);
// @throw InputError (at the scheduler) when the speed model is not Pollux's tables.
[[nodiscard]] std::unique_ptr<JobScheduler> make_pollux_scheduler(const SchedulerContext& context);

}  // namespace dnnsim
