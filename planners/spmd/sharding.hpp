// SPMD sharding of an operator graph (models/spmd/op_graph.hpp) over a mesh of devices: the strategy
// space shared by HAP (Zhang et al., EuroSys'24, §5.2–5.6), OneFlow SBP (Yuan et al., arXiv
// 2110.15032, §6.1), Rhino (Zhang et al., arXiv 2302.08141; its code alibaba/TePDist) and SMSG (Wang
// et al., IJPP 51, 2023), as specified in docs/research/papers-parallelism.md §5–6.
//
// A distributed tensor relates to its reference (single-device) tensor, on each axis of the device
// mesh, by a Layout — HAP's property {e | I}, OneFlow's SBP, Rhino's DimDistSpec:
//   replicated     {e | Identity}       B          every device holds all of it
//   split_rows     {e | All-Gather(0)}  S(0)       rows (samples) divided among the devices
//   split_columns  {e | All-Gather(1)}  S(1)       columns (features, heads) divided
//   partial        {e | All-Reduce}     P(sum)     every device holds a full-size addend
//   split_strided                       (Rhino)    each of the columns' `stride` fused blocks divided
//                                                  alike (a fused QKV: every device its heads of Q, K, V)
// Each operator kind has its rules (HAP's Hoare triples; OneFlow's SBP signatures), e.g. for a matmul
// (split_rows, replicated) → split_rows (data parallel), (replicated, split_columns) → split_columns
// (column parallel), (split_columns, split_rows) → partial (row parallel). A rule whose input layout a
// tensor does not have is reached through one collective (a conversion), fused into its consumer as
// HAP's code does: partial → replicated all-reduce, partial → split reduce-scatter (or HAP's grouped
// Reduce of uneven shards), split → replicated all-gather (or HAP's grouped Broadcast), split ↔ split
// all-to-all, replicated → split local slicing (free forward), and a split tensor crossing into
// another HAP segment, whose ratios differ, an all-to-all (a reshard).
//
// A mesh has one axis over all devices (HAP, whose uneven shards follow ratios per segment) or several
// (Rhino's [nodes × GPUs], SMSG's recursive two-way cuts: axes of 2, even shards); a program chooses
// a rule per operator on every axis, independently, as OneFlow's n-D SBP does. Device d has the
// mixed-radix coordinates of d over the axes, the first axis outermost, so that [nodes × GPUs] puts a
// node's GPUs on the last axis.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/registry.hpp"
#include "models/common/units.hpp"
#include "models/program/task_graph.hpp"
#include "models/spmd/op_graph.hpp"
#include "planners/common/cluster_view.hpp"

