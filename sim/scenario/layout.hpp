// The platform as plain data: every link with its name, bandwidth and latency, and every route as a
// list of link hops. sim/platform transcribes it into SimGrid one to one; keeping it pure lets
// the scenario validator check link names (`network.conditions[].links`) and the tests check routes
// without an engine.
//
// Shape: each node's GPUs and a gateway, every route between two nodes' GPUs being the source's
// route to its gateway, a gateway-to-gateway route and the destination's route from its gateway
// (SimGrid's hierarchical routing, as in examples/platforms/supernode.cpp, which sim/platform
// reproduces route by route in one zone: sim/platform/cluster_routes.hpp). Between gateways: one
// switch joining every node (a route per node), a leaf-spine (routes computed from the two nodes'
// indices), or a route per pair of nodes otherwise.
// Link names: "node0/gpu3/nvswitch", "node0/gpu1-gpu2/nvlink", "node0/gpu3/pcie", "node0/host_bridge",
// "node0/nic" (or "node0/gpu3/nic" when NICs are per GPU), "switch", "leaf1/spine0", and the names
// of explicit links.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/common/units.hpp"
#include "models/cost/collective_cost.hpp"
#include "sim/scenario/scenario.hpp"

namespace dnnsim {

struct LinkDecl {
  std::string name;
  BytesPerSecond bandwidth;
  Seconds latency;
  // Split-duplex links have independent capacity per direction (NVLink, PCIe, NICs); a shared link
  // has one capacity for both directions (a host bridge); a fat pipe gives every flow the full
  // bandwidth (a non-blocking switch backplane).
  enum class Sharing { split_duplex, shared, fatpipe } sharing = Sharing::split_duplex;
};

struct Hop {
  std::uint32_t link = 0;  // index into PlatformLayout::links
  bool up = true;  // direction on a split-duplex link: `up` is the source-to-destination sense of the declaring route
};
using Route = std::vector<Hop>;

struct NodeLayout {
  std::string name;
  std::vector<std::string> gpus;  // host names
  // Route between GPUs a < b, keyed by (a, b) local indices; the reverse route is its mirror.
  std::map<std::pair<std::uint32_t, std::uint32_t>, Route> gpu_routes;
  std::vector<Route> gpu_to_gateway;  // by local GPU index
  // The host CPU ("node0/cpu"), a host only when a workload asks for it (the GNN kind): its memory
  // reaches GPU g down GPU g's PCIe link (through the host bridge on a pcie fabric), and the network
  // through the host bridge and the node's NIC (GPU 0's NIC when NICs are per GPU).
  std::string cpu;
  std::vector<Route> cpu_to_gpu;  // by local GPU index
  Route cpu_to_gateway;
};

// A leaf-spine's links, from which each route between two nodes is computed: a table of every node
// pair was 2.1 M routes at 2,048 nodes and 134 M at 16,384 (docs/performance.md, "Scale without
// shortcuts"). Nodes fill leaves in order; nodes a < b on different leaves meet at spine
// (leaf a + leaf b + a + b) mod spines, which spreads the pairs of two leaves over every spine.
struct LeafSpineLinks {
  std::uint32_t nodes_per_leaf = 1;
  std::uint32_t spines = 1;
  std::vector<std::uint32_t> leaf_switch;  // by leaf: the leaf's fat pipe
  std::vector<std::uint32_t> uplinks;      // by leaf × spines + spine

