#include "planners/jobs/pollux_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_set>

namespace dnnsim {
namespace {

constexpr double kResetProbability = 0.1;  // pollux.py _mutation (1)
constexpr double kZeroProbability = 0.1;   // pollux.py _mutation (2), for the job and for each entry
constexpr int kReplicaSlots = 65;          // memo columns: replicas 0…64 (the artifact's cap)

using Row = PolluxRow;

}  // namespace

int replicas_of(const Row& row) {
  int r = 0;
  for (const auto& [node, count] : row) r += count;
  return r;
}

void normalise(Row& row) {
  bool clean = true;
  for (std::size_t k = 0; clean && k < row.size(); ++k)
    clean = row[k].second > 0 && (k == 0 || row[k - 1].first < row[k].first);
  if (clean) return;
  std::sort(row.begin(), row.end());
  row.erase(std::remove_if(row.begin(), row.end(), [](const auto& e) { return e.second <= 0; }), row.end());
}

double PolluxProblem::scaled(int job, const Row& row) const {
  return scaled(job, static_cast<int>(row.size()), replicas_of(row),
                row != current.rows[static_cast<std::size_t>(job)]);
}

double PolluxProblem::scaled(int job, int used, int replicas, bool moved) const {
  if (replicas == 0) return 0.0;
  double s = speedup(job, used, replicas);
  s *= static_cast<double>(nodes()) / total_gpus;
  if (moved) s *= factor[static_cast<std::size_t>(job)];
  return s;
}

double PolluxProblem::summand(int job, const Row& row) const {
  const double p = fairness;
  const auto term = [&] {
    const double v = scaled(job, row);
    return p == 0.0 ? std::log(std::max(v, kPolluxFloor)) : std::pow(v + kPolluxFloor, p);
  };
  const int replicas = replicas_of(row);
  const int used = static_cast<int>(row.size());
  if (replicas >= kReplicaSlots || used > max_job_nodes) return term();
  if (terms_.size() != static_cast<std::size_t>(jobs)) terms_.assign(static_cast<std::size_t>(jobs), {});
  auto& memo = terms_[static_cast<std::size_t>(job)];
  const bool moved = row != current.rows[static_cast<std::size_t>(job)];
  const auto at = static_cast<std::size_t>((used * kReplicaSlots + replicas) * 2 + (moved ? 1 : 0));
  if (memo.size() <= at) memo.resize(static_cast<std::size_t>((max_job_nodes + 1) * kReplicaSlots * 2), std::nan(""));
  if (std::isnan(memo[at])) memo[at] = term();
  return memo[at];
}

double PolluxProblem::fitness(const PolluxAllocation& allocation) const {
  const double p = fairness;
  double sum = 0.0;
  for (int j = 0; j < jobs; ++j) sum += summand(j, allocation.rows[static_cast<std::size_t>(j)]);
  const double mean = sum / std::max(1, jobs);
  return p == 0.0 ? std::exp(mean) : std::pow(mean, 1.0 / p);
}

double PolluxProblem::utility(const PolluxAllocation& allocation) const {
  double sum = 0.0;
  std::vector<char> used(capacity.size(), 0);
  for (int j = 0; j < jobs; ++j) {
    const Row& row = allocation.rows[static_cast<std::size_t>(j)];
    if (row.empty()) continue;
    sum += speedup(j, static_cast<int>(row.size()), replicas_of(row));
    for (const auto& [node, count] : row) used[static_cast<std::size_t>(node)] = 1;
  }
  int gpus = 0;
  for (std::size_t n = 0; n < used.size(); ++n) gpus += used[n] != 0 ? capacity[n] : 0;
  return gpus > 0 ? sum / gpus : 0.0;
}

namespace {

// An individual of the search: its objectives (both maximised), NSGA-II's front (0 the first) and
// crowding distance, and its allocation.
struct Scored {
  double fitness = 0, utility = 0;
  int front = 0;
  double crowding = 0;
  PolluxAllocation allocation;
};

bool dominates(const Scored& a, const Scored& b) {
  return a.fitness >= b.fitness && a.utility >= b.utility && (a.fitness > b.fitness || a.utility > b.utility);
}

// Crowding distance within one front (pymoo calc_crowding_distance): per objective, the gap between
// the neighbours over the objective's range, averaged over the two; the extremes infinite; a point
// whose objectives repeat an earlier one's gets 0 (pymoo filters duplicates out first).
void crowd(std::vector<Scored>& pool, const std::vector<std::size_t>& front) {
  std::vector<std::size_t> unique;
  for (const std::size_t i : front) {
    pool[i].crowding = 0.0;
    const bool repeat = std::any_of(unique.begin(), unique.end(), [&](std::size_t u) {
      return pool[u].fitness == pool[i].fitness && pool[u].utility == pool[i].utility;
    });
    if (!repeat) unique.push_back(i);
  }
  if (unique.size() <= 2) {
    for (const std::size_t i : unique) pool[i].crowding = std::numeric_limits<double>::infinity();
    return;
  }
  for (const auto objective : {&Scored::fitness, &Scored::utility}) {
    std::vector<std::size_t> order = unique;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return pool[a].*objective < pool[b].*objective; });
    const double range = pool[order.back()].*objective - pool[order.front()].*objective;
    pool[order.front()].crowding = pool[order.back()].crowding = std::numeric_limits<double>::infinity();
    if (range <= 0) continue;
    for (std::size_t k = 1; k + 1 < order.size(); ++k)
      pool[order[k]].crowding += (pool[order[k + 1]].*objective - pool[order[k - 1]].*objective) / range / 2;
  }
}

