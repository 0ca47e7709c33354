// Why a longest path: the executor (sim/exec) runs a step once its deps are done and its sender's
// stream is free, and with no link shared between overlapping steps each step then takes exactly
// α + size/β of its path (CM02 without cross-traffic). The finish time of step k is therefore
//   finish[k] = max(finish[deps of k], finish[previous step of src]) + cost(k),
// a longest-path recurrence over a DAG that the expansion already lists in topological order.
#include "models/cost/collective_cost.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace dnnsim {
namespace {

// Finish of round r at member i: max(finish(r−1, i−1), finish(r−1, i)) + t_i. Any path through the
// (rounds × p) grid picks one edge per round, so the longest is rounds · max_i t_i: the slowest edge
// bounds every round (the path that stays on it is always available). A channelled ring's hops carry
// their channels' parts of S/p and run at once, as its flow form does (docs/collectives.md, "Channels").
// With copies, the window's hops stand for all.
Seconds ring_rounds_time(const Collective& c, std::size_t rounds, const std::vector<RingHop>& hops,
                         const PathCostFn& path) {
  const Bytes chunk = c.size / static_cast<double>(logical_size(c));
  Seconds slowest{0};
  for (const RingHop& hop : hops)
    slowest = std::max(slowest, point_to_point_time(chunk * hop.share, path(hop.src, hop.dst)));
  return slowest * static_cast<double>(rounds);
}

// The path of every step, asking `path` once per distinct (src, dst).
std::vector<PathCost> step_paths(const CollectiveExpansion& expansion, const PathCostFn& path) {
  std::map<std::pair<DeviceId, DeviceId>, PathCost> known;
  std::vector<PathCost> costs;
  costs.reserve(expansion.steps.size());
  for (const CollectiveStep& step : expansion.steps) {
    auto [it, inserted] = known.try_emplace({step.src, step.dst});
    if (inserted) it->second = path(step.src, step.dst);
    assert(it->second.bandwidth.value() > 0 && "a path needs a positive bandwidth");
    costs.push_back(it->second);
  }
  return costs;
}

// Fluid model of receiver contention (CollectiveCostOptions::shared_ingress), event by event: between
// two events (a step leaving its latency phase, a step delivering its last byte) every transferring
// step moves at a constant rate, the max-min fair share of its receiver's ingress given each step's
// own cap β (progressive filling: the steps capped below the equal share keep their cap, the others
// split what remains). A step starts when its deps and its sender's previous step are done. Only the
// ingress is shared: a sender has one step in flight at a time, so nothing else can collide at it.
Seconds shared_ingress_time(const CollectiveExpansion& expansion, const std::vector<PathCost>& costs,
                            const IngressFn& ingress) {
  const std::size_t n = expansion.steps.size();
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  // Step k waits for its deps and for its sender's previous step; `waiting[k]` counts the unfinished.
  std::vector<std::vector<std::size_t>> release(n);
  std::vector<std::size_t> waiting(n, 0);
  std::map<DeviceId, std::size_t> last_of_sender;
  for (std::size_t k = 0; k < n; ++k) {
    const CollectiveStep& step = expansion.steps[k];
    for (std::uint32_t dep : step.deps) {
      release[dep].push_back(k);
      ++waiting[k];
    }
    auto [it, first] = last_of_sender.try_emplace(step.src, k);
    if (!first) {
      release[it->second].push_back(k);
      ++waiting[k];
      it->second = k;
    }
  }
  std::map<DeviceId, BytesPerSecond> ingress_of;
  for (const CollectiveStep& step : expansion.steps)
    if (!ingress_of.contains(step.dst)) ingress_of[step.dst] = ingress(step.dst);

  double now = 0;
  std::vector<double> active_at(n, 0);    // end of the latency phase, once started
  std::vector<double> remaining(n, 0);    // bytes still to move
  std::vector<std::size_t> in_latency;    // started, still in their latency phase
  std::vector<std::size_t> transferring;  // moving bytes
  std::size_t done = 0;
  const auto start = [&](std::size_t k) {
    active_at[k] = now + costs[k].latency.value();
    remaining[k] = std::max(expansion.steps[k].size.value(), 0.0);
    in_latency.push_back(k);
  };
  for (std::size_t k = 0; k < n; ++k)
    if (waiting[k] == 0) start(k);

  std::vector<double> rate(n, 0);
  while (done < n) {
    // Steps out of their latency phase join the transfers; empty ones finish at once.
    std::vector<std::size_t> finished;
    for (std::size_t i = 0; i < in_latency.size();) {
      const std::size_t k = in_latency[i];
      if (active_at[k] <= now) {
        (remaining[k] > 0 ? transferring : finished).push_back(k);
        in_latency[i] = in_latency.back();
        in_latency.pop_back();
      } else {
        ++i;
      }
    }
    if (finished.empty()) {
      // Max-min shares per receiver, then the time to the next event.
      std::map<DeviceId, std::vector<std::size_t>> into;
      for (std::size_t k : transferring) into[expansion.steps[k].dst].push_back(k);
      for (auto& [dst, flows] : into) {
        std::sort(flows.begin(), flows.end(), [&](std::size_t a, std::size_t b) {
          return costs[a].bandwidth < costs[b].bandwidth || (costs[a].bandwidth == costs[b].bandwidth && a < b);
        });
        double capacity = ingress_of[dst].value();
        for (std::size_t i = 0; i < flows.size(); ++i) {
          const double share = capacity / static_cast<double>(flows.size() - i);
          rate[flows[i]] = std::min(costs[flows[i]].bandwidth.value(), share);
          capacity -= rate[flows[i]];
        }
      }
      double step = std::numeric_limits<double>::infinity();
      double next_active = std::numeric_limits<double>::infinity();
      for (std::size_t k : in_latency) next_active = std::min(next_active, active_at[k]);
      if (!in_latency.empty()) step = next_active - now;
      std::size_t first_done = kNone;
      for (std::size_t k : transferring)
        if (remaining[k] / rate[k] < step) {
          step = remaining[k] / rate[k];
          first_done = k;
        }
      assert(std::isfinite(step) && "a started step always ends");
      if (!std::isfinite(step)) return Seconds(std::numeric_limits<double>::infinity());  // a zero ingress
      now = first_done == kNone ? next_active : now + step;  // land exactly on a latency end
      for (std::size_t i = 0; i < transferring.size();) {
        const std::size_t k = transferring[i];
        remaining[k] -= rate[k] * step;
        // The step that set the event ends exactly; others within a rounding error of it too.
        if (k == first_done || remaining[k] <= 1e-12 * expansion.steps[k].size.value()) {
          finished.push_back(k);
          transferring[i] = transferring.back();
          transferring.pop_back();
        } else {
          ++i;
        }
      }
    }
    std::sort(finished.begin(), finished.end());  // deterministic start order
    for (std::size_t k : finished) {
      ++done;
      for (std::size_t next : release[k])
        if (--waiting[next] == 0) start(next);
    }
  }
  return Seconds(now);
}

}  // namespace

