// Collective algorithms (ring, tree, hierarchical, direct): step counts, bytes per device, dependency
// structure and the no-contention critical path, each derived by hand in the comments
// (docs/collectives.md has the same formulas). The registry, the default rule, the errors and
// symmetric windows: collective_registry_test.cpp.
#include "models/program/collective_algorithms.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/support/collective_expansions.hpp"
#include "tests/support/task_graph_ops.hpp"

namespace dnnsim {
namespace {

using namespace testing;

std::map<DeviceId, double> bytes_received(const CollectiveExpansion& e) {
  std::map<DeviceId, double> received;
  for (const CollectiveStep& s : e.steps) received[s.dst] += s.size.value();
  return received;
}

double total_bytes(const CollectiveExpansion& e) {
  double total = 0;
  for (const CollectiveStep& s : e.steps) total += s.size.value();
  return total;
}

// Which devices' inputs can have reached each device, following only declared dependencies: a step
// carries its sender's input plus whatever its deps delivered to the sender. Bit d = device d.
std::map<DeviceId, std::uint64_t> reached(const CollectiveExpansion& e) {
  std::vector<std::uint64_t> carries(e.steps.size());
  std::map<DeviceId, std::uint64_t> holds;
  for (std::size_t k = 0; k < e.steps.size(); ++k) {
    const CollectiveStep& step = e.steps[k];
    carries[k] = std::uint64_t{1} << step.src;
    for (std::uint32_t dep : step.deps) carries[k] |= carries[dep];
    holds[step.dst] |= carries[k] | (std::uint64_t{1} << step.dst);
  }
  return holds;
}

std::uint64_t mask_of(const std::vector<DeviceId>& group) {
  std::uint64_t mask = 0;
  for (DeviceId d : group) mask |= std::uint64_t{1} << d;
  return mask;
}

// Every member ends up with (a path from) every member's input: necessary for all-reduce,
// all-gather, reduce-scatter and all-to-all.
void expect_all_reach_all(const CollectiveExpansion& e, const std::vector<DeviceId>& group) {
  const auto holds = reached(e);
  for (DeviceId d : group) {
    ASSERT_TRUE(holds.contains(d)) << "device " << d << " receives nothing";
    EXPECT_EQ(holds.at(d), mask_of(group)) << "device " << d;
  }
}

// ------------------------------------------------------------------------------------------------
// ring

TEST(CollectiveRing, AllReduceStepsBytesAndNeighbours) {
  // p = 4 in the group order 5 → 2 → 7 → 0 → 5, S = 1200 B. Reduce-scatter then all-gather:
  // 2(p−1) = 6 rounds, each device sends one chunk of S/p = 300 B per round → 6·4 = 24 steps;
  // each device sends and receives 2(p−1)·S/p = 6·300 = 1800 B.
  const std::vector<DeviceId> group{5, 2, 7, 0};
  const auto e = expand(collective_op(CollectiveKind::all_reduce, group, 1200, "ring"));
  ASSERT_EQ(e.steps.size(), 24u);
  expect_well_formed(e);
  const std::map<DeviceId, DeviceId> next{{5, 2}, {2, 7}, {7, 0}, {0, 5}};
  for (std::size_t k = 0; k < e.steps.size(); ++k) {
    const CollectiveStep& s = e.steps[k];
    EXPECT_EQ(s.dst, next.at(s.src));
    EXPECT_DOUBLE_EQ(s.size.value(), 300.0);
    // Round r = k / 4: round 0 waits for nothing, later rounds for exactly the previous send into
    // the sender, which is in round r−1.
    if (k < 4) {
      EXPECT_TRUE(s.deps.empty());
    } else {
      ASSERT_EQ(s.deps.size(), 1u);
      EXPECT_EQ(s.deps[0] / 4, k / 4 - 1);
    }
  }
  for (DeviceId d : group) {
    EXPECT_DOUBLE_EQ(bytes_sent(e).at(d), 1800.0);
    EXPECT_DOUBLE_EQ(bytes_received(e).at(d), 1800.0);
  }
  expect_all_reach_all(e, group);
}

TEST(CollectiveRing, AllReduceCriticalPathIsPatarasukYuan) {
  // Uniform links, no contention: each of the 2(p−1) rounds is one chunk time α + S/(pB) and round
  // r of a device waits for round r−1 of its predecessor, so T = 2(p−1)(α + S/(pB)).
  for (std::size_t p : {2u, 3u, 8u, 13u}) {
    const double s = 64 * kMiB, alpha = 5e-6, bandwidth = 12.5e9;
    const auto e = expand(collective_op(CollectiveKind::all_reduce, iota_group(p), s, "ring"));
    EXPECT_EQ(e.steps.size(), 2 * (p - 1) * p);
    const double expected = 2.0 * (p - 1) * (alpha + s / (p * bandwidth));
    EXPECT_NEAR(critical_path(e, uniform(alpha, bandwidth)), expected, 1e-12 * expected) << "p=" << p;
  }
}

TEST(CollectiveRing, AllGatherAndReduceScatterAreOnePhase) {
  // p−1 rounds of S/p: p(p−1) steps, (p−1)·S/p per device, T = (p−1)(α + S/(pB)).
  const std::size_t p = 6;
  const double s = 6000, alpha = 1e-6, bandwidth = 1e9;
  for (CollectiveKind kind : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
    const auto e = expand(collective_op(kind, iota_group(p), s, "ring"));
    ASSERT_EQ(e.steps.size(), p * (p - 1));
    expect_well_formed(e);
    for (DeviceId d = 0; d < p; ++d) {
      EXPECT_DOUBLE_EQ(bytes_sent(e).at(d), 5 * 1000.0);
      EXPECT_DOUBLE_EQ(bytes_received(e).at(d), 5 * 1000.0);
    }
    EXPECT_NEAR(critical_path(e, uniform(alpha, bandwidth)), 5 * (alpha + 1000 / bandwidth), 1e-15);
    expect_all_reach_all(e, iota_group(p));
  }
}

TEST(CollectiveRing, BroadcastIsAPipelinedChainFromTheRoot) {
  // p = 4, root 2: chain 2 → 3 → 0 → 1. S = 8 MiB → k = min(4p, ⌈S / 512 KiB⌉) = min(16, 16) = 16
  // chunks of 512 KiB; k(p−1) = 48 steps. Classic pipeline: p−1 + k−1 = 18 chunk times.
  const double s = 8 * kMiB, alpha = 2e-6, bandwidth = 25e9;
  const auto e = expand(collective_op(CollectiveKind::broadcast, {0, 1, 2, 3}, s, "ring", 2));
  ASSERT_EQ(e.steps.size(), 48u);
  expect_well_formed(e);
  const std::map<DeviceId, DeviceId> next{{2, 3}, {3, 0}, {0, 1}};
  for (const CollectiveStep& step : e.steps) {
    EXPECT_EQ(step.dst, next.at(step.src));
    EXPECT_DOUBLE_EQ(step.size.value(), 512 * kKiB);
  }
  EXPECT_DOUBLE_EQ(bytes_sent(e).at(2), s);
  EXPECT_FALSE(bytes_sent(e).contains(1));  // the chain's end forwards nothing
  for (DeviceId d : {0u, 1u, 3u}) EXPECT_DOUBLE_EQ(bytes_received(e).at(d), s);
  EXPECT_FALSE(bytes_received(e).contains(2));
  EXPECT_NEAR(critical_path(e, uniform(alpha, bandwidth)), 18 * (alpha + s / 16 / bandwidth), 1e-15);
  for (const auto& [device, from] : reached(e)) EXPECT_TRUE(from & (1u << 2)) << device;

  // A small payload is not split: ⌈1 KiB / 512 KiB⌉ = 1 chunk, p−1 = 3 steps.
  EXPECT_EQ(expand(collective_op(CollectiveKind::broadcast, {0, 1, 2, 3}, kKiB, "ring", 2)).steps.size(), 3u);
  // A huge one is capped at 4p chunks: 1 GiB over p = 4 → 16 chunks, 48 steps.
  EXPECT_EQ(expand(collective_op(CollectiveKind::broadcast, {0, 1, 2, 3}, kGiB, "ring", 2)).steps.size(), 48u);
}

// ------------------------------------------------------------------------------------------------
// tree

TEST(CollectiveTree, AllReduceOnNcclDoubleBinaryTree) {
  // p = 8 (even → the second tree mirrors the first). NCCL's first tree over ranks:
  //   0 → 4;  4 → 2, 6;  2 → 1, 3;  6 → 5, 7         (odd ranks are leaves)
  // the mirror (rank r at position 7−r):
  //   7 → 3;  3 → 5, 1;  5 → 6, 4;  1 → 2, 0         (even ranks are leaves)
  // S = 1 GiB → k = min(2⌈log2 8⌉, ⌈(S/2)/512 KiB⌉) = 6 chunks of S/12 per tree.
  // Steps: 2 trees × k chunks × (p−1 edges up + p−1 edges down) = 2·6·14 = 168.
  // Bytes: a member sends S/2 up in every tree where it is not the root and S/2 to every child:
  //   ranks 0 and 7 (a root with one child + a leaf): S/2 + S/2 = S;
  //   ranks 1..6 (two children in one tree, leaf in the other): S/2 + S/2 + 2·S/2 = 2S.
  // Received mirrors sent (children's sums up + parent's result down). Total 2(p−1)S = 14S.
  const double s = kGiB;
  const auto e = expand(collective_op(CollectiveKind::all_reduce, iota_group(8), s, "tree"));
  ASSERT_EQ(e.steps.size(), 168u);
  expect_well_formed(e);
  EXPECT_NEAR(total_bytes(e), 14 * s, 1e-12 * s);  // 12ths of S do not add up exactly
  for (DeviceId d = 0; d < 8; ++d) {
    const double expected = d == 0 || d == 7 ? s : 2 * s;
    EXPECT_DOUBLE_EQ(bytes_sent(e).at(d), expected) << d;
    EXPECT_DOUBLE_EQ(bytes_received(e).at(d), expected) << d;
  }
  // The edges are exactly those of the two trees, both ways.
  const std::set<std::pair<DeviceId, DeviceId>> tree_edges{{0, 4}, {4, 2}, {4, 6}, {2, 1}, {2, 3}, {6, 5}, {6, 7},
                                                           {7, 3}, {3, 5}, {3, 1}, {5, 6}, {5, 4}, {1, 2}, {1, 0}};
  for (const CollectiveStep& step : e.steps)
    EXPECT_TRUE(tree_edges.contains({step.src, step.dst}) || tree_edges.contains({step.dst, step.src}))
        << step.src << "→" << step.dst;
  expect_all_reach_all(e, iota_group(8));
}

TEST(CollectiveTree, EveryMemberIsInteriorInAtMostOneTree) {
  // Sanders et al.'s complementarity: whatever p (mirror for even, shift for odd), no member sends
  // more than 2 × S/2 downwards plus S/2 up per tree, so ≤ 2S in all, and all reach all.
  for (std::size_t p : {2u, 3u, 5u, 6u, 7u, 12u, 13u, 33u}) {
    const double s = 4 * kMiB;
    const auto e = expand(collective_op(CollectiveKind::all_reduce, iota_group(p), s, "tree"));
    expect_well_formed(e);
    EXPECT_NEAR(total_bytes(e), 2.0 * (p - 1) * s, 1e-12 * s) << p;
    for (const auto& [device, sent] : bytes_sent(e)) EXPECT_LE(sent, 2 * s + 1e-6) << "p=" << p << " device " << device;
    expect_all_reach_all(e, iota_group(p));
  }
}

TEST(CollectiveTree, LatencyGrowsWithDepthNotWithP) {
  // A 1 KiB all-reduce is one chunk per tree (⌈512 B / 512 KiB⌉ = 1): 4(p−1) steps. On latency
  // alone (B = ∞) a ring needs 2(p−1)α = 126α for p = 64. The tree's chunk goes up and down a tree
  // of depth ⌈log2 64⌉ = 6, so T ≥ 12α; each hop may wait behind the sender's other sends of the
  // same slot (at most 2: one tree's up, the other's two downs), so T ≤ 3·12α — a third of the ring.
  const std::size_t p = 64;
  const double alpha = 1e-6;
  auto latency_only = [&](const CollectiveStep&) { return alpha; };
  const auto tree = expand(collective_op(CollectiveKind::all_reduce, iota_group(p), kKiB, "tree"));
  EXPECT_EQ(tree.steps.size(), 4 * (p - 1));
  const double t_tree = critical_path(tree, latency_only);
  EXPECT_GE(t_tree, 12 * alpha - 1e-15);
  EXPECT_LE(t_tree, 36 * alpha + 1e-15);
  const auto ring = expand(collective_op(CollectiveKind::all_reduce, iota_group(p), kKiB, "ring"));
  EXPECT_NEAR(critical_path(ring, latency_only), 2.0 * (p - 1) * alpha, 1e-15);
}

TEST(CollectiveTree, BandwidthIsCloseToTwoS) {
  // On bandwidth alone (α = 0), a member sends at most 2S one send after another, so T ≥ 2S/B; the
  // pipeline fill adds about 2·depth chunk times of S/(2k) each: with p = 16, depth 4, k = 8,
  // T ≤ 2S/B + 2·4·(S/16)/B = 2.5 S/B.
  const double s = kGiB, bandwidth = 10e9;
  const auto e = expand(collective_op(CollectiveKind::all_reduce, iota_group(16), s, "tree"));
  const double t = critical_path(e, uniform(0, bandwidth));
  EXPECT_GE(t, 2 * s / bandwidth * (1 - 1e-12));
  EXPECT_LE(t, 2.5 * s / bandwidth);
}

TEST(CollectiveTree, BroadcastFeedsTwoTreesFromTheRoot) {
  // p = 8, root 3: the other 7 members form the double tree; the root sends each half to one tree
  // root, chunk by chunk. k = min(2⌈log2 8⌉, ⌈(S/2)/512 KiB⌉) = 6 for S = 1 GiB.
  // Steps: 2 trees × k chunks × (1 from the root + 6 tree edges) = 2·6·7 = 84.
  // Every non-root member receives both halves (S); the root sends S; a member is interior in at
  // most one tree (two children, S/2 each), so it sends at most S.
  const double s = kGiB;
  const auto e = expand(collective_op(CollectiveKind::broadcast, iota_group(8), s, "tree", 3));
  ASSERT_EQ(e.steps.size(), 84u);
  expect_well_formed(e);
  EXPECT_DOUBLE_EQ(bytes_sent(e).at(3), s);
  EXPECT_FALSE(bytes_received(e).contains(3));
  for (DeviceId d = 0; d < 8; ++d) {
    if (d == 3) continue;
    EXPECT_DOUBLE_EQ(bytes_received(e).at(d), s) << d;
    EXPECT_LE(bytes_sent(e)[d], s) << d;
  }
  for (const auto& [device, from] : reached(e)) EXPECT_TRUE(from & (1u << 3)) << device;
  // Two members: both halves go straight from the root: 2 trees × k chunks, k = 2⌈log2 2⌉ = 2.
  EXPECT_EQ(expand(collective_op(CollectiveKind::broadcast, {4, 9}, s, "tree", 9)).steps.size(), 4u);
}

// ------------------------------------------------------------------------------------------------
// hierarchical

TEST(CollectiveHierarchical, TwoNodesOfFourGpus) {
  // n = 2 nodes × g = 4 GPUs, the group interleaving the nodes: node 0 = {0,1,2,3}, node 1 =
  // {4,5,6,7}; local rank = index on the node = d mod 4.
  //   1. intra-node ring reduce-scatter: n·g·(g−1) = 24 steps of S/g;
  //   2. inter-node ring all-reduce of S/g per local rank: g·n·2(n−1) = 16 steps of S/(g·n);
  //   3. intra-node ring all-gather: 24 steps of S/g.
  // Total 64 = 2p(n+g−2). Per device: 2(g−1)·S/g + 2(n−1)·S/(g·n) = 6S/4 + S/4 = 7S/4, the ring's
  // 2(p−1)/p·S; across nodes only 2(n−1)/n·S/g = S/4.
  const double s = 8 * kMiB;
  const std::vector<DeviceId> group{0, 4, 1, 5, 2, 6, 3, 7};
  const DeviceTopology topology = nodes_of(8, 4);
  const auto e = expand(collective_op(CollectiveKind::all_reduce, group, s, "hierarchical"), topology);
  ASSERT_EQ(e.steps.size(), 64u);
  expect_well_formed(e);
  auto node = [&](DeviceId d) { return topology.node_of_device.at(d); };
  std::map<DeviceId, double> across;
  for (std::size_t k = 0; k < e.steps.size(); ++k) {
    const CollectiveStep& step = e.steps[k];
    if (k < 24 || k >= 40) {
      EXPECT_EQ(node(step.src), node(step.dst)) << "phase 1/3 step " << k << " crosses nodes";
      EXPECT_DOUBLE_EQ(step.size.value(), s / 4);
    } else {
      EXPECT_NE(node(step.src), node(step.dst)) << "phase 2 step " << k;
      EXPECT_EQ(step.src % 4, step.dst % 4) << "phase 2 step " << k << " between different local ranks";
      EXPECT_DOUBLE_EQ(step.size.value(), s / 8);
      across[step.src] += step.size.value();
    }
  }
  for (DeviceId d : group) {
    EXPECT_DOUBLE_EQ(bytes_sent(e).at(d), 7 * s / 4) << d;
    EXPECT_DOUBLE_EQ(bytes_received(e).at(d), 7 * s / 4) << d;
    EXPECT_DOUBLE_EQ(across.at(d), 2.0 * (2 - 1) / 2 * s / 4) << d;
  }
  expect_all_reach_all(e, group);
}

TEST(CollectiveHierarchical, CriticalPathAddsTheThreePhases) {
  // Intra-node links (α_i, B_i), inter-node links (α_e, B_e), no contention. Each phase is a ring
  // whose rounds chain through the previous phase's last round into the sender:
  //   T = 2(g−1)(α_i + S/(g·B_i)) + 2(n−1)(α_e + S/(g·n·B_e)).
  const std::size_t n = 3, g = 4;
  const double s = 96 * kMiB, alpha_i = 1e-6, b_i = 150e9, alpha_e = 5e-6, b_e = 12.5e9;
  const DeviceTopology topology = nodes_of(n * g, g);
  const auto e = expand(collective_op(CollectiveKind::all_reduce, iota_group(n * g), s, "hierarchical"), topology);
  EXPECT_EQ(e.steps.size(), 2 * n * g * (n + g - 2));
  const double t = critical_path(e, [&](const CollectiveStep& step) {
    const bool same = topology.node_of_device[step.src] == topology.node_of_device[step.dst];
    return same ? alpha_i + step.size.value() / b_i : alpha_e + step.size.value() / b_e;
  });
  const double expected = 2.0 * (g - 1) * (alpha_i + s / (g * b_i)) + 2.0 * (n - 1) * (alpha_e + s / (g * n * b_e));
  EXPECT_NEAR(t, expected, 1e-12 * expected);
}

TEST(CollectiveHierarchical, DegenerateShapesAreRings) {
  // One node (n = 1): phases 1 and 3 only, 2·g·(g−1) steps = the ring's. One GPU per node (g = 1):
  // phase 2 only, 2·n·(n−1) steps.
  EXPECT_EQ(expand(collective_op(CollectiveKind::all_reduce, iota_group(4), 1e6, "hierarchical"), nodes_of(4, 4))
                .steps.size(),
            24u);
  EXPECT_EQ(expand(collective_op(CollectiveKind::all_reduce, iota_group(4), 1e6, "hierarchical"), nodes_of(4, 1))
                .steps.size(),
            24u);
}

// ------------------------------------------------------------------------------------------------
// direct

TEST(CollectiveDirect, AllReduceIsTwoAllPairsPhases) {
  // p = 4: reduce-scatter p(p−1) = 12 independent steps of S/p, then all-gather 12 steps of S/p,
  // each waiting for the p−1 = 3 phase-1 steps into its sender (its shard is then reduced).
  // Per device 2(p−1)·S/p. Uniform links, sends of a device one after another: a device's 3
  // phase-1 sends end at 3t, as do the 3 into it, then 3 more: T = 2(p−1)(α + S/(pB)), the ring's.
  const double s = 4000, alpha = 1e-6, bandwidth = 1e9;
  const auto e = expand(collective_op(CollectiveKind::all_reduce, iota_group(4), s, "direct"));
  ASSERT_EQ(e.steps.size(), 24u);
  expect_well_formed(e);
  for (std::size_t k = 0; k < 24; ++k) {
    EXPECT_DOUBLE_EQ(e.steps[k].size.value(), 1000.0);
    EXPECT_EQ(e.steps[k].deps.size(), k < 12 ? 0u : 3u) << k;
  }
  for (DeviceId d = 0; d < 4; ++d) EXPECT_DOUBLE_EQ(bytes_sent(e).at(d), 6000.0);
  EXPECT_NEAR(critical_path(e, uniform(alpha, bandwidth)), 6 * (alpha + 1000 / bandwidth), 1e-15);
  expect_all_reach_all(e, iota_group(4));
}

TEST(CollectiveDirect, OnePhaseKindsAndBroadcast) {
  // all_to_all, all_gather, reduce_scatter: p(p−1) = 20 independent steps of S/p for p = 5; in
  // round r device i sends to i+r, so each device sends to and receives from every peer once.
  for (CollectiveKind kind : {CollectiveKind::all_to_all, CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
    const auto e = expand(collective_op(kind, iota_group(5), 5000, "direct"));
    ASSERT_EQ(e.steps.size(), 20u);
    std::set<std::pair<DeviceId, DeviceId>> pairs;
    for (const CollectiveStep& step : e.steps) {
      EXPECT_TRUE(step.deps.empty());
      EXPECT_DOUBLE_EQ(step.size.value(), 1000.0);
      pairs.insert({step.src, step.dst});
    }
    EXPECT_EQ(pairs.size(), 20u);
    for (std::size_t r = 0; r < 4; ++r)  // round r + 1: i → i + r + 1, everyone receives once
      for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(e.steps[5 * r + i].dst, (i + r + 1) % 5);
  }
  // broadcast: p−1 = 4 sends of S from the root.
  const auto b = expand(collective_op(CollectiveKind::broadcast, iota_group(5), 5000, "direct", 2));
  ASSERT_EQ(b.steps.size(), 4u);
  for (const CollectiveStep& step : b.steps) {
    EXPECT_EQ(step.src, 2u);
    EXPECT_DOUBLE_EQ(step.size.value(), 5000.0);
  }
}

}  // namespace
}  // namespace dnnsim
