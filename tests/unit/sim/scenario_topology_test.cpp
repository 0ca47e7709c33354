// Explicit inter-node topologies (links, routes and their checks) and the platform layout of each
// interconnect (link names, routes, and the planners' path costs agreeing with the routes).
//
// Line numbers: every YAML text below starts right after R"( so that its first line is line 1; kBase
// (tests/support/scenario_files.hpp, kTwoBoxBase) is 12 lines long.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/scenario/layout.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

using namespace testing;

// ---- explicit topologies -------------------------------------------------------------------------

// Three one-GPU nodes; text appended (from line 10 on) sets the interconnect.
const std::string kThreeNodes = R"(name: explicit
workload: {kind: data_parallel, model: {layers: [{forward_flops: "1GFlop"}]}, global_batch: 3}
)" + box_cluster(1, 3);

// GpuPathCosts is route_latency and route_bandwidth of gpu_route, summed in the same order: equal to
// the bit for every pair of GPUs (the planners' cluster view asks it); gpu_route_length is its length
// (the resource guard asks it).
void expect_route_costs_match_routes(const PlatformLayout& layout) {
  const auto gpus = static_cast<std::uint32_t>(layout.first_gpu.back() + layout.nodes.back().gpus.size());
  const GpuPathCosts costs(layout);
  for (std::uint32_t a = 0; a < gpus; ++a)
    for (std::uint32_t b = 0; b < gpus; ++b) {
      const Route route = layout.gpu_route(a, b);
      const PathCost cost = costs(a, b);
      EXPECT_EQ(cost.latency.value(), layout.route_latency(route).value()) << a << " → " << b;
      EXPECT_EQ(cost.bandwidth.value(), layout.route_bandwidth(route).value()) << a << " → " << b;
      EXPECT_EQ(layout.gpu_route_length(a, b), route.size()) << a << " → " << b;
    }
  EXPECT_THROW((void)costs(gpus, 0), std::out_of_range);
}

TEST(ScenarioExplicit, LinksRoutesAndLayout) {
  const Scenario s = load(kThreeNodes + R"(  interconnect:
    kind: explicit
    switches: [sw0, sw1]
    links:
      - {name: a, between: [node0, sw0], bandwidth: "10GB/s", latency: "1us"}
      - {name: b, between: [sw0, node1], link: IB-HDR}
      - {name: c, between: [sw0, sw1], link: IB-HDR, bandwidth: "1GB/s"}
      - {name: d, between: [sw1, node2], bandwidth: "10GB/s", latency: "1us"}
      - {name: e, between: [node1, node2], bandwidth: "10GB/s", latency: "1us"}
    routes:
      - {from: node2, to: node0, links: [d, c, a]}
)");
  const InterNodeNetwork& net = s.cluster.network;
  EXPECT_EQ(net.kind, InterNodeKind::explicit_links);
  ASSERT_EQ(net.links.size(), 5u);
  EXPECT_EQ(net.links[1].a, "sw0");
  EXPECT_EQ(net.links[1].b, "node1");
  EXPECT_DOUBLE_EQ(net.links[1].bandwidth.value(), 25e9);  // IB-HDR
  EXPECT_DOUBLE_EQ(net.links[2].bandwidth.value(), 1e9);   // catalog link, bandwidth overridden
  EXPECT_DOUBLE_EQ(net.links[2].latency.value(), 1e-6);    // … latency from the catalog
  ASSERT_EQ(net.routes.size(), 1u);
  EXPECT_EQ(net.routes[0].links, (std::vector<std::string>{"d", "c", "a"}));

  const PlatformLayout layout = make_layout(s.cluster);
  // node0 → node1: the fewest hops (a, b); plus PCIe and NIC at both ends.
  EXPECT_EQ(layout.gpu_route(0, 1).size(), 2u + 2u + 2u);
  // node0 → node2: the route given from node2 to node0, mirrored (a, c, d). Nodes do not forward
  // traffic, so a, b, e is no path at all.
  const Route route = layout.gpu_route(0, 2);
  ASSERT_EQ(route.size(), 3u + 4u);
  EXPECT_EQ(layout.links[route[2].link].name, "a");
  EXPECT_EQ(layout.links[route[3].link].name, "c");
  EXPECT_EQ(layout.links[route[4].link].name, "d");
  expect_route_costs_match_routes(layout);
}

