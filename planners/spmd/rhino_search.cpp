#include "planners/spmd/rhino_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "planners/common/integer_program.hpp"
#include "planners/spmd/rhino_graph.hpp"
#include "planners/spmd/spmd_cost.hpp"

namespace dnnsim {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
using Layouts = std::vector<Layout>;  // one per mesh axis

// The strategies of one sub-graph's operators (each an index into its combos), and their cost.
struct SubResult {
  double cost = kInfinity;
  std::vector<int> strategy;  // [op − begin]
};

// A cone's answer for each strategy of its root: the cone's cost and every operator's strategy.
struct ConeSolution {
  std::vector<double> cost;                  // [root strategy]
  std::vector<std::vector<int>> assignment;  // [root strategy][position in cone.ops]
};

class RhinoSearch {
 public:
  RhinoSearch(const OpGraph& graph, const SpmdCluster& cluster, const RhinoSearchOptions& options,
              RhinoStatistics& stats)
      : graph_(graph),
        cluster_(cluster),
        options_(options),
        mesh_(options.mesh),
        ratios_(ShardRatios::even(mesh_)),
        stats_(stats) {
    for (OpId id = 0; id < graph.size(); ++id) {
      std::vector<ShardingRule> rules;
      for (const ShardingRule& r : sharding_rules(graph, id))
        if (!r.sfb) rules.push_back(r);
      // Every combination of a rule per axis.
      std::vector<std::vector<int>> combos{{}};
      for (std::size_t a = 0; a < mesh_.axes.size(); ++a) {
        std::vector<std::vector<int>> next;
        for (const auto& c : combos)
          for (int r = 0; r < static_cast<int>(rules.size()); ++r) {
            next.push_back(c);
            next.back().push_back(r);
          }
        combos = std::move(next);
      }
      rules_.push_back(std::move(rules));
      combos_.push_back(std::move(combos));
    }
    node_cost_.resize(graph.size());
  }

  SpmdProgram run() {
    const std::vector<RhinoSubgraph> subs = decompose(graph_, options_.group, options_.fine);
    stats_.subgraphs = subs.size();
    for (const auto& s : subs) stats_.cones += s.cones.size();
    // DP over the layout of the critical tensor that leaves each sub-graph.
    std::vector<std::map<Layouts, std::pair<double, std::optional<Layouts>>>> table(subs.size());
    std::vector<std::map<Layouts, SubResult>> chosen(subs.size());
    for (std::size_t g = 0; g < subs.size(); ++g) {
      const RhinoSubgraph& sub = subs[g];
      const bool last = g + 1 == subs.size();
      std::vector<std::optional<Layouts>> outs;
      if (last)
        outs.push_back(std::nullopt);
      else
        for (const Layouts& l : output_layouts(sub.end - 1)) outs.push_back(l);
      std::vector<std::optional<Layouts>> ins;
      if (g == 0)
        ins.push_back(std::nullopt);
      else
        for (const auto& [l, v] : table[g - 1]) ins.push_back(l);
      for (const auto& out : outs) {
        const Layouts key = out.value_or(Layouts{});
        for (const auto& in : ins) {
          const double before = in ? table[g - 1].at(*in).first : 0.0;
          if (before >= kInfinity) continue;
          SubResult r = solve(sub, in, out);
          if (before + r.cost < (table[g].count(key) ? table[g][key].first : kInfinity)) {
            table[g][key] = {before + r.cost, in};
            chosen[g][key] = std::move(r);
          }
        }
      }
    }
    // Back from the last sub-graph's best answer.
    std::vector<int> strategy(graph_.size(), 0);
    std::optional<Layouts> key = Layouts{};
    for (std::size_t g = subs.size(); g-- > 0;) {
      const SubResult& r = chosen[g].at(*key);
      std::copy(r.strategy.begin(), r.strategy.end(), strategy.begin() + subs[g].begin);
      key = table[g].at(*key).second;
    }
    return program_of(strategy);
  }

 private:
  Layouts out(OpId op, int s) const {
    Layouts l;
    for (int r : combos_[op][static_cast<std::size_t>(s)]) l.push_back(rules_[op][static_cast<std::size_t>(r)].output);
    return l;
  }
  Layouts need(OpId op, int s, std::size_t k) const {
    Layouts l;
    for (int r : combos_[op][static_cast<std::size_t>(s)])
      l.push_back(rules_[op][static_cast<std::size_t>(r)].inputs[k]);
    return l;
  }
  std::vector<Layouts> output_layouts(OpId op) const {
    std::vector<Layouts> result;
    for (int s = 0; s < static_cast<int>(combos_[op].size()); ++s)
      if (std::find(result.begin(), result.end(), out(op, s)) == result.end()) result.push_back(out(op, s));
    return result;
  }

