// SMSG-like (Wang et al., IJPP 51(2/3):109–127, 2023): recursive cuts of the devices, two ways at a
// time (MindSpore rec_core's PartitionForAllDevices: log₂ p rounds), each round choosing for every
// operator one of its rules (planners/spmd/sharding.hpp; a replicated computation only where nothing can
// be cut) by the symbolic costs of smsg_cost.hpp — its
// own cost plus the redistribution against its neighbours' choices — on the shapes the earlier cuts
// left. The round's search is a list homomorphism (SMSG's use of the Third Homomorphism Theorem):
// over the operators in topological order, the best cost between the layouts of the tensors live at
// two boundaries of any stretch of the list is a (min, +) matrix, and the matrix of a concatenation is
// the (min, +) product of its parts' — associative, and exact in integers — so the list can be cut
// anywhere, its pieces solved concurrently (the `parts` option) and combined, with the same costs. The
// strategy is then read off the exact costs-to-go from the left, each operator taking its first rule
// (in rule order) on an optimal path: the same whatever the pieces or their order. No profile or
// device rate enters a choice, so the strategy is the same on any GPU of the same count; its
// predicted time is the shared profiled model's (spmd_cost.hpp), for comparison.
//
// The mesh: one axis of 2 per cut, outermost first ([2 × … × 2] for 2ᵏ devices), and one axis of the
// remaining factor when the count is not a power of two (a q-way cut, the same costs in (q − 1)/q
// units). Shares are even: SMSG does not know the devices' speeds.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <future>
#include <limits>

#include "planners/spmd/smsg_cost.hpp"
#include "planners/spmd/spmd_cost.hpp"
#include "planners/spmd/spmd_planner.hpp"

namespace dnnsim {

namespace {

constexpr std::int64_t kInfinity = std::numeric_limits<std::int64_t>::max() / 4;

// The tensors live between two operators and the layouts each may have (its producer's outputs).
struct Boundary {
  std::vector<OpId> live;
  std::vector<std::vector<Layout>> choices;
  std::size_t states = 1;
  [[nodiscard]] std::size_t index(const std::vector<Layout>& layouts) const {
    std::size_t s = 0;
    for (std::size_t t = 0; t < live.size(); ++t)
      s = s * choices[t].size() +
          static_cast<std::size_t>(std::find(choices[t].begin(), choices[t].end(), layouts[t]) - choices[t].begin());
    return s;
  }
  [[nodiscard]] std::vector<Layout> layouts(std::size_t s) const {
    std::vector<Layout> result(live.size());
    for (std::size_t t = live.size(); t-- > 0;) {
      result[t] = choices[t][s % choices[t].size()];
      s /= choices[t].size();
    }
    return result;
  }
};

struct Step {
  std::size_t from = 0, to = 0;
  std::int64_t cost = 0;
  std::size_t rule = 0;
};

using Matrix = std::vector<std::vector<std::int64_t>>;  // [state at the start][state at the end]

class CutRound {
 public:
  // `remaining`: the devices of this cut and the later ones; `scale`: a step's cost's integer units
  // per element (a share of a collective is a fraction of an element).
  CutRound(const OpGraph& graph, const std::vector<LocalShape>& shapes, const MergedCollectives& merged, int q,
           Reach remaining, double scale)
      : graph_(graph),
        shapes_(shapes),
        merged_(merged),
        remaining_(remaining),
        scale_(scale),
        last_use_(graph.last_use()) {
    // Every operator that computes is cut (rec_partition's rounds cut every operator); one that cannot
    // be keeps its replicated computation. Inputs, parameters and the operators that only re-lay data
    // out (no FLOPs: reshapes, transposes, concatenations) take any layout, following their neighbours.
    for (OpId id = 0; id < graph.size(); ++id) {
      const bool leaf = graph.op(id).forward_flops.value() <= 0;
      std::vector<ShardingRule> rules, replicated;
      for (const ShardingRule& r : sharding_rules(graph, id)) {
        if (r.sfb || !cuttable(graph, id, r, shapes, q)) continue;
        (leaf || r.sharded || r.output != Layout::replicated ? rules : replicated).push_back(r);
      }
      rules_.push_back(rules.empty() ? replicated : rules);
    }
    boundaries_.resize(graph.size() + 1);
    for (OpId id = 0; id < graph.size(); ++id) {
      Boundary next;
      for (std::size_t t = 0; t < boundaries_[id].live.size(); ++t)
        if (last_use_[boundaries_[id].live[t]] > id) {
          next.live.push_back(boundaries_[id].live[t]);
          next.choices.push_back(boundaries_[id].choices[t]);
        }
      if (last_use_[id] > id) {
        std::vector<Layout> outputs;
        for (const ShardingRule& r : rules_[id])
          if (std::find(outputs.begin(), outputs.end(), r.output) == outputs.end()) outputs.push_back(r.output);
        next.live.push_back(id);
        next.choices.push_back(outputs);
      }
      for (const auto& c : next.choices) next.states *= c.size();
      boundaries_[id + 1] = std::move(next);
    }
    for (OpId id = 0; id < graph.size(); ++id) steps_.push_back(transitions(id));
  }

