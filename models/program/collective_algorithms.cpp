// The built-in collective algorithms. Each expansion lists a device's sends in the order that
// device issues them, and names as dependencies only the data a send needs (what the sender must
// have received first); the per-device order is left to the executor, which runs a device's sends
// one after another. docs/collectives.md derives the step counts and costs.
#include "models/program/collective_algorithms.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <utility>

namespace dnnsim {
namespace {

using StepIndex = std::uint32_t;

// Pipelined algorithms (ring broadcast, tree) cut their payload into chunks of at least this size,
// NCCL's default slice (NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8), so that small messages are not split
// into latency-bound crumbs; the chunk count is also capped so the step count stays bounded.
constexpr double kMinPipelineChunkBytes = 512.0 * 1024.0;

// ceil(part / 512 KiB), clamped to [1, cap].
std::uint32_t pipeline_chunks(Bytes part, std::uint32_t cap) {
  const double wanted = std::ceil(part.value() / kMinPipelineChunkBytes);
  return static_cast<std::uint32_t>(std::clamp(wanted, 1.0, static_cast<double>(std::max(cap, 1U))));
}

std::uint32_t ceil_log2(std::size_t n) {
  std::uint32_t bits = 0;
  while ((std::size_t{1} << bits) < n) ++bits;
  return bits;
}

StepIndex next_index(const std::vector<CollectiveStep>& steps) { return static_cast<StepIndex>(steps.size()); }

// The member at `offset` places after `position` in the group order.
DeviceId member_after(const Collective& c, std::size_t position, std::size_t offset) {
  return c.group[(position + offset) % c.group.size()];
}

std::size_t root_position(const Collective& c) {
  const auto it = std::find(c.group.begin(), c.group.end(), c.root);
  if (it == c.group.end())
    throw InputError(SourceLocation{}, fmt::format("the broadcast root {} is not in the group", c.root));
  return static_cast<std::size_t>(it - c.group.begin());
}

// ---------------------------------------------------------------------------------------------
// Rings, shared by "ring" and "hierarchical".

// Device → the last step that delivered data to it; its next send waits for that step.
using LastInto = std::map<DeviceId, StepIndex>;

// Appends `rounds` rounds of ring steps over each of `rings` (all of the same size n ≥ 2): in each
// round, the member at position i of a ring sends `chunk` to the one at i+1 (mod n). A send waits for
// the previous send into its sender — the previous round's, or for the first round the step recorded
// in `last` (the end of an earlier phase). Reduce-scatter (n−1 rounds), all-gather (n−1 rounds) and
// all-reduce (2(n−1) rounds; Patarasuk & Yuan 2009) all have this shape; only what the receiver does
// with the chunk (add or copy) differs, and that costs no simulated time.
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

// The flow form of append_rings (docs/collectives.md, "Fidelity levels"). At step level the send of
// member i in round r waits for its own previous send and for the send into i of round r−1, so its
// end is a max-plus recurrence t(i,r) = max(t(i,r−1), t(i−1,r−1)) + d_i with d_i = L_i + chunk/B_i;
// its longest path stays on the slowest hop: alone on their links the rounds last
// T = rounds · max_i d_i. Each hop becomes one flow of rounds·chunk delayed by T − L_i − rounds·chunk/B_i
// (= (rounds−1)·L_i on uniform links), which alone also ends at T.
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

// Members grouped by node, nodes in order of first appearance, members in group order.
// @throw InputError unless every node holds the same number of members.
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

// Across nodes, one ring per local rank l: the l-th member of every node.
std::vector<std::vector<DeviceId>> rings_across(const std::vector<std::vector<DeviceId>>& nodes) {
  std::vector<std::vector<DeviceId>> across(nodes.front().size());
  for (std::size_t l = 0; l < across.size(); ++l)
    for (const auto& members : nodes) across[l].push_back(members[l]);
  return across;
}

// ---------------------------------------------------------------------------------------------
// Pipelined algorithms are generated chunk by chunk and then ordered by the slot each step takes in
// the ideal pipeline, so that a device's sends interleave chunks (and trees) as they become ready.

struct SlottedStep {
  std::uint32_t slot;
  CollectiveStep step;
};

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

// Pipelined chain: chain[0] sends `chunks` chunks of `size / chunks` down the chain; chunk c leaves
// chain[j] (slot c + j) once it has arrived from chain[j−1].
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

// ---------------------------------------------------------------------------------------------
// Binary trees (NCCL's ncclGetBtree, src/graph/trees.cc): positions 0..n−1, root 0; a position's
// parent clears its lowest set bit and sets the next one up, or only clears it when that is out of
// range. The tree is in-order: odd positions are leaves, depth ⌈log2 n⌉ at most.

struct Tree {
  std::vector<DeviceId> device;                    // by position
  std::vector<std::vector<std::size_t>> children;  // by position, ascending
  std::vector<std::uint32_t> height;               // leaves 0
  std::vector<std::uint32_t> depth;                // root 0
  std::vector<std::size_t> pre_order;              // root first
};

std::optional<std::size_t> btree_parent(std::size_t position, std::size_t n) {
  if (position == 0) return std::nullopt;
  const std::size_t bit = position & (~position + 1);
  const std::size_t up = (position ^ bit) | (bit << 1);
  return up < n ? up : position ^ bit;
}

// `device[x]` is the member at position x of NCCL's binary tree.
Tree make_tree(std::vector<DeviceId> device) {
  const std::size_t n = device.size();
  Tree tree{std::move(device),
            std::vector<std::vector<std::size_t>>(n),
            std::vector<std::uint32_t>(n, 0),
            std::vector<std::uint32_t>(n, 0),
            {}};
  for (std::size_t x = 1; x < n; ++x) tree.children[*btree_parent(x, n)].push_back(x);
  // Depth-first from the root: pre-order gives depths; its reverse visits children before parents.
  std::vector<std::size_t> stack{0};
  while (!stack.empty()) {
    const std::size_t x = stack.back();
    stack.pop_back();
    tree.pre_order.push_back(x);
    for (auto it = tree.children[x].rbegin(); it != tree.children[x].rend(); ++it) {
      tree.depth[*it] = tree.depth[x] + 1;
      stack.push_back(*it);
    }
  }
  assert(tree.pre_order.size() == n && "every position reaches the root");
  for (auto it = tree.pre_order.rbegin(); it != tree.pre_order.rend(); ++it)
    for (std::size_t child : tree.children[*it]) tree.height[*it] = std::max(tree.height[*it], tree.height[child] + 1);
  return tree;
}

// NCCL's double binary tree (ncclGetDtree) over `members`: the first tree is the binary tree of the
// member order; the second mirrors it (position x holds member n−1−x) when n is even, or shifts it
// by one (position x holds member x+1 mod n) when n is odd, so that a member is interior in at most
// one of the two trees and sends at most 2 × S/2 downwards (Sanders, Speck & Träff 2009).
std::pair<Tree, Tree> make_double_tree(const std::vector<DeviceId>& members) {
  const std::size_t n = members.size();
  std::vector<DeviceId> second(n);
  for (std::size_t x = 0; x < n; ++x) second[x] = n % 2 == 0 ? members[n - 1 - x] : members[(x + 1) % n];
  return {make_tree(members), make_tree(std::move(second))};
}

// Chunks per tree half: ceil((S/2) / 512 KiB), capped at 2⌈log2 p⌉ so that a deep tree's pipeline
// fill (about 2·depth chunk times) is a small part of the whole.
std::uint32_t tree_chunks(Bytes size, std::size_t p) { return pipeline_chunks(size / 2, 2 * ceil_log2(p)); }

// ---------------------------------------------------------------------------------------------

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

class TreeAlgorithm final : public CollectiveAlgorithm {
 public:
  // The generic per-pair flow form was 6.5% off the steps on 8 GPUs (a member's two children send
  // into its port at once at step level; the per-pair form cannot see that overlap): not offered.
  [[nodiscard]] bool supports_flow(CollectiveKind /*kind*/) const override { return false; }

