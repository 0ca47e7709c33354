// The platform as plain data: every link with its name, bandwidth and latency, and every route as a
// list of link hops. sim/platform transcribes it into SimGrid zones one to one; keeping it pure lets
// the scenario validator check link names (`network.conditions[].links`) and the tests check routes
// without an engine.
//
// Shape (SimGrid's hierarchical routing, as in examples/platforms/supernode.cpp): one zone per node
// with its GPUs and a gateway router; a root zone with a route between every pair of node gateways.
// Link names: "node0/gpu3/nvswitch", "node0/gpu1-gpu2/nvlink", "node0/gpu3/pcie", "node0/host_bridge",
// "node0/nic" (or "node0/gpu3/nic" when NICs are per GPU), "switch", "leaf1/spine0", and the names
// of explicit links.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "models/common/units.hpp"
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
};

struct PlatformLayout {
  std::vector<LinkDecl> links;
  std::vector<NodeLayout> nodes;
  // Gateway-to-gateway routes between nodes a < b (node indices); mirrored for b → a.
  std::map<std::pair<std::uint32_t, std::uint32_t>, Route> node_routes;

  [[nodiscard]] std::vector<std::string> link_names() const;
  // The full route between two GPUs (global indices, in Cluster::gpu_names order), for reports and tests.
  [[nodiscard]] Route gpu_route(std::uint32_t src, std::uint32_t dst) const;
  // Sum of latencies and minimum bandwidth along the route (no contention).
  [[nodiscard]] Seconds route_latency(const Route& route) const;
  [[nodiscard]] BytesPerSecond route_bandwidth(const Route& route) const;
};

// @throw InputError when an explicit topology leaves two nodes without a path.
[[nodiscard]] PlatformLayout make_layout(const Cluster& cluster);

// Shell-style glob (`*`, `?`, `[abc]`) over a link or host name.
[[nodiscard]] bool glob_match(const std::string& pattern, const std::string& name);

}  // namespace dnnsim
