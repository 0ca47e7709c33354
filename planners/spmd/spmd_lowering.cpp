#include "planners/spmd/spmd_lowering.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "planners/spmd/spmd_cost.hpp"
#include "planners/spmd/spmd_pipeline.hpp"

namespace dnnsim {

LayerKind layer_kind_of(OpKind kind) {
  switch (kind) {
    case OpKind::matmul:
    case OpKind::experts:
      return LayerKind::matmul;
    case OpKind::attention:
      return LayerKind::attention;
    case OpKind::rowwise:
      return LayerKind::normalization;
    case OpKind::elementwise:
      return LayerKind::elementwise;
    case OpKind::embedding:
      return LayerKind::embedding;
    case OpKind::loss:
      return LayerKind::loss;
    case OpKind::input:
    case OpKind::parameter:
    case OpKind::reshape:
    case OpKind::transpose:
    case OpKind::concat:
      return LayerKind::other;
  }
  return LayerKind::other;
}

namespace {

// The GEMM a device's shard of a matmul runs: C[m×n] = A[m×k]·B[k×n] with each split dimension cut to
// the device's shard on the axes that split it (output rows: m, output columns: n, a partial output:
// the contraction k), the pair of its gradients backward. A calibration table's shape grids then
// price an uneven shard at its own shape's efficiency, as the GPU runs it.
GemmShape shard_gemm(const OpGraph& graph, const SpmdProgram& program, const ShardRatios& ratios, OpId id,
                     std::size_t device, bool backward) {
  const SpmdOp& op = graph.op(id);
  if (op.kind != OpKind::matmul || op.inputs.size() != 2) return {};
  double m = static_cast<double>(op.rows);
  double n = static_cast<double>(op.columns);
  double k = static_cast<double>(graph.op(op.inputs.front()).columns);
  for (std::size_t a = 0; a < program.axes.size(); ++a) {
    const ShardedOp& s = program.axes[a][id];
    if (!s.rule.sharded) continue;
    const std::int64_t length = std::max<std::int64_t>(1, split_length(graph, s));
    const std::int64_t shard = shard_lengths(
        length, ratios.of(a, program.segment_of(id)))[static_cast<std::size_t>(program.mesh.coordinate(device, a))];
    double& split = s.rule.output == Layout::split_rows ? m : s.rule.output == Layout::partial ? k : n;
    split = std::max(1.0, std::round(split * static_cast<double>(shard) / static_cast<double>(length)));
  }
  if (std::max({m, n, k}) > 4294967295.0) return {};
  return GemmShape{static_cast<std::uint32_t>(m), static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(k),
                   backward ? GemmOp::backward : GemmOp::nn};
}

// Weights' gradients waiting for one all-reduce over the groups of some mesh axes.
struct GradientBucket {
  double bytes = 0;
  std::vector<std::string> weights;  // in the order their backward ended
  std::vector<TaskId> last;          // each device's last backward task among theirs (device order)
};

struct Lowerer {
  const OpGraph& graph;
  const SpmdPlan& plan;
  TaskGraph& tg;
  StreamId compute_stream, comm_stream;
  std::string all_reduce_algorithm;  // empty: the default rule
  // The previous iteration's gradient all-reduces: the optimizer step needs them before the next
  // forward pass, so the next task on the compute stream waits for them.
  std::vector<TaskId> wait_for;
  std::uint32_t iteration = 0;

  const SpmdProgram& program() const { return plan.program; }

  TaskId collective(CollectiveKind kind, const std::vector<DeviceId>& group, Bytes size, Phase phase, std::string label,
                    StreamId stream, std::vector<TaskId> deps = {}, DeviceId root = 0) {
    Task t;
    t.op = Collective{kind, group, size, kind == CollectiveKind::all_reduce ? all_reduce_algorithm : ""};
    std::get<Collective>(t.op).root = root;
    t.stream = stream;
    t.phase = phase;
    t.iteration = iteration;
    t.label = std::move(label);
    t.deps = std::move(deps);
    if (stream == compute_stream) t.deps.insert(t.deps.end(), wait_for.begin(), wait_for.end());
    return tg.add(std::move(t));
  }

