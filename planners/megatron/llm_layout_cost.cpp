#include "planners/megatron/llm_layout_cost.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <memory>

#include "models/cost/collective_cost.hpp"
#include "models/dnn/llm_parallel.hpp"
#include "planners/common/layer_cost.hpp"
#include "planners/parallel/planners.hpp"
#include "planners/schedules/pipeline_estimator.hpp"
#include "planners/schedules/step_communication.hpp"

namespace dnnsim {
namespace {

// What step_layers_time reads of a layer: layers equal in it cost the same (a zoo model's blocks of
// one kind), so each is timed once per shard and micro-batch.
using LayerKey = std::tuple<LayerKind, LayerRole, double, double, double, double, double, double,
                            std::vector<std::array<std::int64_t, 3>>>;

LayerKey layer_key(const Layer& layer) {
  std::vector<std::array<std::int64_t, 3>> matmuls;
  for (const MatmulShape& product : layer.matmuls) matmuls.push_back({product.m, product.n, product.k});
  return {layer.kind,
          layer.role,
          layer.forward_flops.value(),
          layer.backward_flops.value(),
          layer.backward_weight_flops.value(),
          layer.forward_traffic().value(),
          layer.backward_traffic().value(),
          layer.parameter_bytes.value(),
          std::move(matmuls)};
}

}  // namespace

// One GPU's share of the model under (TP, CP, EP), with a workload to hand the lowering's functions.
struct LlmLayoutCost::Shard {
  PipelineWorkload workload;
  std::vector<double> parameters;  // prefix sums over the layers, fp32-counted / 4
  std::vector<double> experts;     // the same, of the routed experts' layers only (parameter_split)
  std::vector<Bytes> activations;  // prefix sums, per sample
  double largest_block = 0;        // parameters of the largest block
  // [micro-batch] → prefix sums of (forward, backward) compute time
  std::map<int, std::vector<std::pair<Seconds, Seconds>>> compute;
};

LlmLayoutCost::LlmLayoutCost(const PlanRequest& request)
    : request_(request), topology_(request.cluster.topology()), shape_(*transformer_shape(request.model)) {}

LlmLayoutCost::~LlmLayoutCost() = default;

LlmLayoutModel LlmLayoutCost::layout_model() const {
  const LayerModel& model = request_.model;
  // Asked for every enumerated layout (844,223 with the CP type searched), each answer a scan of the
  // model's layers: one answer per TP degree.
  auto splits = std::make_shared<std::map<int, bool>>();
  return LlmLayoutModel{*model.transformer, static_cast<int>(model_blocks(model).size()), [&model, splits](int t) {
                          auto [it, fresh] = splits->try_emplace(t);
                          if (fresh) it->second = tensor_parallel_problems(model, t).empty();
                          return it->second;
                        }};
}

LlmLayoutCost::Shard& LlmLayoutCost::shard(const LlmLayout& layout) {
  auto& slot = shards_[{layout.tensor, layout.context, layout.expert, layout.context_comm, layout.context_a2a}];
  if (!slot) {
    slot = std::make_unique<Shard>();
    PipelineWorkload& w = slot->workload;
    w.dtype = request_.dtype;
    w.transformer = shape_;
    w.tensor_parallel = TensorParallelOptions{layout.tensor, layout.tensor > 1, Recompute::none,
                                              request_.memory.zero != ZeroStage::none};
    w.llm = request_.llm;
    w.llm.context = layout.context;
    w.llm.context_comm = layout.context_comm;
    w.llm.context_a2a = layout.context_a2a;
    w.llm.expert = layout.expert;
    w.model = shard_for_llm(request_.model, w.tensor_parallel, w.llm, request_.recompute_modules);
    slot->parameters.assign(1, 0);
    slot->experts.assign(1, 0);
    slot->activations.assign(1, Bytes(0));
    for (const Layer& layer : w.model.layers) {
      const double parameters = layer.parameter_bytes.value() / kProfileBytesPerParameter;
      slot->parameters.push_back(slot->parameters.back() + parameters);
      slot->experts.push_back(slot->experts.back() + (layer.role == LayerRole::experts ? parameters : 0.0));
      slot->activations.push_back(slot->activations.back() + layer.activation_bytes);
    }
    for (const LayerRange& block : model_blocks(w.model))
      slot->largest_block = std::max(slot->largest_block, slot->parameters[block.end] - slot->parameters[block.begin]);
  }
  slot->workload.llm.fsdp = layout.fsdp;
  return *slot;
}

const std::vector<std::pair<Seconds, Seconds>>& LlmLayoutCost::compute_prefix(Shard& shard, int micro_batch) {
  auto [it, fresh] = shard.compute.try_emplace(micro_batch);
  if (!fresh) return it->second;
  const ClusterDevice& device = request_.cluster.devices.front();
  std::map<LayerKey, std::pair<Seconds, Seconds>> timed;
  std::vector<std::pair<Seconds, Seconds>>& prefix = it->second;
  prefix.assign(1, {Seconds(0), Seconds(0)});
  const auto& layers = shard.workload.model.layers;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    auto [time, untimed] = timed.try_emplace(layer_key(layers[l]));
    if (untimed) {
      const LayerRange one{l, l + 1};
      time->second = {step_layers_time(shard.workload, one, device, micro_batch, Pass::forward),
                      step_layers_time(shard.workload, one, device, micro_batch, Pass::backward)};
    }
    prefix.push_back({prefix.back().first + time->second.first, prefix.back().second + time->second.second});
  }
  return prefix;
}

