#include "planners/spmd/spmd_cost.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace dnnsim {

namespace {

int segment_in(const std::vector<int>& segment, OpId op) { return segment.empty() ? 0 : segment[op]; }

}  // namespace

// The mirror is the gradient going the other way: all-gather ↔ reduce-scatter, all-reduce ↔
// all-reduce, all-to-all back, slicing ↔ all-gather.
Passes boxing_times(Layout from, Layout to, double bytes, int p, const CollectiveLines& lines) {
  const auto mirror = [&]() -> double {
    if (from == Layout::partial && to == Layout::replicated) return sbp_boxing_bytes(from, to, bytes, p, p);
    if (from == Layout::partial || from == Layout::replicated)  // gradient of a split: gathered
      return sbp_boxing_bytes(to, Layout::replicated, bytes, p, p);
    if (to == Layout::replicated) return sbp_boxing_bytes(Layout::partial, from, bytes, p, p);  // reduce-scattered
    return sbp_boxing_bytes(to, from, bytes, p, p);                                             // all-to-all back
  };
  const double backward = mirror(), moved = sbp_boxing_bytes(from, to, bytes, p, p) + backward;
  const double time = moved * lines.all_reduce.seconds_per_byte / (2.0 * std::max(1, p - 1));
  return {time, moved > 0 ? time * backward / moved : 0.0};
}

double boxing_time(Layout from, Layout to, double bytes, int p, const CollectiveLines& lines) {
  return boxing_times(from, to, bytes, p, lines).total;
}

std::vector<OpCollective> op_collectives(const std::vector<const ShardedOp*>& choices) {
  std::vector<OpCollective> result;
  for (std::size_t a = 0; a < choices.size(); ++a) {
    for (const ShardedOp::Convert& c : choices[a]->converts) {
      auto same = std::find_if(result.begin(), result.end(), [&](const OpCollective& o) {
        return !o.sync && o.convert.input == c.input && o.convert.from == c.from && o.convert.to == c.to &&
               o.convert.conversion == c.conversion;
      });
      if (same == result.end())
        result.push_back({false, c, {a}});
      else
        same->axes.push_back(a);
    }
    for (std::size_t k : choices[a]->synchronizes) {
      auto same = std::find_if(result.begin(), result.end(),
                               [&](const OpCollective& o) { return o.sync && o.convert.input == k; });
      if (same == result.end())
        result.push_back({true, {k, Layout::partial, Layout::replicated, Conversion::all_reduce}, {a}});
      else
        same->axes.push_back(a);
    }
  }
  return result;
}

double operand_bytes(const OpGraph& graph, const SpmdOp& op, const std::vector<const ShardedOp*>& choices,
                     const ShardRatios& ratios, int segment, std::size_t input, const std::vector<std::size_t>& axes) {
  double bytes = graph.bytes(op.inputs[input]).value();
  for (std::size_t b = 0; b < choices.size(); ++b)
    if (std::find(axes.begin(), axes.end(), b) == axes.end() && is_split(choices[b]->rule.inputs[input]))
      bytes *= largest_share(ratios.of(b, segment));
  return bytes;
}

std::vector<double> group_shares(const ShardRatios& ratios, const std::vector<std::size_t>& axes, int segment) {
  std::vector<double> shares{1.0};
  for (std::size_t a : axes) {
    std::vector<double> next;
    for (double s : shares)
      for (double r : ratios.of(a, segment)) next.push_back(s * r);
    shares = std::move(next);
  }
  return shares;
}

std::optional<OpId> weight_root(const OpGraph& graph, OpId tensor) {
  while (graph.op(tensor).kind == OpKind::transpose) tensor = graph.op(tensor).inputs[0];
  if (graph.op(tensor).kind == OpKind::parameter) return tensor;
  return std::nullopt;
}

void assign_synchronizations(const OpGraph& graph, SpmdProgram& program) {
  for (auto& ops : program.axes) {
    std::vector<bool> synced(graph.size(), false);
    for (ShardedOp& s : ops) {
      s.synchronizes.clear();
      const SpmdOp& op = graph.op(s.op);
      if (!s.rule.sharded) continue;
      for (std::size_t k = 0; k < op.inputs.size(); ++k) {
        const std::optional<OpId> root = weight_root(graph, op.inputs[k]);
        if (!root || s.rule.inputs[k] != Layout::replicated || ops[*root].rule.output != Layout::replicated) continue;
        if (s.rule.sfb && k == 1) continue;  // SFB recomputes it from the gathered factors instead
        if (synced[*root]) continue;
        synced[*root] = true;
        s.synchronizes.push_back(k);
      }
    }
  }
}

