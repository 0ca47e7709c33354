#include "sim/platform/computed_route_zone.hpp"

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>

namespace dnnsim {
namespace {

using simgrid::kernel::routing::NetPoint;

class ComputedRouteZone final : public simgrid::kernel::routing::NetZoneImpl {
 public:
  ComputedRouteZone(const std::string& name, ComputedRouteFunction route)
      : NetZoneImpl(name), route_(std::move(route)) {}

  // A component's id is its rank among this zone's components (NetZoneImpl::add_component): the
  // hosts, in the order they were created.
  void get_local_route(const NetPoint* src, const NetPoint* dst, simgrid::kernel::routing::Route* into,
                       double* latency) override {
    if (src == dst) {
      // FullZone::do_seal gave each component without a route to itself the model's loopback link;
      // the engine hands it out by this name (Engine::link_by_name_or_null).
      if (simgrid::s4u::Link* loopback = simgrid::s4u::Engine::get_instance()->link_by_name_or_null("__loopback__")) {
        into->link_list_.push_back(loopback->get_impl());
        if (latency) *latency += loopback->get_latency();
      }
      return;
    }
    path_.links.clear();
    path_.middle_begin = path_.middle_end = 0;
    route_(static_cast<std::uint32_t>(src->id()), static_cast<std::uint32_t>(dst->id()), path_);
    into->link_list_.reserve(into->link_list_.size() + path_.links.size());
    for (const RouteLink& link : path_.links) into->link_list_.push_back(link.impl);
    if (!latency) return;
    for (std::size_t l = path_.middle_begin; l < path_.middle_end; ++l) *latency += path_.links[l].link->get_latency();
    for (std::size_t l = 0; l < path_.middle_begin; ++l) *latency += path_.links[l].link->get_latency();
    for (std::size_t l = path_.middle_end; l < path_.links.size(); ++l) *latency += path_.links[l].link->get_latency();
  }

 private:
  ComputedRouteFunction route_;
  ComputedRoute path_;  // reused: SimGrid asks once per flow started
};

}  // namespace

simgrid::s4u::NetZone* create_computed_route_zone(const std::string& name, ComputedRouteFunction route) {
  return (new ComputedRouteZone(name, std::move(route)))->get_iface();
}

}  // namespace dnnsim
