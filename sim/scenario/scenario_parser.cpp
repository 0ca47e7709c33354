// Reads a scenario YAML into a Scenario (see scenario.hpp and docs/scenarios.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <limits>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "models/common/yaml_reader.hpp"
#include "models/cost/compute_cost.hpp"
#include "models/dnn/profile_graph.hpp"
#include "models/dnn/zoo.hpp"
#include "models/program/collective_algorithms.hpp"
#include "planners/parallel/planner.hpp"
#include "sim/scenario/layout.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/workload_reading.hpp"
#include "sim/workloads/workload_kind.hpp"
#include "dnnsim/source_paths.hpp"

namespace dnnsim {

std::size_t Cluster::gpu_count() const {
  std::size_t count = 0;
  for (const NodeInstance& node : nodes) count += static_cast<std::size_t>(type_of(node).gpus_per_node);
  return count;
}

std::vector<std::string> Cluster::gpu_names() const {
  std::vector<std::string> names;
  for (const NodeInstance& node : nodes)
    for (int g = 0; g < type_of(node).gpus_per_node; ++g) names.push_back(fmt::format("{}/gpu{}", node.name, g));
  return names;
}

std::vector<std::uint32_t> Cluster::node_of_gpu() const {
  std::vector<std::uint32_t> result;
  for (std::uint32_t n = 0; n < nodes.size(); ++n)
    result.insert(result.end(), static_cast<std::size_t>(type_of(nodes[n]).gpus_per_node), n);
  return result;
}

std::vector<std::optional<ClusterGpu>> Cluster::locate_gpus(const std::vector<std::string>& devices) const {
  const std::vector<std::string> names = gpu_names();
  const std::vector<std::uint32_t> node_of = node_of_gpu();
  std::unordered_map<std::string_view, ClusterGpu> by_name;
  for (std::size_t g = 0; g < names.size(); ++g) by_name.emplace(names[g], ClusterGpu{node_of[g], &type_of(nodes[node_of[g]])});
  std::vector<std::optional<ClusterGpu>> located;
  located.reserve(devices.size());
  for (const std::string& device : devices) {
    const auto it = by_name.find(device);
    located.push_back(it == by_name.end() ? std::nullopt : std::optional<ClusterGpu>(it->second));
  }
  return located;
}

namespace {

constexpr auto kMaxInt = std::numeric_limits<std::int64_t>::max();


class ScenarioParser {
 public:
  ScenarioParser(std::string file, DiagnosticSink& sink) : reader_(std::move(file), sink) {}

  [[nodiscard]] YamlReader& reader() { return reader_; }

  Scenario parse(YAML::Node root) {
    Scenario scenario;
    scenario.file = reader_.file();
    MapReader top(reader_, root, "the scenario");
    if (!top.valid()) return scenario;
    scenario.name = top.string("name", true).value_or("");
    scenario.description = top.string("description").value_or("");
    const std::size_t errors_before_cluster = reader_.sink().diagnostics().size();
    YAML::Node cluster = top.require("cluster");
    if (cluster.IsDefined()) scenario.cluster = read_cluster(cluster);
    const bool cluster_clean = cluster.IsDefined() && reader_.sink().diagnostics().size() == errors_before_cluster;
    if (YAML::Node workload = top.require("workload"); workload.IsDefined())
      read_workload(workload, scenario);
    if (YAML::Node run = top.get("run"); run.IsDefined()) scenario.run = read_run(run);
    if (YAML::Node outputs = top.get("outputs"); outputs.IsDefined()) scenario.outputs = read_outputs(outputs);
    if (scenario.outputs.dir.empty()) scenario.outputs.dir = "out/" + scenario.name;
    if (YAML::Node expect = top.get("expect"); expect.IsDefined()) scenario.expectations = read_expectations(expect);
    if (YAML::Node calibration = top.get("calibration"); calibration.IsDefined() && cluster_clean)
      read_calibration(calibration, scenario.cluster);
    // Network conditions name links and GPUs: check them against the platform the cluster makes.
    YAML::Node network = top.get("network");
    top.finish();
    if (cluster_clean) {
      try {
        layout_ = make_layout(scenario.cluster);
      } catch (const InputError& e) {
        const YAML::Node interconnect = cluster["interconnect"];
        for (const Diagnostic& d : e.diagnostics()) reader_.error(interconnect.IsDefined() ? interconnect : cluster, d.message);
      }
    }
    if (network.IsDefined()) {
      scenario.network = read_network(network, scenario.cluster);
      if (scenario.workload) {
        if (const std::string why = scenario.workload->network_unsupported(); !why.empty())
          reader_.error(network, why);
        else if (const std::string failures_why = scenario.workload->failures_unsupported();
                 !failures_why.empty() && !scenario.network.failures.empty())
          reader_.error(network["failures"], failures_why);
      }
    }
    return scenario;
  }

