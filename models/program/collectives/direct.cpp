// "direct": every member sends each peer its share (pairwise exchange; Thakur, Rabenseifner & Gropp
// 2005): the only algorithm for all-to-all, and a two-round all-reduce. docs/collectives.md derives
// its cost.
#include <cassert>

#include "models/program/collectives/steps.hpp"

namespace dnnsim::collectives {
namespace {

class DirectAlgorithm final : public CollectiveAlgorithm {
 public:
  // The generic per-pair flow form took 1.85× the steps for 256 MiB on 8 GPUs (all p − 1 pairs of a
  // member start at once in it, but one after another at step level): not offered.
  [[nodiscard]] bool supports_flow(CollectiveKind /*kind*/) const override { return false; }

  [[nodiscard]] bool supports(CollectiveKind /*kind*/) const override { return true; }

  [[nodiscard]] CollectiveExpansion expand(const Collective& c, const DeviceTopology& /*topology*/) const override {
    const std::size_t p = c.group.size();
    const Bytes shard = c.size / static_cast<double>(p);
    CollectiveExpansion result;
    auto& steps = result.steps;
    // One all-pairs phase: in round r = 1..p−1, position i sends to position i+r (mod p), so every
    // device receives from exactly one peer per round (no incast). Returns the steps into each
    // position; `after[i]` are the deps of every send of position i.
    auto all_pairs = [&](Bytes size, const std::vector<std::vector<StepIndex>>& after) {
      std::vector<std::vector<StepIndex>> into(p);
      for (std::size_t r = 1; r < p; ++r)
        for (std::size_t i = 0; i < p; ++i) {
          into[(i + r) % p].push_back(next_index(steps));
          steps.push_back(CollectiveStep{c.group[i], member_after(c, i, r), size, after[i]});
        }
      return into;
    };
    const std::vector<std::vector<StepIndex>> none(p);
    switch (c.kind) {
      case CollectiveKind::all_reduce:
        // Reduce-scatter: shard j of everyone goes to j; then j's reduced shard goes to everyone.
        (void)all_pairs(shard, all_pairs(shard, none));
        break;
      case CollectiveKind::all_gather:
      case CollectiveKind::reduce_scatter:
      case CollectiveKind::all_to_all:
        (void)all_pairs(shard, none);
        break;
      case CollectiveKind::broadcast: {
        const std::size_t root = root_position(c);
        for (std::size_t r = 1; r < p; ++r)
          steps.push_back(CollectiveStep{c.root, member_after(c, root, r), c.size, {}});
        break;
      }
    }
    return result;
  }

  [[nodiscard]] std::size_t step_count(const Collective& c, const DeviceTopology& /*topology*/) const override {
    const std::size_t p = c.group.size();
    switch (c.kind) {
      case CollectiveKind::all_reduce:
        return 2 * p * (p - 1);
      case CollectiveKind::all_gather:
      case CollectiveKind::reduce_scatter:
      case CollectiveKind::all_to_all:
        return p * (p - 1);
      case CollectiveKind::broadcast:
        return p - 1;
    }
    return 0;
  }
};

}  // namespace

std::shared_ptr<const CollectiveAlgorithm> direct_algorithm() { return std::make_shared<DirectAlgorithm>(); }

}  // namespace dnnsim::collectives
