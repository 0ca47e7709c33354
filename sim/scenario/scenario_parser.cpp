// Reads a scenario YAML into a Scenario (see scenario.hpp and docs/scenarios.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <limits>
#include <set>
#include <tuple>

#include "models/common/yaml_reader.hpp"
#include "models/cost/compute_cost.hpp"
#include "models/dnn/profile_graph.hpp"
#include "models/dnn/zoo.hpp"
#include "models/program/collective_algorithms.hpp"
#include "planners/parallel/planner.hpp"
#include "sim/scenario/layout.hpp"
#include "sim/scenario/scenario.hpp"

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

namespace {

constexpr auto kMaxInt = std::numeric_limits<std::int64_t>::max();

std::string resolve_path(const std::string& scenario_file, const std::string& path) {
  const std::filesystem::path p(path);
  if (p.is_absolute()) return path;
  return (std::filesystem::path(scenario_file).parent_path() / p).lexically_normal().string();
}

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
    if (network.IsDefined()) scenario.network = read_network(network, scenario.cluster);
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
        attach(file, load_calibration(resolve_path(reader_.file(), *path)));
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
              condition.model = read_bandwidth_trace(resolve_path(reader_.file(), *path), std::nullopt, period);
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

  LayerModel read_layer_model(YamlReader& reader, const YAML::Node& node, const std::string& context) {
    LayerModel model;
    MapReader map(reader, node, context);
    if (!map.valid()) return model;
    if (auto file = map.string("file")) {
      map.finish();
      const std::string path = resolve_path(reader.file(), *file);
      YamlReader file_reader(path, reader.sink());
      YAML::Node root = file_reader.load_file();
      if (!root.IsDefined()) return model;
      return read_layer_model(file_reader, root, "a model file");
    }
    if (map.has("zoo")) return read_zoo_model(map);
    const HardwareCatalog& catalog = HardwareCatalog::builtin();
    if (map.has("profile")) {
      // A PipeDream/DAPPLE profile graph: measured per-layer times (models/dnn/profile_graph.hpp).
      const auto path = map.string("profile");
      const std::string measured_on = map.choice("measured_on", "GPU model", catalog.gpu_names()).value_or("V100-16GB");
      const auto batch = static_cast<int>(map.integer("measured_batch", 1, 1 << 20).value_or(0));
      map.finish();
      if (!path) return model;
      try {
        return load_profile_graph(resolve_path(reader.file(), *path), measured_on, batch);
      } catch (const InputError& e) {
        reader.sink().append(e.diagnostics());
      }
      return model;
    }
    model.name = map.string("name").value_or("model");
    model.measured_on = map.choice("measured_on", catalog.gpu_names()).value_or("");
    model.measured_batch = static_cast<int>(map.integer("measured_batch", 1, 1 << 20).value_or(1));
    YAML::Node layers = map.require("layers");
    const auto entries = layers.IsDefined() ? reader.list(layers, "layers") : std::vector<YAML::Node>{};
    if (layers.IsSequence() && entries.empty()) reader.error(layers, "expected at least one layer");
    bool any_measured = false;
    for (const YAML::Node& entry : entries) {
      MapReader l(reader, entry, "a layer");
      Layer layer;
      layer.name = l.string("name").value_or(fmt::format("layer{}", model.layers.size()));
      layer.forward_flops = l.quantity<Flop>("forward_flops").value_or(Flop(0));
      layer.backward_flops = l.quantity<Flop>("backward_flops").value_or(layer.forward_flops * 2.0);
      layer.forward_time = l.quantity<Seconds>("forward_time");
      layer.backward_time = l.quantity<Seconds>("backward_time");
      layer.parameter_bytes = l.quantity<Bytes>("parameter_bytes").value_or(Bytes(0));
      layer.activation_bytes = l.quantity<Bytes>("activation_bytes").value_or(Bytes(0));
      layer.forward_bytes = l.quantity<Bytes>("forward_bytes").value_or(Bytes(0));
      if (auto kind = l.choice("kind", "layer kind", layer_kind_names())) layer.kind = *layer_kind_from_name(*kind);
      const auto repeat = l.integer("repeat", 1, 100000).value_or(1);
      if (layer.forward_time.has_value() != layer.backward_time.has_value())
        reader.error(entry, "give both 'forward_time' and 'backward_time', or neither");
      if (layer.forward_time) any_measured = true;
      if (layer.forward_time && layer.forward_flops.value() > 0)
        reader.error(entry, "give either measured times or FLOPs for a layer, not both");
      l.finish();
      for (std::int64_t r = 0; r < repeat; ++r) {
        Layer copy = layer;
        if (repeat > 1) copy.name = fmt::format("{}.{}", layer.name, r);
        model.layers.push_back(std::move(copy));
      }
    }
    if (any_measured && model.measured_on.empty())
      reader.error(node, "layers with measured times need 'measured_on' (the catalog GPU they were measured on)");
    map.finish();
    return model;
  }