  // One collective per group along `axes`, all at once.
  void on_axes(const std::vector<std::size_t>& axes, CollectiveKind kind, Bytes size, Phase phase,
               const std::string& label) {
    for (const auto& group : program().mesh.groups(axes)) collective(kind, group, size, phase, label, compute_stream);
    wait_for.clear();
  }
  void on_axis(std::size_t axis, CollectiveKind kind, Bytes size, Phase phase, const std::string& label) {
    on_axes({axis}, kind, size, phase, label);
  }

  // A bucket's all-reduce on the comm stream, one per group along `axes`, once its devices' backward
  // tasks of it are done.
  void all_reduce_gradients(const std::vector<std::size_t>& axes, const GradientBucket& bucket,
                            std::vector<TaskId>& syncs) {
    const std::string names = bucket.weights.size() == 1 ? bucket.weights.front()
                                                         : fmt::format("{}..{} ({} weights)", bucket.weights.front(),
                                                                       bucket.weights.back(), bucket.weights.size());
    for (const auto& group : program().mesh.groups(axes)) {
      std::vector<TaskId> deps;
      for (DeviceId d : group)
        if (d < bucket.last.size()) deps.push_back(bucket.last[d]);
      syncs.push_back(collective(CollectiveKind::all_reduce, group, Bytes(bucket.bytes), Phase::backward,
                                 fmt::format("grad all-reduce {}", names), comm_stream, deps));
    }
  }

  std::vector<const ShardedOp*> choices(OpId id) const {
    std::vector<const ShardedOp*> result;
    for (const auto& ops : program().axes) result.push_back(&ops[id]);
    return result;
  }

  // The collectives of a conversion (OpCollective) of an operand of `id`, forward or its backward mirror.
  void conversion(OpId id, const OpCollective& c, bool backward) {
    const SpmdOp& op = graph.op(id);
    const OpId tensor = op.inputs[c.convert.input];
    const int segment = program().segment_of(id);
    const Bytes bytes(operand_bytes(graph, op, choices(id), plan.ratios, segment, c.convert.input, c.axes));
    const std::vector<double> shares = group_shares(plan.ratios, c.axes, segment);
    double largest = largest_share(shares);
    if (c.convert.conversion == Conversion::reshard)
      largest = std::max(largest, largest_share(group_shares(plan.ratios, c.axes, program().segment_of(tensor))));
    const Bytes padded = bytes * (largest * static_cast<double>(shares.size()));
    const Phase phase = backward ? Phase::backward : Phase::forward;
    const std::string label =
        fmt::format("{} {}{}", conversion_name(c.convert.conversion), graph.op(tensor).name, backward ? " (grad)" : "");
    using K = CollectiveKind;
    const auto grouped_broadcast = [&] {
      for (const auto& group : program().mesh.groups(c.axes))
        for (std::size_t j = 0; j < group.size(); ++j)
          if (shares[j] > 0)
            collective(K::broadcast, group, bytes * shares[j], phase, label, compute_stream, {}, group[j]);
      wait_for.clear();
    };
    switch (c.convert.conversion) {
      case Conversion::all_reduce:
        on_axes(c.axes, K::all_reduce, bytes, phase, label);
        break;
      case Conversion::reduce_scatter:
        on_axes(c.axes, backward ? K::all_gather : K::reduce_scatter, padded, phase, label);
        break;
      case Conversion::all_gather:
        on_axes(c.axes, backward ? K::reduce_scatter : K::all_gather, padded, phase, label);
        break;
      case Conversion::all_to_all:  // each member's send buffer: its (padded) shard
      case Conversion::reshard:
        on_axes(c.axes, K::all_to_all, bytes * largest, phase, label);
        break;
      case Conversion::slice:
        if (backward) on_axes(c.axes, K::all_gather, padded, phase, label);
        break;
      case Conversion::grouped_broadcast:
        if (backward)
          on_axes(c.axes, K::reduce_scatter, bytes, phase, label);
        else
          grouped_broadcast();
        break;
      case Conversion::grouped_reduce:
        if (backward)
          grouped_broadcast();
        else
          on_axes(c.axes, K::reduce_scatter, bytes, phase, label);
        break;
    }
  }

