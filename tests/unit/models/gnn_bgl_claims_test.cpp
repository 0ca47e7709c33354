// BGL's qualitative claims (Liu et al., NSDI'23 §4.1-4.2) checked on a real graph (PubMed, shipped in
// data/graphs/planetoid): measured by replaying sampled epochs, averaged over three seeds so that
// no single lucky draw decides. Measured values are recorded in docs/gnn.md.
#include <gtest/gtest.h>

#include "dnnsim/source_paths.hpp"
#include "models/gnn/epoch_trace.hpp"

namespace dnnsim::gnn {
namespace {

const CsrGraph& pubmed() {
  static const CsrGraph graph = load_edge_list(DNNSIM_SOURCE_DIR "/data/graphs/planetoid/pubmed.edges", 19717);
  return graph;
}

// 8% of the nodes as training nodes (ogbn-products' split ratio), drawn with `seed`.
std::vector<NodeId> training_nodes(std::uint64_t seed) {
  Rng rng(seed);
  std::vector<NodeId> training;
  for (NodeId v = 0; v < pubmed().num_nodes(); ++v)
    if (uniform_below(rng, 100) < 8) training.push_back(v);
  return training;
}

double mean_hit_ratio(const char* ordering, const char* cache) {
  double sum = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const std::vector<NodeId> training = training_nodes(seed);
    const EpochCounts epoch =
        replay_epoch(pubmed(), Partitioning{1, std::vector<PartId>(pubmed().num_nodes(), 0)}, training,
                     {.batch_size = 100,
                      .fanouts = {15, 10, 5},
                      .ordering = ordering,
                      .ordering_options = builtin_orderings().defaults(ordering),
                      .cache = cache,
                      .cache_nodes_per_server = pubmed().num_nodes() / 4,
                      .seed = seed});
    sum += epoch.features.gpu_hit_ratio();
  }
  return sum / 3;
}

// At equal cache size (25% of the nodes, larger than one batch's ~5,000 inputs so that a dynamic
// cache can keep something between batches), proximity ordering + FIFO hits more than uniform
// ordering with FIFO or LRU.
TEST(GnnBglClaims, ProximityFifoBeatsUniformFifoAndLru) {
  const double proximity_fifo = mean_hit_ratio("proximity", "fifo");
  const double uniform_fifo = mean_hit_ratio("uniform", "fifo");
  const double uniform_lru = mean_hit_ratio("uniform", "lru");
  RecordProperty("proximity_fifo", std::to_string(proximity_fifo));
  RecordProperty("uniform_fifo", std::to_string(uniform_fifo));
  RecordProperty("uniform_lru", std::to_string(uniform_lru));
  EXPECT_GT(proximity_fifo, uniform_fifo);
  EXPECT_GT(proximity_fifo, uniform_lru);
}

// The BGL-like partitioner has fewer cross-partition sampled edges than hashing (8 partitions).
TEST(GnnBglClaims, BfsBlockHasFewerCrossPartitionSampledEdgesThanHash) {
  const std::vector<NodeId> training = training_nodes(1);
  double ratio[2];
  int i = 0;
  for (const char* name : {"hash", "bfs-block"}) {
    const Partitioning partitioning = partition_with_defaults(name, pubmed(), {.parts = 8, .training_nodes = training});
    ratio[i++] =
        replay_epoch(pubmed(), partitioning, training, {.servers = 8, .batch_size = 100, .fanouts = {15, 10, 5}})
            .cross.ratio();
  }
  RecordProperty("hash", std::to_string(ratio[0]));
  RecordProperty("bfs_block", std::to_string(ratio[1]));
  EXPECT_LT(ratio[1], ratio[0]);
}

}  // namespace
}  // namespace dnnsim::gnn
