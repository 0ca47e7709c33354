#include "models/gnn/epoch_trace.hpp"

#include <algorithm>
#include <stdexcept>

namespace dnnsim::gnn {
namespace {

// What one sampled mini-batch of trainer (s, g) asks of whom; its feature reads go through the
// server's cache, which they update.
BatchCounts count_batch(const MiniBatch& batch, const Partitioning& partitioning, const EpochSetup& setup,
                        std::uint32_t s, std::uint32_t g, std::uint32_t e, ServerCache& cache) {
  BatchCounts counts{.server = s, .gpu = g, .epoch = e};
  counts.from_server.resize(setup.servers);
  counts.from_peer_gpu.resize(setup.gpus_per_server);
  for (const SampledLayer& layer : batch.layers) {
    counts.layers.push_back({layer.num_dst, static_cast<std::uint32_t>(layer.nodes.size()), layer.edges.size()});
    for (std::uint32_t d = 0; d < layer.num_dst; ++d) {
      const PartId owner = partitioning.owner[layer.nodes[d]];
      if (owner == s) {
        ++counts.local_expansions;
      } else {
        ++counts.remote_expansions;
        ++counts.from_server[owner].expansions;
      }
    }
    for (const auto& [src, dst] : layer.edges)
      if (const PartId owner = partitioning.owner[layer.nodes[dst]]; owner != s) {
        ++counts.remote_edges;
        ++counts.from_server[owner].edges;
      }
  }
  for (NodeId v : batch.input_nodes()) {
    const PartId owner = partitioning.owner[v];
    const FeatureSource source = cache.access(g, v, owner == s);
    if (source == FeatureSource::remote) ++counts.from_server[owner].features;
    if (source == FeatureSource::peer_gpu) ++counts.from_peer_gpu[cache.holder(v)];
    ++counts.features.count[static_cast<int>(source)];
  }
  return counts;
}

}  // namespace

EpochCounts replay_epoch(const CsrGraph& graph, const Partitioning& partitioning,
                         std::span<const NodeId> training_nodes, const EpochSetup& setup) {
  const SampleFunction& sample = builtin_samplers().at(setup.sampler).value;
  const OrderFunction& order = builtin_orderings().at(setup.ordering).value;
  const CacheFactory& cache_factory = builtin_caches().at(setup.cache).value.make;
  if (partitioning.parts != setup.servers) throw std::logic_error("replay_epoch: one partition per server expected");
  Rng rng(setup.seed);
  std::vector<ServerCache> caches;
  for (std::uint32_t s = 0; s < setup.servers; ++s)
    caches.emplace_back(cache_factory, graph, setup.cache_nodes_per_server, setup.gpus_per_server);
  EpochCounts epoch;
  SamplerWorkspace work(graph.num_nodes());
  for (std::uint32_t e = 0; e < setup.epochs; ++e) {
    const std::vector<NodeId> ordered = order(graph, training_nodes, setup.ordering_options, rng);
    // Each server's seeds in the epoch's order, cut into mini-batches.
    std::vector<std::vector<NodeId>> seeds(setup.servers);
    for (NodeId v : ordered) seeds[partitioning.owner[v]].push_back(v);
    std::size_t rounds = 0;
    for (const auto& server_seeds : seeds)
      rounds = std::max(rounds, (server_seeds.size() + setup.batch_size - 1) / setup.batch_size);
    for (std::size_t round = 0; round < rounds; ++round) {
      for (std::uint32_t s = 0; s < setup.servers; ++s) {
        const std::size_t batches = (seeds[s].size() + setup.batch_size - 1) / setup.batch_size;
        // Round r deals batches r·G … r·G + G − 1 of the server to its G GPUs.
        for (std::uint32_t g = 0; g < setup.gpus_per_server; ++g) {
          const std::size_t index = round * setup.gpus_per_server + g;
          if (index >= batches) break;
          const std::size_t begin = index * setup.batch_size;
          const std::size_t end = std::min(begin + setup.batch_size, seeds[s].size());
          const MiniBatch batch =
              sample(graph, std::span<const NodeId>(seeds[s].data() + begin, end - begin), setup.fanouts, rng, work);
          epoch.batches.push_back(count_batch(batch, partitioning, setup, s, g, e, caches[s]));
          for (int source = 0; source < kFeatureSources; ++source)
            epoch.features.count[source] += epoch.batches.back().features.count[source];
          count_cross_partition(batch, partitioning, epoch.cross);
        }
      }
      const double done = (e + static_cast<double>(round + 1) / static_cast<double>(rounds)) / setup.epochs;
      if (setup.progress && !setup.progress(done)) {
        epoch.stopped = true;
        return epoch;
      }
    }
  }
  return epoch;
}

}  // namespace dnnsim::gnn