 private:
  // ---- cluster ----

  GpuSpec read_gpu(const YAML::Node& node) {
    const HardwareCatalog& catalog = HardwareCatalog::builtin();
    // yaml-cpp nodes are handles: reset() rebinds, whereas operator= would overwrite the tree node.
    YAML::Node model_node;
    model_node.reset(node);
    std::optional<MapReader> overrides;
    if (node.IsMap()) {
      overrides.emplace(reader_, node, "a GPU");
      model_node.reset(overrides->require("model"));
    }
    GpuSpec gpu;
    if (auto name = model_node.IsDefined() ? reader_.choice(model_node, "GPU model", catalog.gpu_names())
                                           : std::nullopt) {
      gpu = *catalog.find_gpu(*name);
    }
    if (overrides) {
      if (auto v = overrides->quantity<Bytes>("memory")) gpu.memory = *v;
      if (auto v = overrides->quantity<BytesPerSecond>("memory_bandwidth")) gpu.memory_bandwidth = *v;
      if (auto v = overrides->quantity<BytesPerSecond>("nvlink_bandwidth")) gpu.nvlink_bandwidth = *v;
      const std::pair<const char*, std::optional<FlopsPerSecond> GpuSpec::*> peaks[] = {
          {"peak_fp32", &GpuSpec::peak_fp32}, {"peak_tf32", &GpuSpec::peak_tf32}, {"peak_fp16", &GpuSpec::peak_fp16},
          {"peak_bf16", &GpuSpec::peak_bf16}, {"peak_fp8", &GpuSpec::peak_fp8}};
      for (const auto& [key, field] : peaks)
        if (auto v = overrides->quantity<FlopsPerSecond>(key)) gpu.*field = *v;
      overrides->finish();
    }
    return gpu;
  }

  // `{link: NAME}` from the catalog, or `{bandwidth, latency}`, or a catalog link with overrides.
  // `fallback` supplies what the node type implies when the key is absent.
  std::optional<std::pair<BytesPerSecond, Seconds>> read_link_ref(MapReader& map, const std::string& context,
                                                                   std::optional<std::pair<BytesPerSecond, Seconds>> base) {
    const HardwareCatalog& catalog = HardwareCatalog::builtin();
    if (map.has("link")) {
      auto name = map.choice("link", catalog.link_names());
      if (!name) return std::nullopt;  // reported; anything said about the rest would follow from it
      const LinkSpec* spec = catalog.find_link(*name);
      base = std::pair{spec->bandwidth, spec->latency};
    }
    const bool has_bandwidth = map.has("bandwidth");
    const bool has_latency = map.has("latency");
    auto bandwidth = map.quantity<BytesPerSecond>("bandwidth");
    auto latency = map.quantity<Seconds>("latency");
    if (!base && (!has_bandwidth || !has_latency)) {
      reader_.error(map.node(), fmt::format("{} needs 'link' (a catalog name) or both 'bandwidth' and 'latency'", context));
      return std::nullopt;
    }
    if (!base) {
      if (!bandwidth || !latency) return std::nullopt;  // already reported
      return std::pair{*bandwidth, *latency};
    }
    return std::pair{bandwidth.value_or(base->first), latency.value_or(base->second)};
  }

