// What a planner knows of the cluster: each GPU's model, memory and node, and the uncontended cost
// of a transfer between any two of them (latency and bottleneck bandwidth of the route, Hockney's
// α + size/β). Pure data, so that planners are unit-testable without the platform; sim/ builds it
// from a scenario (sim/scenario/cluster_view_builder.hpp) by walking the platform's routes.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"
#include "models/cost/collective_cost.hpp"
#include "models/hardware/catalog.hpp"

namespace dnnsim {

struct ClusterDevice {
  std::string name;  // "node0/gpu3"
  GpuSpec gpu;
  std::uint32_t node = 0;
  double compute_efficiency = 1.0;
  std::shared_ptr<const CalibrationTable> calibration;  // replaces compute_efficiency when set
  // A NIC of its own (rail-optimised nodes: `nic.per_gpu`), so its node's GPUs do not share one
  // between nodes (all_reduce_paths.hpp).
  bool own_nic = false;
};

struct ClusterView {
  std::vector<ClusterDevice> devices;
  // Uncontended cost of a → b (a ≠ b), computed when asked rather than tabled: a table of every pair
  // is n² (4.3 GB at 16,384 GPUs) and a planner reads few of them. Callable from several threads at once.
  PathCostFn path_cost;

  [[nodiscard]] std::size_t size() const { return devices.size(); }
  // @throw std::out_of_range for a device not in the view
  [[nodiscard]] PathCost path(DeviceId from, DeviceId to) const {
    if (from >= devices.size() || to >= devices.size()) throw std::out_of_range("device not in the cluster view");
    return path_cost(from, to);
  }
  [[nodiscard]] DeviceTopology topology() const;
  [[nodiscard]] std::vector<std::string> names() const;
};

// The view a pipeline planner sees under tensor parallelism of degree `ranks`: device g stands for the
// GPUs g·ranks … g·ranks + ranks − 1 (a tensor-parallel group) and is described by its first GPU
// (model, memory, node, and the paths between first GPUs: rank r of a group talks to rank r of the
// next). Asserts view.size() % ranks == 0.
[[nodiscard]] ClusterView group_devices(const ClusterView& view, int ranks);

}  // namespace dnnsim
