// A SimGrid zone whose routes between its sub-zones are computed when SimGrid asks for them, instead
// of being held in a table: SimGrid 3.32's full zone keeps an n × n matrix of route pointers over
// its n components, 2 GB of pointers alone at 16,384 nodes, before any route. A leaf-spine's route
// between two nodes follows from their indices (LeafSpineLinks::route), so nothing needs storing.
//
// SimGrid's hierarchical routing (NetZoneImpl::get_global_route, "Routing in SimGrid", Bobelin et
// al., hal-00650233) asks the common ancestor of two hosts for the route between its two children
// holding them (get_local_route), then each child for the part to or from its gateway. This zone
// answers that question as a full zone holding the same routes would: the same links in the same
// order, the same gateways, latencies added link by link in that order (add_link_latency in 3.32's
// src/kernel/resource/NetworkModel.cpp), so the simulation is the same to the bit.
#pragma once

#include <cstdint>
#include <functional>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

namespace dnnsim {

// Links of the route from child `from` to child `to` (their indices in the order they were added),
// each a one-way link: a split-duplex link's UP or DOWN half.
using ChildRouteFunction =
    std::function<void(std::uint32_t from, std::uint32_t to, std::vector<simgrid::s4u::Link*>& links)>;

// Creates the zone; it must be the first zone of the engine, the platform's root, as
// sg4::create_full_zone's would be. Its children are set_parent to it in order, each then given
// its gateway by set_computed_route_gateway.
[[nodiscard]] simgrid::s4u::NetZone* create_computed_route_zone(const std::string& name, ChildRouteFunction route);

// Routes to and from `child`, the last child set_parent to `zone` (a zone from
// create_computed_route_zone), leave and enter it through its router `gateway`.
void set_computed_route_gateway(simgrid::s4u::NetZone* zone, simgrid::s4u::NetZone* child,
                                simgrid::kernel::routing::NetPoint* gateway);

}  // namespace dnnsim