  NodeType read_node_type(const std::string& name, const YAML::Node& node) {
    NodeType type;
    type.name = name;
    MapReader map(reader_, node, fmt::format("node type '{}'", name));
    if (!map.valid()) return type;
    if (YAML::Node gpu = map.require("gpu"); gpu.IsDefined()) type.gpu = read_gpu(gpu);
    type.compute_efficiency = map.number("compute_efficiency", 1e-3, 1.0).value_or(1.0);
    type.gpus_per_node = static_cast<int>(map.integer("gpus_per_node", 1, 1024, true).value_or(1));
    if (auto cores = map.integer("cpu_cores", 1, 1 << 16)) type.cpu_cores = static_cast<int>(*cores);
    const bool has_nvlink = !type.gpu.nvlink.empty();
    // Board-level NVLink (SXM) defaults to an NVSwitch; a pair bridge does not connect a whole node.
    const std::string fabric = map.choice("fabric", {"nvswitch", "nvlink_mesh", "pcie"})
                                   .value_or(has_nvlink && !type.gpu.nvlink_bridge_only ? "nvswitch" : "pcie");
    type.fabric = fabric == "nvswitch" ? IntraNodeFabric::nvswitch
                  : fabric == "pcie"   ? IntraNodeFabric::pcie
                                       : IntraNodeFabric::nvlink_mesh;
    const HardwareCatalog& catalog = HardwareCatalog::builtin();
    const LinkSpec* pcie_spec = catalog.find_link(type.gpu.pcie);
    std::optional<std::pair<BytesPerSecond, Seconds>> pcie_default;
    if (pcie_spec) pcie_default = std::pair{pcie_spec->bandwidth, pcie_spec->latency};

    std::optional<std::pair<BytesPerSecond, Seconds>> pcie = pcie_default;
    if (YAML::Node pcie_node = map.get("pcie"); pcie_node.IsDefined()) {
      MapReader pcie_map(reader_, pcie_node, fmt::format("the PCIe link of node type '{}'", name));
      pcie = read_link_ref(pcie_map, "pcie", pcie_default);
      pcie_map.finish();
    }
    if (pcie) std::tie(type.pcie_bandwidth, type.pcie_latency) = *pcie;

    std::optional<std::pair<BytesPerSecond, Seconds>> gpu_link_default;
    if (type.fabric == IntraNodeFabric::pcie) {
      gpu_link_default = pcie;
    } else if (has_nvlink) {
      const LinkSpec* nvlink = catalog.find_link(type.gpu.nvlink);
      const Seconds latency = nvlink ? nvlink->latency : Seconds(0);
      // A mesh splits the GPU's NVLink bricks evenly among its peers.
      const int peers = type.fabric == IntraNodeFabric::nvlink_mesh ? std::max(1, type.gpus_per_node - 1) : 1;
      gpu_link_default = std::pair{type.gpu.nvlink_bandwidth / peers, latency};
    }
    std::optional<std::pair<BytesPerSecond, Seconds>> gpu_link = gpu_link_default;
    if (YAML::Node link_node = map.get("gpu_link"); link_node.IsDefined()) {
      MapReader link_map(reader_, link_node, fmt::format("the GPU link of node type '{}'", name));
      gpu_link = read_link_ref(link_map, "gpu_link", gpu_link_default);
      link_map.finish();
    } else if (!gpu_link && type.gpus_per_node > 1 && !type.gpu.name.empty()) {
      reader_.error(node, fmt::format("node type '{}': GPU {} has no NVLink; set 'gpu_link' or use fabric: pcie", name,
                                      type.gpu.name));
    }
    if (gpu_link) std::tie(type.gpu_link_bandwidth, type.gpu_link_latency) = *gpu_link;

    if (YAML::Node bridge = map.get("host_bridge"); bridge.IsDefined()) {
      if (type.fabric != IntraNodeFabric::pcie)
        reader_.error(bridge, "'host_bridge' applies to fabric: pcie only");
      type.host_bridge_bandwidth = reader_.quantity<BytesPerSecond>(bridge);
    }
    if (YAML::Node nic = map.require("nic"); nic.IsDefined()) {
      MapReader nic_map(reader_, nic, fmt::format("the NIC of node type '{}'", name));
      if (auto link = read_link_ref(nic_map, "nic", std::nullopt)) std::tie(type.nic_bandwidth, type.nic_latency) = *link;
      type.nic_per_gpu = nic_map.boolean("per_gpu").value_or(false);
      nic_map.finish();
    }
    map.finish();
    return type;
  }

  Cluster read_cluster(const YAML::Node& node) {
    Cluster cluster;
    MapReader map(reader_, node, "cluster");
    if (!map.valid()) return cluster;
    std::vector<std::string> type_names;
    if (YAML::Node types = map.require("node_types"); types.IsDefined()) {
      if (!types.IsMap() || types.size() == 0) {
        reader_.error(types, "expected a mapping of node type names to their description");
      } else {
        for (auto item : types) {
          const std::string name = item.first.Scalar();
          type_names.push_back(name);
          cluster.node_types.push_back(read_node_type(name, item.second));
        }
      }
    }
    if (YAML::Node nodes = map.require("nodes"); nodes.IsDefined()) {
      const auto groups = reader_.list(nodes, "node groups such as [{type: dgx, count: 2}]");
      if (nodes.IsSequence() && groups.empty()) reader_.error(nodes, "expected at least one node group");
      for (const YAML::Node& group : groups) {
        MapReader group_map(reader_, group, "a node group");
        auto type = group_map.choice("type", "node type", type_names, true);
        const auto count = group_map.integer("count", 1, 100000).value_or(1);
        group_map.finish();
        if (!type) {
          continue;
        }
        const auto index = static_cast<std::size_t>(std::find(type_names.begin(), type_names.end(), *type) -
                                                    type_names.begin());
        for (std::int64_t i = 0; i < count; ++i)
          cluster.nodes.push_back(NodeInstance{fmt::format("node{}", cluster.nodes.size()), index});
      }
    }
    if (YAML::Node net = map.get("interconnect"); net.IsDefined()) cluster.network = read_interconnect(net, cluster);
    map.finish();
    return cluster;
  }

