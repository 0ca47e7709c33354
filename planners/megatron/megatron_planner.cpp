#include "planners/megatron/megatron_planner.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "models/common/units.hpp"
#include "planners/common/all_reduce_paths.hpp"
#include "planners/common/layer_cost.hpp"
#include "planners/megatron/llm_layout.hpp"
#include "planners/parallel/plan_clock.hpp"
#include "planners/parallel/planners.hpp"

namespace dnnsim {
namespace {

// The slowest path among the given GPUs' pairs of consecutive members, and with `ring` from the last
// back to the first (a ring's hops; without, a pipeline's stage-to-stage sends).
PathCost slowest_path(const ClusterView& cluster, const std::vector<DeviceId>& members, bool ring) {
  PathCost slowest{Seconds(0), BytesPerSecond(0)};
  for (std::size_t i = 0; i + (ring ? 0 : 1) < members.size(); ++i) {
    const DeviceId a = members[i];
    const DeviceId b = members[(i + 1) % members.size()];
    if (a == b) continue;
    const PathCost& path = cluster.path(a, b);
    if (slowest.bandwidth.value() == 0 || path.bandwidth < slowest.bandwidth) slowest = path;
    slowest.latency = std::max(slowest.latency, path.latency);
  }
  return slowest;
}

// One micro-batch's boundary tensor sent from a stage to the next (each of the t ranks its 1/t with
// sequence parallelism, in parallel): α + bytes/β over the slowest path between consecutive stages'
// first groups. 0 without a pipeline.
Seconds pipeline_send(const ClusterView& cluster, const TransformerShape& shape, int micro_batch,
                      const MegatronCandidate& c, int t) {
  if (c.pipeline < 2) return Seconds(0);
  std::vector<DeviceId> stage_heads;
  for (int s = 0; s < c.pipeline; ++s) stage_heads.push_back(static_cast<DeviceId>(s * c.data * t));
  return point_to_point_time(boundary_bytes_per_rank(shape, c.options) * micro_batch,
                             slowest_path(cluster, stage_heads, false));
}

// The calibrated fixed cost of one NCCL call (CollectiveCalibration::latency), 0 without a
// collectives section: the executor pays it once per tensor-parallel call, pipeline send and
// all-reduce, before the bytes move.
Seconds call_latency(const ClusterDevice& device) { return collectives_of(device.calibration.get()).latency; }

// A pass's tensor-parallel collectives over the group's ring, as the lowering makes them: one task
// per kind (the all-reduces, or with sequence parallelism the all-gathers and reduce-scatters, whose
// ring is an all-gather's), timed by the closed forms of models/cost/collective_cost.hpp, each
// standing for size / call_bytes calls that pay `latency` each.
Seconds tensor_parallel_time(const TensorParallelTraffic& traffic, int t, const PathCost& path, Bytes call_bytes,
                             Seconds latency) {
  Seconds total{0};
  const auto add = [&](Bytes size, Seconds (*ring)(Bytes, int, const PathCost&)) {
    if (size.value() > 0) total += ring(size, t, path) + latency * std::round(size.value() / call_bytes.value());
  };
  if (t < 2) return total;
  add(traffic.all_reduce, ring_all_reduce_time);
  add(traffic.all_gather, ring_all_gather_time);
  add(traffic.reduce_scatter, ring_all_gather_time);
  return total;
}

}  // namespace

MegatronSearch search_megatron(const PlanRequest& request, bool distributed_optimizer) {
  MegatronSearch search;
  const auto shape = transformer_shape(request.model);
  if (!shape || request.cluster.size() == 0) {
    search.first_problem = "the 3D planner needs a transformer model (attention layers, as the zoo's) and GPUs";
    return search;
  }
  const int gpus = static_cast<int>(request.cluster.size());
  const int node = static_cast<int>(gpus_per_node(request.cluster));
  const ClusterDevice& device = request.cluster.devices.front();
  const Seconds latency = call_latency(device);
  const BytesPerParameter per_parameter = bytes_per_parameter(request.memory.precision, request.memory.optimizer);
  std::vector<Recompute> recompute_modes;
  for (const std::string& mode : request.options.choice_list("recompute"))
    recompute_modes.push_back(*recompute_from_name(mode));
  if (recompute_modes.empty()) recompute_modes = {Recompute::none, Recompute::selective, Recompute::full};
  const bool sequence_parallel = !request.options.has("sequence_parallel") || request.options.flag("sequence_parallel");
  for (int t : divisors(std::min(gpus, node))) {
    if (!tensor_parallel_problems(request.model, t).empty()) continue;
    std::vector<DeviceId> group;
    for (int r = 0; r < t; ++r) group.push_back(static_cast<DeviceId>(r));
    const PathCost tp_path = t > 1 ? slowest_path(request.cluster, group, true) : PathCost{};
    for (int p : divisors(gpus / t)) {
      // The data-parallel all-reduce's paths: over the first stage's replicas, the first GPU of each group.
      const int d = gpus / (t * p);
      std::vector<DeviceId> replicas;
      for (int q = 0; q < d; ++q) replicas.push_back(static_cast<DeviceId>(q * t));
      const std::optional<AllReducePaths> dp_paths =
          d > 1 ? std::optional(all_reduce_paths(request.cluster, replicas)) : std::nullopt;
      // v: the schedule's, or with choose_chunks 1 and every v > 1 an interleaved pipeline can take.
      std::vector<int> chunk_choices{request.chunks_per_stage};
      if (request.choose_chunks) chunk_choices = p == 1 ? std::vector<int>{1} : divisors(shape->blocks / p);
      for (int v : chunk_choices) {
        if (shape->blocks % (p * v) != 0) continue;  // Megatron: whole blocks per model chunk
        for (int b = 1; d * b <= request.global_batch; b *= 2) {
          if (request.global_batch % (d * b) != 0) continue;
          const int micro_batches = request.global_batch / (d * b);
          if (v > 1 && micro_batches % p != 0) continue;  // interleaved 1F1B needs M % p == 0
          for (Recompute recompute : recompute_modes) {
            ++search.considered;
            MegatronCandidate c{
                t, p, d, b, v, TensorParallelOptions{t, sequence_parallel && t > 1, recompute, distributed_optimizer}};
            const LayerModel shard = shard_for_tensor_parallel(request.model, c.options);
            // Whole blocks per chunk (uniform_split); stage 0 holds the most micro-batches in flight
            // (memory), the slowest stage sets the pace (time).
            const std::vector<LayerRange> ranges = uniform_split(request.model, static_cast<std::size_t>(p) * v);
            double parameters = 0;
            // The slowest stage's passes: forward, backward, and the forward of its blocks again
            // under full recomputation (checkpointed_span: Megatron re-runs the blocks only).
            Seconds forward{0}, backward{0}, rerun{0}, accumulation{0};
            int blocks = 0;
            Bytes activations{0}, rerun_activations{0};
            TensorParallelTraffic forward_traffic, backward_traffic, rerun_traffic;
            for (int stage = 0; stage < p; ++stage) {
              Seconds stage_forward{0}, stage_backward{0}, stage_rerun{0};
              double stage_parameters = 0;
              std::size_t kernels = 0, rerun_kernels = 0;  // a layer is one kernel (layers_compute's launches)
              TensorParallelTraffic stage_forward_traffic, stage_backward_traffic, stage_rerun_traffic;
              for (int chunk = 0; chunk < v; ++chunk) {
                const LayerRange range = ranges[static_cast<std::size_t>(chunk) * p + stage];
                const auto [rerun_begin, rerun_end] = checkpointed_span(shard, range.begin, range.end);
                kernels += range.size();
                rerun_kernels += rerun_end - rerun_begin;
                if (stage == 0) blocks += blocks_in_range(shard, range.begin, range.end);
                for (std::size_t l = range.begin; l < range.end; ++l) {
                  const Layer& layer = shard.layers[l];
                  const bool rerun_layer = l >= rerun_begin && l < rerun_end;
                  stage_parameters += layer.parameter_bytes.value() / kProfileBytesPerParameter;
                  if (stage == 0) {
                    parameters += layer.parameter_bytes.value() / kProfileBytesPerParameter;
                    activations += layer.activation_bytes * b;
                    if (rerun_layer) rerun_activations += layer.activation_bytes * b;
                  }
                  const Seconds layer_forward = layer_time(shard, layer, device, b, request.dtype, Pass::forward);
                  stage_forward += layer_forward;
                  if (rerun_layer) stage_rerun += layer_forward;
                  stage_backward += layer_time(shard, layer, device, b, request.dtype, Pass::backward);
                }
                stage_forward_traffic = stage_forward_traffic + range_traffic(request.model, *shape, range.begin,
                                                                              range.end, b, c.options, false);
                stage_backward_traffic = stage_backward_traffic + range_traffic(request.model, *shape, range.begin,
                                                                                range.end, b, c.options, true);
                stage_rerun_traffic = stage_rerun_traffic +
                                      range_traffic(request.model, *shape, rerun_begin, rerun_end, b, c.options, false);
              }
              // Under a launch model the host issues each pass's kernels: a stage of many short
              // kernels is bound by the issuing, not by the GPU.
              stage_forward = issued_time(stage_forward, kernels, device);
              stage_backward = issued_time(stage_backward, kernels, device);
              stage_rerun = issued_time(stage_rerun, rerun_kernels, device);
              const Seconds stage_step =
                  stage_forward + stage_backward + (recompute == Recompute::full ? stage_rerun : Seconds(0));
              if (stage_step > forward + backward + (recompute == Recompute::full ? rerun : Seconds(0))) {
                forward = stage_forward;
                backward = stage_backward;
                rerun = stage_rerun;
                accumulation = compute_time_on(gradient_accumulation(stage_parameters, per_parameter, 0), device);
                forward_traffic = stage_forward_traffic;
                backward_traffic = stage_backward_traffic;
                rerun_traffic = stage_rerun_traffic;
              }
            }
            const int in_flight =
                request.in_flight ? request.in_flight(0, p, micro_batches, v) : std::min(p, micro_batches);
            // Full recomputation keeps the blocks' inputs and the other layers' activations per
            // micro-batch in flight, and one block's activations while it is recomputed; the other
            // modes keep what shard_for_tensor_parallel set.
            Bytes kept = activations * in_flight;
            if (recompute == Recompute::full)
              kept = (recompute_checkpoint_bytes(*shape, b, c.options) * blocks + (activations - rerun_activations)) *
                         in_flight +
                     rerun_activations / std::max(1, blocks);
            const double optimizer_share = distributed_optimizer ? d : 1.0;
            c.memory = Bytes(parameters * (per_parameter.weights + per_parameter.gradients +
                                           per_parameter.optimizer_state / optimizer_share)) +
                       kept + request.memory.framework_overhead;
            if (c.memory > device.gpu.memory) {
              if (search.first_problem.empty())
                search.first_problem = fmt::format(
                    "TP {} × PP {} × DP {}, micro-batch {}, recompute {}: {:.1f} GiB > {:.1f} GiB", t, p, d, b,
                    recompute_name(recompute), c.memory.value() / (1 << 30), device.gpu.memory.value() / (1 << 30));
              continue;
            }
            const Bytes call_bytes = tensor_parallel_call_bytes(*shape, b);
            const Seconds tp_forward = tensor_parallel_time(forward_traffic, t, tp_path, call_bytes, latency);
            const Seconds tp_backward = tensor_parallel_time(backward_traffic, t, tp_path, call_bytes, latency);
            // Each send is one call too (ncclSend/ncclRecv).
            const Seconds send = p > 1 ? pipeline_send(request.cluster, *shape, b, c, t) + latency : Seconds(0);
            Seconds step = forward + backward + tp_forward + tp_backward + send * (2.0 * v);
            if (recompute == Recompute::full)  // the blocks' forward again, with its collectives
              step += rerun + tensor_parallel_time(rerun_traffic, t, tp_path, call_bytes, latency);
            // One all-reduce call per model chunk, after the pipeline (Megatron-LM's local DDP).
            const Seconds dp_time =
                dp_paths ? all_reduce_time(Bytes(parameters * per_parameter.gradients), *dp_paths) + latency * v
                         : Seconds(0);
            // Every backward but each chunk's first adds its gradients to the accumulated ones.
            c.predicted = step * (micro_batches + (p - 1.0) / v) + accumulation * (micro_batches - 1.0) + dp_time;
            search.fitting.push_back(c);
          }
        }
      }
    }
  }
  std::stable_sort(search.fitting.begin(), search.fitting.end(),
                   [](const MegatronCandidate& x, const MegatronCandidate& y) { return x.predicted < y.predicted; });
  return search;
}

OptionSchema MegatronPlanner::options() {
  OptionSchema schema;
  schema.integer("candidate", 1, "the configuration to plan, by rank in its estimate (1: the best)").at_least(1);
  schema.choice_list("recompute", {}, recompute_names(),
                     "the recomputation modes it may choose (a framework's limits); none listed: all three");
  schema.boolean("sequence_parallel", std::nullopt,
                 "sequence parallelism for TP > 1; none: always (it only saves memory), false: never");
  return schema;
}

std::string MegatronPlanner::model_problem(const LayerModel& model) const {
  return transformer_shape(model) ? std::string() : "needs a transformer model (zoo or `transformer:`)";
}

PlanResult MegatronPlanner::plan(const PlanRequest& request) const {
  const PlanClock timer;
  const std::string cost_model =
      "Megatron 3D estimate: (M + (p−1)/v)·(t_f + t_b + t_r + t_tp + 2v·t_send) + (M − 1)·t_acc + t_dp";
  PlanResult result;
  result.cost_model = cost_model;
  const MegatronSearch search = search_megatron(request, request.memory.zero != ZeroStage::none);
  result.statistics.candidates = search.considered;
  result.statistics.wall_seconds = timer.elapsed();
  if (search.fitting.empty()) {
    if (search.considered == 0)
      result.reason = search.first_problem.empty() ? "no (TP, PP, DP, micro-batch) divides the GPUs, blocks and batch"
                                                   : search.first_problem;
    else
      result.reason = fmt::format("out of memory in all {} configurations (first tried: {})", search.considered,
                                  search.first_problem);
    return result;
  }
  if (const auto& modes = request.options.choice_list("recompute"); !modes.empty())
    result.search_limits.push_back(fmt::format("recompute {}", fmt::join(modes, " or ")));
  if (request.options.has("sequence_parallel") && !request.options.flag("sequence_parallel"))
    result.search_limits.push_back("no sequence parallelism");
  for (const MegatronCandidate& c : search.fitting)
    result.ranking.push_back(
        fmt::format("TP {} × PP {} × DP {}, micro-batch {}{}, recompute {}: {}, {:.1f} GiB", c.tensor, c.pipeline,
                    c.data, c.micro_batch,
                    request.choose_chunks ? ", " + counted(static_cast<std::size_t>(c.chunks), "chunk") : std::string(),
                    recompute_name(c.options.recompute), format_seconds(c.predicted), c.memory.value() / (1 << 30)));
  const auto candidate = static_cast<std::size_t>(request.options.integer("candidate"));  // 1-based
  if (candidate > search.fitting.size()) {
    result.reason =
        fmt::format("candidate {} asked, but only {} fit", candidate, counted(search.fitting.size(), "configuration"));
    return result;
  }
  const MegatronCandidate& best = search.fitting[candidate - 1];
  const int v = best.chunks;
  const std::vector<LayerRange> ranges = uniform_split(request.model, static_cast<std::size_t>(best.pipeline) * v);
  result.plan.global_batch = request.global_batch;
  result.plan.micro_batches = request.global_batch / best.micro_batch / best.data;
  for (int s = 0; s < best.pipeline; ++s) {
    PipelineStage stage;
    for (int q = 0; q < best.data; ++q) stage.devices.push_back(static_cast<DeviceId>(s * best.data + q));
    for (int c = 0; c < v; ++c) stage.chunks.push_back(ranges[static_cast<std::size_t>(c) * best.pipeline + s]);
    result.plan.stages.push_back(std::move(stage));
  }
  result.tensor_parallel = best.options;
  result.predicted_iteration_time = best.predicted;
  result.feasible = true;
  return result;
}

}  // namespace dnnsim