Passes conversion_times(Conversion c, double bytes, const std::vector<double>& shares, const CollectiveLines& lines,
                        const std::vector<double>& source_shares) {
  const double n = static_cast<double>(shares.size());
  const double largest = std::max(largest_share(shares), source_shares.empty() ? 0.0 : largest_share(source_shares));
  const double padded = bytes * largest * n;
  const auto nonzero = static_cast<double>(std::count_if(shares.begin(), shares.end(), [](double r) { return r > 0; }));
  // One broadcast per shard, α each, the shards' bytes once (HAP's Grouped-Broadcast); its mirror, a
  // reduce per shard, runs as the unpadded reduce-scatter it amounts to on a ring.
  const double grouped = nonzero * lines.broadcast.alpha + bytes * lines.broadcast.seconds_per_byte;
  // {both passes, the backward's}: the sums as one expression, so that `total` is the same to the bit
  // however it is split.
  switch (c) {
    case Conversion::all_reduce:
      return {2 * lines.all_reduce.at(bytes), lines.all_reduce.at(bytes)};
    case Conversion::reduce_scatter:
    case Conversion::all_gather:
      return {lines.all_gather.at(padded) + lines.reduce_scatter.at(padded),
              c == Conversion::all_gather ? lines.reduce_scatter.at(padded) : lines.all_gather.at(padded)};
    case Conversion::all_to_all:
    case Conversion::reshard:  // each device sends its shard, and the gradients back
      return {2 * lines.all_to_all.at(bytes * largest), lines.all_to_all.at(bytes * largest)};
    case Conversion::slice:
      return {lines.all_gather.at(padded), lines.all_gather.at(padded)};
    case Conversion::grouped_broadcast:
    case Conversion::grouped_reduce:
      return {grouped + lines.reduce_scatter.at(bytes),
              c == Conversion::grouped_broadcast ? lines.reduce_scatter.at(bytes) : grouped};
  }
  return {};
}

double conversion_time(Conversion c, double bytes, const std::vector<double>& shares, const CollectiveLines& lines,
                       const std::vector<double>& source_shares) {
  return conversion_times(c, bytes, shares, lines, source_shares).total;
}

OpCost op_cost(const OpGraph& graph, const SpmdProgram& program, const ShardRatios& ratios, const SpmdCluster& cluster,
               OpId id, SpmdCostModel model) {
  std::vector<const ShardedOp*> choices;
  for (const auto& ops : program.axes) choices.push_back(&ops[id]);
  return op_cost(graph, program.mesh, choices, program.segment, ratios, cluster, model);
}

