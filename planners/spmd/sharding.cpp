#include "planners/spmd/sharding.hpp"

#include <ClpSimplex.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <numeric>
#include <stdexcept>

namespace dnnsim {

std::string_view layout_name(Layout layout) {
  switch (layout) {
    case Layout::replicated: return "replicated";
    case Layout::split_rows: return "rows";
    case Layout::split_columns: return "columns";
    case Layout::partial: return "partial";
  }
  return "?";
}

std::string_view conversion_name(Conversion conversion) {
  switch (conversion) {
    case Conversion::all_reduce: return "all-reduce";
    case Conversion::reduce_scatter: return "reduce-scatter";
    case Conversion::all_gather: return "all-gather";
    case Conversion::all_to_all: return "all-to-all";
    case Conversion::slice: return "slice";
  }
  return "?";
}

std::vector<ShardingRule> sharding_rules(const SpmdOp& op) {
  using L = Layout;
  switch (op.kind) {
    case OpKind::input:  // Placeholder-Shard(0), or every device loads the whole batch
      return {{{}, L::split_rows, true}, {{}, L::replicated, false}};
    case OpKind::parameter:  // replicated (gradients all-reduced), or Parameter-Shard(d)
      return {{{}, L::replicated, false}, {{}, L::split_rows, true}, {{}, L::split_columns, true}};
    case OpKind::matmul:
      return {{{L::split_rows, L::replicated}, L::split_rows, true},         // data parallel
              {{L::replicated, L::split_columns}, L::split_columns, true},   // column (feature) parallel
              {{L::split_columns, L::split_rows}, L::partial, true},         // row (reduction) parallel
              {{L::replicated, L::replicated}, L::replicated, false}};       // replicated computation
    case OpKind::elementwise:
      if (op.inputs.size() == 2)  // an addition: linear, so partial sums add too (each device adds all)
        return {{{L::split_rows, L::split_rows}, L::split_rows, true},
                {{L::split_columns, L::split_columns}, L::split_columns, true},
                {{L::replicated, L::replicated}, L::replicated, false},
                {{L::partial, L::partial}, L::partial, false}};
      return {{{L::split_rows}, L::split_rows, true},
              {{L::split_columns}, L::split_columns, true},
              {{L::replicated}, L::replicated, false}};
    case OpKind::attention:  // by samples or by heads
      return {{{L::split_rows}, L::split_rows, true},
              {{L::split_columns}, L::split_columns, true},
              {{L::replicated}, L::replicated, false}};
    case OpKind::rowwise:  // along each row: rows may be split, columns not
      return {{{L::split_rows}, L::split_rows, true}, {{L::replicated}, L::replicated, false}};
    case OpKind::reshape:  // only the rows' split survives a change of layout; partial sums stay partial
      return {{{L::split_rows}, L::split_rows, true},
              {{L::replicated}, L::replicated, false},
              {{L::partial}, L::partial, false}};
    case OpKind::loss:  // a sum: over a split, or of partial addends, it is a partial sum
      return {{{L::split_rows}, L::partial, true},
              {{L::split_columns}, L::partial, true},
              {{L::replicated}, L::replicated, false},
              {{L::partial}, L::partial, false}};
  }
  return {};
}

namespace {

// The collective (if any) that turns `from` into `to`; nullopt when none does (→ partial).
std::optional<Conversion> conversion_between(Layout from, Layout to) {
  using L = Layout;
  if (from == to || to == L::partial) return std::nullopt;
  if (from == L::partial) return to == L::replicated ? Conversion::all_reduce : Conversion::reduce_scatter;
  if (from == L::replicated) return Conversion::slice;
  if (to == L::replicated) return Conversion::all_gather;
  return Conversion::all_to_all;  // rows ↔ columns
}

// Forward + backward time of a conversion of a tensor of `bytes` when the largest shard is `max_share`
// of it (HAP §5.2 code: all-gather fw / reduce-scatter bw, and back; all-reduce both ways; all-to-all
// both ways; slicing is free forward and gathers the gradient backward).
double conversion_time(Conversion c, double bytes, double max_share, const SpmdCluster& cluster) {
  const double n = static_cast<double>(cluster.size());
  const double padded = bytes * max_share * n;
  switch (c) {
    case Conversion::all_reduce: return 2 * cluster.all_reduce.at(bytes);
    case Conversion::reduce_scatter:
    case Conversion::all_gather: return cluster.all_gather.at(padded) + cluster.reduce_scatter.at(padded);
    case Conversion::all_to_all: return 2 * cluster.all_to_all.at(padded);
    case Conversion::slice: return cluster.all_gather.at(padded);
  }
  return 0;
}

// The same conversion priced with OneFlow's boxing bytes, forward and its backward mirror (the
// gradient goes the other way: all-gather ↔ reduce-scatter, all-reduce ↔ all-reduce, all-to-all back,
// slicing ↔ all-gather). The table counts bytes moved by all devices together; an all-reduce of T moves
// 2T(p−1) of them in the time the cluster's all-reduce takes for T, which sets the rate.
double boxing_time(Layout from, Layout to, double bytes, const SpmdCluster& cluster) {
  const int p = static_cast<int>(cluster.size());
  const auto mirror = [&]() -> double {
    if (from == Layout::partial && to == Layout::replicated) return sbp_boxing_bytes(from, to, bytes, p, p);
    if (from == Layout::partial || from == Layout::replicated)  // gradient of a split: gathered
      return sbp_boxing_bytes(to, Layout::replicated, bytes, p, p);
    if (to == Layout::replicated) return sbp_boxing_bytes(Layout::partial, from, bytes, p, p);  // reduce-scattered
    return sbp_boxing_bytes(to, from, bytes, p, p);                                           // all-to-all back
  };
  const double moved = sbp_boxing_bytes(from, to, bytes, p, p) + mirror();
  return moved * cluster.all_reduce.seconds_per_byte / (2.0 * std::max(1, p - 1));
}

double compute_time(const SpmdOp& op, bool sharded, const std::vector<double>& ratios, const SpmdCluster& cluster) {
  double worst = 0;
  for (std::size_t j = 0; j < cluster.size(); ++j)
    worst = std::max(worst, 3 * op.forward_flops.value() * (sharded ? ratios[j] : 1.0) / cluster.flops_per_second[j]);
  return worst;
}

double sharded_op_cost(const OpGraph& graph, const ShardedOp& s, const std::vector<double>& ratios,
                       const SpmdCluster& cluster, SpmdCostModel model) {
  const SpmdOp& op = graph.op(s.op);
  const double max_share = *std::max_element(ratios.begin(), ratios.end());
  double comm = 0;
  for (const ShardedOp::Convert& c : s.converts) {
    const double bytes = graph.bytes(op.inputs[c.input]).value();
    comm += model == SpmdCostModel::hap ? conversion_time(c.conversion, bytes, max_share, cluster)
                                        : boxing_time(c.from, c.to, bytes, cluster);
  }
  if (s.gradient_all_reduce) {
    // The replicated weight read by a sharded operator: its gradient is partial on every device.
    for (std::size_t k = 0; k < op.inputs.size(); ++k)
      if (graph.op(op.inputs[k]).kind == OpKind::parameter && s.rule.inputs[k] == Layout::replicated) {
        const double bytes = graph.bytes(op.inputs[k]).value();
        comm += model == SpmdCostModel::hap ? cluster.all_reduce.at(bytes)
                                            : boxing_time(Layout::partial, Layout::replicated, bytes, cluster) / 2;  // backward only
      }
  }
  return compute_time(op, s.rule.sharded, ratios, cluster) + comm;
}

}  // namespace

SpmdCluster make_spmd_cluster(const ClusterView& view, Dtype dtype) {
  SpmdCluster cluster;
  cluster.names = view.names();
  for (const ClusterDevice& d : view.devices)
    cluster.flops_per_second.push_back(d.gpu.peak(dtype).value_or(d.gpu.peak(Dtype::fp32).value_or(FlopsPerSecond(1e12))).value() *
                                       d.compute_efficiency);
  if (view.size() < 2) return cluster;  // nothing to communicate
  const DeviceTopology topology = view.topology();
  std::vector<DeviceId> group(view.size());
  std::iota(group.begin(), group.end(), DeviceId{0});
  // A collective over every device runs its inter-node steps from all of a node's devices at once, and
  // collective_time leaves link sharing to the caller: an inter-node path gets its bandwidth divided
  // among the devices of its node (one NIC per node; with a NIC per GPU this is pessimistic by that factor).
  std::vector<int> per_node;
  for (const ClusterDevice& d : view.devices) {
    if (per_node.size() <= d.node) per_node.resize(d.node + 1, 0);
    ++per_node[d.node];
  }
  const auto path = [&](DeviceId a, DeviceId b) {
    PathCost cost = view.path(a, b);
    if (view.devices[a].node != view.devices[b].node) cost.bandwidth = cost.bandwidth / per_node[view.devices[a].node];
    return cost;
  };
  // Exact at both ends for the ring's max over its edges of α_e + (S/p)/β_e once S is large; a small
  // and a large size give the latency and the bandwidth terms.
  const auto fit = [&](CollectiveKind kind) {
    const double small = 1.0, large = 1e9;
    const double t_small = collective_time(Collective{kind, group, Bytes(small), ""}, topology, path).value();
    const double t_large = collective_time(Collective{kind, group, Bytes(large), ""}, topology, path).value();
    SpmdCluster::Linear line;
    line.seconds_per_byte = (t_large - t_small) / (large - small);
    line.alpha = std::max(0.0, t_small - small * line.seconds_per_byte);
    return line;
  };
  cluster.all_reduce = fit(CollectiveKind::all_reduce);
  cluster.all_gather = fit(CollectiveKind::all_gather);
  cluster.reduce_scatter = fit(CollectiveKind::reduce_scatter);
  cluster.all_to_all = fit(CollectiveKind::all_to_all);
  return cluster;
}

double sbp_boxing_bytes(Layout from, Layout to, double bytes, int p1, int p2) {
  using L = Layout;
  const double t = bytes;
  if (to == L::partial && from != L::partial) return kPartialPenaltyBytes;
  if (p1 == p2) {
    const double p = p1;
    if (from == to) return 0;
    const bool from_split = from == L::split_rows || from == L::split_columns;
    const bool to_split = to == L::split_rows || to == L::split_columns;
    if (from_split && to_split) return t * (p - 1) / p;  // all-to-all
    if (from_split && to == L::replicated) return t * (p - 1);  // all-gather
    if (from == L::partial && to_split) return t * (p - 1);  // reduce-scatter
    if (from == L::partial && to == L::replicated) return 2 * t * (p - 1);  // all-reduce
    return 1;  // B → S: each device keeps its slice
  }
  // Different placements: the tensor crosses once, plus the gathering or reducing on either side.
  double cost = t;
  if (from == L::partial) cost += (p1 - 1) * t;
  if (to == L::replicated) cost += (p2 - 1) * t;
  return cost;
}

std::vector<std::int64_t> shard_lengths(std::int64_t length, const std::vector<double>& ratios) {
  std::vector<std::int64_t> lengths(ratios.size());
  std::vector<double> remainder(ratios.size());
  std::int64_t given = 0;
  for (std::size_t j = 0; j < ratios.size(); ++j) {
    const double exact = ratios[j] * static_cast<double>(length);
    lengths[j] = static_cast<std::int64_t>(std::floor(exact));
    remainder[j] = exact - static_cast<double>(lengths[j]);
    given += lengths[j];
  }
  std::vector<std::size_t> order(ratios.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return remainder[a] > remainder[b]; });
  for (std::size_t i = 0; given < length; i = (i + 1) % order.size(), ++given) ++lengths[order[i]];
  return lengths;
}

