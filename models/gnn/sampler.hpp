// Mini-batch samplers and seed orderings for sampled GNN training; they run for real on the graph
// (seeded), so the node-ID stream they produce drives the cache and network measurements.
//
// Samplers (registry `dnnsim list samplers`), each producing DGL-style message-flow blocks from
// the output layer to the input:
// - node-wise: GraphSAGE (Hamilton, Ying, Leskovec, NeurIPS'17, Alg. 2): each destination node
//   draws min(fanout, degree) distinct neighbours uniformly (DGL's replace=False).
// - layer-wise: LADIES-like (Zou et al., NeurIPS'19, Alg. 1 with uniform probabilities): a layer
//   draws `fanout` distinct nodes from the union of its destinations' neighbours and keeps the
//   edges between them and the destinations.
// - full-neighbour: every neighbour (the GCN full-batch aggregation restricted to the seeds'
//   receptive field; Kipf & Welling, ICLR'17). Fan-outs only give the layer count.
//
// Seed orderings:
// - uniform: a fresh uniform shuffle of the training nodes per epoch (DGL's DataLoader).
// - proximity: BGL's proximity-aware ordering (Liu et al., NSDI'23, §4.1): `sequences` BFS runs from
//   random training-node roots advance in turn, each emitting the training nodes it reaches, so
//   consecutive mini-batches share multi-hop neighbourhoods; roots are re-drawn every epoch and a
//   run that exhausts its component restarts from a random unvisited training node.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <vector>

#include "models/common/options.hpp"
#include "models/common/registry.hpp"
#include "models/gnn/graph.hpp"
#include "models/gnn/partitioner.hpp"

namespace dnnsim::gnn {

// One message-flow block: `nodes` holds the destination nodes first (num_dst of them) then the new
// source nodes; an edge (src, dst) indexes into `nodes`.
struct SampledLayer {
  std::uint32_t num_dst = 0;
  std::vector<NodeId> nodes;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
};

struct MiniBatch {
  std::vector<SampledLayer> layers;  // layers[0] has the seeds as destinations; the last one the inputs
  [[nodiscard]] std::span<const NodeId> input_nodes() const { return layers.back().nodes; }
  [[nodiscard]] std::uint64_t sampled_edges() const;
};

using Rng = std::mt19937_64;

// Reused buffers (a per-node stamp for de-duplication), so sampling allocates nothing per node.
class SamplerWorkspace {
 public:
  explicit SamplerWorkspace(NodeId nodes) : stamp_(nodes, 0), local_(nodes, 0) {}
  // Starts a new set: nothing is a member.
  void clear() { ++round_; }
  // The node's index in the current set, adding it (as `next`) when new.
  std::uint32_t index_of(NodeId node, std::vector<NodeId>& members) {
    if (stamp_[node] != round_) {
      stamp_[node] = round_;
      local_[node] = static_cast<std::uint32_t>(members.size());
      members.push_back(node);
    }
    return local_[node];
  }
  [[nodiscard]] bool contains(NodeId node) const { return stamp_[node] == round_; }
  void mark(NodeId node) { stamp_[node] = round_; }
  std::vector<NodeId> scratch;

 private:
  std::vector<std::uint32_t> stamp_;
  std::vector<std::uint32_t> local_;
  std::uint32_t round_ = 1;
};

// fanouts[0] applies to the seeds' layer (DGL lists them from the input layer; dnnsim from the
// output, as the sampler visits them).
using SampleFunction = std::function<MiniBatch(const CsrGraph&, std::span<const NodeId> seeds,
                                               std::span<const std::uint32_t> fanouts, Rng&, SamplerWorkspace&)>;
using SamplerRegistry = Registry<SampleFunction>;
[[nodiscard]] const SamplerRegistry& builtin_samplers();

// An ordering's declared options (`dnnsim list orderings --options`) as the scenario gave them.
using OrderFunction =
    std::function<std::vector<NodeId>(const CsrGraph&, std::span<const NodeId> training_nodes, const Options&, Rng&)>;
using OrderingRegistry = Registry<OrderFunction>;
[[nodiscard]] const OrderingRegistry& builtin_orderings();

// Sampled edges whose two ends are owned by different partitions, and all sampled edges.
struct CrossPartitionCount {
  std::uint64_t cross = 0;
  std::uint64_t total = 0;
  [[nodiscard]] double ratio() const {
    return total == 0 ? 0 : static_cast<double>(cross) / static_cast<double>(total);
  }
};
void count_cross_partition(const MiniBatch& batch, const Partitioning& partitioning, CrossPartitionCount& count);

// A uniform integer in [0, bound) (Lemire, "Fast random integer generation in an interval", 2019,
// without the rejection step: bias < bound / 2^32, negligible for node degrees).
inline std::uint32_t uniform_below(Rng& rng, std::uint32_t bound) {
  return static_cast<std::uint32_t>(((rng() >> 32) * static_cast<std::uint64_t>(bound)) >> 32);
}

}  // namespace dnnsim::gnn