OpCost op_cost(const OpGraph& graph, const Mesh& mesh, const std::vector<const ShardedOp*>& choices,
               const std::vector<int>& segments, const ShardRatios& ratios, const SpmdCluster& cluster,
               SpmdCostModel model) {
  const OpId id = choices.front()->op;
  const SpmdOp& op = graph.op(id);
  const int segment = segment_in(segments, id);
  OpCost cost;
  // Computation: the slowest device.
  const std::size_t devices = cluster.size();
  for (std::size_t d = 0; d < devices; ++d) {
    double share = 1, weight_share = 1;
    for (std::size_t a = 0; a < choices.size(); ++a) {
      const ShardingRule& rule = choices[a]->rule;
      if (!rule.sharded) continue;
      const double r = ratios.of(a, segment)[static_cast<std::size_t>(mesh.coordinate(d, a))];
      share *= r;
      if (!rule.sfb) weight_share *= r;
    }
    const double flops = op.forward_flops.value() * (2 * share + weight_share);
    cost.compute = std::max(cost.compute, flops / cluster.flops_per_second[d]);
    cost.forward_compute =
        std::max(cost.forward_compute, op.forward_flops.value() * share / cluster.flops_per_second[d]);
  }
  // Communication: the merged collectives, then what an axis' rule adds on its own.
  for (const OpCollective& c : op_collectives(choices)) {
    const CollectiveLines lines = cluster.lines(mesh, c.axes);
    const double bytes = operand_bytes(graph, op, choices, ratios, segment, c.convert.input, c.axes);
    if (model == SpmdCostModel::sbp) {
      int p = 1;
      for (std::size_t a : c.axes) p *= mesh.axes[a];
      if (c.sync) {
        const double time = boxing_time(Layout::partial, Layout::replicated, bytes, p, lines) / 2;  // backward only
        cost.communication += time;
        cost.synchronization += time;
        continue;
      }
      const Passes passes = boxing_times(c.convert.from, c.convert.to, bytes, p, lines);
      cost.communication += passes.total;
      cost.conversions += passes.total;
      cost.backward_conversions += passes.backward;
      continue;
    }
    if (c.sync) {
      cost.communication += lines.all_reduce.at(bytes);
      cost.synchronization += lines.all_reduce.at(bytes);
      continue;
    }
    const Passes passes =
        conversion_times(c.convert.conversion, bytes, group_shares(ratios, c.axes, segment), lines,
                         group_shares(ratios, c.axes, segment_in(segments, op.inputs[c.convert.input])));
    cost.communication += passes.total;
    cost.conversions += passes.total;
    cost.backward_conversions += passes.backward;
  }
  // The product's input and output widths (an operator with SFB or experts reads an input).
  const double k = op.inputs.empty() ? 0.0 : static_cast<double>(graph.op(op.inputs[0]).columns);
  const double n = static_cast<double>(op.columns);
  // Rows of the operator's output on one group of `axes` (its split on the other axes taken out).
  const auto group_rows = [&](const std::vector<std::size_t>& axes) {
    double rows = static_cast<double>(op.rows) * dtype_bytes(graph.dtype());
    for (std::size_t b = 0; b < choices.size(); ++b)
      if (std::find(axes.begin(), axes.end(), b) == axes.end() && choices[b]->rule.inputs[0] == Layout::split_rows)
        rows *= largest_share(ratios.of(b, segment));
    return rows;
  };
  for (std::size_t a = 0; a < choices.size(); ++a) {
    if (!choices[a]->rule.sfb) continue;
    // Backward: all-gather the input and the output's gradient.
    const std::vector<double>& shares = ratios.of(a, segment);
    const double padded = largest_share(shares) * static_cast<double>(shares.size()), rows = group_rows({a});
    const CollectiveLines lines = cluster.lines(mesh, a);
    const double gathers = lines.all_gather.at(rows * k * padded) + lines.all_gather.at(rows * n * padded);
    cost.communication += gathers;
    cost.backward_exchanges += gathers;
  }
  std::vector<std::size_t> experts;
  for (std::size_t a = 0; a < choices.size(); ++a)
    if (op.kind == OpKind::experts && choices[a]->rule.inputs[1] == Layout::split_rows) experts.push_back(a);
  if (!experts.empty()) {
    // Dispatch and combine, forward and backward: one all-to-all over the expert-parallel group, each
    // device's routed rows out to their experts and back.
    const double rows = group_rows(experts);
    double largest = 1;  // the largest share of the rows on the group
    for (std::size_t a : experts) largest *= largest_share(ratios.of(a, segment));
    const CollectiveLines lines = cluster.lines(mesh, experts);
    const double exchange =
        lines.all_to_all.at(rows * op.routed * k * largest) + lines.all_to_all.at(rows * op.routed * n * largest);
    cost.communication += 2 * exchange;
    cost.backward_exchanges += exchange;
  }
  return cost;
}

double conversions_time(const OpGraph& graph, const Mesh& mesh, const std::vector<const ShardedOp*>& choices,
                        const std::vector<int>& segments, const ShardRatios& ratios, const SpmdCluster& cluster) {
  const SpmdOp& op = graph.op(choices.front()->op);
  const int segment = segment_in(segments, choices.front()->op);
  double time = 0;
  for (const OpCollective& c : op_collectives(choices))
    if (!c.sync)
      time += conversion_time(c.convert.conversion,
                              operand_bytes(graph, op, choices, ratios, segment, c.convert.input, c.axes),
                              group_shares(ratios, c.axes, segment), cluster.lines(mesh, c.axes),
                              group_shares(ratios, c.axes, segment_in(segments, op.inputs[c.convert.input])));
  return time;
}

double program_cost(const OpGraph& graph, const SpmdProgram& program, const ShardRatios& ratios,
                    const SpmdCluster& cluster, SpmdCostModel model) {
  double total = 0;
  for (OpId id = 0; id < graph.size(); ++id) total += op_cost(graph, program, ratios, cluster, id, model).total();
  return total;
}

