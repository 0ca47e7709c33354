#include "planners/schedules/pipeline_lowering.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "planners/common/layer_cost.hpp"
#include "planners/schedules/pipeline_estimator.hpp"
#include "planners/schedules/step_communication.hpp"
#include "planners/schedules/virtual_stages.hpp"

namespace dnnsim {

PipelineShape PipelineWorkload::shape() const {
  return PipelineShape{static_cast<int>(plan.stages.size()), plan.micro_batches, plan.chunks_per_stage()};
}

double parameter_count(const LayerModel& model, LayerRange range) {
  Bytes total{0};
  for (std::size_t l = range.begin; l < range.end; ++l) total += model.layers[l].parameter_bytes;
  return total.value() / kProfileBytesPerParameter;
}

namespace {

using pipeline_detail::BoundaryPieces;
using pipeline_detail::SamplePiece;
using pipeline_detail::VirtualStage;

using PerMicroBatchReplica = std::vector<std::vector<std::vector<TaskId>>>;

PerMicroBatchReplica per_virtual_stage(std::size_t virtual_count, int micro_batches) {
  return PerMicroBatchReplica(virtual_count, std::vector<std::vector<TaskId>>(static_cast<std::size_t>(micro_batches)));
}

}  // namespace

std::vector<std::string> pipeline_problems(const PipelineWorkload& workload, const PipelineSchedule& schedule,
                                           std::size_t device_count) {
  std::vector<std::string> problems =
      workload.plan.problems(workload.model.layers.size(), device_count / static_cast<std::size_t>(workload.ranks()));
  if (!problems.empty()) return problems;
  if (workload.plan.chunks_per_stage() != schedule.chunks())
    problems.push_back(fmt::format("the schedule runs {} model chunk(s) per stage but the plan has {}",
                                   schedule.chunks(), workload.plan.chunks_per_stage()));
  if (std::string why = schedule.unsupported(workload.shape()); !why.empty()) problems.push_back(std::move(why));
  if (workload.replica_window > 0)
    for (const PipelineStage& stage : workload.plan.stages)
      if (stage.devices.size() % static_cast<std::size_t>(workload.replica_window) != 0)
        problems.push_back(fmt::format("a window of {} replicas does not divide a stage of {}", workload.replica_window,
                                       stage.devices.size()));
  return problems;
}

namespace {

// Iteration `iteration` of a synchronous schedule (run_iterations = 1), or, for an asynchronous one
// (iteration = 0), the whole run of `run_iterations` iterations as one stream of run_iterations × M
// micro-batches, each task tagged with the iteration of its micro-batch.
LoweredIteration lower_pipeline(TaskGraph& graph, const PipelineWorkload& workload, const PipelineSchedule& schedule,
                                std::uint32_t iteration, int run_iterations) {
  if (const auto problems = pipeline_problems(workload, schedule, graph.devices().size()); !problems.empty())
    throw InputError(SourceLocation{}, fmt::format("cannot lower the pipeline: {}", fmt::join(problems, "; ")));
  const StreamId compute_stream = graph.stream("compute");
  const StreamId send_next_stream = graph.stream("send-next");
  const StreamId send_prev_stream = graph.stream("send-prev");
  const StreamId all_reduce_stream = graph.stream("allreduce");

  const LayerModel& model = workload.model;
  const bool asynchronous = schedule.asynchronous();
  PipelineShape shape = workload.shape();
  const int per_iteration = shape.micro_batches;
  shape.micro_batches *= run_iterations;
  const auto p = static_cast<std::size_t>(shape.stages);
  const int micro_batches = shape.micro_batches;
  const auto iteration_of = [&](int micro_batch) {
    return asynchronous ? static_cast<std::uint32_t>(micro_batch / per_iteration) : iteration;
  };
  const std::vector<VirtualStage> chain = pipeline_detail::virtual_stages(workload);
  const std::size_t virtual_count = chain.size();
  const BytesPerParameter per_parameter = workload.bytes_per_parameter();
  const bool recompute = workload.recomputes(schedule);
  const int ranks = workload.ranks();
  const int lowered_ranks = workload.lowered_ranks();  // 1 when ranks 1 … t − 1 mirror rank 0
  const auto gpu = [ranks](DeviceId group, int rank) { return static_cast<DeviceId>(group * ranks + rank); };

  LoweredIteration lowered;
  lowered.iteration = iteration;
  lowered.shape = shape;
  lowered.forward = per_virtual_stage(virtual_count, micro_batches);
  lowered.backward = per_virtual_stage(virtual_count, micro_batches);
  lowered.backward_end = per_virtual_stage(virtual_count, micro_batches);
  if (recompute) lowered.recompute = per_virtual_stage(virtual_count, micro_batches);
  lowered.activation_transfers = per_virtual_stage(virtual_count - 1, micro_batches);
  lowered.gradient_transfers = per_virtual_stage(virtual_count - 1, micro_batches);
  lowered.all_reduce.assign(virtual_count, std::nullopt);
  lowered.optimizer.resize(p);

  // Mirrored context ranks copy the tensor rank of their group's first context rank (their own
  // tensor-parallel collectives are not lowered, so nothing else says they are copies).
  if (iteration == 0 && workload.mirror_ranks)
    for (const PipelineStage& stage : workload.plan.stages)
      for (std::size_t q = 0; q < workload.lowered_replicas(stage); ++q)
        for (int r = workload.tensor_parallel.degree; r < ranks; ++r)
          graph.set_mirror(gpu(stage.devices[q], r), gpu(stage.devices[q], r % workload.tensor_parallel.degree));
  if (iteration == 0 && workload.replica_window > 0)
    for (const PipelineStage& stage : workload.plan.stages) {
      const std::size_t window = workload.lowered_replicas(stage);
      for (std::size_t q = window; q < stage.devices.size(); ++q)
        for (int r = 0; r < ranks; ++r) graph.set_mirror(gpu(stage.devices[q], r), gpu(stage.devices[q % window], r));
    }

  std::vector<BoundaryPieces> boundaries;
  for (std::size_t b = 0; b + 1 < virtual_count; ++b)
    boundaries.push_back(pipeline_detail::overlapping_pieces(chain[b], chain[b + 1]));

  const auto task_of = [&](auto op, StreamId stream, Phase phase, InternedString label, std::uint32_t task_iteration) {
    Task task{std::move(op)};
    task.stream = stream;
    task.phase = phase;
    task.iteration = task_iteration;
    task.label = std::move(label);
    return task;
  };
  // A step's work and labels are the same for every replica and rank of its stage (only the device
  // differs), so each is computed once: layers_compute walks the chunk's layers, and formatting and
  // interning a label cost more than the rest of a task (docs/performance.md, "dnnsim's own cost per
  // operation"). Copies of one computed value: the graph is the same to the bit.
  std::map<std::tuple<std::size_t, std::size_t, int, Pass>, Compute> chunk_work;
  const auto work_of = [&](LayerRange layers, int samples, Pass pass, DeviceId device) {
    auto known = chunk_work.find(std::make_tuple(layers.begin, layers.end, samples, pass));
    if (known == chunk_work.end())
      known = chunk_work
                  .emplace(std::make_tuple(layers.begin, layers.end, samples, pass),
                           layers_compute(model, layers, 0, samples,
                                          workload.llm.precision.dominant_dtype(model.layers, layers.begin, layers.end,
                                                                                workload.dtype),
                                          pass))
                  .first;
    Compute work = known->second;
    work.device = device;
    return work;
  };
  // [gradients][boundary][micro-batch]: the label of a boundary's transfers.
  std::vector<std::vector<std::vector<std::optional<InternedString>>>> transfer_labels(
      2, std::vector<std::vector<std::optional<InternedString>>>(
             virtual_count, std::vector<std::optional<InternedString>>(static_cast<std::size_t>(micro_batches))));
  // The split-concat pieces of `boundary` (virtual stages boundary and boundary + 1) that replica
  // `replica` of the sender sends for one micro-batch: activations forwards, gradients backwards,
  // both sized by the lower stage's output per sample.
  const auto add_transfers = [&](std::size_t boundary, bool gradients, int micro_batch, int replica,
                                 const std::vector<std::vector<TaskId>>& producers) {
    const VirtualStage& lower = chain[boundary];
    const VirtualStage& upper = chain[boundary + 1];
    const VirtualStage& from = gradients ? upper : lower;
    const VirtualStage& to = gradients ? lower : upper;
    auto& ids = (gradients ? lowered.gradient_transfers
                           : lowered.activation_transfers)[boundary][static_cast<std::size_t>(micro_batch)];
    const BoundaryPieces& pieces = boundaries[boundary];
    for (const SamplePiece& piece :
         (gradients ? pieces.by_upper : pieces.by_lower)[static_cast<std::size_t>(replica)]) {
      const int source = replica;
      const int destination = gradients ? piece.lower : piece.upper;
      std::optional<InternedString>& label =
          transfer_labels[gradients ? 1 : 0][boundary][static_cast<std::size_t>(micro_batch)];
      if (!label) label = fmt::format("{} {}→{} mb{}", gradients ? "grad" : "act", from.name, to.name, micro_batch);
      for (int r = 0; r < lowered_ranks; ++r) {
        Task task = task_of(Transfer{gpu(from.devices[source], r), gpu(to.devices[destination], r),
                                     lower.output_per_sample * piece.samples, schedule.host_synchronizes_sends()},
                            gradients ? send_prev_stream : send_next_stream, Phase::communication, *label,
                            iteration_of(micro_batch));
        const std::vector<TaskId>& producer = producers[static_cast<std::size_t>(r)];
        task.deps.insert(task.deps.end(), producer.begin(), producer.end());
        ids.push_back(graph.add(std::move(task)));
      }
    }
  };
  // Overlapped collectives by the compute they start with (add_step_collectives), and per stage and
  // lowered GPU (replica · lowered_ranks + rank) those of its last step, which its optimizer step waits for.
  Companions companions;
  std::vector<std::vector<std::vector<TaskId>>> trailing(p);
  // Megatron-Core's activation offload (Transformer Engine's AsyncDoubleBufferGroupOffloadHandler,
  // offload_windows in models/dnn/llm_parallel.hpp): by layer index x = the end of block g, what
  // happens where the compute stream passes between block g and block g + 1. Forward, after block g:
  // block 0 issues its device-to-host copy; a window's last block waits for the copy in flight and
  // issues the next block's. Backward, before block g: a window's last block waits for the reload in
  // flight and issues its own window's block's; block 0 waits for its reload. The copies run on their
  // own streams over the GPU↔host link (Transfer::host), each after the compute that precedes its
  // issue; a wait is the next compute's dependency on the copy.
  struct OffloadCut {
    std::optional<int> forward_issue;   // block whose copy to the host starts here
    bool forward_wait = false;          // the compute after here waits for the copy in flight
    std::optional<int> backward_issue;  // block whose reload starts here
    bool backward_wait = false;         // the compute after here waits for the reload in flight
  };
  std::map<std::size_t, OffloadCut> offload_cuts;
  std::vector<Bytes> offloaded_per_sample;  // [block]
  if (workload.llm.offloaded_layers > 0) {
    const std::vector<LayerRange> blocks = model_blocks(model);
    const int offloaded = std::min(workload.llm.offloaded_layers, static_cast<int>(blocks.size()) - 1);
    for (const LayerRange& block : blocks) {
      Bytes bytes{0};
      for (std::size_t l = block.begin; l < block.end; ++l) bytes += model.layers[l].offloaded_bytes;
      offloaded_per_sample.push_back(bytes);
    }
    if (offloaded > 0) {
      const std::vector<int> windows = offload_windows(static_cast<int>(blocks.size()), offloaded);
      offload_cuts[blocks.front().end].forward_issue = 0;
      offload_cuts[blocks.front().end].backward_wait = true;
      for (int i = 0; i < offloaded; ++i) {
        OffloadCut& cut = offload_cuts[blocks[static_cast<std::size_t>(windows[static_cast<std::size_t>(i)])].end];
        cut.forward_wait = true;
        if (i + 1 < offloaded) cut.forward_issue = i + 1;
        cut.backward_wait = i + 1 < offloaded;
        cut.backward_issue = i;
      }
    }
  }
  // Layer-by-layer step times (PipelineWorkload::gpus), by (first layer, end, samples, forward,
  // accumulates, GPU model).
  std::map<std::tuple<std::size_t, std::size_t, int, bool, bool, std::string>, Seconds> layer_by_layer;

  // The pieces of each backward followed by a weight update — a chunk's last backward, or with an
  // asynchronous schedule every backward — as gradient buckets (or the whole chunk), with the compute
  // tasks of every replica and rank: what the update's all-reduces wait for. [virtual stage][update]:
  // one update per chunk, or one per micro-batch.
  struct BucketPiece {
    LayerRange layers;
    std::vector<TaskId> computes;
  };
  std::vector<std::vector<std::vector<BucketPiece>>> update_pieces(
      virtual_count, std::vector<std::vector<BucketPiece>>(asynchronous ? static_cast<std::size_t>(micro_batches) : 1));
  // Asynchronous: [stage][micro-batch] the optimizer steps after that backward, one per replica and
  // rank, which wait for its all-reduces (added below, once every replica's backward exists).
  std::vector<std::vector<std::vector<TaskId>>> update_steps(
      p, std::vector<std::vector<TaskId>>(asynchronous ? static_cast<std::size_t>(micro_batches) : 0));
  // [stage][chunk]: the position of the chunk's last backward in the stage's order.
  std::vector<std::vector<std::size_t>> last_backward(p);

  // Pass 1: every stage's steps in schedule order, with their outgoing transfers. The inputs of a
  // step may come from a stage lowered later, so dependencies on transfers are added in pass 2.
  std::vector<std::vector<PipelineStep>> orders(p);
  // A step is a compute task per replica and rank, and has about as many transfers, collectives and
  // buckets again: the graph's task array (~65 MB for GPT-3 on 1,024 GPUs) is grown once, ahead,
  // rather than copied at each doubling; reserved pages that stay unused are never touched.
  std::size_t expected = graph.tasks().size();
  for (std::size_t s = 0; s < p; ++s) {
    orders[s] = schedule.stage_order(static_cast<int>(s), shape);
    expected += 3 * orders[s].size() * workload.lowered_replicas(workload.plan.stages[s]) *
                static_cast<std::size_t>(lowered_ranks);
  }
  if (expected > graph.tasks().capacity()) graph.tasks().reserve(std::max(expected, 2 * graph.tasks().capacity()));
  for (std::size_t s = 0; s < p; ++s) {
    const PipelineStage& stage = workload.plan.stages[s];
    last_backward[s].assign(stage.chunks.size(), 0);
    for (std::size_t i = 0; i < orders[s].size(); ++i)
      if (orders[s][i].pass == PassKind::backward) last_backward[s][static_cast<std::size_t>(orders[s][i].chunk)] = i;
    // Bucketed only where there is an all-reduce to overlap.
    const bool bucketed = workload.overlap_all_reduce && stage.devices.size() > 1;
    // Asynchronous schedules: the backwards after which the stage updates its weights — every
    // `replicas`-th of the stage's order and its last (see the header) — and the weight versions it
    // stashes, allocated with the model states as PipeDream's runtime clones them at start.
    const int replicas = static_cast<int>(stage.devices.size());
    std::vector<bool> updates_after(orders[s].size(), false);
    for (std::size_t i = 0, backwards = 0; i < orders[s].size(); ++i)
      if (orders[s][i].pass == PassKind::backward)
        updates_after[i] = ++backwards % static_cast<std::size_t>(replicas) == 0 ||
                           i == last_backward[s][static_cast<std::size_t>(orders[s][i].chunk)];
    // The backwards that add their gradients to the chunk's accumulated ones (gradient_accumulation):
    // all but the first since the chunk's last update. Megatron's layout only (a transformer shape,
    // per-GPU layer times): the profile-driven reproductions time a step as their profile measured it.
    // Under FSDP over several ranks the reduce-scatter's stream adds the shard instead (step_collectives).
    std::vector<bool> accumulates(orders[s].size(), false);
    std::vector<bool> holds_gradients(stage.chunks.size(), false);
    if (workload.transformer && !(workload.llm.fsdp && workload.optimizer_shards(stage) > 1))
      for (std::size_t i = 0; i < orders[s].size(); ++i) {
        if (orders[s][i].pass != PassKind::backward) continue;
        const auto chunk = static_cast<std::size_t>(orders[s][i].chunk);
        accumulates[i] = holds_gradients[chunk];
        holds_gradients[chunk] = !(asynchronous ? updates_after[i] : i == last_backward[s][chunk]);
      }
    double stage_parameters = 0;
    for (const LayerRange& range : stage.chunks) stage_parameters += parameter_count(model, range);
    const Bytes stash = asynchronous ? Bytes(stage_parameters * per_parameter.weights *
                                             stashed_weight_versions(peak_in_flight(orders[s]), replicas))
                                     : Bytes(0);
    // [position]: the labels of the step's tasks, in the order they are asked for, made for the first
    // replica and the same for the others.
    std::vector<std::vector<InternedString>> step_labels(orders[s].size());
    for (std::size_t q = 0; q < workload.lowered_replicas(stage); ++q) {
      const DeviceId group = stage.devices[q];
      bool first_task = true;
      // Per lowered rank, what its previous step ended with (add_step_collectives): the next step's
      // compute also waits for the overlapped part, which belongs to the previous step.
      std::vector<std::vector<TaskId>> step_end(static_cast<std::size_t>(lowered_ranks));
      // Per lowered rank: the copy the next compute waits for, and the last copy issued each way.
      std::vector<std::optional<TaskId>> offload_wait(static_cast<std::size_t>(lowered_ranks));
      std::vector<std::optional<TaskId>> last_to_host(static_cast<std::size_t>(lowered_ranks));
      std::vector<std::optional<TaskId>> last_from_host(static_cast<std::size_t>(lowered_ranks));
      for (std::size_t position = 0; position < orders[s].size(); ++position) {
        const PipelineStep& step = orders[s][position];
        const std::size_t u = static_cast<std::size_t>(step.chunk) * p + s;
        const VirtualStage& here = chain[u];
        const int samples = here.shares[q].count;
        const Bytes activations = chunk_activation_bytes(model, here.layers, samples);
        // With a transformer shape recomputation is Megatron's: the blocks' layers only
        // (checkpointed_span), the layers around them keeping their activations; otherwise GPipe's,
        // the whole chunk from its input.
        LayerRange rerun = here.layers;
        if (workload.transformer)
          std::tie(rerun.begin, rerun.end) = checkpointed_span(model, here.layers.begin, here.layers.end);
        const Bytes rerun_activations = chunk_activation_bytes(model, rerun, samples);
        const Bytes kept_input =
            workload.transformer
                ? recompute_checkpoint_bytes(*workload.transformer, samples, workload.tensor_parallel) *
                          blocks_in_range(model, here.layers.begin, here.layers.end) +
                      (activations - rerun_activations)
                : here.input_per_sample * samples;
        // Megatron recomputes and back-propagates one block at a time: with a transformer shape,
        // one block's activations are live during the recomputation, not the chunk's.
        const Bytes recomputed =
            workload.transformer
                ? rerun_activations / std::max(1, blocks_in_range(model, here.layers.begin, here.layers.end))
                : activations;
        const auto j = static_cast<std::size_t>(step.micro_batch);
        const std::uint32_t step_iteration = iteration_of(step.micro_batch);
        std::size_t next_label = 0;
        const auto step_label = [&](const auto& make) -> const InternedString& {
          std::vector<InternedString>& labels = step_labels[position];
          if (next_label == labels.size()) labels.emplace_back(make());
          return labels[next_label++];
        };
        // The layers `layers` of the chunk as one Compute per rank of the group, then the step's
        // collectives (step_communication.hpp).
        // With `accumulate`, the step also adds its layers' weight gradients to the accumulated ones.
        const auto compute_step = [&](LayerRange layers, Pass pass, Phase phase, const InternedString& label,
                                      Bytes alloc, Bytes free, bool backward_traffic, bool accumulate,
                                      std::vector<TaskId>& ids) {
          std::vector<TaskId> computes;
          // The gradients the step adds: the layers' own.
          const auto accumulation = [&](DeviceId device) {
            return gradient_accumulation(parameter_count(model, layers), per_parameter, device);
          };
          // The step's segments in the order they run, split where an offload copy is issued or waited
          // for (offload_cuts): forward upwards, backward downwards; a cut fires after its segment.
          const bool offloads = !offload_cuts.empty() && phase != Phase::recompute;
          const bool forward = pass == Pass::forward;
          // CP's all-gathered K/V (cp_comm_type all_gather), held while the step's attention runs.
          const Bytes gather_buffer =
              workload.transformer && attention_layers_in_range(model, layers.begin, layers.end) > 0
                  ? context_gather_buffer_bytes(*model.transformer, workload.llm.context_comm, samples,
                                                workload.tensor_parallel.degree, workload.llm.context)
                  : Bytes(0);
          std::vector<LayerRange> segments{layers};
          std::vector<const OffloadCut*> fired{nullptr};
          if (offloads) {
            segments.clear();
            fired.clear();
            std::size_t from = layers.begin;
            for (auto it = offload_cuts.upper_bound(layers.begin); it != offload_cuts.end() && it->first < layers.end;
                 ++it) {
              segments.push_back(LayerRange{from, it->first});
              from = it->first;
            }
            segments.push_back(LayerRange{from, layers.end});
            if (!forward) std::reverse(segments.begin(), segments.end());
            for (const LayerRange& segment : segments) {
              const auto cut = offload_cuts.find(forward ? segment.end : segment.begin);
              fired.push_back(cut != offload_cuts.end() ? &cut->second : nullptr);
            }
          }
          for (int r = 0; r < lowered_ranks; ++r) {
            const auto rank = static_cast<std::size_t>(r);
            // What the compute stream does where it passes `cut`, right after `after` (if any).
            const auto fire = [&](const OffloadCut& cut, std::optional<TaskId> after) {
              std::optional<TaskId>& in_flight = forward ? last_to_host[rank] : last_from_host[rank];
              if (forward ? cut.forward_wait : cut.backward_wait) offload_wait[rank] = in_flight;
              const std::optional<int> block = forward ? cut.forward_issue : cut.backward_issue;
              if (!block) return;
              Task copy =
                  task_of(Transfer{gpu(group, r), gpu(group, r),
                                   offloaded_per_sample[static_cast<std::size_t>(*block)] * samples, true,
                                   forward ? HostCopy::to_host : HostCopy::from_host},
                          graph.stream(forward ? "offload-d2h" : "offload-h2d"), Phase::communication,
                          fmt::format("{} block{} {}", forward ? "offload" : "reload", *block, label), step_iteration);
              if (after) copy.deps.push_back(*after);
              in_flight = graph.add(std::move(copy));
            };
            // Backward from the model's end: the cut after its last layer (a model ending in an
            // offloaded window's last block) is passed before the step's first segment.
            if (offloads && !forward && layers.end == model.layers.size())
              if (const auto top = offload_cuts.find(layers.end); top != offload_cuts.end()) {
                const std::vector<TaskId>& before = step_end[rank];
                fire(top->second, before.empty() ? std::nullopt : std::optional<TaskId>(before.front()));
              }
            TaskId last = 0;
            for (std::size_t k = 0; k < segments.size(); ++k) {
              const LayerRange segment = segments[k];
              const bool first_segment = k == 0;
              const bool last_segment = k + 1 == segments.size();
              // The gradient accumulation is the step's own kernel, after its last segment's layers.
              const bool adds = accumulate && last_segment;
              Compute work = work_of(segment, samples, pass, gpu(group, r));
              if (workload.gpus.empty()) {
                // Without per-GPU layer times (no cluster), the accumulation's bytes join the step's
                // roofline; its FLOPs are no model's (nor hardware FLOPs, as an optimizer step's are not).
                if (adds) work.bytes_accessed += accumulation(work.device).bytes_accessed;
              } else {
                const ClusterDevice& device = workload.gpus.at(work.device);
                const auto key =
                    std::make_tuple(segment.begin, segment.end, samples, pass == Pass::forward, adds, device.gpu.name);
                auto known = layer_by_layer.find(key);
                if (known == layer_by_layer.end()) {
                  // Less the attention the CP ring's phases run beside their exchanges (step_communication.hpp).
                  Seconds total = step_layers_time(workload, segment, device, samples, pass) -
                                  ring_attention_overlapped(workload, segment, device, samples, pass);
                  if (adds) total += compute_time_on(accumulation(work.device), device);  // its own kernel: adds
                  known = layer_by_layer.emplace(key, total).first;
                }
                work.measured_time = known->second;
                work.measured_on = device.gpu.name;
              }
              Task task = task_of(std::move(work), compute_stream, phase, label, step_iteration);
              if (first_segment) {
                task.alloc_bytes = alloc + gather_buffer;
                if (iteration == 0 && first_task) task.alloc_bytes += stage_model_state_bytes(workload, s) + stash;
                const std::vector<TaskId>& before = step_end[rank];
                if (before.size() > 1) task.deps.insert(task.deps.end(), before.begin() + 1, before.end());
              }
              if (last_segment) task.free_bytes = free + gather_buffer;
              if (offload_wait[rank]) task.deps.push_back(*std::exchange(offload_wait[rank], std::nullopt));
              last = graph.add(std::move(task));
              if (offloads && fired[k] != nullptr) fire(*fired[k], last);
            }
            computes.push_back(last);
            ids.push_back(last);
          }
          first_task = false;
          step_end = add_step_collectives(graph, workload, stage, q, computes, step_end, companions, layers, samples,
                                          backward_traffic ? Pass::backward : Pass::forward, phase == Phase::recompute,
                                          label, step_iteration);
          return step_end;
        };
        if (step.pass == PassKind::forward) {
          const std::vector<std::vector<TaskId>> done =
              compute_step(here.layers, Pass::forward, Phase::forward,
                           step_label([&] { return fmt::format("fwd {} mb{}", here.name, step.micro_batch); }),
                           recompute ? kept_input : activations, Bytes(0), false, false, lowered.forward[u][j]);
          if (u + 1 < virtual_count) add_transfers(u, false, step.micro_batch, static_cast<int>(q), done);
        } else {
          if (recompute && rerun.size() > 0)
            (void)compute_step(rerun, Pass::forward, Phase::recompute, step_label([&] {
                                 return fmt::format("recompute {} mb{}", here.name, step.micro_batch);
                               }),
                               recomputed, Bytes(0), false, false, lowered.recompute[u][j]);
          const bool update = asynchronous ? updates_after[position]
                                           : position == last_backward[s][static_cast<std::size_t>(step.chunk)];
          std::vector<BucketPiece>& bucket_pieces = update_pieces[u][asynchronous ? j : 0];
          const std::vector<LayerRange> pieces = update && bucketed
                                                     ? gradient_buckets(model, workload.bucket_size, here.layers)
                                                     : std::vector<LayerRange>{here.layers};
          if (update && q == 0)
            for (const LayerRange& piece : pieces) bucket_pieces.push_back(BucketPiece{piece, {}});
          std::vector<std::vector<TaskId>> done;
          for (std::size_t k = 0; k < pieces.size(); ++k) {
            std::vector<TaskId> ids;
            const bool last_piece = k + 1 == pieces.size();
            const InternedString& label = step_label([&] {
              std::string text = fmt::format("bwd {} mb{}", here.name, step.micro_batch);
              if (pieces.size() > 1) text += fmt::format(" bucket {}", k);
              return text;
            });
            done = compute_step(pieces[k], Pass::backward, Phase::backward, label, Bytes(0),
                                !last_piece ? Bytes(0)
                                : recompute ? recomputed + kept_input
                                            : activations,
                                true, accumulates[position], ids);
            if (k == 0) lowered.backward[u][j].insert(lowered.backward[u][j].end(), ids.begin(), ids.end());
            if (last_piece) lowered.backward_end[u][j].insert(lowered.backward_end[u][j].end(), ids.begin(), ids.end());
            if (update) bucket_pieces[k].computes.insert(bucket_pieces[k].computes.end(), ids.begin(), ids.end());
          }
          if (u > 0) add_transfers(u - 1, true, step.micro_batch, static_cast<int>(q), done);
          // PipeDream updates the weights as soon as their gradients are synchronized (SOSP'19 §3.3),
          // on the stage's own stream, so its next step waits for the update.
          if (update && asynchronous)
            for (int r = 0; r < lowered_ranks; ++r) {
              Task task =
                  task_of(optimizer_step(stage_parameters, per_parameter, gpu(group, r)), compute_stream,
                          Phase::optimizer, fmt::format("optimizer step mb{}", step.micro_batch), step_iteration);
              for (const std::vector<TaskId>& end : done) task.deps.insert(task.deps.end(), end.begin(), end.end());
              update_steps[s][j].push_back(graph.add(std::move(task)));
            }
        }
      }
      for (const std::vector<TaskId>& end : step_end)
        trailing[s].emplace_back(end.begin() + (end.empty() ? 0 : 1), end.end());
    }
  }

  // Pass 2: a forward waits for the activation pieces sent to its replica, a backward for the
  // gradient pieces (and so do the collectives that start with them).
  // Forward and backward ids are [replica · lowered_ranks + rank]: the destination GPU names both.
  std::vector<Task>& tasks = graph.tasks();
  const auto slot = [&](const VirtualStage& stage, DeviceId destination) {
    const auto& replicas = stage.devices;
    const auto q = static_cast<std::size_t>(
        std::find(replicas.begin(), replicas.end(), destination / static_cast<DeviceId>(ranks)) - replicas.begin());
    return q * static_cast<std::size_t>(lowered_ranks) + destination % static_cast<DeviceId>(ranks);
  };
  const auto wait = [&](TaskId task, TaskId transfer) {
    tasks[task].deps.push_back(transfer);
    if (const auto companion = companions.find(task); companion != companions.end())
      for (TaskId id : companion->second) tasks[id].deps.push_back(transfer);
  };
  for (std::size_t u = 0; u + 1 < virtual_count; ++u)
    for (std::size_t j = 0; j < static_cast<std::size_t>(micro_batches); ++j) {
      for (TaskId transfer : lowered.activation_transfers[u][j])
        wait(lowered.forward[u + 1][j][slot(chain[u + 1], std::get<Transfer>(tasks[transfer].op).dst)], transfer);
      for (TaskId transfer : lowered.gradient_transfers[u][j]) {
        const std::size_t at = slot(chain[u], std::get<Transfer>(tasks[transfer].op).dst);
        wait(lowered.backward[u][j][at], transfer);
        if (recompute && !lowered.recompute[u][j].empty()) wait(lowered.recompute[u][j][at], transfer);
      }
    }

  // The all-reduces of one update of virtual stage u over the replicas of `stage` (per rank with
  // tensor parallelism: the rank-r GPUs of the replicas), one per bucket, each after `ready` (its
  // bucket's computes when empty); their ids are appended to `ids`.
  const auto add_all_reduces = [&](const PipelineStage& stage, std::size_t u, const std::vector<BucketPiece>& update,
                                   const std::vector<TaskId>* ready, std::uint32_t task_iteration,
                                   const std::string& suffix, std::vector<TaskId>& ids) {
    // FSDP reduce-scatters each micro-batch's gradients instead (step_communication.hpp).
    if (stage.devices.size() < 2 || workload.llm.fsdp) return;
    for (std::size_t k = 0; k < update.size(); ++k) {
      const BucketPiece& piece = update[k];
      // With expert parallelism the experts' gradients go to their own group (expert_gradient_all_reduce).
      const double parameters = workload.llm.expert > 1
                                    ? parameter_split(model, piece.layers.begin, piece.layers.end).dense
                                    : parameter_count(model, piece.layers);
      const Bytes size(parameters * per_parameter.gradients);
      if (size.value() <= 0) continue;
      std::string label = fmt::format("all-reduce {}{}", chain[u].name, suffix);
      if (update.size() > 1) label += fmt::format(" bucket {}", k);
      const std::size_t window = workload.lowered_replicas(stage);
      for (int r = 0; r < lowered_ranks; ++r) {
        std::vector<DeviceId> replicas;
        for (std::size_t q = 0; q < window; ++q) replicas.push_back(gpu(stage.devices[q], r));
        Collective collective{CollectiveKind::all_reduce, replicas, size, workload.collective_algorithm, 0};
        collective.copies = static_cast<std::uint32_t>(stage.devices.size() / window);
        Task task = task_of(std::move(collective), all_reduce_stream, Phase::communication, label, task_iteration);
        task.deps = ready != nullptr ? *ready : piece.computes;
        const TaskId id = graph.add(std::move(task));
        if (r == 0) lowered.all_reduce[u] = id;
        ids.push_back(id);
      }
    }
  };

  if (asynchronous) {
    // Each update's all-reduce (bucketed with its backward or after it, as the pieces say), which
    // that update's optimizer steps wait for; the last ones are the run's all_reduce/optimizer.
    for (std::size_t s = 0; s < p; ++s) {
      const PipelineStage& stage = workload.plan.stages[s];
      for (const PipelineStep& step : orders[s]) {
        if (step.pass != PassKind::backward || update_steps[s][static_cast<std::size_t>(step.micro_batch)].empty())
          continue;
        const auto j = static_cast<std::size_t>(step.micro_batch);
        const std::size_t u = static_cast<std::size_t>(step.chunk) * p + s;
        std::vector<TaskId> all_reduces;
        add_all_reduces(stage, u, update_pieces[u][j], nullptr, iteration_of(step.micro_batch),
                        fmt::format(" mb{}", step.micro_batch), all_reduces);
        for (TaskId id : update_steps[s][j]) {
          auto& deps = graph.tasks()[id].deps;
          deps.insert(deps.end(), all_reduces.begin(), all_reduces.end());
        }
        lowered.optimizer[s] = update_steps[s][j];
      }
    }
    return lowered;
  }

  // Gradient all-reduce per chunk among the replicas, one per bucket of its last backward, then one
  // optimizer step per GPU.
  for (std::size_t s = 0; s < p; ++s) {
    const PipelineStage& stage = workload.plan.stages[s];
    std::vector<TaskId> stage_all_reduces;
    // With overlap, each chunk's buckets as they become ready, the chunk whose last backward runs
    // first first. Without, every chunk's all-reduce after the stage's last backward (the flush), in
    // chunk order, as DDP without overlap and Megatron-LM's local DDP run it.
    std::vector<std::size_t> chunks(stage.chunks.size());
    std::iota(chunks.begin(), chunks.end(), std::size_t{0});
    const auto runs_earlier = [&](std::size_t a, std::size_t b) { return last_backward[s][a] < last_backward[s][b]; };
    const std::size_t flush_chunk = *std::max_element(chunks.begin(), chunks.end(), runs_earlier);
    if (workload.overlap_all_reduce) std::sort(chunks.begin(), chunks.end(), runs_earlier);
    for (std::size_t c : chunks) {
      const std::vector<TaskId>& chunk_done = update_pieces[c * p + s][0].back().computes;
      add_all_reduces(stage, c * p + s, update_pieces[c * p + s][0],
                      workload.overlap_all_reduce ? nullptr : &update_pieces[flush_chunk * p + s][0].back().computes,
                      iteration, "", stage_all_reduces);
      for (std::size_t q = 0; q < workload.lowered_replicas(stage); ++q)
        for (int r = 0; r < lowered_ranks; ++r)
          if (auto experts =
                  expert_gradient_all_reduce(workload, step_groups(workload, stage, q, r), stage.chunks[c])) {
            Task task = task_of(std::move(*experts), all_reduce_stream, Phase::communication,
                                fmt::format("expert all-reduce {}", chain[c * p + s].name), iteration);
            task.deps = chunk_done;
            stage_all_reduces.push_back(graph.add(std::move(task)));
          }
    }
    double stage_parameters = 0;
    for (const LayerRange& range : stage.chunks) stage_parameters += parameter_count(model, range);
    for (std::size_t q = 0; q < workload.lowered_replicas(stage); ++q)
      for (int r = 0; r < lowered_ranks; ++r) {
        // An LLM's sharded optimizer updates its shard only (the older layouts' step is the stage's whole).
        const double updated =
            workload.llm.any() ? stage_parameters / workload.optimizer_shards(stage) : stage_parameters;
        Task task = task_of(optimizer_step(updated, per_parameter, gpu(stage.devices[q], r)), compute_stream,
                            Phase::optimizer, "optimizer step", iteration);
        task.deps = stage_all_reduces;
        const std::vector<TaskId>& last_overlapped = trailing[s][q * static_cast<std::size_t>(lowered_ranks) + r];
        task.deps.insert(task.deps.end(), last_overlapped.begin(), last_overlapped.end());
        lowered.optimizer[s].push_back(graph.add(std::move(task)));
      }
  }
  return lowered;
}

}  // namespace

LoweredIteration lower_pipeline_iteration(TaskGraph& graph, const PipelineWorkload& workload,
                                          const PipelineSchedule& schedule, std::uint32_t iteration) {
  if (schedule.asynchronous())
    throw std::invalid_argument(
        "lower_pipeline_iteration: an asynchronous schedule is lowered as a whole run "
        "(lower_pipeline_run)");
  return lower_pipeline(graph, workload, schedule, iteration, 1);
}

LoweredIteration lower_pipeline_run(TaskGraph& graph, const PipelineWorkload& workload,
                                    const PipelineSchedule& schedule, int iterations) {
  if (!schedule.asynchronous() || iterations < 1)
    throw std::invalid_argument(fmt::format("lower_pipeline_run: {} iterations of a {} schedule", iterations,
                                            schedule.asynchronous() ? "asynchronous" : "synchronous"));
  return lower_pipeline(graph, workload, schedule, 0, iterations);
}

TaskGraph build_pipeline(const PipelineWorkload& workload, const PipelineSchedule& schedule,
                         const std::vector<std::string>& device_names, int iterations) {
  TaskGraph graph;
  for (const std::string& name : device_names) graph.add_device(name);
  if (schedule.asynchronous()) {
    (void)lower_pipeline_run(graph, workload, schedule, iterations);
    return graph;
  }
  for (int i = 0; i < iterations; ++i)
    (void)lower_pipeline_iteration(graph, workload, schedule, static_cast<std::uint32_t>(i));
  return graph;
}

}  // namespace dnnsim
