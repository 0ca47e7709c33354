#include "sim/workloads/gnn/gnn_kind.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>

#include "models/common/option_reader.hpp"
#include "models/gnn/batch_cost.hpp"
#include "models/gnn/cpu_interference.hpp"
#include "models/gnn/partitioner.hpp"
#include "models/gnn/sampler.hpp"
#include "planners/common/layer_cost.hpp"
#include "planners/gnn/core_assignment.hpp"
#include "sim/platform/platform.hpp"
#include "sim/run/progress.hpp"
#include "sim/run/resource_guard.hpp"
#include "sim/run/simulation.hpp"
#include "sim/scenario/cluster_view_builder.hpp"
#include "sim/scenario/layout.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workloads/gnn/gnn_reading.hpp"
#include "traces/network/preemption.hpp"

namespace dnnsim {
namespace {

using gnn::NodeId;

const char* const kStageNames[] = {"sample", "gather", "copy", "dispatch", "train", "allreduce"};  // GnnStage order

// The run's training nodes: `fraction` of the nodes, a seeded uniform choice, sorted.
std::vector<NodeId> choose_training_nodes(NodeId nodes, double fraction, std::uint64_t seed) {
  std::vector<NodeId> all(nodes);
  std::iota(all.begin(), all.end(), NodeId{0});
  const auto count = std::max<std::size_t>(1, static_cast<std::size_t>(fraction * nodes));
  gnn::Rng rng(seed);
  for (std::size_t i = 0; i < count; ++i)
    std::swap(all[i], all[i + gnn::uniform_below(rng, static_cast<std::uint32_t>(nodes - i))]);
  all.resize(count);
  std::sort(all.begin(), all.end());
  return all;
}

gnn::GnnModelShape model_shape(const GnnWorkload& spec) { return {spec.layer, spec.hidden, spec.classes, spec.dtype}; }

// BGL's profiling-based isolation (planners/gnn/core_assignment.hpp): each role's thread-seconds
// per batch, as the counts price them on an idle machine (own core-seconds, remote work and the
// transfers at their links' nominal bandwidth; the trainers' dispatch), split the node's cores.
std::vector<std::uint32_t> profile_split(const GnnWorkload& spec, const std::vector<GnnBatchWork>& work,
                                         const PlatformLayout& layout, std::uint32_t server) {
  std::vector<double> role(kGnnCpuRoles, 0.0);
  const NodeLayout& node = layout.nodes[server];
  const double h2d = layout.route_bandwidth(node.cpu_to_gpu.front()).value();
  const double network = layout.route_bandwidth(node.cpu_to_gateway).value();
  for (const GnnBatchWork& w : work) {
    if (w.server != server) continue;
    double sample = w.sample_core_seconds, gather = w.gather_core_seconds;
    for (const GnnRemoteWork& r : w.remote_sample)
      sample = std::max(sample, r.core_seconds + (r.request_bytes + r.response_bytes) / network);
    for (const GnnRemoteWork& r : w.remote_gather)
      gather = std::max(gather, r.core_seconds + (r.request_bytes + r.response_bytes) / network);
    role[0] += sample;
    role[1] += gather;
    role[2] += w.h2d_bytes / h2d;
    role[3] += w.dispatch_core_seconds;
  }
  return gnn::assign_cores(role, static_cast<std::uint32_t>(spec.cpu_cores)).cores;
}

TaskGraph activity_graph(const Scenario& scenario, const GnnReport& report, std::vector<double>& start,
                         std::vector<double>& end) {
  TaskGraph graph;
  for (const std::string& name : scenario.cluster.gpu_names()) graph.add_device(name);
  const auto gpu_count = static_cast<DeviceId>(graph.devices().size());
  for (const NodeInstance& node : scenario.cluster.nodes) graph.add_device(node.name + "/cpu");
  std::map<std::pair<int, std::uint32_t>, StreamId> streams;
  const auto stream_of = [&](GnnStage stage, std::uint32_t thread) {
    const auto key = std::pair{static_cast<int>(stage), stage >= GnnStage::train ? 0U : thread};
    if (auto it = streams.find(key); it != streams.end()) return it->second;
    // A pool thread, or a trainer's dispatch thread, is a track of the CPU; train and allreduce one of the GPU.
    return streams[key] = graph.add_stream(stage >= GnnStage::train
                                               ? kStageNames[static_cast<int>(stage)]
                                               : fmt::format("{} {}", kStageNames[static_cast<int>(stage)], thread));
  };
  std::vector<std::uint32_t> first_gpu{0};
  for (const NodeInstance& node : scenario.cluster.nodes)
    first_gpu.push_back(first_gpu.back() + scenario.cluster.type_of(node).gpus_per_node);
  for (const GnnActivity& a : report.sim.activities) {
    Task task;
    const DeviceId gpu = first_gpu[a.server] + a.thread;
    if (a.stage == GnnStage::allreduce) {
      // The ring's flow to the next trainer (servers then GPUs), as communication.
      task.op = Transfer{gpu, static_cast<DeviceId>((gpu + 1) % gpu_count), Bytes(0)};
    } else {
      Compute compute;
      compute.device = a.stage == GnnStage::train ? gpu : gpu_count + a.server;
      compute.flops = Flop(a.flops);
      compute.dtype = report.spec->dtype;
      task.op = compute;
    }
    task.stream = stream_of(a.stage, a.thread);
    task.phase = a.stage == GnnStage::train       ? Phase::forward
                 : a.stage == GnnStage::allreduce ? Phase::communication
                                                  : Phase::other;
    task.iteration = a.epoch;
    task.label = a.stage == GnnStage::allreduce
                     ? fmt::format("allreduce round {}", a.batch)
                     : fmt::format("batch {} {}", a.batch, kStageNames[static_cast<int>(a.stage)]);
    graph.add(std::move(task));
    start.push_back(a.start);
    end.push_back(a.end);
  }
  return graph;
}

// Edges a generator draws: R-MAT its `edges`; PLOD gives node v a degree credit β·x^−α with x
// uniform in 1…n, so the credits add up to β·Σ_{x=1..n} x^−α / n per node, β·Σ x^−α in all, and
// every edge spends two (the sum's terms past 10^6 are taken as an integral, exact to < 10^-6).
double drawn_edges(const GnnGraphSource& source, double nodes) {
  if (source.generator == "rmat") return static_cast<double>(source.rmat.edges);
  const double alpha = source.power_law.alpha;
  const double terms = std::min(nodes, 1e6);
  double sum = 0;
  for (double x = 1; x <= terms; ++x) sum += std::pow(x, -alpha);
  if (nodes > terms)
    sum += std::abs(alpha - 1) < 1e-12 ? std::log(nodes / terms)
                                       : (std::pow(nodes, 1 - alpha) - std::pow(terms, 1 - alpha)) / (1 - alpha);
  return source.power_law.beta * sum / 2;
}

// The resource guard for generated graphs (sim/run/resource_guard.hpp): their size is only known
// from the keys, and generating past the machine's memory would fail without a word. Peak memory
// while generating and sampling: 24 B per drawn edge (the generator's edge pairs, 8 B, beside the
// symmetric CSR being built, 2 × 4 B, and their sort) and 64 B per node (offsets, owner, sampler
// workspace, orderings, caches' index arrays): 1.64 GB for ogbn-products' size, as measured
// (/usr/bin/time -v, docs/performance.md "GNN epoch": 1.64 GB peak RSS). @throw InputError
void check_graph_memory(const Scenario& scenario, const GnnWorkload& spec) {
  if (spec.source.generator.empty()) return;
  const double edges = drawn_edges(spec.source, spec.node_count);
  const double bytes = 24.0 * edges + 64.0 * spec.node_count;
  const Bytes budget = memory_budget(scenario);
  if (bytes <= budget.value()) return;
  throw InputError(
      scenario.run.memory_budget ? scenario.run.memory_budget_where : spec.where,
      fmt::format("generating and sampling a {} graph of {} nodes and about {:.0f} edges would need about {} of "
                  "memory (24 B per edge, 64 B per node), {}. A graph of at most {:.0f} edges would fit",
                  spec.source.generator, spec.node_count, edges, format_bytes(Bytes(bytes)),
                  over_memory_budget(scenario.run), std::max(0.0, (budget.value() - 64.0 * spec.node_count) / 24.0)));
}

class GnnKind final : public WorkloadKind {
 public:
  std::shared_ptr<const WorkloadSpec> parse(WorkloadParseContext& ctx) const override { return read_gnn_workload(ctx); }