  // The (min, +) matrix of operators [begin, end): the homomorphism's value on that piece.
  Matrix piece(std::size_t begin, std::size_t end) const {
    Matrix m(boundaries_[begin].states, std::vector<std::int64_t>(boundaries_[begin].states, kInfinity));
    for (std::size_t s = 0; s < m.size(); ++s) m[s][s] = 0;
    for (std::size_t i = begin; i < end; ++i) {
      Matrix next(m.size(), std::vector<std::int64_t>(boundaries_[i + 1].states, kInfinity));
      for (std::size_t s = 0; s < m.size(); ++s)
        for (const Step& step : steps_[i])
          if (m[s][step.from] < kInfinity) next[s][step.to] = std::min(next[s][step.to], m[s][step.from] + step.cost);
      m = std::move(next);
    }
    return m;
  }

  // The exact cost-to-go at every boundary, the list cut into `parts` pieces solved concurrently.
  std::vector<std::vector<std::int64_t>> costs_to_go(int parts) const {
    const std::size_t n = graph_.size();
    std::vector<std::size_t> cuts{0};
    for (int p = 1; p < parts; ++p) cuts.push_back(n * static_cast<std::size_t>(p) / static_cast<std::size_t>(parts));
    cuts.push_back(n);
    std::vector<std::future<Matrix>> pieces;
    for (std::size_t c = 0; c + 1 < cuts.size(); ++c)
      pieces.push_back(std::async(parts > 1 ? std::launch::async : std::launch::deferred,
                                  [this, b = cuts[c], e = cuts[c + 1]] { return piece(b, e); }));
    std::vector<std::vector<std::int64_t>> go(n + 1);
    go[n].assign(boundaries_[n].states, 0);
    std::vector<Matrix> matrices;
    for (auto& f : pieces) matrices.push_back(f.get());
    // The pieces' ends, right to left, then each piece's inside (concurrently).
    for (std::size_t c = matrices.size(); c-- > 0;) {
      const Matrix& m = matrices[c];
      std::vector<std::int64_t>& v = go[cuts[c]];
      v.assign(m.size(), kInfinity);
      for (std::size_t s = 0; s < m.size(); ++s)
        for (std::size_t t = 0; t < m[s].size(); ++t)
          if (m[s][t] < kInfinity && go[cuts[c + 1]][t] < kInfinity)
            v[s] = std::min(v[s], m[s][t] + go[cuts[c + 1]][t]);
    }
    std::vector<std::future<void>> insides;
    for (std::size_t c = 0; c + 1 < cuts.size(); ++c)
      insides.push_back(std::async(parts > 1 ? std::launch::async : std::launch::deferred, [&, c] {
        for (std::size_t i = cuts[c + 1]; i-- > cuts[c] + 1;) go[i] = back(i, go[i + 1]);
      }));
    for (auto& f : insides) f.get();
    return go;
  }

