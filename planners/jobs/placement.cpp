#include "planners/jobs/placement.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <numeric>

#include "models/common/builtin_registry.hpp"
#include "models/common/random.hpp"

namespace dnnsim {
namespace {

// Servers of `candidates` taken in decreasing free-GPU order (ties: lower index) until `gpus` are
// covered: the fewest servers that hold the job among them.
std::optional<Placement> greedy_fill(const std::vector<int>& free, std::vector<int> candidates, int gpus) {
  std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) { return free[a] > free[b]; });
  Placement placement;
  int left = gpus;
  for (int server : candidates) {
    if (left == 0) break;
    if (free[server] == 0) continue;
    const int take = std::min(left, free[server]);
    placement.slices.emplace_back(server, take);
    left -= take;
  }
  if (left > 0) return std::nullopt;
  std::sort(placement.slices.begin(), placement.slices.end());
  return placement;
}

// The single server with the fewest free GPUs that still holds the job (best fit, against
// fragmentation); lowest index on ties.
std::optional<Placement> best_fit_server(const std::vector<int>& free, const std::vector<int>& candidates, int gpus) {
  int best = -1;
  for (int server : candidates)
    if (free[server] >= gpus && (best < 0 || free[server] < free[best])) best = server;
  if (best < 0) return std::nullopt;
  return Placement{{{best, gpus}}};
}

std::map<int, std::vector<int>> servers_by_rack(const ClusterState& state, const std::vector<int>& candidates) {
  std::map<int, std::vector<int>> racks;
  for (int server : candidates) racks[state.servers[server].rack].push_back(server);
  return racks;
}

int free_sum(const std::vector<int>& free, const std::vector<int>& servers) {
  int total = 0;
  for (int server : servers) total += free[server];
  return total;
}

// Fewest servers; among rack-local solutions and the global one, the rack-local one on ties, and the
// rack with the least free GPUs left among equals.
std::optional<Placement> consolidated_among(const ClusterState& state, const std::vector<int>& free,
                                            const std::vector<int>& candidates, int gpus) {
  if (auto single = best_fit_server(free, candidates, gpus)) return single;
  std::optional<Placement> best;
  int best_left = 0;
  for (const auto& [rack, servers] : servers_by_rack(state, candidates)) {
    auto local = greedy_fill(free, servers, gpus);
    const int left = free_sum(free, servers) - gpus;
    if (local &&
        (!best || local->servers() < best->servers() || (local->servers() == best->servers() && left < best_left))) {
      best = std::move(local);
      best_left = left;
    }
  }
  auto global = greedy_fill(free, candidates, gpus);
  if (global && (!best || global->servers() < best->servers())) return global;
  return best;
}

std::vector<int> all_servers(const ClusterState& state) {
  std::vector<int> servers(state.servers.size());
  std::iota(servers.begin(), servers.end(), 0);
  return servers;
}

class ConsolidatedPlacement final : public PlacementPolicy {
 public:
  [[nodiscard]] std::optional<Placement> place(const ClusterState& state, const std::vector<int>& free,
                                               const JobView& job) const override {
    return consolidated_among(state, free, all_servers(state), job.gpus);
  }
};

// Fewest links crossed by the job's ring: one server (no network), else one rack (the ToR switch
// only; fewest servers = fewest NICs), else the fewest racks (fewest oversubscribed uplinks).
class TopologyAwarePlacement final : public PlacementPolicy {
 public:
  [[nodiscard]] std::optional<Placement> place(const ClusterState& state, const std::vector<int>& free,
                                               const JobView& job) const override {
    const std::vector<int> servers = all_servers(state);
    if (auto single = best_fit_server(free, servers, job.gpus)) return single;
    const auto racks = servers_by_rack(state, servers);
    std::optional<Placement> best;
    for (const auto& [rack, members] : racks) {
      auto local = greedy_fill(free, members, job.gpus);
      if (local && (!best || local->servers() < best->servers())) best = std::move(local);
    }
    if (best) return best;
    // Racks by decreasing free GPUs, each filled server by server.
    std::vector<std::pair<int, std::vector<int>>> ordered(racks.begin(), racks.end());
    std::stable_sort(ordered.begin(), ordered.end(),
                     [&](const auto& a, const auto& b) { return free_sum(free, a.second) > free_sum(free, b.second); });
    std::vector<int> chosen;
    int covered = 0;
    for (const auto& [rack, members] : ordered) {
      if (covered >= job.gpus) break;
      chosen.insert(chosen.end(), members.begin(), members.end());
      covered += free_sum(free, members);
    }
    return greedy_fill(free, chosen, job.gpus);
  }
};

