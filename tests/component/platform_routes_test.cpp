// One SimGrid zone holds every host and computes each route when SimGrid asks
// (sim/platform/computed_route_zone.hpp, cluster_routes.hpp). What SimGrid routes must be what the
// hierarchical platform it replaced routed (a full zone per node, a root zone of gateway-to-gateway
// routes: star, leaf-spine or full): the same one-way links in the same order, each split-duplex
// link by its half in the hop's direction ("<name>_UP" / "<name>_DOWN", SimGrid's names), and the
// same latency to the last bit, summed as SimGrid's hierarchical routing summed it: the root's part
// first, then the source node's, then the destination node's (NetZoneImpl::get_global_route), a
// node's reverse route being its links reversed, each in the other direction (add_route(…,
// symmetrical)); a host to itself crosses the model's loopback link (FullZone::do_seal).
#include <gtest/gtest.h>

#include <optional>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "sim/platform/platform.hpp"
#include "sim/run/simulation.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

namespace sg4 = simgrid::s4u;

// Five nodes of two GPUs, two nodes per leaf (three leaves, the last one half full), three spines:
// routes within a node, within a leaf and across leaves, each spine used by some pair
// ((leaf a + leaf b + a + b) mod 3 takes every value over these pairs).
constexpr const char* kLeafSpine = R"(name: leaf-spine-routes
cluster:
  node_types:
    box:
      gpu: A100-80GB-SXM
      gpus_per_node: 2
      fabric: nvswitch
      nic: {link: IB-HDR, per_gpu: true}
  nodes: [{type: box, count: 5}]
  interconnect: {kind: leaf_spine, nodes_per_leaf: 2, spines: 3, oversubscription: 2, latency: "1us",
                 uplink_latency: "3us"}
workload: {kind: data_parallel, model: {layers: [{forward_flops: "1GFlop"}]}, global_batch: 10}
)";

// PCIe boxes (a host bridge: GPU-to-GPU routes of three hops, the CPU's routes through it), an
// NVLink-mesh box and an irregular explicit network with a direct link between two nodes.
constexpr const char* kExplicit = R"(name: explicit-routes
cluster:
  node_types:
    mesh: {gpu: V100-16GB, gpus_per_node: 3, fabric: nvlink_mesh, nic: {link: Ethernet-25G}}
    pcie: {gpu: V100-16GB, gpus_per_node: 2, fabric: pcie, nic: {link: Ethernet-25G}}
  nodes: [{type: mesh}, {type: pcie}, {type: pcie}]
  interconnect:
    kind: explicit
    switches: [core]
    links:
      - {name: up0, between: [node0, core], link: Ethernet-25G}
      - {name: up1, between: [node1, core], link: Ethernet-10G}
      - {name: up2, between: [node2, core], link: Ethernet-10G}
      - {name: direct02, between: [node0, node2], link: Ethernet-25G}
workload: {kind: data_parallel, model: {layers: [{forward_flops: "1GFlop"}]}, global_batch: 7}
)";

Route mirror(const Route& route) {
  Route result(route.rbegin(), route.rend());
  for (Hop& hop : result) hop.up = !hop.up;
  return result;
}

// A host of the layout: GPU `local` of `node`, or its CPU.
struct LayoutHost {
  std::uint32_t node;
  std::optional<std::uint32_t> local;
  sg4::Host* host;
};

// The hierarchical platform's route from a to b: {the source's part, the root's part, the destination's part}.
std::vector<Route> hierarchical_route(const PlatformLayout& layout, const LayoutHost& a, const LayoutHost& b) {
  const NodeLayout& node = layout.nodes[a.node];
  if (a.node == b.node) {
    if (a.local && b.local)
      return {{},
              *a.local < *b.local ? node.gpu_routes.at({*a.local, *b.local})
                                  : mirror(node.gpu_routes.at({*b.local, *a.local})),
              {}};
    if (b.local) return {{}, node.cpu_to_gpu[*b.local], {}};
    return {{}, mirror(node.cpu_to_gpu[*a.local]), {}};
  }
  const auto to_gateway = [&](const LayoutHost& h) {
    return h.local ? layout.nodes[h.node].gpu_to_gateway[*h.local] : layout.nodes[h.node].cpu_to_gateway;
  };
  return {to_gateway(a), layout.node_route(a.node, b.node), mirror(to_gateway(b))};
}