Seconds overlapped_span(Seconds compute, Seconds communication, double share) {
  const Seconds under = std::min(communication, compute / (1 - share));
  return std::max(compute + under * share, communication);
}

Seconds point_to_point_time(Bytes size, const PathCost& path) {
  assert(path.bandwidth.value() > 0 && "a path needs a positive bandwidth");
  if (size.value() <= 0) return path.latency;
  return path.latency + size / path.bandwidth;
}

Seconds expansion_time(const CollectiveExpansion& expansion, const PathCostFn& path,
                       const CollectiveCostOptions& options) {
  const std::vector<PathCost> costs = step_paths(expansion, path);
  if (options.shared_ingress) return shared_ingress_time(expansion, costs, options.shared_ingress);
  std::map<DeviceId, Seconds> sender_free;
  std::vector<Seconds> finish(expansion.steps.size());
  Seconds end{0};
  for (std::size_t k = 0; k < expansion.steps.size(); ++k) {
    const CollectiveStep& step = expansion.steps[k];
    Seconds& free = sender_free[step.src];
    Seconds start = free;
    for (std::uint32_t dep : step.deps) {
      assert(dep < k && "the expansion lists a step after the steps it depends on");
      start = std::max(start, finish[dep]);
    }
    finish[k] = start + point_to_point_time(step.size, costs[k]);
    free = finish[k];
    end = std::max(end, finish[k]);
  }
  return end;
}

Seconds collective_time(const Collective& c, const DeviceTopology& topology, const PathCostFn& path,
                        const CollectiveCostOptions& options) {
  const std::string name = c.algorithm.empty() ? default_collective_algorithm(c, topology) : c.algorithm.str();
  // A ring's closed form is O(p) where its expansion has O(p²) steps; everything else (and every
  // error: unknown names, unsupported kinds) goes through the expansion itself.
  const auto* entry = builtin_collective_algorithms().find(name);
  if (entry != nullptr && c.group.size() >= 2 && entry->value->supports(c.kind))
    if (const auto rounds = entry->value->ring_rounds(c))
      return ring_rounds_time(c, *rounds, entry->value->ring_hops(c, topology), path);
  return expansion_time(expand_collective(c, topology), path, options);
}

Seconds ring_all_reduce_time(Bytes size, int p, const PathCost& slowest_edge) {
  if (p <= 1) return Seconds(0);
  return point_to_point_time(size / p, slowest_edge) * (2.0 * (p - 1));
}

Seconds ring_all_gather_time(Bytes size, int p, const PathCost& slowest_edge) {
  if (p <= 1) return Seconds(0);
  return point_to_point_time(size / p, slowest_edge) * static_cast<double>(p - 1);
}

Seconds hierarchical_all_reduce_time(Bytes size, int nodes, int per_node, const PathCost& intra,
                                     const PathCost& inter) {
  // Intra: reduce-scatter + all-gather of S over g, i.e. a ring all-reduce of S; inter: a ring
  // all-reduce of the S/g shard over n.
  return ring_all_reduce_time(size, per_node, intra) + ring_all_reduce_time(size / std::max(per_node, 1), nodes, inter);
}

}  // namespace dnnsim
