// GPU feature caches for sampled GNN training (registry `dnnsim list caches`), replayed over the
// node-ID stream the samplers produce, so hit ratios are measured.
//
// - none: every access misses (DGL without a cache).
// - degree: static, the `capacity` highest-degree nodes loaded once (PaGraph, Lin et al., SoCC'20
//   §4.2: out-degree predicts access frequency under neighbour sampling).
// - lru: least-recently-used eviction (the bookkeeping BGL §4.1 calls too costly per access).
// - fifo: insert on miss, evict the oldest; paired with the proximity seed ordering this is BGL's
//   dynamic cache engine (Liu et al., NSDI'23 §4.1).
//
// A server's GPUs partition one cache between them (BGL §4.1): node v lives on GPU v mod G, reached
// from another GPU over NVLink; a miss falls back to the server's host memory when the server's
// graph-store partition holds v, else to a remote server over the network.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "models/common/registry.hpp"
#include "models/gnn/graph.hpp"

namespace dnnsim::gnn {

class CachePolicy {
 public:
  virtual ~CachePolicy() = default;
  // Looks `node` up; on a miss a dynamic policy admits it. Returns whether it was a hit.
  virtual bool access(NodeId node) = 0;
};

// capacity: nodes the cache holds; the graph is for static policies and for sizing index arrays.
using CacheFactory = std::function<std::unique_ptr<CachePolicy>(const CsrGraph&, std::uint64_t capacity)>;
struct CacheEntry {
  CacheFactory make;
  // Whether the policy keeps features in GPU memory, so that a scenario must size it.
  bool holds_features = true;
};
using CacheRegistry = Registry<CacheEntry>;
[[nodiscard]] const CacheRegistry& builtin_caches();

// Where a feature came from.
enum class FeatureSource { local_gpu, peer_gpu, host, remote };
inline constexpr int kFeatureSources = 4;

struct FeatureSourceCounts {
  std::uint64_t count[kFeatureSources] = {0, 0, 0, 0};
  [[nodiscard]] std::uint64_t total() const { return count[0] + count[1] + count[2] + count[3]; }
  [[nodiscard]] double ratio(FeatureSource source) const {
    return total() == 0 ? 0 : static_cast<double>(count[static_cast<int>(source)]) / static_cast<double>(total());
  }
  // Local + peer GPU hits over all accesses.
  [[nodiscard]] double gpu_hit_ratio() const {
    return total() == 0 ? 0 : static_cast<double>(count[0] + count[1]) / static_cast<double>(total());
  }
};

// One server's cache split across `gpus` GPUs, each part a policy of capacity/gpus nodes.
class ServerCache {
 public:
  ServerCache(const CacheFactory& factory, const CsrGraph& graph, std::uint64_t capacity, std::uint32_t gpus);
  // The source of `node`'s features for a mini-batch trained on `gpu`; `in_host` says whether this
  // server's partition holds the node.
  FeatureSource access(std::uint32_t gpu, NodeId node, bool in_host);
  // The GPU whose part would hold `node` (reached over NVLink on a peer hit).
  [[nodiscard]] std::uint32_t holder(NodeId node) const { return static_cast<std::uint32_t>(node % parts_.size()); }

 private:
  std::vector<std::unique_ptr<CachePolicy>> parts_;
};

}  // namespace dnnsim::gnn
