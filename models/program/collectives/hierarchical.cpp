// "hierarchical": all-reduce in three rings — intra-node reduce-scatter, inter-node all-reduce of
// the shard among equal local ranks, intra-node all-gather (Jia et al. 2018; Horovod/NCCL
// hierarchical all-reduce). docs/collectives.md derives its cost.
#include <cassert>
#include <map>

#include "models/program/collectives/steps.hpp"

namespace dnnsim::collectives {
namespace {

class HierarchicalAlgorithm final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] bool supports(CollectiveKind kind) const override { return kind == CollectiveKind::all_reduce; }
  // A window of whole nodes: the intra-node rings are the window's own, the inter-node rings wrap
  // within the window's nodes.
  [[nodiscard]] bool supports_copies(CollectiveKind /*kind*/) const override { return true; }
  [[nodiscard]] bool needs_equal_members_per_node() const override { return true; }

  [[nodiscard]] CollectiveExpansion expand(const Collective& c, const DeviceTopology& topology) const override {
    assert(c.kind == CollectiveKind::all_reduce && "hierarchical supports all_reduce only");
    const std::vector<std::vector<DeviceId>> nodes = members_by_node(c, topology);
    const std::size_t g = nodes.front().size();
    const std::size_t n = nodes.size() * c.copies;  // with copies, the window's nodes stand for n
    CollectiveExpansion result;
    LastInto last;
    const Bytes shard = c.size / static_cast<double>(g);
    if (g > 1) append_rings(result.steps, nodes, shard, g - 1, last);  // 1. reduce-scatter
    if (n > 1) append_rings(result.steps, rings_across(nodes), shard / static_cast<double>(n), 2 * (n - 1), last);
    if (g > 1) append_rings(result.steps, nodes, shard, g - 1, last);  // 3. all-gather
    return result;
  }

  // The three rings as three phases. At step level a phase's first send waits only for the last
  // send into its sender, not for the whole previous phase; on uniform links every member ends a
  // phase at the same date, so the phase barrier of the flow form changes nothing there.
  [[nodiscard]] CollectiveFlowPlan flows(const Collective& c, const DeviceTopology& topology,
                                         const RouteCostFn& cost) const override {
    const std::vector<std::vector<DeviceId>> nodes = members_by_node(c, topology);
    const std::size_t g = nodes.front().size();
    const std::size_t n = nodes.size() * c.copies;
    const Bytes shard = c.size / static_cast<double>(g);
    CollectiveFlowPlan plan;
    if (g > 1) plan.phases.push_back(ring_phase_flows(nodes, shard, g - 1, cost));
    if (n > 1)
      plan.phases.push_back(ring_phase_flows(rings_across(nodes), shard / static_cast<double>(n), 2 * (n - 1), cost));
    if (g > 1) plan.phases.push_back(ring_phase_flows(nodes, shard, g - 1, cost));
    return plan;
  }

  // Every member sends once per round: (g−1) + 2(n−1) + (g−1) rounds of p = g·n sends.
  [[nodiscard]] std::size_t step_count(const Collective& c, const DeviceTopology& topology) const override {
    std::map<std::uint32_t, std::size_t> members_per_node;
    for (DeviceId device : c.group) ++members_per_node[topology.node_of_device.at(device)];
    const std::size_t g = members_per_node.begin()->second;
    const std::size_t n = members_per_node.size() * c.copies;
    return c.group.size() * (2 * (g - 1) + 2 * (n - 1));
  }
};

}  // namespace

std::shared_ptr<const CollectiveAlgorithm> hierarchical_algorithm() {
  return std::make_shared<HierarchicalAlgorithm>();
}

}  // namespace dnnsim::collectives
