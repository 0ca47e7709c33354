// gnn_bench: speed and quality of the GNN data path on a graph of ogbn-products' size
// (docs/performance.md "GNN sampling", docs/gnn.md "Measured"). Not a test: its figures depend
// on the machine. Single-threaded throughout, so rates are per core.
//
// Usage: gnn_bench [nodes edges | GRAPH.edges] [batches] [batch_size]
//   default: an R-MAT graph of ogbn-products' size (2,449,029 nodes, 61,859,140 edges drawn; its
//   training split is 196,615 nodes ≈ 8%), 200 mini-batches of 1,000 seeds, fan-outs 15,10,5 from
//   the output layer (DGL's GraphSAGE example for ogbn-products). With an edge-list file the graph
//   is loaded instead (e.g. data/graphs/planetoid/pubmed.edges).
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "models/gnn/feature_cache.hpp"
#include "models/gnn/partitioner.hpp"
#include "models/gnn/sampler.hpp"

using namespace dnnsim::gnn;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double peak_rss_gib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / (1024.0 * 1024.0);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress as it happens
  const bool from_file = argc > 1 && std::string(argv[1]).find(".edges") != std::string::npos;
  const int next = from_file ? 2 : 3;
  const int batches = argc > next ? std::atoi(argv[next]) : 200;
  const auto kBatch = static_cast<std::uint32_t>(argc > next + 1 ? std::atoi(argv[next + 1]) : 1000);
  const std::vector<std::uint32_t> fanouts{15, 10, 5};

  auto start = std::chrono::steady_clock::now();
  CsrGraph graph;
  if (from_file) {
    graph = load_edge_list(argv[1]);
    fmt::print("load {}: {} nodes, {} undirected edges, {:.1f} s\n", argv[1], graph.num_nodes(),
               graph.undirected_edges(), seconds_since(start));
  } else {
    const auto nodes = static_cast<NodeId>(argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2449029);
    const std::uint64_t edges = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 61859140;
    graph = generate_rmat({.nodes = nodes, .edges = edges, .seed = 1});
    fmt::print(
        "generate R-MAT: {} nodes, {} undirected edges kept of {} drawn, CSR {:.2f} GiB, {:.1f} s, peak RSS {:.2f} "
        "GiB\n",
        graph.num_nodes(), graph.undirected_edges(), edges, graph.memory().value() / (1 << 30), seconds_since(start),
        peak_rss_gib());
  }

  Rng rng(11);
  std::vector<NodeId> training;
  for (NodeId v = 0; v < graph.num_nodes(); ++v)
    if (uniform_below(rng, 100) < 8) training.push_back(v);

  constexpr PartId kParts = 8;
  std::vector<Partitioning> partitionings;
  // METIS is left out above 20M neighbour entries: on the ogbn-products-sized graph it needs
  // minutes and several GB, beyond this benchmark's budget on the shared 2-core machine.
  std::vector<const char*> partitioners{"hash", "bfs-block"};
  if (graph.directed_edges() < 20'000'000) partitioners.push_back("metis");
  for (const char* name : partitioners) {
    start = std::chrono::steady_clock::now();
    partitionings.push_back(
        partition_with_defaults(name, graph, {.parts = kParts, .training_nodes = training, .seed = 1}));
    const PartitionStats stats = partition_stats(graph, partitionings.back(), training);
    fmt::print(
        "partition {:<9} {} parts: {:.1f} s, edge cut {:.3f}, balance nodes {:.2f} edges {:.2f} training {:.2f}\n",
        name, kParts, seconds_since(start), stats.cut_ratio, stats.node_balance, stats.edge_balance,
        stats.training_balance);
  }

  // Sampling throughput, and the input-node stream of each ordering for the cache replay.
  SamplerWorkspace work(graph.num_nodes());
  for (const char* ordering : {"uniform", "proximity"}) {
    Rng order_rng(5);
    const std::vector<NodeId> order =
        builtin_orderings().at(ordering).value(graph, training, builtin_orderings().defaults(ordering), order_rng);
    std::vector<MiniBatch> sampled;
    std::vector<CrossPartitionCount> cross(partitionings.size());
    start = std::chrono::steady_clock::now();
    const std::clock_t cpu_start = std::clock();
    std::uint64_t sampled_edges = 0;
    for (int b = 0; b < batches && (b + 1) * kBatch <= order.size(); ++b) {
      const std::span<const NodeId> seeds(order.data() + b * kBatch, kBatch);
      sampled.push_back(builtin_samplers().at("node-wise").value(graph, seeds, fanouts, rng, work));
      sampled_edges += sampled.back().sampled_edges();
    }
    const double elapsed = seconds_since(start);
    const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    fmt::print(
        "sample node-wise 15,10,5 ({} order): {} batches, {} sampled edges, {:.2f} s wall, {:.2f} s CPU, "
        "{:.2f} M sampled edges per CPU-second\n",
        ordering, sampled.size(), sampled_edges, elapsed, cpu, sampled_edges / cpu / 1e6);
    for (std::size_t p = 0; p < partitionings.size(); ++p) {
      for (const MiniBatch& batch : sampled) count_cross_partition(batch, partitionings[p], cross[p]);
      fmt::print("  cross-partition sampled edges ({} order, {}): {:.3f}\n", ordering, partitioners[p],
                 cross[p].ratio());
    }
    // Feature gathering, the gnn kind's cpu_costs.gather_bandwidth: the batches' input-node rows
    // (ogbn-products' 100 fp32 features, 400 B) copied from a table of every node's features into
    // one contiguous buffer per batch, as a data loader does before the host-to-device copy.
    if (std::string(ordering) == "uniform") {
      constexpr std::size_t kDimension = 100;
      std::vector<float> table(static_cast<std::size_t>(graph.num_nodes()) * kDimension, 1.0f);
      std::vector<float> buffer;
      double bytes = 0;
      const std::clock_t gather_start = std::clock();
      for (const MiniBatch& batch : sampled) {
        const std::span<const NodeId> inputs = batch.input_nodes();
        buffer.resize(inputs.size() * kDimension);
        for (std::size_t i = 0; i < inputs.size(); ++i)
          std::copy_n(table.data() + static_cast<std::size_t>(inputs[i]) * kDimension, kDimension,
                      buffer.data() + i * kDimension);
        bytes += static_cast<double>(inputs.size() * kDimension * sizeof(float));
      }
      const double gather_cpu = static_cast<double>(std::clock() - gather_start) / CLOCKS_PER_SEC;
      fmt::print(
          "gather 100 x fp32 features of the input nodes from a {:.2f} GB table: {:.2f} GB in {:.2f} s CPU, {:.2f} "
          "GB/s per core\n",
          static_cast<double>(table.size() * sizeof(float)) / 1e9, bytes / 1e9, gather_cpu, bytes / gather_cpu / 1e9);
    }
    // One GPU's cache of 5% or 25% of the nodes replaying the input-node stream.
    for (const int percent : {5, 25})
      for (const char* policy : {"degree", "lru", "fifo"}) {
        const auto cache = builtin_caches().at(policy).value.make(graph, graph.num_nodes() / 100 * percent);
        std::uint64_t hits = 0, accesses = 0;
        for (const MiniBatch& batch : sampled)
          for (NodeId v : batch.input_nodes()) {
            hits += cache->access(v);
            ++accesses;
          }
        fmt::print("  cache {:<6} {}% of nodes ({} order): hit ratio {:.3f} over {} accesses\n", policy, percent,
                   ordering, static_cast<double>(hits) / static_cast<double>(accesses), accesses);
      }
  }
  fmt::print("peak RSS {:.2f} GiB\n", peak_rss_gib());
  return 0;
}
