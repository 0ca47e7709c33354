#include "sim/scenario/layout.hpp"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <optional>

namespace dnnsim {
namespace {

Route mirrored(const Route& route) {
  Route result(route.rbegin(), route.rend());
  for (Hop& hop : result) hop.up = !hop.up;
  return result;
}

class LayoutBuilder {
 public:
  explicit LayoutBuilder(const Cluster& cluster) : cluster_(cluster) {}

  PlatformLayout build() {
    for (std::uint32_t n = 0; n < cluster_.nodes.size(); ++n) add_node(n);
    switch (cluster_.network.kind) {
      case InterNodeKind::single_switch:
        add_single_switch();
        break;
      case InterNodeKind::leaf_spine:
        add_leaf_spine();
        break;
      case InterNodeKind::explicit_links:
        add_explicit_links();
        break;
    }
    return std::move(layout_);
  }

 private:
  std::uint32_t add_link(std::string name, BytesPerSecond bandwidth, Seconds latency,
                         LinkDecl::Sharing sharing = LinkDecl::Sharing::split_duplex) {
    layout_.links.push_back(LinkDecl{std::move(name), bandwidth, latency, sharing});
    return static_cast<std::uint32_t>(layout_.links.size() - 1);
  }

  // Total NIC bandwidth of a node: what it can push into the inter-node network.
  BytesPerSecond node_injection(const NodeInstance& node) const {
    const NodeType& type = cluster_.type_of(node);
    return type.nic_bandwidth * (type.nic_per_gpu ? type.gpus_per_node : 1);
  }

  void add_node(std::uint32_t index) {
    const NodeInstance& node = cluster_.nodes[index];
    const NodeType& type = cluster_.type_of(node);
    NodeLayout result;
    result.name = node.name;
    const auto gpus = static_cast<std::uint32_t>(type.gpus_per_node);
    for (std::uint32_t g = 0; g < gpus; ++g) result.gpus.push_back(fmt::format("{}/gpu{}", node.name, g));

    // A calibration table's collectives section: GPU-to-GPU flows reach only this fraction of the
    // link's nominal bandwidth (NCCL's measured bus bandwidth, docs/calibration.md "Collectives").
    const BytesPerSecond gpu_link_bandwidth(type.gpu_link_bandwidth.value() *
                                            collectives_of(type.calibration.get()).link_efficiency);

    std::optional<std::uint32_t> host_bridge;
    if (type.fabric == IntraNodeFabric::pcie && type.host_bridge_bandwidth)
      host_bridge =
          add_link(node.name + "/host_bridge", *type.host_bridge_bandwidth, Seconds(0), LinkDecl::Sharing::shared);

    // PCIe: the GPU's path to the NIC; for the pcie fabric it also carries GPU-to-GPU traffic.
    std::vector<std::uint32_t> pcie(gpus);
    const bool pcie_fabric = type.fabric == IntraNodeFabric::pcie;
    for (std::uint32_t g = 0; g < gpus; ++g)
      pcie[g] = add_link(result.gpus[g] + "/pcie", pcie_fabric ? gpu_link_bandwidth : type.pcie_bandwidth,
                         pcie_fabric ? type.gpu_link_latency : type.pcie_latency);

    std::vector<std::uint32_t> ports;
    if (type.fabric == IntraNodeFabric::nvswitch)
      for (std::uint32_t g = 0; g < gpus; ++g)
        ports.push_back(add_link(result.gpus[g] + "/nvswitch", gpu_link_bandwidth, type.gpu_link_latency));

    for (std::uint32_t a = 0; a < gpus; ++a)
      for (std::uint32_t b = a + 1; b < gpus; ++b) {
        Route route;
        switch (type.fabric) {
          case IntraNodeFabric::nvswitch:
            route = {Hop{ports[a], true}, Hop{ports[b], false}};
            break;
          case IntraNodeFabric::nvlink_mesh:
            route = {Hop{add_link(fmt::format("{}/gpu{}-gpu{}/nvlink", node.name, a, b), gpu_link_bandwidth,
                                  type.gpu_link_latency),
                         true}};
            break;
          case IntraNodeFabric::pcie:
            route = {Hop{pcie[a], true}};
            if (host_bridge) route.push_back(Hop{*host_bridge, true});
            route.push_back(Hop{pcie[b], false});
            break;
        }
        result.gpu_routes[{a, b}] = std::move(route);
      }

    std::optional<std::uint32_t> shared_nic;
    if (!type.nic_per_gpu) shared_nic = add_link(node.name + "/nic", type.nic_bandwidth, type.nic_latency);
    std::vector<std::uint32_t> nics;
    for (std::uint32_t g = 0; g < gpus; ++g) {
      Route route{Hop{pcie[g], true}};
      if (host_bridge) route.push_back(Hop{*host_bridge, true});
      nics.push_back(shared_nic ? *shared_nic
                                : add_link(result.gpus[g] + "/nic", type.nic_bandwidth, type.nic_latency));
      route.push_back(Hop{nics.back(), true});
      result.gpu_to_gateway.push_back(std::move(route));
    }
    // The host's side of each PCIe link is its DOWN direction (GPU → host is UP, as above). A GPU
    // with a host link of its own (NVLink-C2C) reaches its host's memory over that link instead.
    result.cpu = node.name + "/cpu";
    for (std::uint32_t g = 0; g < gpus; ++g) {
      Route route;
      if (type.own_host_link) {
        route.push_back(
            Hop{add_link(result.gpus[g] + "/c2c", type.host_link_bandwidth, type.host_link_latency), false});
      } else {
        if (host_bridge) route.push_back(Hop{*host_bridge, true});
        route.push_back(Hop{pcie[g], false});
      }
      result.cpu_to_gpu.push_back(std::move(route));
    }
    if (host_bridge) result.cpu_to_gateway.push_back(Hop{*host_bridge, true});
    if (!nics.empty()) result.cpu_to_gateway.push_back(Hop{nics.front(), true});
    layout_.first_gpu.push_back(layout_.nodes.empty()
                                    ? 0
                                    : layout_.first_gpu.back() +
                                          static_cast<std::uint32_t>(layout_.nodes.back().gpus.size()));
    layout_.nodes.push_back(std::move(result));
  }

