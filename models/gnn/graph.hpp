// Graphs for GNN training, in compressed sparse row form (CSR, as DGL and PyG store them).
//
// A graph is undirected and stored symmetrically: every undirected edge {u, v} appears in the
// neighbour lists of both u and v, so `directed_edges()` equals PyG's `edge_index` width (Cora:
// 10,556 for 5,278 undirected edges). Node ids are uint32 (the largest OGB node-property graph,
// ogbn-papers100M, has 111M nodes) and offsets uint64, so an ogbn-products-sized graph (2.45M nodes,
// 61.9M undirected edges → 124M neighbour entries) takes 4·124M + 8·2.45M ≈ 0.5 GB.
// Neighbour lists are sorted and without duplicates or self-loops.
//
// Node features are sizes, not values: a simulator moves dimension × dtype bytes per node.
//
// Sources: edge lists (Planetoid Cora/CiteSeer/PubMed as shipped in data/graphs/planetoid),
// the METIS graph format (METIS 5 manual, §4.1.1), and generators from the Boost Graph Library:
// R-MAT (Chakrabarti, Zhan, Faloutsos, "R-MAT: A Recursive Model for Graph Mining", SDM'04;
// boost::rmat_iterator) and power-law out-degree (Palmer & Steffan, "Generating network topologies
// that obey power laws", GLOBECOM'00; boost::plod_iterator).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "models/common/units.hpp"

namespace dnnsim::gnn {

using NodeId = std::uint32_t;

class CsrGraph {
 public:
  CsrGraph() = default;
  CsrGraph(std::vector<std::uint64_t> offsets, std::vector<NodeId> neighbours)
      : offsets_(std::move(offsets)), neighbours_(std::move(neighbours)) {}

  [[nodiscard]] NodeId num_nodes() const { return offsets_.empty() ? 0 : static_cast<NodeId>(offsets_.size() - 1); }
  // Neighbour entries: twice the undirected edges.
  [[nodiscard]] std::uint64_t directed_edges() const { return neighbours_.size(); }
  [[nodiscard]] std::uint64_t undirected_edges() const { return neighbours_.size() / 2; }
  [[nodiscard]] std::uint32_t degree(NodeId node) const {
    return static_cast<std::uint32_t>(offsets_[node + 1] - offsets_[node]);
  }
  [[nodiscard]] std::span<const NodeId> neighbours(NodeId node) const {
    return {neighbours_.data() + offsets_[node], neighbours_.data() + offsets_[node + 1]};
  }
  [[nodiscard]] const std::vector<std::uint64_t>& offsets() const { return offsets_; }
  [[nodiscard]] const std::vector<NodeId>& neighbour_array() const { return neighbours_; }
  // Memory held by the CSR arrays.
  [[nodiscard]] Bytes memory() const {
    return Bytes(static_cast<double>(offsets_.size() * sizeof(std::uint64_t) + neighbours_.size() * sizeof(NodeId)));
  }

 private:
  std::vector<std::uint64_t> offsets_;  // num_nodes + 1 entries
  std::vector<NodeId> neighbours_;
};

// Builds the symmetric CSR of `num_nodes` nodes from undirected edges (either orientation),
// dropping self-loops and duplicates. `edges` is consumed (its memory is released early).
// Precondition: every id < num_nodes.
[[nodiscard]] CsrGraph build_csr(NodeId num_nodes, std::vector<std::pair<NodeId, NodeId>> edges);

// Node features as sizes: `dimension` values of `dtype_bytes` each.
struct FeatureSpec {
  std::uint32_t dimension = 0;
  std::uint32_t dtype_bytes = 4;
  [[nodiscard]] Bytes per_node() const { return Bytes(static_cast<double>(dimension) * dtype_bytes); }
};

// Edge list: `#` comment lines and blank lines skipped, otherwise "u v" (whitespace separated,
// further columns ignored, e.g. weights). Node count: `num_nodes` when given (ids ≥ it are
// errors), else the largest id + 1.
// @throw InputError file:line:col for a malformed line, a negative or out-of-range id, or an
// unreadable file; every problem of the file at once.
[[nodiscard]] CsrGraph load_edge_list(const std::string& path, std::optional<NodeId> num_nodes = std::nullopt);

// METIS graph format: header "n m [fmt [ncon]]" (comment lines start with %), then line i lists
// the 1-based neighbours of node i (with a weight after each neighbour when fmt's last digit is 1,
// vertex size/weights before them when fmt has 100/10 digits). m is the undirected edge count.
// @throw InputError file:line:col for a malformed header or line, an id outside 1..n, a wrong
// number of node lines, or m disagreeing with the lines.
[[nodiscard]] CsrGraph load_metis_graph(const std::string& path);

// R-MAT: `edges` edges drawn from the recursive 2×2 partition with probabilities a, b, c and
// d = 1 − a − b − c (Graph500 uses 0.57, 0.19, 0.19), vertices permuted; self-loops and duplicates
// dropped afterwards, so the graph has somewhat fewer undirected edges than drawn.
struct RmatParams {
  NodeId nodes = 0;
  std::uint64_t edges = 0;
  double a = 0.57, b = 0.19, c = 0.19;
  std::uint64_t seed = 1;
};
[[nodiscard]] CsrGraph generate_rmat(const RmatParams& params);

// Power-law out-degree (PLOD): each node gets a degree credit beta · x^-alpha (x uniform in
// 1..n) and edges join random nodes with credit left. Self-loops and duplicates dropped.
struct PowerLawParams {
  NodeId nodes = 0;
  double alpha = 2.5, beta = 1000;
  std::uint64_t seed = 1;
};
[[nodiscard]] CsrGraph generate_power_law(const PowerLawParams& params);

// dnnsim's binary CSR (`.csr`): what a generated or converted graph is saved as so that it loads
// in seconds (an ogbn-products-sized R-MAT graph takes a minute to generate). Little-endian:
//   bytes 0–7   magic "DNNSCSR1"
//   u64         nodes n;  u64 neighbour entries m (twice the undirected edges)
//   u64 × (n+1) offsets;  u32 × m neighbours
// @throw InputError when the file cannot be written.
void save_csr(const CsrGraph& graph, const std::string& path);

// Reads a `.csr` file and checks every CSR invariant: the header against the file's size, offsets
// starting at 0, non-decreasing and ending at m, neighbours below n, sorted without duplicates or
// self-loops, and symmetric. Problems are located by byte offset ("FILE: byte N"), all of them up
// to the first 20 and then counted.
// @throw InputError
[[nodiscard]] CsrGraph load_csr(const std::string& path);

// Reads a graph a scenario names: `<path>.edges` / `.txt` / `.el` as an edge list, `.graph` /
// `.metis` as METIS, `.csr` as dnnsim's binary CSR.
// @throw InputError for an unknown extension or a bad file.
[[nodiscard]] CsrGraph load_graph_file(const std::string& path, std::optional<NodeId> num_nodes = std::nullopt);

}  // namespace dnnsim::gnn
