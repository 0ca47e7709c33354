// The GNN workload kind (`workload.kind: gnn`, docs/gnn.md): sampled GNN training on a real or
// generated graph, partitioned over the cluster's nodes as graph-store servers, every GPU a
// trainer. The pure layer (models/gnn) samples the epoch for real — partitioner, sampler, seed
// ordering and feature cache as named — counts each mini-batch and prices the counts (batch_cost:
// CPU core-seconds, bytes on each link, GPU work); this kind times the GPU work with the cost model
// and runs the batches through the SimGrid pipeline of gnn_pipeline.hpp, with the cores split per
// stage (BGL's isolation, by its profiling-based assignment or by hand) or one pool per stage sized
// to the machine (shared).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/gnn/batch_cost.hpp"
#include "models/gnn/epoch_trace.hpp"
#include "models/gnn/graph.hpp"
#include "models/gnn/layer_flops.hpp"
#include "sim/workloads/gnn/gnn_pipeline.hpp"
#include "sim/workloads/workload_kind.hpp"

namespace dnnsim {

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
  std::shared_ptr<const gnn::CsrGraph>
      graph;                   // loaded at parse for files (their errors are input errors); generated at run
  gnn::NodeId node_count = 0;  // known at parse for both
  gnn::FeatureSpec features;
  double training_fraction = 1;
  std::string partitioner = "hash";
  Options partitioner_options;  // its declared options (builtin_partitioners().defaults when none are given)
  gnn::EpochSetup setup;        // servers, GPUs, sampler, fan-outs, ordering, cache, epochs (seed: the run's)
  gnn::GnnLayerKind layer = gnn::GnnLayerKind::sage;
  std::string layer_name = "sage";
  std::uint32_t hidden = 256, classes = 2;
  Dtype dtype = Dtype::fp32;
  std::uint32_t queue_depth = 4;
  GnnCoreMode cores = GnnCoreMode::isolated;
  std::optional<std::vector<std::uint32_t>> split;  // isolated: cores of sample, gather, copy, dispatch per server
  int cpu_cores = 1;                                // per node (every node type's cpu_cores; they must agree)
  // A node type's cpu_cores refused or not given, its cpu_memory_bandwidth refused (each reported where
  // it is, or as missing): the checks against these figures skip them.
  bool cores_unknown = false;
  bool memory_bandwidth_refused = false;
  std::optional<BytesPerSecond> memory_bandwidth;   // per node (the node types' cpu_memory_bandwidth)
  std::string interference = "none";                // pipeline.interference (models/gnn/cpu_interference.hpp)
  gnn::CpuInterference interference_model;          // that entry with its options, resolved when read
  int gpus_per_node = 1;
  GnnCpuCosts costs;

  [[nodiscard]] std::string failures_unsupported() const override {
    return "the gnn pipeline has no failure model (a cut transfer or a failed GPU would end the epoch); "
           "network.failures is for workloads lowered to a task graph (docs/scenarios.md)";
  }
};

struct GnnReport : WorkloadResult {
  std::shared_ptr<const GnnWorkload> spec;
  gnn::EpochCounts epoch;
  gnn::PartitionStats partition;
  std::vector<GnnBatchWork> work;                   // every batch, all servers
  std::vector<std::vector<std::uint32_t>> threads;  // per server, per pool (sample, gather, copy)
  // Per server, the cores of each role (sample, gather, copy, dispatch) when isolated; one entry
  // (all the cores, shared by every role) when shared.
  std::vector<std::vector<std::uint32_t>> cores;
  std::string assignment;  // how the cores and threads were chosen
  GnnPipelineResult sim;
  double graph_bytes = 0;
  std::uint64_t undirected_edges = 0;
  std::size_t training_nodes = 0;
};

// The graph a run of `scenario` (a gnn workload) trains on: the file it names, or the graph its
// generator draws with the run's seed. `dnnsim graph SCENARIO --out FILE.csr` saves it, so that the
// next runs (a sweep's points) load it instead of generating it again. @throw InputError (the
// memory guard of generated graphs)
[[nodiscard]] std::shared_ptr<const gnn::CsrGraph> gnn_graph(const Scenario& scenario);

[[nodiscard]] std::shared_ptr<const WorkloadKind> make_gnn_kind();

}  // namespace dnnsim