  void add_single_switch() {
    const InterNodeNetwork& net = cluster_.network;
    if (net.switch_bandwidth) {
      const std::uint32_t link =
          add_link("switch", *net.switch_bandwidth, net.switch_latency, LinkDecl::Sharing::shared);
      layout_.switch_ports.assign(cluster_.nodes.size(), link);
      return;
    }
    // Non-blocking: a port per node at the node's injection rate, so only the NICs limit traffic.
    // Split-duplex, as the NICs: a ring's flow into a node and the one out of it share no link, so
    // each flow is its own max-min component instead of the whole ring being one.
    for (const NodeInstance& node : cluster_.nodes)
      layout_.switch_ports.push_back(
          add_link(fmt::format("switch/{}", node.name), node_injection(node), net.switch_latency / 2.0));
  }

  void add_leaf_spine() {
    const InterNodeNetwork& net = cluster_.network;
    const auto node_count = static_cast<std::uint32_t>(cluster_.nodes.size());
    const auto per_leaf = static_cast<std::uint32_t>(net.nodes_per_leaf);
    const std::uint32_t leaves = (node_count + per_leaf - 1) / per_leaf;
    const auto spines = static_cast<std::uint32_t>(net.spines);
    LeafSpineLinks fabric;
    fabric.nodes_per_leaf = per_leaf;
    fabric.spines = spines;
    for (std::uint32_t l = 0; l < leaves; ++l) {
      BytesPerSecond downlinks{0};
      for (std::uint32_t n = l * per_leaf; n < std::min(node_count, (l + 1) * per_leaf); ++n)
        downlinks += node_injection(cluster_.nodes[n]);
      fabric.leaf_switch.push_back(
          add_link(fmt::format("leaf{}", l), downlinks, net.switch_latency, LinkDecl::Sharing::fatpipe));
      // Oversubscription = downlink capacity / uplink capacity of the leaf.
      const BytesPerSecond per_uplink = downlinks / (net.oversubscription * spines);
      for (std::uint32_t s = 0; s < spines; ++s)
        fabric.uplinks.push_back(add_link(fmt::format("leaf{}/spine{}", l, s), per_uplink, net.uplink_latency));
    }
    layout_.leaf_spine = std::move(fabric);
  }

