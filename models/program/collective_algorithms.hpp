// Collective algorithms: how a Collective of the TaskGraph becomes point-to-point steps.
//
// sim/ runs every step as a host-to-host transfer on the collective's stream: a device's sends run
// one after another in the order of the expansion, each once its `deps` have finished; the
// collective ends when all its steps have. Contention, slow links and preempted links therefore
// show in the collective's time instead of being assumed by a formula. The algorithms, their steps
// and their cost on uniform links are described in docs/collectives.md.
//
// Conventions (as NCCL counts them): S = Collective::size is the all-reduce buffer, the all-gather
// output, the reduce-scatter input, the broadcast payload and the all-to-all send buffer of each
// member; p = group size. Only data movement is modelled, not the arithmetic of reductions
// (memory-bound kernels that NCCL overlaps with the transfers).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/common/diagnostics.hpp"
#include "models/common/registry.hpp"
#include "models/common/units.hpp"
#include "models/program/task_graph.hpp"

namespace dnnsim {

// Where each device sits, for topology-aware algorithms (hierarchical, the ring's channels).
struct DeviceTopology {
  std::vector<std::uint32_t> node_of_device;  // indexed by DeviceId
  // Indexed by DeviceId: the device leaves its node through a NIC of its own (a rail-optimised node,
  // `nic: {per_gpu: true}`), not one its node's GPUs share. Empty: no device has one.
  std::vector<bool> own_nic;
};

// One hop of a ring round: `src` sends `share` × S/p to `dst` in every round (S/p per round for a
// single ring; a ring split into channels carries its channels' parts, docs/collectives.md).
struct RingHop {
  DeviceId src = 0;
  DeviceId dst = 0;
  double share = 1.0;
};

struct CollectiveStep {
  DeviceId src = 0;
  DeviceId dst = 0;
  Bytes size{0};
  std::vector<std::uint32_t> deps;  // indices of earlier steps of the same expansion that must finish first
};

struct CollectiveExpansion {
  std::vector<CollectiveStep> steps;  // topologically ordered; a device's sends run in this order
};

// What one flow alone between two devices sees: the route's latency and its slowest link.
struct RouteCost {
  Seconds latency{0};
  BytesPerSecond bandwidth{0};
};
using RouteCostFn = std::function<RouteCost(DeviceId src, DeviceId dst)>;

// Flow fidelity (docs/collectives.md, "Fidelity levels"): the flows a collective puts on the wire,
// one per (sender, receiver) pair and phase, each carrying the pair's whole volume of that phase.
// `delay` is idle time before the flow: the latencies of its steps but the last, plus, on a pair
// faster than the one that gates the phase, the time it waits for that one — so that a flow alone on
// its route ends exactly when the step-level phase does: delay + latency + size/bandwidth = T_phase.
struct CollectiveFlow {
  DeviceId src = 0;
  DeviceId dst = 0;
  Bytes size{0};
  Seconds delay{0};
};

struct CollectiveFlowPlan {
  std::vector<std::vector<CollectiveFlow>> phases;  // phase k starts when every flow of phase k−1 has ended
};

class CollectiveAlgorithm {
 public:
  virtual ~CollectiveAlgorithm() = default;
  [[nodiscard]] virtual bool supports(CollectiveKind kind) const = 0;
  // Precondition: supports(c.kind), c.group.size() >= 2, all devices in topology.
  // @throw InputError when the collective cannot be expanded by this algorithm (a broadcast root
  //        outside the group; hierarchical with unequal members per node).
  [[nodiscard]] virtual CollectiveExpansion expand(const Collective& c, const DeviceTopology& topology) const = 0;
  [[nodiscard]] virtual bool supports_flow(CollectiveKind /*kind*/) const { return true; }
  // Whether expand() and flows() honour Collective::copies > 1 (a symmetric window of the group);
  // the callers below refuse such a collective otherwise.
  [[nodiscard]] virtual bool supports_copies(CollectiveKind /*kind*/) const { return false; }
  // Whether expand() needs as many group members on every node it spans (hierarchical's local rings);
  // a workload whose groups need not have that shape (an SPMD mesh axis) refuses such an algorithm.
  [[nodiscard]] virtual bool needs_equal_members_per_node() const { return false; }
  // When the algorithm is, for c's kind, `rounds` rounds in which every member sends S/p to the next
  // member of the group order (a ring: Patarasuk & Yuan's all-reduce in 2(p−1) rounds, all-gather and
  // reduce-scatter in p−1), that number of rounds; the analytical cost (models/cost/collective_cost)
  // then times it in closed form, O(p) where the expansion has O(p²) steps. Empty otherwise.
  // Precondition: supports(c.kind), c.group.size() >= 2.
  [[nodiscard]] virtual std::optional<std::size_t> ring_rounds(const Collective& /*c*/) const { return std::nullopt; }
  // When ring_rounds(c) is set: the hops of every round, with the part of S/p each carries per round
  // (the group order with share 1, or the channels' hops of a ring split over a node's NICs).
  [[nodiscard]] virtual std::vector<RingHop> ring_hops(const Collective& /*c*/,
                                                       const DeviceTopology& /*topology*/) const {
    return {};
  }
  // Whether, outside channels, every send goes from a member to its successor in the group order (a
  // ring's rounds, a pipelined chain), so what leaves a node is one send per ring edge that leaves it.
  [[nodiscard]] virtual bool follows_group_order() const { return false; }
  // How many rings (NCCL channels) run at once, each on its own part of the buffer; above 1 a device
  // sends on several rings at once, which only the flow form runs concurrently (the default fidelity
  // of such a collective is flow). Same preconditions as expand().
  [[nodiscard]] virtual std::size_t channels(const Collective& /*c*/, const DeviceTopology& /*topology*/) const {
    return 1;
  }
  // Same preconditions as expand(). The default aggregates expand() per (sender, receiver) pair in
  // one phase, timed by the expansion's critical path on `cost` (a device's sends one after another,
  // as the executor runs them); ring and hierarchical give closed forms that never expand (O(p)).
  [[nodiscard]] virtual CollectiveFlowPlan flows(const Collective& c, const DeviceTopology& topology,
                                                 const RouteCostFn& cost) const;
  // expand(c, topology).steps.size(), by formula, without building the steps: the resource guard
  // (sim/run/resource_guard.hpp) sizes a run before anything is expanded. Same preconditions;
  // a collective expand() would reject counts as if it were accepted.
  [[nodiscard]] virtual std::size_t step_count(const Collective& c, const DeviceTopology& topology) const = 0;
};

using CollectiveAlgorithmRegistry = Registry<std::shared_ptr<const CollectiveAlgorithm>>;

// Adds "ring", "tree", "hierarchical" and "direct", in that order.
void register_builtin_collective_algorithms(CollectiveAlgorithmRegistry& registry);
// The built-in algorithms, registered once (thread-safe initialisation).
[[nodiscard]] const CollectiveAlgorithmRegistry& builtin_collective_algorithms();

// The rule used when Collective::algorithm is empty:
//  - all_reduce: "hierarchical" when the group spans more than one node, some node holds more than
//    one member, and every node involved holds the same number of members (the shape NCCL and
//    Horovod exploit: fast intra-node links, S/g bytes per device across nodes); otherwise "ring";
//  - all_to_all: "direct" (a ring cannot express a personalised exchange);
//  - all_gather, reduce_scatter, broadcast: "ring" (NCCL's only algorithm for them).
// @throw std::out_of_range if a group member is not in `topology`.
[[nodiscard]] std::string default_collective_algorithm(const Collective& c, const DeviceTopology& topology);

// Expands `c` with the algorithm it names, or the default rule when it names none. A group of one
// device moves nothing and gives an empty expansion.
// @throw InputError at `where` if the name is unknown ("did you mean …"), if the algorithm does not
//        support the kind (the message lists the algorithms that do), or if the algorithm rejects
//        the collective.
[[nodiscard]] CollectiveExpansion expand_collective(const Collective& c, const DeviceTopology& topology,
                                                    const SourceLocation& where = {});

// Groups of more than this many members run at `flow` fidelity by default: step-level cost grows
// with p² per ring collective (2p(p−1) flows), and up to 64 members it is below ~8k flows.
inline constexpr std::size_t kStepFidelityMaxGroup = 64;
// c.fidelity, else `workload_default`, else flow for groups above kStepFidelityMaxGroup, and for a
// ring split into channels (CollectiveAlgorithm::channels), whose algorithm has a flow form (ring,
// hierarchical), step otherwise.
[[nodiscard]] CollectiveFidelity effective_collective_fidelity(const Collective& c,
                                                               std::optional<CollectiveFidelity> workload_default,
                                                               const DeviceTopology& topology);

// The flow-fidelity plan of `c` (the algorithm chosen as expand_collective does). A group of one
// device gives no phase. @throw InputError at `where` as expand_collective, or if the algorithm has
// no flow form for the kind.
[[nodiscard]] CollectiveFlowPlan plan_collective_flows(const Collective& c, const DeviceTopology& topology,
                                                       const RouteCostFn& cost, const SourceLocation& where = {});
// expand_collective(c, topology).steps.size() without expanding (the algorithm's step_count).
// @throw InputError as expand_collective for an unknown or unsupporting algorithm.
[[nodiscard]] std::size_t count_collective_steps(const Collective& c, const DeviceTopology& topology,
                                                 const SourceLocation& where = {});

}  // namespace dnnsim
