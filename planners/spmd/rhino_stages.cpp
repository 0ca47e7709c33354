#include "planners/spmd/rhino_stages.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "planners/common/integer_program.hpp"

namespace dnnsim {

namespace {

// Σ FLOPs of every ancestor (forward) or descendant (backward) of each operator, over the DAG.
std::vector<double> accumulated(const OpGraph& graph, bool ancestors) {
  const std::size_t n = graph.size();
  const std::vector<std::vector<OpId>> users = graph.users();
  std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
  if (ancestors) {
    for (OpId id = 0; id < n; ++id)
      for (OpId in : graph.op(id).inputs) {
        reach[id][in] = true;
        for (std::size_t a = 0; a < n; ++a)
          if (reach[in][a]) reach[id][a] = true;
      }
  } else {
    for (OpId id = static_cast<OpId>(n); id-- > 0;)
      for (OpId u : users[id]) {
        reach[id][u] = true;
        for (std::size_t a = 0; a < n; ++a)
          if (reach[u][a]) reach[id][a] = true;
      }
  }
  std::vector<double> total(n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t a = 0; a < n; ++a)
      if (reach[i][a]) total[i] += graph.op(static_cast<OpId>(a)).forward_flops.value();
  return total;
}

}  // namespace

std::vector<double> stage_flops(const OpGraph& graph, const std::vector<int>& stage, int stages) {
  std::vector<double> flops(static_cast<std::size_t>(stages), 0.0);
  for (OpId id = 0; id < graph.size(); ++id)
    flops[static_cast<std::size_t>(stage[id])] += graph.op(id).forward_flops.value();
  return flops;
}

std::optional<StagePartition> partition_stages(const OpGraph& graph, int stages, double unbalanced, double seconds) {
  const std::size_t n = graph.size();
  const double total = graph.forward_flops().value();
  const double per_stage = total / stages;
  const double tolerance = unbalanced * per_stage;
  const std::vector<double> before = accumulated(graph, true), after = accumulated(graph, false);
  const auto is_parameter = [&](OpId id) { return graph.op(id).kind == OpKind::parameter; };
  // Columns z[i][k] = [s_i ≤ k], k < S − 1, for each non-parameter operator; its window fixes some.
  const int boundaries = stages - 1;
  std::vector<int> first(n, -1);
  IntegerProgram program;
  for (OpId id = 0; id < n; ++id) {
    if (is_parameter(id)) continue;
    const double f = graph.op(id).forward_flops.value();
    const int asap = std::clamp(
        static_cast<int>(std::floor((std::max(0.0, before[id] - tolerance) + f / 2) / per_stage)), 0, stages - 1);
    const int alap =
        std::clamp(stages - 1 - static_cast<int>(std::floor(std::max(0.0, after[id] + f / 2 - tolerance) / per_stage)),
                   0, stages - 1);
    if (asap > alap) return std::nullopt;
    first[id] = program.columns();
    for (int k = 0; k < boundaries; ++k) program.add_column(0.0, k >= alap ? 1.0 : 0.0, k < asap ? 0.0 : 1.0);
  }
  const auto at_most = [&](int smaller, int larger) {  // z[smaller] ≤ z[larger]
    program.add_row({larger, smaller}, {1.0, -1.0}, 0.0, IntegerProgram::kUnbounded);
  };
  for (OpId id = 0; id < n; ++id)
    for (int k = 0; first[id] >= 0 && k + 1 < boundaries; ++k) at_most(first[id] + k, first[id] + k + 1);
  std::vector<std::pair<OpId, OpId>> edges;
  for (OpId v = 0; v < n; ++v)
    for (OpId u : graph.op(v).inputs) {
      if (is_parameter(u) || first[v] < 0 || std::find(edges.begin(), edges.end(), std::make_pair(u, v)) != edges.end())
        continue;
      edges.emplace_back(u, v);
      const double bytes = graph.bytes(u).value();
      for (int k = 0; k < boundaries; ++k) {
        at_most(first[v] + k, first[u] + k);  // s_v ≥ s_u
        program.add_cost(first[u] + k, bytes);
        program.add_cost(first[v] + k, -bytes);
      }
    }
  // Stages 0..k hold (k + 1) stages' FLOPs, within the tolerance: Σ_i FLOPs_i · z_ik.
  for (int k = 0; k < boundaries; ++k) {
    std::vector<int> index;
    std::vector<double> value;
    for (OpId id = 0; id < n; ++id)
      if (first[id] >= 0 && graph.op(id).forward_flops.value() > 0) {
        index.push_back(first[id] + k);
        value.push_back(graph.op(id).forward_flops.value() / per_stage);
      }
    program.add_row(index, value, k + 1 - unbalanced, k + 1 + unbalanced);
  }
  const std::optional<IntegerProgram::Solution> solution = program.solve(seconds);
  if (!solution) return std::nullopt;
  const std::vector<double>& best = solution->values;
  StagePartition partition;
  partition.optimal = solution->optimal;
  partition.stage.assign(n, 0);
  for (OpId id = 0; id < n; ++id)
    for (int k = 0; first[id] >= 0 && k < boundaries; ++k) partition.stage[id] += best[first[id] + k] < 0.5 ? 1 : 0;
  // Parameters go with their first reader.
  const std::vector<std::vector<OpId>> users = graph.users();
  for (OpId id = 0; id < n; ++id)
    if (is_parameter(id) && !users[id].empty()) partition.stage[id] = partition.stage[users[id].front()];
  for (const auto& [u, v] : edges)
    partition.cut_bytes += graph.bytes(u).value() * (partition.stage[v] - partition.stage[u]);
  return partition;
}

}  // namespace dnnsim