  void add_explicit_links() {
    const InterNodeNetwork& net = cluster_.network;
    // Vertices: nodes first, then switches.
    std::vector<std::string> vertex_names;
    for (const NodeInstance& node : cluster_.nodes) vertex_names.push_back(node.name);
    vertex_names.insert(vertex_names.end(), net.switches.begin(), net.switches.end());
    const auto vertex = [&](const std::string& name) {
      return static_cast<std::uint32_t>(std::find(vertex_names.begin(), vertex_names.end(), name) -
                                        vertex_names.begin());
    };
    struct Edge {
      std::uint32_t to;
      Hop hop;
    };
    std::vector<std::vector<Edge>> adjacency(vertex_names.size());
    std::map<std::string, std::uint32_t> link_index;
    for (const ExplicitLink& link : net.links) {
      const std::uint32_t id = add_link(link.name, link.bandwidth, link.latency);
      link_index[link.name] = id;
      const std::uint32_t a = vertex(link.a);
      const std::uint32_t b = vertex(link.b);
      adjacency[a].push_back(Edge{b, Hop{id, true}});
      adjacency[b].push_back(Edge{a, Hop{id, false}});
    }
    const auto node_count = static_cast<std::uint32_t>(cluster_.nodes.size());
    // Fewest hops by breadth-first search; neighbours in declaration order make ties deterministic.
    for (std::uint32_t a = 0; a < node_count; ++a) {
      std::vector<std::optional<Edge>> reached_by(vertex_names.size());
      std::vector<bool> seen(vertex_names.size(), false);
      std::deque<std::uint32_t> queue{a};
      seen[a] = true;
      while (!queue.empty()) {
        const std::uint32_t v = queue.front();
        queue.pop_front();
        if (v != a && v < node_count) continue;  // nodes are endpoints, not transit
        for (const Edge& edge : adjacency[v])
          if (!seen[edge.to]) {
            seen[edge.to] = true;
            reached_by[edge.to] = Edge{v, edge.hop};  // `to` holds the predecessor here
            queue.push_back(edge.to);
          }
      }
      for (std::uint32_t b = a + 1; b < node_count; ++b) {
        if (!seen[b]) continue;  // reported below unless an explicit route covers it
        Route route;
        for (std::uint32_t v = b; v != a; v = reached_by[v]->to) route.push_back(reached_by[v]->hop);
        std::reverse(route.begin(), route.end());
        layout_.node_routes[{a, b}] = std::move(route);
      }
    }
    for (const ExplicitRoute& given : net.routes) {
      std::uint32_t a = vertex(given.from);
      std::uint32_t b = vertex(given.to);
      // Hop directions follow the walk from `from` through the named links.
      Route route;
      std::uint32_t at = a;
      for (const std::string& name : given.links) {
        const ExplicitLink& link = net.links[std::find_if(net.links.begin(), net.links.end(),
                                                          [&](const ExplicitLink& l) { return l.name == name; }) -
                                             net.links.begin()];
        const bool forward = vertex(link.a) == at;
        route.push_back(Hop{link_index[name], forward});
        at = forward ? vertex(link.b) : vertex(link.a);
      }
      if (a > b) {
        std::swap(a, b);
        route = mirrored(route);
      }
      layout_.node_routes[{a, b}] = std::move(route);
    }
    std::vector<Diagnostic> missing;
    for (std::uint32_t a = 0; a < node_count; ++a)
      for (std::uint32_t b = a + 1; b < node_count; ++b)
        if (!layout_.node_routes.contains({a, b}))
          missing.push_back(Diagnostic{{},
                                       fmt::format("no route between {} and {}: the explicit links do not connect them",
                                                   cluster_.nodes[a].name, cluster_.nodes[b].name)});
    if (!missing.empty()) throw InputError(std::move(missing));
  }

