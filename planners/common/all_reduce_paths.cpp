#include "planners/common/all_reduce_paths.hpp"

#include <algorithm>
#include <map>
#include <vector>

namespace dnnsim {
namespace {

PathCost slowest(const PathCost& a, const PathCost& b) {
  // The edge a ring's rounds wait for: the one with the smaller bandwidth (then the larger latency).
  if (a.bandwidth.value() != b.bandwidth.value()) return a.bandwidth < b.bandwidth ? a : b;
  return a.latency > b.latency ? a : b;
}

bool same_path(const PathCost& a, const PathCost& b) {
  return a.latency.value() == b.latency.value() && a.bandwidth.value() == b.bandwidth.value();
}

}  // namespace

bool AllReducePaths::same_costs(const AllReducePaths& other) const {
  if (replicas != other.replicas || !same_path(ring_edge, other.ring_edge) ||
      hierarchy.has_value() != other.hierarchy.has_value())
    return false;
  return !hierarchy ||
         (hierarchy->nodes == other.hierarchy->nodes && hierarchy->per_node == other.hierarchy->per_node &&
          same_path(hierarchy->intra, other.hierarchy->intra) && same_path(hierarchy->inter, other.hierarchy->inter));
}

AllReducePaths all_reduce_paths(const ClusterView& cluster, std::span<const DeviceId> ring) {
  AllReducePaths links;
  const int p = static_cast<int>(ring.size());
  links.replicas = p;
  links.ring_edge = cluster.path(ring[0], ring[1]);
  for (int i = 0; i < p; ++i) links.ring_edge = slowest(links.ring_edge, cluster.path(ring[i], ring[(i + 1) % p]));

  std::map<std::uint32_t, std::vector<DeviceId>> by_node;
  for (DeviceId d : ring) by_node[cluster.devices[d].node].push_back(d);
  const int nodes = static_cast<int>(by_node.size());
  const int per_node = p / nodes;
  const bool even = std::all_of(by_node.begin(), by_node.end(),
                                [&](const auto& entry) { return static_cast<int>(entry.second.size()) == per_node; });
  if (nodes > 1 && per_node > 1 && even) {
    PathCost intra = cluster.path(by_node.begin()->second[0], by_node.begin()->second[1]);
    PathCost inter = cluster.path(by_node.begin()->second[0], std::next(by_node.begin())->second[0]);
    for (auto node = by_node.begin(); node != by_node.end(); ++node) {
      const std::vector<DeviceId>& local = node->second;
      for (int i = 0; i < per_node; ++i) intra = slowest(intra, cluster.path(local[i], local[(i + 1) % per_node]));
      auto next = std::next(node) == by_node.end() ? by_node.begin() : std::next(node);
      for (int i = 0; i < per_node; ++i) inter = slowest(inter, cluster.path(local[i], next->second[i]));
    }
    const bool own_nics = std::all_of(ring.begin(), ring.end(), [&](DeviceId d) { return cluster.devices[d].own_nic; });
    if (!own_nics) inter.bandwidth = inter.bandwidth / static_cast<double>(per_node);  // g rings, one NIC
    links.hierarchy = AllReducePaths::Hierarchy{nodes, per_node, intra, inter};
  }
  return links;
}

Seconds all_reduce_time(Bytes size, const AllReducePaths& paths) {
  Seconds best = ring_all_reduce_time(size, paths.replicas, paths.ring_edge);
  if (const auto& h = paths.hierarchy)
    best = std::min(best, hierarchical_all_reduce_time(size, h->nodes, h->per_node, h->intra, h->inter));
  return best;
}

}  // namespace dnnsim
