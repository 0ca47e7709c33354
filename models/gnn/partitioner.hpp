// Graph partitioners for distributed GNN training (one registry: `dnnsim list partitioners`).
//
// - hash: node v goes to hash(v, seed) mod k, Euler's default (Alibaba Euler, 2019; the "random"
//   baseline of BGL §3.2 and DistDGL §5).
// - metis: METIS 5 k-way multilevel partitioning (Karypis & Kumar, SIAM J. Sci. Comput. 1998)
//   through the real library, with two balance constraints (all nodes, training nodes) as DistDGL
//   (Zheng et al., IA3'20, §3.3) does.
// - bfs-block: BGL-like (Liu et al., NSDI'23, §4.2) — multi-source BFS from random training nodes
//   grows blocks; blocks go greedily to the partition holding most of their neighbours, scaled by
//   how far that partition is from its training-node and node quotas (the balance terms of BGL's
//   assignment heuristic, which inherits PaGraph's score, Lin et al., SoCC'20, §4). Reconstructed
//   from the paper's description, not its code; the paper gives neither the number of blocks nor
//   the quotas' slack, so both are options.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "models/common/options.hpp"
#include "models/common/registry.hpp"
#include "models/gnn/graph.hpp"

namespace dnnsim::gnn {

using PartId = std::uint32_t;

struct Partitioning {
  PartId parts = 1;
  std::vector<PartId> owner;  // per node
};

struct PartitionRequest {
  PartId parts = 1;
  std::span<const NodeId> training_nodes;  // sorted; may be empty (then every node counts)
  std::uint64_t seed = 1;
};

struct PartitionStats {
  std::uint64_t edge_cut = 0;   // undirected edges whose ends are in different parts
  double cut_ratio = 0;         // edge_cut / undirected edges
  double node_balance = 1;      // largest part's nodes / mean
  double edge_balance = 1;      // largest part's neighbour entries / mean
  double training_balance = 1;  // largest part's training nodes / mean
};

[[nodiscard]] PartitionStats partition_stats(const CsrGraph& graph, const Partitioning& partitioning,
                                             std::span<const NodeId> training_nodes);

// A partitioner's declared options (`dnnsim list partitioners --options`) as the scenario gave them.
using PartitionFunction = std::function<Partitioning(const CsrGraph&, const PartitionRequest&, const Options&)>;
using PartitionerRegistry = Registry<PartitionFunction>;

[[nodiscard]] const PartitionerRegistry& builtin_partitioners();

// The named partitioner at its declared defaults (benchmarks and tests; a scenario gives options).
// @throw InputError for an unknown name.
[[nodiscard]] Partitioning partition_with_defaults(const std::string& name, const CsrGraph& graph,
                                                   const PartitionRequest& request);

}  // namespace dnnsim::gnn