double program_cost(const OpGraph& graph, const SpmdProgram& program, const std::vector<double>& ratios,
                    const SpmdCluster& cluster, SpmdCostModel model) {
  double total = 0;
  for (const ShardedOp& s : program.ops) total += sharded_op_cost(graph, s, ratios, cluster, model);
  return total;
}

std::string SpmdProgram::describe(const OpGraph& graph) const {
  std::string text;
  for (const ShardedOp& s : ops) {
    const SpmdOp& op = graph.op(s.op);
    std::string inputs;
    for (std::size_t k = 0; k < op.inputs.size(); ++k) {
      if (k > 0) inputs += ", ";
      inputs += fmt::format("{}:{}", graph.op(op.inputs[k]).name, layout_name(s.rule.inputs[k]));
      for (const ShardedOp::Convert& c : s.converts)
        if (c.input == k) inputs += fmt::format(" ({} from {})", conversion_name(c.conversion), layout_name(c.from));
    }
    text += fmt::format("{} = {}({}) → {}{}{}\n", op.name, op_kind_name(op.kind), inputs, layout_name(s.rule.output),
                        s.rule.sharded ? "" : ", computed on every device",
                        s.gradient_all_reduce ? ", weight gradient all-reduced" : "");
  }
  return text;
}

std::size_t SpmdProgram::collective_count() const {
  std::size_t count = 0;
  for (const ShardedOp& s : ops) {
    for (const ShardedOp::Convert& c : s.converts) count += c.conversion == Conversion::slice ? 0 : 1;
    count += s.gradient_all_reduce ? 1 : 0;
  }
  return count;
}

