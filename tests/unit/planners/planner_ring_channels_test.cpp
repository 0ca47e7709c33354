// What a planner prices a ring across nodes at (docs/collectives.md, "Channels"): the cluster view's
// topology says which GPUs have a NIC of their own, so collective_time splits the ring into the
// channels the simulator runs, one per NIC; the LLM layout planner's price follows it at every size.
// Clusters: the planner tests' two-level cluster, 2 nodes × 4 GPUs, α_in = 1 µs inside a node,
// α_out = 5 µs between nodes (tests/support/planner_fixtures.hpp).
#include <gtest/gtest.h>

#include "models/cost/collective_cost.hpp"
#include "planners/megatron/llm_layout_cost.hpp"
#include "tests/support/planner_fixtures.hpp"

namespace dnnsim {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

ClusterView two_nodes_of_four(double intra_bandwidth, double inter_bandwidth, bool own_nic) {
  ClusterView cluster = testing::hierarchical_cluster(2, 4, intra_bandwidth, inter_bandwidth);
  for (ClusterDevice& device : cluster.devices) device.own_nic = own_nic;
  return cluster;
}

Collective all_gather(double size) {
  return Collective{CollectiveKind::all_gather, {0, 1, 2, 3, 4, 5, 6, 7}, Bytes(size), "ring"};
}

// A ring all-gather of S = 64 MiB over the 8 GPUs, NVLink 100 GB/s, NIC 25 GB/s: p − 1 = 7 rounds.
//  - one NIC per node: the group-order ring crosses between the nodes at 3 → 4 and 7 → 0 with the
//    whole S/p = 8 MiB per round, which binds: 7 · (5 µs + 8 MiB / 25 GB/s) = 7 · 340.54 µs = 2.3838 ms;
//  - a NIC per GPU: g = 4 channels, every GPU sending S/(g·p) = 2 MiB to the other node and 6 MiB
//    within its own per round, at once: 7 · max(5 µs + 2 MiB / 25 GB/s, 1 µs + 6 MiB / 100 GB/s)
//    = 7 · max(88.89, 63.91) µs = 0.6222 ms, 3.8× faster.
// The planner's view, not the test, says which: ClusterView::topology() carries ClusterDevice::own_nic.
TEST(PlannerRingChannels, TwoNodesOfFourWithOwnNicsVersusASharedOne) {
  const Collective c = all_gather(64 * kMiB);
  const ClusterView shared = two_nodes_of_four(100e9, 25e9, false);
  const ClusterView own = two_nodes_of_four(100e9, 25e9, true);
  const double single = 7 * (5e-6 + 8 * kMiB / 25e9);
  const double channels = 7 * std::max(5e-6 + 2 * kMiB / 25e9, 1e-6 + 6 * kMiB / 100e9);
  EXPECT_NEAR(collective_time(c, shared.topology(), shared.path_cost).value(), single, 1e-12);
  EXPECT_NEAR(collective_time(c, own.topology(), own.path_cost).value(), channels, 1e-12);
  EXPECT_NEAR(single / channels, 3.83, 0.01);
  // p2p-ring (TE's CP ring: each member sends to its successor only) never splits into channels: with
  // a NIC per GPU it is the single ring, the crossing hop carrying all of S/p through its sender's NIC.
  Collective p2p = c;
  p2p.algorithm = "p2p-ring";
  EXPECT_NEAR(collective_time(p2p, own.topology(), own.path_cost).value(), single, 1e-12);
  EXPECT_NEAR(collective_time(p2p, shared.topology(), shared.path_cost).value(), single, 1e-12);
}

// The planner tests' tiny LLM, only so that the layout cost can be built (it prices collectives of any group).
PlanRequest llm_request(ClusterView cluster) {
  return testing::make_request(testing::tiny_moe(), std::move(cluster), 8, 1);
}

// NVLink 100 GB/s, NIC 50 GB/s, a NIC per GPU: a channelled round lasts
// max(5 µs + S/(4·8·50 GB/s), 1 µs + 3S/(4·8·100 GB/s)) = max(5 µs + S/1.6e12, 1 µs + S·9.375e-13):
// the NIC hop binds below S = 4 µs / 3.125e-13 = 12.8 MB, the NVLink hop above (as on GB200, where
// (g − 1)/B_NVLink > 1/B_NIC) — the time is not affine in S. 7 rounds:
//   S = 1 MB: 7 · (5 µs + 0.625 µs) = 39.375 µs (the NVLink hop's line would say 7 · 1.9375 = 13.56 µs);
//   S = 1 GB: 7 · (1 µs + 937.5 µs) = 6.5695 ms.
// The layout cost (no calibration: no per-call latency) prices both sizes exactly, in either order.
TEST(PlannerRingChannels, TheLayoutCostPricesAChannelledRingAtEverySize) {
  const PlanRequest request = llm_request(two_nodes_of_four(100e9, 50e9, true));
  LlmLayoutCost cost(request);
  EXPECT_NEAR(cost.collective(all_gather(1e9)).value(), 7 * (1e-6 + 1e9 * 9.375e-13), 1e-12);
  EXPECT_NEAR(cost.collective(all_gather(1e6)).value(), 7 * (5e-6 + 1e6 / 1.6e12), 1e-12);
  EXPECT_NEAR(cost.collective(all_gather(1e9)).value(), 7 * (1e-6 + 1e9 * 9.375e-13), 1e-12);
  // The same group and kind under p2p-ring is priced apart (its own line): 7 · (5 µs + (S/8) / 50 GB/s).
  Collective p2p = all_gather(1e9);
  p2p.algorithm = "p2p-ring";
  EXPECT_NEAR(cost.collective(p2p).value(), 7 * (5e-6 + 1e9 / 8 / 50e9), 1e-12);
  EXPECT_NEAR(cost.collective(all_gather(1e9)).value(), 7 * (1e-6 + 1e9 * 9.375e-13), 1e-12);
  // A ring inside one node is affine (every hop alike): 3 rounds of 1 µs + (S/4) / 100 GB/s.
  const Collective inside{CollectiveKind::all_gather, {0, 1, 2, 3}, Bytes(1e6), "ring"};
  EXPECT_NEAR(cost.collective(inside).value(), 3 * (1e-6 + 1e6 / 4 / 100e9), 1e-12);
}

}  // namespace
}  // namespace dnnsim