  // `{zoo: NAME, seq: N, image: N}`: a generated model of the zoo (models/dnn/zoo.hpp).
  LayerModel read_zoo_model(MapReader& map) {
    const ModelRegistry& zoo = builtin_models();
    const auto name = map.choice("zoo", "model", zoo.names());
    ModelOptions options;
    options.seq = static_cast<int>(map.integer("seq", 1, 1 << 24).value_or(0));
    options.image = static_cast<int>(map.integer("image", 1, 1 << 16).value_or(0));
    const YAML::Node where = map.get("zoo");
    map.finish();
    if (!name) return LayerModel{};
    try {
      return zoo.at(*name).value(options);
    } catch (const InputError& e) {
      for (const Diagnostic& d : e.diagnostics()) map.reader().error(where, d.message);
    }
    return LayerModel{};
  }

  void read_workload(const YAML::Node& node, Scenario& scenario) {
    MapReader map(reader_, node, "the workload");
    if (!map.valid()) return;
    const std::string kind = map.choice("kind", {"data_parallel", "pipeline", "taskgraph"}, true).value_or("");
    // The other keys depend on the kind: after a missing or misspelt kind, reporting them too would
    // only add noise.
    if (kind.empty()) return;
    if (kind == "taskgraph") {
      TaskGraphWorkload workload;
      if (auto file = map.string("file", true)) workload.path = resolve_path(reader_.file(), *file);
      scenario.workload = workload;
    } else if (kind == "data_parallel") {
      DataParallelConfig workload;
      if (YAML::Node model = map.require("model"); model.IsDefined())
        workload.model = read_layer_model(reader_, model, "the model");
      workload.global_batch = static_cast<int>(map.integer("global_batch", 1, 1 << 30, true).value_or(1));
      read_training_options(map, workload.dtype, workload.precision, workload.optimizer, workload.collective_algorithm);
      workload.bucket_size = map.quantity<Bytes>("bucket_size").value_or(workload.bucket_size);
      workload.overlap = map.boolean("overlap").value_or(true);
      if (workload.bucket_size.value() <= 0) reader_.error(map.get("bucket_size"), "bucket_size must be positive");
      const std::size_t gpus = scenario.cluster.gpu_count();
      if (gpus > 0 && static_cast<std::size_t>(workload.global_batch) < gpus)
        reader_.error(map.get("global_batch"),
                      fmt::format("global_batch {} is smaller than the {} GPUs of the cluster: every GPU needs a sample",
                                  workload.global_batch, gpus));
      scenario.workload = std::move(workload);
    } else if (kind == "pipeline") {
      scenario.workload = read_pipeline(map, scenario.cluster);
    }
    map.finish();
  }

  // Keys shared by the data-parallel and pipeline workloads.
  void read_training_options(MapReader& map, Dtype& dtype, Precision& precision, Optimizer& optimizer,
                             std::string& collective_algorithm) {
    if (auto name = map.choice("dtype", dtype_names())) dtype = *dtype_from_name(*name);
    collective_algorithm = map.choice("collective_algorithm", builtin_collective_algorithms().names()).value_or("");
    const std::string optimizer_name = map.choice("optimizer", {"adam", "sgd_momentum", "sgd"}).value_or("adam");
    optimizer = optimizer_name == "adam"           ? Optimizer::adam
                : optimizer_name == "sgd_momentum" ? Optimizer::sgd_momentum
                                                   : Optimizer::sgd;
    precision = map.choice("precision", {"fp32", "mixed"}).value_or("fp32") == "mixed" ? Precision::mixed : Precision::fp32;
  }