namespace {

// The layouts a live tensor has (bit per Layout) and whether it has been communicated once already.
struct LiveTensor {
  OpId id = 0;
  std::uint8_t layouts = 0;
  bool communicated = false;
  bool operator<(const LiveTensor& o) const { return std::tie(id, layouts, communicated) < std::tie(o.id, o.layouts, o.communicated); }
  bool operator==(const LiveTensor& o) const = default;
};
constexpr std::uint8_t bit(Layout l) { return static_cast<std::uint8_t>(1u << static_cast<unsigned>(l)); }

struct SearchNode {
  std::vector<LiveTensor> live;  // sorted by id
  double cost = 0;
  std::size_t parent = 0;        // index into the previous operator's nodes
  ShardedOp choice;
};

}  // namespace

SpmdProgram search_program(const OpGraph& graph, const std::vector<double>& ratios, const SpmdCluster& cluster,
                           SpmdCostModel model, const RuleFilter& filter, SearchStatistics* statistics,
                           std::size_t max_states) {
  const std::vector<OpId> last_use = graph.last_use();
  std::vector<std::vector<SearchNode>> layers(graph.size() + 1);
  layers[0].push_back(SearchNode{});
  SearchStatistics stats;
  for (OpId id = 0; id < graph.size(); ++id) {
    const SpmdOp& op = graph.op(id);
    std::map<std::vector<LiveTensor>, std::size_t> index_of;  // state → position in `next`
    std::vector<SearchNode>& next = layers[id + 1];
    for (std::size_t from = 0; from < layers[id].size(); ++from) {
      const SearchNode& node = layers[id][from];
      for (const ShardingRule& rule : sharding_rules(op)) {
        if (filter && !filter(op, rule)) continue;
        ++stats.transitions;
        std::vector<LiveTensor> live = node.live;
        ShardedOp choice{id, rule, {}, false};
        bool feasible = true;
        for (std::size_t k = 0; k < op.inputs.size() && feasible; ++k) {
          auto it = std::find_if(live.begin(), live.end(), [&](const LiveTensor& t) { return t.id == op.inputs[k]; });
          const Layout want = rule.inputs[k];
          if (it->layouts & bit(want)) continue;
          if (it->communicated) {
            feasible = false;
            break;
          }
          // The cheapest conversion from a layout the tensor has.
          std::optional<ShardedOp::Convert> best;
          double best_time = 0;
          for (Layout have : {Layout::replicated, Layout::split_rows, Layout::split_columns, Layout::partial}) {
            if (!(it->layouts & bit(have))) continue;
            const auto c = conversion_between(have, want);
            if (!c) continue;
            const double bytes = graph.bytes(op.inputs[k]).value();
            const double time = model == SpmdCostModel::hap
                                    ? conversion_time(*c, bytes, *std::max_element(ratios.begin(), ratios.end()), cluster)
                                    : boxing_time(have, want, bytes, cluster);
            if (!best || time < best_time) {
              best = ShardedOp::Convert{k, have, want, *c};
              best_time = time;
            }
          }
          if (!best) {
            feasible = false;
            break;
          }
          choice.converts.push_back(*best);
          it->layouts |= bit(want);
          it->communicated = true;
        }
        if (!feasible) continue;
        for (std::size_t k = 0; k < op.inputs.size(); ++k)
          if (rule.sharded && rule.inputs[k] == Layout::replicated && graph.op(op.inputs[k]).kind == OpKind::parameter)
            choice.gradient_all_reduce = true;
        live.push_back(LiveTensor{id, bit(rule.output), false});
        // Drop what no later operator reads (HAP's third search heuristic).
        std::erase_if(live, [&](const LiveTensor& t) { return last_use[t.id] <= id; });
        std::sort(live.begin(), live.end());
        const double cost = node.cost + sharded_op_cost(graph, choice, ratios, cluster, model);
        const auto [pos, inserted] = index_of.emplace(live, next.size());
        if (inserted) {
          next.push_back(SearchNode{std::move(live), cost, from, std::move(choice)});
        } else if (cost < next[pos->second].cost) {
          next[pos->second].cost = cost;
          next[pos->second].parent = from;
          next[pos->second].choice = std::move(choice);
        }
      }
    }
    if (next.size() > max_states) {
      std::stable_sort(next.begin(), next.end(), [](const SearchNode& a, const SearchNode& b) { return a.cost < b.cost; });
      next.resize(max_states);
    }
    stats.states += next.size();
    if (next.empty())
      throw std::runtime_error(fmt::format("no sharding of operator '{}' is allowed by the planner's rules", op.name));
  }
  // Every program is complete once every operator has run (a loss ends partial or replicated, and
  // both are its reference value up to the scalar all-reduce); the cheapest wins.
  const auto& final_layer = layers.back();
  std::size_t best = 0;
  for (std::size_t i = 1; i < final_layer.size(); ++i)
    if (final_layer[i].cost < final_layer[best].cost) best = i;
  SpmdProgram program;
  program.ops.resize(graph.size());
  for (std::size_t layer = graph.size(), at = best; layer > 0; --layer) {
    program.ops[layer - 1] = layers[layer][at].choice;
    at = layers[layer][at].parent;
  }
  if (statistics) *statistics = stats;
  return program;
}