  // Bytes of the output rows of `id` (× `columns`) on one group of `axis`, padded (SFB's gathered
  // factors), or one device's padded shard of them (an experts operator's all-to-all send buffer).
  Bytes padded_rows(OpId id, std::size_t axis, double columns, bool shard = false) const {
    const SpmdOp& op = graph.op(id);
    double bytes = static_cast<double>(op.rows) * columns * dtype_bytes(graph.dtype());
    for (std::size_t b = 0; b < program().axes.size(); ++b)
      if (b != axis && program().axes[b][id].rule.inputs[0] == Layout::split_rows)
        bytes *= largest_share(plan.ratios.of(b, program().segment_of(id)));
    const std::vector<double>& shares = plan.ratios.of(axis, program().segment_of(id));
    return Bytes(bytes * largest_share(shares) * (shard ? 1.0 : static_cast<double>(shares.size())));
  }

  // An expert-parallel experts operator's all-to-all: the dispatch of its input rows (k wide) or the
  // combine of its output rows (n wide), forward or their gradients backward — one all-to-all over
  // every axis that splits the experts (the expert-parallel group, as DeepSpeed-MoE and Tutel run it).
  void expert_exchange(OpId id, bool backward, bool dispatch) {
    const SpmdOp& op = graph.op(id);
    const std::vector<std::size_t> axes = expert_axes(graph, program(), id);
    if (axes.empty()) return;
    const double columns = static_cast<double>(dispatch ? graph.op(op.inputs[0]).columns : op.columns);
    on_axes(axes, CollectiveKind::all_to_all, padded_rows(id, axes.front(), columns * op.routed, true),
            backward ? Phase::backward : Phase::forward,
            fmt::format("{} {}{}", dispatch ? "dispatch" : "combine", op.name, backward ? " (grad)" : ""));
  }

