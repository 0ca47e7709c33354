// Shared pieces of the SPMD planners' tests (planners/spmd): clusters with collective costs written
// out, a transformer MLP as a graph, a planner's plan with chosen options, the rule chosen for an
// operator. Pure: no engine.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "models/spmd/op_graph.hpp"
#include "planners/spmd/spmd_planner.hpp"
#include "tests/support/options.hpp"

namespace dnnsim::testing {

// `flops.size()` devices at `flops`, collectives over any group costing alpha + bytes/bandwidth
// (all-reduce moving 2 bytes per byte of buffer, as a ring does; a broadcast 1).
inline SpmdCluster cluster_of(std::vector<double> flops, double bandwidth = 10e9, double alpha = 10e-6) {
  SpmdCluster c;
  for (std::size_t j = 0; j < flops.size(); ++j) c.names.push_back("gpu" + std::to_string(j));
  c.flops_per_second = std::move(flops);
  c.memory_bytes.assign(c.names.size(), 80e9);
  c.all.all_reduce = {alpha, 2 / bandwidth};
  c.all.all_gather = {alpha, 1 / bandwidth};
  c.all.reduce_scatter = {alpha, 1 / bandwidth};
  c.all.all_to_all = {alpha, 1 / bandwidth};
  c.all.broadcast = {alpha, 1 / bandwidth};
  return c;
}

// x[rows × h] · w1[h × 4h] → GeLU → · w2[4h × h] → LayerNorm → loss: a transformer MLP block.
inline OpGraph mlp(std::int64_t rows, std::int64_t hidden) {
  OpGraph g("mlp", Dtype::fp32);
  const OpId x = g.add({"x", OpKind::input, {}, rows, hidden});
  const OpId w1 = g.add({"w1", OpKind::parameter, {}, hidden, 4 * hidden});
  const OpId h = g.add({"h", OpKind::matmul, {x, w1}, rows, 4 * hidden, Flop(2.0 * rows * hidden * 4 * hidden)});
  const OpId a = g.add({"gelu", OpKind::elementwise, {h}, rows, 4 * hidden, Flop(8.0 * rows * 4 * hidden)});
  const OpId w2 = g.add({"w2", OpKind::parameter, {}, 4 * hidden, hidden});
  const OpId y = g.add({"y", OpKind::matmul, {a, w2}, rows, hidden, Flop(2.0 * rows * hidden * 4 * hidden)});
  const OpId n = g.add({"norm", OpKind::rowwise, {y}, rows, hidden, Flop(5.0 * rows * hidden)});
  g.add({"loss", OpKind::loss, {n}, 1, 1, Flop(static_cast<double>(rows))});
  return g;
}

// x[64 × 16] through `experts` experts of 16 → 32 → 16 (w1, w2 stacked by expert), 2 routed rows per
// input row, a gate's routing as an input; its experts operator is `experts`. No loss: for costing it.
inline OpGraph experts_layer(int experts) {
  OpGraph g("moe", Dtype::fp32);
  const OpId x = g.add({"x", OpKind::input, {}, 64, 16});
  const OpId w1 = g.add({"w1", OpKind::parameter, {}, experts * 16, 32});
  const OpId w2 = g.add({"w2", OpKind::parameter, {}, experts * 32, 16});
  const OpId gate = g.add({"gate", OpKind::input, {}, 64, experts});
  SpmdOp op{"experts", OpKind::experts, {x, w1, w2, gate}, 64, 16, Flop(4.0 * 64 * 2 * 16 * 32)};
  op.experts = experts;
  op.routed = 2;
  g.add(std::move(op));
  g.set_experts(w1, experts);
  g.set_experts(w2, experts);
  return g;
}

// The SPMD planner `name` with its default options but `values`; the plan names it, as the workload kind does.
inline SpmdPlan plan_with(const std::string& name, const OpGraph& graph, const SpmdCluster& cluster,
                          OptionValues values = {}) {
  SpmdPlan plan =
      builtin_spmd_planners().at(name).value->plan(graph, cluster, options_of(builtin_spmd_planners(), name, values));
  plan.planner = name;
  return plan;
}

inline OpId op_named(const OpGraph& g, const std::string& name) {
  for (OpId id = 0; id < g.size(); ++id)
    if (g.op(id).name == name) return id;
  throw std::logic_error("no operator " + name);
}

// What operator `name` does on mesh axis `axis`.
inline const ShardedOp& chosen(const OpGraph& g, const SpmdProgram& program, const std::string& name,
                               std::size_t axis = 0) {
  return program.axes.at(axis).at(op_named(g, name));
}

}  // namespace dnnsim::testing