// NSGA-II survival: the pool sorted by front, then by crowding distance (larger first) within a front,
// cut to `size`. Fronts by repeated peeling: O(n²) per front on a pool of at most 2 × population.
void rank_and_crowd(std::vector<Scored>& pool, std::size_t size) {
  std::vector<std::size_t> left(pool.size());
  std::iota(left.begin(), left.end(), 0);
  for (int f = 0; !left.empty(); ++f) {
    std::vector<std::size_t> front, rest;
    for (const std::size_t i : left) {
      const bool dominated =
          std::any_of(left.begin(), left.end(), [&](std::size_t o) { return dominates(pool[o], pool[i]); });
      (dominated ? rest : front).push_back(i);
    }
    for (const std::size_t i : front) pool[i].front = f;
    crowd(pool, front);
    left = std::move(rest);
  }
  std::stable_sort(pool.begin(), pool.end(), [](const Scored& a, const Scored& b) {
    return a.front != b.front ? a.front < b.front : a.crowding > b.crowding;
  });
  if (pool.size() > size) pool.resize(size);
}

}  // namespace

std::uint64_t PolluxSearch::hash(const PolluxAllocation& allocation) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over (job, node, count)
  const auto mix = [&](std::uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  for (std::size_t j = 0; j < allocation.rows.size(); ++j) {
    mix(j);
    for (const auto& [node, count] : allocation.rows[j]) {
      mix(static_cast<std::uint64_t>(node) << 20);
      mix(static_cast<std::uint64_t>(count));
    }
  }
  return h;
}

int& PolluxSearch::touch(int node) {
  int& value = scratch_[static_cast<std::size_t>(node)];
  if (value == 0) touched_.push_back(node);
  return value;
}

void PolluxSearch::reset_touched() {
  for (const int node : touched_) scratch_[static_cast<std::size_t>(node)] = 0;
  touched_.clear();
}

int PolluxSearch::roomy_node(int i) const {
  // full_ is sorted and distinct, so full_[k] − k (the roomy nodes below full_[k]) does not decrease:
  // the i-th roomy node is i + the number of full nodes f with f − (f's index) ≤ i.
  std::size_t lo = 0, hi = full_.size();
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (full_[mid] - static_cast<int>(mid) <= i)
      lo = mid + 1;
    else
      hi = mid;
  }
  return i + static_cast<int>(lo);
}

