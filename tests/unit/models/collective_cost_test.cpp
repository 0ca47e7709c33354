// Analytical collective costs: the uniform-link formulas of docs/collectives.md, the slowest-edge
// rule on heterogeneous rings, and agreement between the closed forms and the longest path through
// the expansion they summarise. Each expectation is derived in its comment.
#include "models/cost/collective_cost.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "models/common/diagnostics.hpp"
#include "tests/support/task_graph_ops.hpp"

namespace dnnsim {
namespace {

using testing::collective_op;

using testing::kGiB;
using testing::kKiB;
using testing::kMiB;

using testing::iota_group;
using testing::nodes_of;

const DeviceTopology kOneNode = nodes_of(64, 64);

// Every pair of devices joined by the same latency and bandwidth.
PathCostFn uniform_paths(double alpha, double bandwidth) {
  return [=](DeviceId, DeviceId) { return PathCost{Seconds(alpha), BytesPerSecond(bandwidth)}; };
}

double time_of(const Collective& c, const PathCostFn& path, const DeviceTopology& topology = kOneNode) {
  return collective_time(c, topology, path).value();
}

// The same collective costed on its expansion, bypassing any closed form.
double critical_path_of(const Collective& c, const PathCostFn& path, const DeviceTopology& topology = kOneNode) {
  return expansion_time(expand_collective(c, topology), path).value();
}

TEST(CollectiveCost, PointToPointIsHockney) {
  // α + S/β: 5 us + 1 GB / 10 GB/s = 0.100005 s; an empty message costs the latency alone.
  const PathCost path{Seconds(5e-6), BytesPerSecond(10e9)};
  EXPECT_DOUBLE_EQ(point_to_point_time(Bytes(1e9), path).value(), 0.1 + 5e-6);
  EXPECT_DOUBLE_EQ(point_to_point_time(Bytes(0), path).value(), 5e-6);
}

TEST(CollectiveCost, RingAllReduceIsPatarasukYuan) {
  // 2(p−1)(α + S/(pB)), for the collective, the closed-form helper and the expansion alike.
  const double s = 64 * kMiB, alpha = 5e-6, bandwidth = 12.5e9;
  for (std::size_t p : {2u, 3u, 8u, 13u}) {
    const Collective c = collective_op(CollectiveKind::all_reduce, iota_group(p), s, "ring");
    const double expected = 2.0 * (p - 1) * (alpha + s / (p * bandwidth));
    EXPECT_NEAR(time_of(c, uniform_paths(alpha, bandwidth)), expected, 1e-12 * expected) << "p=" << p;
    EXPECT_NEAR(critical_path_of(c, uniform_paths(alpha, bandwidth)), expected, 1e-12 * expected) << "p=" << p;
    EXPECT_NEAR(
        ring_all_reduce_time(Bytes(s), static_cast<int>(p), {Seconds(alpha), BytesPerSecond(bandwidth)}).value(),
        expected, 1e-12 * expected);
  }
}

TEST(CollectiveCost, RingAllGatherAndReduceScatterAreOnePhase) {
  // (p−1)(α + S/(pB)): p = 6, S = 6000 B, 1 GB/s, 1 us: 5 · (1 us + 1 us) = 10 us.
  for (CollectiveKind kind : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
    const Collective c = collective_op(kind, iota_group(6), 6000, "ring");
    EXPECT_NEAR(time_of(c, uniform_paths(1e-6, 1e9)), 10e-6, 1e-15);
    EXPECT_NEAR(critical_path_of(c, uniform_paths(1e-6, 1e9)), 10e-6, 1e-15);
  }
  EXPECT_NEAR(ring_all_gather_time(Bytes(6000), 6, {Seconds(1e-6), BytesPerSecond(1e9)}).value(), 10e-6, 1e-15);
}

TEST(CollectiveCost, RingBroadcastIsAPipelinedChain) {
  // k = min(4p, ⌈S / 512 KiB⌉) chunks down a chain of p members: (p + k − 2)(α + S/(kB)).
  // p = 4, S = 8 MiB: k = 16, 18 chunk times. S = 1 KiB: k = 1, (p − 1) whole-message times.
  const double alpha = 2e-6, bandwidth = 25e9;
  const auto bcast = [](double s) { return collective_op(CollectiveKind::broadcast, {0, 1, 2, 3}, s, "ring", 2); };
  EXPECT_NEAR(time_of(bcast(8 * kMiB), uniform_paths(alpha, bandwidth)), 18 * (alpha + 8 * kMiB / 16 / bandwidth),
              1e-15);
  EXPECT_NEAR(time_of(bcast(kKiB), uniform_paths(alpha, bandwidth)), 3 * (alpha + kKiB / bandwidth), 1e-15);
}

TEST(CollectiveCost, DirectFormulasOnUniformLinks) {
  // A device's sends run one after another: all_to_all, all_gather, reduce_scatter (p−1)(α + S/(pB));
  // all_reduce twice that; broadcast: the root sends S to each of p−1 peers, (p−1)(α + S/B).
  const std::size_t p = 8;
  const double s = 80e6, alpha = 3e-6, bandwidth = 50e9;
  const double round = alpha + s / p / bandwidth;
  for (CollectiveKind kind : {CollectiveKind::all_to_all, CollectiveKind::all_gather, CollectiveKind::reduce_scatter})
    EXPECT_NEAR(time_of(collective_op(kind, iota_group(p), s, "direct"), uniform_paths(alpha, bandwidth)), 7 * round,
                1e-15);
  EXPECT_NEAR(
      time_of(collective_op(CollectiveKind::all_reduce, iota_group(p), s, "direct"), uniform_paths(alpha, bandwidth)),
      14 * round, 1e-15);
  EXPECT_NEAR(
      time_of(collective_op(CollectiveKind::broadcast, iota_group(p), s, "direct", 5), uniform_paths(alpha, bandwidth)),
      7 * (alpha + s / bandwidth), 1e-15);
}

TEST(CollectiveCost, TreeAllReduceMatchesTheDocumentedCriticalPath) {
  // docs/collectives.md measured the no-contention critical path of the double binary tree with
  // S = 1 GiB, p = 16: 2.25 S/B on bandwidth alone (α = 0: k = 8 chunks of 64 MiB per half; a
  // member sends 2S, plus 2 fill chunk times of S/16 each) and 36α on latency alone (B = ∞).
  const Collective c = collective_op(CollectiveKind::all_reduce, iota_group(16), kGiB, "tree");
  const double bandwidth = 10e9, alpha = 1e-6;
  EXPECT_NEAR(time_of(c, uniform_paths(0, bandwidth)), 2.25 * kGiB / bandwidth, 1e-9);
  EXPECT_NEAR(time_of(c, uniform_paths(alpha, INFINITY)), 36 * alpha, 1e-15);
  // It is never below the bandwidth bound 2S/B, nor below one trip up and down a tree of depth 4.
  EXPECT_GE(time_of(c, uniform_paths(alpha, bandwidth)), 2 * kGiB / bandwidth);
}

TEST(CollectiveCost, TreeBroadcastCostsAboutSOverB) {
  // p = 8, S = 1 GiB, k = 6 chunks of S/12 per half: the root sends S (12 chunk times); the last
  // chunk then crosses the deepest tree (depth 2 below its root over 7 members), each hop possibly
  // behind one other send of the forwarding member: 12 ≤ T/(S/(12B)) ≤ 12 + 2·3.
  const Collective c = collective_op(CollectiveKind::broadcast, iota_group(8), kGiB, "tree", 3);
  const double chunk_time = kGiB / 12 / 10e9;
  const double t = time_of(c, uniform_paths(0, 10e9));
  EXPECT_GE(t, 12 * chunk_time * (1 - 1e-12));
  EXPECT_LE(t, 18 * chunk_time * (1 + 1e-12));
}

TEST(CollectiveCost, HierarchicalIsTheSumOfItsPhases) {
  // 4 nodes × 8: intra (α_in, B_in) inside a node, (α_out, B_out) across.
  //   2(g−1)(α_in + S/(gB_in)) + 2(n−1)(α_out + S/(gnB_out))
  // = 14 (2 us + 256 MiB/(8 · 200 GB/s)) + 6 (10 us + 256 MiB/(32 · 12.5 GB/s)).
  const DeviceTopology topology = nodes_of(32, 8);
  const PathCost intra{Seconds(2e-6), BytesPerSecond(200e9)};
  const PathCost inter{Seconds(10e-6), BytesPerSecond(12.5e9)};
  const PathCostFn path = [&](DeviceId a, DeviceId b) {
    return topology.node_of_device[a] == topology.node_of_device[b] ? intra : inter;
  };
  const double s = 256 * kMiB;
  const double expected = 14 * (2e-6 + s / (8 * 200e9)) + 6 * (10e-6 + s / (32 * 12.5e9));
  const Collective c = collective_op(CollectiveKind::all_reduce, iota_group(32), s, "hierarchical");
  EXPECT_NEAR(time_of(c, path, topology), expected, 1e-12 * expected);
  EXPECT_NEAR(hierarchical_all_reduce_time(Bytes(s), 4, 8, intra, inter).value(), expected, 1e-12 * expected);
  // The default rule picks it for an all-reduce over whole nodes.
  EXPECT_NEAR(time_of(collective_op(CollectiveKind::all_reduce, iota_group(32), s), path, topology), expected,
              1e-12 * expected);
}

TEST(CollectiveCost, OneSlowEdgeBoundsTheWholeRing) {
  // p = 4, edge 2 → 3 at B/4, all others at B: every one of the 2(p−1) rounds waits for it,
  //   T = 2(p−1)(α + S/(p · B/4)),
  // and the longest path through the expansion agrees with the closed form.
  const double s = 400e6, alpha = 2e-6, bandwidth = 100e9;
  const PathCostFn path = [&](DeviceId a, DeviceId b) {
    return PathCost{Seconds(alpha), BytesPerSecond(a == 2 && b == 3 ? bandwidth / 4 : bandwidth)};
  };
  const Collective c = collective_op(CollectiveKind::all_reduce, {0, 1, 2, 3}, s, "ring");
  const double expected = 6 * (alpha + s / (4 * bandwidth / 4));
  EXPECT_NEAR(time_of(c, path), expected, 1e-12 * expected);
  EXPECT_NEAR(critical_path_of(c, path), expected, 1e-12 * expected);
  EXPECT_NEAR(ring_all_reduce_time(Bytes(s), 4, {Seconds(alpha), BytesPerSecond(bandwidth / 4)}).value(), expected,
              1e-12 * expected);
}

TEST(CollectiveCost, RingClosedFormEqualsItsExpansionOnMixedLinks) {
  // Every edge different (latency and bandwidth): the closed form rounds · max_e t_e must equal the
  // longest path through the expansion, for every ring kind and a group in a scrambled order.
  const std::vector<DeviceId> group{3, 0, 6, 1, 5, 2, 4};
  const PathCostFn path = [](DeviceId a, DeviceId b) {
    return PathCost{Seconds(1e-6 * (1 + (a * 7 + b) % 5)), BytesPerSecond(1e9 * (1 + (a * 3 + b * 5) % 11))};
  };
  for (double s : {1e3, 1e9})
    for (CollectiveKind kind :
         {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
      const Collective c = collective_op(kind, group, s, "ring");
      const double analytical = time_of(c, path);
      EXPECT_NEAR(analytical, critical_path_of(c, path), 1e-12 * analytical) << collective_kind_name(kind) << " " << s;
    }
}

TEST(CollectiveCost, SlowLinkInAPipelinedChainCostsItsChunksOnce) {
  // Ring broadcast over a chain with per-edge times t_j: chunk c leaves member j after chunk c−1 did
  // and after it arrived, so T = Σ_j t_j + (k − 1) · max_j t_j. p = 4, S = 8 MiB, k = 16 chunks of
  // 512 KiB, no latency; edges 0→1 and 2→3 at B, 1→2 at B/2.
  const double bandwidth = 10e9, chunk = 512 * kKiB;
  const PathCostFn path = [&](DeviceId a, DeviceId) {
    return PathCost{Seconds(0), BytesPerSecond(a == 1 ? bandwidth / 2 : bandwidth)};
  };
  const Collective c = collective_op(CollectiveKind::broadcast, {0, 1, 2, 3}, 8 * kMiB, "ring", 0);
  const double expected = (chunk / bandwidth) * 2 + (chunk / (bandwidth / 2)) * (1 + 15);
  EXPECT_NEAR(time_of(c, path), expected, 1e-12 * expected);
}

TEST(CollectiveCost, SmallGroups) {
  const PathCostFn path = uniform_paths(1e-6, 1e9);
  // p = 1 moves nothing, whatever the algorithm.
  for (const char* algorithm : {"ring", "tree", "direct", ""})
    EXPECT_EQ(time_of(collective_op(CollectiveKind::all_reduce, {4}, 1e6, algorithm), path), 0.0) << algorithm;
  EXPECT_EQ(ring_all_reduce_time(Bytes(1e6), 1, {Seconds(1e-6), BytesPerSecond(1e9)}).value(), 0.0);
  EXPECT_EQ(ring_all_gather_time(Bytes(1e6), 1, {Seconds(1e-6), BytesPerSecond(1e9)}).value(), 0.0);
  // p = 2: the ring all-reduce is 2 exchanges of S/2: 2 (1 us + 0.5 ms).
  EXPECT_NEAR(time_of(collective_op(CollectiveKind::all_reduce, {0, 1}, 1e6, "ring"), path), 2 * (1e-6 + 5e-4), 1e-15);
  // p = 2 direct all_to_all: one send of S/2 each way at once.
  EXPECT_NEAR(time_of(collective_op(CollectiveKind::all_to_all, {0, 1}, 1e6), path), 1e-6 + 5e-4, 1e-15);
  // p = 2 tree all-reduce: each tree is one edge (root and one leaf); k = 1 chunk of S/2 per tree
  // (⌈0.5 MB / 512 KiB⌉ = 1, cap 2⌈log2 2⌉ = 2): up then down in each tree, each member sending
  // once per tree per direction: 2 sends per member, both trees in parallel → 2 (α + S/(2B)).
  EXPECT_NEAR(time_of(collective_op(CollectiveKind::all_reduce, {0, 1}, 1e6, "tree"), path), 2 * (1e-6 + 5e-4), 1e-15);
  // Hierarchical with one node is its intra-node ring; with one device per node, the inter-node ring.
  const PathCost intra{Seconds(1e-6), BytesPerSecond(1e9)};
  EXPECT_NEAR(hierarchical_all_reduce_time(Bytes(1e6), 1, 4, intra, intra).value(),
              ring_all_reduce_time(Bytes(1e6), 4, intra).value(), 1e-15);
  EXPECT_NEAR(hierarchical_all_reduce_time(Bytes(1e6), 4, 1, intra, intra).value(),
              ring_all_reduce_time(Bytes(1e6), 4, intra).value(), 1e-15);
}

TEST(CollectiveCost, ErrorsAreTheExpansionsOwn) {
  const PathCostFn path = uniform_paths(1e-6, 1e9);
  EXPECT_THROW((void)time_of(collective_op(CollectiveKind::all_to_all, iota_group(4), 1e6, "ring"), path), InputError);
  EXPECT_THROW((void)time_of(collective_op(CollectiveKind::all_reduce, iota_group(4), 1e6, "rnig"), path), InputError);
  // Hierarchical with 3 members on node 0 and 1 on node 1.
  EXPECT_THROW(
      (void)time_of(collective_op(CollectiveKind::all_reduce, {0, 1, 2, 4}, 1e6, "hierarchical"), path, nodes_of(8, 4)),
      InputError);
}

// Shared-ingress (fluid) model: hand-built expansions whose times follow from max-min sharing.
CollectiveExpansion steps_of(std::vector<CollectiveStep> steps) { return CollectiveExpansion{std::move(steps)}; }

CollectiveCostOptions ingress_of(double bandwidth) {
  CollectiveCostOptions options;
  options.shared_ingress = [=](DeviceId) { return BytesPerSecond(bandwidth); };
  return options;
}

TEST(CollectiveCost, TwoStepsIntoOneDeviceShareItsIngress) {
  // 0 → 2 and 1 → 2 at once, S each, ingress B, α: both transfer at B/2 after their latency:
  // α + 2S/B. Without the model each sees its path alone: α + S/B.
  const double s = 1e9, bandwidth = 10e9, alpha = 1e-6;
  const auto e = steps_of({{0, 2, Bytes(s), {}}, {1, 2, Bytes(s), {}}});
  EXPECT_NEAR(expansion_time(e, uniform_paths(alpha, bandwidth), ingress_of(bandwidth)).value(),
              alpha + 2 * s / bandwidth, 1e-12);
  EXPECT_NEAR(expansion_time(e, uniform_paths(alpha, bandwidth)).value(), alpha + s / bandwidth, 1e-12);
}

TEST(CollectiveCost, IngressSharingIsMaxMinFair) {
  // Into device 2, ingress B: step a (from 0) capped by its path at B/4 carries S/4; step b (from 1)
  // carries S. a keeps B/4 and b gets the other 3B/4 until a ends at (S/4)/(B/4) = S/B; b has moved
  // 3S/4 by then and moves the last S/4 at B: it ends at 1.25 S/B.
  const double s = 1e9, bandwidth = 10e9;
  const PathCostFn path = [&](DeviceId src, DeviceId) {
    return PathCost{Seconds(0), BytesPerSecond(src == 0 ? bandwidth / 4 : bandwidth)};
  };
  const auto e = steps_of({{0, 2, Bytes(s / 4), {}}, {1, 2, Bytes(s), {}}});
  EXPECT_NEAR(expansion_time(e, path, ingress_of(bandwidth)).value(), 1.25 * s / bandwidth, 1e-12);
}

TEST(CollectiveCost, LatencyTakesNoBandwidth) {
  // a (0 → 2, α = 0) and b (1 → 2, α = S/(2B)), S each, ingress B. a runs alone at B until b's
  // latency ends at S/(2B) (a has S/2 left), then both at B/2: a ends S/B later, at 1.5 S/B, when b
  // has moved S/2; b's last S/2 at B ends at 2 S/B — the ingress was busy from 0 to the end.
  const double s = 1e9, bandwidth = 10e9;
  const PathCostFn path = [&](DeviceId src, DeviceId) {
    return PathCost{Seconds(src == 0 ? 0 : s / (2 * bandwidth)), BytesPerSecond(bandwidth)};
  };
  const auto e = steps_of({{0, 2, Bytes(s), {}}, {1, 2, Bytes(s), {}}});
  EXPECT_NEAR(expansion_time(e, path, ingress_of(bandwidth)).value(), 2 * s / bandwidth, 1e-12);
}

TEST(CollectiveCost, SharedIngressKeepsStreamOrderAndDeps) {
  // 0 sends to 1 then to 2 (its stream runs them in turn), and 2 → 3 waits for the step into 2:
  // three steps back to back, no receiver ever shared: 3(α + S/B), with or without the model.
  const double s = 1e6, bandwidth = 1e9, alpha = 1e-6;
  const auto e = steps_of({{0, 1, Bytes(s), {}}, {0, 2, Bytes(s), {}}, {2, 3, Bytes(s), {1}}});
  EXPECT_NEAR(expansion_time(e, uniform_paths(alpha, bandwidth), ingress_of(bandwidth)).value(),
              3 * (alpha + s / bandwidth), 1e-15);
  EXPECT_NEAR(expansion_time(e, uniform_paths(alpha, bandwidth)).value(), 3 * (alpha + s / bandwidth), 1e-15);
}

TEST(CollectiveCost, SharedIngressChangesNothingWithoutIncast) {
  // Ring and direct members receive from one peer at a time on uniform links: the fluid model gives
  // their formulas. The tree's parents receive two children at once, so there it costs more.
  const std::size_t p = 8;
  const double s = 256 * kMiB, alpha = 2e-6, bandwidth = 100e9;
  const double round = alpha + s / p / bandwidth;
  const CollectiveCostOptions shared = ingress_of(bandwidth);
  const auto with = [&](CollectiveKind kind, const char* algorithm, const CollectiveCostOptions& options) {
    return collective_time(collective_op(kind, iota_group(p), s, algorithm, 3), kOneNode,
                           uniform_paths(alpha, bandwidth), options)
        .value();
  };
  EXPECT_NEAR(with(CollectiveKind::all_to_all, "direct", shared), 7 * round, 1e-12);
  EXPECT_NEAR(with(CollectiveKind::all_reduce, "direct", shared), 14 * round, 1e-12);
  EXPECT_NEAR(with(CollectiveKind::all_reduce, "ring", shared), 14 * round, 1e-12);
  EXPECT_NEAR(with(CollectiveKind::broadcast, "ring", shared), with(CollectiveKind::broadcast, "ring", {}), 1e-12);
  EXPECT_GT(with(CollectiveKind::all_reduce, "tree", shared), 1.2 * with(CollectiveKind::all_reduce, "tree", {}));
  // The ingress bounds the tree from below: a member interior in one tree receives S/2 from each of
  // its two children and S/2 from its parent there, and S/2 from its parent in the other tree: 2S
  // through an ingress of B, whatever the schedule.
  EXPECT_GE(with(CollectiveKind::all_reduce, "tree", shared), 2 * s / bandwidth);
}

// A compute of C = 10 s and a communication of O seconds, the communication taking f = 0.2 of the GPU:
//  - O = 4: 4 s at 0.8 leave 10 − 3.2 = 6.8 s of work, done at 4 + 6.8 = 10.8 = C + f·O;
//  - O = 20: the compute runs at 0.8 throughout, 12.5 s = C/(1 − f), before the communication's 20;
//  - O = 12: 12.5 s ≥ 12 would hold if all of it were under the communication, but the communication
//    ends at 12 with 10 − 9.6 = 0.4 s of work left: 12.4 = C + f·O;
//  - f = 0: max(C, O).
TEST(CollectiveCost, OverlappedSpanSlowsTheComputeByTheShare) {
  EXPECT_NEAR(overlapped_span(Seconds(10), Seconds(4), 0.2).value(), 10.8, 1e-12);
  EXPECT_NEAR(overlapped_span(Seconds(10), Seconds(20), 0.2).value(), 20, 1e-12);
  EXPECT_NEAR(overlapped_span(Seconds(10), Seconds(12), 0.2).value(), 12.4, 1e-12);
  EXPECT_NEAR(overlapped_span(Seconds(10), Seconds(13), 0.2).value(), 13, 1e-12);  // 12.5 < 13
  EXPECT_NEAR(overlapped_span(Seconds(10), Seconds(4), 0).value(), 10, 1e-12);
  EXPECT_NEAR(overlapped_span(Seconds(3), Seconds(4), 0).value(), 4, 1e-12);
}

}  // namespace
}  // namespace dnnsim