  std::vector<ShardedOp> sharded(OpId op, int s) const {
    std::vector<ShardedOp> per_axis;
    for (int r : combos_[op][static_cast<std::size_t>(s)])
      per_axis.push_back({op, rules_[op][static_cast<std::size_t>(r)], {}, {}});
    return per_axis;
  }
  static std::vector<const ShardedOp*> pointers(const std::vector<ShardedOp>& v) {
    std::vector<const ShardedOp*> p;
    for (const ShardedOp& s : v) p.push_back(&s);
    return p;
  }

  // Computation and own collectives, and the memory it holds at the memory price.
  double node(OpId op, int s) {
    auto& cache = node_cost_[op];
    if (cache.empty()) cache.assign(combos_[op].size(), -1.0);
    double& cost = cache[static_cast<std::size_t>(s)];
    if (cost >= 0) return cost;
    const OpCost c = op_cost(graph_, mesh_, pointers(sharded(op, s)), {}, ratios_, cluster_);
    cost = c.compute + c.communication - c.conversions;
    if (options_.memory_price > 0) cost += options_.memory_price * memory_bytes(op, s);
    return cost;
  }

  // What operator `op` under strategy s leaves on a device at the end of the forward pass (a
  // parameter's model state, a kept output: spmd_cost.hpp memory_multiplier): its largest share (even
  // shares, HAP's rounding) on every axis it is sharded on, as device_shares gives the lowering.
  double memory_bytes(OpId op, int s) const {
    const double multiplier = memory_multiplier(graph_, op);
    if (multiplier <= 0) return 0;
    double share = 1;
    const std::vector<ShardedOp> per_axis = sharded(op, s);
    for (std::size_t a = 0; a < per_axis.size(); ++a) {
      if (!per_axis[a].rule.sharded) continue;
      const std::int64_t length = std::max<std::int64_t>(1, split_length(graph_, per_axis[a]));
      const std::vector<std::int64_t> lengths = shard_lengths(length, ratios_.of(a, 0));
      share *= static_cast<double>(*std::max_element(lengths.begin(), lengths.end())) / static_cast<double>(length);
    }
    return multiplier * graph_.bytes(op).value() * share;
  }

  // The gradient all-reduce of operand `k` of `op` (strategy s) when it is a weight arriving replicated
  // (layouts `from`) on axes where s computes sharded.
  double gradient_sync(const Layouts& from, OpId op, std::size_t k, int s) {
    if (!weight_root(graph_, graph_.op(op).inputs[k])) return 0.0;
    const std::vector<int>& combo = combos_[op][static_cast<std::size_t>(s)];
    unsigned axes = 0;
    for (std::size_t a = 0; a < combo.size(); ++a) {
      const ShardingRule& rule = rules_[op][static_cast<std::size_t>(combo[a])];
      if (rule.sharded && rule.inputs[k] == Layout::replicated && from[a] == Layout::replicated) axes |= 1u << a;
    }
    if (axes == 0) return 0.0;
    const auto key = std::make_tuple(op, s, k, axes);
    if (const auto found = sync_cost_.find(key); found != sync_cost_.end()) return found->second;
    std::vector<ShardedOp> per_axis = sharded(op, s);
    const double without = op_cost(graph_, mesh_, pointers(per_axis), {}, ratios_, cluster_).communication;
    for (std::size_t a = 0; a < per_axis.size(); ++a)
      if ((axes >> a) & 1u) per_axis[a].synchronizes.push_back(k);
    const double with = op_cost(graph_, mesh_, pointers(per_axis), {}, ratios_, cluster_).communication;
    return sync_cost_[key] = with - without;
  }

  // Operand `k` of `op` (strategy s), produced in layouts `from`: its conversion and gradient sync;
  // infinite when a partial layout would be needed from a complete one.
  double edge(const Layouts& from, OpId op, std::size_t k, int s) {
    const double sync = options_.sync_weight > 0 ? options_.sync_weight * gradient_sync(from, op, k, s) : 0.0;
    const Layouts to = need(op, s, k);
    if (from == to) return sync;
    std::vector<ShardedOp> per_axis = sharded(op, s);
    for (std::size_t a = 0; a < per_axis.size(); ++a) {
      if (from[a] == to[a]) continue;
      const auto c = conversion_between(from[a], to[a]);
      if (!c) return kInfinity;
      per_axis[a].converts.push_back({k, from[a], to[a], *c});
    }
    return sync + conversions_time(graph_, mesh_, pointers(per_axis), {}, ratios_, cluster_);
  }