std::vector<double> balance_ratios(const OpGraph& graph, const SpmdProgram& program, const SpmdCluster& cluster) {
  const int m = static_cast<int>(cluster.size());
  // Columns: B_0..B_{m-1}, then per instruction a computation and a communication epigraph variable.
  const int instructions = static_cast<int>(program.ops.size());
  const int columns = m + 2 * instructions;
  ClpSimplex lp;
  lp.setLogLevel(0);
  lp.resize(0, columns);
  for (int j = 0; j < m; ++j) lp.setColumnBounds(j, 0.0, 1.0);
  for (int i = 0; i < instructions; ++i) {
    lp.setObjectiveCoefficient(m + 2 * i, 1.0);
    lp.setObjectiveCoefficient(m + 2 * i + 1, 1.0);
    lp.setColumnBounds(m + 2 * i, 0.0, COIN_DBL_MAX);
    lp.setColumnBounds(m + 2 * i + 1, 0.0, COIN_DBL_MAX);
  }
  // Σ B_j = 1
  std::vector<int> idx(static_cast<std::size_t>(m));
  std::iota(idx.begin(), idx.end(), 0);
  std::vector<double> ones(static_cast<std::size_t>(m), 1.0);
  lp.addRow(m, idx.data(), ones.data(), 1.0, 1.0);
  const double n = static_cast<double>(m);
  for (int i = 0; i < instructions; ++i) {
    const ShardedOp& s = program.ops[static_cast<std::size_t>(i)];
    const SpmdOp& op = graph.op(s.op);
    const int comp = m + 2 * i, comm = m + 2 * i + 1;
    // Computation: c ≥ 3F·B_j/speed_j (sharded) or c ≥ 3F/speed_j (replicated).
    for (int j = 0; j < m; ++j) {
      const double per_share = 3 * op.forward_flops.value() / cluster.flops_per_second[static_cast<std::size_t>(j)];
      if (s.rule.sharded) {
        const int cols[2] = {comp, j};
        const double vals[2] = {1.0, -per_share};
        lp.addRow(2, cols, vals, 0.0, COIN_DBL_MAX);
      } else {
        const int cols[1] = {comp};
        const double vals[1] = {1.0};
        lp.addRow(1, cols, vals, per_share, COIN_DBL_MAX);
      }
    }
    // Communication: padded collectives are linear in the largest share, so d ≥ Σα + κ·B_j for every j;
    // all-reduces of whole tensors are constants.
    double alpha = 0, slope = 0;
    const auto padded = [&](const SpmdCluster::Linear& line, double bytes) {
      alpha += line.alpha;
      slope += line.seconds_per_byte * bytes * n;
    };
    for (const ShardedOp::Convert& c : s.converts) {
      const double bytes = graph.bytes(op.inputs[c.input]).value();
      switch (c.conversion) {
        case Conversion::all_reduce: alpha += 2 * cluster.all_reduce.at(bytes); break;
        case Conversion::reduce_scatter:
        case Conversion::all_gather:
          padded(cluster.all_gather, bytes);
          padded(cluster.reduce_scatter, bytes);
          break;
        case Conversion::all_to_all:
          padded(cluster.all_to_all, bytes);
          padded(cluster.all_to_all, bytes);
          break;
        case Conversion::slice: padded(cluster.all_gather, bytes); break;
      }
    }
    if (s.gradient_all_reduce)
      for (std::size_t k = 0; k < op.inputs.size(); ++k)
        if (graph.op(op.inputs[k]).kind == OpKind::parameter && s.rule.inputs[k] == Layout::replicated)
          alpha += cluster.all_reduce.at(graph.bytes(op.inputs[k]).value());
    for (int j = 0; j < m; ++j) {
      const int cols[2] = {comm, j};
      const double vals[2] = {1.0, -slope};
      lp.addRow(2, cols, vals, alpha, COIN_DBL_MAX);
    }
  }
  lp.primal();
  if (!lp.isProvenOptimal()) throw std::runtime_error("the sharding-ratio LP has no optimum (a bug: it is always feasible)");
  const double* solution = lp.primalColumnSolution();
  std::vector<double> ratios(solution, solution + m);
  // Clp's tolerances leave tiny negatives and a sum off by 1e-12: clean them for the rounding.
  double sum = 0;
  for (double& r : ratios) sum += (r = std::max(0.0, r));
  for (double& r : ratios) r /= sum;
  return ratios;
}

