#include "planners/spmd/spmd_lowering.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dnnsim {
namespace {

LayerKind kernel_of(OpKind kind) {
  switch (kind) {
    case OpKind::matmul: return LayerKind::matmul;
    case OpKind::attention: return LayerKind::attention;
    case OpKind::rowwise: return LayerKind::normalization;
    case OpKind::elementwise: return LayerKind::elementwise;
    case OpKind::loss:
      return LayerKind::loss;
    case OpKind::input:
    case OpKind::parameter:
    case OpKind::reshape:
      return LayerKind::other;
  }
  return LayerKind::other;
}

// Each device's fraction of a sharded operator: its shard of the split dimension (the output's rows
// or columns; for a partial output, the contraction dimension, A's columns) after HAP's rounding.
std::vector<double> shares_of(const OpGraph& graph, const ShardedOp& s, const std::vector<double>& ratios) {
  const SpmdOp& op = graph.op(s.op);
  if (!s.rule.sharded) return std::vector<double>(ratios.size(), 1.0);
  std::int64_t length = 0;
  switch (s.rule.output) {
    case Layout::split_rows: length = op.rows; break;
    case Layout::split_columns: length = op.columns; break;
    case Layout::partial:
      length = op.inputs.empty() ? op.rows : graph.op(op.inputs.front()).columns;
      if (op.kind == OpKind::loss && !op.inputs.empty())  // a sum over a split: the split input dimension
        length = s.rule.inputs.front() == Layout::split_columns ? graph.op(op.inputs.front()).columns
                                                                : graph.op(op.inputs.front()).rows;
      break;
    case Layout::replicated: return std::vector<double>(ratios.size(), 1.0);
  }
  const std::vector<std::int64_t> lengths = shard_lengths(std::max<std::int64_t>(length, 1), ratios);
  std::vector<double> shares;
  for (std::int64_t l : lengths) shares.push_back(static_cast<double>(l) / static_cast<double>(std::max<std::int64_t>(length, 1)));
  return shares;
}

// The GEMM a device's shard of a matmul runs: the operator's C[m×n] = A[m×k]·B[k×n] with its split
// dimension cut to the shard (output rows: m, output columns: n, partial: the contraction k; `share`
// is the shard's exact fraction, shares_of), the pair of its gradients backward. A calibration table's
// shape grids then price an uneven shard at its own shape's efficiency, as the GPU runs it: the small
// shard of a skinny product is further from peak than its FLOPs alone say.
GemmShape shard_gemm(const OpGraph& graph, const ShardedOp& s, double share, bool backward) {
  const SpmdOp& op = graph.op(s.op);
  if (op.kind != OpKind::matmul || op.inputs.size() != 2) return {};
  double m = static_cast<double>(op.rows);
  double n = static_cast<double>(op.columns);
  double k = static_cast<double>(graph.op(op.inputs.front()).columns);
  if (s.rule.sharded) {
    double& split = s.rule.output == Layout::split_rows ? m : s.rule.output == Layout::split_columns ? n : k;
    split = std::max(1.0, std::round(split * share));
  }
  if (m < 1 || n < 1 || k < 1 || std::max({m, n, k}) > 4294967295.0) return {};
  return GemmShape{static_cast<std::uint32_t>(m), static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(k),
                   backward ? GemmOp::backward : GemmOp::nn};
}

struct Lowerer {
  const OpGraph& graph;
  const SpmdPlan& plan;
  TaskGraph& tg;
  std::vector<DeviceId> group;
  StreamId compute_stream, comm_stream;
  double max_share;
  // The previous iteration's gradient all-reduces: the optimizer step needs them before the next
  // forward pass, so the next task on the compute stream waits for them.
  std::vector<TaskId> wait_for;

  TaskId collective(CollectiveKind kind, Bytes size, std::uint32_t iteration, Phase phase, std::string label,
                    StreamId stream, std::vector<TaskId> deps = {}) {
    Task t;
    t.op = Collective{kind, group, size, ""};
    t.stream = stream;
    t.phase = phase;
    t.iteration = iteration;
    t.label = std::move(label);
    t.deps = std::move(deps);
    if (stream == compute_stream) {
      t.deps.insert(t.deps.end(), wait_for.begin(), wait_for.end());
      wait_for.clear();
    }
    return tg.add(std::move(t));
  }

  // The collectives of a conversion of a tensor of `bytes`, forward or its backward mirror.
  void conversion(Conversion c, Bytes bytes, bool backward, std::uint32_t iteration, const std::string& name) {
    const Bytes padded = bytes * (max_share * static_cast<double>(group.size()));
    const Phase phase = backward ? Phase::backward : Phase::forward;
    const std::string label = fmt::format("{} {}{}", conversion_name(c), name, backward ? " (grad)" : "");
    switch (c) {
      case Conversion::all_reduce:
        collective(CollectiveKind::all_reduce, bytes, iteration, phase, label, compute_stream);
        break;
      case Conversion::reduce_scatter:
        collective(backward ? CollectiveKind::all_gather : CollectiveKind::reduce_scatter, padded, iteration, phase, label,
                   compute_stream);
        break;
      case Conversion::all_gather:
        collective(backward ? CollectiveKind::reduce_scatter : CollectiveKind::all_gather, padded, iteration, phase, label,
                   compute_stream);
        break;
      case Conversion::all_to_all:
        collective(CollectiveKind::all_to_all, padded, iteration, phase, label, compute_stream);
        break;
      case Conversion::slice:
        if (backward) collective(CollectiveKind::all_gather, padded, iteration, phase, label, compute_stream);
        break;
    }
  }