// Load balancing: the servers with the most free GPUs first (the opposite of best fit), so jobs
// spread out and share servers as little as possible — the "least-loaded" baseline of the RL
// schedulers' evaluations (DL2, Harmony; papers-cluster.md §2).
class LeastLoadedPlacement final : public PlacementPolicy {
 public:
  [[nodiscard]] std::optional<Placement> place(const ClusterState& state, const std::vector<int>& free,
                                               const JobView& job) const override {
    return greedy_fill(free, all_servers(state), job.gpus);
  }
};

// Uniformly random free GPUs (Fisher–Yates over the free slots with splitmix64, so the choice is the
// same on every platform), seeded by (seed, job, date): reproducible, and different per decision.
class RandomPlacement final : public PlacementPolicy {
 public:
  explicit RandomPlacement(std::uint64_t seed) : seed_(seed) {}
  [[nodiscard]] std::optional<Placement> place(const ClusterState& state, const std::vector<int>& free,
                                               const JobView& job) const override {
    std::vector<int> slots;
    for (std::size_t server = 0; server < free.size(); ++server)
      slots.insert(slots.end(), static_cast<std::size_t>(free[server]), static_cast<int>(server));
    if (static_cast<int>(slots.size()) < job.gpus) return std::nullopt;
    std::uint64_t rng = seed_ ^ (job.id * kSplitMix64Increment) ^ std::bit_cast<std::uint64_t>(state.now.value());
    std::map<int, int> taken;
    for (int i = 0; i < job.gpus; ++i) {
      const std::size_t j = i + splitmix64_next(rng) % (slots.size() - i);
      std::swap(slots[i], slots[j]);
      ++taken[slots[i]];
    }
    Placement placement;
    for (const auto& [server, count] : taken) placement.slices.emplace_back(server, count);
    return placement;
  }

 private:
  std::uint64_t seed_;
};

// Gavel-style: the fastest GPU type on which the whole job fits, consolidated among those servers;
// a job that fits on no single type is placed consolidated across types (it runs at the slowest).
class HeterogeneityAwarePlacement final : public PlacementPolicy {
 public:
  [[nodiscard]] std::optional<Placement> place(const ClusterState& state, const std::vector<int>& free,
                                               const JobView& job) const override {
    std::vector<std::pair<double, std::string>> types;
    for (const ServerInfo& server : state.servers) {
      std::pair<double, std::string> key{-server.gpu_speed, server.gpu_type};
      if (std::find(types.begin(), types.end(), key) == types.end()) types.push_back(key);
    }
    std::sort(types.begin(), types.end());
    for (const auto& [speed, type] : types) {
      std::vector<int> candidates;
      for (std::size_t s = 0; s < state.servers.size(); ++s)
        if (state.servers[s].gpu_type == type && -state.servers[s].gpu_speed == speed)
          candidates.push_back(static_cast<int>(s));
      if (auto placement = consolidated_among(state, free, candidates, job.gpus)) return placement;
    }
    return consolidated_among(state, free, all_servers(state), job.gpus);
  }
};

}  // namespace

void register_builtin_placements(PlacementRegistry& registry) {
  registry.add("consolidated", "fewest servers, one rack first, best fit (YARN-CS-like)",
               "Tiresias NSDI'19 simulator `yarn` scheme",
               [](const Options&, std::uint64_t) { return std::make_unique<ConsolidatedPlacement>(); });
  registry.add("random", "uniformly random free GPUs, seeded per (job, date)",
               "Tiresias NSDI'19 simulator `random` scheme",
               [](const Options&, std::uint64_t seed) { return std::make_unique<RandomPlacement>(seed); });
  registry.add("least-loaded", "the servers with the most free GPUs first (spread, load balancing)",
               "DL2 / Harmony baselines (papers-cluster.md §2)",
               [](const Options&, std::uint64_t) { return std::make_unique<LeastLoadedPlacement>(); });
  registry.add("topology-aware", "fewest links crossed: one server, else one rack, else fewest racks", "dnnsim",
               [](const Options&, std::uint64_t) { return std::make_unique<TopologyAwarePlacement>(); });
  registry.add("heterogeneity-aware", "fastest GPU type that holds the whole job, consolidated there",
               "Gavel OSDI'20 (heterogeneity-aware allocation)",
               [](const Options&, std::uint64_t) { return std::make_unique<HeterogeneityAwarePlacement>(); });
}

const PlacementRegistry& builtin_placements() {
  return builtin_registry<PlacementRegistry, register_builtin_placements>("placement");
}

}  // namespace dnnsim
