#include "sim/workloads/gnn/gnn_reading.hpp"

#include <fmt/format.h>

#include "models/common/option_reader.hpp"
#include "models/gnn/cpu_interference.hpp"
#include "models/gnn/feature_cache.hpp"
#include "models/gnn/partitioner.hpp"
#include "models/gnn/sampler.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/workload_reading.hpp"
#include "sim/workloads/gnn/gnn_pipeline.hpp"

namespace dnnsim {
namespace {

using gnn::NodeId;

// `graph: {file: …, nodes: …}` or `graph: {generate: rmat|power_law, nodes: …, edges: …, …}`.
void read_graph(WorkloadParseContext& ctx, const YAML::Node& node, GnnWorkload& spec) {
  YamlReader& reader = ctx.reader;
  MapReader map(reader, node, "the graph section");
  if (!map.valid()) return;
  const bool has_file = map.has("file"), has_generator = map.has("generate");
  if (has_file == has_generator) {
    map.exactly_one_of({"file", "generate"}, node,
                       "give exactly one of 'file' (an edge list or METIS graph) and 'generate' (rmat or power_law)");
  }
  if (auto nodes = map.integer("nodes", 1, std::numeric_limits<NodeId>::max()))
    spec.source.nodes = static_cast<NodeId>(*nodes);
  if (has_file) {
    if (auto file = map.string("file")) {
      spec.source.file = ctx.resolve_path(*file);
      try {
        spec.graph = std::make_shared<const gnn::CsrGraph>(gnn::load_graph_file(spec.source.file, spec.source.nodes));
        spec.node_count = spec.graph->num_nodes();
      } catch (const InputError& error) {
        reader.sink().append(error.diagnostics());
      }
    }
  } else if (has_generator) {
    if (auto model = map.choice("generate", "graph generator", {"rmat", "power_law"})) spec.source.generator = *model;
    if (!spec.source.nodes && !map.refused("nodes")) reader.error(node, "a generated graph needs 'nodes'");
    const NodeId nodes = spec.source.nodes.value_or(0);
    spec.node_count = nodes;
    if (spec.source.generator == "rmat") {
      spec.source.rmat.nodes = nodes;
      if (auto edges = map.integer("edges", 1, std::int64_t{1} << 40, true))
        spec.source.rmat.edges = static_cast<std::uint64_t>(*edges);
      spec.source.rmat.a = map.number("a", 0, 1).value_or(spec.source.rmat.a);
      spec.source.rmat.b = map.number("b", 0, 1).value_or(spec.source.rmat.b);
      spec.source.rmat.c = map.number("c", 0, 1).value_or(spec.source.rmat.c);
      if (spec.source.rmat.a + spec.source.rmat.b + spec.source.rmat.c > 1)
        reader.error(node, "R-MAT probabilities a + b + c must not exceed 1 (d = 1 − a − b − c)");
    } else if (spec.source.generator == "power_law") {
      spec.source.power_law.nodes = nodes;
      spec.source.power_law.alpha = map.number("alpha", 1e-3, 100).value_or(spec.source.power_law.alpha);
      spec.source.power_law.beta = map.number("beta", 1, 1e12).value_or(spec.source.power_law.beta);
    }
  }
  // `generate` says what the other keys mean: after an unknown or misspelt one, an rmat's `edges` is
  // not also an unknown key.
  if (map.refused("generate")) map.declare_all_but_misspellings_of("generate");
  map.finish();
}

void read_features(YamlReader& reader, const YAML::Node& node, GnnWorkload& spec) {
  MapReader map(reader, node, "the features section");
  if (!map.valid()) return;
  if (auto dimension = map.integer("dimension", 1, 1 << 24, true))
    spec.features.dimension = static_cast<std::uint32_t>(*dimension);
  if (auto dtype = read_dtype(map)) spec.features.dtype_bytes = static_cast<std::uint32_t>(dtype_bytes(*dtype));
  map.finish();
}

void read_sampling(YamlReader& reader, MapReader& map, GnnWorkload& spec) {
  gnn::EpochSetup& setup = spec.setup;
  if (const YAML::Node sampler = map.get("sampler"); sampler.IsDefined())
    if (auto selection = read_entry(reader, sampler, gnn::builtin_samplers())) setup.sampler = selection->name;
  if (YAML::Node fanouts = map.require("fanouts"); fanouts.IsDefined()) {
    for (const YAML::Node& item : reader.list(fanouts, "fan-outs")) {
      // A fan-out of 0 samples nothing and a negative one is meaningless: both are errors, not clamps.
      if (auto fanout = reader.integer(item, 1, 1 << 20)) setup.fanouts.push_back(static_cast<std::uint32_t>(*fanout));
    }
    if (fanouts.IsSequence() && fanouts.size() == 0) reader.error(fanouts, "fanouts needs one entry per GNN layer");
  }
  if (auto batch = map.integer("batch_size", 1, 1 << 30, true)) setup.batch_size = static_cast<std::uint32_t>(*batch);
  setup.ordering_options = gnn::builtin_orderings().defaults(setup.ordering);
  if (YAML::Node ordering = map.get("ordering"); ordering.IsDefined())
    if (auto selection = read_entry(reader, ordering, gnn::builtin_orderings())) {
      setup.ordering = selection->name;
      setup.ordering_options = std::move(selection->options);
    }
  if (auto epochs = map.integer("epochs", 1, 1 << 20)) setup.epochs = static_cast<std::uint32_t>(*epochs);
}

void read_cache(YamlReader& reader, const YAML::Node& node, GnnWorkload& spec, const Cluster& cluster) {
  MapReader map(reader, node, "the cache section");
  if (!map.valid()) return;
  const gnn::CacheRegistry& policies = gnn::builtin_caches();
  if (auto policy = map.choice("policy", "cache policy", policies.names(), true)) spec.setup.cache = *policy;
  const bool has_bytes = map.has("per_gpu"), has_fraction = map.has("fraction");
  if (!policies.at(spec.setup.cache).value.holds_features) {
    // A refused policy leaves the default in its place ('none'): its size is not judged against that.
    if ((has_bytes || has_fraction) && !map.refused("policy"))
      reader.error(map.get(has_bytes ? "per_gpu" : "fraction"),
                   fmt::format("cache policy '{}' keeps no features in GPU memory: give it no size", spec.setup.cache));
  } else if (has_bytes == has_fraction) {
    map.exactly_one_of({"per_gpu", "fraction"}, node,
                       "give exactly one of 'per_gpu' (bytes of GPU memory per GPU) and 'fraction' (of the graph's "
                       "nodes, per server)");
  }
  const double feature_bytes = spec.features.per_node().value();
  double per_gpu_bytes = 0;
  YAML::Node size_node;
  if (has_bytes) {
    size_node = map.get("per_gpu");
    if (auto bytes = map.quantity<Bytes>("per_gpu")) {
      per_gpu_bytes = bytes->value();
      if (feature_bytes > 0)
        spec.setup.cache_nodes_per_server =
            static_cast<std::uint64_t>(per_gpu_bytes / feature_bytes) * static_cast<std::uint64_t>(spec.gpus_per_node);
    }
  } else if (has_fraction) {
    size_node = map.get("fraction");
    if (auto fraction = map.number("fraction", 0, 1)) {
      spec.setup.cache_nodes_per_server = static_cast<std::uint64_t>(*fraction * spec.node_count);
      per_gpu_bytes = static_cast<double>(spec.setup.cache_nodes_per_server) / spec.gpus_per_node * feature_bytes;
    }
  }
  // The cache lives in GPU memory: a part larger than the GPU cannot exist.
  for (const NodeType& type : cluster.node_types)
    if (per_gpu_bytes > type.gpu.memory.value() && type.gpu.memory.value() > 0)
      reader.error(size_node, fmt::format("the cache takes {} per GPU, more than the {} of a {} ({})",
                                          format_bytes(Bytes(per_gpu_bytes)), format_bytes(type.gpu.memory),
                                          type.gpu.name, type.name));
  map.finish();
}

void read_model(YamlReader& reader, const YAML::Node& node, GnnWorkload& spec, const Cluster& cluster) {
  MapReader map(reader, node, "the model section");
  if (!map.valid()) return;
  if (auto layer = map.choice("layer", "GNN layer", {"gcn", "sage", "gat"})) {
    spec.layer_name = *layer;
    spec.layer = gnn::gnn_layer_kind(*layer);
  }
  if (auto hidden = map.integer("hidden", 1, 1 << 20)) spec.hidden = static_cast<std::uint32_t>(*hidden);
  if (auto classes = map.integer("classes", 1, 1 << 20, true)) spec.classes = static_cast<std::uint32_t>(*classes);
  spec.dtype = read_kernel_dtype(map, cluster).value_or(spec.dtype);
  map.finish();
}

void read_pipeline(YamlReader& reader, const YAML::Node& node, GnnWorkload& spec) {
  MapReader map(reader, node, "the pipeline section");
  if (!map.valid()) return;
  if (auto depth = map.integer("queue_depth", 1, 1 << 20)) spec.queue_depth = static_cast<std::uint32_t>(*depth);
  if (YAML::Node interference = map.get("interference"); interference.IsDefined())
    if (auto selection = read_entry(reader, interference, gnn::builtin_interference_models())) {
      spec.interference = selection->name;
      spec.interference_model = gnn::builtin_interference_models().at(spec.interference).value(selection->options);
      // The model shares the node's memory bandwidth: it has to know it.
      if (spec.interference_model.enabled && !spec.memory_bandwidth && !spec.memory_bandwidth_refused)
        reader.error(interference,
                     fmt::format("interference model '{}' shares the memory bandwidth of the nodes' CPUs: give the "
                                 "node types `cpu_memory_bandwidth` (e.g. \"26GB/s\", docs/gnn.md)",
                                 spec.interference));
    }
  if (auto cores = map.choice("cores", {"isolated", "shared"}))
    spec.cores = *cores == "shared" ? GnnCoreMode::shared : GnnCoreMode::isolated;
  if (YAML::Node split = map.get("split"); split.IsDefined()) {
    if (spec.cores == GnnCoreMode::shared)
      reader.error(split, "'split' gives isolated stages their cores; it has no meaning with cores: shared");
    MapReader split_map(reader, split, "the core split");
    std::vector<std::uint32_t> cores;
    for (const char* role : {"sample", "gather", "copy", "dispatch"})
      cores.push_back(static_cast<std::uint32_t>(split_map.integer(role, 1, 1 << 16, true).value_or(1)));
    split_map.finish();
    const auto total = std::accumulate(cores.begin(), cores.end(), 0U);
    if (static_cast<int>(total) > spec.cpu_cores && !spec.cores_unknown)
      reader.error(split,
                   fmt::format("the split takes {} cores, but a node has {} (cpu_cores)", total, spec.cpu_cores));
    spec.split = cores;
  } else if (spec.cores == GnnCoreMode::isolated && spec.cpu_cores < kGnnCpuRoles && !spec.cores_unknown) {
    reader.error(
        node,
        fmt::format(
            "isolation needs a core for each of sample, gather, copy and dispatch, but a node has {} (cpu_cores); "
            "use cores: shared",
            spec.cpu_cores));
  }
  map.finish();
}

void read_cpu_costs(YamlReader& reader, const YAML::Node& node, GnnCpuCosts& costs) {
  MapReader map(reader, node, "the cpu_costs section");
  if (!map.valid()) return;
  costs.sample_edge = map.quantity<Seconds>("sample_edge").value_or(costs.sample_edge);
  costs.gather_bandwidth = map.positive_quantity<BytesPerSecond>("gather_bandwidth").value_or(costs.gather_bandwidth);
  costs.op_dispatch = map.quantity<Seconds>("op_dispatch").value_or(costs.op_dispatch);
  map.finish();
}

// Every node is a graph-store server with the same CPU and GPU count (one partition each).
void read_nodes(WorkloadParseContext& ctx, GnnWorkload& spec) {
  const Cluster& cluster = ctx.cluster;
  if (cluster.nodes.empty()) {
    // The cluster had errors of its own: its cores and memory bandwidth are not known, not missing.
    spec.cores_unknown = true;
    spec.memory_bandwidth_refused = true;
    return;
  }
  spec.setup.servers = static_cast<std::uint32_t>(cluster.nodes.size());
  const NodeType& first = cluster.type_of(cluster.nodes.front());
  spec.gpus_per_node = first.gpus_per_node;
  spec.setup.gpus_per_server = static_cast<std::uint32_t>(first.gpus_per_node);
  spec.memory_bandwidth = first.cpu_memory_bandwidth;
  // A figure refused where it was written is reported there; checks against it would report it again.
  bool refused = false;
  for (const NodeType& type : cluster.node_types) {
    spec.cores_unknown |= !type.cpu_cores.has_value();
    spec.memory_bandwidth_refused |= type.refused_key("cpu_memory_bandwidth");
    refused |= type.refused_key("cpu_cores") || type.refused_key("cpu_memory_bandwidth");
  }
  for (const NodeType& type : cluster.node_types) {
    if (!type.cpu_cores) {
      if (!type.refused_key("cpu_cores"))
        ctx.reader.error(
            ctx.map.node(),
            fmt::format("node type '{}' has no cpu_cores: the gnn workload samples and gathers on the host "
                        "CPU; add `cpu_cores: N` to it",
                        type.name));
      continue;
    }
    spec.cpu_cores = *type.cpu_cores;
  }
  if (refused) return;  // the nodes' shapes would differ by the figures put in place of the refused ones
  for (const NodeInstance& node : cluster.nodes) {
    const NodeType& type = cluster.type_of(node);
    if (type.gpus_per_node != first.gpus_per_node || type.cpu_cores != first.cpu_cores ||
        type.cpu_memory_bandwidth != first.cpu_memory_bandwidth)
      ctx.reader.error(
          ctx.map.node(),
          fmt::format("the gnn workload needs nodes of one shape: '{}' has {} GPUs, {} cores and {} of memory "
                      "bandwidth, '{}' {}, {} and {}",
                      cluster.nodes.front().name, first.gpus_per_node, first.cpu_cores.value_or(0),
                      first.cpu_memory_bandwidth ? format_bandwidth(*first.cpu_memory_bandwidth) : "no figure",
                      node.name, type.gpus_per_node, type.cpu_cores.value_or(0),
                      type.cpu_memory_bandwidth ? format_bandwidth(*type.cpu_memory_bandwidth) : "no figure"));
  }
}

}  // namespace

std::shared_ptr<GnnWorkload> read_gnn_workload(WorkloadParseContext& ctx) {
  auto spec = std::make_shared<GnnWorkload>();
  MapReader& map = ctx.map;
  YamlReader& reader = ctx.reader;
  spec->where = reader.where(map.node());
  read_nodes(ctx, *spec);
  if (const YAML::Node graph = map.require("graph"); graph.IsDefined()) read_graph(ctx, graph, *spec);
  if (const YAML::Node features = map.require("features"); features.IsDefined()) read_features(reader, features, *spec);
  spec->training_fraction = map.number("training_nodes", 0, 1).value_or(1.0);
  if (spec->training_fraction <= 0)
    reader.error(map.get("training_nodes"), "training_nodes must be a fraction in (0, 1] of the nodes");
  spec->partitioner_options = gnn::builtin_partitioners().defaults(spec->partitioner);
  if (const YAML::Node partitioner = map.get("partitioner"); partitioner.IsDefined())
    if (auto selection = read_entry(reader, partitioner, gnn::builtin_partitioners())) {
      spec->partitioner = selection->name;
      spec->partitioner_options = std::move(selection->options);
    }
  read_sampling(reader, map, *spec);
  if (YAML::Node cache = map.get("cache"); cache.IsDefined()) read_cache(reader, cache, *spec, ctx.cluster);
  if (const YAML::Node model = map.require("model"); model.IsDefined()) read_model(reader, model, *spec, ctx.cluster);
  if (YAML::Node pipeline = map.get("pipeline"); pipeline.IsDefined()) {
    read_pipeline(reader, pipeline, *spec);
  } else if (spec->cpu_cores < kGnnCpuRoles && !ctx.cluster.nodes.empty() && reader.sink().empty()) {
    reader.error(map.node(),
                 fmt::format("isolated stages (the default) need {} cores per node (sample, gather, copy, dispatch), "
                             "the nodes have {}: set pipeline: {{cores: shared}}",
                             kGnnCpuRoles, spec->cpu_cores));
  }
  if (YAML::Node costs = map.get("cpu_costs"); costs.IsDefined()) read_cpu_costs(reader, costs, spec->costs);
  if (spec->node_count > 0 && spec->node_count < spec->setup.servers)
    reader.error(map.get("graph"),
                 fmt::format("the graph has {} nodes, fewer than the {} graph-store servers (one partition per node)",
                             spec->node_count, spec->setup.servers));
  return spec;
}

}  // namespace dnnsim