  // Left to right, each operator's first rule on an optimal path. @return the layout of every tensor
  // as produced and each operator's rule.
  std::vector<std::size_t> choose(const std::vector<std::vector<std::int64_t>>& go) const {
    std::vector<std::size_t> chosen(graph_.size());
    std::size_t state = 0;
    for (OpId id = 0; id < graph_.size(); ++id) {
      std::size_t best = steps_[id].size();
      for (std::size_t k = 0; k < steps_[id].size(); ++k) {
        const Step& step = steps_[id][k];
        if (step.from != state || go[id + 1][step.to] >= kInfinity || step.cost + go[id + 1][step.to] != go[id][state])
          continue;
        if (best == steps_[id].size() || step.rule < steps_[id][best].rule) best = k;
      }
      chosen[id] = steps_[id][best].rule;
      state = steps_[id][best].to;
    }
    return chosen;
  }

  [[nodiscard]] const std::vector<ShardingRule>& rules(OpId id) const { return rules_[id]; }
  [[nodiscard]] std::size_t states() const {
    std::size_t total = 0;
    for (const Boundary& b : boundaries_) total += b.states;
    return total;
  }

 private:
  std::vector<std::int64_t> back(std::size_t i, const std::vector<std::int64_t>& after) const {
    std::vector<std::int64_t> v(boundaries_[i].states, kInfinity);
    for (const Step& step : steps_[i])
      if (after[step.to] < kInfinity) v[step.from] = std::min(v[step.from], step.cost + after[step.to]);
    return v;
  }

  // Every (state before, rule) of operator `id`: its cost and the state after.
  std::vector<Step> transitions(OpId id) const {
    const SpmdOp& op = graph_.op(id);
    const Boundary& before = boundaries_[id];
    const Boundary& after = boundaries_[id + 1];
    std::vector<Step> steps;
    for (std::size_t s = 0; s < before.states; ++s) {
      const std::vector<Layout> layouts = before.layouts(s);
      for (std::size_t r = 0; r < rules_[id].size(); ++r) {
        const ShardingRule& rule = rules_[id][r];
        double cost = symbolic_rule_cost(graph_, id, rule, shapes_, reach(merged_.exchange(id)));
        bool feasible = true;
        for (std::size_t k = 0; k < op.inputs.size() && feasible; ++k) {
          const auto at = std::find(before.live.begin(), before.live.end(), op.inputs[k]) - before.live.begin();
          const Layout have = layouts[static_cast<std::size_t>(at)];
          if (rule.inputs[k] == Layout::partial && have != Layout::partial) feasible = false;
          cost += symbolic_operand_cost(graph_, id, rule, k, have, shapes_,
                                        reach(merged_.conversion(id, k, have, rule.inputs[k])));
        }
        if (!feasible) continue;
        std::vector<Layout> next;
        for (std::size_t t = 0; t < after.live.size(); ++t) {
          const OpId tensor = after.live[t];
          next.push_back(tensor == id
                             ? rule.output
                             : layouts[static_cast<std::size_t>(
                                   std::find(before.live.begin(), before.live.end(), tensor) - before.live.begin())]);
        }
        steps.push_back({s, after.index(next), std::llround(cost * scale_), r});
      }
    }
    return steps;
  }

  // The reach of a collective already spanning `span`, grown by this cut and the later ones.
  [[nodiscard]] Reach reach(Span span) const {
    Reach r = remaining_;
    r.merged = span.devices;
    r.merged_nodes = span.nodes;
    return r;
  }