// collective_time is the longest path through the algorithm's steps, each α + its share of the size / β,
// so it is convex in the size S (a max of affine functions). On a group whose hops are alike the same
// path is longest at every size and the time is affine, a + b·S: then two sizes give a and b for every
// other, what keeps a 256-way all-to-all (65,536 steps) from being expanded once per chunk length.
// A ring in channels is not affine (docs/collectives.md, "Channels"): its round is max(α_out +
// S/(g·p·B_out), α_in + S(g−1)/(g·p·B_in)), the NIC hop binding at small S and, on GB200 (g = 32), the
// NVLink hop at large S. A convex function that takes the values of one line at several sizes follows
// it between them; so the line through S = 1 and 2 GB is kept when S = 0 and 1 TB lie on it too, and
// any other collective is timed exactly at each size it is asked (a ring's closed form, O(p)).
Seconds LlmLayoutCost::collective(const Collective& c) {
  auto [it, fresh] = collectives_.try_emplace({static_cast<int>(c.kind), c.algorithm, c.group});
  Line& line = it->second;
  const auto time = [&](double size) {
    Collective probe = c;
    probe.calls = 1;
    probe.size = Bytes(size);
    return collective_time(probe, topology_, request_.cluster.path_cost);
  };
  if (fresh) {
    constexpr double kOne = 1e9, kFar = 1e12;
    const Seconds one = time(kOne);
    const Seconds slope = time(2 * kOne) - one;
    line.a = one - slope;
    line.b = slope / kOne;
    const auto on_line = [&](double size) {
      const Seconds t = time(size);
      return std::abs((t - (line.a + line.b * size)).value()) <= 1e-9 * std::max(t, one).value();
    };
    line.affine = on_line(0) && on_line(kFar);
  }
  Seconds seconds = line.a + line.b * c.size.value();
  if (!line.affine) {
    auto [exact, untimed] = line.exact.try_emplace(c.size.value());
    if (untimed) exact->second = time(c.size.value());
    seconds = exact->second;
  }
  const ClusterDevice& device = request_.cluster.devices.front();
  return seconds + collectives_of(device.calibration.get()).latency * static_cast<double>(c.calls);
}

int LlmLayoutCost::in_flight(int stage, int stages, int micro_batches, int chunks) {
  auto [it, fresh] = in_flight_.try_emplace({stage, stages, micro_batches, chunks});
  if (fresh)
    it->second = request_.in_flight ? request_.in_flight(stage, stages, micro_batches, chunks)
                                    : std::min(stages - stage, micro_batches);
  return it->second;
}

const std::vector<LayerRange>& LlmLayoutCost::virtual_stages(const LlmLayout& layout) {
  const int parts = layout.pipeline * layout.chunks;
  auto [it, fresh] = splits_.try_emplace(parts);
  if (fresh) it->second = uniform_split(request_.model, static_cast<std::size_t>(parts));
  return it->second;
}

