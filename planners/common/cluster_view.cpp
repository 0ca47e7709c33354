#include "planners/common/cluster_view.hpp"

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

}  // namespace dnnsim