  PipelineWorkloadSpec read_pipeline(MapReader& map, const Cluster& cluster) {
    PipelineWorkloadSpec spec;
    spec.where = reader_.where(map.node());
    if (YAML::Node model = map.require("model"); model.IsDefined())
      spec.model = read_layer_model(reader_, model, "the model");
    spec.global_batch = static_cast<int>(map.integer("global_batch", 1, 1 << 30, true).value_or(1));
    const auto micro_batches = map.integer("micro_batches", 1, 1 << 20);
    const auto micro_batch_size = map.integer("micro_batch_size", 1, 1 << 30);
    if (micro_batches.has_value() == micro_batch_size.has_value()) {
      reader_.error(map.node(), "give exactly one of 'micro_batches' (M) and 'micro_batch_size' (global_batch / M)");
    } else if (micro_batches) {
      spec.micro_batches = static_cast<int>(*micro_batches);
      if (spec.global_batch % spec.micro_batches != 0)
        reader_.error(map.get("micro_batches"), fmt::format("global_batch {} is not a multiple of micro_batches {}",
                                                            spec.global_batch, spec.micro_batches));
    } else {
      if (spec.global_batch % *micro_batch_size != 0)
        reader_.error(map.get("micro_batch_size"), fmt::format("global_batch {} is not a multiple of micro_batch_size {}",
                                                               spec.global_batch, *micro_batch_size));
      spec.micro_batches = std::max(1, spec.global_batch / static_cast<int>(*micro_batch_size));
    }
    read_training_options(map, spec.dtype, spec.precision, spec.optimizer, spec.collective_algorithm);
    spec.framework_overhead = map.quantity<Bytes>("framework_overhead").value_or(Bytes(0));
    if (YAML::Node schedule = map.require("schedule"); schedule.IsDefined()) read_schedule(schedule, spec);
    const bool has_planner = map.has("planner");
    const bool has_stages = map.has("stages");
    if (has_planner == has_stages)
      reader_.error(map.node(), "give exactly one of 'planner' (a name of `dnnsim list planners`) and 'stages' (explicit)");
    if (has_planner) read_planner(map.get("planner"), spec);
    if (has_stages) read_stages(map.get("stages"), spec, cluster);
    return spec;
  }

  // Model chunks per stage when the scenario does not say: interleaved needs at least two.
  static int default_chunks(const std::string& schedule) { return schedule == "interleaved" ? 2 : 1; }

  // `schedule: 1f1b` or `schedule: {name: kfkb, group: 2}`; a key the named schedule does not read is an error.
  void read_schedule(const YAML::Node& node, PipelineWorkloadSpec& spec) {
    const ScheduleRegistry& schedules = builtin_schedules();
    if (node.IsScalar()) {
      if (schedules.find(node.Scalar()) == nullptr)
        reader_.error(node, fmt::format("unknown schedule '{}'{}", node.Scalar(),
                                        suggestion_suffix(node.Scalar(), schedules.names())));
      spec.schedule = node.Scalar();
      spec.schedule_options.chunks = default_chunks(spec.schedule);
      return;
    }
    MapReader map(reader_, node, "the schedule");
    if (!map.valid()) return;
    const auto name = map.choice("name", "schedule", schedules.names(), true);
    ScheduleOptions& options = spec.schedule_options;
    const std::vector<std::string> all_options = {"recompute", "policy", "max_in_flight", "chunks", "group", "candidates"};
    const std::vector<std::string> accepted = name ? schedules.at(*name).value.options : all_options;
    for (const std::string& key : all_options)
      if (map.has(key) && std::find(accepted.begin(), accepted.end(), key) == accepted.end())
        reader_.error(map.get(key), fmt::format("schedule '{}' has no option '{}' (its options: {})", *name, key,
                                                accepted.empty() ? "none" : fmt::format("{}", fmt::join(accepted, ", "))));
    options.recompute = map.boolean("recompute").value_or(false);
    options.policy = map.choice("policy", {"A", "B"}).value_or("A").front();
    if (auto d = map.integer("max_in_flight", 1, 1 << 20)) options.max_in_flight = static_cast<int>(*d);
    options.chunks = static_cast<int>(map.integer("chunks", 2, 1024).value_or(default_chunks(name.value_or(""))));
    options.group = static_cast<int>(map.integer("group", 1, 1 << 20).value_or(1));
    if (options.group > spec.micro_batches)
      reader_.error(map.get("group"), fmt::format("group {} is larger than the {} micro-batches", options.group,
                                                  spec.micro_batches));
    if (YAML::Node candidates = map.get("candidates"); candidates.IsDefined())
      for (const YAML::Node& k : reader_.list(candidates, "group sizes"))
        if (auto value = reader_.integer(k, 1, spec.micro_batches)) options.candidates.push_back(static_cast<int>(*value));
    map.finish();
    if (name) spec.schedule = *name;
  }

  // `planner: dapple` or `planner: {name: uniform, stages: 4}`.
  void read_planner(const YAML::Node& node, PipelineWorkloadSpec& spec) {
    const PlannerRegistry& planners = builtin_planners();
    if (node.IsScalar()) {
      if (planners.find(node.Scalar()) == nullptr)
        reader_.error(node, fmt::format("unknown planner '{}'{}", node.Scalar(),
                                        suggestion_suffix(node.Scalar(), planners.names())));
      spec.planner = node.Scalar();
      return;
    }
    MapReader map(reader_, node, "the planner");
    if (!map.valid()) return;
    spec.planner = map.choice("name", "planner", planners.names(), true).value_or("");
    if (auto stages = map.integer("stages", 1, 1 << 20)) spec.planner_stages = static_cast<int>(*stages);
    if (map.has("stages") && !spec.planner.empty() && spec.planner != "uniform")
      reader_.error(map.get("stages"), fmt::format("only the uniform planner takes 'stages'; planner '{}' chooses them",
                                                   spec.planner));
    map.finish();
  }

