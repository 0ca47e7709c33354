// Reads the `network:` section (see network_reader.hpp).
#include "sim/scenario/network_reader.hpp"

#include <fmt/format.h>

#include <limits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "models/common/diagnostics.hpp"
#include "sim/scenario/workload_reading.hpp"
#include "traces/network/bandwidth_schedule.hpp"

namespace dnnsim {
namespace {

class NetworkReader {
 public:
  NetworkReader(YamlReader& reader, const PlatformLayout* layout) : reader_(reader), layout_(layout) {}

  NetworkConditions read_network(const YAML::Node& node, const Cluster& cluster) {
    NetworkConditions result;
    MapReader map(reader_, node, "network");
    if (!map.valid()) return result;
    const std::vector<std::string> link_names = layout_ != nullptr ? layout_->link_names() : std::vector<std::string>{};
    const std::vector<std::string> gpus = cluster.gpu_names();
    const auto check_links = [&](const YAML::Node& where, const std::string& pattern) {
      if (layout_ == nullptr) return;  // the cluster has errors of its own; they are reported already
      for (const std::string& name : link_names)
        if (glob_match(pattern, name)) return;
      reader_.error(where, fmt::format("links pattern '{}' matches no link of the cluster{}", pattern,
                                       suggestion_suffix(pattern, link_names)));
    };
    // A GPU's name, checked against the cluster's unless the cluster has errors of its own.
    const auto gpu_name = [&](MapReader& owner, std::string_view key, bool required) {
      return layout_ != nullptr ? owner.choice(key, "GPU", gpus, required) : owner.string(key, required);
    };
    if (YAML::Node conditions = map.get("conditions"); conditions.IsDefined()) {
      for (const YAML::Node& c : reader_.list(conditions, "link conditions")) {
        MapReader cond(reader_, c, "a link condition");
        LinkCondition condition;
        condition.where = reader_.where(c);
        YAML::Node links = cond.require("links");
        if (links.IsDefined())
          if (auto pattern = reader_.string(links)) {
            condition.links = *pattern;
            check_links(links, *pattern);
          }
        const bool has_bandwidth = cond.has("bandwidth");
        const bool has_schedule = cond.has("schedule");
        const bool has_trace = cond.has("trace");
        const bool has_preemption = cond.has("preemption");
        const int models = has_bandwidth + has_schedule + has_trace + has_preemption;
        if (models != 1)
          cond.exactly_one_of({"bandwidth", "schedule", "trace", "preemption"}, c,
                              "a link condition needs exactly one of 'bandwidth', 'schedule', 'trace' or 'preemption'");
        const auto period = cond.quantity<Seconds>("period");
        if (has_bandwidth) {
          if (auto bw = cond.positive_quantity<BytesPerSecond>(
                  "bandwidth", false,
                  "a link that carries nothing for the whole run is down: give it a window in "
                  "network.failures"))
            condition.model = ConstantBandwidth{*bw};
        } else if (has_schedule) {
          condition.model = read_schedule(cond.get("schedule"), period);
        } else if (has_trace) {
          if (auto path = cond.string("trace")) {
            try {
              condition.model =
                  read_bandwidth_trace(resolve_scenario_path(reader_.file(), *path), std::nullopt, period);
            } catch (const InputError& e) {
              reader_.sink().append(e.diagnostics());
            }
          }
        } else if (has_preemption) {
          MapReader p(reader_, cond.get("preemption"), "a preemption process");
          PreemptionSpec spec;
          spec.mean_busy = p.positive_quantity<Seconds>("mean_busy", true).value_or(Seconds(1));
          spec.mean_idle = p.positive_quantity<Seconds>("mean_idle", true).value_or(Seconds(1));
          spec.busy_fraction = p.number("busy_fraction", 0.0, 1.0, true).value_or(0.0);
          p.finish();
          condition.model = spec;
        }
        if (period && !has_schedule && !has_trace) reader_.error(c, "'period' applies to 'schedule' and 'trace' only");
        if (const auto* schedule = std::get_if<BandwidthSchedule>(&condition.model);
            schedule && !schedule->period && !schedule->points.empty() &&
            schedule->points.back().bandwidth.value() == 0)
          reader_.error(cond.get(has_schedule ? "schedule" : "trace"),
                        fmt::format("the bandwidth is 0 from {:g} s on and nothing restores it (no later point, no "
                                    "'period'): the flows crossing the link would never finish; end on a bandwidth, "
                                    "or take the link down with network.failures",
                                    schedule->points.back().at.value()));
        cond.finish();
        result.conditions.push_back(std::move(condition));
      }
    }
    if (YAML::Node flows = map.get("background_flows"); flows.IsDefined()) {
      for (const YAML::Node& f : reader_.list(flows, "background flows")) {
        MapReader flow_map(reader_, f, "a background flow");
        BackgroundFlow flow;
        flow.from = gpu_name(flow_map, "from", true).value_or("");
        flow.to = gpu_name(flow_map, "to", true).value_or("");
        if (!flow.from.empty() && flow.from == flow.to) reader_.error(f, "a background flow needs two different GPUs");
        flow.size = flow_map.quantity<Bytes>("size", true).value_or(Bytes(0));
        flow.start = flow_map.quantity<Seconds>("start").value_or(Seconds(0));
        flow.interval = flow_map.positive_quantity<Seconds>("interval");
        if (auto count = flow_map.integer("count", 1, std::numeric_limits<int>::max()))
          flow.count = static_cast<int>(*count);
        if (flow.count && !flow.interval && *flow.count > 1) reader_.error(f, "'count' > 1 needs an 'interval'");
        flow_map.finish();
        result.background_flows.push_back(std::move(flow));
      }
    }
    if (YAML::Node failures = map.get("failures"); failures.IsDefined()) {
      for (const YAML::Node& f : reader_.list(failures, "failure windows")) {
        MapReader failure_map(reader_, f, "a failure window");
        FailureWindow window;
        window.where = reader_.where(f);
        const bool link = failure_map.has("link");
        const bool host = failure_map.has("host");
        if (link == host)
          failure_map.exactly_one_of({"link", "host"}, f, "a failure window names exactly one of 'link' or 'host'");
        if (link) {
          window.target = failure_map.string("link").value_or("");
          check_links(failure_map.get("link"), window.target);
        } else if (host) {
          window.is_host = true;
          window.target = gpu_name(failure_map, "host", false).value_or("");
        }
        const auto from = failure_map.quantity<Seconds>("from", true);
        const auto to = failure_map.quantity<Seconds>("to", true);
        if (from && to && *to <= *from) reader_.error(f, "'to' must be later than 'from'");
        window.from = from.value_or(Seconds(0));
        window.to = to.value_or(Seconds(0));
        failure_map.finish();
        result.failures.push_back(std::move(window));
      }
    }
    map.finish();
    return result;
  }