namespace {

std::vector<double> even(std::size_t m) { return std::vector<double>(m, 1.0 / static_cast<double>(m)); }

std::vector<double> proportional_to_speed(const SpmdCluster& cluster) {
  const double total = std::accumulate(cluster.flops_per_second.begin(), cluster.flops_per_second.end(), 0.0);
  std::vector<double> ratios;
  for (double f : cluster.flops_per_second) ratios.push_back(f / total);
  return ratios;
}

// A fixed-ratio planner: the search within a rule filter, under even or speed-proportional ratios.
class FixedRatioPlanner final : public SpmdPlanner {
 public:
  FixedRatioPlanner(SpmdCostModel model, RuleFilter filter, bool proportional)
      : model_(model), filter_(std::move(filter)), proportional_(proportional) {}

  SpmdPlan plan(const OpGraph& graph, const SpmdCluster& cluster, const Options& /*options*/) const override {
    SpmdPlan plan;
    plan.ratios = proportional_ ? proportional_to_speed(cluster) : even(cluster.size());
    plan.program = search_program(graph, plan.ratios, cluster, model_, filter_, &plan.statistics);
    plan.predicted_iteration_s = program_cost(graph, plan.program, plan.ratios, cluster);
    plan.rounds = 1;
    return plan;
  }

