// Reads the `cluster:` and `calibration:` sections (see cluster_reader.hpp).
#include "sim/scenario/cluster_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>

#include "dnnsim/source_paths.hpp"
#include "models/calibration/calibration.hpp"
#include "models/cost/compute_cost.hpp"
#include "models/hardware/catalog.hpp"
#include "sim/scenario/workload_reading.hpp"

namespace dnnsim {
namespace {

class ClusterReader {
 public:
  explicit ClusterReader(YamlReader& reader) : reader_(reader) {}

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
    if (auto name =
            model_node.IsDefined() ? reader_.choice(model_node, "GPU model", catalog.gpu_names()) : std::nullopt) {
      gpu = *catalog.find_gpu(*name);
    }
    if (overrides) {
      if (auto v = overrides->positive_quantity<Bytes>("memory")) gpu.memory = *v;
      if (auto v = overrides->positive_quantity<BytesPerSecond>("memory_bandwidth")) gpu.memory_bandwidth = *v;
      if (auto v = overrides->positive_quantity<BytesPerSecond>("nvlink_bandwidth")) gpu.nvlink_bandwidth = *v;
      const std::pair<const char*, std::optional<FlopsPerSecond> GpuSpec::*> peaks[] = {
          {"peak_fp32", &GpuSpec::peak_fp32}, {"peak_tf32", &GpuSpec::peak_tf32}, {"peak_fp16", &GpuSpec::peak_fp16},
          {"peak_bf16", &GpuSpec::peak_bf16}, {"peak_fp8", &GpuSpec::peak_fp8},   {"peak_mxfp8", &GpuSpec::peak_mxfp8}};
      for (const auto& [key, field] : peaks)
        if (auto v = overrides->positive_quantity<FlopsPerSecond>(key)) gpu.*field = *v;
      overrides->finish();
    }
    return gpu;
  }

  // `{link: NAME}` from the catalog, or `{bandwidth, latency}`, or a catalog link with overrides.
  // `base` supplies what the node type implies when the key is absent; `base_unread` says an earlier
  // error (an unknown GPU) left that unknown, so a link that leans on it is not also incomplete.
  std::optional<std::pair<BytesPerSecond, Seconds>> read_link_ref(
      MapReader& map, const std::string& context, std::optional<std::pair<BytesPerSecond, Seconds>> base,
      bool base_unread = false) {
    const HardwareCatalog& catalog = HardwareCatalog::builtin();
    if (map.has("link")) {
      auto name = map.choice("link", catalog.link_names());
      if (!name) return std::nullopt;  // reported; anything said about the rest would follow from it
      const LinkSpec* spec = catalog.find_link(*name);
      base = std::pair{spec->bandwidth, spec->latency};
    }
    const bool has_bandwidth = map.has("bandwidth");
    const bool has_latency = map.has("latency");
    auto bandwidth = map.positive_quantity<BytesPerSecond>("bandwidth");
    auto latency = map.quantity<Seconds>("latency");
    if (!base && (!has_bandwidth || !has_latency)) {
      if (base_unread) return std::nullopt;
      map.none_given({"link", "bandwidth", "latency"}, map.node(),
                     fmt::format("{} needs 'link' (a catalog name) or both 'bandwidth' and 'latency'", context));
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
    const std::size_t errors_before_gpu = reader_.sink().size();
    if (YAML::Node gpu = map.require("gpu"); gpu.IsDefined()) type.gpu = read_gpu(gpu);
    const bool gpu_unread = reader_.sink().size() != errors_before_gpu || map.refused("gpu");  // or misspelt
    type.compute_efficiency = map.number("compute_efficiency", 1e-3, 1.0).value_or(1.0);
    type.gpus_per_node = static_cast<int>(map.integer("gpus_per_node", 1, 1024, true).value_or(1));
    if (auto cores = map.integer("cpu_cores", 1, 1 << 16)) type.cpu_cores = static_cast<int>(*cores);
    type.cpu_memory_bandwidth = map.positive_quantity<BytesPerSecond>("cpu_memory_bandwidth");
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
      pcie = read_link_ref(pcie_map, "pcie", pcie_default, gpu_unread);
      pcie_map.finish();
    }
    if (pcie) std::tie(type.pcie_bandwidth, type.pcie_latency) = *pcie;
    type.host_link_bandwidth = type.pcie_bandwidth;
    type.host_link_latency = type.pcie_latency;
    if (const LinkSpec* host = catalog.find_link(type.gpu.host_link)) {
      type.host_link_bandwidth = host->bandwidth;
      type.host_link_latency = host->latency;
      type.own_host_link = true;
    }

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
      gpu_link = read_link_ref(link_map, "gpu_link", gpu_link_default, gpu_unread || map.refused("fabric"));
      link_map.finish();
    } else if (!gpu_link && type.gpus_per_node > 1 && !type.gpu.name.empty()) {
      reader_.error(node, fmt::format("node type '{}': GPU {} has no NVLink; set 'gpu_link' or use fabric: pcie", name,
                                      type.gpu.name));
    }
    if (gpu_link) std::tie(type.gpu_link_bandwidth, type.gpu_link_latency) = *gpu_link;

