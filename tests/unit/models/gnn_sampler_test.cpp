#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "models/gnn/sampler.hpp"
#include "tests/support/options.hpp"

namespace dnnsim::gnn {
namespace {

// 0 is a hub joined to 1, 2, 3; 3 continues to 4.
CsrGraph small_graph() { return build_csr(5, {{0, 1}, {0, 2}, {0, 3}, {3, 4}}); }

MiniBatch run(const char* sampler, const CsrGraph& graph, std::vector<NodeId> seeds, std::vector<std::uint32_t> fanouts,
              Rng& rng) {
  SamplerWorkspace work(graph.num_nodes());
  return builtin_samplers().at(sampler).value(graph, seeds, fanouts, rng, work);
}

std::set<NodeId> nodes_of(const SampledLayer& layer) { return {layer.nodes.begin(), layer.nodes.end()}; }

// Full neighbourhood of {0}: hop 1 adds 1, 2, 3 (3 edges); hop 2 expands 0..3 — 0→{1,2,3},
// 1→0, 2→0, 3→{0,4} — 7 edges and adds 4.
TEST(GnnSampler, FullNeighbourIsTheExactTwoHopNeighbourhood) {
  Rng rng(1);
  const MiniBatch batch = run("full-neighbour", small_graph(), {0}, {5, 5}, rng);
  ASSERT_EQ(batch.layers.size(), 2u);
  EXPECT_EQ(batch.layers[0].num_dst, 1u);
  EXPECT_EQ(nodes_of(batch.layers[0]), (std::set<NodeId>{0, 1, 2, 3}));
  EXPECT_EQ(batch.layers[0].edges.size(), 3u);
  EXPECT_EQ(batch.layers[1].num_dst, 4u);
  EXPECT_EQ(nodes_of(batch.layers[1]), (std::set<NodeId>{0, 1, 2, 3, 4}));
  EXPECT_EQ(batch.layers[1].edges.size(), 7u);
  EXPECT_EQ(batch.sampled_edges(), 10u);
}

// With fan-outs ≥ every degree node-wise sampling takes every neighbour: the same sets as above,
// whatever the seed.
TEST(GnnSampler, NodeWiseWithLargeFanoutsEqualsFullNeighbour) {
  Rng rng(42);
  const MiniBatch batch = run("node-wise", small_graph(), {0}, {3, 3}, rng);
  EXPECT_EQ(nodes_of(batch.layers[1]), (std::set<NodeId>{0, 1, 2, 3, 4}));
  EXPECT_EQ(batch.sampled_edges(), 10u);
}

// Fan-out 2 of node 0's 3 neighbours: each of the 3 pairs has probability 1/3, so each neighbour
// appears with probability 2/3; over 30,000 draws the standard error is √(2/9/30000) ≈ 0.0027.
TEST(GnnSampler, NodeWiseDrawsDistinctNeighboursUniformly) {
  const CsrGraph graph = small_graph();
  Rng rng(7);
  SamplerWorkspace work(graph.num_nodes());
  std::map<NodeId, int> hits;
  constexpr int kDraws = 30000;
  const std::vector<NodeId> seeds{0};
  const std::vector<std::uint32_t> fanouts{2};
  for (int i = 0; i < kDraws; ++i) {
    const MiniBatch batch = builtin_samplers().at("node-wise").value(graph, seeds, fanouts, rng, work);
    ASSERT_EQ(batch.layers[0].edges.size(), 2u);
    ASSERT_EQ(batch.layers[0].nodes.size(), 3u);  // distinct
    for (std::size_t j = 1; j < 3; ++j) ++hits[batch.layers[0].nodes[j]];
  }
  for (NodeId v : {1u, 2u, 3u}) EXPECT_NEAR(hits[v] / double(kDraws), 2.0 / 3.0, 0.015) << v;
}

// Layer-wise with a layer size of 2 from the candidates {1, 2, 3}: 2 distinct candidates and the
// 2 edges that join them to 0.
TEST(GnnSampler, LayerWiseKeepsFanoutNodesPerLayer) {
  Rng rng(3);
  const MiniBatch batch = run("layer-wise", small_graph(), {0}, {2}, rng);
  ASSERT_EQ(batch.layers[0].nodes.size(), 3u);
  EXPECT_EQ(batch.layers[0].nodes[0], 0u);
  EXPECT_EQ(batch.layers[0].edges.size(), 2u);
}

TEST(GnnSampler, SameSeedSameBatches) {
  const CsrGraph graph = generate_rmat({.nodes = 4096, .edges = 40000, .seed = 2});
  Rng a(9), b(9);
  const MiniBatch x = run("node-wise", graph, {1, 2, 3, 4, 5}, {10, 5}, a);
  const MiniBatch y = run("node-wise", graph, {1, 2, 3, 4, 5}, {10, 5}, b);
  EXPECT_EQ(x.input_nodes().size(), y.input_nodes().size());
  EXPECT_TRUE(std::equal(x.input_nodes().begin(), x.input_nodes().end(), y.input_nodes().begin()));
}

// On a path 0–1–…–9 one BFS run emits nodes by non-decreasing distance from its root, which is the
// first node emitted; the uniform ordering is a permutation too.
TEST(GnnSampler, ProximityOrderingIsABfsSequence) {
  std::vector<std::pair<NodeId, NodeId>> path;
  for (NodeId v = 0; v + 1 < 10; ++v) path.emplace_back(v, v + 1);
  const CsrGraph graph = build_csr(10, path);
  std::vector<NodeId> training(10);
  for (NodeId v = 0; v < 10; ++v) training[v] = v;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    Rng rng(seed);
    const auto order =
        builtin_orderings()
            .at("proximity")
            .value(graph, training,
                   dnnsim::testing::options_of(builtin_orderings(), "proximity", {{"sequences", std::int64_t{1}}}),
                   rng);
    ASSERT_EQ(std::set<NodeId>(order.begin(), order.end()).size(), 10u);
    const auto distance = [&](NodeId v) { return v > order[0] ? v - order[0] : order[0] - v; };
    for (std::size_t i = 1; i < order.size(); ++i) EXPECT_LE(distance(order[i - 1]), distance(order[i]));
    const auto shuffled = builtin_orderings().at("uniform").value(graph, training, {}, rng);
    EXPECT_EQ(std::set<NodeId>(shuffled.begin(), shuffled.end()).size(), 10u);
  }
}

// Parts {0, 1, 2} and {3, 4}: of the full neighbourhood's 10 sampled edges, those joining 0 and 3
// cross — 0→3 in hop 1, and 0→3, 3→0 in hop 2 — so 3 of 10.
TEST(GnnSampler, CrossPartitionRatioOfSampledEdges) {
  Rng rng(1);
  const MiniBatch batch = run("full-neighbour", small_graph(), {0}, {5, 5}, rng);
  CrossPartitionCount count;
  count_cross_partition(batch, Partitioning{2, {0, 0, 0, 1, 1}}, count);
  EXPECT_EQ(count.cross, 3u);
  EXPECT_EQ(count.total, 10u);
}

}  // namespace
}  // namespace dnnsim::gnn
