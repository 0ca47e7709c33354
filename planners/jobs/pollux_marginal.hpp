// Pollux's objective (pollux_search.hpp: the power mean of the jobs' scaled speedups, a moved job's
// speedup discounted by its restart factor) maximised without the genetic search, when its structure
// allows it or when the user asks for it (`search: marginal`, pollux.hpp):
//   uncontended  the cluster has room for every job's best allocation on its own: that is the optimum
//                (the power mean rises with each argument), placed best-fit;
//   marginal     otherwise, the GPUs are handed out by marginal gain — the greedy for a separable
//                objective under one capacity (Ibaraki & Katoh, "Resource Allocation Problems", MIT
//                Press 1988, ch. 4: exact when each job's utility is concave in its GPUs) on each job's
//                upper hull: from its current count it jumps to the count of highest utility gained
//                per GPU, the utility being its summand of the power mean (p < 0: −(s + 10⁻³)^p,
//                p > 0: (s + 10⁻³)^p, p = 0: log s), so the jump over a dip — a node boundary, the
//                restart factor of leaving the current allocation — is taken when it pays on average.
// Counts become rows on the fewest nodes (replicas per node = the nodes' GPUs), a kept allocation
// stays where it is, and the placement gives capacity in job order, best fit first, at most one
// distributed job per node (the GA's repair rules). Not the artifact's search, hence its own option:
// the artifact runs a GA of 100 × 100 whose cost grows with jobs × population × generations, which a
// Philly-sized cluster (hundreds of jobs, 620 nodes) cannot afford every 60 s round.
#pragma once

#include <optional>

#include "planners/jobs/pollux_search.hpp"

namespace dnnsim {

// The optimum when every job's best allocation fits (each keeps its allocation or takes the replicas
// that maximise its speedup, on the fewest nodes, restart factor applied); nothing when they do not
// all fit or the best-fit placement fails.
[[nodiscard]] std::optional<PolluxAllocation> pollux_uncontended(const PolluxProblem& problem);

// The marginal-gain allocation of the cluster's GPUs (above), placed in job order; a job whose count
// does not fit whole after the placement of those before it takes what room is left (at most
// max_job_nodes nodes), or waits.
[[nodiscard]] PolluxAllocation pollux_marginal(const PolluxProblem& problem);

}  // namespace dnnsim
