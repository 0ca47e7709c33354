#include "models/gnn/feature_cache.hpp"

#include <algorithm>
#include <numeric>

#include "models/common/builtin_registry.hpp"

namespace dnnsim::gnn {

namespace {

class NoCache final : public CachePolicy {
 public:
  bool access(NodeId) override { return false; }
};

class DegreeCache final : public CachePolicy {
 public:
  DegreeCache(const CsrGraph& graph, std::uint64_t capacity) : cached_(graph.num_nodes(), 0) {
    std::vector<NodeId> nodes(graph.num_nodes());
    std::iota(nodes.begin(), nodes.end(), 0);
    const auto keep = static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(capacity, nodes.size()));
    // Highest degree first, ties by id (deterministic).
    std::partial_sort(nodes.begin(), nodes.begin() + keep, nodes.end(), [&](NodeId a, NodeId b) {
      return graph.degree(a) != graph.degree(b) ? graph.degree(a) > graph.degree(b) : a < b;
    });
    for (auto it = nodes.begin(); it != nodes.begin() + keep; ++it) cached_[*it] = 1;
  }
  bool access(NodeId node) override { return cached_[node] != 0; }

 private:
  std::vector<char> cached_;
};

class FifoCache final : public CachePolicy {
 public:
  FifoCache(const CsrGraph& graph, std::uint64_t capacity) : cached_(graph.num_nodes(), 0), ring_(capacity) {}
  bool access(NodeId node) override {
    if (cached_[node]) return true;
    if (ring_.empty()) return false;
    if (size_ == ring_.size())
      cached_[ring_[head_]] = 0;  // evict the oldest, whose slot is reused
    else
      ++size_;
    ring_[head_] = node;
    cached_[node] = 1;
    head_ = (head_ + 1) % ring_.size();
    return false;
  }

 private:
  std::vector<char> cached_;
  std::vector<NodeId> ring_;
  std::size_t head_ = 0;  // next slot to fill: the oldest entry once full
  std::size_t size_ = 0;
};

// Intrusive doubly-linked recency list over node ids (arrays, no per-access allocation).
class LruCache final : public CachePolicy {
 public:
  LruCache(const CsrGraph& graph, std::uint64_t capacity)
      : capacity_(capacity),
        prev_(graph.num_nodes(), kNil),
        next_(graph.num_nodes(), kNil),
        cached_(graph.num_nodes(), 0) {}
  bool access(NodeId node) override {
    if (capacity_ == 0) return false;
    if (cached_[node]) {
      unlink(node);
      push_front(node);
      return true;
    }
    if (size_ == capacity_) {
      const NodeId victim = tail_;
      unlink(victim);
      cached_[victim] = 0;
      --size_;
    }
    push_front(node);
    cached_[node] = 1;
    ++size_;
    return false;
  }

 private:
  static constexpr NodeId kNil = ~NodeId{0};
  void unlink(NodeId v) {
    (prev_[v] == kNil ? head_ : next_[prev_[v]]) = next_[v];
    (next_[v] == kNil ? tail_ : prev_[next_[v]]) = prev_[v];
  }
  void push_front(NodeId v) {
    prev_[v] = kNil;
    next_[v] = head_;
    (head_ == kNil ? tail_ : prev_[head_]) = v;
    head_ = v;
  }
  std::uint64_t capacity_;
  std::uint64_t size_ = 0;
  NodeId head_ = kNil, tail_ = kNil;
  std::vector<NodeId> prev_, next_;
  std::vector<char> cached_;
};

void register_builtin_caches(CacheRegistry& r) {
  r.add("none", "no GPU cache: every feature comes from host memory or a remote server", "DGL (no cache)",
        {[](const CsrGraph&, std::uint64_t) -> std::unique_ptr<CachePolicy> { return std::make_unique<NoCache>(); },
         false});
  r.add("degree", "static: the highest-degree nodes, loaded once", "Lin et al., PaGraph, SoCC'20 §4.2",
        CacheEntry{[](const CsrGraph& g, std::uint64_t c) -> std::unique_ptr<CachePolicy> {
          return std::make_unique<DegreeCache>(g, c);
        }});
  r.add("lru", "least-recently-used eviction, admit on miss", "classic; BGL §4.1 baseline",
        CacheEntry{[](const CsrGraph& g, std::uint64_t c) -> std::unique_ptr<CachePolicy> {
          return std::make_unique<LruCache>(g, c);
        }});
  r.add("fifo", "admit on miss, evict the oldest; BGL's dynamic cache with the proximity ordering",
        "Liu et al., BGL, NSDI'23 §4.1",
        CacheEntry{[](const CsrGraph& g, std::uint64_t c) -> std::unique_ptr<CachePolicy> {
          return std::make_unique<FifoCache>(g, c);
        }});
}

}  // namespace

ServerCache::ServerCache(const CacheFactory& factory, const CsrGraph& graph, std::uint64_t capacity,
                         std::uint32_t gpus) {
  for (std::uint32_t g = 0; g < gpus; ++g) parts_.push_back(factory(graph, capacity / gpus));
}

FeatureSource ServerCache::access(std::uint32_t gpu, NodeId node, bool in_host) {
  const std::uint32_t part = holder(node);
  if (parts_[part]->access(node)) return part == gpu ? FeatureSource::local_gpu : FeatureSource::peer_gpu;
  return in_host ? FeatureSource::host : FeatureSource::remote;
}

const CacheRegistry& builtin_caches() {
  return builtin_registry<CacheRegistry, register_builtin_caches>("cache policy");
}

}  // namespace dnnsim::gnn