std::string one_way_name(const PlatformLayout& layout, const Hop& hop) {
  const LinkDecl& link = layout.links[hop.link];
  return link.sharing == LinkDecl::Sharing::split_duplex ? link.name + (hop.up ? "_UP" : "_DOWN") : link.name;
}

// Every ordered pair of hosts (GPUs, and each node's CPU when `cpus`), a host with itself included.
void expect_hierarchical_routes(const std::string& yaml, bool cpus) {
  const auto engine = create_engine();
  PlatformOptions options;
  const Scenario scenario = testing::load(yaml);
  if (cpus) options.cpu_hosts.assign(scenario.cluster.nodes.size(), {CpuHostSpec{}});
  const Platform platform = build_platform(scenario, options);
  const PlatformLayout& layout = platform.layout;
  std::vector<LayoutHost> hosts;
  for (std::uint32_t n = 0; n < layout.nodes.size(); ++n) {
    for (std::uint32_t g = 0; g < layout.nodes[n].gpus.size(); ++g)
      hosts.push_back(LayoutHost{n, g, platform.gpus[layout.first_gpu[n] + g]});
    for (sg4::Host* cpu : platform.cpus[n]) hosts.push_back(LayoutHost{n, std::nullopt, cpu});
  }
  const sg4::Link* loopback = engine->link_by_name("__loopback__");
  for (const LayoutHost& a : hosts)
    for (const LayoutHost& b : hosts) {
      std::vector<std::string> expected;
      double expected_latency = 0;
      if (a.host == b.host) {
        expected = {loopback->get_name()};
        expected_latency = loopback->get_latency();
      } else {
        const std::vector<Route> parts = hierarchical_route(layout, a, b);
        for (const Route& part : parts)
          for (const Hop& hop : part) expected.push_back(one_way_name(layout, hop));
        for (const std::size_t part : {1, 0, 2})
          for (const Hop& hop : parts[part]) expected_latency += layout.links[hop.link].latency.value();
      }
      std::vector<sg4::Link*> links;
      double latency = 0;
      a.host->route_to(b.host, links, &latency);
      std::vector<std::string> names;
      for (const sg4::Link* link : links) names.push_back(link->get_name());
      EXPECT_EQ(names, expected) << a.host->get_name() << " to " << b.host->get_name();
      EXPECT_EQ(latency, expected_latency) << a.host->get_name() << " to " << b.host->get_name();
    }
}

TEST(PlatformRoutes, LeafSpineRoutesAreTheHierarchicalRoutes) { expect_hierarchical_routes(kLeafSpine, false); }

// A non-blocking switch: a split-duplex port per node; with a backplane: one shared link both ends name.
std::string on_switch(const std::string& switch_keys) {
  std::string yaml = kLeafSpine;
  return yaml.replace(yaml.find("interconnect"), std::string::npos,
                      "interconnect: {kind: switch, latency: \"1us\"" + switch_keys +
                          "}\nworkload: {kind: data_parallel, model: {layers: [{forward_flops: \"1GFlop\"}]}, "
                          "global_batch: 10}\n");
}

TEST(PlatformRoutes, SwitchRoutesAreTheHierarchicalRoutes) { expect_hierarchical_routes(on_switch(""), true); }

TEST(PlatformRoutes, SwitchBackplaneRoutesAreTheHierarchicalRoutes) {
  expect_hierarchical_routes(on_switch(", bandwidth: \"100GB/s\""), false);
}

TEST(PlatformRoutes, ExplicitRoutesAreTheHierarchicalRoutes) { expect_hierarchical_routes(kExplicit, true); }

}  // namespace
}  // namespace dnnsim