  std::vector<TaskId> compute(const ShardedOp& s, double factor, Phase phase, std::uint32_t iteration,
                              const std::vector<double>& shares, const std::vector<Bytes>& alloc,
                              const std::vector<Bytes>& free) {
    const SpmdOp& op = graph.op(s.op);
    Bytes touched = graph.bytes(s.op);
    for (OpId in : op.inputs) touched += graph.bytes(in);
    std::vector<TaskId> ids;
    for (DeviceId d = 0; d < group.size(); ++d) {
      Task t;
      Compute work{d, op.forward_flops * (factor * shares[d]), touched * shares[d], graph.dtype(), kernel_of(op.kind)};
      work.gemm = shard_gemm(graph, s, shares[d], phase == Phase::backward);
      t.op = std::move(work);
      t.stream = compute_stream;
      t.phase = phase;
      t.iteration = iteration;
      t.label = fmt::format("{} {}", phase == Phase::forward ? "fwd" : "bwd", op.name);
      t.alloc_bytes = alloc.empty() ? Bytes(0) : alloc[d];
      t.free_bytes = free.empty() ? Bytes(0) : free[d];
      t.deps = wait_for;
      ids.push_back(tg.add(std::move(t)));
    }
    wait_for.clear();
    return ids;
  }
};

}  // namespace

TaskGraph lower_spmd(const OpGraph& graph, const SpmdPlan& plan, const std::vector<std::string>& devices, int iterations) {
  TaskGraph tg;
  for (const std::string& d : devices) tg.add_device(d);
  Lowerer lower{graph, plan, tg, {}, tg.add_stream("compute"), tg.add_stream("comm"),
                *std::max_element(plan.ratios.begin(), plan.ratios.end())};
  lower.group.resize(devices.size());
  std::iota(lower.group.begin(), lower.group.end(), DeviceId{0});

  // Model state per device: every parameter's share (split) or all of it (replicated), 4× for weights,
  // gradients and Adam's two moments in fp32.
  std::vector<Bytes> state(devices.size(), Bytes(0));
  for (const ShardedOp& s : plan.program.ops)
    if (graph.op(s.op).kind == OpKind::parameter) {
      const std::vector<double> shares = shares_of(graph, s, plan.ratios);
      for (std::size_t d = 0; d < devices.size(); ++d) state[d] += graph.bytes(s.op) * (4 * shares[d]);
    }
  bool state_allocated = false;

  for (int it = 0; it < iterations; ++it) {
    const auto iteration = static_cast<std::uint32_t>(it);
    // Operators without FLOPs (inputs, weights, reshapes) get no task, except the very first one,
    // which allocates the model state.
    std::vector<bool> has_task(graph.size(), false);
    std::vector<TaskId> syncs;
    for (const ShardedOp& s : plan.program.ops) {
      const SpmdOp& op = graph.op(s.op);
      for (const ShardedOp::Convert& c : s.converts)
        lower.conversion(c.conversion, graph.bytes(op.inputs[c.input]), false, iteration, graph.op(op.inputs[c.input]).name);
      if (op.forward_flops.value() <= 0 && state_allocated) continue;
      const std::vector<double> shares = shares_of(graph, s, plan.ratios);
      std::vector<Bytes> alloc(devices.size());
      for (std::size_t d = 0; d < devices.size(); ++d)
        alloc[d] = graph.bytes(s.op) * shares[d] + (state_allocated ? Bytes(0) : state[d]);
      state_allocated = true;
      has_task[s.op] = true;
      lower.compute(s, 1.0, Phase::forward, iteration, shares, alloc, {});
    }
    for (auto s = plan.program.ops.rbegin(); s != plan.program.ops.rend(); ++s) {
      const SpmdOp& op = graph.op(s->op);
      std::vector<TaskId> done;
      if (has_task[s->op]) {
        const std::vector<double> shares = shares_of(graph, *s, plan.ratios);
        std::vector<Bytes> free(devices.size());
        for (std::size_t d = 0; d < devices.size(); ++d) free[d] = graph.bytes(s->op) * shares[d];
        done = lower.compute(*s, 2.0, Phase::backward, iteration, shares, {}, free);
      }
      if (s->gradient_all_reduce)
        for (std::size_t k = 0; k < op.inputs.size(); ++k)
          if (graph.op(op.inputs[k]).kind == OpKind::parameter && s->rule.inputs[k] == Layout::replicated)
            syncs.push_back(lower.collective(CollectiveKind::all_reduce, graph.bytes(op.inputs[k]), iteration,
                                             Phase::backward, fmt::format("grad all-reduce {}", graph.op(op.inputs[k]).name),
                                             lower.comm_stream, done));
      for (auto c = s->converts.rbegin(); c != s->converts.rend(); ++c)
        lower.conversion(c->conversion, graph.bytes(op.inputs[c->input]), true, iteration, graph.op(op.inputs[c->input]).name);
    }
    lower.wait_for = std::move(syncs);
  }
  return tg;
}

}  // namespace dnnsim
