#include "models/gnn/partitioner.hpp"

#include <metis.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <numeric>
#include <random>
#include <stdexcept>

#include "models/common/builtin_registry.hpp"
#include "models/common/random.hpp"

namespace dnnsim::gnn {

namespace {

// The first SplitMix64 output of `x` (models/common/random.hpp): a cheap well-mixed hash of (node, seed).
std::uint64_t mix(std::uint64_t x) { return splitmix64_mix(x + kSplitMix64Increment); }

std::vector<char> training_mask(NodeId nodes, std::span<const NodeId> training_nodes) {
  std::vector<char> mask(nodes, training_nodes.empty() ? 1 : 0);
  for (NodeId v : training_nodes) mask[v] = 1;
  return mask;
}

double max_over_mean(const std::vector<double>& per_part) {
  const double total = std::accumulate(per_part.begin(), per_part.end(), 0.0);
  if (total == 0) return 1;
  return *std::max_element(per_part.begin(), per_part.end()) / (total / static_cast<double>(per_part.size()));
}

Partitioning hash_partition(const CsrGraph& graph, const PartitionRequest& request, const Options& /*options*/) {
  Partitioning result{request.parts, std::vector<PartId>(graph.num_nodes())};
  for (NodeId v = 0; v < graph.num_nodes(); ++v)
    result.owner[v] = static_cast<PartId>(mix(v ^ mix(request.seed)) % request.parts);
  return result;
}

Partitioning metis_partition(const CsrGraph& graph, const PartitionRequest& request, const Options& options) {
  Partitioning result{request.parts, std::vector<PartId>(graph.num_nodes(), 0)};
  if (request.parts == 1 || graph.num_nodes() == 0) return result;
  idx_t nodes = static_cast<idx_t>(graph.num_nodes());
  idx_t constraints = 2;
  idx_t parts = static_cast<idx_t>(request.parts);
  std::vector<idx_t> xadj(graph.offsets().begin(), graph.offsets().end());
  std::vector<idx_t> adjncy(graph.neighbour_array().begin(), graph.neighbour_array().end());
  const std::vector<char> mask = training_mask(graph.num_nodes(), request.training_nodes);
  std::vector<idx_t> weights(2 * static_cast<std::size_t>(nodes));
  for (NodeId v = 0; v < graph.num_nodes(); ++v) {
    weights[2 * v] = 1;
    weights[2 * v + 1] = mask[v];
  }
  idx_t settings[METIS_NOPTIONS];
  METIS_SetDefaultOptions(settings);
  settings[METIS_OPTION_SEED] = static_cast<idx_t>(request.seed % 0x7fffffff);
  // METIS's load-imbalance tolerance is ufactor, in thousandths above 1 (its manual, §5.4).
  settings[METIS_OPTION_UFACTOR] = static_cast<idx_t>(std::llround((options.number("imbalance") - 1) * 1000));
  idx_t cut = 0;
  std::vector<idx_t> part(static_cast<std::size_t>(nodes));
  const int status = METIS_PartGraphKway(&nodes, &constraints, xadj.data(), adjncy.data(), weights.data(), nullptr,
                                         nullptr, &parts, nullptr, nullptr, settings, &cut, part.data());
  if (status != METIS_OK) throw std::runtime_error("METIS_PartGraphKway failed with status " + std::to_string(status));
  for (NodeId v = 0; v < graph.num_nodes(); ++v) result.owner[v] = static_cast<PartId>(part[v]);
  return result;
}

Partitioning bfs_block_partition(const CsrGraph& graph, const PartitionRequest& request, const Options& options) {
  const NodeId n = graph.num_nodes();
  const PartId k = request.parts;
  Partitioning result{k, std::vector<PartId>(n, 0)};
  if (k == 1 || n == 0) return result;
  const std::vector<char> mask = training_mask(n, request.training_nodes);
  std::mt19937_64 rng(request.seed);

  // 1. Blocks: multi-source BFS from random training nodes (enough blocks per part for the greedy
  //    step to balance), then from any node left (other components).
  constexpr NodeId kUnassigned = ~NodeId{0};
  std::vector<NodeId> block(n, kUnassigned);
  std::vector<NodeId> training;
  for (NodeId v = 0; v < n; ++v)
    if (mask[v]) training.push_back(v);
  std::shuffle(training.begin(), training.end(), rng);
  const std::size_t roots = std::min<std::size_t>(
      training.size(), static_cast<std::size_t>(k) * static_cast<std::size_t>(options.integer("blocks_per_part")));
  std::deque<NodeId> queue;
  NodeId blocks = 0;
  const auto grow = [&] {
    while (!queue.empty()) {
      const NodeId u = queue.front();
      queue.pop_front();
      for (NodeId w : graph.neighbours(u))
        if (block[w] == kUnassigned) {
          block[w] = block[u];
          queue.push_back(w);
        }
    }
  };
  for (std::size_t i = 0; i < roots; ++i) {
    block[training[i]] = blocks++;
    queue.push_back(training[i]);
  }
  grow();
  for (NodeId v = 0; v < n; ++v)
    if (block[v] == kUnassigned) {
      block[v] = blocks++;
      queue.push_back(v);
      grow();
    }

  // 2. Greedy assignment, largest blocks first: score(p) = (edges to p + 1) · (1 − train_p/quota)
  //    · (1 − nodes_p/quota), quotas `slack` × the mean (BGL balances training nodes and size).
  std::vector<std::vector<NodeId>> members(blocks);
  for (NodeId v = 0; v < n; ++v) members[block[v]].push_back(v);
  std::vector<NodeId> order(blocks);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](NodeId a, NodeId b) { return members[a].size() > members[b].size(); });
  const double slack = options.number("slack");
  const double train_quota = slack * static_cast<double>(std::max<std::size_t>(training.size(), 1)) / k + 1;
  const double node_quota = slack * static_cast<double>(n) / k + 1;
  std::vector<double> train_load(k, 0), node_load(k, 0);
  constexpr PartId kNone = ~PartId{0};
  std::vector<PartId> block_part(blocks, kNone);
  std::vector<double> links(k);
  for (NodeId b : order) {
    std::fill(links.begin(), links.end(), 0.0);
    double block_training = 0;
    for (NodeId v : members[b]) {
      block_training += mask[v];
      for (NodeId w : graph.neighbours(v))
        if (block_part[block[w]] != kNone) links[block_part[block[w]]] += 1;
    }
    // A partition over either quota scores 0; when all are, the least-loaded one takes the block.
    PartId best = 0;
    double best_score = 0;
    for (PartId p = 0; p < k; ++p) {
      const double score = (links[p] + 1) * std::max(0.0, 1 - train_load[p] / train_quota) *
                           std::max(0.0, 1 - node_load[p] / node_quota);
      if (score > best_score) {
        best_score = score;
        best = p;
      }
    }
    if (best_score == 0)
      best = static_cast<PartId>(std::min_element(node_load.begin(), node_load.end()) - node_load.begin());
    block_part[b] = best;
    train_load[best] += block_training;
    node_load[best] += static_cast<double>(members[b].size());
  }
  for (NodeId v = 0; v < n; ++v) result.owner[v] = block_part[block[v]];
  return result;
}