  [[nodiscard]] bool supports(CollectiveKind kind) const override {
    switch (kind) {
      case CollectiveKind::all_reduce:
      case CollectiveKind::broadcast:
        return true;
      case CollectiveKind::all_gather:
      case CollectiveKind::reduce_scatter:
      case CollectiveKind::all_to_all:
        return false;
    }
    return false;
  }

  [[nodiscard]] CollectiveExpansion expand(const Collective& c, const DeviceTopology& /*topology*/) const override {
    const std::size_t p = c.group.size();
    const std::uint32_t chunks = tree_chunks(c.size, p);
    const Bytes chunk = c.size / 2.0 / static_cast<double>(chunks);
    std::vector<SlottedStep> slotted;
    auto add = [&](std::uint32_t slot, DeviceId src, DeviceId dst, std::vector<StepIndex> deps) {
      slotted.push_back({slot, CollectiveStep{src, dst, chunk, std::move(deps)}});
      return static_cast<StepIndex>(slotted.size() - 1);
    };

    if (c.kind == CollectiveKind::all_reduce) {
      // Each tree reduces its half up to its root, which then broadcasts it down. Chunk c of the
      // send from position x goes up at slot c + height(x) and down at c + height(root) + depth(x).
      const auto [first, second] = make_double_tree(c.group);
      for (const Tree* tree : {&first, &second}) {
        const std::size_t n = tree->device.size();
        for (std::uint32_t ch = 0; ch < chunks; ++ch) {
          std::vector<StepIndex> up(n);  // up[x]: the step carrying x's partial sum to its parent
          for (auto it = tree->pre_order.rbegin(); it != tree->pre_order.rend(); ++it) {
            const std::size_t x = *it;
            if (x == 0) continue;
            std::vector<StepIndex> from_children;
            for (std::size_t child : tree->children[x]) from_children.push_back(up[child]);
            up[x] =
                add(ch + tree->height[x], tree->device[x], tree->device[*btree_parent(x, n)], std::move(from_children));
          }
          // The root holds the chunk's full sum once all its children's partial sums arrived; it
          // sends it down, and every member forwards it to its children: down[x] is the step into x.
          std::vector<StepIndex> at_root;
          for (std::size_t child : tree->children[0]) at_root.push_back(up[child]);
          std::vector<StepIndex> down(n);
          for (std::size_t child : tree->children[0])
            down[child] = add(ch + tree->height[0], tree->device[0], tree->device[child], at_root);
          for (std::size_t x : tree->pre_order) {
            if (x == 0) continue;
            for (std::size_t child : tree->children[x])
              down[child] = add(ch + tree->height[0] + tree->depth[x], tree->device[x], tree->device[child], {down[x]});
          }
        }
      }
    } else {
      assert(c.kind == CollectiveKind::broadcast && "tree supports all_reduce and broadcast");
      // Two-tree broadcast: the other p−1 members form a double binary tree; the root sends each
      // half to one tree's root (slot c), which forwards it down (slot c + 1 + depth).
      const std::size_t root = root_position(c);
      std::vector<DeviceId> others;
      for (std::size_t j = 1; j < p; ++j) others.push_back(member_after(c, root, j));
      const auto [first, second] = make_double_tree(others);
      for (const Tree* tree : {&first, &second})
        for (std::uint32_t ch = 0; ch < chunks; ++ch) {
          std::vector<StepIndex> down(tree->device.size());
          down[0] = add(ch, c.root, tree->device[0], {});
          for (std::size_t x : tree->pre_order)
            for (std::size_t child : tree->children[x])
              down[child] = add(ch + 1 + tree->depth[x], tree->device[x], tree->device[child], {down[x]});
        }
    }
    return order_by_slot(std::move(slotted));
  }

