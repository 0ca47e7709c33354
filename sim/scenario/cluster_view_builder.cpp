#include "sim/scenario/cluster_view_builder.hpp"

#include <atomic>
#include <memory>
#include <mutex>

namespace dnnsim {

std::vector<ClusterDevice> cluster_devices(const Cluster& cluster) {
  std::vector<ClusterDevice> devices;
  const std::vector<std::string> names = cluster.gpu_names();
  const std::vector<std::uint32_t> node_of_gpu = cluster.node_of_gpu();
  for (std::size_t g = 0; g < names.size(); ++g) {
    const NodeType& type = cluster.type_of(cluster.nodes[node_of_gpu[g]]);
    devices.push_back(
        ClusterDevice{names[g], type.gpu, node_of_gpu[g], type.compute_efficiency, type.calibration, type.nic_per_gpu});
  }
  return devices;
}

namespace {

// A planner's search asks for the same pairs millions of times: computed per call they made
// pipeline-mapping's search on GPT-2 XL over 32 GPUs ~25% slower than a table. So in a cluster up to
// kTabledGpus, a source's row of costs is tabled at the first question from it (64 MB if a search
// asks every row); a run with explicit stages asks a few rows. A larger cluster computes each pair
// when asked: the table would be n² (4.3 GB and ~20 s to fill at 16,384 GPUs).
constexpr std::size_t kTabledGpus = 2048;

class ViewPaths {
 public:
  ViewPaths(PlatformLayout layout, std::size_t gpus)
      : costs_(std::move(layout)), gpus_(gpus), rows_(gpus <= kTabledGpus ? gpus : 0), owned_(rows_.size()) {}

  [[nodiscard]] bool tabled() const { return !rows_.empty(); }

  [[nodiscard]] PathCost computed(DeviceId a, DeviceId b) const {
    return a == b ? PathCost{} : costs_(a, b);  // the view has no path from a GPU to itself
  }

  // Double-checked: an acquire load once the row is there; pipeline-mapping's two searches may ask at once.
  [[nodiscard]] PathCost from_table(DeviceId a, DeviceId b) const {
    const PathCost* row = rows_[a].load(std::memory_order_acquire);
    if (row == nullptr) {
      const std::lock_guard lock(filling_);
      row = rows_[a].load(std::memory_order_relaxed);
      if (row == nullptr) {
        owned_[a] = std::make_unique<PathCost[]>(gpus_);
        for (DeviceId to = 0; to < gpus_; ++to) owned_[a][to] = computed(a, to);
        row = owned_[a].get();
        rows_[a].store(row, std::memory_order_release);
      }
    }
    return row[b];
  }

 private:
  GpuPathCosts costs_;
  std::size_t gpus_;
  mutable std::vector<std::atomic<const PathCost*>> rows_;
  mutable std::mutex filling_;
  mutable std::vector<std::unique_ptr<PathCost[]>> owned_;  // under filling_
};

}  // namespace

ClusterView make_cluster_view(const Cluster& cluster, PlatformLayout layout) {
  ClusterView view;
  view.devices = cluster_devices(cluster);
  const std::size_t gpus = view.devices.size();
  auto paths = std::make_shared<const ViewPaths>(std::move(layout), gpus);
  if (paths->tabled())
    view.path_cost = [paths](DeviceId a, DeviceId b) { return paths->from_table(a, b); };
  else
    view.path_cost = [paths](DeviceId a, DeviceId b) { return paths->computed(a, b); };
  return view;
}

}  // namespace dnnsim
