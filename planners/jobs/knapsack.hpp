// Multiple-choice multi-dimensional knapsack, solved exactly as a MILP with COIN-OR Cbc: groups of
// options, exactly one option per group, each option with a cost and a use of every resource;
// minimise the total cost subject to Σ use ≤ capacity per resource. SMD's inner problem (Yu et al.,
// INFOCOM'21, papers-cluster.md §5: "multi-dimensional knapsack"), one group per job, its options
// the job's (workers, PSs) choices and "wait".
//   min Σ_{g,o} cost_{g,o} z_{g,o}   s.t.  Σ_o z_{g,o} = 1  ∀g,   Σ_{g,o} use_{g,o,r} z_{g,o} ≤ C_r  ∀r,   z ∈ {0,1}.
#pragma once

#include <optional>
#include <vector>

namespace dnnsim {

struct KnapsackOption {
  double cost = 0.0;
  std::vector<double> use;  // one entry per resource
};

struct KnapsackSolution {
  std::vector<int> choice;  // per group, the index of its option
  double cost = 0.0;
  bool optimal = false;  // false: the time limit stopped the search (best found so far)
};

// nullopt when no choice fits (no group may stay empty). `time_limit_s` bounds Cbc's search.
[[nodiscard]] std::optional<KnapsackSolution> solve_multiple_choice_knapsack(
    const std::vector<std::vector<KnapsackOption>>& groups, const std::vector<double>& capacity, double time_limit_s);

}  // namespace dnnsim
