// planners/common/all_reduce_paths.hpp on the test helpers' two-level cluster: intra-node paths
// 1 µs, 150 GB/s; between nodes 5 µs, 3.125 GB/s.
#include "planners/common/all_reduce_paths.hpp"

#include <gtest/gtest.h>

#include "tests/support/planner_fixtures.hpp"

namespace dnnsim {
namespace {

// GPUs {0, 1} of node 0 and {4, 5} of node 1: g = 2 per node, n = 2 nodes, S = 1 GB.
//   ring (4 members, slowest edge between nodes): 2·3·(5 µs + S/(4 · 3.125 GB/s)) = 0.48003 s
//   hierarchical: 2(g−1)(1 µs + S/(2 · 150 GB/s)) + 2(n−1)(5 µs + S/(4 · β_out)),
//     β_out = 3.125 GB/s / 2 when the two inter-node rings share the node's NIC: 0.326677 s;
//     β_out = 3.125 GB/s with a NIC per GPU: 0.166677 s.
TEST(AllReducePaths, HierarchicalSharesTheNicUnlessEachGpuHasOne) {
  ClusterView cluster = testing::hierarchical_cluster(2, 4);
  const std::vector<DeviceId> members{0, 1, 4, 5};
  const Bytes size(1e9);
  const double intra = 2 * (1e-6 + 1e9 / (2 * 150e9));
  const AllReducePaths shared = all_reduce_paths(cluster, members);
  ASSERT_TRUE(shared.hierarchy.has_value());
  EXPECT_EQ(shared.hierarchy->nodes, 2);
  EXPECT_EQ(shared.hierarchy->per_node, 2);
  EXPECT_DOUBLE_EQ(shared.hierarchy->inter.bandwidth.value(), 3.125e9 / 2);
  EXPECT_NEAR(all_reduce_time(size, shared).value(), intra + 2 * (5e-6 + 1e9 / (4 * 3.125e9 / 2)), 1e-12);
  for (ClusterDevice& device : cluster.devices) device.own_nic = true;
  const AllReducePaths own = all_reduce_paths(cluster, members);
  EXPECT_DOUBLE_EQ(own.hierarchy->inter.bandwidth.value(), 3.125e9);
  EXPECT_NEAR(all_reduce_time(size, own).value(), intra + 2 * (5e-6 + 1e9 / (4 * 3.125e9)), 1e-12);
  // One GPU per node: no hierarchy, the ring.
  const AllReducePaths ring = all_reduce_paths(cluster, std::vector<DeviceId>{0, 4});
  EXPECT_FALSE(ring.hierarchy.has_value());
  EXPECT_NEAR(all_reduce_time(size, ring).value(), 2 * (5e-6 + 1e9 / (2 * 3.125e9)), 1e-12);
}

}  // namespace
}  // namespace dnnsim
