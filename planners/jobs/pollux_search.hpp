// The allocation search of the Pollux-like scheduler (pollux.hpp), -like reconstruction of Qiao et al.,
// OSDI'21 §4.2 from the artifact's simulator/pollux.py (Problem, _crossover, _mutation, _repair):
// a genetic algorithm over allocations — each job's replicas per node — maximising the power mean
// of the jobs' speedups. Allocations are stored sparsely (per job, the nodes it uses) so that a round
// costs O(jobs × their nodes + nodes) per individual, not O(jobs × nodes): a Philly-sized cluster has
// hundreds of nodes. Pure; tested on hand-built problems (tests/unit/planners/pollux_test.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "models/common/random.hpp"

namespace dnnsim {

// One job's allocation: (node, replicas) sorted by node, no zero counts.
using PolluxRow = std::vector<std::pair<int, int>>;
// An allocation: per job, its row.
struct PolluxAllocation {
  std::vector<PolluxRow> rows;
  friend bool operator==(const PolluxAllocation&, const PolluxAllocation&) = default;
};

// One round's problem: jobs in priority order (the repair gives capacity in this order), nodes, the
// current allocation, each job's bounds and restart factor, and its speedup function.
struct PolluxProblem {
  int jobs = 0;
  std::vector<int> capacity;  // GPUs per node
  int total_gpus = 0;
  int max_job_nodes = 16;
  PolluxAllocation current;
  std::vector<int> max_replicas;  // per job
  std::vector<double> factor;     // per job: what a change of its allocation multiplies its speedup by
  // speedup(job, nodes, replicas): goodput there over goodput at the fair share (cheap: the goodput
  // model memoises its rates across rounds).
  std::function<double(int job, int nodes, int replicas)> speedup;
  double fairness = -1.0;  // p of the power mean

  [[nodiscard]] int nodes() const { return static_cast<int>(capacity.size()); }
  // A job's speedup under `row`, scaled so that one node's share of the cluster is about 1 (pollux.py:
  // × dominant share × nodes), the restart factor applied when `row` is not its current allocation.
  [[nodiscard]] double scaled(int job, const std::vector<std::pair<int, int>>& row) const;
  // The same for a row of `replicas` on `used` nodes, `moved` when it is not the current one.
  [[nodiscard]] double scaled(int job, int used, int replicas, bool moved) const;
  // The power mean of the scaled speedups (+10⁻³ each; p = 0: geometric) — the GA's fitness.
  [[nodiscard]] double fitness(const PolluxAllocation& allocation) const;
  // The cluster utility, NSGA-II's second objective in the artifact (pollux.py get_cluster_utilities):
  // the jobs' speedups (unscaled, no restart factor) summed over the GPUs of the nodes in use — each
  // job's speedup per replica weighted by its share of those GPUs.
  [[nodiscard]] double utility(const PolluxAllocation& allocation) const;

 private:
  // A job's summand of the power mean under `row`: it depends on the row's node and replica counts and
  // on whether the row is the current one only, so it is memoised by those (the same arithmetic, once).
  [[nodiscard]] double summand(int job, const std::vector<std::pair<int, int>>& row) const;

