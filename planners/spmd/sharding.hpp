// SPMD sharding of an operator graph (models/spmd/op_graph.hpp) over a set of devices: the strategy
// space of HAP (Zhang et al., EuroSys'24, §5.2–5.5) and OneFlow SBP (Yuan et al., arXiv 2110.15032,
// §6.1), as specified in docs/research/papers-parallelism.md §5–6.
//
// A distributed tensor relates to its reference (single-device) tensor by a Layout — HAP's property
// {e | I} and OneFlow's SBP signature:
//   replicated     {e | Identity}       B          every device holds all of it
//   split_rows     {e | All-Gather(0)}  S(0)       rows (samples) divided among the devices
//   split_columns  {e | All-Gather(1)}  S(1)       columns (features, heads) divided
//   partial        {e | All-Reduce}     P(sum)     every device holds a full-size addend
// Each operator kind has its rules (HAP's Hoare triples; OneFlow's SBP signatures), e.g. for a matmul
// (split_rows, replicated) → split_rows (data parallel), (replicated, split_columns) → split_columns
// (column parallel), (split_columns, split_rows) → partial (row parallel). A rule whose input layout a
// tensor does not have is reached through one collective (a conversion), fused into its consumer as
// HAP's code does: partial → replicated all-reduce, partial → split reduce-scatter, split → replicated
// all-gather, split rows ↔ split columns all-to-all, replicated → split local slicing (free forward).
//
// The cost of a program Q under sharding ratios B (HAP §5.2, its code's per-instruction form): every
// instruction (an operator with the conversions of its inputs) costs max_j comp_j + max_j comm_j.
// comp_j = 3·FLOPs·B_j / speed_j for a sharded operator (forward + backward = 2× forward), 3·FLOPs /
// speed_j for a replicated one. Collectives cost their forward and their backward mirror (all-gather
// ↔ reduce-scatter, all-to-all ↔ all-to-all, all-reduce both ways, slicing ↔ all-gather) with a linear
// α + size/β per collective kind fitted on the cluster's own collective model; split tensors are padded
// to the largest shard (max_j B_j), which is what makes uneven ratios cost communication. A replicated
// parameter read by a sharded operator has its gradient all-reduced in the backward pass.
//
// Search (HAP §5.4 with its code's simplifications): operators are taken in topological order; a
// state is the set of layouts every live tensor has (with HAP's rule of at most one communication per
// tensor and properties dropped once no later operator reads them); the best cost per distinct state
// is kept, which is HAP's uniform-cost search with memoisation per property set (its code sets the
// admissible estimate to 0). Ratios (HAP §5.5): a linear program over B with epigraph variables per
// instruction, solved with COIN-OR Clp, alternated with the search from B₀ ∝ FLOP/s until the cost
// stops improving. One ratio vector for the whole graph: HAP's per-segment ratios with all-to-all at
// segment boundaries are not built ("HAP-like" in the registry).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/registry.hpp"
#include "models/common/units.hpp"
#include "models/program/task_graph.hpp"
#include "models/spmd/op_graph.hpp"
#include "planners/common/cluster_view.hpp"

namespace dnnsim {

enum class Layout : std::uint8_t { replicated, split_rows, split_columns, partial };
[[nodiscard]] std::string_view layout_name(Layout layout);  // "replicated", "rows", "columns", "partial"

// How a tensor is brought from one layout to another before its consumer runs.
enum class Conversion : std::uint8_t { all_reduce, reduce_scatter, all_gather, all_to_all, slice };
[[nodiscard]] std::string_view conversion_name(Conversion conversion);

// One way an operator can run: the layout each input must have, the output's layout, and whether each
// device computes its share of the FLOPs (sharded) or all of them (replicated computation).
struct ShardingRule {
  std::vector<Layout> inputs;
  Layout output = Layout::replicated;
  bool sharded = false;
};
// The rules of an operator (HAP §5.3, OneFlow's SBP signatures of MatMul and element-wise ops).
[[nodiscard]] std::vector<ShardingRule> sharding_rules(const SpmdOp& op);

// The devices and what moving data among all of them costs.
struct SpmdCluster {
  std::vector<std::string> names;
  std::vector<double> flops_per_second;  // effective rate of each device (peak × efficiency)
  // A collective over all devices: time(size) = alpha + size · seconds_per_byte, per CollectiveKind
  // (all_reduce: size = the buffer; all_gather: the gathered output; reduce_scatter: the input;
  // all_to_all: the whole exchanged tensor).
  struct Linear {
    double alpha = 0;
    double seconds_per_byte = 0;
    [[nodiscard]] double at(double bytes) const { return bytes > 0 ? alpha + bytes * seconds_per_byte : 0.0; }
  };
  Linear all_reduce, all_gather, reduce_scatter, all_to_all;
  [[nodiscard]] std::size_t size() const { return names.size(); }
};
// Fits the linear collective costs on the cluster's analytical collective model
// (models/cost/collective_cost.hpp, ring over the devices in order) and takes each device's peak for
// `dtype` times its efficiency.
[[nodiscard]] SpmdCluster make_spmd_cluster(const ClusterView& cluster, Dtype dtype);

// An operator with the rule chosen for it and the conversions of its inputs.
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
  bool gradient_all_reduce = false;  // a replicated parameter read by a sharded operator
};

