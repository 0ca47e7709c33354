#include <gtest/gtest.h>

#include <string>

#include "models/gnn/feature_cache.hpp"

namespace dnnsim::gnn {
namespace {

// Degrees: node 0 has 3, nodes 1 and 2 have 2, node 3 has 1.
CsrGraph graph() { return build_csr(4, {{0, 1}, {0, 2}, {0, 3}, {1, 2}}); }

std::string replay(const char* policy, std::uint64_t capacity, const std::vector<NodeId>& stream) {
  const auto cache = builtin_caches().at(policy).value.make(graph(), capacity);
  std::string result;
  for (NodeId v : stream) result += cache->access(v) ? 'H' : 'M';
  return result;
}

// Stream A B A C B A (0 1 0 2 1 0), two slots.
// FIFO: A,B admitted; A hits; C evicts A (oldest); B hits; A evicts B → M M H M H M.
// LRU:  A,B admitted; A hits (B now oldest); C evicts B; B evicts A; A evicts C → M M H M M M.
// degree: 0 (degree 3) and then 1 and 2 (degree 2, tie by id → 1) are resident: hits on 0 and 1.
TEST(GnnFeatureCache, PoliciesOnAHandWrittenStream) {
  const std::vector<NodeId> stream{0, 1, 0, 2, 1, 0};
  EXPECT_EQ(replay("fifo", 2, stream), "MMHMHM");
  EXPECT_EQ(replay("lru", 2, stream), "MMHMMM");
  EXPECT_EQ(replay("degree", 2, stream), "HHHMHH");
  EXPECT_EQ(replay("none", 2, stream), "MMMMMM");
  EXPECT_EQ(replay("fifo", 0, stream), "MMMMMM");
  EXPECT_EQ(replay("lru", 0, stream), "MMMMMM");
}

// Two GPUs share a 4-node FIFO cache (2 slots each, node v on GPU v mod 2). From GPU 0: node 2
// (even) first misses — in the host partition → host; node 3 misses and is not local → remote;
// then node 2 hits on GPU 0 (local), node 3 on GPU 1 (peer, over NVLink).
TEST(GnnFeatureCache, ServerCacheLevels) {
  ServerCache cache(builtin_caches().at("fifo").value.make, graph(), 4, 2);
  EXPECT_EQ(cache.access(0, 2, true), FeatureSource::host);
  EXPECT_EQ(cache.access(0, 3, false), FeatureSource::remote);
  EXPECT_EQ(cache.access(0, 2, true), FeatureSource::local_gpu);
  EXPECT_EQ(cache.access(0, 3, false), FeatureSource::peer_gpu);
}

}  // namespace
}  // namespace dnnsim::gnn
