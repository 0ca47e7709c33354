// The paths a data-parallel all-reduce over some GPUs runs on, and its time, as the simulator's
// default rule runs it (docs/collectives.md, "The default rule"): a ring over the members in device
// order, or the hierarchical all-reduce (Jia et al. 2018) when every node involved holds the same
// number g > 1 of them — g intra-node rings, then one inter-node ring per local rank. Those g
// inter-node rings share the node's NIC unless every member has a NIC of its own
// (ClusterDevice::own_nic: rail-optimised nodes, one HDR NIC per GPU as in DGX A100).
#pragma once

#include <optional>
#include <span>

#include "planners/common/cluster_view.hpp"

namespace dnnsim {

struct AllReducePaths {
  struct Hierarchy {
    int nodes = 0;
    int per_node = 0;
    PathCost intra, inter;  // inter: one inter-node ring's share of its NIC
  };
  int replicas = 0;
  PathCost ring_edge;                  // the slowest edge of the ring in device order
  std::optional<Hierarchy> hierarchy;  // when every node holds the same number g > 1 of the members
  [[nodiscard]] bool same_costs(const AllReducePaths& other) const;
};

// `members`: device ids of `cluster`, ascending, at least two.
[[nodiscard]] AllReducePaths all_reduce_paths(const ClusterView& cluster, std::span<const DeviceId> members);

// The all-reduce of `size` bytes: the ring's closed form, or the hierarchical one where it applies
// and is faster (ring_all_reduce_time, hierarchical_all_reduce_time: models/cost/collective_cost.hpp).
[[nodiscard]] Seconds all_reduce_time(Bytes size, const AllReducePaths& paths);

}  // namespace dnnsim