  InterNodeNetwork read_interconnect(const YAML::Node& node, const Cluster& cluster) {
    InterNodeNetwork net;
    MapReader map(reader_, node, "the interconnect");
    if (!map.valid()) return net;
    const bool has_kind = map.has("kind");
    const auto kind = map.choice("kind", {"switch", "leaf_spine", "explicit"});
    // The other keys depend on the kind: after a misspelt kind, reporting them too would only add noise.
    if (has_kind && !kind) return net;
    if (kind.value_or("switch") == "switch") {
      net.kind = InterNodeKind::single_switch;
      net.switch_bandwidth = map.quantity<BytesPerSecond>("bandwidth");
      net.switch_latency = map.quantity<Seconds>("latency").value_or(Seconds(0));
    } else if (kind == "leaf_spine") {
      net.kind = InterNodeKind::leaf_spine;
      net.switch_latency = map.quantity<Seconds>("latency").value_or(Seconds(0));
      net.nodes_per_leaf = static_cast<int>(map.integer("nodes_per_leaf", 1, 100000, true).value_or(1));
      net.spines = static_cast<int>(map.integer("spines", 1, 1024, true).value_or(1));
      net.oversubscription = map.number("oversubscription", 1e-3, 1e6).value_or(1.0);
      net.uplink_latency = map.quantity<Seconds>("uplink_latency").value_or(Seconds(0));
    } else {
      net.kind = InterNodeKind::explicit_links;
      read_explicit_topology(map, net, cluster);
    }
    map.finish();
    return net;
  }

  void read_explicit_topology(MapReader& map, InterNodeNetwork& net, const Cluster& cluster) {
    std::vector<std::string> node_names;
    for (const NodeInstance& n : cluster.nodes) node_names.push_back(n.name);
    if (YAML::Node switches = map.get("switches"); switches.IsDefined()) {
      for (const YAML::Node& s : reader_.list(switches, "switch names"))
        if (auto name = reader_.string(s)) net.switches.push_back(*name);
    }
    std::vector<std::string> endpoints = node_names;
    endpoints.insert(endpoints.end(), net.switches.begin(), net.switches.end());
    std::vector<std::string> link_names;
    YAML::Node links = map.require("links");
    for (const YAML::Node& l : links.IsDefined() ? reader_.list(links, "links") : std::vector<YAML::Node>{}) {
      MapReader link_map(reader_, l, "an explicit link");
      ExplicitLink link;
      link.name = link_map.string("name", true).value_or("");
      if (std::find(link_names.begin(), link_names.end(), link.name) != link_names.end())
        reader_.error(l, fmt::format("link '{}' is declared twice", link.name));
      link_names.push_back(link.name);
      YAML::Node between = link_map.require("between");
      if (between.IsDefined() && (!between.IsSequence() || between.size() != 2)) {
        reader_.error(between, "expected 'between: [A, B]', two node or switch names");
      } else if (between.IsDefined()) {
        auto a = reader_.choice(between[0], "node or switch", endpoints);
        auto b = reader_.choice(between[1], "node or switch", endpoints);
        link.a = a.value_or("");
        link.b = b.value_or("");
      }
      if (auto ref = read_link_ref(link_map, fmt::format("link '{}'", link.name), std::nullopt))
        std::tie(link.bandwidth, link.latency) = *ref;
      link_map.finish();
      net.links.push_back(std::move(link));
    }
    if (YAML::Node routes = map.get("routes"); routes.IsDefined()) {
      for (const YAML::Node& r : reader_.list(routes, "routes")) {
        MapReader route_map(reader_, r, "an explicit route");
        ExplicitRoute route;
        YAML::Node from = route_map.require("from");
        YAML::Node to = route_map.require("to");
        route.from = from.IsDefined() ? reader_.choice(from, "node", node_names).value_or("") : "";
        route.to = to.IsDefined() ? reader_.choice(to, "node", node_names).value_or("") : "";
        if (YAML::Node hops = route_map.require("links"); hops.IsDefined()) {
          // Each link must continue the walk from `from`, and the walk must end at `to`.
          std::string at = route.from;
          for (const YAML::Node& hop : reader_.list(hops, "link names")) {
            auto name = reader_.choice(hop, "link", link_names);
            if (!name) continue;
            const ExplicitLink& link = net.links[static_cast<std::size_t>(
                std::find(link_names.begin(), link_names.end(), *name) - link_names.begin())];
            if (link.a != at && link.b != at)
              reader_.error(hop, fmt::format("link '{}' does not touch '{}', where the route has arrived", *name, at));
            at = link.a == at ? link.b : link.a;
            route.links.push_back(*name);
          }
          if (at != route.to && !route.to.empty())
            reader_.error(hops, fmt::format("the route ends at '{}', not at '{}'", at, route.to));
        }
        route_map.finish();
        net.routes.push_back(std::move(route));
      }
    }
  }