Bytes LlmLayoutCost::memory(const LlmLayout& layout) {
  const Shard& s = shard(layout);
  const std::vector<LayerRange>& ranges = virtual_stages(layout);
  const BytesPerParameter per =
      request_.llm.precision.resident_bytes_per_parameter(request_.cluster.devices.front().gpu);
  const bool distributed = request_.memory.zero != ZeroStage::none;
  const double shards = layout.fsdp || distributed ? layout.data * layout.context : 1.0;
  const int micro_batches = layout.micro_batches(request_.global_batch);
  Bytes peak{0};
  for (int stage = 0; stage < layout.pipeline; ++stage) {
    ParameterSplit split;
    Bytes activations{0};
    for (int c = 0; c < layout.chunks; ++c) {
      const LayerRange& range = ranges[static_cast<std::size_t>(c * layout.pipeline + stage)];
      const double experts = s.experts[range.end] - s.experts[range.begin];
      split.experts += experts;
      split.dense += s.parameters[range.end] - s.parameters[range.begin] - experts;
      activations += s.activations[range.end] - s.activations[range.begin];
    }
    // The lowering's model states (stage_model_state_bytes): routed experts sharded over their own
    // data-parallel ranks, and FSDP's two gathered blocks.
    const Bytes states = llm_model_states(split, per, shards, layout.tensor, layout.expert, layout.fsdp).total() +
                         Bytes(layout.fsdp ? 2.0 * s.largest_block * per.whole_weights() : 0.0);
    const Bytes kept = activations * static_cast<double>(layout.micro_batch) *
                       static_cast<double>(in_flight(stage, layout.pipeline, micro_batches, layout.chunks));
    // cp_comm_type all_gather's gathered K/V, one layer's at a time (as the lowering's steps hold it).
    const Bytes gathered = context_gather_buffer_bytes(*request_.model.transformer, layout.context_comm,
                                                       layout.micro_batch, layout.tensor, layout.context);
    peak = std::max(peak, states + kept + gathered + request_.memory.framework_overhead);
  }
  return peak;
}

Seconds LlmLayoutCost::compute_bound(const LlmLayout& layout) {
  Shard& s = shard(layout);
  const auto& prefix = compute_prefix(s, layout.micro_batch);
  const std::vector<LayerRange>& ranges = virtual_stages(layout);
  Seconds slowest{0};
  for (int stage = 0; stage < layout.pipeline; ++stage) {
    Seconds step{0};
    for (int c = 0; c < layout.chunks; ++c) {
      const LayerRange& range = ranges[static_cast<std::size_t>(c * layout.pipeline + stage)];
      step +=
          prefix[range.end].first - prefix[range.begin].first + prefix[range.end].second - prefix[range.begin].second;
    }
    slowest = std::max(slowest, step);
  }
  const double m = layout.micro_batches(request_.global_batch);
  return slowest * (m + (layout.pipeline - 1.0) / layout.chunks);
}