TEST(ScenarioExplicit, UnconnectedNodesHaveNoRoute) {
  // Reported at the interconnect (line 11, the first key of its mapping).
  expect_errors(errors_of(kThreeNodes + R"(  interconnect:
    kind: explicit
    switches: [sw0]
    links:
      - {name: a, between: [node0, sw0], bandwidth: "10GB/s", latency: "1us"}
      - {name: b, between: [node1, sw0], bandwidth: "10GB/s", latency: "1us"}
)"),
                {{11, 5, "no route between node0 and node2: the explicit links do not connect them"},
                 {11, 5, "no route between node1 and node2"}});
}

TEST(ScenarioExplicit, NodesAreNotTransit) {
  // node1 sits between node0 and node2, but a node does not forward traffic.
  expect_errors(errors_of(kThreeNodes + R"(  interconnect:
    kind: explicit
    links:
      - {name: a, between: [node0, node1], bandwidth: "10GB/s", latency: "1us"}
      - {name: b, between: [node1, node2], bandwidth: "10GB/s", latency: "1us"}
)"),
                {{11, 5, "no route between node0 and node2"}});
}

TEST(ScenarioExplicit, LinkNamesAndEndpointsAreChecked) {
  expect_errors(errors_of(kThreeNodes + R"(  interconnect:
    kind: explicit
    switches: [sw0]
    links:
      - {name: a, between: [node0, sw1], bandwidth: "10GB/s", latency: "1us"}
      - {name: a, between: [node1, sw0], bandwidth: "10GB/s"}
      - {name: c, between: [node2], link: IB-HDR}
)"),
                {{14, 36, "unknown node or switch 'sw1'; did you mean 'sw0'?"},
                 {15, 9, "link 'a' is declared twice"},
                 {15, 9, "link 'a' needs 'link' (a catalog name) or both 'bandwidth' and 'latency'"},
                 {16, 28, "expected 'between: [A, B]', two node or switch names"}});
}

// After a node group's own error the cluster lacks the nodes the links name: "node2" is not also
// reported unknown (one mistake, one error), while a misspelt switch still is.
TEST(ScenarioExplicit, ANodeGroupsErrorIsNotAlsoEveryLinkToItsNodes) {
  std::string text = kThreeNodes + R"(  interconnect:
    kind: explicit
    switches: [sw0]
    links:
      - {name: a, between: [node0, sw0], bandwidth: "10GB/s", latency: "1us"}
      - {name: b, between: [node2, sw1], bandwidth: "10GB/s", latency: "1us"}
)";
  text.replace(text.find("count: 3"), 8, "count: 3x");  // line 9 "  nodes: [{type: box, count: 3x}]"
  expect_errors(errors_of(text),
                {{9, 30, "expected an integer"}, {15, 36, "unknown node or switch 'sw1'; did you mean 'sw0'?"}});
  // Likewise a switch list with an error of its own: the links to its switches are not also unknown.
  std::string switches = kThreeNodes + R"(  interconnect:
    kind: explicit
    switches: -[sw0]
    links:
      - {name: a, between: [node0, sw0], bandwidth: "10GB/s", latency: "1us"}
)";
  expect_errors(errors_of(switches), {{12, 15, "expected a list of switch names"}});
}

TEST(ScenarioExplicit, RoutesMustBeWalks) {
  // An unknown destination is reported once (the walk is not compared with it).
  expect_errors(errors_of(kThreeNodes + R"(  interconnect:
    kind: explicit
    switches: [sw0]
    links:
      - {name: a, between: [node0, sw0], link: IB-HDR}
      - {name: b, between: [node1, sw0], link: IB-HDR}
      - {name: c, between: [node2, sw0], link: IB-HDR}
    routes:
      - {from: node0, to: node1, links: [a, c]}
      - {from: node0, to: node1, links: [b]}
      - {from: node0, to: node3, links: [a, x]}
)"),
                {{18, 41, "the route ends at 'node2', not at 'node1'"},
                 {19, 42, "link 'b' does not touch 'node0', where the route has arrived"},
                 {20, 27, "unknown node 'node3'; did you mean 'node0'?"},
                 {20, 45, "unknown link 'x'"}});
}

// ---- layout --------------------------------------------------------------------------------------

