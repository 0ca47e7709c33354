#include "models/gnn/sampler.hpp"

#include <algorithm>
#include <deque>
#include <optional>

#include "models/common/builtin_registry.hpp"

namespace dnnsim::gnn {

std::uint64_t MiniBatch::sampled_edges() const {
  std::uint64_t total = 0;
  for (const SampledLayer& layer : layers) total += layer.edges.size();
  return total;
}

namespace {

// Starts a layer whose destinations are `dst` (de-duplicated through the workspace).
SampledLayer start_layer(std::span<const NodeId> dst, SamplerWorkspace& work) {
  SampledLayer layer;
  work.clear();
  layer.nodes.reserve(dst.size());
  for (NodeId v : dst) (void)work.index_of(v, layer.nodes);
  layer.num_dst = static_cast<std::uint32_t>(layer.nodes.size());
  return layer;
}

template <class SampleLayer>
MiniBatch sample_layers(std::span<const NodeId> seeds, std::span<const std::uint32_t> fanouts, SamplerWorkspace& work,
                        SampleLayer&& sample_layer) {
  MiniBatch batch;
  batch.layers.reserve(fanouts.size());
  std::span<const NodeId> dst = seeds;
  for (std::uint32_t fanout : fanouts) {
    SampledLayer layer = start_layer(dst, work);
    sample_layer(layer, fanout);
    batch.layers.push_back(std::move(layer));
    dst = batch.layers.back().nodes;
  }
  return batch;
}

MiniBatch node_wise(const CsrGraph& graph, std::span<const NodeId> seeds, std::span<const std::uint32_t> fanouts,
                    Rng& rng, SamplerWorkspace& work) {
  return sample_layers(seeds, fanouts, work, [&](SampledLayer& layer, std::uint32_t fanout) {
    std::vector<NodeId>& picks = work.scratch;
    for (std::uint32_t d = 0; d < layer.num_dst; ++d) {
      const auto neighbours = graph.neighbours(layer.nodes[d]);
      const auto degree = static_cast<std::uint32_t>(neighbours.size());
      if (degree <= fanout) {
        for (NodeId w : neighbours) layer.edges.emplace_back(work.index_of(w, layer.nodes), d);
        continue;
      }
      // Floyd's algorithm: `fanout` distinct positions out of `degree`, O(fanout²) with tiny fan-outs.
      picks.clear();
      for (std::uint32_t j = degree - fanout; j < degree; ++j) {
        const std::uint32_t t = uniform_below(rng, j + 1);
        picks.push_back(std::find(picks.begin(), picks.end(), t) == picks.end() ? t : j);
      }
      for (NodeId position : picks) layer.edges.emplace_back(work.index_of(neighbours[position], layer.nodes), d);
    }
  });
}

MiniBatch layer_wise(const CsrGraph& graph, std::span<const NodeId> seeds, std::span<const std::uint32_t> fanouts,
                     Rng& rng, SamplerWorkspace& work) {
  return sample_layers(seeds, fanouts, work, [&](SampledLayer& layer, std::uint32_t fanout) {
    // Candidates: the neighbours of the destinations that are not destinations themselves, once
    // each; then a uniform subset of `fanout` of them (partial Fisher–Yates). Destinations stay
    // reachable as sources (self and intra-layer edges are kept), as in LADIES' layer-dependent
    // sampling.
    std::vector<NodeId>& candidates = work.scratch;
    candidates.clear();
    std::vector<NodeId> seen(layer.nodes.begin(), layer.nodes.end());
    for (std::uint32_t d = 0; d < layer.num_dst; ++d)
      for (NodeId w : graph.neighbours(layer.nodes[d]))
        if (!work.contains(w)) {
          work.mark(w);
          candidates.push_back(w);
        }
    const auto keep = static_cast<std::uint32_t>(std::min<std::size_t>(fanout, candidates.size()));
    for (std::uint32_t i = 0; i < keep; ++i)
      std::swap(candidates[i], candidates[i + uniform_below(rng, static_cast<std::uint32_t>(candidates.size()) - i)]);
    candidates.resize(keep);
    // Re-index: destinations, then the chosen candidates.
    work.clear();
    layer.nodes.clear();
    for (NodeId v : seen) (void)work.index_of(v, layer.nodes);
    for (NodeId w : candidates) (void)work.index_of(w, layer.nodes);
    for (std::uint32_t d = 0; d < layer.num_dst; ++d)
      for (NodeId w : graph.neighbours(layer.nodes[d]))
        if (work.contains(w)) layer.edges.emplace_back(work.index_of(w, layer.nodes), d);
  });
}

MiniBatch full_neighbour(const CsrGraph& graph, std::span<const NodeId> seeds, std::span<const std::uint32_t> fanouts,
                         Rng& /*rng*/, SamplerWorkspace& work) {
  return sample_layers(seeds, fanouts, work, [&](SampledLayer& layer, std::uint32_t) {
    for (std::uint32_t d = 0; d < layer.num_dst; ++d)
      for (NodeId w : graph.neighbours(layer.nodes[d])) layer.edges.emplace_back(work.index_of(w, layer.nodes), d);
  });
}

std::vector<NodeId> uniform_order(const CsrGraph&, std::span<const NodeId> training, const Options&, Rng& rng) {
  std::vector<NodeId> order(training.begin(), training.end());
  for (std::size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[uniform_below(rng, static_cast<std::uint32_t>(i))]);
  return order;
}

std::vector<NodeId> proximity_order(const CsrGraph& graph, std::span<const NodeId> training, const Options& options,
                                    Rng& rng) {
  const NodeId n = graph.num_nodes();
  std::vector<char> is_training(n, 0), visited(n, 0), emitted(n, 0);
  for (NodeId v : training) is_training[v] = 1;
  // Random restart points: the training nodes in a uniform order, consumed as roots.
  const std::vector<NodeId> roots = uniform_order(graph, training, options, rng);
  std::size_t next_root = 0;
  const auto take_root = [&]() -> std::optional<NodeId> {
    while (next_root < roots.size() && visited[roots[next_root]]) ++next_root;
    if (next_root == roots.size()) return std::nullopt;
    return roots[next_root++];
  };
  std::vector<std::deque<NodeId>> queues(static_cast<std::size_t>(options.integer("sequences")));
  std::vector<NodeId> order;
  order.reserve(training.size());
  const auto visit = [&](std::deque<NodeId>& queue, NodeId v) {
    visited[v] = 1;
    queue.push_back(v);
  };
  // Each step, every run advances until it emits one training node (or dies and restarts).
  while (order.size() < training.size()) {
    for (std::deque<NodeId>& queue : queues) {
      bool emitted_one = false;
      while (!emitted_one) {
        if (queue.empty()) {
          const auto root = take_root();
          if (!root) break;
          visit(queue, *root);
        }
        const NodeId u = queue.front();
        queue.pop_front();
        for (NodeId w : graph.neighbours(u))
          if (!visited[w]) visit(queue, w);
        if (is_training[u] && !emitted[u]) {
          emitted[u] = 1;
          order.push_back(u);
          emitted_one = true;
        }
      }
      if (order.size() == training.size()) break;
    }
  }
  return order;
}

OptionSchema proximity_options() {
  OptionSchema schema;
  schema.integer("sequences", 4, "concurrent BFS runs, each emitting the training nodes it reaches in turn")
      .range(1, 1 << 20);
  return schema;
}

void register_builtin_samplers(SamplerRegistry& r) {
  r.add("node-wise", "each destination draws min(fanout, degree) distinct neighbours uniformly, layer by layer",
        "Hamilton et al., GraphSAGE, NeurIPS'17 Alg. 2", node_wise);
  r.add("layer-wise", "LADIES-like: each layer draws `fanout` distinct nodes from its destinations' neighbours",
        "Zou et al., LADIES, NeurIPS'19 Alg. 1 (uniform probabilities)", layer_wise);
  r.add("full-neighbour", "every neighbour of every destination (fan-outs give only the layer count)",
        "Kipf & Welling, GCN, ICLR'17", full_neighbour);
}

void register_builtin_orderings(OrderingRegistry& r) {
  r.add("uniform", "a fresh uniform shuffle of the training nodes every epoch", "DGL DataLoader(shuffle=True)",
        uniform_order);
  r.add("proximity", "`sequences` BFS runs from random training roots emit training nodes in turn",
        "Liu et al., BGL, NSDI'23 §4.1 (reconstructed)", proximity_order, proximity_options());
}

}  // namespace

void count_cross_partition(const MiniBatch& batch, const Partitioning& partitioning, CrossPartitionCount& count) {
  for (const SampledLayer& layer : batch.layers)
    for (const auto& [src, dst] : layer.edges) {
      ++count.total;
      if (partitioning.owner[layer.nodes[src]] != partitioning.owner[layer.nodes[dst]]) ++count.cross;
    }
}

const SamplerRegistry& builtin_samplers() {
  return builtin_registry<SamplerRegistry, register_builtin_samplers>("sampler");
}

const OrderingRegistry& builtin_orderings() {
  return builtin_registry<OrderingRegistry, register_builtin_orderings>("seed ordering");
}

}  // namespace dnnsim::gnn
