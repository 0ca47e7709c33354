#include "sim/platform/platform.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <simgrid/kernel/ProfileBuilder.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <stdexcept>

#include "sim/platform/actors.hpp"
#include "sim/platform/cluster_routes.hpp"
#include "sim/platform/computed_route_zone.hpp"
#include "traces/network/preemption.hpp"

namespace sg4 = simgrid::s4u;
using simgrid::kernel::profile::DatedValue;
using simgrid::kernel::profile::ProfileBuilder;

namespace dnnsim {
namespace {

// SimGrid's max-min solver leaves out a constraint of capacity 0 ("constraints that actually need to
// be saturated, i.e. remaining and usage are strictly positive", lmm::System::solve), so a link that
// offers nothing would stop constraining its flows, as if it had no limit. A schedule's or trace's
// 0 and a preemption's busy_fraction 0 mean the opposite: the flows crossing the link wait. They get
// one byte per second instead, which moves at most one byte per second of outage and lets them go on
// at the restored bandwidth.
constexpr double kStalledBandwidth = 1.0;  // B/s

double offered_bandwidth(double bandwidth) { return bandwidth > 0 ? bandwidth : kStalledBandwidth; }

std::string profile_text(const std::vector<BandwidthPoint>& points) {
  std::string text;
  for (const BandwidthPoint& p : points)
    text += fmt::format("{:.17g} {:.17g}\n", p.at.value(), offered_bandwidth(p.bandwidth.value()));
  return text;
}

// Off during each window, on again after; overlapping windows are merged.
std::string state_profile_text(std::vector<std::pair<double, double>> windows) {
  std::sort(windows.begin(), windows.end());
  std::vector<std::pair<double, double>> merged;
  for (const auto& window : windows) {
    if (!merged.empty() && window.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, window.second);
    else
      merged.push_back(window);
  }
  std::string text;
  for (const auto& [from, to] : merged) text += fmt::format("{:.17g} 0\n{:.17g} 1\n", from, to);
  return text;
}

class PlatformBuilder {
 public:
  PlatformBuilder(const Scenario& scenario, const PlatformOptions& options) : scenario_(scenario), options_(options) {}

  Platform build() {
    Platform platform;
    platform.layout = make_layout(scenario_.cluster);
    links_.assign(platform.layout.links.size(), nullptr);
    layout_ = &platform.layout;

    // One zone holds every host and link; it computes each route from the layout when SimGrid asks
    // (computed_route_zone.hpp: a zone per node made SimGrid's host-name checks quadratic).
    auto routes = std::make_shared<ClusterRoutes>(platform.layout);
    auto* zone = create_computed_route_zone(
        "cluster",
        [routes, halves = halves_, hops = Route()](std::uint32_t from, std::uint32_t to, ComputedRoute& route) mutable {
          hops.clear();
          routes->route(from, to, hops, &route.middle_begin, &route.middle_end);
          // Each split-duplex link's half in the hop's direction, as SimGrid's get_link_list_impl
          // picked it from a LinkInRoute.
          for (const Hop& hop : hops)
            route.links.push_back(hop.up ? (*halves)[hop.link].first : (*halves)[hop.link].second);
        });
    for (std::uint32_t l = 0; l < platform.layout.links.size(); ++l) links_[l] = create_link(*zone, l);
    fill_halves();
    const auto check = [](sg4::Host* host, std::uint32_t index) {
      if (host->get_netpoint()->id() != index)
        throw std::logic_error("computed-route zone: a host's netpoint id is not its index in the cluster's routes");
    };
    for (std::uint32_t n = 0; n < platform.layout.nodes.size(); ++n) {
      const NodeLayout& node = platform.layout.nodes[n];
      const NodeType& type = scenario_.cluster.type_of(scenario_.cluster.nodes[n]);
      for (std::uint32_t g = 0; g < node.gpus.size(); ++g) {
        const std::string& gpu = node.gpus[g];
        // Host speed = the GPU's fp32 peak: compute tasks are executed as (duration × speed) flop, so
        // durations come from the cost model and speed profiles would act as ratios.
        sg4::Host* host = zone->create_host(gpu, type.gpu.peak_fp32.value_or(FlopsPerSecond(1e12)).value());
        check(host, routes->add_gpu(n, g));
        if (auto windows = host_failures(gpu); !windows.empty())
          host->set_state_profile(ProfileBuilder::from_string(gpu + "/state", state_profile_text(windows), -1));
        host->seal();
        platform.gpus.push_back(host);
        platform.gpu_specs.push_back(&type.gpu);
        platform.compute_efficiency.push_back(type.compute_efficiency);
        platform.calibration.push_back(type.calibration.get());
      }
      platform.cpus.emplace_back();
      if (n < options_.cpu_hosts.size())
        for (const CpuHostSpec& spec : options_.cpu_hosts[n]) {
          const std::string name = spec.name.empty() ? node.cpu : node.cpu + "/" + spec.name;
          sg4::Host* cpu = zone->create_host(name, spec.speed)->set_core_count(spec.cores);
          check(cpu, routes->add_cpu(n));
          cpu->seal();
          platform.cpus.back().push_back(cpu);
        }
    }
    zone->seal();
    return platform;
  }

 private:
  std::vector<std::pair<double, double>> host_failures(const std::string& gpu) const {
    std::vector<std::pair<double, double>> windows;
    for (const FailureWindow& w : scenario_.network.failures)
      if (w.is_host && w.target == gpu) windows.emplace_back(w.from.value(), w.to.value());
    return windows;
  }