  // ---- calibration ----

  // `calibration: shipped` (the tables of data/calibration/ for the GPUs that have one), a table
  // file, or a list of them; each table applies to the node types whose GPU it names.
  void read_calibration(const YAML::Node& node, Cluster& cluster) {
    const auto attach = [&](const YAML::Node& where, const CalibrationTable& table) {
      auto shared = std::make_shared<const CalibrationTable>(table);
      bool used = false;
      for (NodeType& type : cluster.node_types) {
        if (type.gpu.name != table.device) continue;
        if (type.compute_efficiency != 1.0)
          reader_.error(where, fmt::format("node type '{}' sets compute_efficiency, which a calibration table "
                                           "replaces: give one or the other", type.name));
        type.calibration = shared;
        used = true;
      }
      if (!used)
        reader_.error(where, fmt::format("the calibration table for '{}' matches no node type's GPU", table.device));
    };
    if (node.IsScalar() && node.Scalar() == "shipped") {
      for (NodeType& type : cluster.node_types) {
        try {
          if (auto table = load_shipped_calibration(DNNSIM_DATA_DIR "/calibration", type.gpu.name)) attach(node, *table);
        } catch (const InputError& e) {
          reader_.sink().append(e.diagnostics());
        }
      }
      return;
    }
    const std::vector<YAML::Node> files = node.IsSequence() ? reader_.list(node, "calibration files")
                                                            : std::vector<YAML::Node>{node};
    for (const YAML::Node& file : files) {
      auto path = reader_.string(file);
      if (!path) continue;
      try {
        attach(file, load_calibration(resolve_scenario_path(reader_.file(), *path)));
      } catch (const InputError& e) {
        reader_.sink().append(e.diagnostics());
      }
    }
  }

  // ---- network conditions ----