namespace dnnsim {

enum class Layout : std::uint8_t { replicated, split_rows, split_columns, partial, split_strided };
// "replicated", "rows", "columns", "partial", "strided"
[[nodiscard]] std::string_view layout_name(Layout layout);
[[nodiscard]] inline bool is_split(Layout l) {
  return l == Layout::split_rows || l == Layout::split_columns || l == Layout::split_strided;
}

// How a tensor is brought from one layout to another before its consumer runs.
enum class Conversion : std::uint8_t {
  all_reduce,
  reduce_scatter,
  all_gather,
  all_to_all,
  slice,
  grouped_broadcast,  // HAP §5.6: one Broadcast per shard (NCCL group) instead of a padded All-Gather
  grouped_reduce,     // its mirror: one Reduce per shard instead of a padded Reduce-Scatter
  reshard,            // HAP §5.5: an All-To-All where a split tensor enters a segment of other ratios
};
[[nodiscard]] std::string_view conversion_name(Conversion conversion);
// The collective that turns `from` into `to` (padded HAP-style); none when none does (→ partial, or
// the same layout). `grouped`: the grouped alternative where HAP has one.
[[nodiscard]] std::optional<Conversion> conversion_between(Layout from, Layout to, bool grouped = false);

// One way an operator can run on one mesh axis: the layout each input must have, the output's layout,
// whether each device computes its share of the FLOPs (sharded) or all of them (replicated
// computation), and HAP's sufficient-factor broadcasting (a data-parallel matmul whose weight
// gradient is recomputed on every device from the all-gathered factors instead of all-reduced).
struct ShardingRule {
  std::vector<Layout> inputs;
  Layout output = Layout::replicated;
  bool sharded = false;
  bool sfb = false;
  bool operator==(const ShardingRule&) const = default;
};
// The rules of an operator (HAP §5.3, OneFlow's SBP signatures, Rhino's strided splits), SFB's
// variant of the data-parallel matmul included; strided layouts only on tensors with a stride.
[[nodiscard]] std::vector<ShardingRule> sharding_rules(const OpGraph& graph, OpId op);

// Device axes, outermost first; their product is the device count.
struct Mesh {
  std::vector<int> axes;
  [[nodiscard]] int devices() const;
  // The coordinate of device d on axis a.
  [[nodiscard]] int coordinate(std::size_t device, std::size_t axis) const;
  // Device ids of each group along `axes` (devices that differ only on them), groups and members in
  // device order.
  [[nodiscard]] std::vector<std::vector<DeviceId>> groups(const std::vector<std::size_t>& axes) const;
  [[nodiscard]] std::vector<std::vector<DeviceId>> groups(std::size_t axis) const {
    return groups(std::vector<std::size_t>{axis});
  }
  [[nodiscard]] std::string describe() const;  // "[8 × 8]"
  bool operator==(const Mesh&) const = default;
};

// A collective over one group: time(size) = alpha + size · seconds_per_byte.
struct LinearCost {
  double alpha = 0;
  double seconds_per_byte = 0;
  [[nodiscard]] double at(double bytes) const { return bytes > 0 ? alpha + bytes * seconds_per_byte : 0.0; }
};
// The collectives over the groups of one mesh axis, all groups at once (all_reduce: size = the buffer;
// all_gather: the gathered output; reduce_scatter: the input; all_to_all: each member's send buffer;
// broadcast: the payload), as Collective::size counts them.
struct CollectiveLines {
  LinearCost all_reduce, all_gather, reduce_scatter, all_to_all, broadcast;
};

// How the runtime runs a program's collectives (the spmd workload's keys, docs/spmd.md): the planners
// price them so and the lowering issues them so.
struct SpmdCommOptions {
  std::string all_reduce_algorithm;  // a collective_algorithms.hpp name; empty: the default rule
  // PyTorch DDP's gradient buckets (Li et al., VLDB'20; bucket_cap_mb): the gradient all-reduces of
  // weights whose backward ends one after the other share one call once they hold at least this many
  // bytes; 0: one call per weight.
  double bucket_bytes = 0;
};

// The devices and what moving data among them costs.
struct SpmdCluster {
  std::vector<std::string> names;
  std::vector<double> flops_per_second;  // effective rate of each device (peak × efficiency)
  std::vector<double> memory_bytes;      // each device's memory (0: not known)
  int gpus_per_node = 0;                 // when every node holds as many devices (0: they differ)
  SpmdCommOptions comm;
  CollectiveLines all;                   // over all devices in order: the one axis of a 1-D mesh
  // The lines of the groups along some axes of a mesh (the cluster's collective model on them); empty:
  // `all` for any.
  std::function<CollectiveLines(const Mesh&, const std::vector<std::size_t>& axes)> axis_lines;
  [[nodiscard]] std::size_t size() const { return names.size(); }
  [[nodiscard]] CollectiveLines lines(const Mesh& mesh, const std::vector<std::size_t>& axes) const;
  [[nodiscard]] CollectiveLines lines(const Mesh& mesh, std::size_t axis) const {
    return lines(mesh, std::vector<std::size_t>{axis});
  }
};
// Fits the linear collective costs on the cluster's analytical collective model
// (models/cost/collective_cost.hpp: the default algorithm on each group, or `all_reduce_algorithm` for
// the all-reduces, as the lowering runs them) and takes each device's peak for `dtype` times its
// efficiency.
[[nodiscard]] SpmdCluster make_spmd_cluster(const ClusterView& cluster, Dtype dtype, const SpmdCommOptions& comm = {});

// An operator with the rule chosen for it on one axis and the conversions of its inputs.
struct ShardedOp {
  OpId op = 0;
  ShardingRule rule;
  struct Convert {
    std::size_t input = 0;  // operand index
    Layout from = Layout::replicated;
    Layout to = Layout::replicated;
    Conversion conversion = Conversion::slice;
  };
  std::vector<Convert> converts;
  // The gradient all-reduce of a replicated parameter read by a sharded operator, charged to the
  // first such reader (the parameter's gradient is summed over its readers before one all-reduce).
  std::vector<std::size_t> synchronizes;  // operand indices
};

struct SpmdProgram {
  Mesh mesh;
  std::vector<std::vector<ShardedOp>> axes;  // [axis][operator], every operator in graph order
  std::vector<int> segment;                  // HAP's segment of each operator; empty: one segment
  [[nodiscard]] const std::vector<ShardedOp>& ops() const { return axes.front(); }
  [[nodiscard]] int segment_of(OpId op) const { return segment.empty() ? 0 : segment[op]; }
  [[nodiscard]] int segments() const;
  [[nodiscard]] std::string describe(const OpGraph& graph) const;  // one line per operator
  [[nodiscard]] std::size_t collective_count() const;              // forward conversions + gradient syncs
};

// Sharding ratios: [axis][segment][coordinate on the axis], each vector summing to 1 (HAP's B).
struct ShardRatios {
  std::vector<std::vector<std::vector<double>>> values;
  [[nodiscard]] static ShardRatios even(const Mesh& mesh, int segments = 1);
  [[nodiscard]] const std::vector<double>& of(std::size_t axis, int segment) const { return values[axis][segment]; }
  // Each device's share of a sharded operator of `segment` sharded on every axis.
  [[nodiscard]] std::vector<double> device_shares(const Mesh& mesh, int segment = 0) const;
};

// The largest of `shares`: the device holding it sets a collective's size, as uneven shards are padded
// to it. 1 for no shares (a tensor not sharded is whole).
[[nodiscard]] double largest_share(const std::vector<double>& shares);

// The shard lengths of a dimension of `length` elements under `ratios` (HAP's rounding: floor, then
// one more to the shards with the largest remainders until they sum to `length`; ties: lower index).
[[nodiscard]] std::vector<std::int64_t> shard_lengths(std::int64_t length, const std::vector<double>& ratios);

// OneFlow's boxing cost (§6.1 table, `ComputCopyCostBetweenTwoSbpParallel`): bytes moved to turn a
// tensor of `bytes` held as `from` on p1 devices into `to` on p2 devices. Same placement (p1 = p2 = p):
// S(i)→S(j) T(p−1)/p, S→B T(p−1), P→S T(p−1), P→B 2T(p−1), B→S 1 (≈ free), same 0, →P a penalty
// (kPartialPenaltyBytes). Different placements: T for a copy plus (p−1)T per side that gathers or reduces.
inline constexpr double kPartialPenaltyBytes = 1e12;
[[nodiscard]] double sbp_boxing_bytes(Layout from, Layout to, double bytes, int p1, int p2);

}  // namespace dnnsim
