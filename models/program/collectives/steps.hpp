// Step builders shared by the built-in collective algorithms (models/program/collectives/*.cpp):
// rings (ring, hierarchical), pipelined chains and the slot order of pipelined algorithms (ring's
// broadcast, tree), and the group helpers they all use. Internal to the collective algorithms.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "models/program/collective_algorithms.hpp"

namespace dnnsim::collectives {

using StepIndex = std::uint32_t;

// Pipelined algorithms (ring broadcast, tree) cut their payload into chunks of at least this size,
// NCCL's default slice (NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8), so that small messages are not split
// into latency-bound crumbs; the chunk count is also capped so the step count stays bounded.
inline constexpr double kMinPipelineChunkBytes = 512.0 * 1024.0;

// ceil(part / 512 KiB), clamped to [1, cap].
[[nodiscard]] std::uint32_t pipeline_chunks(Bytes part, std::uint32_t cap);
[[nodiscard]] std::uint32_t ceil_log2(std::size_t n);
[[nodiscard]] inline StepIndex next_index(const std::vector<CollectiveStep>& steps) {
  return static_cast<StepIndex>(steps.size());
}

// The member at `offset` places after `position` in the group order.
[[nodiscard]] inline DeviceId member_after(const Collective& c, std::size_t position, std::size_t offset) {
  return c.group[(position + offset) % c.group.size()];
}
// The position of the broadcast root in the group. @throw InputError when it is not a member.
[[nodiscard]] std::size_t root_position(const Collective& c);

// ---- Rings, shared by "ring" and "hierarchical".

// Device → the last step that delivered data to it; its next send waits for that step.
using LastInto = std::map<DeviceId, StepIndex>;

// Appends `rounds` rounds of ring steps over each of `rings` (all of the same size n ≥ 2): in each
// round, the member at position i of a ring sends `chunk` to the one at i+1 (mod n). A send waits for
// the previous send into its sender — the previous round's, or for the first round the step recorded
// in `last` (the end of an earlier phase). Reduce-scatter (n−1 rounds), all-gather (n−1 rounds) and
// all-reduce (2(n−1) rounds; Patarasuk & Yuan 2009) all have this shape; only what the receiver does
// with the chunk (add or copy) differs, and that costs no simulated time.
void append_rings(std::vector<CollectiveStep>& steps, const std::vector<std::vector<DeviceId>>& rings, Bytes chunk,
                  std::size_t rounds, LastInto& last);

// The flow form of append_rings (docs/collectives.md, "Fidelity levels"). At step level the send of
// member i in round r waits for its own previous send and for the send into i of round r−1, so its
// end is a max-plus recurrence t(i,r) = max(t(i,r−1), t(i−1,r−1)) + d_i with d_i = L_i + chunk/B_i;
// its longest path stays on the slowest hop: alone on their links the rounds last
// T = rounds · max_i d_i. Each hop becomes one flow of rounds·chunk delayed by T − L_i − rounds·chunk/B_i
// (= (rounds−1)·L_i on uniform links), which alone also ends at T.
[[nodiscard]] std::vector<CollectiveFlow> ring_phase_flows(const std::vector<std::vector<DeviceId>>& rings, Bytes chunk,
                                                           std::size_t rounds, const RouteCostFn& cost);
// The same for hops that carry share × chunk per round each (a channelled ring's): T = rounds ·
// max_h (L_h + share_h·chunk/B_h), every hop one flow of rounds·share_h·chunk ending at T alone.
[[nodiscard]] std::vector<CollectiveFlow> hop_phase_flows(const std::vector<RingHop>& hops, Bytes chunk,
                                                          std::size_t rounds, const RouteCostFn& cost);

// ---- The ring split into channels, one per NIC (NCCL's rings; docs/collectives.md, "Channels").
// NCCL searches one ring per NIC, "NET n -> GPU a -> GPU b -> .. -> GPU x -> NET n" (src/graph/
// search.cc), starting at the GPU nearest NIC n and, on an NVSwitch, going on to the next GPU index
// (ncclTopoSearchNextGpuSort); connectRings (src/graph/connect.cc) joins each node's last GPU of a
// channel to the next node's first; each channel moves its own part of the buffer (the device
// kernels' loop over nChannels·nranks chunks). Here: when the group spans several nodes, every node
// holds the same number g ≥ 2 of its members and each of them has a NIC of its own, c = min(g,
// kMaxRingChannels) channels run, channel k visiting each node's members from local rank s_k =
// ⌊k·g/c⌋ on (s_k, s_k+1, …, s_k−1), the nodes in order of first appearance, and carrying S/c. Local
// rank j then sends to the next node's rank j+1 (mod g) the channel that starts there, if one does
// (1/c), and to its own node's rank j+1 every other channel: with c = g each NIC sends and receives
// 1/g of the traffic between nodes, where a single ring puts all of it on one GPU's NIC per node.

// NCCL's ring search finds at most MAXCHANNELS/2 rings (src/init.cc: `ringGraph->maxChannels =
// MAXCHANNELS / 2`, MAXCHANNELS 64 in src/include/device.h); its further channels (ncclTopoPostset
// duplicates the rings) run the same rings again, so they load the same NICs.
inline constexpr std::size_t kMaxRingChannels = 32;

// c above when `c` is such a group, else 1 (the ring over the group order).
[[nodiscard]] std::size_t ring_channel_count(const Collective& c, const DeviceTopology& topology);
// The hops of one round in `channels` channels (ring_channel_count, or 1), with the part of S/p each
// carries: the group order with share 1, or, when channelled, for each member (node by node) its hop
// to the next node (1/c, where a channel starts at its successor) then within its node (the other
// channels).
[[nodiscard]] std::vector<RingHop> ring_round_hops(const Collective& c, const DeviceTopology& topology,
                                                   std::size_t channels);
// The step form of a ring in `channels` channels over `nodes` (members_by_node): per round and
// member, the send to the next node (chunk/c, where a channel starts at its successor) and the send
// within the node (the rest of the chunk), each waiting for the sends into the member in the previous
// round that delivered the channels it forwards.
void append_channel_rounds(std::vector<CollectiveStep>& steps, const std::vector<std::vector<DeviceId>>& nodes,
                           std::size_t channels, Bytes chunk, std::size_t rounds);

// Members grouped by node, nodes in order of first appearance, members in group order.
// @throw InputError unless every node holds the same number of members.
[[nodiscard]] std::vector<std::vector<DeviceId>> members_by_node(const Collective& c, const DeviceTopology& topology);
// The same grouping, whatever the number of members per node.
[[nodiscard]] std::vector<std::vector<DeviceId>> group_by_node(const Collective& c, const DeviceTopology& topology);

// Across nodes, one ring per local rank l: the l-th member of every node.
[[nodiscard]] std::vector<std::vector<DeviceId>> rings_across(const std::vector<std::vector<DeviceId>>& nodes);

// ---- Pipelined algorithms are generated chunk by chunk and then ordered by the slot each step takes
// in the ideal pipeline, so that a device's sends interleave chunks (and trees) as they become ready.

struct SlottedStep {
  std::uint32_t slot;
  CollectiveStep step;
};

// The steps in slot order (stable), their dependencies renumbered.
[[nodiscard]] CollectiveExpansion order_by_slot(std::vector<SlottedStep> slotted);

// Pipelined chain: chain[0] sends `chunks` chunks of `size / chunks` down the chain; chunk c leaves
// chain[j] (slot c + j) once it has arrived from chain[j−1].
[[nodiscard]] CollectiveExpansion pipelined_chain(const std::vector<DeviceId>& chain, Bytes size, std::uint32_t chunks);

// ---- The built-in algorithms, one file each (registered by collective_algorithms.cpp).
[[nodiscard]] std::shared_ptr<const CollectiveAlgorithm> ring_algorithm();
// The same ring never split into channels: each member sends only to its successor in the group
// order, through its own route (Transformer Engine's context-parallel K/V ring, "p2p-ring").
[[nodiscard]] std::shared_ptr<const CollectiveAlgorithm> point_to_point_ring_algorithm();
[[nodiscard]] std::shared_ptr<const CollectiveAlgorithm> tree_algorithm();
[[nodiscard]] std::shared_ptr<const CollectiveAlgorithm> hierarchical_algorithm();
[[nodiscard]] std::shared_ptr<const CollectiveAlgorithm> direct_algorithm();

}  // namespace dnnsim::collectives
