#include <gtest/gtest.h>

#include "models/gnn/epoch_trace.hpp"

namespace dnnsim::gnn {
namespace {

// Hub 0 joined to 1, 2, 3; 3 joined to 4. Server 0 holds {0, 1, 2}, server 1 holds {3, 4}; the
// training nodes are 0 and 3, one per server, one GPU each, batches of one seed, full two-hop
// neighbourhoods, no cache.
//  server 0, seed 0: hop 1 expands 0 (local) → 1, 2, 3; hop 2 expands 0, 1, 2 (local) and 3
//    (remote: its 2 edges, to 0 and 4, come from server 1). Inputs 0..4: 0, 1, 2 from host,
//    3, 4 remote.
//  server 1, seed 3: hop 1 expands 3 → 0, 4; hop 2 expands 3, 4 (local) and 0 (remote, 3 edges).
//    Inputs 3, 0, 4, 1, 2: 3, 4 from host, 0, 1, 2 remote.
TEST(GnnEpochTrace, CountsLocalAndRemoteWorkPerBatch) {
  const CsrGraph graph = build_csr(5, {{0, 1}, {0, 2}, {0, 3}, {3, 4}});
  const Partitioning partitioning{2, {0, 0, 0, 1, 1}};
  const std::vector<NodeId> training{0, 3};
  const EpochCounts epoch = replay_epoch(
      graph, partitioning, training, {.servers = 2, .batch_size = 1, .fanouts = {5, 5}, .sampler = "full-neighbour"});
  ASSERT_EQ(epoch.batches.size(), 2u);
  const BatchCounts& first = epoch.batches[0];
  EXPECT_EQ(first.server, 0u);
  EXPECT_EQ(first.local_expansions, 4u);
  EXPECT_EQ(first.remote_expansions, 1u);
  EXPECT_EQ(first.remote_edges, 2u);
  EXPECT_EQ(first.features.count[static_cast<int>(FeatureSource::host)], 3u);
  EXPECT_EQ(first.features.count[static_cast<int>(FeatureSource::remote)], 2u);
  const BatchCounts& second = epoch.batches[1];
  EXPECT_EQ(second.server, 1u);
  EXPECT_EQ(second.local_expansions, 3u);
  EXPECT_EQ(second.remote_expansions, 1u);
  EXPECT_EQ(second.remote_edges, 3u);
  EXPECT_EQ(second.features.count[static_cast<int>(FeatureSource::remote)], 3u);
  EXPECT_EQ(epoch.features.total(), 10u);
  // By owner: the first batch's remote work is all server 1's, the second's all server 0's.
  EXPECT_EQ(first.from_server[1].expansions, 1u);
  EXPECT_EQ(first.from_server[1].edges, 2u);
  EXPECT_EQ(first.from_server[1].features, 2u);
  EXPECT_EQ(first.from_server[0].expansions + first.from_server[0].edges + first.from_server[0].features, 0u);
  EXPECT_EQ(second.from_server[0].expansions, 1u);
  EXPECT_EQ(second.from_server[0].edges, 3u);
  EXPECT_EQ(second.from_server[0].features, 3u);
}

// The five-node star-and-tail graph on one server of two GPUs, every node a seed, one batch of all
// five per epoch, full-neighbour sampling and a FIFO cache of ten nodes.
EpochCounts replay_small(std::uint32_t epochs) {
  const CsrGraph graph = build_csr(5, {{0, 1}, {0, 2}, {0, 3}, {3, 4}});
  const std::vector<NodeId> training{0, 1, 2, 3, 4};
  return replay_epoch(graph, Partitioning{1, {0, 0, 0, 0, 0}}, training,
                      {.gpus_per_server = 2,
                       .batch_size = 5,
                       .fanouts = {5},
                       .sampler = "full-neighbour",
                       .cache = "fifo",
                       .cache_nodes_per_server = 10,
                       .epochs = epochs});
}

// One epoch on a cold cache: every input misses and comes from the host (the server holds the whole
// graph). Hit sequences are tested in gnn_feature_cache_test.
TEST(GnnEpochTrace, ColdCacheServesFromHost) {
  const EpochCounts epoch = replay_small(1);
  ASSERT_EQ(epoch.batches.size(), 1u);
  EXPECT_EQ(epoch.features.count[static_cast<int>(FeatureSource::host)], 5u);  // cold cache
  EXPECT_EQ(epoch.features.gpu_hit_ratio(), 0.0);
}

// Two epochs: the cache carries over, so the second epoch's batch (on GPU 0) finds every node —
// 0, 2, 4 in its own part (node v lives on GPU v mod 2), 1 and 3 in GPU 1's.
TEST(GnnEpochTrace, CachesStayWarmAcrossEpochs) {
  const EpochCounts epoch = replay_small(2);
  ASSERT_EQ(epoch.batches.size(), 2u);
  const BatchCounts& second = epoch.batches[1];
  EXPECT_EQ(second.epoch, 1u);
  EXPECT_EQ(second.features.count[static_cast<int>(FeatureSource::local_gpu)], 3u);
  EXPECT_EQ(second.features.count[static_cast<int>(FeatureSource::peer_gpu)], 2u);
  EXPECT_EQ(second.from_peer_gpu[1], 2u);
}

// A progress callback that declines after the first round stops the replay there.
TEST(GnnEpochTrace, ProgressCanStopTheReplay) {
  const CsrGraph graph = build_csr(5, {{0, 1}, {0, 2}, {0, 3}, {3, 4}});
  const std::vector<NodeId> training{0, 1, 2, 3, 4};
  std::vector<double> calls;
  EpochSetup setup{.batch_size = 1, .fanouts = {1}};
  setup.progress = [&calls](double fraction) {
    calls.push_back(fraction);
    return false;
  };
  const EpochCounts epoch = replay_epoch(graph, Partitioning{1, {0, 0, 0, 0, 0}}, training, setup);
  EXPECT_TRUE(epoch.stopped);
  EXPECT_EQ(epoch.batches.size(), 1u);
  EXPECT_EQ(calls, (std::vector<double>{0.2}));  // round 1 of 5
}

}  // namespace
}  // namespace dnnsim::gnn
