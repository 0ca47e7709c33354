#include "planners/schedules/step_communication.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "models/dnn/llm_parallel.hpp"

namespace dnnsim {
namespace {

// `members` rotated so that `first` leads (a mirrored or alone collective simulates its first member).
std::vector<DeviceId> leading(std::vector<DeviceId> members, DeviceId first) {
  std::rotate(members.begin(), std::find(members.begin(), members.end(), first), members.end());
  return members;
}

// Whether the step's attention meets the other CP ranks' K/V through TE's p2p ring (context_ring);
// the other cp_comm_types are exposed collectives (step_collectives).
bool runs_ring(const PipelineWorkload& workload) { return workload.transformer && context_ring_size(workload.llm) > 1; }

Collective exchange(CollectiveKind kind, std::vector<DeviceId> group, Bytes size, int calls) {
  Collective collective{kind, std::move(group), size, "", 0};
  collective.calls = static_cast<std::uint32_t>(std::max(1, calls));
  collective.alone = true;
  return collective;
}

// Adds one layer's time in a step with the precision recipe to `total`: its kernel in the dtype the
// recipe gives it (an attention core under context parallelism as the calls TE splits it into,
// attention_calls_in_sequence), then its scaling kernels' traffic (two additions, in this order: the
// sums stay those of one loop over the layers to the last bit).
//
// A forward core under CP computes a share u of its FLOPs over keys without a mask
// (unmasked_attention_share: the ring's off-diagonal steps, all_gather's keys before each chunk's
// own), each part at its calls' size (above) on its mask's curve,
//   t = t_causal · (1 − u) + t_unmasked · u,
// t_causal and t_unmasked the whole core's time on either curve. The backward reads its one curve for
// every call. A calibration's attention curves are indexed by one head over one sequence (each call
// runs samples × attention_heads_per_call of them): a fused attention's rate follows the keys each of
// its tiles sweeps, not how many heads share the launch (docs/calibration.md, "Attention").
void add_layer_time(Seconds& total, const PipelineWorkload& workload, const Layer& layer, const ClusterDevice& device,
                    int samples, Pass pass) {
  const PrecisionRecipe& recipe = workload.llm.precision;
  const bool attention = layer.kind == LayerKind::attention;
  const double calls = attention ? attention_calls_in_sequence(workload.llm, pass == Pass::backward) : 1.0;
  Compute core = layer_compute(workload.model, layer, 0, samples, recipe.dtype_of(layer, workload.dtype), pass);
  const double heads = attention && reads_attention_curve(device, core.dtype) && workload.model.transformer
                           ? samples * static_cast<double>(attention_heads_per_call(
                                           *workload.model.transformer,
                                           workload.transformer ? workload.tensor_parallel.degree : 1, workload.llm))
                           : 1.0;
  const double unmasked = attention && pass == Pass::forward ? unmasked_attention_share(workload.llm) : 0.0;
  if (unmasked > 0) {
    const Seconds causal = compute_time_in_calls(core, calls, device, heads);
    core.unmasked = true;
    total += causal * (1.0 - unmasked) + compute_time_in_calls(core, calls, device, heads) * unmasked;
  } else {
    total += compute_time_in_calls(core, calls, device, heads);
  }
  if (const Bytes scaling = recipe.scaling_bytes(layer, pass == Pass::backward, device.gpu); scaling.value() > 0) {
    // The quantization kernels, memory-bound and of their own (their time adds to the GEMM's).
    Compute quantize;
    quantize.dtype = workload.dtype;
    quantize.kernel = LayerKind::elementwise;
    quantize.bytes_accessed = scaling * samples;
    total += compute_time_on(quantize, device);
  }
}

// The attention cores among `layers` (with `rerun_only`, those whose forward re-runs in their backward)
// and their time in `pass` on `device` (zero without one).
std::pair<int, Seconds> step_attention(const PipelineWorkload& workload, LayerRange layers, const ClusterDevice* device,
                                       int samples, Pass pass, bool rerun_only = false) {
  const LayerModel& model = workload.model;
  std::pair<int, Seconds> result{0, Seconds(0)};
  for (std::size_t l = layers.begin; l < layers.end && l < model.layers.size(); ++l) {
    const Layer& layer = model.layers[l];
    if (layer.kind != LayerKind::attention || (rerun_only && !layer.forward_in_backward)) continue;
    ++result.first;
    if (device) add_layer_time(result.second, workload, layer, *device, samples, pass);
  }
  return result;
}

// A step's CP ring as rings of ring_attention_phases: each over `cores` attention cores, whose
// `attention` time its phases overlap (the phases' steps / CP of it). A backward whose cores selective
// recomputation re-runs starts with those cores' forward ring (TE's forward function again), over
// their forward attention, which their backward time includes (recompute_in_backward); the backward's
// ring then overlaps the rest of it.
struct RingPart {
  int cores = 0;
  Seconds attention{0};
  bool backward = false;
};
std::vector<RingPart> ring_parts(const PipelineWorkload& workload, LayerRange layers, const ClusterDevice* device,
                                 int samples, Pass pass) {
  std::vector<RingPart> result;
  if (!runs_ring(workload)) return result;
  const auto [count, attention] = step_attention(workload, layers, device, samples, pass);
  if (count == 0) return result;
  const bool backward = pass == Pass::backward;
  const auto [rerun, rerun_forward] =
      backward ? step_attention(workload, layers, device, samples, Pass::forward, true) : std::pair{0, Seconds(0)};
  if (rerun > 0) result.push_back({rerun, rerun_forward, false});
  result.push_back({count, rerun > 0 ? std::max(Seconds(0), attention - rerun_forward) : attention, backward});
  return result;
}

}  // namespace

StepGroups step_groups(const PipelineWorkload& workload, const PipelineStage& stage, std::size_t replica, int rank) {
  const int ranks = workload.ranks();
  const int tp = workload.transformer ? workload.tensor_parallel.degree : 1;
  const int cp = ranks / tp;
  const int tensor_rank = rank % tp;
  const int context_rank = rank / tp;
  // The stage's GPUs in Megatron's rank order: tensor rank fastest, then context, then replica.
  const auto stage_gpu = [&](std::size_t index) {
    return static_cast<DeviceId>(stage.devices[index / static_cast<std::size_t>(ranks)] * ranks +
                                 index % static_cast<std::size_t>(ranks));
  };
  const std::size_t self_index = replica * static_cast<std::size_t>(ranks) + static_cast<std::size_t>(rank);
  const DeviceId self = stage_gpu(self_index);
  StepGroups groups;
  for (int t = 0; t < tp; ++t) groups.tensor.push_back(stage_gpu(replica * ranks + context_rank * tp + t));
  // The CP ranks as A × P (a2a+p2p; A = 1 otherwise): a2a groups of A consecutive CP ranks, rings of
  // the P ranks congruent modulo A (create_hierarchical_parallel_groups; TE's send_dst).
  const bool hierarchical = workload.llm.context_comm == ContextComm::a2a_p2p;
  const int a2a = hierarchical ? std::max(1, workload.llm.context_a2a) : 1;
  for (int c = context_rank % a2a; c < cp; c += a2a)
    groups.context.push_back(stage_gpu(replica * ranks + c * tp + tensor_rank));
  groups.context = leading(std::move(groups.context), self);
  if (hierarchical) {
    for (int c = context_rank / a2a * a2a; c < context_rank / a2a * a2a + a2a; ++c)
      groups.context_collectives.push_back(stage_gpu(replica * ranks + c * tp + tensor_rank));
    groups.context_collectives = leading(std::move(groups.context_collectives), self);
  } else {
    groups.context_collectives = groups.context;
  }
  for (std::size_t q = 0; q < stage.devices.size(); ++q)
    for (int c = 0; c < cp; ++c) groups.sharding.push_back(stage_gpu(q * ranks + c * tp + tensor_rank));
  groups.sharding = leading(std::move(groups.sharding), self);
  const auto ep = static_cast<std::size_t>(std::max(1, workload.llm.expert));
  const std::size_t stage_gpus = stage.devices.size() * static_cast<std::size_t>(ranks);
  if (ep > 1 && stage_gpus % ep == 0) {
    const std::size_t base = self_index / ep * ep;
    for (std::size_t i = base; i < base + ep; ++i) groups.expert.push_back(stage_gpu(i));
    for (std::size_t i = self_index % ep; i < stage_gpus; i += ep) groups.expert_data.push_back(stage_gpu(i));
    groups.expert = leading(std::move(groups.expert), self);
    groups.expert_data = leading(std::move(groups.expert_data), self);
  } else {
    groups.expert = {self};
    groups.expert_data = groups.sharding;
  }
  return groups;
}

bool has_step_collectives(const PipelineWorkload& workload) {
  const LlmParallelism& llm = workload.llm;
  return workload.transformer && (workload.tensor_parallel.degree > 1 || llm.expert > 1 || llm.context > 1 || llm.fsdp);
}

std::vector<StepCollective> step_collectives(const PipelineWorkload& workload, const StepGroups& groups,
                                             int rank_in_tensor_group, LayerRange layers, int samples, Pass pass,
                                             bool recompute) {
  std::vector<StepCollective> result;
  if (!workload.transformer) return result;
  const LlmParallelism& llm = workload.llm;
  const LayerModel& model = workload.model;
  const bool backward = pass == Pass::backward;
  const int tp = workload.tensor_parallel.degree;
  const int cp = std::max(1, llm.context);
  // Tensor parallelism (tensor_parallel.hpp): one task per kind for the step's calls, over the
  // group's links; with context parallelism each rank holds s/CP tokens, so each call moves 1/CP.
  if (tp > 1 && rank_in_tensor_group == 0) {
    const TensorParallelTraffic traffic = range_traffic(model, *workload.transformer, layers.begin, layers.end, samples,
                                                        workload.tensor_parallel, backward);
    const double call_bytes = tensor_parallel_call_bytes(*workload.transformer, samples).value();
    const auto add = [&](CollectiveKind kind, Bytes size) {
      if (size.value() <= 0) return;
      Collective collective{kind, groups.tensor, size / cp, "", 0};
      collective.mirrored = workload.mirror_ranks;
      collective.calls = static_cast<std::uint32_t>(std::lround(size.value() / call_bytes));
      result.push_back({std::move(collective), llm.tensor_overlap, fmt::format("tp {}", collective_kind_name(kind))});
    };
    add(CollectiveKind::all_gather, traffic.all_gather);
    add(CollectiveKind::all_reduce, traffic.all_reduce);
    add(CollectiveKind::reduce_scatter, traffic.reduce_scatter);
  }
  const TransformerDims& dims = model.transformer ? *model.transformer : TransformerDims{};
  const bool sequence_parallel = workload.tensor_parallel.sequence_parallel;
  // Expert parallelism: a dispatch and a combine all-to-all per MoE layer and pass.
  if (llm.expert > 1 && groups.expert.size() > 1) {
    const int moe_layers = moe_layers_in_range(model, layers.begin, layers.end);
    if (moe_layers > 0) {
      const Bytes call = expert_all_to_all_bytes(dims, samples, tp, sequence_parallel, cp, llm.routing);
      result.push_back({exchange(CollectiveKind::all_to_all, groups.expert, call * (2.0 * moe_layers), 2 * moe_layers),
                        llm.expert_overlap, "ep all-to-all"});
    }
  }
  // CP's all-gather or all-to-all exchanges (not p2p's ring): around each attention core, which waits
  // for them, so they are serial; a recomputed forward runs its attention's exchanges again, and so
  // does a core that selective recomputation re-runs at the start of its backward (Megatron-Core
  // checkpoints TE's whole attention function, its CP communication included), before the backward's.
  const bool context = llm.context > 1 && groups.context_collectives.size() > 1;
  const auto add_exchanges = [&](int cores, bool of_backward) {
    if (cores <= 0) return;
    for (const ContextExchange& each : context_exchanges(dims, llm.context_comm, samples, tp, cp, of_backward)) {
      std::string what = fmt::format("cp {}", collective_kind_name(each.kind));
      std::replace(what.begin(), what.end(), '_', '-');  // "cp all-gather", as "fsdp all-gather"
      result.push_back({exchange(each.kind, groups.context_collectives, each.size * cores, each.calls * cores), false,
                        std::move(what), llm.context_comm == ContextComm::a2a_p2p});
    }
  };
  if (context) {
    if (backward) add_exchanges(step_attention(workload, layers, nullptr, samples, Pass::forward, true).first, false);
    add_exchanges(attention_layers_in_range(model, layers.begin, layers.end), backward);
  }
  // FSDP: the weights gathered before each pass, the gradients reduce-scattered after every backward
  // (ZeRO-3 reduces on every backward: `_post_backward` in megatron_fsdp.py, Megatron-LM
  // core_dev_r0.15.0), and the reduced shard, 1/(DP·CP) of the gradients, added to the rank's sharded
  // gradient buffer on the reduce-scatter's own stream after it, every micro-batch, the first into the
  // zeroed buffer (`local_grad += reduced_grad`, GradReducePipeline._bucket_group_gradient_reduce in
  // param_and_grad_buffer.py, on `side_stream_for_buffer_copy_and_grad_accum`).
  if (llm.fsdp && groups.sharding.size() > 1 && !recompute) {
    const ParameterSplit parameters = parameter_split(model, layers.begin, layers.end);
    const double stage_parameters = parameters.dense + parameters.experts;
    const FsdpTraffic traffic = fsdp_traffic(stage_parameters, llm.precision, backward);
    const int units = std::max(1, blocks_in_range(model, layers.begin, layers.end));
    result.push_back(
        {exchange(CollectiveKind::all_gather, groups.sharding, traffic.all_gather, units), true, "fsdp all-gather"});
    if (backward) {
      StepCollective scatter{exchange(CollectiveKind::reduce_scatter, groups.sharding, traffic.reduce_scatter, units),
                             true, "fsdp reduce-scatter"};
      scatter.accumulation = gradient_accumulation(stage_parameters / static_cast<double>(groups.sharding.size()),
                                                   workload.bytes_per_parameter(), groups.sharding.front());
      result.push_back(std::move(scatter));
    }
  }
  return result;
}

namespace {

// The CP ring's phases after the step's other compute (`end`: what rank's step ends with, its serial
// tail first): each phase's attention on the compute stream beside its exchange on the "context"
// stream, both after the previous phase's; the last exchange joins the step's overlapped ends.
// Returns the ring's last exchange, if any.
std::optional<TaskId> add_context_ring(TaskGraph& graph, const PipelineWorkload& workload, const StepGroups& groups,
                                       LayerRange layers, int samples, Pass pass, bool recompute,
                                       const std::string& label, std::uint32_t iteration, std::vector<TaskId>& end) {
  const DeviceId self = groups.context.front();
  const ClusterDevice* device = workload.gpus.empty() ? nullptr : &workload.gpus.at(self);
  std::optional<TaskId> exchanged;
  for (RingExchange& phase : context_ring(workload, groups, layers, device, samples, pass)) {
    const TaskId after = end.front();
    Task send{std::move(phase.exchange)};
    send.stream = graph.stream("context");
    send.phase = Phase::communication;
    send.iteration = iteration;
    send.label = fmt::format("cp ring {}", label);
    send.deps.push_back(after);
    if (exchanged) send.deps.push_back(*exchanged);
    const TaskId sent = graph.add(std::move(send));
    if (phase.attention.value() > 0) {
      Compute work;
      work.device = self;
      work.kernel = LayerKind::attention;
      work.backward = pass == Pass::backward;
      work.measured_time = phase.attention;
      work.measured_on = device->gpu.name;
      Task attention{std::move(work)};
      attention.stream = graph.stream("compute");
      attention.phase = recompute ? Phase::recompute : pass == Pass::backward ? Phase::backward : Phase::forward;
      attention.iteration = iteration;
      attention.label = fmt::format("cp attention {}", label);
      attention.deps.push_back(after);
      if (exchanged) attention.deps.push_back(*exchanged);
      end.front() = graph.add(std::move(attention));
    } else {
      end.front() = sent;
    }
    exchanged = sent;
  }
  if (exchanged && end.front() != *exchanged) end.push_back(*exchanged);
  return exchanged;
}

// `kernel` on `stream` after `collective` (StepCollective::accumulation): timed on its GPU as the
// lowering times a step (measured_time), or without per-GPU times by its bytes alone; it counts no
// model FLOPs, as the compute stream's accumulation counted none.
TaskId add_accumulation_after(TaskGraph& graph, const PipelineWorkload& workload, Compute kernel, StreamId stream,
                              TaskId collective, const std::string& label, std::uint32_t iteration) {
  if (!workload.gpus.empty()) {
    const ClusterDevice& device = workload.gpus.at(kernel.device);
    kernel.measured_time = compute_time_on(kernel, device);
    kernel.measured_on = device.gpu.name;
    kernel.bytes_accessed = Bytes(0);
  }
  kernel.flops = Flop(0);
  Task task{std::move(kernel)};
  task.stream = stream;
  task.phase = Phase::backward;
  task.iteration = iteration;
  task.label = fmt::format("fsdp accumulate {}", label);
  task.deps.push_back(collective);
  return graph.add(std::move(task));
}

}  // namespace

std::vector<std::vector<TaskId>> add_step_collectives(
    TaskGraph& graph, const PipelineWorkload& workload, const PipelineStage& stage, std::size_t replica,
    const std::vector<TaskId>& computes, const std::vector<std::vector<TaskId>>& before, Companions& companions,
    LayerRange layers, int samples, Pass pass, bool recompute, const std::string& label, std::uint32_t iteration) {
  const StreamId compute_stream = graph.stream("compute");
  const int lowered = workload.lowered_ranks();
  const int tp = workload.transformer ? workload.tensor_parallel.degree : 1;
  std::vector<std::vector<TaskId>> ends(static_cast<std::size_t>(lowered));
  for (std::size_t r = 0; r < ends.size(); ++r) ends[r] = {computes[r]};
  // Without a collective to add, not even the groups: building a rank's FSDP group walks the whole
  // stage, once per rank, replica, micro-batch and pass (7.5% of a 16,384-GPU GPT-3 run: docs/performance.md).
  if (!has_step_collectives(workload)) return ends;
  // The ranks of the tensor-parallel group of lowered rank r (those lowered).
  const auto tensor_group = [&](int r) {
    std::vector<std::size_t> members;
    for (int t = r / tp * tp; t < std::min(lowered, r / tp * tp + tp); ++t)
      members.push_back(static_cast<std::size_t>(t));
    return members;
  };
  // Every rank's CP ring first: a tensor-parallel collective waits for each member's step, ring
  // included, so a member's ring added after its group's collective would wait for that collective.
  std::vector<StepGroups> groups;
  std::vector<std::optional<TaskId>> ring_tails;
  for (int r = 0; r < lowered; ++r) {
    groups.push_back(step_groups(workload, stage, replica, r));
    ring_tails.push_back(add_context_ring(graph, workload, groups.back(), layers, samples, pass, recompute, label,
                                          iteration, ends[static_cast<std::size_t>(r)]));
  }
  for (int r = 0; r < lowered; ++r) {
    for (StepCollective& step :
         step_collectives(workload, groups[static_cast<std::size_t>(r)], r % tp, layers, samples, pass, recompute)) {
      // A tensor-parallel collective is one task for its group; an exchange, one per GPU.
      const std::vector<std::size_t> members =
          step.collective.alone ? std::vector<std::size_t>{static_cast<std::size_t>(r)} : tensor_group(r);
      Task task{std::move(step.collective)};
      task.stream = step.overlapped ? graph.stream("overlap") : compute_stream;
      task.phase = Phase::communication;
      task.iteration = iteration;
      task.label = fmt::format("{} {}", step.what, label);
      for (std::size_t m : members) {
        if (!step.overlapped) {
          task.deps.push_back(ends[m].front());
          if (step.after_ring && ring_tails[m]) task.deps.push_back(*ring_tails[m]);
        } else {
          // Starts with the step's compute: after what the rank's previous step ended with, and,
          // through its companion compute, after the step's inputs.
          if (m < before.size()) task.deps.insert(task.deps.end(), before[m].begin(), before[m].end());
        }
      }
      const StreamId stream = task.stream;
      const TaskId id = graph.add(std::move(task));
      // What the step ends with: the collective, or the accumulation its stream runs after it.
      const TaskId end = step.accumulation ? add_accumulation_after(graph, workload, std::move(*step.accumulation),
                                                                    stream, id, label, iteration)
                                           : id;
      for (std::size_t m : members) {
        if (step.overlapped) {
          ends[m].push_back(end);
          companions[computes[m]].push_back(id);
        } else {
          ends[m].front() = end;
        }
      }
    }
  }
  return ends;
}

Seconds ring_corrections_time(const PipelineWorkload& workload, const ClusterDevice& device, int samples,
                              bool backward) {
  if (!workload.model.transformer) return Seconds(0);
  const RingCorrections merges =
      ring_attention_corrections(*workload.model.transformer, samples, workload.tensor_parallel.degree,
                                 workload.llm.context, context_ring_size(workload.llm), backward);
  if (merges.kernels == 0) return Seconds(0);
  Compute merge;
  merge.dtype = workload.dtype;
  merge.kernel = LayerKind::elementwise;
  merge.bytes_accessed = merges.bytes;
  return compute_time_in_calls(merge, merges.kernels, device);
}

Seconds step_layers_time(const PipelineWorkload& workload, LayerRange layers, const ClusterDevice& device, int samples,
                         Pass pass) {
  // The ring's merges of its steps' results (ring_attention_corrections), the same for every core, after
  // the steps' exchanges; a core whose backward re-runs its forward merges the forward's again.
  const bool ring = runs_ring(workload);
  const Seconds merges = ring ? ring_corrections_time(workload, device, samples, pass == Pass::backward) : Seconds(0);
  const Seconds rerun_merges =
      ring && pass == Pass::backward ? ring_corrections_time(workload, device, samples, false) : Seconds(0);
  Seconds total{0};
  for (std::size_t l = layers.begin; l < layers.end; ++l) {
    const Layer& layer = workload.model.layers[l];
    add_layer_time(total, workload, layer, device, samples, pass);
    if (layer.kind != LayerKind::attention || !ring) continue;
    total += merges;
    if (layer.forward_in_backward) total += rerun_merges;
  }
  return total;
}

std::vector<RingExchange> context_ring(const PipelineWorkload& workload, const StepGroups& groups, LayerRange layers,
                                       const ClusterDevice* device, int samples, Pass pass) {
  std::vector<RingExchange> result;
  const std::vector<RingPart> parts = ring_parts(workload, layers, device, samples, pass);
  if (parts.empty()) return result;
  // The ring's P ranks (CP without a2a+p2p); its chunk is the flat ring's at CP (llm_parallel.hpp).
  const int ring = context_ring_size(workload.llm);
  const Bytes chunk = ring_attention_step_bytes(*workload.model.transformer, samples, workload.tensor_parallel.degree,
                                                workload.llm.context);
  for (const RingPart& part : parts)
    for (const RingPhase& phase : ring_attention_phases(ring, part.backward)) {
      // `steps` ring steps of `chunks` chunks per core: as an all-gather's ring (P − 1 steps of 1/P of
      // its size), P/(P − 1) times the bytes each GPU sends; one call per step and core. Never split
      // into channels: TE sends each step's chunk to the next CP rank only (p2p-ring), so a step
      // between nodes leaves through its sender's NIC.
      const double sent = chunk.value() * phase.chunks * phase.steps * part.cores;
      Collective exchanged = exchange(CollectiveKind::all_gather, groups.context, Bytes(sent * ring / (ring - 1.0)),
                                      part.cores * phase.steps);
      exchanged.algorithm = "p2p-ring";
      result.push_back({std::move(exchanged), part.attention * (static_cast<double>(phase.steps) / ring)});
    }
  return result;
}

Seconds ring_attention_overlapped(const PipelineWorkload& workload, LayerRange layers, const ClusterDevice& device,
                                  int samples, Pass pass) {
  const int ring = context_ring_size(workload.llm);
  Seconds total{0};
  for (const RingPart& part : ring_parts(workload, layers, &device, samples, pass)) {
    int steps = 0;
    for (const RingPhase& phase : ring_attention_phases(ring, part.backward)) steps += phase.steps;
    total += part.attention * (static_cast<double>(steps) / ring);
  }
  return total;
}

std::optional<Collective> expert_gradient_all_reduce(const PipelineWorkload& workload, const StepGroups& groups,
                                                     LayerRange layers) {
  if (workload.llm.expert <= 1 || workload.llm.fsdp || groups.expert_data.size() < 2) return std::nullopt;
  const double experts = parameter_split(workload.model, layers.begin, layers.end).experts;
  if (experts <= 0) return std::nullopt;
  return exchange(CollectiveKind::all_reduce, groups.expert_data,
                  Bytes(experts * workload.llm.precision.bytes_per_parameter().gradients), 1);
}

}  // namespace dnnsim
