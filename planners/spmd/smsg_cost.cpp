#include "planners/spmd/smsg_cost.hpp"

#include <algorithm>
#include <cmath>

#include "planners/spmd/spmd_cost.hpp"

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

MergedCollectives::MergedCollectives(const OpGraph& graph) : exchanges_(graph.size()) {
  for (const SpmdOp& op : graph.ops()) conversions_.emplace_back(op.inputs.size());
}

Span MergedCollectives::conversion(OpId id, std::size_t input, Layout from, Layout to) const {
  const auto& seen = conversions_[id][input];
  const auto found = seen.find({from, to});
  return found == seen.end() ? Span{} : found->second;
}

void MergedCollectives::record(const OpGraph& graph, const std::vector<ShardedOp>& ops, int q, bool across_nodes) {
  const auto grow = [&](Span& span) {
    span.devices *= q;
    if (across_nodes) span.nodes *= q;
  };
  for (const ShardedOp& s : ops) {
    const SpmdOp& op = graph.op(s.op);
    for (std::size_t k = 0; k < op.inputs.size(); ++k) {
      const Layout from = ops[op.inputs[k]].rule.output, to = s.rule.inputs[k];
      if (from != to || reads_weight_whole(graph, s.op, s.rule, k)) grow(conversions_[s.op][k][{from, to}]);
    }
    if (op.kind == OpKind::experts && s.rule.inputs[1] == Layout::split_rows) grow(exchanges_[s.op]);
  }
}

namespace {

// The elements a collective over p devices spanning n nodes of D devices moves of a tensor of `full`
// elements over the group, per device and through each node's interface (smsg_cost.hpp): a ring
// gather (all-gather, reduce-scatter) (p − 1)/p of it per device, D·n/p rings through an interface; an
// all-to-all (p − 1)/p of each device's 1/p, (p − p/n)/p of it off the node from each of D devices.
double gathered(double full, double p, double n, double d) {
  const double ring = full * (p - 1) / p;
  return ring + (n > 1 ? d * n / p * ring : 0.0);
}
double exchanged(double full, double p, double n, double d) {
  return full * (p - 1) / (p * p) + (n > 1 ? d * (p - p / n) / p * full / p : 0.0);
}

// What a collective already run over `reach.merged` devices moves more when it grows by
// `reach.remaining` times (`moved`: gathered or exchanged).
double grown(double (*moved)(double, double, double, double), double full, Reach reach) {
  const double merged = reach.merged, nodes = reach.merged_nodes, d = reach.node_devices;
  return moved(full, merged * reach.remaining, nodes * reach.remaining_nodes, d) - moved(full, merged, nodes, d);
}

}  // namespace

bool reads_weight_whole(const OpGraph& graph, OpId id, const ShardingRule& rule, std::size_t k) {
  const SpmdOp& op = graph.op(id);
  return rule.sharded && rule.inputs[k] == Layout::replicated && op.forward_flops.value() > 0 &&
         weight_root(graph, op.inputs[k]).has_value();
}

double symbolic_rule_cost(const OpGraph& graph, OpId id, const ShardingRule& rule,
                          const std::vector<LocalShape>& shapes, Reach reach) {
  const SpmdOp& op = graph.op(id);
  // Inputs, parameters and operators that only re-lay data out follow their readers: their data is
  // counted by the conversions and gradients of the operators that compute.
  if (op.forward_flops.value() <= 0) return 0;
  if (!rule.sharded) return static_cast<double>(shapes[id].elements());    // every device computes all of it
  if (op.kind == OpKind::experts && rule.inputs[1] == Layout::split_rows)  // dispatch and combine, both passes
    return 4 * op.routed * grown(exchanged, static_cast<double>(shapes[id].elements()) * reach.merged, reach);
  return 0;
}

double symbolic_operand_cost(const OpGraph& graph, OpId id, const ShardingRule& rule, std::size_t k, Layout have,
                             const std::vector<LocalShape>& shapes, Reach reach) {
  const auto elements = static_cast<double>(shapes[graph.op(id).inputs[k]].elements());
  // A weight read whole by a cut operator: its gradient all-reduced (a ring reduce-scatter and
  // all-gather) if it is kept whole, or gathered and reduce-scattered if it is kept split (ZeRO-3's
  // layout): two gathers of it either way.
  if (reads_weight_whole(graph, id, rule, k))
    return 2 * grown(gathered, elements * (is_split(have) ? reach.merged : 1), reach);
  return symbolic_redistribution(have, rule.inputs[k], elements, reach);
}

double symbolic_redistribution(Layout from, Layout to, double elements, Reach reach) {
  if (from == to || to == Layout::partial) return 0;
  // `elements` is the producer's shard: a split producer's is 1/merged of the tensor over the merged
  // group, a replicated or partial producer's all of it.
  const double full = elements * (is_split(from) ? reach.merged : 1);
  const double gather = grown(gathered, full, reach);
  if (from == Layout::partial) return (to == Layout::replicated ? 4 : 2) * gather;  // all-reduces; reduce-scatter
  if (from == Layout::replicated) return gather;                                    // sliced; the gradient gathered
  if (to == Layout::replicated) return 2 * gather;  // gathered; the gradient reduce-scattered
  return 2 * grown(exchanged, full, reach);         // an all-to-all each way
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
