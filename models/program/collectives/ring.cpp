// "ring": the group order as a ring (Patarasuk & Yuan 2009; NCCL's ring): all-reduce as
// reduce-scatter + all-gather in 2(p−1) rounds of S/p, all-gather and reduce-scatter in p−1, and a
// broadcast pipelined down the chain from the root. docs/collectives.md derives its cost.
#include <cassert>

#include "models/program/collectives/steps.hpp"

namespace dnnsim::collectives {
namespace {

class RingAlgorithm final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] bool supports(CollectiveKind kind) const override {
    switch (kind) {
      case CollectiveKind::all_reduce:
      case CollectiveKind::all_gather:
      case CollectiveKind::reduce_scatter:
      case CollectiveKind::broadcast:
        return true;
      case CollectiveKind::all_to_all:
        return false;
    }
    return false;
  }

  [[nodiscard]] bool supports_copies(CollectiveKind kind) const override {
    return kind == CollectiveKind::all_reduce || kind == CollectiveKind::all_gather ||
           kind == CollectiveKind::reduce_scatter;
  }

  // With copies, the ring runs over the window: rounds and chunks of the whole group, the window's
  // last member sending to its first (the next copy's first member, by symmetry).
  [[nodiscard]] CollectiveExpansion expand(const Collective& c, const DeviceTopology& /*topology*/) const override {
    const std::size_t p = logical_size(c);
    CollectiveExpansion result;
    LastInto last;
    switch (c.kind) {
      case CollectiveKind::all_reduce:
        append_rings(result.steps, {c.group}, c.size / static_cast<double>(p), 2 * (p - 1), last);
        break;
      case CollectiveKind::all_gather:
      case CollectiveKind::reduce_scatter:
        append_rings(result.steps, {c.group}, c.size / static_cast<double>(p), p - 1, last);
        break;
      case CollectiveKind::broadcast: {
        // A chain from the root along the group order, pipelined in k chunks:
        // k = ceil(S / 512 KiB) capped at 4p, so the fill (p−2 chunk times) costs at most ~25%.
        const std::size_t root = root_position(c);
        std::vector<DeviceId> chain;
        for (std::size_t j = 0; j < p; ++j) chain.push_back(member_after(c, root, j));
        result = pipelined_chain(chain, c.size, pipeline_chunks(c.size, static_cast<std::uint32_t>(4 * p)));
        break;
      }
      case CollectiveKind::all_to_all:
        assert(false && "ring does not support all_to_all");
        break;
    }
    return result;
  }

  [[nodiscard]] CollectiveFlowPlan flows(const Collective& c, const DeviceTopology& topology,
                                         const RouteCostFn& cost) const override {
    const std::size_t p = logical_size(c);
    const Bytes chunk = c.size / static_cast<double>(p);
    switch (c.kind) {
      case CollectiveKind::all_reduce:
        return {{ring_phase_flows({c.group}, chunk, 2 * (p - 1), cost)}};
      case CollectiveKind::all_gather:
      case CollectiveKind::reduce_scatter:
        return {{ring_phase_flows({c.group}, chunk, p - 1, cost)}};
      case CollectiveKind::broadcast:
      case CollectiveKind::all_to_all:
        break;
    }
    return CollectiveAlgorithm::flows(c, topology, cost);  // the pipelined chain: per-edge aggregate
  }

  [[nodiscard]] std::size_t step_count(const Collective& c, const DeviceTopology& /*topology*/) const override {
    const std::size_t p = logical_size(c);
    const std::size_t senders = c.group.size();
    switch (c.kind) {
      case CollectiveKind::all_reduce:
        return senders * 2 * (p - 1);
      case CollectiveKind::all_gather:
      case CollectiveKind::reduce_scatter:
        return senders * (p - 1);
      case CollectiveKind::broadcast:
        return std::size_t{pipeline_chunks(c.size, static_cast<std::uint32_t>(4 * p))} * (p - 1);
      case CollectiveKind::all_to_all:
        break;
    }
    return 0;
  }
};

}  // namespace

std::shared_ptr<const CollectiveAlgorithm> ring_algorithm() { return std::make_shared<RingAlgorithm>(); }

}  // namespace dnnsim::collectives