  BandwidthSchedule read_schedule(const YAML::Node& node, std::optional<Seconds> period) {
    BandwidthSchedule schedule;
    schedule.period = period;
    const auto points = reader_.list(node, "{at, bandwidth} points");
    if (node.IsSequence() && points.empty()) reader_.error(node, "expected at least one {at, bandwidth} point");
    for (const YAML::Node& point : points) {
      MapReader p(reader_, point, "a schedule point");
      auto at = p.quantity<Seconds>("at", true);
      auto bw = p.quantity<BytesPerSecond>("bandwidth", true);
      p.finish();
      if (!at || !bw) continue;
      if (!schedule.points.empty() && *at <= schedule.points.back().at)
        reader_.error(point, "schedule times must be strictly increasing");
      schedule.points.push_back(BandwidthPoint{*at, *bw});
    }
    if (period && !schedule.points.empty() && *period <= schedule.points.back().at)
      reader_.error(node, "'period' must be longer than the last schedule time");
    return schedule;
  }

 private:
  YamlReader& reader_;
  const PlatformLayout* layout_;
};

}  // namespace

NetworkConditions read_network(YamlReader& reader, const YAML::Node& node, const Cluster& cluster,
                               const PlatformLayout* layout) {
  return NetworkReader(reader, layout).read_network(node, cluster);
}

}  // namespace dnnsim