  const Cluster& cluster_;
  PlatformLayout layout_;
};

}  // namespace

PlatformLayout make_layout(const Cluster& cluster) { return LayoutBuilder(cluster).build(); }

std::vector<std::string> PlatformLayout::link_names() const {
  std::vector<std::string> names;
  names.reserve(links.size());
  for (const LinkDecl& link : links) names.push_back(link.name);
  return names;
}

Route LeafSpineLinks::route(std::uint32_t a, std::uint32_t b) const {
  if (a > b) return mirrored(route(b, a));
  const std::uint32_t la = a / nodes_per_leaf;
  const std::uint32_t lb = b / nodes_per_leaf;
  if (la == lb) return {Hop{leaf_switch[la], true}};
  const std::uint32_t spine = (la + lb + a + b) % spines;
  return {Hop{leaf_switch[la], true}, Hop{uplinks[la * spines + spine], true}, Hop{uplinks[lb * spines + spine], false},
          Hop{leaf_switch[lb], true}};
}

std::size_t LeafSpineLinks::route_length(std::uint32_t a, std::uint32_t b) const {
  return a / nodes_per_leaf == b / nodes_per_leaf ? 1 : 4;
}

std::size_t PlatformLayout::node_route_length(std::uint32_t a, std::uint32_t b) const {
  if (!switch_ports.empty()) return switch_ports[a] == switch_ports[b] ? 1 : 2;
  if (leaf_spine) return leaf_spine->route_length(a, b);
  return node_routes.at(std::minmax(a, b)).size();
}

Route PlatformLayout::node_route(std::uint32_t a, std::uint32_t b) const {
  if (!switch_ports.empty()) {
    if (switch_ports[a] == switch_ports[b]) return {Hop{switch_ports[a], true}};
    return {Hop{switch_ports[a], true}, Hop{switch_ports[b], false}};
  }
  if (leaf_spine) return leaf_spine->route(a, b);
  return a < b ? node_routes.at({a, b}) : mirrored(node_routes.at({b, a}));
}

std::pair<std::uint32_t, std::uint32_t> PlatformLayout::locate_gpu(std::uint32_t gpu) const {
  // In the order of Cluster::gpu_names.
  const auto after = std::upper_bound(first_gpu.begin(), first_gpu.end(), gpu);
  const auto n = static_cast<std::uint32_t>(after - first_gpu.begin()) - 1;
  if (after == first_gpu.begin() || gpu - first_gpu[n] >= nodes[n].gpus.size())
    throw std::out_of_range("GPU index out of range");
  return std::pair{n, gpu - first_gpu[n]};
}

Route PlatformLayout::gpu_route(std::uint32_t src, std::uint32_t dst) const {
  const auto [node_a, local_a] = locate_gpu(src);
  const auto [node_b, local_b] = locate_gpu(dst);
  if (node_a == node_b) {
    if (local_a == local_b) return {};
    const auto& routes = nodes[node_a].gpu_routes;
    return local_a < local_b ? routes.at({local_a, local_b}) : mirrored(routes.at({local_b, local_a}));
  }
  Route route = nodes[node_a].gpu_to_gateway[local_a];
  const Route middle = node_route(node_a, node_b);
  route.insert(route.end(), middle.begin(), middle.end());
  const Route last = mirrored(nodes[node_b].gpu_to_gateway[local_b]);
  route.insert(route.end(), last.begin(), last.end());
  return route;
}

std::size_t PlatformLayout::gpu_route_length(std::uint32_t src, std::uint32_t dst) const {
  const auto [node_a, local_a] = locate_gpu(src);
  const auto [node_b, local_b] = locate_gpu(dst);
  if (node_a == node_b)
    return local_a == local_b ? 0 : nodes[node_a].gpu_routes.at(std::minmax(local_a, local_b)).size();
  return nodes[node_a].gpu_to_gateway[local_a].size() + node_route_length(node_a, node_b) +
         nodes[node_b].gpu_to_gateway[local_b].size();
}

void GpuPathCosts::Sum::hop(const LinkDecl& link) {
  latency += link.latency;
  narrowest = std::min(narrowest, link.bandwidth);
}

GpuPathCosts::Sum GpuPathCosts::along(Sum sum, const Route& route, bool reversed) const {
  // A mirrored route is the same links in reverse order.
  if (reversed)
    for (auto it = route.rbegin(); it != route.rend(); ++it) sum.hop(layout_.links[it->link]);
  else
    for (const Hop& h : route) sum.hop(layout_.links[h.link]);
  return sum;
}

GpuPathCosts::GpuPathCosts(PlatformLayout layout) : layout_(std::move(layout)) {
  for (std::uint32_t node = 0; node < layout_.nodes.size(); ++node)
    for (std::uint32_t local = 0; local < layout_.nodes[node].gpus.size(); ++local) {
      Gpu& gpu = gpus_.emplace_back();
      gpu.node = node;
      gpu.local = local;
      const Route& up = layout_.nodes[node].gpu_to_gateway[local];
      gpu.leaving = along(Sum{}, up, false);
      gpu.at_switch = gpu.leaving;
      if (!layout_.switch_ports.empty()) gpu.at_switch.hop(layout_.links[layout_.switch_ports[node]]);
      gpu.arrival_begin = arrival_.size();
      for (auto it = up.rbegin(); it != up.rend(); ++it) arrival_.push_back(it->link);
      gpu.arrival_end = arrival_.size();
    }
}

PathCost GpuPathCosts::operator()(std::uint32_t src, std::uint32_t dst) const {
  const Gpu& a = gpus_.at(src);
  const Gpu& b = gpus_.at(dst);
  Sum sum;
  if (a.node == b.node) {
    if (a.local != b.local)
      sum = along(sum, layout_.nodes[a.node].gpu_routes.at({std::min(a.local, b.local), std::max(a.local, b.local)}),
                  a.local > b.local);
    return PathCost{sum.latency, sum.narrowest};
  }
  if (!layout_.switch_ports.empty()) {  // as node_route: a's port, then b's unless it is the same link
    sum = a.at_switch;
    if (layout_.switch_ports[b.node] != layout_.switch_ports[a.node])
      sum.hop(layout_.links[layout_.switch_ports[b.node]]);
  } else if (layout_.leaf_spine) {  // the same links in the same order as the mirrored table entry below
    sum = along(a.leaving, layout_.leaf_spine->route(a.node, b.node), false);
  } else {
    sum =
        along(a.leaving, layout_.node_routes.at({std::min(a.node, b.node), std::max(a.node, b.node)}), a.node > b.node);
  }
  for (std::size_t k = b.arrival_begin; k < b.arrival_end; ++k) sum.hop(layout_.links[arrival_[k]]);
  return PathCost{sum.latency, sum.narrowest};
}

Seconds PlatformLayout::route_latency(const Route& route) const {
  Seconds total{0};
  for (const Hop& hop : route) total += links[hop.link].latency;
  return total;
}

BytesPerSecond PlatformLayout::route_bandwidth(const Route& route) const {
  BytesPerSecond narrowest{std::numeric_limits<double>::infinity()};
  for (const Hop& hop : route) narrowest = std::min(narrowest, links[hop.link].bandwidth);
  return narrowest;
}

bool glob_match(const std::string& pattern, const std::string& name) {
  return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

}  // namespace dnnsim
