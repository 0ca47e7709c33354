// Step builders shared by the built-in collective algorithms (see steps.hpp).
#include "models/program/collectives/steps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>
#include <utility>

namespace dnnsim::collectives {

std::uint32_t pipeline_chunks(Bytes part, std::uint32_t cap) {
  const double wanted = std::ceil(part.value() / kMinPipelineChunkBytes);
  return static_cast<std::uint32_t>(std::clamp(wanted, 1.0, static_cast<double>(std::max(cap, 1U))));
}

std::uint32_t ceil_log2(std::size_t n) {
  std::uint32_t bits = 0;
  while ((std::size_t{1} << bits) < n) ++bits;
  return bits;
}

std::size_t root_position(const Collective& c) {
  const auto it = std::find(c.group.begin(), c.group.end(), c.root);
  if (it == c.group.end())
    throw InputError(SourceLocation{}, fmt::format("the broadcast root {} is not in the group", c.root));
  return static_cast<std::size_t>(it - c.group.begin());
}

void append_rings(std::vector<CollectiveStep>& steps, const std::vector<std::vector<DeviceId>>& rings, Bytes chunk,
                  std::size_t rounds, LastInto& last) {
  for (std::size_t round = 0; round < rounds; ++round) {
    LastInto next = last;
    for (const std::vector<DeviceId>& ring : rings) {
      assert(ring.size() >= 2 && "a ring needs two members");
      for (std::size_t i = 0; i < ring.size(); ++i) {
        const DeviceId to = ring[(i + 1) % ring.size()];
        CollectiveStep step{ring[i], to, chunk, {}};
        if (const auto it = last.find(ring[i]); it != last.end()) step.deps.push_back(it->second);
        next[to] = next_index(steps);
        steps.push_back(std::move(step));
      }
    }
    last = std::move(next);
  }
}

std::vector<CollectiveFlow> ring_phase_flows(const std::vector<std::vector<DeviceId>>& rings, Bytes chunk,
                                             std::size_t rounds, const RouteCostFn& cost) {
  std::vector<RingHop> hops;
  for (const std::vector<DeviceId>& ring : rings)
    for (std::size_t i = 0; i < ring.size(); ++i) hops.push_back(RingHop{ring[i], ring[(i + 1) % ring.size()]});
  return hop_phase_flows(hops, chunk, rounds, cost);
}

std::vector<CollectiveFlow> hop_phase_flows(const std::vector<RingHop>& hops, Bytes chunk, std::size_t rounds,
                                            const RouteCostFn& cost) {
  std::vector<RouteCost> route;
  double slowest = 0;
  for (const RingHop& hop : hops) {
    route.push_back(cost(hop.src, hop.dst));
    slowest = std::max(slowest, (route.back().latency + chunk * hop.share / route.back().bandwidth).value());
  }
  const Seconds phase(static_cast<double>(rounds) * slowest);
  std::vector<CollectiveFlow> flows;
  for (std::size_t k = 0; k < hops.size(); ++k) {
    const Bytes size = chunk * hops[k].share * static_cast<double>(rounds);
    const Seconds delay = phase - route[k].latency - size / route[k].bandwidth;
    flows.push_back(CollectiveFlow{hops[k].src, hops[k].dst, size, std::max(delay, Seconds(0))});
  }
  return flows;
}

namespace {

// Which local ranks a channel starts at (s_k = ⌊k·g/c⌋; every rank when c = g).
std::vector<bool> channel_starts(std::size_t members, std::size_t channels) {
  std::vector<bool> starts(members, false);
  for (std::size_t k = 0; k < channels; ++k) starts[k * members / channels] = true;
  return starts;
}

}  // namespace

std::size_t ring_channel_count(const Collective& c, const DeviceTopology& topology) {
  const auto own = [&](DeviceId device) { return device < topology.own_nic.size() && topology.own_nic[device]; };
  if (!std::all_of(c.group.begin(), c.group.end(), own)) return 1;
  const std::vector<std::vector<DeviceId>> nodes = group_by_node(c, topology);
  const std::size_t g = nodes.front().size();
  const bool equal = std::all_of(nodes.begin(), nodes.end(), [&](const auto& members) { return members.size() == g; });
  // A window of one node (copies of it across nodes) has no hop between the nodes it runs.
  return nodes.size() > 1 && g > 1 && equal ? std::min(g, kMaxRingChannels) : 1;
}

std::vector<RingHop> ring_round_hops(const Collective& c, const DeviceTopology& topology, std::size_t channels) {
  std::vector<RingHop> hops;
  if (channels == 1) {
    for (std::size_t i = 0; i < c.group.size(); ++i) hops.push_back(RingHop{c.group[i], member_after(c, i, 1)});
    return hops;
  }
  const std::vector<std::vector<DeviceId>> nodes = group_by_node(c, topology);
  const std::size_t g = nodes.front().size();
  const std::vector<bool> starts = channel_starts(g, channels);
  const double inter = 1.0 / static_cast<double>(channels);
  for (std::size_t k = 0; k < nodes.size(); ++k)
    for (std::size_t j = 0; j < g; ++j) {
      const std::size_t to = (j + 1) % g;
      if (starts[to]) hops.push_back(RingHop{nodes[k][j], nodes[(k + 1) % nodes.size()][to], inter});
      hops.push_back(RingHop{nodes[k][j], nodes[k][to], starts[to] ? 1.0 - inter : 1.0});
    }
  return hops;
}

void append_channel_rounds(std::vector<CollectiveStep>& steps, const std::vector<std::vector<DeviceId>>& nodes,
                           std::size_t channels, Bytes chunk, std::size_t rounds) {
  const std::size_t n = nodes.size();
  const std::size_t g = nodes.front().size();
  const std::vector<bool> starts = channel_starts(g, channels);
  const Bytes across = chunk / static_cast<double>(channels);
  // The previous round's sends into member (k, j): from (k, j−1) within the node, carrying every
  // channel but the one starting at j; from (k−1, j−1) across, carrying that one.
  std::vector<std::vector<StepIndex>> within_into(n, std::vector<StepIndex>(g));
  std::vector<std::vector<StepIndex>> across_into(n, std::vector<StepIndex>(g));
  for (std::size_t round = 0; round < rounds; ++round) {
    auto next_within = within_into;
    auto next_across = across_into;
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t j = 0; j < g; ++j) {
        const std::size_t to = (j + 1) % g;
        if (starts[to]) {
          // Across: the channel starting at j+1, which reached (k, j) from within its node.
          CollectiveStep out{nodes[k][j], nodes[(k + 1) % n][to], across, {}};
          if (round > 0) out.deps.push_back(within_into[k][j]);
          next_across[(k + 1) % n][to] = next_index(steps);
          steps.push_back(std::move(out));
        }
        // Within: every channel but the one starting at j+1 — the one starting at j came across, the
        // others (if any) from within.
        CollectiveStep in{nodes[k][j], nodes[k][to], starts[to] ? chunk - across : chunk, {}};
        if (round > 0) {
          if (starts[j]) in.deps.push_back(across_into[k][j]);
          const std::size_t from_within = channels - (starts[j] ? 1 : 0) - (starts[to] ? 1 : 0);
          if (from_within > 0) in.deps.push_back(within_into[k][j]);
        }
        next_within[k][to] = next_index(steps);
        steps.push_back(std::move(in));
      }
    within_into = std::move(next_within);
    across_into = std::move(next_across);
  }
}

