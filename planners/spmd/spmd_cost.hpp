// The cost of an SPMD program (planners/spmd/sharding.hpp) under sharding ratios: HAP's cost model
// (Zhang et al., EuroSys'24, §5.2, in its code's per-instruction form, alibaba/hap hap.rs
// `get_cost_symbolic`), over every axis of the program's mesh.
//
// Every operator costs max_j comp_j + Σ_axes comm_axis:
//  - comp_j = 3·FLOPs·s_j / speed_j (forward + a backward of 2× forward), s_j = Π over the axes the
//    operator is sharded on of device j's share of the split dimension on that axis (1 replicated).
//    Sufficient-factor broadcasting (SFB, §5.6; Xie et al., "Distributed Machine Learning via
//    Sufficient Factor Broadcasting", 2015) recomputes the weight gradient, FLOPs of one forward, on
//    every device from the gathered factors: (2·s_j + s_j / share on the SFB axis)·FLOPs.
//  - comm: each conversion of an input, forward and its backward mirror (all-gather ↔ reduce-scatter,
//    all-reduce both ways, all-to-all both ways, slicing ↔ all-gather, grouped broadcast ↔ grouped
//    reduce), with α + size/β per collective kind fitted on the cluster's collective model for the
//    axis' groups. Split tensors are padded to the largest shard: a padded collective moves
//    n · max_j B_j · size, which is what makes uneven ratios cost communication; HAP's grouped
//    alternatives move the unpadded size with one call per shard. A tensor's size on one axis is its
//    bytes divided by its split on the other axes. A replicated parameter read by a sharded operator
//    has its gradient all-reduced once (backward), an SFB matmul all-gathers its two factors
//    instead (backward), an expert-parallel experts operator sends its routed rows to their experts
//    and back (two all-to-alls forward, two backward), and a split tensor entering a segment of
//    other ratios is resharded by an all-to-all both ways (HAP's segment boundaries).
// `sbp` prices conversions with OneFlow's boxing bytes (sbp_boxing_bytes) over the all-reduce rate
// instead, on one axis with even shards (the SBP-like planner).
#pragma once

#include <optional>
#include <vector>

#include "models/spmd/op_graph.hpp"
#include "planners/spmd/sharding.hpp"

