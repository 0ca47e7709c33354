// The collective-algorithm registry, the default rule and the checks every caller goes through. The
// algorithms are in models/program/collectives/, one file each. Each expansion lists a device's sends
// in the order that device issues them, and names as dependencies only the data a send needs (what
// the sender must have received first); the per-device order is left to the executor, which runs a
// device's sends one after another. docs/collectives.md derives the step counts and costs.
#include "models/program/collective_algorithms.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "models/program/collectives/steps.hpp"

namespace dnnsim {
namespace {

CollectiveAlgorithmRegistry make_builtin_registry() {
  CollectiveAlgorithmRegistry registry("collective algorithm");
  register_builtin_collective_algorithms(registry);
  return registry;
}

}  // namespace

// Critical path of the expansion as the executor runs it uncontended: a step starts when its deps
// and the previous send of its sender have ended, and lasts L + size/B of its route.
CollectiveFlowPlan CollectiveAlgorithm::flows(const Collective& c, const DeviceTopology& topology,
                                              const RouteCostFn& cost) const {
  const CollectiveExpansion expansion = expand(c, topology);
  struct Pair {
    Bytes size{0};
    RouteCost route;
  };
  std::map<std::pair<DeviceId, DeviceId>, Pair> pairs;  // ordered: the flows' order is deterministic
  std::map<DeviceId, double> sender_free;
  std::vector<double> end(expansion.steps.size());
  double makespan = 0;
  for (std::size_t s = 0; s < expansion.steps.size(); ++s) {
    const CollectiveStep& step = expansion.steps[s];
    auto [it, inserted] = pairs.try_emplace({step.src, step.dst});
    if (inserted) it->second.route = cost(step.src, step.dst);
    it->second.size += step.size;
    double start = sender_free[step.src];
    for (std::uint32_t dep : step.deps) start = std::max(start, end[dep]);
    end[s] = start + (it->second.route.latency + step.size / it->second.route.bandwidth).value();
    sender_free[step.src] = end[s];
    makespan = std::max(makespan, end[s]);
  }
  std::vector<CollectiveFlow> phase;
  for (const auto& [ends, pair] : pairs) {
    const Seconds delay = Seconds(makespan) - pair.route.latency - pair.size / pair.route.bandwidth;
    phase.push_back(CollectiveFlow{ends.first, ends.second, pair.size, std::max(delay, Seconds(0))});
  }
  CollectiveFlowPlan plan;
  if (!phase.empty()) plan.phases.push_back(std::move(phase));
  return plan;
}

void register_builtin_collective_algorithms(CollectiveAlgorithmRegistry& registry) {
  registry.add("ring",
               "ring over the group order; all_reduce = reduce-scatter + all-gather, 2(p-1)(α + S/(pB)); "
               "all_gather, reduce_scatter (p-1)(α + S/(pB)); broadcast pipelined in k chunks (p+k-2)(α + S/(kB))",
               "Patarasuk & Yuan 2009, Bandwidth optimal all-reduce algorithms for clusters of workstations "
               "(JPDC 69(2)); NCCL ring",
               collectives::ring_algorithm());
  registry.add("p2p-ring",
               "ring over the group order never split into channels: each member sends S/p per round to its "
               "successor only, through its own route (across nodes, its own NIC); rounds as ring's",
               "Transformer Engine AttnFuncWithCPAndKVP2P (context parallelism's K/V ring, one isend/irecv per "
               "step); Liu, Zaharia & Abbeel 2023, Ring Attention with Blockwise Transformers (arXiv:2310.01889)",
               collectives::point_to_point_ring_algorithm());
  registry.add("tree",
               "double binary tree: each half of S reduced up then broadcast down one of two complementary trees "
               "of depth log2(p) in k chunks; each device sends <= 2S; T ~ 2S/B + fill, latency O(k + log p)·α",
               "Sanders, Speck & Träff 2009, Two-tree algorithms for full bandwidth broadcast, reduction and scan "
               "(Parallel Computing 35(12)); NCCL 2.4 trees",
               collectives::tree_algorithm());
  registry.add("hierarchical",
               "all_reduce in 3 rings: intra-node reduce-scatter, inter-node all-reduce of S/g among equal local "
               "ranks, intra-node all-gather; 2(g-1)(α_in + S/(g B_in)) + 2(n-1)(α_out + S/(g n B_out))",
               "Jia et al. 2018, Highly scalable deep learning training system with mixed-precision "
               "(arXiv:1807.11205), hierarchical all-reduce; Horovod/NCCL hierarchical all-reduce",
               collectives::hierarchical_algorithm());
  registry.add("direct",
               "every device sends each peer its share at once: all_reduce = direct reduce-scatter + all-gather, "
               "2(p-1) sends of S/p per device, 2 rounds; all_to_all and all_gather (p-1) sends of S/p; "
               "broadcast root sends S to each",
               "Thakur, Rabenseifner & Gropp 2005, Optimization of collective communication operations in MPICH "
               "(IJHPCA 19(1)), pairwise exchange",
               collectives::direct_algorithm());
}

const CollectiveAlgorithmRegistry& builtin_collective_algorithms() {
  static const CollectiveAlgorithmRegistry registry = make_builtin_registry();
  return registry;
}

std::string default_collective_algorithm(const Collective& c, const DeviceTopology& topology) {
  switch (c.kind) {
    case CollectiveKind::all_to_all:
      return "direct";
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::broadcast:
      return "ring";
    case CollectiveKind::all_reduce:
      break;
  }
  std::map<std::uint32_t, std::size_t> members_per_node;
  for (DeviceId device : c.group) ++members_per_node[topology.node_of_device.at(device)];
  const std::size_t first = members_per_node.empty() ? 0 : members_per_node.begin()->second;
  const bool equal = std::all_of(members_per_node.begin(), members_per_node.end(),
                                 [&](const auto& entry) { return entry.second == first; });
  return members_per_node.size() > 1 && first > 1 && equal ? "hierarchical" : "ring";
}

namespace {

// Runs `body` with the algorithm `c` names (or the default rule's), which must support the kind —
// and, when `flow`, have a flow form for it; the algorithm's own complaints are located at `where`.
template <class Body>
auto with_algorithm(const Collective& c, const DeviceTopology& topology, const SourceLocation& where, bool flow,
                    Body body) {
  const CollectiveAlgorithmRegistry& registry = builtin_collective_algorithms();
  const std::string name = c.algorithm.empty() ? default_collective_algorithm(c, topology) : c.algorithm.str();
  const auto& entry = registry.at(name, where);
  const auto able_to = [&](const CollectiveAlgorithm& algorithm) {
    return algorithm.supports(c.kind) && (!flow || algorithm.supports_flow(c.kind));
  };
  if (!able_to(*entry.value)) {
    std::vector<std::string> able;
    for (const auto& other : registry.entries())
      if (able_to(*other.value)) able.push_back(other.name);
    throw InputError(where,
                     fmt::format("collective algorithm '{}' does not support {}{}; algorithms that do: {}", name,
                                 collective_kind_name(c.kind), flow ? " at flow fidelity" : "", fmt::join(able, ", ")));
  }
  if (c.copies > 1 && !entry.value->supports_copies(c.kind)) {
    std::vector<std::string> windowed;  // "ring (all_reduce, all_gather)": the kinds each has a window for
    for (const auto& other : registry.entries()) {
      std::vector<std::string> kinds;
      for (const std::string& kind : collective_kind_names())
        if (other.value->supports(*collective_kind_from_name(kind)) &&
            other.value->supports_copies(*collective_kind_from_name(kind)))
          kinds.push_back(kind);
      if (!kinds.empty()) windowed.push_back(fmt::format("{} ({})", other.name, fmt::join(kinds, ", ")));
    }
    // "a (…), b (…) and c (…)"
    const std::string last = windowed.back();
    windowed.pop_back();
    const std::string listed = windowed.empty() ? last : fmt::format("{} and {}", fmt::join(windowed, ", "), last);
    throw InputError(where, fmt::format("collective algorithm '{}' has no symmetric-window form for {} (a group "
                                        "standing for {} copies of itself); {} have one",
                                        name, collective_kind_name(c.kind), c.copies, listed));
  }
  try {
    return body(*entry.value);
  } catch (const InputError& error) {
    // Locate the algorithm's complaint at the collective and say which algorithm made it.
    throw InputError(
        where, fmt::format("{} (collective algorithm '{}')",
                           error.diagnostics().empty() ? error.what() : error.diagnostics().front().message, name));
  }
}

}  // namespace

std::size_t count_collective_steps(const Collective& c, const DeviceTopology& topology, const SourceLocation& where) {
  return with_algorithm(c, topology, where, false, [&](const CollectiveAlgorithm& algorithm) {
    return c.group.size() < 2 ? std::size_t{0} : algorithm.step_count(c, topology);
  });
}

CollectiveExpansion expand_collective(const Collective& c, const DeviceTopology& topology,
                                      const SourceLocation& where) {
  return with_algorithm(c, topology, where, false, [&](const CollectiveAlgorithm& algorithm) {
    return c.group.size() < 2 ? CollectiveExpansion{} : algorithm.expand(c, topology);
  });
}

CollectiveFlowPlan plan_collective_flows(const Collective& c, const DeviceTopology& topology, const RouteCostFn& cost,
                                         const SourceLocation& where) {
  return with_algorithm(c, topology, where, true, [&](const CollectiveAlgorithm& algorithm) {
    return c.group.size() < 2 ? CollectiveFlowPlan{} : algorithm.flows(c, topology, cost);
  });
}

CollectiveFidelity effective_collective_fidelity(const Collective& c,
                                                 std::optional<CollectiveFidelity> workload_default,
                                                 const DeviceTopology& topology) {
  if (c.fidelity) return *c.fidelity;
  if (workload_default) return *workload_default;
  const std::string name = c.algorithm.empty() ? default_collective_algorithm(c, topology) : c.algorithm.str();
  const auto* entry = builtin_collective_algorithms().find(name);
  if (entry == nullptr || !entry->value->supports_flow(c.kind)) return CollectiveFidelity::step;
  // A device of a channelled ring sends on several rings at once; its steps would run one after another.
  const bool channelled =
      c.group.size() >= 2 && entry->value->supports(c.kind) && entry->value->channels(c, topology) > 1;
  return logical_size(c) > kStepFidelityMaxGroup || channelled ? CollectiveFidelity::flow : CollectiveFidelity::step;
}

}  // namespace dnnsim