  std::vector<TaskId> compute(OpId id, Phase phase, const std::vector<double>& flops, const std::vector<Bytes>& alloc,
                              const std::vector<Bytes>& free) {
    const SpmdOp& op = graph.op(id);
    Bytes touched = graph.bytes(id);
    for (OpId in : op.inputs) touched += graph.bytes(in);
    const std::vector<double> shares = device_shares(graph, program(), plan.ratios, id);
    std::vector<TaskId> ids;
    for (DeviceId d = 0; d < flops.size(); ++d) {
      Task t;
      Compute work{d, Flop(flops[d]), touched * shares[d], graph.dtype(), layer_kind_of(op.kind)};
      work.gemm = shard_gemm(graph, program(), plan.ratios, id, d, phase == Phase::backward);
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

  // Forward and backward FLOPs of `id` on each device; SFB computes the whole weight gradient.
  std::pair<std::vector<double>, std::vector<double>> flops_of(OpId id) const {
    const double f = graph.op(id).forward_flops.value();
    const std::vector<double> shares = device_shares(graph, program(), plan.ratios, id);
    std::vector<double> forward, backward;
    for (std::size_t d = 0; d < shares.size(); ++d) {
      double weight = shares[d];
      for (std::size_t a = 0; a < program().axes.size(); ++a)
        if (program().axes[a][id].rule.sfb) weight = 1.0;
      forward.push_back(f * shares[d]);
      backward.push_back(f * (shares[d] + weight));
    }
    return {forward, backward};
  }
};

}  // namespace

TaskGraph lower_spmd(const OpGraph& graph, const SpmdPlan& plan, const std::vector<std::string>& devices,
                     int iterations, const SpmdCommOptions& comm) {
  if (plan.pipeline) return lower_spmd_pipeline(graph, plan, devices, iterations, comm);
  TaskGraph tg;
  for (const std::string& d : devices) tg.add_device(d);
  Lowerer lower{graph, plan, tg, tg.add_stream("compute"), tg.add_stream("comm"), comm.all_reduce_algorithm};
  const SpmdProgram& program = plan.program;

  // Model state per device: every parameter's share (split) or all of it (replicated), 4× for weights,
  // gradients and Adam's two moments in fp32.
  std::vector<Bytes> state(devices.size(), Bytes(0));
  for (OpId id = 0; id < graph.size(); ++id)
    if (graph.op(id).kind == OpKind::parameter) {
      const std::vector<double> shares = device_shares(graph, program, plan.ratios, id);
      for (std::size_t d = 0; d < devices.size(); ++d) state[d] += graph.bytes(id) * (kModelStateFactor * shares[d]);
    }
  bool state_allocated = false;

  for (int it = 0; it < iterations; ++it) {
    lower.iteration = static_cast<std::uint32_t>(it);
    // Operators without FLOPs (inputs, weights, reshapes) get no task, except the very first one,
    // which allocates the model state (the peak spmd_cost.hpp device_memory predicts).
    std::vector<bool> has_task(graph.size(), false);
    std::vector<TaskId> syncs;
    std::map<std::vector<std::size_t>, GradientBucket> buckets;  // the open bucket of each set of mesh axes
    for (OpId id = 0; id < graph.size(); ++id) {
      for (const OpCollective& c : op_collectives(lower.choices(id)))
        if (!c.sync) lower.conversion(id, c, false);
      if (graph.op(id).forward_flops.value() <= 0 && state_allocated) continue;
      const std::vector<double> shares = device_shares(graph, program, plan.ratios, id);
      std::vector<Bytes> alloc(devices.size());
      for (std::size_t d = 0; d < devices.size(); ++d)
        alloc[d] = graph.bytes(id) * shares[d] + (state_allocated ? Bytes(0) : state[d]);
      state_allocated = true;
      has_task[id] = true;
      lower.expert_exchange(id, false, true);
      lower.compute(id, Phase::forward, lower.flops_of(id).first, alloc, {});
      lower.expert_exchange(id, false, false);
    }
    for (OpId id = static_cast<OpId>(graph.size()); id-- > 0;) {
      const SpmdOp& op = graph.op(id);
      std::vector<TaskId> done;
      if (has_task[id]) {
        const std::vector<double> shares = device_shares(graph, program, plan.ratios, id);
        std::vector<Bytes> free(devices.size());
        for (std::size_t d = 0; d < devices.size(); ++d) free[d] = graph.bytes(id) * shares[d];
        for (std::size_t a = 0; a < program.axes.size(); ++a)
          if (program.axes[a][id].rule.sfb) {  // the sufficient factors: the input and the output's gradient
            const double k = static_cast<double>(graph.op(op.inputs[0]).columns);
            lower.on_axis(a, CollectiveKind::all_gather, lower.padded_rows(id, a, k), Phase::backward,
                          fmt::format("sfb all-gather {}", graph.op(op.inputs[0]).name));
            lower.on_axis(a, CollectiveKind::all_gather, lower.padded_rows(id, a, static_cast<double>(op.columns)),
                          Phase::backward, fmt::format("sfb all-gather {} (grad)", op.name));
          }
        lower.expert_exchange(id, true, false);
        done = lower.compute(id, Phase::backward, lower.flops_of(id).second, {}, free);
        lower.expert_exchange(id, true, true);
      }
      const std::vector<OpCollective> collectives = op_collectives(lower.choices(id));
      for (const OpCollective& c : collectives) {
        if (!c.sync) continue;
        GradientBucket& bucket = buckets[c.axes];
        bucket.bytes +=
            operand_bytes(graph, op, lower.choices(id), plan.ratios, program.segment_of(id), c.convert.input, c.axes);
        bucket.weights.push_back(graph.op(*weight_root(graph, op.inputs[c.convert.input])).name);
        // The compute stream runs in order: a device's last backward task of the bucket follows the others.
        if (!done.empty()) bucket.last = done;
        if (bucket.bytes >= comm.bucket_bytes) {
          lower.all_reduce_gradients(c.axes, bucket, syncs);
          buckets.erase(c.axes);
        }
      }
      for (auto c = collectives.rbegin(); c != collectives.rend(); ++c)
        if (!c->sync) lower.conversion(id, *c, true);
    }
    for (auto& [axes, bucket] : buckets) lower.all_reduce_gradients(axes, bucket, syncs);
    lower.wait_for = std::move(syncs);
  }
  return tg;
}

}  // namespace dnnsim