  // The tree DP of a cone: each operator's best strategy for each strategy of its reader.
  ConeSolution solve_cone(const RhinoCone& cone) {
    const auto position = [&](OpId id) {
      return static_cast<std::size_t>(std::find(cone.ops.begin(), cone.ops.end(), id) - cone.ops.begin());
    };
    const std::size_t n = cone.ops.size();
    std::vector<std::vector<double>> best(n);
    // choice[i][s][k]: the strategy of operand k of cone.ops[i] (when inside the cone) for s.
    std::vector<std::vector<std::vector<int>>> choice(n);
    for (std::size_t i = 0; i < n; ++i) {
      const OpId op = cone.ops[i];
      const std::size_t count = combos_[op].size();
      best[i].assign(count, kInfinity);
      choice[i].assign(count, std::vector<int>(graph_.op(op).inputs.size(), -1));
      for (int s = 0; s < static_cast<int>(count); ++s) {
        double cost = node(op, s);
        for (std::size_t k = 0; k < graph_.op(op).inputs.size() && cost < kInfinity; ++k) {
          const OpId in = graph_.op(op).inputs[k];
          const std::size_t p = position(in);
          if (p >= n) continue;  // from another cone: an edge of the sub-graph's program
          double bestk = kInfinity;
          for (int t = 0; t < static_cast<int>(best[p].size()); ++t) {
            const double c = best[p][static_cast<std::size_t>(t)] + edge(out(in, t), op, k, s);
            if (c < bestk) {
              bestk = c;
              choice[i][static_cast<std::size_t>(s)][k] = t;
            }
          }
          cost += bestk;
        }
        best[i][static_cast<std::size_t>(s)] = cost;
      }
    }
    ConeSolution solution;
    solution.cost = best[n - 1];
    for (int s = 0; s < static_cast<int>(best[n - 1].size()); ++s) {
      std::vector<int> assign(n, -1);
      assign[n - 1] = s;
      for (std::size_t i = n; i-- > 0;) {
        if (assign[i] < 0) continue;
        const OpId op = cone.ops[i];
        for (std::size_t k = 0; k < graph_.op(op).inputs.size(); ++k) {
          const std::size_t p = position(graph_.op(op).inputs[k]);
          if (p < n && choice[i][static_cast<std::size_t>(assign[i])][k] >= 0)
            assign[p] = choice[i][static_cast<std::size_t>(assign[i])][k];
        }
      }
      for (int& a : assign) a = std::max(a, 0);
      solution.assignment.push_back(std::move(assign));
    }
    return solution;
  }

  std::string signature(const RhinoSubgraph& sub, const std::optional<Layouts>& in,
                        const std::optional<Layouts>& out) const {
    std::string key = fmt::format("{}|{}|", in ? layout_key(*in) : "-", out ? layout_key(*out) : "-");
    for (OpId id = sub.begin; id < sub.end; ++id) {
      const SpmdOp& op = graph_.op(id);
      key += fmt::format("{}:{}x{}:{}:{}:{}:{}:{}(", static_cast<int>(op.kind), op.rows, op.columns,
                         op.forward_flops.value(), op.stride, op.experts, op.routed, id == sub.end - 1 && out ? 1 : 0);
      for (OpId in : op.inputs)
        key += in >= sub.begin      ? fmt::format("i{},", in - sub.begin)
               : in == sub.entering ? std::string("E,")
                                    : fmt::format("x{}:{}x{}:{},", static_cast<int>(graph_.op(in).kind),
                                                  graph_.op(in).rows, graph_.op(in).columns, graph_.op(in).stride);
      key += ")";
    }
    return key;
  }
  static std::string layout_key(const Layouts& l) {
    std::string s;
    for (Layout x : l) s += static_cast<char>('0' + static_cast<int>(x));
    return s;
  }

  SubResult solve(const RhinoSubgraph& sub, const std::optional<Layouts>& in, const std::optional<Layouts>& out);
  std::vector<int> integer_program(
      const std::vector<std::vector<double>>& cost,
      const std::map<std::pair<std::size_t, std::size_t>, std::vector<std::vector<double>>>& pairs);