LlmLayoutCost::StageTimes LlmLayoutCost::stage_times(const LlmLayout& layout) {
  Shard& s = shard(layout);
  const auto& prefix = compute_prefix(s, layout.micro_batch);
  const std::vector<LayerRange>& ranges = virtual_stages(layout);
  const PipelineWorkload& w = s.workload;
  const ClusterDevice& device = request_.cluster.devices.front();
  const BytesPerParameter per = request_.llm.precision.bytes_per_parameter();
  // The first stage's GPUs, in Megatron's rank order (every stage's groups are translates of these).
  PipelineStage first;
  for (int q = 0; q < layout.data; ++q) first.devices.push_back(static_cast<DeviceId>(q));
  const StepGroups groups = step_groups(w, first, 0, 0);
  // What overlapped communication takes from the compute beside it, as the executor runs it.
  const double share = collectives_of(device.calibration.get()).compute_share;
  const auto step = [&](LayerRange range, Pass pass, Seconds compute) {
    Seconds serial{0}, overlapped{0};
    for (const StepCollective& c : step_collectives(w, groups, 0, range, layout.micro_batch, pass, false)) {
      (c.overlapped ? overlapped : serial) += collective(c.collective);
      // FSDP's shard add runs after its reduce-scatter on that stream, sharing the GPU with the compute:
      // it lengthens both the GPU's work and the overlapped chain the next step waits for.
      if (c.accumulation) {
        const Seconds add = compute_time_on(*c.accumulation, device);
        compute += add;
        overlapped += add;
      }
    }
    // The CP ring's phases as the lowering runs them: each max(its exchange, the attention beside it).
    Seconds ring{0};
    for (const RingExchange& phase : context_ring(w, groups, range, &device, layout.micro_batch, pass))
      ring += overlapped_span(phase.attention, collective(phase.exchange), share) - phase.attention;
    return ring + serial + overlapped_span(compute, overlapped, share);
  };
  StageTimes times;
  const auto parts = static_cast<std::size_t>(layout.pipeline * layout.chunks);
  times.forward.resize(parts);
  times.backward.resize(parts);
  const double shards = layout.data * layout.context;
  const bool distributed = request_.memory.zero != ZeroStage::none;
  for (int stage = 0; stage < layout.pipeline; ++stage) {
    Seconds backward{0}, sync{0};
    double parameters = 0, dense = 0;
    for (int c = 0; c < layout.chunks; ++c) {
      const auto u = static_cast<std::size_t>(c * layout.pipeline + stage);
      const LayerRange& range = ranges[u];
      times.forward[u] = step(range, Pass::forward, prefix[range.end].first - prefix[range.begin].first);
      times.backward[u] = step(range, Pass::backward, prefix[range.end].second - prefix[range.begin].second);
      backward += times.backward[u];
      parameters += s.parameters[range.end] - s.parameters[range.begin];
      dense += parameter_split(w.model, range.begin, range.end).dense;
      if (const auto experts = expert_gradient_all_reduce(w, groups, range)) sync += collective(*experts);
    }
    // The dense gradients over the data-parallel × context ranks (FSDP reduce-scatters them per step).
    if (!layout.fsdp && shards > 1) {
      const bool expert_parallel = layout.expert > 1 && w.model.transformer && w.model.transformer->experts > 0;
      const double reduced = expert_parallel ? dense : parameters;
      sync +=
          collective(Collective{CollectiveKind::all_reduce, groups.sharding, Bytes(reduced * per.gradients), "", 0});
    }
    const Seconds exposed = request_.overlap_all_reduce ? overlapped_span(backward, sync, share) - backward : sync;
    const double updated = layout.fsdp || distributed ? parameters / shards : parameters;
    times.tail.push_back(exposed + compute_time_on(optimizer_step(updated, per, 0), device));
    // Whole gradients added on the compute stream by every backward but the first; under FSDP the
    // reduce-scatter's stream adds the shard instead (in the backward step, above).
    if (stage == 0 && !(layout.fsdp && shards > 1))
      times.accumulation = compute_time_on(gradient_accumulation(parameters, per, 0), device);
  }
  if (layout.pipeline > 1) {
    // One micro-batch's boundary tensor, 1/CP of the tokens per rank, to the next stage's first GPU.
    const TensorParallelOptions& tp = w.tensor_parallel;
    const Bytes boundary = boundary_bytes_per_rank(shape_, tp) * layout.micro_batch / layout.context;
    const auto next = static_cast<DeviceId>(layout.tensor * layout.context * layout.data);
    times.send = point_to_point_time(boundary, request_.cluster.path(0, next)) +
                 collectives_of(device.calibration.get()).latency;
  }
  return times;
}

Seconds LlmLayoutCost::analytic(const LlmLayout& layout) {
  const StageTimes times = stage_times(layout);
  Seconds slowest{0};
  for (int stage = 0; stage < layout.pipeline; ++stage) {
    Seconds step{0};
    for (int c = 0; c < layout.chunks; ++c) {
      const auto u = static_cast<std::size_t>(c * layout.pipeline + stage);
      step += times.forward[u] + times.backward[u];
    }
    slowest = std::max(slowest, step);
  }
  const double m = layout.micro_batches(request_.global_batch);
  const Seconds per_micro_batch = slowest + times.send * (2.0 * layout.chunks);
  return per_micro_batch * (m + (layout.pipeline - 1.0) / layout.chunks) + times.accumulation * (m - 1.0) +
         *std::max_element(times.tail.begin(), times.tail.end());
}

std::optional<Seconds> LlmLayoutCost::estimate(const LlmLayout& layout) {
  if (!request_.schedule) return std::nullopt;
  std::shared_ptr<const PipelineSchedule> schedule = request_.schedule;
  if (schedule->chunks() != layout.chunks) {
    if (!schedule->planner_chooses_chunks()) return std::nullopt;
    schedule = schedule->with_chunks(layout.chunks).schedule;
  }
  const PipelineShape shape{layout.pipeline, layout.micro_batches(request_.global_batch), layout.chunks};
  if (!schedule->unsupported(shape).empty()) return std::nullopt;
  const StageTimes times = stage_times(layout);
  PipelineTimings timings;
  timings.stages = layout.pipeline;
  timings.forward = times.forward;
  timings.backward = times.backward;
  const std::size_t boundaries = times.forward.size() - 1;
  timings.activation_transfer.assign(boundaries, times.send);
  timings.gradient_transfer.assign(boundaries, times.send);
  timings.tail = times.tail;
  return estimate_pipeline(*schedule, shape, timings).iteration + times.accumulation * (shape.micro_batches - 1.0);
}

}  // namespace dnnsim