  mutable std::vector<std::vector<double>> terms_;  // per job, [(nodes × 65 + replicas) × 2 + moved]; NaN: not yet
};

inline constexpr double kPolluxFloor = 1e-3;  // pollux.py: speedups + 1e-3 in the power mean

// The replicas of a row.
[[nodiscard]] int replicas_of(const PolluxRow& row);
// Sorts a row by node and drops zero counts (most rows already are: then nothing to do).
void normalise(PolluxRow& row);

struct PolluxSearchOptions {
  int population = 100;
  int generations = 100;
  int patience = 10;
  // Selection and survival: false, by the fitness alone (elitist); true, NSGA-II's on (fitness, utility)
  // — Deb et al., IEEE TEC 6(2) 2002, as pymoo 0.4's NSGA2 the artifact runs: survival by
  // non-dominated fronts then crowding distance, binary tournaments by domination then crowding, and
  // run() returns the first front only (pymoo's result.X, the next round's seeds).
  bool nsga2 = false;
};

// How mutation and repair act where the artifact's numpy code and dnnsim's first reading of it differ
// (pollux.py, osdi21-artifact c793c70); true: the artifact's.
struct PolluxOperators {
  // Mutation step (3), which entries are raised. false: each job on each node with room with probability
  // one over those nodes, and on each node with room it uses with one over those (about one raise per
  // job). true, pollux.py _mutation: `mask1.sum(axis=1)` and `mask2.sum(axis=1)` sum over the jobs (axis 1
  // of pop × jobs × nodes), so each job on each node with room with probability one over the jobs that
  // fit there, and each job on a node with room it uses with one over the jobs on that node (about one
  // or two raises per node with room, whichever job).
  bool raise_per_node = true;
  // Repair step (1). false: a distributed job loses a node an earlier distributed job holds. true,
  // pollux.py _repair: `mask.cumsum(axis=1) > 1` over the jobs in order, so on a node the second
  // distributed job and every job after it, distributed or not, lose their replicas there.
  bool zero_after_second = true;
};

class PolluxSearch {
 public:
  PolluxSearch(const PolluxProblem& problem, SplitMix64& rng, PolluxOperators operators = {})
      : pb_(problem), rng_(rng), operators_(operators), scratch_(static_cast<std::size_t>(problem.nodes()), 0) {}
  // The GA from `seeds` (repaired first; the current allocation should be among them); the final
  // population, best first.
  [[nodiscard]] std::vector<PolluxAllocation> run(std::vector<PolluxAllocation> seeds,
                                                  const PolluxSearchOptions& options);
  // pollux.py _repair: at most one distributed job per node (PolluxOperators::zero_after_second); each
  // job at most its replicas and max_job_nodes nodes (its nodes in a random order); node capacity, jobs
  // in priority order.
  void repair(PolluxAllocation& allocation);
  // pollux.py _mutation: (1) a job's row back to the current allocation (probability 0.1), (2) a
  // job's entries zeroed (0.1 each, for 0.1 of the jobs), (3) entries on nodes with room raised to a
  // random count up to the node's GPUs (which entries: PolluxOperators::raise_per_node).
  void mutate(PolluxAllocation& allocation);

 private:
  int draw(int bound) { return static_cast<int>(rng_.next() % static_cast<std::uint64_t>(bound)); }
  // How many of n independent trials with probability p succeed (inversion; n·p is about 1 here);
  // `none` = (1 − p)^n, the probability of 0, computed once by the caller for all rows.
  int binomial(int n, double p, double none);
  [[nodiscard]] static std::uint64_t hash(const PolluxAllocation& allocation);
  // Marks `node` in scratch_ as touched (to be reset to 0 after the use).
  int& touch(int node);
  void reset_touched();
  // The i-th node (0-based) with room, given the sorted nodes without room (full_): the nodes are
  // judged sparsely, from the rows, not by a walk over every node of a Philly-sized cluster.
  [[nodiscard]] int roomy_node(int i) const;

  // Mutation step (3) for raise_per_node: the (job, node) entries to raise, given scratch_ (GPUs used
  // per node) and full_.
  void pick_raises_per_node(PolluxAllocation& allocation);
  // pollux.py _mutation's `randint(states, max_replicas + 1)`: the row's count on `node` (0 if absent, then
  // inserted in node order) to one uniform from it to the node's GPUs.
  void raise_entry(PolluxRow& row, int node);

  const PolluxProblem& pb_;
  SplitMix64& rng_;
  PolluxOperators operators_;
  // Per node, 0 between uses; only the nodes in touched_ are non-zero during one.
  std::vector<int> scratch_;
  std::vector<int> touched_, full_, picked_;
  std::vector<std::pair<int, int>> raises_;  // (job, node), raise_per_node
  std::vector<std::vector<int>> on_node_;    // per node, the jobs on it (raise_per_node; only touched_ nodes)
  std::vector<int> cutoff_;                  // per node, the job order from which entries are zeroed
  std::vector<char> distributed_;
};

}  // namespace dnnsim