  NetworkConditions read_network(const YAML::Node& node, const Cluster& cluster) {
    NetworkConditions result;
    MapReader map(reader_, node, "network");
    if (!map.valid()) return result;
    const std::vector<std::string> link_names = layout_ ? layout_->link_names() : std::vector<std::string>{};
    const std::vector<std::string> gpus = cluster.gpu_names();
    const auto check_links = [&](const YAML::Node& where, const std::string& pattern) {
      if (!layout_) return;  // the cluster has errors of its own; they are reported already
      for (const std::string& name : link_names)
        if (glob_match(pattern, name)) return;
      reader_.error(where, fmt::format("links pattern '{}' matches no link of the cluster{}", pattern,
                                       suggestion_suffix(pattern, link_names)));
    };
    if (YAML::Node conditions = map.get("conditions"); conditions.IsDefined()) {
      for (const YAML::Node& c : reader_.list(conditions, "link conditions")) {
        MapReader cond(reader_, c, "a link condition");
        LinkCondition condition;
        condition.where = reader_.where(c);
        YAML::Node links = cond.require("links");
        if (links.IsDefined())
          if (auto pattern = reader_.string(links)) {
            condition.links = *pattern;
            check_links(links, *pattern);
          }
        const bool has_bandwidth = cond.has("bandwidth");
        const bool has_schedule = cond.has("schedule");
        const bool has_trace = cond.has("trace");
        const bool has_preemption = cond.has("preemption");
        const int models = has_bandwidth + has_schedule + has_trace + has_preemption;
        if (models != 1)
          reader_.error(c, "a link condition needs exactly one of 'bandwidth', 'schedule', 'trace' or 'preemption'");
        const auto period = cond.quantity<Seconds>("period");
        if (has_bandwidth) {
          if (auto bw = cond.quantity<BytesPerSecond>("bandwidth")) condition.model = ConstantBandwidth{*bw};
        } else if (has_schedule) {
          condition.model = read_schedule(cond.get("schedule"), period);
        } else if (has_trace) {
          if (auto path = cond.string("trace")) {
            try {
              condition.model = read_bandwidth_trace(resolve_scenario_path(reader_.file(), *path), std::nullopt, period);
            } catch (const InputError& e) {
              reader_.sink().append(e.diagnostics());
            }
          }
        } else if (has_preemption) {
          MapReader p(reader_, cond.get("preemption"), "a preemption process");
          PreemptionSpec spec;
          spec.mean_busy = p.quantity<Seconds>("mean_busy", true).value_or(Seconds(1));
          spec.mean_idle = p.quantity<Seconds>("mean_idle", true).value_or(Seconds(1));
          spec.busy_fraction = p.number("busy_fraction", 0.0, 1.0, true).value_or(0.0);
          if (spec.mean_busy.value() <= 0 || spec.mean_idle.value() <= 0)
            reader_.error(cond.get("preemption"), "mean_busy and mean_idle must be positive");
          p.finish();
          condition.model = spec;
        }
        if (period && !has_schedule && !has_trace) reader_.error(c, "'period' applies to 'schedule' and 'trace' only");
        cond.finish();
        result.conditions.push_back(std::move(condition));
      }
    }
    if (YAML::Node flows = map.get("background_flows"); flows.IsDefined()) {
      for (const YAML::Node& f : reader_.list(flows, "background flows")) {
        MapReader flow_map(reader_, f, "a background flow");
        BackgroundFlow flow;
        flow.from = flow_map.choice("from", "GPU", gpus, true).value_or("");
        flow.to = flow_map.choice("to", "GPU", gpus, true).value_or("");
        if (!flow.from.empty() && flow.from == flow.to) reader_.error(f, "a background flow needs two different GPUs");
        flow.size = flow_map.quantity<Bytes>("size", true).value_or(Bytes(0));
        flow.start = flow_map.quantity<Seconds>("start").value_or(Seconds(0));
        flow.interval = flow_map.quantity<Seconds>("interval");
        if (auto count = flow_map.integer("count", 1, std::numeric_limits<int>::max())) flow.count = static_cast<int>(*count);
        if (flow.interval && flow.interval->value() <= 0) reader_.error(f, "'interval' must be positive");
        if (flow.count && !flow.interval && *flow.count > 1) reader_.error(f, "'count' > 1 needs an 'interval'");
        flow_map.finish();
        result.background_flows.push_back(std::move(flow));
      }
    }
    if (YAML::Node failures = map.get("failures"); failures.IsDefined()) {
      for (const YAML::Node& f : reader_.list(failures, "failure windows")) {
        MapReader failure_map(reader_, f, "a failure window");
        FailureWindow window;
        window.where = reader_.where(f);
        const bool link = failure_map.has("link");
        const bool host = failure_map.has("host");
        if (link == host) reader_.error(f, "a failure window names exactly one of 'link' or 'host'");
        if (link) {
          window.target = failure_map.string("link").value_or("");
          check_links(failure_map.get("link"), window.target);
        } else if (host) {
          window.is_host = true;
          window.target = failure_map.choice("host", "GPU", gpus).value_or("");
        }
        const auto from = failure_map.quantity<Seconds>("from", true);
        const auto to = failure_map.quantity<Seconds>("to", true);
        if (from && to && *to <= *from) reader_.error(f, "'to' must be later than 'from'");
        window.from = from.value_or(Seconds(0));
        window.to = to.value_or(Seconds(0));
        failure_map.finish();
        result.failures.push_back(std::move(window));
      }
    }
    map.finish();
    return result;
  }

  BandwidthSchedule read_schedule(const YAML::Node& node, std::optional<Seconds> period) {
    BandwidthSchedule schedule;
    schedule.period = period;
    const auto points = reader_.list(node, "{at, bandwidth} points");
    if (node.IsSequence() && points.empty()) reader_.error(node, "expected at least one {at, bandwidth} point");
    for (const YAML::Node& point : points) {
      MapReader p(reader_, point, "a schedule point");
      auto at = p.quantity<Seconds>("at", true);
      auto bw = p.quantity<BytesPerSecond>("bandwidth", true);
      p.finish();
      if (!at || !bw) continue;
      if (!schedule.points.empty() && *at <= schedule.points.back().at)
        reader_.error(point, "schedule times must be strictly increasing");
      schedule.points.push_back(BandwidthPoint{*at, *bw});
    }
    if (period && !schedule.points.empty() && *period <= schedule.points.back().at)
      reader_.error(node, "'period' must be longer than the last schedule time");
    return schedule;
  }

