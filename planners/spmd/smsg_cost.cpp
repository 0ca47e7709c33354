#include "planners/spmd/smsg_cost.hpp"

#include <algorithm>
#include <cmath>

namespace dnnsim {

namespace {

std::int64_t divide_up(std::int64_t a, int q) { return (a + q - 1) / q; }

// The length of the dimension `layout` splits on a tensor of `shape` (0: none).
std::int64_t split_dimension(const SpmdOp& tensor, LocalShape shape, Layout layout) {
  switch (layout) {
    case Layout::split_rows:
      return shape.rows;
    case Layout::split_columns:
      return shape.columns;
    case Layout::split_strided:
      return shape.columns / std::max(1, tensor.stride);
    default:
      return 0;
  }
}

}  // namespace

LocalShape after_cut(LocalShape shape, Layout layout, int q) {
  if (layout == Layout::split_rows) shape.rows = divide_up(shape.rows, q);
  if (layout == Layout::split_columns || layout == Layout::split_strided) shape.columns = divide_up(shape.columns, q);
  return shape;
}

std::int64_t symbolic_rule_cost(const OpGraph& graph, OpId id, const ShardingRule& rule,
                                const std::vector<LocalShape>& shapes) {
  const SpmdOp& op = graph.op(id);
  if (op.kind == OpKind::input || op.kind == OpKind::parameter) return 0;  // they follow their readers
  // Every device computes all of it: its output is the redundant data.
  if (!rule.sharded) return shapes[id].elements();
  std::int64_t cost = 0;
  for (std::size_t k = 0; k < op.inputs.size(); ++k)
    if (rule.inputs[k] == Layout::replicated) cost += shapes[op.inputs[k]].elements();
  if (rule.output == Layout::partial) cost += shapes[id].elements();
  if (op.kind == OpKind::experts && rule.inputs[1] == Layout::split_rows)  // dispatch and combine
    cost += static_cast<std::int64_t>(std::llround(2.0 * static_cast<double>(shapes[id].elements()) * op.routed));
  return cost;
}

std::int64_t symbolic_redistribution(Layout from, Layout to, std::int64_t elements, std::int64_t weight) {
  if (from == to || (from == Layout::replicated && is_split(to))) return 0;
  return elements * weight;
}

bool cuttable(const OpGraph& graph, OpId id, const ShardingRule& rule, const std::vector<LocalShape>& shapes, int q) {
  const SpmdOp& op = graph.op(id);
  if (!rule.sharded) return true;
  if (is_split(rule.output) && split_dimension(op, shapes[id], rule.output) < q) return false;
  for (std::size_t k = 0; k < op.inputs.size(); ++k) {
    const OpId in = op.inputs[k];
    if (is_split(rule.inputs[k]) && split_dimension(graph.op(in), shapes[in], rule.inputs[k]) < q) return false;
  }
  if (rule.output == Layout::partial && op.kind == OpKind::matmul && shapes[op.inputs[0]].columns < q) return false;
  return true;
}

}  // namespace dnnsim
