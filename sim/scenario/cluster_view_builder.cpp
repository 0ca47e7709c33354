#include "sim/scenario/cluster_view_builder.hpp"

namespace dnnsim {

std::vector<ClusterDevice> cluster_devices(const Cluster& cluster) {
  std::vector<ClusterDevice> devices;
  const std::vector<std::string> names = cluster.gpu_names();
  const std::vector<std::uint32_t> node_of_gpu = cluster.node_of_gpu();
  for (std::size_t g = 0; g < names.size(); ++g) {
    const NodeType& type = cluster.type_of(cluster.nodes[node_of_gpu[g]]);
    devices.push_back(ClusterDevice{names[g], type.gpu, node_of_gpu[g], type.compute_efficiency, type.calibration});
  }
  return devices;
}

ClusterView make_cluster_view(const Cluster& cluster, const PlatformLayout& layout) {
  ClusterView view;
  view.devices = cluster_devices(cluster);
  const std::size_t n = view.devices.size();
  view.paths = layout.gpu_route_costs();
  for (std::uint32_t a = 0; a < n; ++a) view.paths[a][a] = PathCost{};  // the view has no path from a GPU to itself
  return view;
}

}  // namespace dnnsim