 private:
  SpmdCostModel model_;
  RuleFilter filter_;
  bool proportional_;
};

// HAP §5.1: Q(s) = argmin_Q t(Q, B(s−1)), B(s) = argmin_B t(Q(s), B), from B(0) ∝ FLOP/s, until the
// cost stops improving (its code's stopping rule); the best pair is kept.
class HapPlanner final : public SpmdPlanner {
 public:
  SpmdPlan plan(const OpGraph& graph, const SpmdCluster& cluster, const Options& /*options*/) const override {
    SpmdPlan best;
    std::vector<double> ratios = proportional_to_speed(cluster);
    best.predicted_iteration_s = std::numeric_limits<double>::infinity();
    constexpr int kMaxRounds = 10;
    for (int round = 1; round <= kMaxRounds; ++round) {
      SearchStatistics statistics;
      SpmdProgram program = search_program(graph, ratios, cluster, SpmdCostModel::hap, {}, &statistics);
      std::vector<double> balanced = balance_ratios(graph, program, cluster);
      const double cost = program_cost(graph, program, balanced, cluster);
      if (cost >= best.predicted_iteration_s * (1 - 1e-9)) break;
      best.program = std::move(program);
      best.ratios = balanced;
      best.predicted_iteration_s = cost;
      best.rounds = round;
      best.statistics.states += statistics.states;
      best.statistics.transitions += statistics.transitions;
      ratios = std::move(balanced);
    }
    return best;
  }
};

// Data parallelism: activations split by samples, parameters replicated (their gradients all-reduced).
bool data_parallel_rule(const SpmdOp& op, const ShardingRule& rule) {
  if (op.kind == OpKind::parameter) return rule.output == Layout::replicated;
  if (op.kind == OpKind::loss) return rule.output == Layout::partial;
  return rule.output == Layout::split_rows;
}

// Tensor parallelism (Megatron-like): no split by samples anywhere; weights split by columns or rows.
bool tensor_parallel_rule(const SpmdOp& op, const ShardingRule& rule) {
  if (rule.output == Layout::split_rows && op.kind != OpKind::parameter) return false;
  for (Layout l : rule.inputs)
    if (l == Layout::split_rows && op.kind != OpKind::matmul) return false;
  return op.kind != OpKind::input || rule.output == Layout::replicated;
}

}  // namespace

