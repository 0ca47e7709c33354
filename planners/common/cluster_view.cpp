#include "planners/common/cluster_view.hpp"

#include <cassert>

namespace dnnsim {

// Each device's node and whether it has a NIC of its own, as the lowering gives the collective
// algorithms (sim/run/simulation.cpp): a planner's collective_time then splits a ring across nodes
// into the channels the simulator runs (docs/collectives.md, "Channels").
DeviceTopology ClusterView::topology() const {
  DeviceTopology topology;
  for (const ClusterDevice& device : devices) {
    topology.node_of_device.push_back(device.node);
    topology.own_nic.push_back(device.own_nic);
  }
  return topology;
}

std::vector<std::string> ClusterView::names() const {
  std::vector<std::string> result;
  for (const ClusterDevice& device : devices) result.push_back(device.name);
  return result;
}

ClusterView group_devices(const ClusterView& view, int ranks) {
  assert(ranks >= 1 && view.size() % static_cast<std::size_t>(ranks) == 0);
  const auto step = static_cast<DeviceId>(ranks);
  ClusterView grouped;
  for (std::size_t g = 0; g * step < view.size(); ++g) grouped.devices.push_back(view.devices[g * step]);
  grouped.path_cost = [paths = view.path_cost, step](DeviceId g, DeviceId h) { return paths(g * step, h * step); };
  return grouped;
}

}  // namespace dnnsim