  const OpGraph& graph_;
  const std::vector<LocalShape>& shapes_;
  const MergedCollectives& merged_;
  Reach remaining_;  // the devices and nodes of this cut and the later ones, and a node's devices
  double scale_;
  std::vector<OpId> last_use_;
  std::vector<std::vector<ShardingRule>> rules_;
  std::vector<Boundary> boundaries_;
  std::vector<std::vector<Step>> steps_;
};

// Two-way cuts while the count is even, then one cut of what is left.
std::vector<int> cut_sizes(int devices) {
  std::vector<int> sizes;
  while (devices % 2 == 0 && devices > 1) {
    sizes.push_back(2);
    devices /= 2;
  }
  if (devices > 1) sizes.push_back(devices);
  if (sizes.empty()) sizes.push_back(1);
  return sizes;
}

OptionSchema smsg_options() {
  OptionSchema schema;
  schema
      .integer("parts", 1, "pieces the operator list is cut into and solved concurrently (the same strategy whatever)")
      .at_least(1);
  return schema;
}

}  // namespace

class SmsgPlanner final : public SpmdPlanner {
 public:
  SpmdPlan plan(const OpGraph& graph, const SpmdCluster& cluster, const Options& options) const override {
    const int parts = static_cast<int>(std::min<std::int64_t>(
        options.integer("parts"), static_cast<std::int64_t>(std::max<std::size_t>(1, graph.size()))));
    SpmdPlan plan;
    plan.program.mesh.axes = cut_sizes(static_cast<int>(cluster.size()));
    std::vector<LocalShape> shapes;
    for (const SpmdOp& op : graph.ops()) shapes.push_back({op.rows, op.columns});
    MergedCollectives merged(graph);
    // Costs in integers, so that the pieces of the homomorphism add up exactly: 1/(2·devices) of an
    // element (the shares are rounded there, the same whatever the pieces).
    const double scale = 2.0 * static_cast<double>(cluster.size());
    // Devices are numbered node by node and the cuts made outermost first: a cut crosses nodes while
    // what it leaves (the later cuts' devices) is a whole number of nodes.
    const int devices = plan.program.mesh.devices();
    const int per_node =
        cluster.gpus_per_node > 0 && devices % cluster.gpus_per_node == 0 ? cluster.gpus_per_node : devices;
    Reach remaining{1, devices, 1, devices / per_node, per_node};
    for (int q : plan.program.mesh.axes) {
      const bool across_nodes = remaining.remaining / q >= per_node;
      const CutRound round(graph, shapes, merged, q, remaining, scale);
      remaining.remaining /= q;
      if (across_nodes) remaining.remaining_nodes /= q;
      const auto go = round.costs_to_go(parts);
      const std::vector<std::size_t> chosen = round.choose(go);
      std::vector<ShardedOp> ops;
      for (OpId id = 0; id < graph.size(); ++id) ops.push_back({id, round.rules(id)[chosen[id]], {}, {}});
      for (OpId id = 0; id < graph.size(); ++id)
        for (std::size_t k = 0; k < graph.op(id).inputs.size(); ++k) {
          const Layout from = ops[graph.op(id).inputs[k]].rule.output, to = ops[id].rule.inputs[k];
          if (const auto c = conversion_between(from, to)) ops[id].converts.push_back({k, from, to, *c});
        }
      for (OpId id = 0; id < graph.size(); ++id) shapes[id] = after_cut(shapes[id], ops[id].rule.output, q);
      merged.record(graph, ops, q, across_nodes);
      // A round's cost is what its cut adds to the collectives the earlier cuts began, so it is negative
      // where merging them leaves fewer rings crossing the nodes' interfaces (smsg_cost.hpp, Reach).
      plan.report.push_back(fmt::format("cut of {} {}: symbolic cost {:+.0f} elements per device and interface", q,
                                        across_nodes ? "across nodes" : "inside nodes",
                                        static_cast<double>(go[0][0]) / scale));
      plan.statistics.states += round.states();
      plan.program.axes.push_back(std::move(ops));
    }
    assign_synchronizations(graph, plan.program);
    plan.ratios = ShardRatios::even(plan.program.mesh);
    plan.predicted_iteration_s = iteration_time(graph, plan.program, plan.ratios, cluster);
    plan.rounds = static_cast<int>(plan.program.mesh.axes.size());
    return plan;
  }
};

void register_smsg_planner(SpmdPlannerRegistry& registry) {
  registry.add("smsg",
               "SMSG-like: recursive two-way cuts by symbolic data costs (no profile), each round a list homomorphism "
               "over the operators; even shares",
               "Wang et al., SMSG, IJPP 51(2/3) 2023; MindSpore rec_core (rec_cost.cc, rec_partition.cc)",
               std::make_shared<SmsgPlanner>(), smsg_options());
}

}  // namespace dnnsim
