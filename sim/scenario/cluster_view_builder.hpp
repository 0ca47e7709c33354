// The planners' view of a scenario's cluster (planners/common/cluster_view.hpp): every GPU with its
// spec, node and calibration, and the uncontended path cost between any pair, read off the platform
// layout's routes (the same links the simulator uses) when asked. Pure: no engine.
#pragma once

#include "planners/common/cluster_view.hpp"
#include "sim/scenario/layout.hpp"
#include "sim/scenario/scenario.hpp"

namespace dnnsim {

[[nodiscard]] ClusterView make_cluster_view(const Cluster& cluster, PlatformLayout layout);

// The devices alone (ClusterView::devices), in Cluster::gpu_names order, for callers that need no paths.
[[nodiscard]] std::vector<ClusterDevice> cluster_devices(const Cluster& cluster);

}  // namespace dnnsim
