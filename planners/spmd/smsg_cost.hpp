// SMSG's symbolic cost model (Wang, Tachon, Li, Robert, Limet, "SMSG: Profiling-Free Parallelism
// Modeling for Distributed Training of DNN", IJPP 51(2/3):109–127, 2023): every cost is an amount of
// data — tensor elements computed redundantly or communicated per device and training iteration —
// with no device speed, bandwidth, profile or calibration in it, so the strategy it ranks does not
// depend on the hardware. The recursive two-way cuts and the per-operator cuts follow its public
// lineage, MindSpore's recursive partitioner (mindspore/ccsrc/frontend/parallel/auto_parallel/rec_core,
// rec_cost.cc); the amounts are those of the collectives the lowering runs (NCCL-style rings and
// all-to-alls, forward and their backward mirrors as planners/spmd/spmd_cost.hpp boxing_times pairs them).
//
// Costs are counted on the local shapes left by the earlier cuts (E: a tensor's shard there), per
// device, forward and backward together:
//   an operator computed whole on every device (nothing of it can be cut)  its output's elements
//   a weight of W elements read whole by a cut operator                     its gradient's all-reduce
//   an expert-parallel experts operator                                     its dispatch and combine
//                                                                           all-to-alls, both passes
//   a tensor read in another layout than its producer's (rec_cost's CostRedis, the cost against the
//   neighbours' choices): split → replicated an all-gather and a reduce-scatter; partial → split a
//   reduce-scatter and an all-gather; partial → replicated an all-reduce each way; replicated → split
//   a slice whose gradient is gathered; one split → another an all-to-all each way.
// A ring gather over p devices moves (p − 1)/p of the tensor per device (an all-reduce twice that),
// an all-to-all (p − 1)/p of the device's 1/p. MindSpore instead weights every redistributed element
// by a flat REDIS_COEF = 16 against its operators' a·b/2: that made reading VGG's classifier input in
// another layout dearer than the 25088 × 4096 gradient it saves.
//
// Topology (the mesh's cuts are made outermost first over the devices in node order, so the first
// cuts cross nodes): the elements through a node's network interface are counted beside those of a
// device. A ring over p devices spanning n > 1 nodes, k = p/n of them per node, leaves each node by one
// link, and the node's D devices run D/k such rings at once: D/k × the ring's per-device amount. An
// all-to-all sends (p − k)/p of each device's piece off its node: D × that. Counts, not times (no
// bandwidth enters): a collective that stays inside a node costs its devices' data; one that crosses
// nodes, also its interfaces' — so a gradient all-reduce over every device (one ring, n × k) costs
// its interface as much as a device, an all-to-all over them D (p − k)/(p − 1) times as much, and a
// collective on a cut across nodes alone (k = 1) D times as much. SMSG's model counts the amount of
// data communicated; where that data goes follows from the cut order and the devices per node alone
// (no speed, bandwidth or profile), so the strategy stays the same on any GPU of the same shape.
//
// The lowering runs one collective over every axis on which the same operand is converted the same
// way (spmd_cost.hpp op_collectives), so a cut is priced at its share of that merged collective
// (Reach): what it moves more when the devices it already spans (`merged`, the earlier cuts with the
// same collective) grow by the devices of this cut and the later ones (`remaining`, as if the choice
// were kept on them). Priced cut by cut in full, a replicated weight's gradient would count log₂ p
// times the one all-reduce over p devices, and an all-to-all — whose per-device piece shrinks as its
// group grows — 2 to p/2 times its merged size; expert parallelism, an all-to-all, then never won a
// cut against gathering the tokens.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "planners/spmd/sharding.hpp"

namespace dnnsim {

// A tensor's rows × columns on one device after the cuts made so far.
struct LocalShape {
  std::int64_t rows = 0;
  std::int64_t columns = 0;
  [[nodiscard]] std::int64_t elements() const { return rows * columns; }
};

// How far a collective reaches: `merged`, the devices of the earlier cuts it already runs over (the
// same collective on each); `remaining`, the devices of this cut and the later ones; of those, the
// nodes they span (`merged_nodes`, `remaining_nodes`: products of the sizes of the cuts that cross
// nodes), and `node_devices`, the devices of a node, which share its network interface.
struct Reach {
  int merged = 1;
  int remaining = 2;
  int merged_nodes = 1;
  int remaining_nodes = 1;
  int node_devices = 1;
};

// The devices and nodes a collective already spans (Reach's merged and merged_nodes).
struct Span {
  int devices = 1;
  int nodes = 1;
};

// The earlier cuts' reach of each operator's collectives: the product of the sizes of the cuts on
// which the same conversion of an operand (or the same weight's gradient) ran, and of those on which
// an experts operator exchanged its rows; and of those of them that cross nodes.
class MergedCollectives {
 public:
  explicit MergedCollectives(const OpGraph& graph);
  [[nodiscard]] Span conversion(OpId id, std::size_t input, Layout from, Layout to) const;
  [[nodiscard]] Span exchange(OpId id) const { return exchanges_[id]; }
  // Records a cut of `q` (across nodes or not) that ran every operator by its rule in `ops`.
  void record(const OpGraph& graph, const std::vector<ShardedOp>& ops, int q, bool across_nodes);

 private:
  std::vector<std::vector<std::map<std::pair<Layout, Layout>, Span>>> conversions_;  // [op][input]
  std::vector<Span> exchanges_;                                                      // [op]
};

// Whether `rule` makes operator `id` read operand `k`, a weight, whole while computing a shard (its
// gradient is then summed over the devices).
[[nodiscard]] bool reads_weight_whole(const OpGraph& graph, OpId id, const ShardingRule& rule, std::size_t k);
// The symbolic cost of running operator `id` by `rule` on a cut, its operands and output of `shapes`
// (indexed by operator id: each tensor's local shape), in elements per device: what the rule itself
// computes redundantly or exchanges (experts), whatever its neighbours chose.
[[nodiscard]] double symbolic_rule_cost(const OpGraph& graph, OpId id, const ShardingRule& rule,
                                        const std::vector<LocalShape>& shapes, Reach reach);
// What operand `k` of operator `id` costs when its producer left it as `have` and `rule` reads it: a
// weight read whole by a cut operator its gradient's all-reduce, any other tensor its redistribution.
[[nodiscard]] double symbolic_operand_cost(const OpGraph& graph, OpId id, const ShardingRule& rule, std::size_t k,
                                           Layout have, const std::vector<LocalShape>& shapes, Reach reach);
// A tensor of `elements` local elements produced as `from` and read as `to`: the elements per device
// its conversion moves, forward and backward.
[[nodiscard]] double symbolic_redistribution(Layout from, Layout to, double elements, Reach reach);

// Whether `rule` can cut operator `id` on an axis of `q` devices: every dimension it splits keeps at
// least one row or column per device.
[[nodiscard]] bool cuttable(const OpGraph& graph, OpId id, const ShardingRule& rule,
                            const std::vector<LocalShape>& shapes, int q);
// The local shape of a tensor of `shape` after a cut of `q` that leaves it in `layout`.
[[nodiscard]] LocalShape after_cut(LocalShape shape, Layout layout, int q);

}  // namespace dnnsim
