#include "sim/platform/computed_route_zone.hpp"

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <stdexcept>

namespace dnnsim {
namespace {

using simgrid::kernel::routing::NetPoint;

class ComputedRouteZone final : public simgrid::kernel::routing::NetZoneImpl {
 public:
  ComputedRouteZone(const std::string& name, ChildRouteFunction route) : NetZoneImpl(name), route_(std::move(route)) {}

  void add_child_gateway(simgrid::s4u::NetZone* child, NetPoint* gateway) {
    // A child's netpoint id is its rank among this zone's components (NetZoneImpl::add_component);
    // the children are this zone's only components, so ids count 0, 1, 2, … in the order added.
    if (child->get_netpoint()->id() != gateways_.size())
      throw std::logic_error("computed-route zone: children given their gateways out of order");
    gateways_.push_back(gateway);
  }

  void get_local_route(const NetPoint* src, const NetPoint* dst, simgrid::kernel::routing::Route* into,
                       double* latency) override {
    const auto from = static_cast<std::uint32_t>(src->id());
    const auto to = static_cast<std::uint32_t>(dst->id());
    into->gw_src_ = gateways_.at(from);
    into->gw_dst_ = gateways_.at(to);
    links_.clear();
    route_(from, to, links_);
    for (simgrid::s4u::Link* link : links_) {
      into->link_list_.push_back(link->get_impl());
      if (latency) *latency += link->get_latency();
    }
  }

 private:
  ChildRouteFunction route_;
  std::vector<NetPoint*> gateways_;
  std::vector<simgrid::s4u::Link*> links_;  // reused: SimGrid asks once per flow started
};

}  // namespace

simgrid::s4u::NetZone* create_computed_route_zone(const std::string& name, ChildRouteFunction route) {
  return (new ComputedRouteZone(name, std::move(route)))->get_iface();
}

void set_computed_route_gateway(simgrid::s4u::NetZone* zone, simgrid::s4u::NetZone* child, NetPoint* gateway) {
  static_cast<ComputedRouteZone*>(zone->get_impl())->add_child_gateway(child, gateway);
}

}  // namespace dnnsim