  // Explicit stages, in pipeline order: `{layers: N, gpus: N}` (the next N GPUs in cluster order) or
  // `{layers: N, devices: [glob, …]}` (GPU names or globs).
  void read_stages(const YAML::Node& node, PipelineWorkloadSpec& spec, const Cluster& cluster) {
    const std::vector<std::string> gpus = cluster.gpu_names();
    constexpr std::size_t kFree = std::numeric_limits<std::size_t>::max();
    std::vector<std::size_t> owner(gpus.size(), kFree);  // the stage that holds each GPU
    std::size_t next_layer = 0;
    DeviceId next_gpu = 0;
    const auto entries = reader_.list(node, "stages");
    if (node.IsSequence() && entries.empty()) reader_.error(node, "expected at least one stage");
    for (const YAML::Node& entry : entries) {
      MapReader map(reader_, entry, "a stage");
      if (!map.valid()) continue;
      PipelineStage stage;
      const auto layers = map.integer("layers", 1, 1 << 20, true).value_or(1);
      stage.chunks.push_back(LayerRange{next_layer, next_layer + static_cast<std::size_t>(layers)});
      next_layer += static_cast<std::size_t>(layers);
      const bool by_count = map.has("gpus");
      if (by_count == map.has("devices")) {
        reader_.error(entry, "give exactly one of 'gpus' (a count: the next GPUs in cluster order) and 'devices' (names or globs)");
      } else if (by_count) {
        const auto count = map.integer("gpus", 1, 1 << 20).value_or(1);
        for (std::int64_t i = 0; i < count; ++i) {
          while (next_gpu < gpus.size() && owner[next_gpu] != kFree) ++next_gpu;
          if (next_gpu >= gpus.size()) {
            reader_.error(map.get("gpus"), fmt::format("not enough GPUs: the cluster has {}", gpus.size()));
            break;
          }
          owner[next_gpu] = spec.stages.size();
          stage.devices.push_back(next_gpu);
        }
      } else {
        for (const YAML::Node& pattern : reader_.list(map.get("devices"), "GPU names")) {
          const std::string text = pattern.IsScalar() ? pattern.Scalar() : "";
          bool matched = false;
          for (DeviceId g = 0; g < gpus.size(); ++g) {
            if (!glob_match(text, gpus[g])) continue;
            matched = true;
            if (owner[g] == spec.stages.size())
              reader_.error(pattern, fmt::format("GPU {} is named twice in this stage", gpus[g]));
            else if (owner[g] != kFree)
              reader_.error(pattern, fmt::format("GPU {} already holds stage {}", gpus[g], owner[g]));
            owner[g] = spec.stages.size();
            stage.devices.push_back(g);
          }
          if (!matched)
            reader_.error(pattern, fmt::format("no GPU of the cluster matches '{}'{}", text, suggestion_suffix(text, gpus)));
        }
      }
      map.finish();
      spec.stages.push_back(std::move(stage));
    }
    if (!spec.model.layers.empty() && next_layer != spec.model.layers.size() && !entries.empty())
      reader_.error(node, fmt::format("the stages hold {} layers but the model has {}", next_layer,
                                      spec.model.layers.size()));
  }

  // ---- run, outputs, expectations ----

  RunSettings read_run(const YAML::Node& node) {
    RunSettings run;
    MapReader map(reader_, node, "run");
    run.iterations = static_cast<int>(map.integer("iterations", 1, 1000000).value_or(1));
    run.seed = static_cast<std::uint64_t>(map.integer("seed", 0, kMaxInt).value_or(1));
    if (const auto fidelity = map.choice("collective_fidelity", collective_fidelity_names()))
      run.collective_fidelity = collective_fidelity_from_name(*fidelity);
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
  std::vector<std::string> keys;
  for (std::size_t start = 0;;) {
    const auto dot = path.find('.', start);
    keys.push_back(path.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
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

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  DiagnosticSink sink;
  YamlReader reader(path, sink);
  YAML::Node root = reader.load_file();
  sink.throw_if_any();
  std::vector<std::pair<YAML::Node, std::string>> override_values;
  for (const std::string& assignment : overrides)
    if (auto value = apply_override(root, assignment, sink)) override_values.emplace_back(*value, "--set " + assignment);
  sink.throw_if_any();
  ScenarioParser parser(path, sink);
  for (const auto& [value, origin] : override_values) parser.reader().add_override(value, origin);
  Scenario scenario = parser.parse(root);
  sink.throw_if_any();
  return scenario;
}

}  // namespace dnnsim