  // Gateway-to-gateway route from node a to node b (a ≠ b): for a < b, the leaf, then (across
  // leaves) a's uplink up, b's uplink down and b's leaf; for a > b the mirror of b's route to a.
  [[nodiscard]] Route route(std::uint32_t a, std::uint32_t b) const;
  // route(a, b).size(), without building it.
  [[nodiscard]] std::size_t route_length(std::uint32_t a, std::uint32_t b) const;
};

struct PlatformLayout {
  std::vector<LinkDecl> links;
  std::vector<NodeLayout> nodes;
  // Gateway-to-gateway routes between nodes a < b (node indices); mirrored for b → a. Empty when
  // the nodes meet at a single switch (`switch_ports`) or a leaf-spine (`leaf_spine`).
  std::map<std::pair<std::uint32_t, std::uint32_t>, Route> node_routes;
  std::optional<LeafSpineLinks> leaf_spine;
  // A single switch, by node: the link from the node's gateway into the switch. The route from a to
  // b is a's port then b's port, a link shared by both counted once (SimGrid's star zone does the
  // same): a switch with a backplane bandwidth is one shared link "switch" that every node's port
  // is; a non-blocking switch is one split-duplex port per node, "switch/<node>", each with half the
  // switch latency — one fat pipe shared by all flows would put every flow of the cluster into one
  // max-min component, which made a 4,096-node collective cost O(n²) solver work.
  std::vector<std::uint32_t> switch_ports;
  // First global GPU index of each node (Cluster::gpu_names order).
  std::vector<std::uint32_t> first_gpu;

  // Gateway-to-gateway route from node a to node b (a ≠ b).
  [[nodiscard]] Route node_route(std::uint32_t a, std::uint32_t b) const;
  [[nodiscard]] std::size_t node_route_length(std::uint32_t a, std::uint32_t b) const;

  [[nodiscard]] std::vector<std::string> link_names() const;
  // The full route between two GPUs (global indices, in Cluster::gpu_names order), for reports and tests.
  [[nodiscard]] Route gpu_route(std::uint32_t src, std::uint32_t dst) const;
  // gpu_route(src, dst).size(), without building it: the resource guard counts the links of every
  // flow's route (the trace's link counters hold two rate changes per link and flow).
  [[nodiscard]] std::size_t gpu_route_length(std::uint32_t src, std::uint32_t dst) const;
  // Sum of latencies and minimum bandwidth along the route (no contention).
  [[nodiscard]] Seconds route_latency(const Route& route) const;
  [[nodiscard]] BytesPerSecond route_bandwidth(const Route& route) const;

 private:
  // Global GPU index → (node, local index). @throw std::out_of_range
  [[nodiscard]] std::pair<std::uint32_t, std::uint32_t> locate_gpu(std::uint32_t gpu) const;
};

// route_latency and route_bandwidth of gpu_route(src, dst), hop by hop in the route's order (the same
// sums to the bit), for any pair of GPUs without building the route. The planners' cluster view asks
// for pairs among every GPU of the cluster: a table of all of them was 268 million entries, 4.3 GB
// and ~20 s at 16,384 GPUs, while a planner reads a few. So each GPU's hops to its node's gateway
// (and, on a single switch, its port) are summed once here, and a pair continues those sums through
// the middle of the route and the destination's last hops. Immutable: safe to share between threads.
class GpuPathCosts {
 public:
  explicit GpuPathCosts(PlatformLayout layout);
  // {0, +inf} (the empty route) when src == dst. @throw std::out_of_range for an unknown GPU.
  [[nodiscard]] PathCost operator()(std::uint32_t src, std::uint32_t dst) const;

 private:
  // A prefix of a route: its latency summed and its narrowest bandwidth so far.
  struct Sum {
    Seconds latency{0};
    BytesPerSecond narrowest{std::numeric_limits<double>::infinity()};
    void hop(const LinkDecl& link);
  };
  struct Gpu {
    std::uint32_t node = 0;
    std::uint32_t local = 0;
    Sum leaving;                                     // its hops to the node's gateway
    Sum at_switch;                                   // and, on a single switch, its node's port
    std::size_t arrival_begin = 0, arrival_end = 0;  // the gateway-to-GPU hops, in arrival_
  };
  [[nodiscard]] Sum along(Sum sum, const Route& route, bool reversed) const;

  PlatformLayout layout_;
  std::vector<Gpu> gpus_;
  std::vector<std::uint32_t> arrival_;  // link indices
};

// @throw InputError when an explicit topology leaves two nodes without a path.
[[nodiscard]] PlatformLayout make_layout(const Cluster& cluster);

// Shell-style glob (`*`, `?`, `[abc]`) over a link or host name.
[[nodiscard]] bool glob_match(const std::string& pattern, const std::string& name);

}  // namespace dnnsim
