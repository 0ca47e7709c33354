// A SimGrid zone that holds every host of the cluster and computes the route between two of them
// when SimGrid asks, instead of one zone per node under a root zone of routes between them.
// SimGrid 3.32 checks each new host's name by searching every zone under the root
// (NetZoneImpl::get_host_by_name_or_null, recursive over the children), so 8 hosts in each of
// 16,384 node zones cost ~1.07 × 10⁹ zone visits before anything is simulated; its full zone also
// keeps an n × n matrix of route pointers over its n components. One zone has neither cost: a name
// check is one std::map lookup, sealing walks the hosts once, and no route is stored.
//
// The routes are the ones SimGrid's hierarchical routing (NetZoneImpl::get_global_route,
// "Routing in SimGrid", Bobelin et al., hal-00650233) assembled from the node zones and the root:
// the source's part to its gateway, the part between the gateways, the destination's part; its
// latencies were added in the order the zones were asked, the middle first (the root's
// get_local_route), then the source's part, then the destination's, link by link (add_link_latency
// in 3.32's NetZoneImpl.cpp). A ComputedRoute says which links were the middle, and this zone adds
// the latencies in that order, so every floating-point sum and so the simulation is the same to the bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

namespace dnnsim {

// A one-way link (a split-duplex link's UP or DOWN half) with its kernel object, which a zone's
// route lists: Link::get_impl() is a dynamic_cast, asked once per link when the platform is built
// rather than for every link of every flow's route.
struct RouteLink {
  simgrid::s4u::Link* link = nullptr;
  simgrid::kernel::resource::StandardLinkImpl* impl = nullptr;
};

struct ComputedRoute {
  std::vector<RouteLink> links;  // in route order
  // links[middle_begin, middle_end) had their latencies summed first; a route inside one node is all middle.
  std::size_t middle_begin = 0;
  std::size_t middle_end = 0;
};

// Fills the route from host `from` to host `to` (their indices in the order they were created, the
// zone's component ids; from ≠ to); `route` arrives empty.
using ComputedRouteFunction = std::function<void(std::uint32_t from, std::uint32_t to, ComputedRoute& route)>;

// Creates the zone; it must be the first zone of the engine, the platform's root. A host routed to
// itself crosses the network model's loopback link, as every host of a SimGrid full zone did.
[[nodiscard]] simgrid::s4u::NetZone* create_computed_route_zone(const std::string& name, ComputedRouteFunction route);

}  // namespace dnnsim
