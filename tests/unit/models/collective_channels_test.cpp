// The ring split into channels, one per NIC (docs/collectives.md, "Channels"; NCCL's rings): bytes
// per NIC per channel on a small two-node ring, derived by hand, and the cases that keep one ring.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "models/cost/collective_cost.hpp"
#include "models/program/collective_algorithms.hpp"
#include "tests/support/collective_expansions.hpp"
#include "tests/support/task_graph_ops.hpp"

namespace dnnsim {
namespace {

using testing::collective_op;
using testing::expect_well_formed;
using testing::iota_group;
using testing::kMiB;
using testing::nodes_of;

// `devices` devices, `per_node` on each node, every one with a NIC of its own.
DeviceTopology rail_nodes(std::size_t devices, std::size_t per_node) {
  DeviceTopology topology = nodes_of(devices, per_node);
  topology.own_nic.assign(devices, true);
  return topology;
}

// How many rings the "ring" entry runs for `c` (CollectiveAlgorithm::channels).
std::size_t ring_channels(const Collective& c, const DeviceTopology& topology) {
  return builtin_collective_algorithms().find("ring")->value->channels(c, topology);
}

using PairBytes = std::map<std::pair<DeviceId, DeviceId>, double>;

PairBytes pair_bytes(const CollectiveExpansion& e) {
  PairBytes bytes;
  for (const CollectiveStep& s : e.steps) bytes[{s.src, s.dst}] += s.size.value();
  return bytes;
}

// Expands `c` on `topology` after checking that it runs in `channels` channels and `steps` steps
// (also as counted without expanding), and that the expansion is well formed.
CollectiveExpansion expand_in_channels(const Collective& c, const DeviceTopology& topology, std::size_t channels,
                                       std::size_t steps) {
  EXPECT_EQ(ring_channels(c, topology), channels);
  EXPECT_EQ(count_collective_steps(c, topology), steps);
  CollectiveExpansion e = expand_collective(c, topology);
  expect_well_formed(e);
  EXPECT_EQ(e.steps.size(), steps);
  return e;
}

// The flow form carries the same bytes per pair as the expansion.
void expect_flows_carry(const Collective& c, const DeviceTopology& topology, const PairBytes& expected) {
  const RouteCostFn cost = [](DeviceId, DeviceId) { return RouteCost{Seconds(0), BytesPerSecond(1e9)}; };
  PairBytes flowed;
  for (const auto& phase : plan_collective_flows(c, topology, cost).phases)
    for (const CollectiveFlow& f : phase) flowed[{f.src, f.dst}] += f.size.value();
  ASSERT_EQ(flowed.size(), expected.size());
  for (const auto& [pair, bytes] : expected) EXPECT_NEAR(flowed.at(pair), bytes, 1e-3);
}

// Two nodes of g GPUs (0…g−1, g…2g−1): what each local rank j sends over the whole collective to the
// other node's rank j+1 (mod g) and to its own node's rank j+1, as {across, within}; 0 where it sends
// nothing.
PairBytes two_node_pairs(DeviceId g, const std::function<std::pair<double, double>(DeviceId)>& sends) {
  PairBytes pairs;
  for (DeviceId node = 0; node < 2; ++node)
    for (DeviceId j = 0; j < g; ++j) {
      const auto [across, within] = sends(j);
      if (across > 0) pairs[{g * node + j, g * (1 - node) + (j + 1) % g}] = across;
      if (within > 0) pairs[{g * node + j, g * node + (j + 1) % g}] = within;
    }
  return pairs;
}

// Two nodes of 4 GPUs (0–3, 4–7), each with its own NIC; an all-gather of S = 64 MiB over the 8.
// p = 8, 7 rounds of S/p = 8 MiB. g = 4 channels, channel c carrying S/g = 16 MiB: per round each
// channel hop moves S/(g·p) = 2 MiB, so over the 7 rounds 14 MiB.
// Channel c visits each node from local rank c: node 0 c, c+1, c+2, c+3 (mod 4), then node 1 the same,
// so it leaves node 0 at local rank c−1 and enters node 1 at local rank c. Local rank j therefore sends
// across only in channel j+1 (14 MiB to the next node's rank j+1) and within its node in the other 3
// (3 × 14 = 42 MiB to its rank j+1). Each GPU's NIC sends 14 MiB and receives 14 MiB; the 4 NICs of
// node 0 send 56 MiB = (p−1)/p · S, all the traffic a single ring (0 … 7) sends from GPU 3's NIC alone.
TEST(CollectiveChannels, BytesPerNicPerChannelOnTwoNodesOfFour) {
  const Collective c = collective_op(CollectiveKind::all_gather, iota_group(8), 64 * kMiB, "ring");
  const DeviceTopology rails = rail_nodes(8, 4);
  // Per round and member: one send across, one within.
  const CollectiveExpansion e = expand_in_channels(c, rails, 4, 2 * 8 * 7);
  // Across: channel j+1; within: the 3 other channels.
  const PairBytes expected = two_node_pairs(4, [](DeviceId) { return std::pair{14 * kMiB, 42 * kMiB}; });
  const PairBytes got = pair_bytes(e);
  ASSERT_EQ(got.size(), expected.size());
  for (const auto& [pair, bytes] : expected)
    EXPECT_NEAR(got.at(pair), bytes, 1e-6) << pair.first << "->" << pair.second;

  expect_flows_carry(c, rails, expected);

  // The single ring: every byte between the nodes leaves through GPU 3 and GPU 7.
  const PairBytes single = pair_bytes(expand_collective(c, nodes_of(8, 4)));
  EXPECT_NEAR(single.at({3, 4}), 56 * kMiB, 1e-6);
  EXPECT_NEAR(single.at({7, 0}), 56 * kMiB, 1e-6);
}

// NIC 50 GB/s between the nodes, NVLink 900 GB/s within, no latency. The channels run at once, so a
// round lasts the slowest hop: across 2 MiB / 50 GB/s = 41.9 µs against within 6 MiB / 900 GB/s =
// 7.0 µs; 7 rounds. The single ring's across hop carries the whole 8 MiB chunk: 4× as long.
TEST(CollectiveChannels, RoundsAreBoundByTheAcrossHopsShare) {
  const Collective c = collective_op(CollectiveKind::all_gather, iota_group(8), 64 * kMiB, "ring");
  const PathCostFn path = [](DeviceId a, DeviceId b) {
    return PathCost{Seconds(0), BytesPerSecond(a / 4 == b / 4 ? 900e9 : 50e9)};
  };
  const double across = 2 * kMiB / 50e9;
  EXPECT_NEAR(collective_time(c, rail_nodes(8, 4), path).value(), 7 * across, 1e-12);
  EXPECT_NEAR(collective_time(c, nodes_of(8, 4), path).value(), 7 * 4 * across, 1e-12);
  // A device sends on two rings at once, which only the flow form runs concurrently.
  EXPECT_EQ(effective_collective_fidelity(c, std::nullopt, rail_nodes(8, 4)), CollectiveFidelity::flow);
  EXPECT_EQ(effective_collective_fidelity(c, std::nullopt, nodes_of(8, 4)), CollectiveFidelity::step);
}

// An LLM step's per-member collective (Collective::alone) is timed on its own member's rotation of the
// group (planners/schedules/step_communication.cpp), and the link recorder counts every member's part in
// one rotation of it. Each rotation's channels pair other members across the nodes ([2, 3, …, 1]: node
// 0's members in group order 2, 3, 0, 1, so 2 → 5, 3 → 6, 0 → 7, 1 → 4), but always one hop per member
// between the same two nodes: 7 rounds of the across hop's 2 MiB, as above, for every rotation.
TEST(CollectiveChannels, EveryRotationOfTheGroupTakesTheSameTime) {
  const PathCostFn path = [](DeviceId a, DeviceId b) {
    return PathCost{Seconds(0), BytesPerSecond(a / 4 == b / 4 ? 900e9 : 50e9)};
  };
  std::vector<DeviceId> group = iota_group(8);
  for (std::size_t r = 0; r < group.size(); ++r) {
    const Collective c = collective_op(CollectiveKind::all_gather, group, 64 * kMiB, "ring");
    EXPECT_NEAR(collective_time(c, rail_nodes(8, 4), path).value(), 7 * 2 * kMiB / 50e9, 1e-12) << "rotation " << r;
    std::rotate(group.begin(), group.begin() + 1, group.end());
  }
}

// One ring stays one ring: inside one node (whatever its NICs), across nodes that share a NIC, one
// member per node, or unequal members per node — the expansion is the group-order ring's.
TEST(CollectiveChannels, OneRingWhereThereIsNothingToSpread) {
  const auto same_as_single = [](const Collective& c, const DeviceTopology& topology, const DeviceTopology& plain) {
    EXPECT_EQ(ring_channels(c, topology), 1u);
    const CollectiveExpansion a = expand_collective(c, topology);
    const CollectiveExpansion b = expand_collective(c, plain);
    ASSERT_EQ(a.steps.size(), b.steps.size());
    for (std::size_t k = 0; k < a.steps.size(); ++k) {
      EXPECT_EQ(a.steps[k].src, b.steps[k].src);
      EXPECT_EQ(a.steps[k].dst, b.steps[k].dst);
      EXPECT_EQ(a.steps[k].size.value(), b.steps[k].size.value());
      EXPECT_EQ(a.steps[k].deps, b.steps[k].deps);
    }
  };
  for (const CollectiveKind kind : {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter}) {
    same_as_single(collective_op(kind, iota_group(8), 64 * kMiB, "ring"), rail_nodes(8, 8), nodes_of(8, 8));
    same_as_single(collective_op(kind, {0, 4}, 64 * kMiB, "ring"), rail_nodes(8, 4), nodes_of(8, 4));
    same_as_single(collective_op(kind, {0, 1, 4}, 64 * kMiB, "ring"), rail_nodes(8, 4), nodes_of(8, 4));
  }
}

// NCCL's cap: at most MAXCHANNELS/2 = 32 rings (src/init.cc, MAXCHANNELS 64 in src/include/device.h).
// Two NVL72-like domains of 64 GPUs (0–63, 64–127), each GPU with its own NIC; an all-gather of
// S = 4 GiB over the 128: p = 128, 127 rounds of S/p = 32 MiB. g = 64 members per node, c = 32
// channels, channel k starting at local rank s_k = ⌊k·64/32⌋ = 2k and carrying S/32. A channel starting
// at an even rank j+1 leaves the previous node at rank j: odd ranks send (S/p)/c = 1 MiB per round to
// the next node (127 MiB over the rounds) and the other 31 MiB within (3,937 MiB); even ranks send the
// whole 32 MiB within (4,064 MiB) and nothing across. Between the nodes: 32 NICs × 127 MiB = 4,064 MiB
// = (p−1)/p · S per node, as with one ring. Steps: per round 128 within + 2 nodes × 32 across.
// Time at NIC 50 GB/s, NVLink 900 GB/s, no latency: an even rank's within hop binds, 32 MiB / 900 GB/s
// against 1 MiB / 50 GB/s: 127 · 37.28 µs.
TEST(CollectiveChannels, NcclsCapOfThirtyTwoRings) {
  const Collective c = collective_op(CollectiveKind::all_gather, iota_group(128), 4096 * kMiB, "ring");
  const DeviceTopology rails = rail_nodes(128, 64);
  const CollectiveExpansion e = expand_in_channels(c, rails, 32, (128 + 2 * 32) * 127);
  const PairBytes expected = two_node_pairs(64, [](DeviceId j) {
    return j % 2 == 1 ? std::pair{127 * kMiB, 31 * 127 * kMiB} : std::pair{0.0, 32 * 127 * kMiB};
  });
  const PairBytes got = pair_bytes(e);
  ASSERT_EQ(got.size(), expected.size());
  for (const auto& [pair, bytes] : expected)
    EXPECT_NEAR(got.at(pair), bytes, 1e-3) << pair.first << "->" << pair.second;

  expect_flows_carry(c, rails, expected);

  const PathCostFn path = [](DeviceId a, DeviceId b) {
    return PathCost{Seconds(0), BytesPerSecond(a / 64 == b / 64 ? 900e9 : 50e9)};
  };
  EXPECT_NEAR(collective_time(c, rails, path).value(), 127 * 32 * kMiB / 900e9, 1e-12);
}

}  // namespace
}  // namespace dnnsim
