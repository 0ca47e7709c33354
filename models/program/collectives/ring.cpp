// "ring": the group order as a ring (Patarasuk & Yuan 2009; NCCL's ring): all-reduce as
// reduce-scatter + all-gather in 2(p−1) rounds of S/p, all-gather and reduce-scatter in p−1, and a
// broadcast pipelined down the chain from the root. Across nodes whose GPUs have NICs of their own,
// split into one channel per NIC as NCCL does (steps.hpp, "channels"). "p2p-ring" is the same ring
// never split: a chain of point-to-point sends to the next member, as Transformer Engine's
// context-parallel K/V ring issues them (AttnFuncWithCPAndKVP2P: one isend/irecv to the next CP rank
// per step), so a hop between nodes leaves through its sender's NIC alone. docs/collectives.md
// derives their cost.
#include <cassert>
#include <optional>

#include "models/program/collectives/steps.hpp"

namespace dnnsim::collectives {
namespace {

class RingAlgorithm final : public CollectiveAlgorithm {
 public:
  explicit RingAlgorithm(bool split_into_channels) : split_into_channels_(split_into_channels) {}

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

  [[nodiscard]] bool follows_group_order() const override { return true; }

  [[nodiscard]] bool supports_copies(CollectiveKind kind) const override {
    return kind == CollectiveKind::all_reduce || kind == CollectiveKind::all_gather ||
           kind == CollectiveKind::reduce_scatter;
  }

  [[nodiscard]] std::optional<std::size_t> ring_rounds(const Collective& c) const override {
    const std::size_t p = logical_size(c);
    switch (c.kind) {
      case CollectiveKind::all_reduce:
        return 2 * (p - 1);
      case CollectiveKind::all_gather:
      case CollectiveKind::reduce_scatter:
        return p - 1;
      case CollectiveKind::broadcast:  // a pipelined chain, not rounds
      case CollectiveKind::all_to_all:
        break;
    }
    return std::nullopt;
  }

  [[nodiscard]] std::vector<RingHop> ring_hops(const Collective& c, const DeviceTopology& topology) const override {
    return ring_rounds(c) ? ring_round_hops(c, topology, channel_count(c, topology)) : std::vector<RingHop>{};
  }

  [[nodiscard]] std::size_t channels(const Collective& c, const DeviceTopology& topology) const override {
    return ring_rounds(c) ? channel_count(c, topology) : 1;
  }

  // With copies, the ring runs over the window: rounds and chunks of the whole group, the window's
  // last member sending to its first (the next copy's first member, by symmetry); a channelled ring's
  // last node sends to its first.
  [[nodiscard]] CollectiveExpansion expand(const Collective& c, const DeviceTopology& topology) const override {
    const std::size_t p = logical_size(c);
    CollectiveExpansion result;
    if (const auto rounds = ring_rounds(c)) {
      const Bytes chunk = c.size / static_cast<double>(p);
      if (const std::size_t channels = channel_count(c, topology); channels > 1) {
        append_channel_rounds(result.steps, group_by_node(c, topology), channels, chunk, *rounds);
        return result;
      }
      LastInto last;
      append_rings(result.steps, {c.group}, chunk, *rounds, last);
      return result;
    }
    assert(c.kind == CollectiveKind::broadcast && "ring does not support all_to_all");
    // A chain from the root along the group order, pipelined in k chunks:
    // k = ceil(S / 512 KiB) capped at 4p, so the fill (p−2 chunk times) costs at most ~25%.
    const std::size_t root = root_position(c);
    std::vector<DeviceId> chain;
    for (std::size_t j = 0; j < p; ++j) chain.push_back(member_after(c, root, j));
    return pipelined_chain(chain, c.size, broadcast_chunks(c));
  }

  [[nodiscard]] CollectiveFlowPlan flows(const Collective& c, const DeviceTopology& topology,
                                         const RouteCostFn& cost) const override {
    if (const auto rounds = ring_rounds(c))
      return {{hop_phase_flows(ring_round_hops(c, topology, channel_count(c, topology)),
                               c.size / static_cast<double>(logical_size(c)), *rounds, cost)}};
    return CollectiveAlgorithm::flows(c, topology, cost);  // the pipelined chain: per-edge aggregate
  }

  // A round is one send per simulated member, plus, when channelled, one across per channel and node
  // (every member when each has a channel); the broadcast chain sends each chunk down p − 1 edges.
  [[nodiscard]] std::size_t step_count(const Collective& c, const DeviceTopology& topology) const override {
    if (const auto rounds = ring_rounds(c)) {
      const std::size_t channels = channel_count(c, topology);
      const std::size_t across = channels > 1 ? group_by_node(c, topology).size() * channels : 0;
      return (c.group.size() + across) * *rounds;
    }
    assert(c.kind == CollectiveKind::broadcast && "ring does not support all_to_all");
    return std::size_t{broadcast_chunks(c)} * (logical_size(c) - 1);
  }

 private:
  [[nodiscard]] std::size_t channel_count(const Collective& c, const DeviceTopology& topology) const {
    return split_into_channels_ ? ring_channel_count(c, topology) : 1;
  }
  static std::uint32_t broadcast_chunks(const Collective& c) {
    return pipeline_chunks(c.size, static_cast<std::uint32_t>(4 * logical_size(c)));
  }

  bool split_into_channels_;
};

}  // namespace

std::shared_ptr<const CollectiveAlgorithm> ring_algorithm() { return std::make_shared<RingAlgorithm>(true); }

std::shared_ptr<const CollectiveAlgorithm> point_to_point_ring_algorithm() {
  return std::make_shared<RingAlgorithm>(false);
}

}  // namespace dnnsim::collectives