  std::string check(const Scenario& scenario) const override {
    const auto& spec = *scenario.workload_as<GnnWorkload>();
    check_graph_memory(scenario, spec);
    return fmt::format("ok ({} servers × {} GPUs, graph of {} nodes, {} sampler, fan-outs {}, {} cache, {} cores)",
                       spec.setup.servers, spec.setup.gpus_per_server, spec.node_count, spec.setup.sampler,
                       fmt::join(spec.setup.fanouts, ","), spec.setup.cache,
                       spec.cores == GnnCoreMode::isolated ? "isolated" : "shared");
  }

  SimulationResult run(const Scenario& scenario, const SimulationOptions& options) const override {
    const auto spec = std::dynamic_pointer_cast<const GnnWorkload>(scenario.workload);
    auto report = std::make_shared<GnnReport>();
    report->spec = spec;
    const std::uint64_t seed = scenario.run.seed;
    // The steps before the simulation take seconds to minutes on large graphs: each says so.
    const auto say = [&](const std::string& what) {
      if (options.progress != nullptr) *options.progress << "gnn: " << what << std::endl;
    };
    if (!spec->graph) say(fmt::format("generating a {} graph of {} nodes", spec->source.generator, spec->node_count));
    const std::shared_ptr<const gnn::CsrGraph> graph = gnn_graph(scenario);
    report->graph_bytes = graph->memory().value();
    report->undirected_edges = graph->undirected_edges();
    const std::vector<NodeId> training =
        choose_training_nodes(graph->num_nodes(), spec->training_fraction, derive_seed(seed, 1));
    report->training_nodes = training.size();
    say(fmt::format("partitioning {} nodes into {} ({})", graph->num_nodes(), spec->setup.servers, spec->partitioner));
    const gnn::Partitioning partitioning =
        gnn::builtin_partitioners()
            .at(spec->partitioner)
            .value(*graph, {spec->setup.servers, training, derive_seed(seed, 2)}, spec->partitioner_options);
    report->partition = gnn::partition_stats(*graph, partitioning, training);
    gnn::EpochSetup setup = spec->setup;
    setup.seed = derive_seed(seed, 3);
    std::optional<SearchProgress> sampling;
    if (options.progress != nullptr) {
      sampling.emplace(*options.progress, ::isatty(STDERR_FILENO) != 0, "gnn", std::nullopt, "of the epochs sampled");
      setup.progress = [&sampling](double fraction) { return (*sampling)(fraction); };
    }
    report->epoch = gnn::replay_epoch(*graph, partitioning, training, setup);
    if (sampling) sampling->finish();
    if (report->epoch.stopped) {  // Ctrl-C while sampling: nothing is simulated
      SimulationResult result;
      result.gpu_names = scenario.cluster.gpu_names();
      result.interrupted = true;
      result.workload_result = report;
      return result;
    }

    const PlatformLayout layout = make_layout(scenario.cluster);
    const std::vector<ClusterDevice> devices = cluster_devices(scenario.cluster);
    GnnPipelineInput input;
    input.batches.resize(spec->setup.servers);
    for (std::uint32_t i = 0; i < report->epoch.batches.size(); ++i) {
      const gnn::BatchCounts& counts = report->epoch.batches[i];
      const ClusterDevice& gpu = devices.at(layout.first_gpu[counts.server] + counts.gpu);
      report->work.push_back(gnn::price_batch(
          counts, spec->features, model_shape(*spec), spec->costs,
          [&](const Compute& compute) { return compute_time_on(compute, gpu); }, i));
      input.batches[counts.server].push_back(report->work.back());
    }
    // Isolated: a CPU host per role with its cores, a pool thread per core. Shared: one host of
    // every core, a pool of cpu_cores threads per stage.
    PlatformOptions platform_options;
    for (std::uint32_t s = 0; s < spec->setup.servers; ++s) {
      if (spec->cores == GnnCoreMode::shared) {
        report->cores.push_back({static_cast<std::uint32_t>(spec->cpu_cores)});
        report->threads.emplace_back(kGnnCpuStages, static_cast<std::uint32_t>(spec->cpu_cores));
        platform_options.cpu_hosts.push_back({CpuHostSpec{"", spec->cpu_cores}});
      } else {
        report->cores.push_back(spec->split ? *spec->split : profile_split(*spec, report->work, layout, s));
        report->threads.emplace_back(report->cores.back().begin(), report->cores.back().begin() + kGnnCpuStages);
        platform_options.cpu_hosts.emplace_back();
        for (int role = 0; role < kGnnCpuRoles; ++role)
          platform_options.cpu_hosts.back().push_back(
              CpuHostSpec{kStageNames[role], static_cast<int>(report->cores.back()[static_cast<std::size_t>(role)])});
      }
    }
    // The interference model's memory bandwidth: a one-core host per node after its CPU hosts.
    const gnn::CpuInterference& interference = spec->interference_model;
    if (interference.enabled)
      for (auto& hosts : platform_options.cpu_hosts)
        hosts.push_back(CpuHostSpec{"memory", 1, spec->memory_bandwidth->value()});
    report->assignment = spec->cores == GnnCoreMode::shared
                             ? "shared: one pool of cpu_cores threads per stage on all the cores"
                         : spec->split ? "isolated: split given"
                                       : "isolated: BGL-like profiling-based assignment";
    const auto engine = create_engine();
    platform_options.stop = stop_flag(options);
    const Platform platform = build_platform(scenario, platform_options);
    start_background_flows(scenario, platform);
    for (std::uint32_t s = 0; s < spec->setup.servers; ++s) {
      std::vector<simgrid::s4u::Host*> hosts = platform.cpus.at(s);
      if (interference.enabled) {
        input.interference.memory.push_back(hosts.back());
        hosts.pop_back();
      }
      std::array<simgrid::s4u::Host*, kGnnCpuRoles> roles{};
      for (std::size_t role = 0; role < roles.size(); ++role)
        roles[role] = hosts.size() == 1 ? hosts.front() : hosts.at(role);
      input.cpus.push_back(roles);
      input.gpus.emplace_back();
      for (std::uint32_t g = 0; g < spec->setup.gpus_per_server; ++g)
        input.gpus.back().push_back(platform.gpus.at(layout.first_gpu[s] + g));
    }
    input.threads = report->threads;
    if (interference.enabled) {
      input.interference.traffic = interference.traffic_rates(spec->costs);
      input.interference.time_sliced = interference.time_sliced;
      input.interference.h2d_bandwidth = layout.route_bandwidth(layout.nodes.front().cpu_to_gpu.front()).value();
    }
    input.queue_depth = spec->queue_depth;
    input.allreduce_bytes = gnn::model_parameters(model_shape(*spec), spec->features, spec->setup.fanouts.size()) *
                            dtype_bytes(spec->dtype);
    input.progress = options.progress != nullptr;
    report->sim = simulate_gnn_pipeline(input);

    SimulationResult result = engine_driven_result(
        scenario, report, report->sim.makespan, static_cast<std::size_t>(report->sim.flows + report->sim.executions),
        static_cast<std::size_t>(report->sim.flows), report->sim.interrupted);
    result.graph = activity_graph(scenario, *report, result.task_start, result.task_end);
    const double cache_part = static_cast<double>(spec->setup.cache_nodes_per_server) / spec->setup.gpus_per_server *
                              spec->features.per_node().value();
    for (const ClusterDevice& device : devices) {
      result.gpu_models.push_back(device.gpu.name);
      result.memory_capacity_bytes.push_back(device.gpu.memory.value());
      result.peak_memory_bytes.push_back(cache_part);
    }
    for (std::size_t n = 0; n < scenario.cluster.nodes.size(); ++n) {
      result.gpu_models.push_back(fmt::format("CPU ({} cores)", spec->cpu_cores));
      result.memory_capacity_bytes.push_back(0);
      result.peak_memory_bytes.push_back(0);
    }
    return result;
  }