  // ---- workload ----

  // The kind is looked up in the workload-kind registry, which reads the rest of the section.
  void read_workload(const YAML::Node& node, Scenario& scenario) {
    MapReader map(reader_, node, "the workload");
    if (!map.valid()) return;
    const WorkloadKindRegistry& kinds = builtin_workload_kinds();
    const auto kind = map.choice("kind", "workload kind", kinds.names(), true);
    // The other keys depend on the kind: after a missing or misspelt kind, reporting them too would
    // only add noise.
    if (!kind) return;
    WorkloadParseContext context{reader_, map, scenario.cluster};
    scenario.workload_kind = *kind;
    scenario.workload = kinds.at(*kind).value->parse(context);
    map.finish();
  }

  // ---- run, outputs, expectations ----

  RunSettings read_run(const YAML::Node& node) {
    RunSettings run;
    MapReader map(reader_, node, "run");
    run.iterations = static_cast<int>(map.integer("iterations", 1, 1000000).value_or(1));
    run.seed = static_cast<std::uint64_t>(map.integer("seed", 0, kMaxInt).value_or(1));
    if (const auto fidelity = map.choice("collective_fidelity", collective_fidelity_names()))
      run.collective_fidelity = collective_fidelity_from_name(*fidelity);
    if (YAML::Node budget = map.get("memory_budget"); budget.IsDefined()) {
      run.memory_budget_where = reader_.where(budget);
      run.memory_budget = reader_.quantity<Bytes>(budget);
      if (run.memory_budget && run.memory_budget->value() <= 0) {
        reader_.error(budget, "memory_budget must be positive");
        run.memory_budget.reset();
      }
    }
    map.finish();
    return run;
  }

  Outputs read_outputs(const YAML::Node& node) {
    Outputs outputs;
    MapReader map(reader_, node, "outputs");
    outputs.dir = map.string("dir").value_or("");
    outputs.tasks_csv = map.boolean("tasks_csv").value_or(true);
    outputs.trace = map.boolean("trace").value_or(true);
    map.finish();
    return outputs;
  }

  std::vector<Expectation> read_expectations(const YAML::Node& node) {
    std::vector<Expectation> result;
    for (const YAML::Node& e : reader_.list(node, "expectations")) {
      MapReader map(reader_, e, "an expectation");
      Expectation expectation;
      expectation.where = reader_.where(e);
      expectation.metric = map.string("metric", true).value_or("");
      expectation.value = map.number("value", -1e300, 1e300, true).value_or(0.0);
      const std::string compare = map.choice("compare", {"approx", "at_most", "at_least"}).value_or("approx");
      expectation.comparison = compare == "approx"    ? Comparison::approx
                               : compare == "at_most" ? Comparison::at_most
                                                      : Comparison::at_least;
      if (YAML::Node tolerance = map.get("tolerance"); tolerance.IsDefined()) {
        const std::string text = tolerance.IsScalar() ? tolerance.Scalar() : "";
        if (!text.empty() && text.back() == '%') {
          double percent = 0;
          const char* end = text.data() + text.size() - 1;
          const auto [stop, status] = std::from_chars(text.data(), end, percent);
          if (status != std::errc{} || stop != end || percent < 0)
            reader_.error(tolerance, fmt::format("expected a tolerance such as \"5%\" or 0.01, got \"{}\"", text));
          expectation.tolerance = percent / 100.0;
          expectation.relative = true;
        } else {
          expectation.tolerance = reader_.number(tolerance, 0.0, 1e300).value_or(0.0);
        }
      }
      expectation.source = map.string("source").value_or("");
      expectation.known_gap = map.string("known_gap").value_or("");
      map.finish();
      result.push_back(std::move(expectation));
    }
    return result;
  }