    if (YAML::Node bridge = map.get("host_bridge"); bridge.IsDefined()) {
      if (type.fabric != IntraNodeFabric::pcie) reader_.error(bridge, "'host_bridge' applies to fabric: pcie only");
      type.host_bridge_bandwidth = map.positive_quantity<BytesPerSecond>("host_bridge");
    }
    bool per_gpu_refused = false;
    if (YAML::Node nic = map.require("nic"); nic.IsDefined()) {
      MapReader nic_map(reader_, nic, fmt::format("the NIC of node type '{}'", name));
      if (auto link = read_link_ref(nic_map, "nic", std::nullopt))
        std::tie(type.nic_bandwidth, type.nic_latency) = *link;
      type.nic_per_gpu = nic_map.boolean("per_gpu").value_or(false);
      per_gpu_refused = nic_map.refused("per_gpu");
      nic_map.finish();
    }
    read_nvlink_domain(map, type, per_gpu_refused || map.refused("nic"));
    type.refused = map.refused_keys();
    map.finish();
    return type;
  }

  // `nvlink_domain: N`: N GPUs of several nodes on one NVLink switch fabric (NVL72). Checked here
  // against the node type; the node groups' counts are checked when the cluster is read. Nothing is
  // judged against a default put in place of a refused key (one mistake, one error): a refused
  // `gpus_per_node` leaves the domain unread, a refused NIC its per-GPU check.
  void read_nvlink_domain(MapReader& map, NodeType& type, bool nic_refused) {
    const auto domain = map.integer("nvlink_domain", 1, 1 << 16);
    if (!domain || *domain == type.gpus_per_node || map.refused("gpus_per_node")) return;
    const YAML::Node where = map.get("nvlink_domain");
    const auto gpus = static_cast<int>(*domain);
    bool valid = true;
    const auto refuse = [&](std::string message) {
      reader_.error(where, std::move(message));
      valid = false;
    };
    if (gpus % type.gpus_per_node != 0)
      refuse(fmt::format("nvlink_domain {} is not a whole number of nodes of {} GPUs", gpus, type.gpus_per_node));
    if (type.gpu.nvlink_domain > 0 && gpus > type.gpu.nvlink_domain)
      refuse(fmt::format("nvlink_domain {} is larger than the {} GPUs that {}'s systems join in one NVLink domain",
                         gpus, type.gpu.nvlink_domain, type.gpu.name));
    if (type.fabric != IntraNodeFabric::nvswitch)
      refuse("nvlink_domain needs fabric: nvswitch (an NVLink switch fabric)");
    if (!type.nic_per_gpu && !nic_refused)
      refuse("nvlink_domain needs nic: {per_gpu: true} (a NIC per GPU, as in NVL72 compute trays)");
    if (!valid) return;
    type.domain_nodes = gpus / type.gpus_per_node;
    type.gpus_per_node = gpus;
  }

  Cluster read_cluster(const YAML::Node& node) {
    Cluster cluster;
    MapReader map(reader_, node, "cluster");
    if (!map.valid()) return cluster;
    std::vector<std::string> type_names;
    bool types_read = false;  // else each node group's type would be reported unknown as well
    if (YAML::Node types = map.require("node_types"); types.IsDefined()) {
      if (!types.IsMap() || types.size() == 0) {
        reader_.error(types, "expected a mapping of node type names to their description");
      } else {
        types_read = true;
        for (auto item : types) {
          const std::string name = item.first.Scalar();
          type_names.push_back(name);
          cluster.node_types.push_back(read_node_type(name, item.second));
        }
      }
    }
    bool nodes_complete = true;  // every node group read: the nodes the file's names count on exist
    if (YAML::Node nodes = map.require("nodes"); nodes.IsDefined()) {
      const auto groups = reader_.list(nodes, "node groups such as [{type: dgx, count: 2}]");
      if (nodes.IsSequence() && groups.empty()) reader_.error(nodes, "expected at least one node group");
      for (const YAML::Node& group : groups) {
        MapReader group_map(reader_, group, "a node group");
        std::optional<std::string> type;
        if (types_read)
          type = group_map.choice("type", "node type", type_names, true);
        else
          (void)group_map.require("type");
        const auto count = group_map.integer("count", 1, 100000).value_or(1);
        const bool count_refused = group_map.refused("count");
        group_map.finish();
        if (!type || count_refused) {
          nodes_complete = false;
          continue;
        }
        const auto index =
            static_cast<std::size_t>(std::find(type_names.begin(), type_names.end(), *type) - type_names.begin());
        // Nodes of a type with an NVLink domain are read as whole domains (read_nvlink_domain).
        const int per_domain = cluster.node_types[index].domain_nodes;
        if (count % per_domain != 0) {
          const int domain_gpus = cluster.node_types[index].gpus_per_node;
          const int node_gpus = domain_gpus / per_domain;
          reader_.error(group, count < per_domain
                                   ? fmt::format("an NVLink domain of {} GPUs is larger than the {} nodes of {} GPUs "
                                                 "(type '{}') of this group",
                                                 domain_gpus, count, node_gpus, *type)
                                   : fmt::format("{} nodes of type '{}' do not fill whole NVLink domains of {} nodes "
                                                 "({} GPUs)",
                                                 count, *type, per_domain, domain_gpus));
          nodes_complete = false;
          continue;
        }
        for (std::int64_t i = 0; i < count / per_domain; ++i)
          cluster.nodes.push_back(NodeInstance{fmt::format("node{}", cluster.nodes.size()), index});
      }
    }
    if (YAML::Node net = map.get("interconnect"); net.IsDefined())
      cluster.network = read_interconnect(net, cluster, nodes_complete);
    map.finish();
    return cluster;
  }