namespace dnnsim {

enum class SpmdCostModel { hap, sbp };

struct OpCost {
  double compute = 0;        // the slowest device's forward + backward computation
  double communication = 0;  // the operator's collectives, forward and backward
  double conversions = 0;    // the part of `communication` that converts its operands' layouts
  // The parts the backward pass and the overlap need (iteration_time):
  double forward_compute = 0;       // the part of `compute` in the forward pass
  double synchronization = 0;       // the part of `communication` that all-reduces weights' gradients
  double backward_conversions = 0;  // the part of `conversions` in the backward pass (the mirrors)
  double backward_exchanges = 0;    // its own collectives in the backward pass (SFB's gathers, experts' exchanges)
  [[nodiscard]] double total() const { return compute + communication; }
};

// A collective's forward and backward mirror: the time of both, and the backward's part of it.
struct Passes {
  double total = 0;
  double backward = 0;
};

// The time of one conversion of a tensor whose local size on the axis is `bytes` (forward + backward
// mirror). `shares`: the axis' ratios of the consumer's segment (the largest one pads, the non-zero
// ones count the grouped calls); `source_shares`: those of the segment the tensor comes from (empty:
// the same), whose largest shard pads it too.
[[nodiscard]] double conversion_time(Conversion c, double bytes, const std::vector<double>& shares,
                                     const CollectiveLines& lines, const std::vector<double>& source_shares = {});
[[nodiscard]] Passes conversion_times(Conversion c, double bytes, const std::vector<double>& shares,
                                      const CollectiveLines& lines, const std::vector<double>& source_shares = {});

// OneFlow's boxing bytes of `from` → `to` and of the backward mirror on `p` devices, at the rate the
// cluster's all-reduce moves them (an all-reduce of T moves 2T(p−1) bytes in its time for T).
[[nodiscard]] double boxing_time(Layout from, Layout to, double bytes, int p, const CollectiveLines& lines);
[[nodiscard]] Passes boxing_times(Layout from, Layout to, double bytes, int p, const CollectiveLines& lines);

// A collective an operator runs: a conversion of an operand or the all-reduce of a weight's gradient,
// the same one on several axes merged into one over their combined groups (n-D SBP's boxing of the
// same change on several axes: data parallelism over a [2 × 2 × 2] mesh is one all-reduce over 8).
struct OpCollective {
  bool sync = false;           // a gradient all-reduce; else `convert`
  ShardedOp::Convert convert;  // its operand is convert.input (a sync's too)
  std::vector<std::size_t> axes;
};
[[nodiscard]] std::vector<OpCollective> op_collectives(const std::vector<const ShardedOp*>& choices);
// Bytes of operand `input` of `op` on one group of `axes`: its split on the other axes divides it
// (padded to the largest share).
[[nodiscard]] double operand_bytes(const OpGraph& graph, const SpmdOp& op, const std::vector<const ShardedOp*>& choices,
                                   const ShardRatios& ratios, int segment, std::size_t input,
                                   const std::vector<std::size_t>& axes);
// The shares of a group of `axes`: the product of each axis' ratios, over the group's members.
[[nodiscard]] std::vector<double> group_shares(const ShardRatios& ratios, const std::vector<std::size_t>& axes,
                                               int segment);

// The cost of operator `id` (HAP §5.2), its collectives on every axis.
[[nodiscard]] OpCost op_cost(const OpGraph& graph, const SpmdProgram& program, const ShardRatios& ratios,
                             const SpmdCluster& cluster, OpId id, SpmdCostModel model = SpmdCostModel::hap);
// The same for one operator's choices on each axis of `mesh` (`choices[a]` on axis a) while its
// program is being built (segment: HAP's segment of each operator decided so far, or empty).
[[nodiscard]] OpCost op_cost(const OpGraph& graph, const Mesh& mesh, const std::vector<const ShardedOp*>& choices,
                             const std::vector<int>& segment, const ShardRatios& ratios, const SpmdCluster& cluster,
                             SpmdCostModel model = SpmdCostModel::hap);

// The gradient all-reduces of a complete program: on every axis, each parameter replicated there
// whose gradient some operator sharded there makes partial is all-reduced once, charged to its first
// such reader (read directly or through transposes: a tied table's two uses sum before one all-reduce).
void assign_synchronizations(const OpGraph& graph, SpmdProgram& program);
// The parameter at the root of a chain of transposes ending at `tensor`; none when it is not one.
[[nodiscard]] std::optional<OpId> weight_root(const OpGraph& graph, OpId tensor);
// The conversions of one operator's operands alone (op_cost's `conversions`, without its computation).
[[nodiscard]] double conversions_time(const OpGraph& graph, const Mesh& mesh,
                                      const std::vector<const ShardedOp*>& choices, const std::vector<int>& segment,
                                      const ShardRatios& ratios, const SpmdCluster& cluster);
// Σ over operators: the iteration's predicted time t(Q, B), in seconds.
[[nodiscard]] double program_cost(const OpGraph& graph, const SpmdProgram& program, const ShardRatios& ratios,
                                  const SpmdCluster& cluster, SpmdCostModel model = SpmdCostModel::hap);
// The iteration's time on the two streams the lowering (spmd_lowering.hpp) gives every device: the
// forward pass, then the backward in reverse operator order on the compute stream — an operator's
// own backward collectives, its backward computation, then its operands' mirror conversions — while
// each weight's gradient all-reduce runs on the comm stream from the end of its reader's backward
// computation, one after the other: t = max(compute stream's end, comm stream's end). The gradient
// all-reduce of a layer overlaps the backward of the layers before it, as PyTorch DDP's buckets and
// Horovod do (Li et al., "PyTorch Distributed", VLDB 2020, §3.2.3) and the papers' systems assume;
// program_cost is this with no overlap (every collective on the critical path). Contention between
// the two streams' collectives on the network is not modelled.
[[nodiscard]] double iteration_time(const OpGraph& graph, const SpmdProgram& program, const ShardRatios& ratios,
                                    const SpmdCluster& cluster, SpmdCostModel model = SpmdCostModel::hap);

// The forward FLOPs of `op` on each device (its share on every axis it is sharded on, HAP's rounding
// of the split dimension): what the lowering runs.
[[nodiscard]] std::vector<double> device_shares(const OpGraph& graph, const SpmdProgram& program,
                                                const ShardRatios& ratios, OpId op);

// Bytes of model state per parameter byte: the weights, their gradients and Adam's two moments
// (TePDist's evaluator; fp32 throughout, as the lowering allocates).
inline constexpr double kModelStateFactor = 4;
// The bytes a device holds at the end of the forward pass per byte of operator `id`'s share, as the
// lowering (spmd_lowering.cpp) allocates them: a parameter's model state (kModelStateFactor), plus 1
// for an output kept until its backward pass — every operator that computes, and the first operator
// (the model's input, allocated with the state); the others (weights' views, reshapes) hold nothing.
[[nodiscard]] double memory_multiplier(const OpGraph& graph, OpId id);
// Per device, what the lowering holds at the end of the first forward pass, its peak: Σ over operators
// of memory_multiplier × bytes × device_shares.
[[nodiscard]] std::vector<double> device_memory(const OpGraph& graph, const SpmdProgram& program,
                                                const ShardRatios& ratios);
// The mesh axes on which an experts operator `id` is expert parallel (its expert-parallel group).
[[nodiscard]] std::vector<std::size_t> expert_axes(const OpGraph& graph, const SpmdProgram& program, OpId id);
// The unit a split dimension of `op` is divided in: whole experts for experts weights and operators.
[[nodiscard]] std::int64_t split_length(const OpGraph& graph, const ShardedOp& s);

}  // namespace dnnsim
