// The route between any two hosts of the cluster, as hops of the PlatformLayout, for the one zone
// that holds every host (computed_route_zone.hpp). It is the route SimGrid assembled when each node
// was a full zone under a root zone of gateway-to-gateway routes: inside a node the node's route
// (a pair's GPU route, its mirror the other way, a CPU's route to a GPU), between nodes the
// source's route to its gateway, the layout's node-to-node route, and the destination's route to
// its gateway mirrored (SimGrid's symmetrical add_route stored the reverse of a route as its links
// reversed, each split-duplex link in the other direction: the layout's `mirrored`).
//
// Built from the layout and then owning what it needs (the layout itself moves into the
// simulation's result): each node's routes as spans of one flat hop array, ~1.4 kB per 8-GPU node
// instead of the layout's maps, and the node-to-node part.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/scenario/layout.hpp"

namespace dnnsim {

class ClusterRoutes {
 public:
  explicit ClusterRoutes(const PlatformLayout& layout);

  // The next host (the zone's next component) is GPU `local` of `node`, or one of its CPU hosts;
  // returns the host's index, which must be its netpoint id.
  std::uint32_t add_gpu(std::uint32_t node, std::uint32_t local);
  std::uint32_t add_cpu(std::uint32_t node);

  // The route from host `from` to host `to` (from ≠ to) appended to `hops`; [*middle_begin,
  // *middle_end) is the part whose latencies SimGrid summed first (the whole route inside a node,
  // the node-to-node part between nodes). Empty where a node zone had no route (two CPU hosts of
  // one node, as a full zone without that route).
  void route(std::uint32_t from, std::uint32_t to, Route& hops, std::size_t* middle_begin,
             std::size_t* middle_end) const;

 private:
  static constexpr std::uint32_t kCpu = 0xffffffff;
  struct Host {
    std::uint32_t node = 0;
    std::uint32_t local = kCpu;  // the GPU's index in its node, kCpu for a CPU host
  };
  struct Node {
    std::uint32_t gpus = 0;
    std::uint32_t first_span = 0;  // then gpus to-gateway spans, the CPU's, gpus CPU-to-GPU spans, gpus² pair spans
  };
  using Span = std::pair<std::uint32_t, std::uint32_t>;  // [begin, end) in hops_

  void add_span(const Route& route);
  [[nodiscard]] const Span& to_gateway(const Host& host) const;
  void append(const Span& span, bool mirrored, Route& hops) const;

  std::vector<Node> nodes_;
  std::vector<Span> spans_;
  std::vector<Hop> hops_;
  std::vector<Host> hosts_;
  // Only the node-to-node part of the layout (switch ports, leaf-spine links or explicit routes),
  // asked through PlatformLayout::node_route.
  PlatformLayout between_nodes_;
};

}  // namespace dnnsim