double iteration_time(const OpGraph& graph, const SpmdProgram& program, const ShardRatios& ratios,
                      const SpmdCluster& cluster, SpmdCostModel model) {
  std::vector<OpCost> costs;
  double compute_stream = 0;  // the forward pass: everything but the backward parts and the syncs
  for (OpId id = 0; id < graph.size(); ++id) {
    const OpCost& c = costs.emplace_back(op_cost(graph, program, ratios, cluster, id, model));
    compute_stream +=
        c.forward_compute + (c.communication - c.synchronization - c.backward_conversions - c.backward_exchanges);
  }
  double comm_stream = 0;
  // With gradient buckets (cluster.comm.bucket_bytes), as the lowering issues them: the open bucket's
  // bytes per set of mesh axes, all-reduced once full and at the end of the backward pass.
  const bool buckets = cluster.comm.bucket_bytes > 0 && model == SpmdCostModel::hap;
  std::map<std::vector<std::size_t>, double> open;
  const auto all_reduce = [&](const std::vector<std::size_t>& axes, double bytes) {
    comm_stream = std::max(comm_stream, compute_stream) + cluster.lines(program.mesh, axes).all_reduce.at(bytes);
  };
  for (OpId id = static_cast<OpId>(graph.size()); id-- > 0;) {
    const OpCost& c = costs[id];
    compute_stream += c.backward_exchanges + (c.compute - c.forward_compute);
    if (c.synchronization > 0 && !buckets) comm_stream = std::max(comm_stream, compute_stream) + c.synchronization;
    if (c.synchronization > 0 && buckets) {
      std::vector<const ShardedOp*> choices;
      for (const auto& ops : program.axes) choices.push_back(&ops[id]);
      for (const OpCollective& s : op_collectives(choices)) {
        if (!s.sync) continue;
        double& bytes = open[s.axes];
        bytes += operand_bytes(graph, graph.op(id), choices, ratios, program.segment_of(id), s.convert.input, s.axes);
        if (bytes < cluster.comm.bucket_bytes) continue;
        all_reduce(s.axes, bytes);
        open.erase(s.axes);
      }
    }
    compute_stream += c.backward_conversions;
  }
  for (const auto& [axes, bytes] : open) all_reduce(axes, bytes);
  return std::max(compute_stream, comm_stream);
}

std::vector<std::size_t> expert_axes(const OpGraph& graph, const SpmdProgram& program, OpId id) {
  std::vector<std::size_t> axes;
  for (std::size_t a = 0; a < program.axes.size(); ++a)
    if (graph.op(id).kind == OpKind::experts && program.axes[a][id].rule.inputs[1] == Layout::split_rows)
      axes.push_back(a);
  return axes;
}

std::int64_t split_length(const OpGraph& graph, const ShardedOp& s) {
  const SpmdOp& op = graph.op(s.op);
  const auto input_split = [&](Layout l, OpId in) -> std::int64_t {
    const SpmdOp& t = graph.op(in);
    return l == Layout::split_rows      ? t.rows
           : l == Layout::split_strided ? t.columns / std::max(1, t.stride)
                                        : t.columns;
  };
  switch (s.rule.output) {
    case Layout::split_rows:
      if ((op.kind == OpKind::experts && s.rule.inputs[1] == Layout::split_rows) ||
          (op.kind == OpKind::parameter && op.experts > 0))
        return op.experts;
      return op.rows;
    case Layout::split_columns:
      return op.columns;
    case Layout::split_strided:
      return op.columns / std::max(1, op.stride);
    case Layout::partial:
      if (op.kind == OpKind::matmul) return graph.op(op.inputs[0]).columns;
      if (op.kind == OpKind::experts) return graph.op(op.inputs[1]).columns;  // each expert's hidden width
      if (op.kind == OpKind::embedding) return graph.op(op.inputs[1]).rows;
      if (!op.inputs.empty()) return input_split(s.rule.inputs[0], op.inputs[0]);
      return 1;
    case Layout::replicated:
      return 1;
  }
  return 1;
}

std::vector<double> device_shares(const OpGraph& graph, const SpmdProgram& program, const ShardRatios& ratios,
                                  OpId op) {
  const std::size_t devices = static_cast<std::size_t>(program.mesh.devices());
  std::vector<double> shares(devices, 1.0);
  for (std::size_t a = 0; a < program.axes.size(); ++a) {
    const ShardedOp& s = program.axes[a][op];
    if (!s.rule.sharded) continue;
    const std::int64_t length = std::max<std::int64_t>(1, split_length(graph, s));
    const std::vector<std::int64_t> lengths = shard_lengths(length, ratios.of(a, program.segment_of(op)));
    for (std::size_t d = 0; d < devices; ++d)
      shares[d] *= static_cast<double>(lengths[static_cast<std::size_t>(program.mesh.coordinate(d, a))]) /
                   static_cast<double>(length);
  }
  return shares;
}

double memory_multiplier(const OpGraph& graph, OpId id) {
  const SpmdOp& op = graph.op(id);
  return (op.kind == OpKind::parameter ? kModelStateFactor : 0.0) + (id == 0 || op.forward_flops.value() > 0 ? 1 : 0);
}

std::vector<double> device_memory(const OpGraph& graph, const SpmdProgram& program, const ShardRatios& ratios) {
  std::vector<double> memory(static_cast<std::size_t>(program.mesh.devices()), 0.0);
  for (OpId id = 0; id < graph.size(); ++id) {
    const double bytes = memory_multiplier(graph, id) * graph.bytes(id).value();
    if (bytes <= 0) continue;
    const std::vector<double> shares = device_shares(graph, program, ratios, id);
    for (std::size_t d = 0; d < memory.size(); ++d) memory[d] += bytes * shares[d];
  }
  return memory;
}

}  // namespace dnnsim
