// The platform as plain data: every link with its name, bandwidth and latency, and every route as a
// list of link hops. sim/platform transcribes it into SimGrid zones one to one; keeping it pure lets
// the scenario validator check link names (`network.conditions[].links`) and the tests check routes
// without an engine.
//
// Shape (SimGrid's hierarchical routing, as in examples/platforms/supernode.cpp): one zone per node
// with its GPUs and a gateway router; a root zone routing between node gateways — a star zone when
// one switch joins every node (a route per node: building a full zone's n² routes took 3 s at 1,024
// nodes and cannot be held at 16k), a full zone with a route per pair of nodes otherwise.
// Link names: "node0/gpu3/nvswitch", "node0/gpu1-gpu2/nvlink", "node0/gpu3/pcie", "node0/host_bridge",
// "node0/nic" (or "node0/gpu3/nic" when NICs are per GPU), "switch", "leaf1/spine0", and the names
// of explicit links.
#pragma once

#include <cstdint>
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
  bool up = true;          // direction on a split-duplex link: `up` is the source-to-destination sense of the declaring route
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

struct PlatformLayout {
  std::vector<LinkDecl> links;
  std::vector<NodeLayout> nodes;
  // Gateway-to-gateway routes between nodes a < b (node indices); mirrored for b → a. Empty when
  // the nodes meet at a single switch (`switch_ports`).
  std::map<std::pair<std::uint32_t, std::uint32_t>, Route> node_routes;
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

  [[nodiscard]] std::vector<std::string> link_names() const;
  // The full route between two GPUs (global indices, in Cluster::gpu_names order), for reports and tests.
  [[nodiscard]] Route gpu_route(std::uint32_t src, std::uint32_t dst) const;
  // Sum of latencies and minimum bandwidth along the route (no contention).
  [[nodiscard]] Seconds route_latency(const Route& route) const;
  [[nodiscard]] BytesPerSecond route_bandwidth(const Route& route) const;
  // For every pair of GPUs (global indices, [src][dst]), route_latency and route_bandwidth of
  // gpu_route(src, dst), hop by hop in the route's order (the same sums to the bit), without building
  // the routes: a cluster view asks for every pair (268 million at 16,384 GPUs). A row sums the
  // source's hops once and continues the sums per destination node and GPU (the same additions in
  // the same order), the last hops read from a flat table made once. Entry [g][g] is {0, +inf}
  // (the empty route).
  [[nodiscard]] std::vector<std::vector<PathCost>> gpu_route_costs() const;

 private:
  // Global GPU index → (node, local index). @throw std::out_of_range
  [[nodiscard]] std::pair<std::uint32_t, std::uint32_t> locate_gpu(std::uint32_t gpu) const;
};

// @throw InputError when an explicit topology leaves two nodes without a path.
[[nodiscard]] PlatformLayout make_layout(const Cluster& cluster);

// Shell-style glob (`*`, `?`, `[abc]`) over a link or host name.
[[nodiscard]] bool glob_match(const std::string& pattern, const std::string& name);

}  // namespace dnnsim
