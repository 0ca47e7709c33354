// The cluster model's queries (scenario.hpp): its GPUs by name and by node.
#include <fmt/format.h>

#include <string_view>
#include <unordered_map>

#include "sim/scenario/scenario.hpp"

namespace dnnsim {

std::size_t Cluster::gpu_count() const {
  std::size_t count = 0;
  for (const NodeInstance& node : nodes) count += static_cast<std::size_t>(type_of(node).gpus_per_node);
  return count;
}

std::vector<std::string> Cluster::gpu_names() const {
  std::vector<std::string> names;
  for (const NodeInstance& node : nodes)
    for (int g = 0; g < type_of(node).gpus_per_node; ++g) names.push_back(fmt::format("{}/gpu{}", node.name, g));
  return names;
}

std::vector<std::uint32_t> Cluster::node_of_gpu() const {
  std::vector<std::uint32_t> result;
  for (std::uint32_t n = 0; n < nodes.size(); ++n)
    result.insert(result.end(), static_cast<std::size_t>(type_of(nodes[n]).gpus_per_node), n);
  return result;
}

std::vector<std::optional<ClusterGpu>> Cluster::locate_gpus(const std::vector<std::string>& devices) const {
  const std::vector<std::string> names = gpu_names();
  const std::vector<std::uint32_t> node_of = node_of_gpu();
  std::unordered_map<std::string_view, ClusterGpu> by_name;
  for (std::size_t g = 0; g < names.size(); ++g)
    by_name.emplace(names[g], ClusterGpu{node_of[g], &type_of(nodes[node_of[g]])});
  std::vector<std::optional<ClusterGpu>> located;
  located.reserve(devices.size());
  for (const std::string& device : devices) {
    const auto it = by_name.find(device);
    located.push_back(it == by_name.end() ? std::nullopt : std::optional<ClusterGpu>(it->second));
  }
  return located;
}

}  // namespace dnnsim
