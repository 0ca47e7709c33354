// The GNN workload kind (`workload.kind: gnn`, docs/gnn.md): sampled GNN training on a real or
// generated graph, partitioned over the cluster's nodes as graph-store servers, every GPU a
// trainer. The pure layer (models/gnn) samples the epoch for real — partitioner, sampler, seed
// ordering and feature cache as named — and counts each mini-batch; this kind prices those counts
// (CPU core-seconds, bytes on each link, GPU time through the cost model) and runs them through
// the SimGrid pipeline of gnn_pipeline.hpp, with the cores split per stage (BGL's isolation, by its
// profiling-based assignment or by hand) or one pool per stage sized to the machine (shared).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/gnn/epoch_trace.hpp"
#include "models/gnn/graph.hpp"
#include "models/gnn/layer_flops.hpp"
#include "sim/workloads/gnn/gnn_pipeline.hpp"
#include "sim/workloads/workload_kind.hpp"

namespace dnnsim {

// CPU costs of the data path, per core. Defaults are measurements on this project's machine, with
// the command in docs/performance.md ("GNN data path"), except op_dispatch (a cited range).
struct GnnCpuCosts {
  // Sampling: gnn_bench's 5.5 M sampled edges per CPU-second on an ogbn-products-sized graph (the
  // memory-bound case the BGL setting is; a cache-resident graph such as PubMed samples ~7× faster).
  Seconds sample_edge{1.0 / 5.5e6};
  // Feature gathering: gnn_bench's random-row gather of 400-byte rows from a 0.98 GB table, 3.0 GB/s.
  BytesPerSecond gather_bandwidth{3.0e9};
  // CPU work to dispatch one GPU kernel in eager PyTorch: 5–25 µs per op (Python, autograd and
  // ATen dispatch, cudaLaunchKernel); 10 µs taken.
  Seconds op_dispatch{10e-6};
};

enum class GnnCoreMode { isolated, shared };

struct GnnGraphSource {
  std::string file;  // a graph file, or empty for a generator
  std::optional<gnn::NodeId> nodes;
  std::string generator;  // "rmat" or "power_law"
  gnn::RmatParams rmat;
  gnn::PowerLawParams power_law;
};

struct GnnWorkload : WorkloadSpec {
  GnnGraphSource source;
  std::shared_ptr<const gnn::CsrGraph> graph;  // loaded at parse for files (their errors are input errors); generated at run
  gnn::NodeId node_count = 0;                  // known at parse for both
  gnn::FeatureSpec features;
  double training_fraction = 1;
  std::string partitioner = "hash";
  gnn::EpochSetup setup;  // servers, GPUs, sampler, fan-outs, ordering, cache, epochs (seed: the run's)
  std::optional<double> cache_fraction;  // of the graph's nodes, per server; else setup.cache_nodes_per_server
  gnn::GnnLayerKind layer = gnn::GnnLayerKind::sage;
  std::string layer_name = "sage";
  std::uint32_t hidden = 256, classes = 2;
  Dtype dtype = Dtype::fp32;
  std::uint32_t queue_depth = 4;
  GnnCoreMode cores = GnnCoreMode::isolated;
  std::optional<std::vector<std::uint32_t>> split;  // sample, gather, copy threads per server
  int cpu_cores = 1;   // per node (every node type's cpu_cores; they must agree)
  int gpus_per_node = 1;
  GnnCpuCosts costs;
};

struct GnnReport : WorkloadResult {
  std::shared_ptr<const GnnWorkload> spec;
  gnn::EpochCounts epoch;
  gnn::PartitionStats partition;
  std::vector<GnnBatchWork> work;  // every batch, all servers
  std::vector<std::vector<std::uint32_t>> threads;  // per server, per CPU stage
  std::string assignment;  // how the threads were chosen
  GnnPipelineResult sim;
  double graph_bytes = 0;
  std::uint64_t undirected_edges = 0;
  std::size_t training_nodes = 0;
};

[[nodiscard]] std::shared_ptr<const WorkloadKind> make_gnn_kind();

}  // namespace dnnsim