  // Each chunk of each of the two trees: all_reduce sends once up and once down every edge
  // (2(p−1)); broadcast sends to each of the p−1 others once.
  [[nodiscard]] std::size_t step_count(const Collective& c, const DeviceTopology& /*topology*/) const override {
    const std::size_t p = c.group.size();
    const std::size_t chunks = tree_chunks(c.size, p);
    return c.kind == CollectiveKind::all_reduce ? 2 * chunks * 2 * (p - 1) : 2 * chunks * (p - 1);
  }
};

class HierarchicalAlgorithm final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] bool supports(CollectiveKind kind) const override { return kind == CollectiveKind::all_reduce; }
  // A window of whole nodes: the intra-node rings are the window's own, the inter-node rings wrap
  // within the window's nodes.
  [[nodiscard]] bool supports_copies(CollectiveKind /*kind*/) const override { return true; }

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
    if (n > 1) plan.phases.push_back(ring_phase_flows(rings_across(nodes), shard / static_cast<double>(n), 2 * (n - 1), cost));
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
               std::make_shared<RingAlgorithm>());
  registry.add("tree",
               "double binary tree: each half of S reduced up then broadcast down one of two complementary trees "
               "of depth log2(p) in k chunks; each device sends <= 2S; T ~ 2S/B + fill, latency O(k + log p)·α",
               "Sanders, Speck & Träff 2009, Two-tree algorithms for full bandwidth broadcast, reduction and scan "
               "(Parallel Computing 35(12)); NCCL 2.4 trees",
               std::make_shared<TreeAlgorithm>());
  registry.add("hierarchical",
               "all_reduce in 3 rings: intra-node reduce-scatter, inter-node all-reduce of S/g among equal local "
               "ranks, intra-node all-gather; 2(g-1)(α_in + S/(g B_in)) + 2(n-1)(α_out + S/(g n B_out))",
               "Jia et al. 2018, Highly scalable deep learning training system with mixed-precision "
               "(arXiv:1807.11205), hierarchical all-reduce; Horovod/NCCL hierarchical all-reduce",
               std::make_shared<HierarchicalAlgorithm>());
  registry.add("direct",
               "every device sends each peer its share at once: all_reduce = direct reduce-scatter + all-gather, "
               "2(p-1) sends of S/p per device, 2 rounds; all_to_all and all_gather (p-1) sends of S/p; "
               "broadcast root sends S to each",
               "Thakur, Rabenseifner & Gropp 2005, Optimization of collective communication operations in MPICH "
               "(IJHPCA 19(1)), pairwise exchange",
               std::make_shared<DirectAlgorithm>());
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
  const std::string name = c.algorithm.empty() ? default_collective_algorithm(c, topology) : c.algorithm;
  const auto& entry = registry.at(name, where);
  const auto able_to = [&](const CollectiveAlgorithm& algorithm) {
    return algorithm.supports(c.kind) && (!flow || algorithm.supports_flow(c.kind));
  };
  if (!able_to(*entry.value)) {
    std::vector<std::string> able;
    for (const auto& other : registry.entries())
      if (able_to(*other.value)) able.push_back(other.name);
    throw InputError(where, fmt::format("collective algorithm '{}' does not support {}{}; algorithms that do: {}",
                                        name, collective_kind_name(c.kind), flow ? " at flow fidelity" : "",
                                        fmt::join(able, ", ")));
  }
  if (c.copies > 1 && !entry.value->supports_copies(c.kind))
    throw InputError(where, fmt::format("collective algorithm '{}' has no symmetric-window form for {} (a group "
                                        "standing for {} copies of itself); ring (all-reduce, all-gather, "
                                        "reduce-scatter) and hierarchical (all-reduce) have one",
                                        name, collective_kind_name(c.kind), c.copies));
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

CollectiveFidelity effective_collective_fidelity(const Collective& c, std::optional<CollectiveFidelity> workload_default,
                                                 const DeviceTopology& topology) {
  if (c.fidelity) return *c.fidelity;
  if (workload_default) return *workload_default;
  if (logical_size(c) <= kStepFidelityMaxGroup) return CollectiveFidelity::step;
  const std::string name = c.algorithm.empty() ? default_collective_algorithm(c, topology) : c.algorithm;
  const auto* entry = builtin_collective_algorithms().find(name);
  return entry != nullptr && entry->value->supports_flow(c.kind) ? CollectiveFidelity::flow : CollectiveFidelity::step;
}

}  // namespace dnnsim