  SpmdProgram program_of(const std::vector<int>& strategy) const {
    SpmdProgram program;
    program.mesh = mesh_;
    program.axes.assign(mesh_.axes.size(), std::vector<ShardedOp>(graph_.size()));
    for (OpId id = 0; id < graph_.size(); ++id) {
      const std::vector<ShardedOp> per_axis = sharded(id, strategy[id]);
      for (std::size_t a = 0; a < per_axis.size(); ++a) program.axes[a][id] = per_axis[a];
    }
    for (OpId id = 0; id < graph_.size(); ++id)
      for (std::size_t a = 0; a < mesh_.axes.size(); ++a)
        for (std::size_t k = 0; k < graph_.op(id).inputs.size(); ++k) {
          const Layout from = program.axes[a][graph_.op(id).inputs[k]].rule.output;
          const Layout to = program.axes[a][id].rule.inputs[k];
          if (const auto c = conversion_between(from, to)) program.axes[a][id].converts.push_back({k, from, to, *c});
        }
    assign_synchronizations(graph_, program);
    return program;
  }

  const OpGraph& graph_;
  const SpmdCluster& cluster_;
  const RhinoSearchOptions& options_;
  Mesh mesh_;
  ShardRatios ratios_;
  RhinoStatistics& stats_;
  std::vector<std::vector<ShardingRule>> rules_;
  std::vector<std::vector<std::vector<int>>> combos_;
  std::vector<std::vector<double>> node_cost_;
  std::map<std::tuple<OpId, int, std::size_t, unsigned>, double> sync_cost_;  // by (op, strategy, operand, axes)
  std::map<std::string, SubResult> memo_;  // by signature, strategies relative to the sub-graph
};

SubResult RhinoSearch::solve(const RhinoSubgraph& sub, const std::optional<Layouts>& in,
                             const std::optional<Layouts>& out) {
  const std::string key = signature(sub, in, out);
  if (auto found = memo_.find(key); found != memo_.end()) {
    ++stats_.ilps_reused;
    return found->second;
  }
  std::vector<ConeSolution> cones;
  for (const RhinoCone& cone : sub.cones) cones.push_back(solve_cone(cone));
  const std::size_t count = sub.cones.size();
  std::vector<int> cone_of(sub.end - sub.begin), position(sub.end - sub.begin);
  for (std::size_t c = 0; c < count; ++c)
    for (std::size_t i = 0; i < sub.cones[c].ops.size(); ++i) {
      cone_of[sub.cones[c].ops[i] - sub.begin] = static_cast<int>(c);
      position[sub.cones[c].ops[i] - sub.begin] = static_cast<int>(i);
    }
  const auto strategy_of = [&](std::size_t c, int s, OpId op) {
    return cones[c].assignment[static_cast<std::size_t>(s)][static_cast<std::size_t>(position[op - sub.begin])];
  };
  // Each cone's cost per root strategy, the entering tensor's conversions added; the tail's layout fixed.
  std::vector<std::vector<double>> cost(count);
  for (std::size_t c = 0; c < count; ++c) {
    const RhinoCone& cone = sub.cones[c];
    for (int s = 0; s < static_cast<int>(cones[c].cost.size()); ++s) {
      double total = cones[c].cost[static_cast<std::size_t>(s)];
      if (cone.root == sub.end - 1 && out && this->out(cone.root, s) != *out) total = kInfinity;
      for (OpId op : cone.ops)
        for (std::size_t k = 0; k < graph_.op(op).inputs.size() && total < kInfinity; ++k)
          if (in && graph_.op(op).inputs[k] == sub.entering) total += edge(*in, op, k, strategy_of(c, s, op));
      cost[c].push_back(total);
    }
  }
  // The edges between cones: a conversion for each pair of their strategies.
  std::map<std::pair<std::size_t, std::size_t>, std::vector<std::vector<double>>> pairs;
  for (std::size_t c2 = 0; c2 < count; ++c2)
    for (OpId op : sub.cones[c2].ops)
      for (std::size_t k = 0; k < graph_.op(op).inputs.size(); ++k) {
        const OpId producer = graph_.op(op).inputs[k];
        if (producer < sub.begin) continue;
        const auto c1 = static_cast<std::size_t>(cone_of[producer - sub.begin]);
        if (c1 == c2) continue;
        auto& matrix = pairs[{c1, c2}];
        if (matrix.empty()) matrix.assign(cost[c1].size(), std::vector<double>(cost[c2].size(), 0.0));
        for (int s1 = 0; s1 < static_cast<int>(cost[c1].size()); ++s1)
          for (int s2 = 0; s2 < static_cast<int>(cost[c2].size()); ++s2)
            matrix[static_cast<std::size_t>(s1)][static_cast<std::size_t>(s2)] +=
                edge(this->out(producer, strategy_of(c1, s1, producer)), op, k, strategy_of(c2, s2, op));
      }
  std::vector<int> pick(count, 0);
  if (pairs.empty()) {
    for (std::size_t c = 0; c < count; ++c)
      pick[c] = static_cast<int>(std::min_element(cost[c].begin(), cost[c].end()) - cost[c].begin());
  } else {
    pick = integer_program(cost, pairs);
  }
  SubResult result;
  result.cost = 0;
  result.strategy.assign(sub.end - sub.begin, 0);
  for (std::size_t c = 0; c < count; ++c) {
    result.cost += cost[c][static_cast<std::size_t>(pick[c])];
    for (OpId op : sub.cones[c].ops) result.strategy[op - sub.begin] = strategy_of(c, pick[c], op);
  }
  for (const auto& [cc, matrix] : pairs)
    result.cost += matrix[static_cast<std::size_t>(pick[cc.first])][static_cast<std::size_t>(pick[cc.second])];
  return memo_[key] = result;
}

// TePDist's BuildILPModel: x[c][s] binary, one strategy per cone; y ≥ x[c][s] + x[c'][s'] − 1 for a
// pair of strategies with a conversion between them (its cost on y); a pair that cannot be
// converted (a partial layout asked of a complete tensor) excluded by x[c][s] + x[c'][s'] ≤ 1.
std::vector<int> RhinoSearch::integer_program(
    const std::vector<std::vector<double>>& cost,
    const std::map<std::pair<std::size_t, std::size_t>, std::vector<std::vector<double>>>& pairs) {
  ++stats_.ilps;
  const std::size_t count = cost.size();
  IntegerProgram program;
  std::vector<std::vector<int>> column(count);
  for (std::size_t c = 0; c < count; ++c)
    for (double v : cost[c])
      column[c].push_back(program.add_column(v < kInfinity ? v : 0.0, 0.0, v < kInfinity ? 1.0 : 0.0));
  for (std::size_t c = 0; c < count; ++c)
    program.add_row(column[c], std::vector<double>(column[c].size(), 1.0), 1.0, 1.0);
  for (const auto& [cc, e] : pairs)
    for (std::size_t s1 = 0; s1 < e.size(); ++s1)
      for (std::size_t s2 = 0; s2 < e[s1].size(); ++s2) {
        const int x1 = column[cc.first][s1], x2 = column[cc.second][s2];
        if (e[s1][s2] >= kInfinity) {
          program.add_row({x1, x2}, {1.0, 1.0}, -IntegerProgram::kUnbounded, 1.0);
        } else if (e[s1][s2] > 0) {
          const int y = program.add_column(e[s1][s2], 0.0, IntegerProgram::kUnbounded, false);
          program.add_row({y, x1, x2}, {1.0, -1.0, -1.0}, -1.0, IntegerProgram::kUnbounded);
        }
      }
  bool infeasible = false;
  const std::optional<IntegerProgram::Solution> solution = program.solve(options_.ilp_seconds, &infeasible);
  // Infeasible is an answer too: that entering and leaving layout cannot be had (its cost is infinite).
  stats_.optimal = stats_.optimal && ((solution && solution->optimal) || infeasible);
  std::vector<int> pick(count, 0);
  for (std::size_t c = 0; c < count; ++c) {
    int chosen = -1;
    for (std::size_t s = 0; s < column[c].size(); ++s)
      if (solution && solution->values[static_cast<std::size_t>(column[c][s])] > 0.5) chosen = static_cast<int>(s);
    // No solution within the limit: each cone's cheapest on its own.
    if (chosen < 0) chosen = static_cast<int>(std::min_element(cost[c].begin(), cost[c].end()) - cost[c].begin());
    pick[c] = chosen;
  }
  return pick;
}

}  // namespace

SpmdProgram rhino_search(const OpGraph& graph, const SpmdCluster& cluster, const RhinoSearchOptions& options,
                         RhinoStatistics* statistics) {
  RhinoStatistics stats;
  SpmdProgram program = RhinoSearch(graph, cluster, options, stats).run();
  if (statistics) *statistics = stats;
  return program;
}

}  // namespace dnnsim
