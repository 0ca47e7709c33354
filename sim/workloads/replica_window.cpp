#include "sim/workloads/replica_window.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/program/collective_algorithms.hpp"

namespace dnnsim {

std::vector<std::string> replica_window_platform_problems(const Cluster& cluster,
                                                          const std::string& collective_algorithm) {
  std::vector<std::string> problems;
  if (!one_non_blocking_switch(cluster))
    problems.push_back(
        "the interconnect is not one non-blocking switch (a backplane or spine links carry every "
        "replica's traffic, so replicas on different nodes are not translates of one another)");
  // The data-parallel all-reduce runs over the window's members only when its algorithm says so.
  const auto windowed = [](const CollectiveAlgorithm& algorithm) {
    return algorithm.supports(CollectiveKind::all_reduce) && algorithm.supports_copies(CollectiveKind::all_reduce);
  };
  const CollectiveAlgorithmRegistry& algorithms = builtin_collective_algorithms();
  const auto* chosen = algorithms.find(collective_algorithm);
  if (!collective_algorithm.empty() && (chosen == nullptr || !windowed(*chosen->value))) {
    std::vector<std::string> with_window;
    for (const auto& entry : algorithms.entries())
      if (windowed(*entry.value)) with_window.push_back(entry.name);
    problems.push_back(fmt::format("collective algorithm '{}' has no symmetric-window form ({} have one)",
                                   collective_algorithm, fmt::join(with_window, " and ")));
  }
  return problems;
}

ReplicaWindow replica_window(const Cluster& cluster, const std::vector<std::vector<DeviceId>>& stages, int ranks,
                             int micro_batch, const std::string& collective_algorithm, const std::string& batch_name) {
  ReplicaWindow window;
  window.problems = replica_window_platform_problems(cluster, collective_algorithm);
  // The node of every GPU, and where each node's GPUs start.
  std::vector<std::size_t> node_of_gpu;
  std::vector<std::size_t> first_gpu;
  for (std::size_t n = 0; n < cluster.nodes.size(); ++n) {
    first_gpu.push_back(node_of_gpu.size());
    node_of_gpu.insert(node_of_gpu.end(), static_cast<std::size_t>(cluster.type_of(cluster.nodes[n]).gpus_per_node), n);
  }
  std::optional<std::size_t> replicas;
  std::optional<std::size_t> nodes_per_stage;
  std::optional<std::size_t> node_type;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const std::vector<DeviceId>& groups = stages[s];
    const auto refuse = [&](std::string why) {
      window.problems.push_back(fmt::format("stage {} {}", s, std::move(why)));
    };
    if (replicas && groups.size() != *replicas) {
      refuse(fmt::format("has {} replicas and stage 0 {}", groups.size(), *replicas));
      continue;
    }
    replicas = groups.size();
    // Its GPUs in replica order must be whole consecutive nodes, in order.
    const auto gpu = [&](std::size_t i) {
      return static_cast<std::size_t>(groups[i / static_cast<std::size_t>(ranks)]) * static_cast<std::size_t>(ranks) +
             i % static_cast<std::size_t>(ranks);
    };
    const std::size_t count = groups.size() * static_cast<std::size_t>(ranks);
    const std::size_t start = gpu(0);
    bool whole = start < node_of_gpu.size() && first_gpu[node_of_gpu[start]] == start;
    for (std::size_t i = 1; whole && i < count; ++i) whole = gpu(i) == start + i;
    const std::size_t end = start + count;
    whole = whole && end <= node_of_gpu.size() && (end == node_of_gpu.size() || first_gpu[node_of_gpu[end]] == end);
    if (!whole) {
      refuse("does not fill whole consecutive nodes in replica order");
      continue;
    }
    const std::size_t first_node = node_of_gpu[start];
    const std::size_t nodes = node_of_gpu[end - 1] - first_node + 1;
    for (std::size_t n = first_node; n < first_node + nodes; ++n) {
      if (!node_type) node_type = cluster.nodes[n].type;
      if (cluster.nodes[n].type != *node_type) {
        refuse(fmt::format("has a node of type '{}' where the first node is '{}' (the nodes must be identical)",
                           cluster.type_of(cluster.nodes[n]).name, cluster.node_types[*node_type].name));
        break;
      }
    }
    nodes_per_stage = nodes;
  }
  if (!window.problems.empty() || !replicas || !node_type) return window;
  const int per_node = cluster.node_types[*node_type].gpus_per_node;
  if (per_node % ranks != 0)
    window.problems.push_back(
        fmt::format("a replica's tensor × context parallel group of {} GPUs spans nodes of {}", ranks, per_node));
  if (micro_batch % static_cast<int>(*replicas) != 0)
    window.problems.push_back(
        fmt::format("{} of {} samples does not split evenly over {} replicas", batch_name, micro_batch, *replicas));
  std::size_t k = 2;
  while (k < *nodes_per_stage && *nodes_per_stage % k != 0) ++k;
  if (k >= *nodes_per_stage)
    window.problems.push_back(
        fmt::format("a stage spans {} node(s): no window of fewer whole nodes divides it", *nodes_per_stage));
  if (window.problems.empty()) window.replicas = static_cast<int>(k) * (per_node / ranks);
  return window;
}

bool mirrors_by_default(MapReader& map, std::string_view key, const Cluster& cluster) {
  return !map.has(key) && cluster.gpu_count() > kMirroringByDefaultAbove;
}

ReplicaFidelity read_replica_fidelity(YamlReader& reader, MapReader& map, const Cluster& cluster,
                                      const std::string& collective_algorithm) {
  const auto fidelity = map.choice("data_parallel_fidelity", "data-parallel fidelity", {"replicas", "window", "auto"});
  if (fidelity == "auto" || mirrors_by_default(map, "data_parallel_fidelity", cluster))
    return ReplicaFidelity::automatic;
  if (fidelity != "window") return ReplicaFidelity::replicas;
  for (const std::string& problem : replica_window_platform_problems(cluster, collective_algorithm))
    reader.error(map.get("data_parallel_fidelity"), window_refused(problem));
  return ReplicaFidelity::window;
}

std::string network_breaks_mirroring(const NetworkConditions& network, std::string_view what) {
  if (network.shared_with_other_jobs)
    return fmt::format("other jobs share the fabric: their traffic would cross the mirrored {} links", what);
  if (network.conditions.empty() && network.background_flows.empty() && network.failures.empty()) return {};
  return fmt::format("the network section would touch the mirrored {} links", what);
}

bool one_non_blocking_switch(const Cluster& cluster) {
  return cluster.network.kind == InterNodeKind::single_switch && !cluster.network.switch_bandwidth;
}

std::string window_refused(const std::string& problem) {
  return "data_parallel_fidelity: window is exact only for replicas that are translates of one another, but " + problem;
}

}  // namespace dnnsim