struct SpmdProgram {
  std::vector<ShardedOp> ops;  // every operator of the graph, in graph order
  [[nodiscard]] std::string describe(const OpGraph& graph) const;  // one line per operator
  [[nodiscard]] std::size_t collective_count() const;              // forward conversions + gradient syncs
};

// What a cost function charges. `hap`: HAP §5.2 (padded largest shard, linear per collective kind);
// `sbp`: OneFlow's boxing table in bytes (sbp_boxing_bytes) over the all-reduce bandwidth, even split.
enum class SpmdCostModel { hap, sbp };

// The cost t(Q, B) of a program under ratios (HAP §5.2, per instruction max comp + max comm), in seconds.
[[nodiscard]] double program_cost(const OpGraph& graph, const SpmdProgram& program, const std::vector<double>& ratios,
                                  const SpmdCluster& cluster, SpmdCostModel model = SpmdCostModel::hap);

// Which rules a search may use (baselines restrict the space: data parallelism, tensor parallelism).
using RuleFilter = std::function<bool(const SpmdOp& op, const ShardingRule& rule)>;

struct SearchStatistics {
  std::size_t states = 0;       // states kept over all operators
  std::size_t transitions = 0;  // rules × conversions tried
};
// The cheapest program under fixed ratios (see the header comment). `max_states` bounds the states
// kept per operator (the cheapest survive); the default never binds on the zoo's models.
// @throw std::runtime_error when the filter leaves no complete program (a programming error of a baseline).
[[nodiscard]] SpmdProgram search_program(const OpGraph& graph, const std::vector<double>& ratios, const SpmdCluster& cluster,
                                         SpmdCostModel model, const RuleFilter& filter = {},
                                         SearchStatistics* statistics = nullptr, std::size_t max_states = 4096);

// HAP §5.5: the ratios minimising program_cost(Q, ·) for a fixed program — a linear program in B with
// one epigraph variable per instruction for its computation and one for its communication, solved
// with COIN-OR Clp. Σ B = 1, B ≥ 0.
[[nodiscard]] std::vector<double> balance_ratios(const OpGraph& graph, const SpmdProgram& program,
                                                 const SpmdCluster& cluster);

// The shard lengths of a dimension of `length` elements under `ratios` (HAP's rounding: floor, then
// one more to the shards with the largest remainders until they sum to `length`; ties: lower index).
[[nodiscard]] std::vector<std::int64_t> shard_lengths(std::int64_t length, const std::vector<double>& ratios);

// OneFlow's boxing cost (§6.1 table, `ComputCopyCostBetweenTwoSbpParallel`): bytes moved to turn a
// tensor of `bytes` held as `from` on p1 devices into `to` on p2 devices. Same placement (p1 = p2 = p):
// S(i)→S(j) T(p−1)/p, S→B T(p−1), P→S T(p−1), P→B 2T(p−1), B→S 1 (≈ free), same 0, →P a penalty
// (kPartialPenaltyBytes). Different placements: T for a copy plus (p−1)T per side that gathers or reduces.
inline constexpr double kPartialPenaltyBytes = 1e12;
[[nodiscard]] double sbp_boxing_bytes(Layout from, Layout to, double bytes, int p1, int p2);

// A planner's answer.
struct SpmdPlan {
  std::string planner;  // its registry name (set by whoever chose it)
  SpmdProgram program;
  std::vector<double> ratios;   // B_j, one per device, Σ = 1
  double predicted_iteration_s = 0;
  int rounds = 0;               // HAP: search + LP alternations run
  SearchStatistics statistics;
};

class SpmdPlanner {
 public:
  virtual ~SpmdPlanner() = default;
  // `options`: the planner's declared options (Registry::Entry::options), as the scenario gave them.
  [[nodiscard]] virtual SpmdPlan plan(const OpGraph& graph, const SpmdCluster& cluster, const Options& options) const = 0;
};
using SpmdPlannerRegistry = Registry<std::shared_ptr<const SpmdPlanner>>;
// hap, sbp, dp-ev, dp-cp, megatron-tp (`dnnsim list spmd`).
[[nodiscard]] const SpmdPlannerRegistry& builtin_spmd_planners();

}  // namespace dnnsim