int PolluxSearch::binomial(int n, double p, double none) {
  if (n <= 0 || p <= 0) return 0;
  if (p >= 1) return n;
  const double u = rng_.uniform();
  double probability = none, cumulative = probability;
  int k = 0;
  while (u > cumulative && k < n) {
    probability *= static_cast<double>(n - k) / (k + 1) * p / (1.0 - p);
    cumulative += probability;
    ++k;
  }
  return k;
}

std::vector<PolluxAllocation> PolluxSearch::run(std::vector<PolluxAllocation> seeds,
                                                const PolluxSearchOptions& options) {
  std::vector<Scored> pool;
  std::unordered_set<std::uint64_t> seen;  // hashes of the allocations met: membership only, never iterated
  const auto score = [&](PolluxAllocation&& a) {
    Scored s;
    s.fitness = pb_.fitness(a);
    if (options.nsga2) s.utility = pb_.utility(a);
    s.allocation = std::move(a);
    return s;
  };
  for (PolluxAllocation& a : seeds) {
    repair(a);
    if (seen.insert(hash(a)).second) pool.push_back(score(std::move(a)));
  }
  const auto size = static_cast<std::size_t>(options.population);
  const auto survive = [&] {
    if (options.nsga2) return rank_and_crowd(pool, size);
    std::stable_sort(pool.begin(), pool.end(), [](const Scored& a, const Scored& b) { return a.fitness > b.fitness; });
    if (pool.size() > size) pool.resize(size);
  };
  const auto tournament = [&]() -> const PolluxAllocation& {
    const Scored& a = pool[static_cast<std::size_t>(draw(static_cast<int>(pool.size())))];
    const Scored& b = pool[static_cast<std::size_t>(draw(static_cast<int>(pool.size())))];
    if (!options.nsga2) return a.fitness >= b.fitness ? a.allocation : b.allocation;
    // pymoo binary_tournament: domination, then crowding (larger), then a coin.
    if (dominates(a, b)) return a.allocation;
    if (dominates(b, a)) return b.allocation;
    if (a.crowding != b.crowding) return a.crowding > b.crowding ? a.allocation : b.allocation;
    return draw(2) == 0 ? a.allocation : b.allocation;
  };
  const auto best_fitness = [&] {
    double best = pool.front().fitness;
    for (const Scored& s : pool) best = std::max(best, s.fitness);
    return best;
  };
  survive();
  double best = best_fitness();
  for (int g = 0, stale = 0; g < options.generations && stale < options.patience; ++g) {
    std::vector<Scored> offspring;
    // Children already met are dropped (pymoo eliminates duplicates): a small space runs dry.
    for (int mating = 0; static_cast<int>(offspring.size()) < options.population && mating < 2 * options.population;
         ++mating) {
      const PolluxAllocation& a = tournament();
      const PolluxAllocation& b = tournament();
      // pollux.py _crossover: one point over the jobs.
      const auto cut = static_cast<std::ptrdiff_t>(draw(pb_.jobs));
      PolluxAllocation x, y;
      x.rows.assign(a.rows.begin(), a.rows.begin() + cut);
      x.rows.insert(x.rows.end(), b.rows.begin() + cut, b.rows.end());
      y.rows.assign(b.rows.begin(), b.rows.begin() + cut);
      y.rows.insert(y.rows.end(), a.rows.begin() + cut, a.rows.end());
      for (PolluxAllocation* child : {&x, &y}) {
        mutate(*child);
        repair(*child);
        if (seen.insert(hash(*child)).second) offspring.push_back(score(std::move(*child)));
      }
    }
    for (auto& o : offspring) pool.push_back(std::move(o));
    survive();
    const double now = best_fitness();
    stale = now > best ? 0 : stale + 1;
    best = std::max(best, now);
  }
  if (options.nsga2) {  // the first front, best fitness first
    pool.erase(std::remove_if(pool.begin(), pool.end(), [](const Scored& s) { return s.front != 0; }), pool.end());
    std::stable_sort(pool.begin(), pool.end(), [](const Scored& a, const Scored& b) { return a.fitness > b.fitness; });
  }
  std::vector<PolluxAllocation> result;
  for (Scored& s : pool) result.push_back(std::move(s.allocation));
  return result;
}