  // The halves are filled in once the links exist; the zone, made before its links, holds them.
  void fill_halves() {
    for (sg4::Link* link : links_)
      if (auto* duplex = dynamic_cast<sg4::SplitDuplexLink*>(link))
        halves_->emplace_back(RouteLink{duplex->get_link_up(), duplex->get_link_up()->get_impl()},
                              RouteLink{duplex->get_link_down(), duplex->get_link_down()->get_impl()});
      else
        halves_->emplace_back(RouteLink{link, link->get_impl()}, RouteLink{link, link->get_impl()});
  }

  // Never sealed by hand (the zone seals it: sealing twice breaks tracing, simgrid-recipes.md §4).
  sg4::Link* create_link(sg4::NetZone& zone, std::uint32_t index) {
    const LinkDecl& decl = layout_->links[index];
    const std::size_t link_number = index;
    double bandwidth = decl.bandwidth.value();
    const LinkCondition* condition = nullptr;
    for (const LinkCondition& c : scenario_.network.conditions)
      if (glob_match(c.links, decl.name)) condition = &c;
    if (condition)
      if (const auto* constant = std::get_if<ConstantBandwidth>(&condition->model))
        bandwidth = constant->bandwidth.value();

    sg4::Link* link = nullptr;
    switch (decl.sharing) {
      case LinkDecl::Sharing::split_duplex:
        link = zone.create_split_duplex_link(decl.name, bandwidth);
        break;
      case LinkDecl::Sharing::shared:
        link = zone.create_link(decl.name, bandwidth);
        break;
      case LinkDecl::Sharing::fatpipe:
        link = zone.create_link(decl.name, bandwidth)->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
        break;
    }
    link->set_latency(decl.latency.value());
    if (condition) {
      if (const auto* schedule = std::get_if<BandwidthSchedule>(&condition->model)) {
        link->set_bandwidth_profile(ProfileBuilder::from_string(decl.name + "/bandwidth",
                                                                profile_text(schedule->points),
                                                                schedule->period ? schedule->period->value() : -1));
      } else if (const auto* preemption = std::get_if<PreemptionSpec>(&condition->model)) {
        auto process = std::make_shared<PreemptionProcess>(
            PreemptionParams{BytesPerSecond(bandwidth), preemption->mean_busy, preemption->mean_idle,
                             preemption->busy_fraction, derive_seed(scenario_.run.seed, link_number)});
        // Called again whenever the profile runs out of events: the process is generated lazily, as
        // far as the simulation goes. SimGrid 3.32 reads the dates a callback appends as delays since
        // the previous event (unlike from_string, which takes absolute dates).
        auto previous_date = std::make_shared<double>(0.0);
        link->set_bandwidth_profile(ProfileBuilder::from_callback(
            decl.name + "/preemption",
            [process, previous_date, stop = options_.stop](std::vector<DatedValue>& values) {
              if (stop != nullptr && stop->load()) return;  // no event appended: the profile ends
              std::vector<BandwidthPoint> next;
              process->append_next(next);
              for (const BandwidthPoint& p : next) {
                values.emplace_back(p.at.value() - *previous_date, offered_bandwidth(p.bandwidth.value()));
                *previous_date = p.at.value();
              }
            },
            -1));
      }
    }
    std::vector<std::pair<double, double>> windows;
    for (const FailureWindow& w : scenario_.network.failures)
      if (!w.is_host && glob_match(w.target, decl.name)) windows.emplace_back(w.from.value(), w.to.value());
    if (!windows.empty()) {
      // A state profile goes on each direction of a split-duplex link: SimGrid 3.32 accepts one on the
      // split-duplex wrapper but then aborts with "Unknown event!" when it fires.
      const std::string text = state_profile_text(windows);
      if (auto* duplex = dynamic_cast<sg4::SplitDuplexLink*>(link)) {
        duplex->get_link_up()->set_state_profile(ProfileBuilder::from_string(decl.name + "/up/state", text, -1));
        duplex->get_link_down()->set_state_profile(ProfileBuilder::from_string(decl.name + "/down/state", text, -1));
      } else {
        link->set_state_profile(ProfileBuilder::from_string(decl.name + "/state", text, -1));
      }
    }
    links_[index] = link;
    return link;
  }

  const Scenario& scenario_;
  const PlatformOptions& options_;
  const PlatformLayout* layout_ = nullptr;
  std::vector<sg4::Link*> links_;
  // By layout link: its {up, down} one-way halves (the link itself twice unless split-duplex).
  std::shared_ptr<std::vector<std::pair<RouteLink, RouteLink>>> halves_ =
      std::make_shared<std::vector<std::pair<RouteLink, RouteLink>>>();
};

}  // namespace

Platform build_platform(const Scenario& scenario, const PlatformOptions& options) {
  return PlatformBuilder(scenario, options).build();
}

void start_background_flows(const Scenario& scenario, const Platform& platform) {
  const std::vector<std::string> names = scenario.cluster.gpu_names();
  const auto host_of = [&](const std::string& name) {
    return platform.gpus[static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin())];
  };
  for (std::size_t i = 0; i < scenario.network.background_flows.size(); ++i) {
    const BackgroundFlow flow = scenario.network.background_flows[i];
    sg4::Host* src = host_of(flow.from);
    sg4::Host* dst = host_of(flow.to);
    start_actor(fmt::format("background-{}", i), src, ActorStack::loop, [flow, src, dst]() {
      // A repetition starts at its scheduled date or when the previous one ends, whichever is later.
      const long long count = flow.count ? *flow.count : (flow.interval ? -1 : 1);
      for (long long k = 0; count < 0 || k < count; ++k) {
        const double date =
            flow.start.value() + (flow.interval ? flow.interval->value() * static_cast<double>(k) : 0.0);
        if (date > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(date);
        // A failure window may cut this repetition (false); the tenant's next one goes on as scheduled.
        finish_transfer(start_transfer(src, dst, flow.size.value()));
      }
    })->daemonize();
  }
}

}  // namespace dnnsim
