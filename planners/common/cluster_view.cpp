#include "planners/common/cluster_view.hpp"

#include <cassert>

namespace dnnsim {

DeviceTopology ClusterView::topology() const {
  DeviceTopology topology;
  for (const ClusterDevice& device : devices) topology.node_of_device.push_back(device.node);
  return topology;
}

std::vector<std::string> ClusterView::names() const {
  std::vector<std::string> result;
  for (const ClusterDevice& device : devices) result.push_back(device.name);
  return result;
}

ClusterView group_devices(const ClusterView& view, int ranks) {
  assert(ranks >= 1 && view.size() % static_cast<std::size_t>(ranks) == 0);
  const std::size_t step = static_cast<std::size_t>(ranks);
  ClusterView grouped;
  for (std::size_t g = 0; g * step < view.size(); ++g) {
    grouped.devices.push_back(view.devices[g * step]);
    std::vector<PathCost> row;
    for (std::size_t h = 0; h * step < view.size(); ++h)
      row.push_back(view.paths.at(g * step).at(h * step));
    grouped.paths.push_back(std::move(row));
  }
  return grouped;
}

}  // namespace dnnsim
