// One epoch of sampled GNN training replayed on the real graph, as per-mini-batch counts: what a
// timing model (the `gnn` workload kind, or a BGL-style estimate) turns into stage times.
//
// Layout as in DistDGL (Zheng et al., IA3'20) and BGL (Liu et al., NSDI'23 §3): `servers` graph-store
// servers, server s holding partition s, each with `gpus_per_server` trainers. A trainer draws its
// seeds from its own partition's training nodes (in the chosen ordering, dealt round-robin over the
// server's GPUs in whole mini-batches). Expanding a node owned by another server is a remote
// sampling request; its sampled edges come back over the network. Each input node's feature comes
// from the server's GPU cache (local or peer GPU), its host memory (own partition) or a remote server.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/gnn/feature_cache.hpp"
#include "models/gnn/partitioner.hpp"
#include "models/gnn/sampler.hpp"

namespace dnnsim::gnn {

struct EpochSetup {
  std::uint32_t servers = 1;
  std::uint32_t gpus_per_server = 1;
  std::uint32_t batch_size = 1000;
  std::vector<std::uint32_t> fanouts;  // from the output layer
  std::string sampler = "node-wise";
  std::string ordering = "uniform";
  Options ordering_options;  // its declared options: builtin_orderings().defaults(ordering) when none are given
  std::string cache = "none";
  std::uint64_t cache_nodes_per_server = 0;  // split evenly across the server's GPUs
  std::uint64_t seed = 1;
  // Epochs replayed one after the other: the seed order is re-drawn each epoch, the caches carry over.
  std::uint32_t epochs = 1;
  // Called after every round of batches with the fraction of the replay done; returning false stops
  // it (Ctrl-C). Empty: no calls.
  std::function<bool(double)> progress;
};

struct LayerCounts {
  std::uint32_t num_dst = 0;
  std::uint32_t num_src = 0;
  std::uint64_t edges = 0;
};

struct BatchCounts {
  std::uint32_t server = 0;
  std::uint32_t gpu = 0;  // within the server
  std::uint32_t epoch = 0;
  std::vector<LayerCounts> layers;      // from the output layer
  std::uint64_t local_expansions = 0;   // destination nodes expanded on the trainer's server
  std::uint64_t remote_expansions = 0;  // … on another server (a sampling request over the network)
  std::uint64_t remote_edges = 0;       // edges sampled by remote expansions
  FeatureSourceCounts features;         // input nodes by where their features come from
  // The remote and peer parts by who serves them, so a timing model sends each request to its
  // owner: per server (the trainer's own entry stays zero) the expansions it samples, the edges it
  // returns and the features it sends; per GPU of the server the features read from its cache part.
  struct FromServer {
    std::uint64_t expansions = 0, edges = 0, features = 0;
  };
  std::vector<FromServer> from_server;
  std::vector<std::uint64_t> from_peer_gpu;
};

struct EpochCounts {
  std::vector<BatchCounts> batches;  // per epoch in dealing order: round r gives every trainer its r-th batch
  FeatureSourceCounts features;
  CrossPartitionCount cross;
  bool stopped = false;  // EpochSetup::progress asked to stop: the batches are those replayed so far
};

// @throw InputError for unknown sampler, ordering or cache names.
[[nodiscard]] EpochCounts replay_epoch(const CsrGraph& graph, const Partitioning& partitioning,
                                       std::span<const NodeId> training_nodes, const EpochSetup& setup);

}  // namespace dnnsim::gnn