void PolluxSearch::repair(PolluxAllocation& allocation) {
  // At most one distributed job per node, the first in job order (distribution judged before). With
  // zero_after_second, every job from the node's second distributed one on loses the node.
  const int jobs = static_cast<int>(allocation.rows.size());
  distributed_.resize(allocation.rows.size());
  for (std::size_t j = 0; j < allocation.rows.size(); ++j) distributed_[j] = allocation.rows[j].size() > 1;
  cutoff_.resize(scratch_.size(), jobs);
  for (int j = 0; j < jobs; ++j) {
    if (distributed_[static_cast<std::size_t>(j)] == 0) continue;
    for (auto& [node, count] : allocation.rows[static_cast<std::size_t>(j)]) {
      int& taken = touch(node);
      if (taken != 0) {
        count = 0;
        int& cutoff = cutoff_[static_cast<std::size_t>(node)];
        cutoff = std::min(cutoff, j);
      }
      taken = 1;
    }
  }
  if (operators_.zero_after_second)
    for (int j = 0; j < jobs; ++j)
      for (auto& [node, count] : allocation.rows[static_cast<std::size_t>(j)])
        if (cutoff_[static_cast<std::size_t>(node)] <= j) count = 0;
  for (const int node : touched_) cutoff_[static_cast<std::size_t>(node)] = jobs;
  reset_touched();
  // Per job, in a random order of its nodes: at most its replicas and max_job_nodes nodes.
  for (std::size_t j = 0; j < allocation.rows.size(); ++j) {
    Row& row = allocation.rows[j];
    normalise(row);
    for (int k = static_cast<int>(row.size()) - 1; k > 0; --k)
      std::swap(row[static_cast<std::size_t>(k)], row[static_cast<std::size_t>(draw(k + 1))]);
    int left = pb_.max_replicas[j], nodes_left = pb_.max_job_nodes;
    for (auto& [node, count] : row) {
      count = std::min(count, left);
      if (count > 0 && nodes_left-- <= 0) count = 0;
      left -= count;
    }
  }
  // Node capacity, jobs in priority order (scratch_: GPUs given so far on the node).
  for (Row& row : allocation.rows) {
    for (auto& [node, count] : row) {
      int& given = touch(node);
      count = std::min(count, pb_.capacity[static_cast<std::size_t>(node)] - given);
      given += count;
    }
    normalise(row);
  }
  reset_touched();
}