  InterNodeNetwork read_interconnect(const YAML::Node& node, const Cluster& cluster, bool nodes_complete) {
    InterNodeNetwork net;
    MapReader map(reader_, node, "the interconnect");
    if (!map.valid()) return net;
    const bool has_kind = map.has("kind");
    const auto kind = map.choice("kind", {"switch", "leaf_spine", "explicit"});
    // The other keys depend on the kind: after a refused or misspelt kind, reporting them too would only
    // add noise. A misspelt `kind` is still reported, as the one unknown key.
    if (has_kind && !kind) return net;
    if (map.misspelt("kind")) {
      map.declare_all_but_misspellings_of("kind");
      map.finish();
      return net;
    }
    if (kind.value_or("switch") == "switch") {
      net.kind = InterNodeKind::single_switch;
      net.switch_bandwidth = map.positive_quantity<BytesPerSecond>("bandwidth");
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
      read_explicit_topology(map, net, cluster, nodes_complete);
    }
    map.finish();
    return net;
  }

  // `nodes_complete` false: a node group had errors of its own, so a node the links name ("node3") may be
  // missing for that reason alone; such a name is taken as written rather than reported unknown too. The
  // same for a switch a link names when the switch list had errors of its own.
  void read_explicit_topology(MapReader& map, InterNodeNetwork& net, const Cluster& cluster, bool nodes_complete) {
    std::vector<std::string> node_names;
    for (const NodeInstance& n : cluster.nodes) node_names.push_back(n.name);
    const std::size_t errors_before_switches = reader_.sink().size();
    if (YAML::Node switches = map.get("switches"); switches.IsDefined()) {
      for (const YAML::Node& s : reader_.list(switches, "switch names"))
        if (auto name = reader_.string(s)) net.switches.push_back(*name);
    }
    const bool switches_complete = reader_.sink().size() == errors_before_switches;
    const auto named = [&](const YAML::Node& name, std::string_view what,
                           const std::vector<std::string>& names) -> std::optional<std::string> {
      const std::string text = name.IsScalar() ? name.Scalar() : "";
      const bool generated = text.size() > 4 && text.starts_with("node") &&
                             std::all_of(text.begin() + 4, text.end(), [](char c) { return std::isdigit(c) != 0; });
      if (generated ? !nodes_complete : !switches_complete && what != "node") return text;
      return reader_.choice(name, what, names);
    };
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
        auto a = named(between[0], "node or switch", endpoints);
        auto b = named(between[1], "node or switch", endpoints);
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
        route.from = from.IsDefined() ? named(from, "node", node_names).value_or("") : "";
        route.to = to.IsDefined() ? named(to, "node", node_names).value_or("") : "";
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

  void read_calibration(const YAML::Node& node, Cluster& cluster) {
    const auto attach = [&](const YAML::Node& where, const CalibrationTable& table) {
      auto shared = std::make_shared<const CalibrationTable>(table);
      bool used = false;
      for (NodeType& type : cluster.node_types) {
        if (type.gpu.name != table.device) continue;
        if (type.compute_efficiency != 1.0)
          reader_.error(where, fmt::format("node type '{}' sets compute_efficiency, which a calibration table "
                                           "replaces: give one or the other",
                                           type.name));
        type.calibration = shared;
        used = true;
      }
      if (!used)
        reader_.error(where, fmt::format("the calibration table for '{}' matches no node type's GPU", table.device));
    };
    if (node.IsScalar() && node.Scalar() == "shipped") {
      for (NodeType& type : cluster.node_types) {
        try {
          if (auto table = load_shipped_calibration(DNNSIM_DATA_DIR "/calibration", type.gpu.name))
            attach(node, *table);
        } catch (const InputError& e) {
          reader_.sink().append(e.diagnostics());
        }
      }
      return;
    }
    const std::vector<YAML::Node> files =
        node.IsSequence() ? reader_.list(node, "calibration files") : std::vector<YAML::Node>{node};
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

 private:
  YamlReader& reader_;
};

}  // namespace

Cluster read_cluster(YamlReader& reader, const YAML::Node& node) { return ClusterReader(reader).read_cluster(node); }

void read_calibration(YamlReader& reader, const YAML::Node& node, Cluster& cluster) {
  ClusterReader(reader).read_calibration(node, cluster);
}

}  // namespace dnnsim