OptionSchema metis_options() {
  OptionSchema schema;
  // 1.03 is METIS 5's own default for k-way partitioning (ufactor 30).
  schema
      .number("imbalance", 1.03,
              "largest part's weight over the mean allowed per constraint (METIS ufactor / 1000 + 1)")
      .range(1.001, 3);
  return schema;
}

OptionSchema bfs_block_options() {
  OptionSchema schema;
  schema.integer("blocks_per_part", 16, "BFS blocks grown per part: more blocks balance better and cut more edges")
      .range(1, 1 << 16);
  schema.number("slack", 1.05, "each part's quota of training nodes and of nodes, as a multiple of the mean")
      .range(1, 4);
  return schema;
}

void register_builtin_partitioners(PartitionerRegistry& r) {
  r.add("hash", "node v to hash(v, seed) mod k: balanced in expectation, cut ≈ (1 − 1/k) of the edges",
        "Alibaba Euler (2019); the random baseline of BGL §3.2", hash_partition);
  r.add("metis", "METIS 5 multilevel k-way, balancing nodes and training nodes (two constraints)",
        "Karypis & Kumar, SIAM J. Sci. Comput. 1998; constraints as DistDGL, IA3'20 §3.3", metis_partition,
        metis_options());
  r.add("bfs-block",
        "BGL-like: multi-source BFS blocks from random training nodes, assigned greedily by neighbours × balance",
        "Liu et al., BGL, NSDI'23 §4.2 (reconstructed)", bfs_block_partition, bfs_block_options());
}

}  // namespace

PartitionStats partition_stats(const CsrGraph& graph, const Partitioning& partitioning,
                               std::span<const NodeId> training_nodes) {
  PartitionStats stats;
  const std::vector<char> mask = training_mask(graph.num_nodes(), training_nodes);
  std::vector<double> nodes(partitioning.parts, 0), edges(partitioning.parts, 0), training(partitioning.parts, 0);
  for (NodeId v = 0; v < graph.num_nodes(); ++v) {
    const PartId p = partitioning.owner[v];
    nodes[p] += 1;
    edges[p] += graph.degree(v);
    training[p] += mask[v];
    for (NodeId w : graph.neighbours(v))
      if (v < w && partitioning.owner[w] != p) ++stats.edge_cut;
  }
  stats.cut_ratio = graph.undirected_edges() == 0
                        ? 0
                        : static_cast<double>(stats.edge_cut) / static_cast<double>(graph.undirected_edges());
  stats.node_balance = max_over_mean(nodes);
  stats.edge_balance = max_over_mean(edges);
  stats.training_balance = max_over_mean(training);
  return stats;
}

const PartitionerRegistry& builtin_partitioners() {
  return builtin_registry<PartitionerRegistry, register_builtin_partitioners>("partitioner");
}

Partitioning partition_with_defaults(const std::string& name, const CsrGraph& graph, const PartitionRequest& request) {
  const PartitionerRegistry& registry = builtin_partitioners();
  return registry.at(name).value(graph, request, registry.defaults(name));
}

}  // namespace dnnsim::gnn