  std::vector<SummaryField> summary_fields() const override;
  void add_to_summary(const Scenario& scenario, const SimulationResult& result,
                      nlohmann::ordered_json& summary) const override;
  void write_files(const Scenario& scenario, const SimulationResult& result, const std::string& dir) const override;
};

std::vector<SummaryField> GnnKind::summary_fields() const {
  constexpr FieldType text = FieldType::text;
  return {{"gnn.bottleneck_stage", text},
          {"gnn.core_assignment", text},
          {"gnn.interference.model", text},
          {"gnn.partition.partitioner", text},
          {"gnn.servers"},
          {"gnn.trainers"},
          {"gnn.graph_nodes"},
          {"gnn.graph_undirected_edges"},
          {"gnn.graph_bytes"},
          {"gnn.training_nodes"},
          {"gnn.epochs"},
          {"gnn.mini_batches"},
          {"gnn.epoch_time_s"},
          {"gnn.mini_batches_per_s"},
          {"gnn.seeds_per_s"},
          {"gnn.stages.sample.threads_per_server"},
          {"gnn.stages.sample.busy_s"},
          {"gnn.stages.sample.utilization"},
          {"gnn.stages.gather.threads_per_server"},
          {"gnn.stages.gather.busy_s"},
          {"gnn.stages.gather.utilization"},
          {"gnn.stages.copy.threads_per_server"},
          {"gnn.stages.copy.busy_s"},
          {"gnn.stages.copy.utilization"},
          {"gnn.stages.train.gpu_busy_s"},
          {"gnn.stages.train.busy_s"},
          {"gnn.stages.train.utilization"},
          {"gnn.stages.allreduce.busy_s"},
          {"gnn.stages.allreduce.utilization"},
          {"gnn.sync_wait_ratio"},
          {"gnn.gpu_utilization"},
          {"gnn.cores_per_server.shared"},
          {"gnn.cores_per_server.sample"},
          {"gnn.cores_per_server.gather"},
          {"gnn.cores_per_server.copy"},
          {"gnn.cores_per_server.dispatch"},
          {"gnn.hit_ratio.local_gpu"},
          {"gnn.hit_ratio.peer_gpu"},
          {"gnn.hit_ratio.gpu"},
          {"gnn.hit_ratio.host"},
          {"gnn.hit_ratio.remote"},
          {"gnn.cross_partition.sampled_edge_ratio"},
          {"gnn.cross_partition.remote_expansions"},
          {"gnn.cross_partition.network_bytes"},
          {"gnn.interference.memory_bandwidth"},
          {"gnn.interference.cpu_works"},
          {"gnn.interference.time_sliced_works"},
          {"gnn.nvlink_bytes"},
          {"gnn.h2d_bytes"},
          {"gnn.partition.edge_cut_ratio"},
          {"gnn.partition.node_balance"},
          {"gnn.partition.edge_balance"},
          {"gnn.partition.training_balance"}};
}

void GnnKind::add_to_summary(const Scenario&, const SimulationResult& result, nlohmann::ordered_json& summary) const {
  const auto* report = dynamic_cast<const GnnReport*>(result.workload_result.get());
  if (report == nullptr) return;
  const GnnWorkload& spec = *report->spec;
  const GnnPipelineResult& sim = report->sim;
  const double makespan = sim.makespan;
  const auto batches = report->epoch.batches.size();
  nlohmann::ordered_json gnn;
  gnn["servers"] = spec.setup.servers;
  gnn["trainers"] = spec.setup.servers * spec.setup.gpus_per_server;
  gnn["graph_nodes"] = spec.node_count;
  gnn["graph_undirected_edges"] = report->undirected_edges;
  gnn["graph_bytes"] = report->graph_bytes;
  gnn["training_nodes"] = report->training_nodes;
  gnn["epochs"] = spec.setup.epochs;
  gnn["mini_batches"] = batches;
  gnn["epoch_time_s"] = makespan / spec.setup.epochs;
  gnn["mini_batches_per_s"] = makespan > 0 ? static_cast<double>(batches) / makespan : 0.0;
  gnn["seeds_per_s"] = makespan > 0 ? static_cast<double>(report->training_nodes) * spec.setup.epochs / makespan : 0.0;

  // Stage utilisation: busy thread-seconds over the threads' time (CPU stages), compute over the run (GPUs).
  nlohmann::ordered_json stages = nlohmann::ordered_json::object();
  std::string bottleneck;
  double worst = -1;
  for (int stage = 0; stage < kGnnCpuStages; ++stage) {
    double busy = 0, capacity = 0;
    for (std::size_t s = 0; s < sim.stage_busy.size(); ++s) {
      busy += sim.stage_busy[s][static_cast<std::size_t>(stage)];
      capacity += report->threads[s][static_cast<std::size_t>(stage)] * makespan;
    }
    const double utilization = capacity > 0 ? busy / capacity : 0.0;
    stages[kStageNames[stage]] = {
        {"threads_per_server", report->threads.empty() ? 0U : report->threads.front()[static_cast<std::size_t>(stage)]},
        {"busy_s", busy},
        {"utilization", utilization}};
    if (utilization > worst) worst = utilization, bottleneck = kStageNames[stage];
  }
  double gpu = 0, trainer = 0, allreduce = 0, wait = 0, trainers = 0;
  for (std::size_t s = 0; s < sim.gpu_busy.size(); ++s)
    for (std::size_t g = 0; g < sim.gpu_busy[s].size(); ++g) {
      gpu += sim.gpu_busy[s][g];
      trainer += sim.trainer_busy[s][g];
      allreduce += sim.allreduce_time[s][g];
      wait += sim.sync_wait[s][g];
      trainers += 1;
    }
  const double gpu_utilization = makespan > 0 && trainers > 0 ? gpu / (trainers * makespan) : 0.0;
  const double train_utilization = makespan > 0 && trainers > 0 ? trainer / (trainers * makespan) : 0.0;
  stages["train"] = {{"gpu_busy_s", gpu}, {"busy_s", trainer}, {"utilization", train_utilization}};
  stages["allreduce"] = {{"busy_s", allreduce},
                         {"utilization", makespan > 0 && trainers > 0 ? allreduce / (trainers * makespan) : 0.0}};
  if (train_utilization > worst) bottleneck = "train";
  gnn["stages"] = stages;
  // Trainers waiting for the slowest one at each round's all-reduce: the imbalance of the partitions' batches.
  gnn["sync_wait_ratio"] = makespan > 0 && trainers > 0 ? wait / (trainers * makespan) : 0.0;
  gnn["bottleneck_stage"] = bottleneck;
  gnn["gpu_utilization"] = gpu_utilization;
  gnn["core_assignment"] = report->assignment;
  // Server 0's cores per role (the profiling may split other servers differently: gnn_batches.csv
  // and the trace show every server).
  nlohmann::ordered_json cores = nlohmann::ordered_json::object();
  if (!report->cores.empty()) {
    const std::vector<std::uint32_t>& first = report->cores.front();
    if (first.size() == 1)
      cores["shared"] = first.front();
    else
      for (int role = 0; role < kGnnCpuRoles; ++role) cores[kStageNames[role]] = first[static_cast<std::size_t>(role)];
  }
  gnn["cores_per_server"] = cores;

  const gnn::FeatureSourceCounts& f = report->epoch.features;
  gnn["hit_ratio"] = {{"local_gpu", f.ratio(gnn::FeatureSource::local_gpu)},
                      {"peer_gpu", f.ratio(gnn::FeatureSource::peer_gpu)},
                      {"gpu", f.gpu_hit_ratio()},
                      {"host", f.ratio(gnn::FeatureSource::host)},
                      {"remote", f.ratio(gnn::FeatureSource::remote)}};
  std::uint64_t remote_expansions = 0;
  for (const gnn::BatchCounts& b : report->epoch.batches) remote_expansions += b.remote_expansions;
  gnn["cross_partition"] = {{"sampled_edge_ratio", report->epoch.cross.ratio()},
                            {"remote_expansions", remote_expansions},
                            {"network_bytes", sim.remote_bytes}};
  // Only with a model, so that runs without one report as before.
  if (spec.interference_model.enabled)
    gnn["interference"] = {{"model", spec.interference},
                           {"memory_bandwidth", spec.memory_bandwidth->value()},
                           {"cpu_works", sim.cpu_works},
                           {"time_sliced_works", sim.time_sliced_works}};
  gnn["nvlink_bytes"] = sim.nvlink_bytes;
  gnn["h2d_bytes"] = sim.h2d_bytes;
  gnn["partition"] = {{"partitioner", spec.partitioner},
                      {"edge_cut_ratio", report->partition.cut_ratio},
                      {"node_balance", report->partition.node_balance},
                      {"edge_balance", report->partition.edge_balance},
                      {"training_balance", report->partition.training_balance}};
  summary["gnn"] = gnn;
}

void GnnKind::write_files(const Scenario&, const SimulationResult& result, const std::string& dir) const {
  const auto* report = dynamic_cast<const GnnReport*>(result.workload_result.get());
  if (report == nullptr) return;
  std::ofstream out(dir + "/gnn_batches.csv");
  out << "batch,epoch,server,gpu,sampled_edges,input_nodes,remote_expansions,local_gpu,peer_gpu,host,remote,"
         "sample_core_s,gather_core_s,h2d_bytes,dispatch_core_s,gpu_s\n";
  for (std::size_t i = 0; i < report->work.size(); ++i) {
    const gnn::BatchCounts& b = report->epoch.batches[i];
    const GnnBatchWork& w = report->work[i];
    std::uint64_t edges = 0;
    for (const gnn::LayerCounts& layer : b.layers) edges += layer.edges;
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", i, b.epoch, b.server, b.gpu, edges,
                       b.layers.back().num_src, b.remote_expansions, b.features.count[0], b.features.count[1],
                       b.features.count[2], b.features.count[3], w.sample_core_seconds, w.gather_core_seconds,
                       w.h2d_bytes, w.dispatch_core_seconds, w.gpu_seconds);
  }
}

}  // namespace

std::shared_ptr<const gnn::CsrGraph> gnn_graph(const Scenario& scenario) {
  const auto& spec = *scenario.workload_as<GnnWorkload>();
  if (spec.graph) return spec.graph;
  check_graph_memory(scenario, spec);
  if (spec.source.generator == "rmat") {
    gnn::RmatParams params = spec.source.rmat;
    params.seed = derive_seed(scenario.run.seed, 0);
    return std::make_shared<const gnn::CsrGraph>(gnn::generate_rmat(params));
  }
  gnn::PowerLawParams params = spec.source.power_law;
  params.seed = derive_seed(scenario.run.seed, 0);
  return std::make_shared<const gnn::CsrGraph>(gnn::generate_power_law(params));
}

std::shared_ptr<const WorkloadKind> make_gnn_kind() { return std::make_shared<GnnKind>(); }

}  // namespace dnnsim
