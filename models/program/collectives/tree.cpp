// "tree": NCCL's double binary tree (Sanders, Speck & Träff 2009; NCCL 2.4): each half of the
// payload reduced up and broadcast down one of two complementary binary trees, pipelined in chunks.
// docs/collectives.md derives its cost.
#include <cassert>
#include <optional>
#include <utility>

#include "models/program/collectives/steps.hpp"

namespace dnnsim::collectives {
namespace {

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

}  // namespace

std::shared_ptr<const CollectiveAlgorithm> tree_algorithm() { return std::make_shared<TreeAlgorithm>(); }

}  // namespace dnnsim::collectives