  YamlReader reader_;
  std::optional<PlatformLayout> layout_;
};

std::vector<std::string> split_key_path(const std::string& path) {
  std::vector<std::string> keys;
  for (std::size_t start = 0;;) {
    const auto dot = path.find('.', start);
    keys.push_back(path.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return keys;
}

// Removes the map key "~a.b.c" names (Hydra's deletion syntax), so that the scenario reads as if
// the file did not have it; a path that leads nowhere leaves the tree as it is (removing what is not
// there changes nothing).
void remove_key(YAML::Node root, const std::string& removal, DiagnosticSink& sink) {
  const SourceLocation where{"--set " + removal, 0, 0};
  const std::string path = removal.substr(1);
  if (path.empty() || path.find('=') != std::string::npos) {
    sink.error(where, "expected ~KEY.PATH (removes the key) or KEY.PATH=VALUE");
    return;
  }
  const std::vector<std::string> keys = split_key_path(path);
  YAML::Node current = root;
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    // Read through a const handle: a missing key must not be created on the way.
    // (A missing key gives yaml-cpp's invalid node, which may be copied and asked IsDefined, not
    // assigned from.)
    const YAML::Node& here = current;
    if (!here.IsMap() && !here.IsSequence()) return;
    std::size_t index = 0;
    if (here.IsSequence()) {
      try {
        index = std::stoul(keys[i]);
      } catch (const std::exception&) {
        return;
      }
      if (index >= here.size()) return;
    }
    const YAML::Node next = here.IsSequence() ? here[index] : here[keys[i]];
    if (!next.IsDefined()) return;
    current.reset(next);
  }
  if (current.IsSequence()) {
    const std::string list = keys.size() > 1 ? keys[keys.size() - 2] : path;
    sink.error(where, fmt::format("'{}' is a list: ~ removes a map key; set the whole list instead", list));
    return;
  }
  if (current.IsMap()) current.remove(keys.back());
}

// Sets "a.b.0.c=value" in the tree; the value is read as YAML ("8", "\"25Gbps\"", "[1, 2]").
// Returns the value put into the tree, so that problems with it can be located at the assignment.
std::optional<YAML::Node> apply_override(YAML::Node root, const std::string& assignment, DiagnosticSink& sink) {
  const SourceLocation where{"--set " + assignment, 0, 0};
  const auto equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0) {
    sink.error(where, "expected KEY.PATH=VALUE");
    return std::nullopt;
  }
  const std::string path = assignment.substr(0, equals);
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(equals + 1));
  } catch (const YAML::Exception& e) {
    sink.error(where, fmt::format("the value is not valid YAML: {}", e.msg));
    return std::nullopt;
  }
  const std::vector<std::string> keys = split_key_path(path);
  // yaml-cpp nodes are handles: walk with reset() so that assignment replaces the leaf in place.
  YAML::Node current = root;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::string parent = i == 0 ? std::string("the scenario") : "'" + keys[i - 1] + "'";
    const bool last = i + 1 == keys.size();
    YAML::Node next;
    if (current.IsSequence()) {
      std::size_t index = 0;
      try {
        index = std::stoul(keys[i]);
      } catch (const std::exception&) {
        sink.error(where, fmt::format("{} is a list; expected an index, got '{}'", parent, keys[i]));
        return std::nullopt;
      }
      if (index >= current.size()) {
        sink.error(where, fmt::format("index {} is out of range ({} entries)", index, current.size()));
        return std::nullopt;
      }
      next = current[index];
    } else if (current.IsMap() || current.IsNull() || !current.IsDefined()) {  // undefined: a section to create
      next = current[keys[i]];
    } else {
      sink.error(where, fmt::format("cannot set '{}': {} is a scalar", path, parent));
      return std::nullopt;
    }
    if (last)
      next = value;
    else
      current.reset(next);
  }
  return value;
}

}  // namespace

namespace {

Scenario read_scenario(YAML::Node root, DiagnosticSink& sink, const std::string& path,
                       const std::vector<std::string>& overrides, const ScenarioTreeEdit& edit) {
  std::vector<std::pair<YAML::Node, std::string>> override_values;
  for (const std::string& assignment : overrides) {
    if (assignment.starts_with('~')) {
      remove_key(root, assignment, sink);
      continue;
    }
    if (auto value = apply_override(root, assignment, sink)) override_values.emplace_back(*value, "--set " + assignment);
  }
  sink.throw_if_any();
  if (edit) edit(root);
  ScenarioParser parser(path, sink);
  for (const auto& [value, origin] : override_values) parser.reader().add_override(value, origin);
  Scenario scenario = parser.parse(root);
  sink.throw_if_any();
  return scenario;
}

}  // namespace

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       const ScenarioTreeEdit& edit) {
  DiagnosticSink sink;
  YamlReader reader(path, sink);
  YAML::Node root = reader.load_file();
  sink.throw_if_any();
  return read_scenario(root, sink, path, overrides, edit);
}

Scenario load_scenario_text(const std::string& text, const std::string& name, const std::vector<std::string>& overrides,
                            const ScenarioTreeEdit& edit) {
  DiagnosticSink sink;
  YamlReader reader(name, sink);
  YAML::Node root = reader.load_text(text);
  sink.throw_if_any();
  return read_scenario(root, sink, name, overrides, edit);
}

}  // namespace dnnsim
