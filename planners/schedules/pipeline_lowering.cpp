#include "planners/schedules/pipeline_lowering.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "planners/common/layer_cost.hpp"

namespace dnnsim {

PipelineShape PipelineWorkload::shape() const {
  return PipelineShape{static_cast<int>(plan.stages.size()), plan.micro_batches, plan.chunks_per_stage()};
}

namespace {

double parameter_count(const LayerModel& model, LayerRange range) {
  Bytes total{0};
  for (std::size_t l = range.begin; l < range.end; ++l) total += model.layers[l].parameter_bytes;
  return total.value() / kProfileBytesPerParameter;
}

// What the lowering needs to know about one virtual stage.
struct VirtualStage {
  std::size_t stage = 0;
  int chunk = 0;
  LayerRange layers;
  std::vector<DeviceId> devices;      // replicas
  std::vector<SampleShare> shares;    // per replica, of one micro-batch
  Bytes output_per_sample{0};         // activation_bytes of the chunk's last layer: what moves to the next stage
  Bytes input_per_sample{0};          // what re-materialization keeps: the previous layer's output, 0 for layer 0
  std::string name;                   // "s1" or, interleaved, "s1c0"
};

std::vector<VirtualStage> virtual_stages(const PipelineWorkload& workload) {
  const PipelinePlan& plan = workload.plan;
  const std::size_t p = plan.stages.size();
  const int chunks = plan.chunks_per_stage();
  std::vector<VirtualStage> result;
  for (int c = 0; c < chunks; ++c)
    for (std::size_t s = 0; s < p; ++s) {
      VirtualStage v;
      v.stage = s;
      v.chunk = c;
      v.layers = plan.stages[s].chunks[c];
      v.devices = plan.stages[s].devices;
      const int replicas = static_cast<int>(v.devices.size());
      for (int q = 0; q < replicas; ++q) v.shares.push_back(replica_share(plan.micro_batch_size(), replicas, q));
      v.output_per_sample = workload.model.layers[v.layers.end - 1].activation_bytes;
      v.input_per_sample = v.layers.begin == 0 ? Bytes(0) : workload.model.layers[v.layers.begin - 1].activation_bytes;
      v.name = chunks == 1 ? fmt::format("s{}", s) : fmt::format("s{}c{}", s, c);
      result.push_back(std::move(v));
    }
  return result;
}

// One split-concat piece of a boundary: the samples replica `lower` of a virtual stage and replica
// `upper` of the next one have in common.
struct SamplePiece {
  int lower = 0;
  int upper = 0;
  int samples = 0;
};

// A boundary's pieces indexed by the replica that sends them: forwards by the lower replica,
// backwards by the upper one. Built once per boundary: every replica of every micro-batch looks its
// pieces up, and scanning all replica pairs each time made lowering cubic in the replica count.
struct BoundaryPieces {
  std::vector<std::vector<SamplePiece>> by_lower;
  std::vector<std::vector<SamplePiece>> by_upper;
};

BoundaryPieces overlapping_pieces(const VirtualStage& lower, const VirtualStage& upper) {
  BoundaryPieces pieces;
  pieces.by_lower.resize(lower.shares.size());
  pieces.by_upper.resize(upper.shares.size());
  for (std::size_t a = 0; a < lower.shares.size(); ++a)
    for (std::size_t b = 0; b < upper.shares.size(); ++b) {
      const SampleShare& x = lower.shares[a];
      const SampleShare& y = upper.shares[b];
      const int overlap = std::min(x.begin + x.count, y.begin + y.count) - std::max(x.begin, y.begin);
      if (overlap <= 0) continue;
      const SamplePiece piece{static_cast<int>(a), static_cast<int>(b), overlap};
      pieces.by_lower[a].push_back(piece);
      pieces.by_upper[b].push_back(piece);
    }
  return pieces;
}

using PerMicroBatchReplica = std::vector<std::vector<std::vector<TaskId>>>;

PerMicroBatchReplica per_virtual_stage(std::size_t virtual_count, int micro_batches) {
  return PerMicroBatchReplica(virtual_count, std::vector<std::vector<TaskId>>(static_cast<std::size_t>(micro_batches)));
}

}  // namespace

Bytes chunk_activation_bytes(const LayerModel& model, LayerRange range, int samples) {
  Bytes total{0};
  for (std::size_t l = range.begin; l < range.end; ++l) total += model.layers[l].activation_bytes;
  return total * samples;
}

Bytes stage_model_state_bytes(const PipelineWorkload& workload, std::size_t stage) {
  double parameters = 0;
  for (const LayerRange& range : workload.plan.stages[stage].chunks) parameters += parameter_count(workload.model, range);
  return Bytes(parameters * bytes_per_parameter(workload.precision, workload.optimizer).total());
}

std::vector<std::string> pipeline_problems(const PipelineWorkload& workload, const PipelineSchedule& schedule,
                                           std::size_t device_count) {
  std::vector<std::string> problems = workload.plan.problems(workload.model.layers.size(), device_count);
  if (!problems.empty()) return problems;
  if (workload.plan.chunks_per_stage() != schedule.chunks())
    problems.push_back(fmt::format("the schedule runs {} model chunk(s) per stage but the plan has {}",
                                   schedule.chunks(), workload.plan.chunks_per_stage()));
  if (std::string why = schedule.unsupported(workload.shape()); !why.empty()) problems.push_back(std::move(why));
  return problems;
}

LoweredIteration lower_pipeline_iteration(TaskGraph& graph, const PipelineWorkload& workload,
                                          const PipelineSchedule& schedule, std::uint32_t iteration) {
  if (const auto problems = pipeline_problems(workload, schedule, graph.devices().size()); !problems.empty())
    throw InputError(SourceLocation{}, fmt::format("cannot lower the pipeline: {}", fmt::join(problems, "; ")));
  const StreamId compute_stream = graph.stream("compute");
  const StreamId send_next_stream = graph.stream("send-next");
  const StreamId send_prev_stream = graph.stream("send-prev");
  const StreamId all_reduce_stream = graph.stream("allreduce");

  const LayerModel& model = workload.model;
  const PipelineShape shape = workload.shape();
  const auto p = static_cast<std::size_t>(shape.stages);
  const int micro_batches = shape.micro_batches;
  const std::vector<VirtualStage> chain = virtual_stages(workload);
  const std::size_t virtual_count = chain.size();
  const BytesPerParameter per_parameter = bytes_per_parameter(workload.precision, workload.optimizer);
  const bool recompute = schedule.recompute();

  LoweredIteration lowered;
  lowered.iteration = iteration;
  lowered.shape = shape;
  lowered.forward = per_virtual_stage(virtual_count, micro_batches);
  lowered.backward = per_virtual_stage(virtual_count, micro_batches);
  if (recompute) lowered.recompute = per_virtual_stage(virtual_count, micro_batches);
  lowered.activation_transfers = per_virtual_stage(virtual_count - 1, micro_batches);
  lowered.gradient_transfers = per_virtual_stage(virtual_count - 1, micro_batches);
  lowered.all_reduce.assign(virtual_count, std::nullopt);
  lowered.optimizer.resize(p);

  std::vector<BoundaryPieces> boundaries;
  for (std::size_t b = 0; b + 1 < virtual_count; ++b) boundaries.push_back(overlapping_pieces(chain[b], chain[b + 1]));

  const auto task_of = [&](auto op, StreamId stream, Phase phase, std::string label) {
    Task task{std::move(op)};
    task.stream = stream;
    task.phase = phase;
    task.iteration = iteration;
    task.label = std::move(label);
    return task;
  };
  // The split-concat pieces of `boundary` (virtual stages boundary and boundary + 1) that replica
  // `replica` of the sender sends for one micro-batch: activations forwards, gradients backwards,
  // both sized by the lower stage's output per sample.
  const auto add_transfers = [&](std::size_t boundary, bool gradients, int micro_batch, int replica, TaskId producer) {
    const VirtualStage& lower = chain[boundary];
    const VirtualStage& upper = chain[boundary + 1];
    const VirtualStage& from = gradients ? upper : lower;
    const VirtualStage& to = gradients ? lower : upper;
    auto& ids = (gradients ? lowered.gradient_transfers : lowered.activation_transfers)[boundary]
                                                                                     [static_cast<std::size_t>(micro_batch)];
    const BoundaryPieces& pieces = boundaries[boundary];
    for (const SamplePiece& piece : (gradients ? pieces.by_upper : pieces.by_lower)[static_cast<std::size_t>(replica)]) {
      const int source = replica;
      const int destination = gradients ? piece.lower : piece.upper;
      Task task = task_of(Transfer{from.devices[source], to.devices[destination], lower.output_per_sample * piece.samples},
                          gradients ? send_prev_stream : send_next_stream, Phase::communication,
                          fmt::format("{} {}→{} mb{}", gradients ? "grad" : "act", from.name, to.name, micro_batch));
      task.deps.push_back(producer);
      ids.push_back(graph.add(std::move(task)));
    }
  };

  // Pass 1: every stage's steps in schedule order, with their outgoing transfers. The inputs of a
  // step may come from a stage lowered later, so dependencies on transfers are added in pass 2.
  std::vector<std::vector<PipelineStep>> orders(p);
  for (std::size_t s = 0; s < p; ++s) {
    orders[s] = schedule.stage_order(static_cast<int>(s), shape);
    const PipelineStage& stage = workload.plan.stages[s];
    for (std::size_t q = 0; q < stage.devices.size(); ++q) {
      const DeviceId device = stage.devices[q];
      bool first_task = true;
      for (const PipelineStep& step : orders[s]) {
        const std::size_t u = static_cast<std::size_t>(step.chunk) * p + s;
        const VirtualStage& here = chain[u];
        const int samples = here.shares[q].count;
        const Bytes activations = chunk_activation_bytes(model, here.layers, samples);
        const Bytes kept_input = here.input_per_sample * samples;
        const auto j = static_cast<std::size_t>(step.micro_batch);
        if (step.pass == PassKind::forward) {
          Task task = task_of(layers_compute(model, here.layers, device, samples, workload.dtype, Pass::forward),
                              compute_stream, Phase::forward, fmt::format("fwd {} mb{}", here.name, step.micro_batch));
          task.alloc_bytes = recompute ? kept_input : activations;
          if (iteration == 0 && first_task) task.alloc_bytes += stage_model_state_bytes(workload, s);
          first_task = false;
          const TaskId id = graph.add(std::move(task));
          lowered.forward[u][j].push_back(id);
          if (u + 1 < virtual_count) add_transfers(u, false, step.micro_batch, static_cast<int>(q), id);
        } else {
          if (recompute) {
            Task task = task_of(layers_compute(model, here.layers, device, samples, workload.dtype, Pass::forward),
                                compute_stream, Phase::recompute,
                                fmt::format("recompute {} mb{}", here.name, step.micro_batch));
            task.alloc_bytes = activations;
            lowered.recompute[u][j].push_back(graph.add(std::move(task)));
          }
          Task task = task_of(layers_compute(model, here.layers, device, samples, workload.dtype, Pass::backward),
                              compute_stream, Phase::backward, fmt::format("bwd {} mb{}", here.name, step.micro_batch));
          task.free_bytes = recompute ? activations + kept_input : activations;
          const TaskId id = graph.add(std::move(task));
          lowered.backward[u][j].push_back(id);
          if (u > 0) add_transfers(u - 1, true, step.micro_batch, static_cast<int>(q), id);
        }
      }
    }
  }

  // Pass 2: a forward waits for the activation pieces sent to its replica, a backward for the
  // gradient pieces.
  std::vector<Task>& tasks = graph.tasks();
  for (std::size_t u = 0; u + 1 < virtual_count; ++u)
    for (std::size_t j = 0; j < static_cast<std::size_t>(micro_batches); ++j) {
      for (TaskId transfer : lowered.activation_transfers[u][j]) {
        const DeviceId destination = std::get<Transfer>(tasks[transfer].op).dst;
        const auto& replicas = chain[u + 1].devices;
        const auto q = static_cast<std::size_t>(std::find(replicas.begin(), replicas.end(), destination) - replicas.begin());
        tasks[lowered.forward[u + 1][j][q]].deps.push_back(transfer);
      }
      for (TaskId transfer : lowered.gradient_transfers[u][j]) {
        const DeviceId destination = std::get<Transfer>(tasks[transfer].op).dst;
        const auto& replicas = chain[u].devices;
        const auto q = static_cast<std::size_t>(std::find(replicas.begin(), replicas.end(), destination) - replicas.begin());
        tasks[lowered.backward[u][j][q]].deps.push_back(transfer);
      }
    }

  // Gradient all-reduce per chunk among the replicas, then one optimizer step per device.
  for (std::size_t s = 0; s < p; ++s) {
    const PipelineStage& stage = workload.plan.stages[s];
    std::vector<TaskId> stage_all_reduces;
    for (std::size_t c = 0; c < stage.chunks.size(); ++c) {
      const std::size_t u = c * p + s;
      const Bytes size(parameter_count(model, stage.chunks[c]) * per_parameter.gradients);
      if (stage.devices.size() < 2 || size.value() <= 0) continue;
      const auto last_backward = std::find_if(orders[s].rbegin(), orders[s].rend(), [&](const PipelineStep& step) {
        return step.pass == PassKind::backward && static_cast<std::size_t>(step.chunk) == c;
      });
      Task task = task_of(Collective{CollectiveKind::all_reduce, stage.devices, size, workload.collective_algorithm, 0},
                          all_reduce_stream, Phase::communication, fmt::format("all-reduce {}", chain[u].name));
      task.deps = lowered.backward[u][static_cast<std::size_t>(last_backward->micro_batch)];
      const TaskId id = graph.add(std::move(task));
      lowered.all_reduce[u] = id;
      stage_all_reduces.push_back(id);
    }
    double stage_parameters = 0;
    for (const LayerRange& range : stage.chunks) stage_parameters += parameter_count(model, range);
    for (DeviceId device : stage.devices) {
      Task task = task_of(optimizer_step(stage_parameters, per_parameter, device), compute_stream, Phase::optimizer,
                          "optimizer step");
      task.deps = stage_all_reduces;
      lowered.optimizer[s].push_back(graph.add(std::move(task)));
    }
  }
  return lowered;
}

TaskGraph build_pipeline(const PipelineWorkload& workload, const PipelineSchedule& schedule,
                         const std::vector<std::string>& device_names, int iterations) {
  TaskGraph graph;
  for (const std::string& name : device_names) graph.add_device(name);
  for (int i = 0; i < iterations; ++i) (void)lower_pipeline_iteration(graph, workload, schedule, static_cast<std::uint32_t>(i));
  return graph;
}

}  // namespace dnnsim
