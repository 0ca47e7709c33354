#include "planners/jobs/pollux_search.hpp"

#include <algorithm>
#include <cmath>
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
  std::vector<std::pair<double, PolluxAllocation>> pool;
  std::unordered_set<std::uint64_t> seen;  // hashes of the allocations met: membership only, never iterated
  for (PolluxAllocation& a : seeds) {
    repair(a);
    if (seen.insert(hash(a)).second) pool.emplace_back(pb_.fitness(a), std::move(a));
  }
  const auto survive = [&] {
    std::stable_sort(pool.begin(), pool.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    if (pool.size() > static_cast<std::size_t>(options.population))
      pool.resize(static_cast<std::size_t>(options.population));
  };
  const auto tournament = [&]() -> const PolluxAllocation& {
    const auto& a = pool[static_cast<std::size_t>(draw(static_cast<int>(pool.size())))];
    const auto& b = pool[static_cast<std::size_t>(draw(static_cast<int>(pool.size())))];
    return a.first >= b.first ? a.second : b.second;
  };
  survive();
  double best = pool.front().first;
  for (int g = 0, stale = 0; g < options.generations && stale < options.patience; ++g) {
    std::vector<std::pair<double, PolluxAllocation>> offspring;
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
        if (seen.insert(hash(*child)).second) offspring.emplace_back(pb_.fitness(*child), std::move(*child));
      }
    }
    for (auto& o : offspring) pool.push_back(std::move(o));
    survive();
    stale = pool.front().first > best ? 0 : stale + 1;
    best = std::max(best, pool.front().first);
  }
  std::vector<PolluxAllocation> result;
  for (auto& [f, a] : pool) result.push_back(std::move(a));
  return result;
}

void PolluxSearch::repair(PolluxAllocation& allocation) {
  // At most one distributed job per node, the first in job order (distribution judged before).
  distributed_.resize(allocation.rows.size());
  for (std::size_t j = 0; j < allocation.rows.size(); ++j) distributed_[j] = allocation.rows[j].size() > 1;
  for (std::size_t j = 0; j < allocation.rows.size(); ++j) {
    if (distributed_[j] == 0) continue;
    for (auto& [node, count] : allocation.rows[j]) {
      int& taken = touch(node);
      if (taken != 0) count = 0;
      taken = 1;
    }
  }
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
    for (const int node : picked_) {
      const auto it = std::lower_bound(row.begin(), row.end(), std::pair{node, 0});
      const bool has = it != row.end() && it->first == node;
      const int r = has ? it->second : 0;
      const int raised = r + draw(pb_.capacity[static_cast<std::size_t>(node)] - r + 1);
      if (has)
        it->second = raised;
      else
        row.insert(it, {node, raised});
    }
    normalise(row);
  }
  reset_touched();
}

}  // namespace dnnsim