std::vector<std::vector<DeviceId>> group_by_node(const Collective& c, const DeviceTopology& topology) {
  std::vector<std::uint32_t> node_ids;
  std::vector<std::vector<DeviceId>> nodes;
  for (DeviceId device : c.group) {
    const std::uint32_t node = topology.node_of_device.at(device);
    const auto it = std::find(node_ids.begin(), node_ids.end(), node);
    if (it == node_ids.end()) {
      node_ids.push_back(node);
      nodes.push_back({device});
    } else {
      nodes[static_cast<std::size_t>(it - node_ids.begin())].push_back(device);
    }
  }
  return nodes;
}

std::vector<std::vector<DeviceId>> members_by_node(const Collective& c, const DeviceTopology& topology) {
  std::vector<std::vector<DeviceId>> nodes = group_by_node(c, topology);
  for (const auto& members : nodes)
    if (members.size() != nodes.front().size())
      throw InputError(SourceLocation{}, "hierarchical needs the same number of group members on every node");
  return nodes;
}

std::vector<std::vector<DeviceId>> rings_across(const std::vector<std::vector<DeviceId>>& nodes) {
  std::vector<std::vector<DeviceId>> across(nodes.front().size());
  for (std::size_t l = 0; l < across.size(); ++l)
    for (const auto& members : nodes) across[l].push_back(members[l]);
  return across;
}

CollectiveExpansion order_by_slot(std::vector<SlottedStep> slotted) {
  std::vector<StepIndex> order(slotted.size());
  std::iota(order.begin(), order.end(), StepIndex{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](StepIndex a, StepIndex b) { return slotted[a].slot < slotted[b].slot; });
  std::vector<StepIndex> new_index(slotted.size());
  for (StepIndex k = 0; k < order.size(); ++k) new_index[order[k]] = k;

  CollectiveExpansion result;
  result.steps.reserve(slotted.size());
  for (StepIndex k = 0; k < order.size(); ++k) {
    CollectiveStep step = std::move(slotted[order[k]].step);
    for (StepIndex& dep : step.deps) {
      dep = new_index[dep];
      assert(dep < k && "a dependency must be in an earlier slot");
    }
    result.steps.push_back(std::move(step));
  }
  return result;
}

CollectiveExpansion pipelined_chain(const std::vector<DeviceId>& chain, Bytes size, std::uint32_t chunks) {
  const std::size_t edges = chain.size() - 1;
  std::vector<SlottedStep> slotted;
  for (std::uint32_t c = 0; c < chunks; ++c)
    for (std::size_t j = 0; j < edges; ++j) {
      CollectiveStep step{chain[j], chain[j + 1], size / chunks, {}};
      if (j > 0) step.deps.push_back(static_cast<StepIndex>(slotted.size() - 1));
      slotted.push_back({static_cast<std::uint32_t>(c + j), std::move(step)});
    }
  return order_by_slot(std::move(slotted));
}

}  // namespace dnnsim::collectives