TEST(ScenarioLayout, LeafSpineLinkNamesAndRoutes) {
  const Scenario s = load(R"(name: fabric
cluster:
  node_types:
    box:
      gpu: V100-16GB
      gpus_per_node: 2
      nic: {bandwidth: "100Gbps", latency: "1us"}
  nodes: [{type: box, count: 2}]
  interconnect:
    kind: leaf_spine
    nodes_per_leaf: 1
    spines: 2
    oversubscription: 2
    latency: "1us"
    uplink_latency: "2us"
workload: {kind: data_parallel, model: {layers: [{forward_flops: "1GFlop"}]}, global_batch: 4}
)");
  const PlatformLayout layout = make_layout(s.cluster);
  EXPECT_EQ(layout.link_names(),
            (std::vector<std::string>{"node0/gpu0/pcie", "node0/gpu1/pcie", "node0/gpu0/nvswitch",
                                      "node0/gpu1/nvswitch", "node0/nic", "node1/gpu0/pcie", "node1/gpu1/pcie",
                                      "node1/gpu0/nvswitch", "node1/gpu1/nvswitch", "node1/nic", "leaf0",
                                      "leaf0/spine0", "leaf0/spine1", "leaf1", "leaf1/spine0", "leaf1/spine1"}));
  // Within a node: two NVSwitch ports.
  const Route local = layout.gpu_route(0, 1);
  ASSERT_EQ(local.size(), 2u);
  EXPECT_EQ(layout.links[local[0].link].name, "node0/gpu0/nvswitch");
  EXPECT_TRUE(local[0].up);
  EXPECT_EQ(layout.links[local[1].link].name, "node0/gpu1/nvswitch");
  EXPECT_FALSE(local[1].up);
  // Across leaves: pcie, nic, leaf0, leaf0/spineS, leaf1/spineS, leaf1, nic, pcie with
  // S = (leaf 0 + leaf 1 + node 0 + node 1) mod 2 = 0.
  const Route across = layout.gpu_route(0, 2);
  ASSERT_EQ(across.size(), 8u);
  std::vector<std::string> names;
  for (const Hop& hop : across) names.push_back(layout.links[hop.link].name);
  EXPECT_EQ(names, (std::vector<std::string>{"node0/gpu0/pcie", "node0/nic", "leaf0", "leaf0/spine0", "leaf1/spine0",
                                             "leaf1", "node1/nic", "node1/gpu0/pcie"}));
  // Uplinks: the leaf's downlink capacity (one 12.5 GB/s NIC) / (oversubscription 2 × 2 spines).
  EXPECT_DOUBLE_EQ(layout.links[11].bandwidth.value(), 12.5e9 / 4);
  EXPECT_DOUBLE_EQ(layout.links[10].latency.value(), 1e-6);  // leaf: the interconnect latency
  // Latency: PCIe3 1 us ×2, NIC 1 us ×2, leaf 1 us ×2, uplink 2 us ×2.
  EXPECT_NEAR(layout.route_latency(across).value(), 10e-6, 1e-15);
  EXPECT_DOUBLE_EQ(layout.route_bandwidth(across).value(), 12.5e9 / 4);
  expect_route_costs_match_routes(layout);
}

TEST(ScenarioLayout, PerGpuNicsMeshAndHostBridgeNames) {
  const Scenario s = load(R"(name: names
cluster:
  node_types:
    mesh:
      gpu: V100-16GB
      gpus_per_node: 3
      fabric: nvlink_mesh
      nic: {link: IB-EDR, per_gpu: true}
    pc:
      gpu: T4
      gpus_per_node: 2
      host_bridge: "16GB/s"
      nic: {link: Ethernet-25G}
  nodes: [{type: mesh}, {type: pc}]
  interconnect: {bandwidth: "100GB/s"}
workload: {kind: data_parallel, model: {layers: [{forward_flops: "1GFlop"}]}, global_batch: 5}
)");
  // The mesh splits the V100's 150 GB/s of NVLink among its 2 peers.
  EXPECT_DOUBLE_EQ(s.cluster.node_types[0].gpu_link_bandwidth.value(), 75e9);
  const PlatformLayout layout = make_layout(s.cluster);
  const std::vector<std::string> names = layout.link_names();
  for (const char* expected :
       {"node0/gpu0-gpu1/nvlink", "node0/gpu0-gpu2/nvlink", "node0/gpu1-gpu2/nvlink", "node0/gpu0/nic",
        "node0/gpu2/nic", "node1/host_bridge", "node1/gpu1/pcie", "node1/nic", "switch"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  EXPECT_EQ(std::find(names.begin(), names.end(), "node0/nic"), names.end());
  // PCIe fabric: GPU → its PCIe link → host bridge → the other GPU's PCIe link.
  EXPECT_EQ(layout.gpu_route(3, 4).size(), 3u);
  // node0/gpu0 → node1/gpu0: pcie, own nic, switch, nic, host bridge, pcie.
  EXPECT_EQ(layout.gpu_route(0, 3).size(), 6u);
  expect_route_costs_match_routes(layout);
}

}  // namespace
}  // namespace dnnsim