const SpmdPlannerRegistry& builtin_spmd_planners() {
  static const SpmdPlannerRegistry registry = [] {
    SpmdPlannerRegistry r("SPMD planner");
    r.add("hap", "HAP-like: program search over sharding rules alternated with the uneven-ratio LP (Clp)",
          "Zhang et al., HAP, EuroSys'24, §5.1–5.5 (one ratio vector, no segments)", std::make_shared<HapPlanner>());
    r.add("sbp", "OneFlow-SBP-like: the same search priced with SBP boxing bytes, even split",
          "Yuan et al., OneFlow, arXiv 2110.15032, §6.1 boxing table",
          std::make_shared<FixedRatioPlanner>(SpmdCostModel::sbp, RuleFilter{}, false));
    r.add("dp-ev", "data parallelism, even split of every batch", "HAP §5.7 baseline DP-EV",
          std::make_shared<FixedRatioPlanner>(SpmdCostModel::hap, data_parallel_rule, false));
    r.add("dp-cp", "data parallelism, batch split in proportion to FLOP/s", "HAP §5.7 baseline DP-CP",
          std::make_shared<FixedRatioPlanner>(SpmdCostModel::hap, data_parallel_rule, true));
    r.add("megatron-tp", "tensor parallelism only (column/row-split weights, replicated activations), even split",
          "Shoeybi et al., Megatron-LM, arXiv 1909.08053, §3",
          std::make_shared<FixedRatioPlanner>(SpmdCostModel::hap, tensor_parallel_rule, false));
    return r;
  }();
  return registry;
}

}  // namespace dnnsim
