// What the collective algorithms say about themselves, which callers ask instead of comparing names:
// the rounds of a ring (the closed-form cost of models/cost/collective_cost) and whether copies of a
// group may mirror it (the symmetric windows of sim/workloads/replica_window).
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "models/program/collective_algorithms.hpp"
#include "tests/support/task_graph_ops.hpp"

namespace dnnsim {
namespace {

using testing::collective_op;
using testing::iota_group;
using testing::nodes_of;

const CollectiveAlgorithm& algorithm(const std::string& name) {
  return *builtin_collective_algorithms().at(name).value;
}

// Patarasuk & Yuan's ring: an all-reduce is a reduce-scatter and an all-gather, p − 1 rounds each;
// with copies the rounds are those of the whole group (4 members standing for 2 copies: p = 8).
TEST(CollectiveCapabilities, RingRoundsAreThoseOfAReduceScatterAndAnAllGather) {
  const CollectiveAlgorithm& ring = algorithm("ring");
  EXPECT_EQ(ring.ring_rounds(collective_op(CollectiveKind::all_reduce, iota_group(4))), 6u);
  EXPECT_EQ(ring.ring_rounds(collective_op(CollectiveKind::all_gather, iota_group(4))), 3u);
  EXPECT_EQ(ring.ring_rounds(collective_op(CollectiveKind::reduce_scatter, iota_group(4))), 3u);
  Collective window = collective_op(CollectiveKind::all_reduce, iota_group(4));
  window.copies = 2;
  EXPECT_EQ(ring.ring_rounds(window), 14u);
  // A broadcast is a pipelined chain, not rounds of neighbour sends.
  EXPECT_EQ(ring.ring_rounds(collective_op(CollectiveKind::broadcast, iota_group(4))), std::nullopt);
}

// Every round of a ring is one send per member, so the step count is members × rounds.
TEST(CollectiveCapabilities, RingStepsAreOneSendPerMemberAndRound) {
  const Collective c = collective_op(CollectiveKind::all_reduce, iota_group(5), 1e6, "ring");
  EXPECT_EQ(expand_collective(c, nodes_of(5, 5)).steps.size(), 5u * *algorithm("ring").ring_rounds(c));
}

TEST(CollectiveCapabilities, OnlyTheRingHasRounds) {
  const Collective c = collective_op(CollectiveKind::all_reduce, iota_group(8));
  for (const std::string name : {"tree", "hierarchical", "direct"})
    EXPECT_EQ(algorithm(name).ring_rounds(c), std::nullopt) << name;
}

// p2p-ring is the ring never split into channels: the same rounds, one channel on any topology (two
// nodes of four GPUs, each with a NIC of its own, where the ring runs four).
TEST(CollectiveCapabilities, ThePointToPointRingHasTheRingsRoundsInOneChannel) {
  const Collective c = collective_op(CollectiveKind::all_gather, iota_group(8));
  DeviceTopology topology = nodes_of(8, 4);
  topology.own_nic.assign(8, true);
  EXPECT_EQ(algorithm("p2p-ring").ring_rounds(c), algorithm("ring").ring_rounds(c));
  EXPECT_EQ(algorithm("ring").channels(c, topology), 4u);
  EXPECT_EQ(algorithm("p2p-ring").channels(c, topology), 1u);
  EXPECT_EQ(algorithm("p2p-ring").ring_hops(c, topology).size(), 8u);
}

// The SPMD planner's lines (planners/spmd/sharding.cpp) share a node's NIC per ring edge leaving it
// for the algorithms that send only to their successor, per member for the others.
TEST(CollectiveCapabilities, OnlyTheRingsFollowTheGroupOrder) {
  for (const std::string name : {"ring", "p2p-ring"}) EXPECT_TRUE(algorithm(name).follows_group_order()) << name;
  for (const std::string name : {"tree", "hierarchical", "direct"})
    EXPECT_FALSE(algorithm(name).follows_group_order()) << name;
}

// A window of copies is exact for the rings (each wraps within the window) and for hierarchical
// (its rings are the window's own nodes); trees and all-pairs exchanges reach across copies.
TEST(CollectiveCapabilities, CopiesMirrorRingsAndHierarchicalAllReducesOnly) {
  EXPECT_TRUE(algorithm("ring").supports_copies(CollectiveKind::all_reduce));
  EXPECT_TRUE(algorithm("hierarchical").supports_copies(CollectiveKind::all_reduce));
  EXPECT_FALSE(algorithm("tree").supports_copies(CollectiveKind::all_reduce));
  EXPECT_FALSE(algorithm("direct").supports_copies(CollectiveKind::all_reduce));
  EXPECT_FALSE(algorithm("ring").supports_copies(CollectiveKind::broadcast));
}

TEST(CollectiveCapabilities, RefusedCopiesListTheAlgorithmsThatHaveAWindow) {
  Collective c = collective_op(CollectiveKind::all_reduce, iota_group(4), 1e6, "tree");
  c.copies = 2;
  try {
    (void)expand_collective(c, nodes_of(4, 4));
    FAIL() << "tree has no window";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("ring (all_reduce, all_gather, reduce_scatter), p2p-ring (all_reduce, "
                                         "all_gather, reduce_scatter) and hierarchical (all_reduce) have one"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace dnnsim