void PolluxSearch::mutate(PolluxAllocation& allocation) {
  const int N = pb_.nodes();
  for (std::size_t j = 0; j < allocation.rows.size(); ++j) {
    if (rng_.uniform() < kResetProbability) allocation.rows[j] = pb_.current.rows[j];
    if (rng_.uniform() < kZeroProbability) {
      for (auto& [node, count] : allocation.rows[j])
        if (rng_.uniform() < kZeroProbability) count = 0;
      normalise(allocation.rows[j]);
    }
  }
  // The nodes with room, judged once before the raises (as the artifact's vectorised step): every
  // node but the full ones, which only the rows' nodes can be.
  for (const Row& row : allocation.rows)
    for (const auto& [node, count] : row) touch(node) += count;
  full_.clear();
  for (const int node : touched_)
    if (scratch_[static_cast<std::size_t>(node)] >= pb_.capacity[static_cast<std::size_t>(node)]) full_.push_back(node);
  std::sort(full_.begin(), full_.end());
  full_.erase(std::unique(full_.begin(), full_.end()), full_.end());
  const int roomy = N - static_cast<int>(full_.size());
  if (roomy == 0) {
    reset_touched();
    return;
  }
  if (operators_.raise_per_node) {
    pick_raises_per_node(allocation);
    reset_touched();
    return;
  }
  const double p1 = 1.0 / static_cast<double>(roomy);
  const double none = std::pow(1.0 - p1, roomy);
  const auto has_room = [&](int node) {
    return scratch_[static_cast<std::size_t>(node)] < pb_.capacity[static_cast<std::size_t>(node)];
  };
  for (Row& row : allocation.rows) {
    picked_.clear();
    // Each roomy node independently with probability p1: a binomial count, then that many distinct
    // nodes uniformly (the same law, in O(count) draws).
    for (int k = binomial(roomy, p1, none); k > 0; --k) {
      int node = roomy_node(draw(roomy));
      while (std::find(picked_.begin(), picked_.end(), node) != picked_.end()) node = roomy_node(draw(roomy));
      picked_.push_back(node);
    }
    // Each roomy node the job uses, with probability one over those.
    int own = 0;
    for (const auto& [node, count] : row) own += has_room(node);
    for (const auto& [node, count] : row)
      if (has_room(node) && rng_.uniform() < 1.0 / own &&
          std::find(picked_.begin(), picked_.end(), node) == picked_.end())
        picked_.push_back(node);
    std::sort(picked_.begin(), picked_.end());
    for (const int node : picked_) raise_entry(row, node);
    normalise(row);
  }
  reset_touched();
}

void PolluxSearch::pick_raises_per_node(PolluxAllocation& allocation) {
  // pollux.py _mutation (3): m = random < prob1 + prob2 − prob1·prob2 per (job, node), prob1 = 1 / (jobs
  // whose replica fits in the node's free GPUs: all of them, each asking one GPU) on a node with room,
  // prob2 = 1 / (jobs on the node) for a job on a node with room. One draw against that union is the
  // union of two independent draws: a binomial count of jobs for prob1 (then that many distinct jobs
  // uniformly), and each job on the node for prob2.
  const int jobs = pb_.jobs;
  const double p1 = 1.0 / static_cast<double>(jobs);
  const double none = std::pow(1.0 - p1, jobs);
  on_node_.resize(scratch_.size());
  for (int j = 0; j < jobs; ++j)
    for (const auto& [node, count] : allocation.rows[static_cast<std::size_t>(j)])
      on_node_[static_cast<std::size_t>(node)].push_back(j);
  raises_.clear();
  for (int node = 0; node < pb_.nodes(); ++node) {
    if (scratch_[static_cast<std::size_t>(node)] >= pb_.capacity[static_cast<std::size_t>(node)]) continue;
    picked_.clear();
    for (int k = binomial(jobs, p1, none); k > 0; --k) {
      int j = draw(jobs);
      while (std::find(picked_.begin(), picked_.end(), j) != picked_.end()) j = draw(jobs);
      picked_.push_back(j);
    }
    std::vector<int>& here = on_node_[static_cast<std::size_t>(node)];
    for (const int j : here)
      if (rng_.uniform() < 1.0 / static_cast<double>(here.size()) &&
          std::find(picked_.begin(), picked_.end(), j) == picked_.end())
        picked_.push_back(j);
    for (const int j : picked_) raises_.emplace_back(j, node);
  }
  for (const int node : touched_) on_node_[static_cast<std::size_t>(node)].clear();
  // Every raise from the entry as it was before any (the artifact's step is vectorised).
  for (const auto& [j, node] : raises_) raise_entry(allocation.rows[static_cast<std::size_t>(j)], node);
  for (PolluxRow& row : allocation.rows) normalise(row);
}

void PolluxSearch::raise_entry(PolluxRow& row, int node) {
  const auto it = std::lower_bound(row.begin(), row.end(), std::pair{node, 0});
  const bool has = it != row.end() && it->first == node;
  const int r = has ? it->second : 0;
  const int raised = r + draw(pb_.capacity[static_cast<std::size_t>(node)] - r + 1);
  if (has)
    it->second = raised;
  else
    row.insert(it, {node, raised});
}

}  // namespace dnnsim
