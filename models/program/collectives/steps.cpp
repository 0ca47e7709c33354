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
  std::vector<CollectiveFlow> flows;
  std::vector<RouteCost> hop;
  double slowest = 0;
  for (const std::vector<DeviceId>& ring : rings)
    for (std::size_t i = 0; i < ring.size(); ++i) {
      hop.push_back(cost(ring[i], ring[(i + 1) % ring.size()]));
      slowest = std::max(slowest, (hop.back().latency + chunk / hop.back().bandwidth).value());
    }
  const Seconds phase(static_cast<double>(rounds) * slowest);
  const Bytes size = chunk * static_cast<double>(rounds);
  std::size_t k = 0;
  for (const std::vector<DeviceId>& ring : rings)
    for (std::size_t i = 0; i < ring.size(); ++i, ++k) {
      const Seconds delay = phase - hop[k].latency - size / hop[k].bandwidth;
      flows.push_back(CollectiveFlow{ring[i], ring[(i + 1) % ring.size()], size, std::max(delay, Seconds(0))});
    }
  return flows;
}

std::vector<std::vector<DeviceId>> members_by_node(const Collective& c, const DeviceTopology& topology) {
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
