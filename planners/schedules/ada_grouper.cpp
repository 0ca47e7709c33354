#include "planners/schedules/ada_grouper.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <stdexcept>

namespace dnnsim {
namespace {

double duration(TaskId id, const std::vector<double>& start, const std::vector<double>& end) {
  return end.at(id) - start.at(id);
}

// Mean over micro-batches of the slowest step of each micro-batch, a step from the start of its
// task in `first` to the end of the same replica's task in `last` (a backward split into gradient
// buckets, pipeline_lowering.hpp; the same task when unsplit).
Seconds mean_of_slowest_steps(const std::vector<std::vector<TaskId>>& first,
                              const std::vector<std::vector<TaskId>>& last, const std::vector<double>& start,
                              const std::vector<double>& end) {
  double sum = 0;
  for (std::size_t j = 0; j < first.size(); ++j) {
    double slowest = 0;
    for (std::size_t i = 0; i < first[j].size(); ++i)
      slowest = std::max(slowest, end.at(last[j].at(i)) - start.at(first[j][i]));
    sum += slowest;
  }
  return Seconds(first.empty() ? 0.0 : sum / static_cast<double>(first.size()));
}

// Mean over micro-batches of the slowest task of each micro-batch.
Seconds mean_of_slowest(const std::vector<std::vector<TaskId>>& per_micro_batch, const std::vector<double>& start,
                        const std::vector<double>& end) {
  return mean_of_slowest_steps(per_micro_batch, per_micro_batch, start, end);
}

}  // namespace

PipelineTimings observe_iteration(const LoweredIteration& iteration, const std::vector<double>& task_start,
                                  const std::vector<double>& task_end) {
  PipelineTimings timings;
  timings.stages = iteration.shape.stages;
  const std::size_t virtual_count = iteration.forward.size();
  for (std::size_t u = 0; u < virtual_count; ++u) {
    timings.forward.push_back(mean_of_slowest(iteration.forward[u], task_start, task_end));
    Seconds backward = mean_of_slowest_steps(iteration.backward[u], iteration.backward_end[u], task_start, task_end);
    if (!iteration.recompute.empty()) backward += mean_of_slowest(iteration.recompute[u], task_start, task_end);
    timings.backward.push_back(backward);
  }
  for (std::size_t b = 0; b + 1 < virtual_count; ++b) {
    timings.activation_transfer.push_back(mean_of_slowest(iteration.activation_transfers[b], task_start, task_end));
    timings.gradient_transfer.push_back(mean_of_slowest(iteration.gradient_transfers[b], task_start, task_end));
  }
  const auto p = static_cast<std::size_t>(iteration.shape.stages);
  // The tail is what the stage adds after its last step: the part of its all-reduces that the
  // backward did not hide (they are bucketed and overlapped, pipeline_lowering.hpp), then the optimizer.
  timings.tail.assign(p, Seconds(0));
  std::vector<double> last_step_end(p, 0.0);
  std::vector<double> all_reduce_end(p, 0.0);
  for (std::size_t u = 0; u < virtual_count; ++u) {
    for (const auto* steps : {&iteration.forward[u], &iteration.backward_end[u]})
      for (const auto& tasks : *steps)
        for (TaskId id : tasks) last_step_end[u % p] = std::max(last_step_end[u % p], task_end.at(id));
    if (iteration.all_reduce[u])
      all_reduce_end[u % p] = std::max(all_reduce_end[u % p], task_end.at(*iteration.all_reduce[u]));
  }
  for (std::size_t s = 0; s < p; ++s) timings.tail[s] = Seconds(std::max(0.0, all_reduce_end[s] - last_step_end[s]));
  for (std::size_t s = 0; s < p; ++s) {
    double slowest = 0;
    for (TaskId id : iteration.optimizer[s]) slowest = std::max(slowest, duration(id, task_start, task_end));
    timings.tail[s] += Seconds(slowest);
  }
  return timings;
}

GroupChoice choose_group_size(const PipelineTimings& observed, const PipelineShape& shape, std::vector<int> candidates,
                              const std::function<bool(int group)>& fits) {
  if (shape.chunks != 1) throw std::invalid_argument("choose_group_size: kFkB runs one model chunk per stage");
  if (candidates.empty()) {
    candidates.resize(static_cast<std::size_t>(shape.micro_batches));
    std::iota(candidates.begin(), candidates.end(), 1);
  }
  GroupChoice choice;
  std::optional<GroupPrediction> best;
  for (int k : candidates) {
    const PipelineEstimate estimate = estimate_pipeline(*make_group_schedule(k), shape, observed);
    const GroupPrediction prediction{k, estimate.iteration, fits(k)};
    choice.predictions.push_back(prediction);
    if (!prediction.fits) continue;
    const double tolerance = 1e-9 * std::max(prediction.iteration.value(), best ? best->iteration.value() : 0.0);
    const bool faster = best && prediction.iteration.value() < best->iteration.value() - tolerance;
    const bool as_fast_and_smaller =
        best && std::abs(prediction.iteration.value() - best->iteration.value()) <= tolerance && k < best->group;
    if (!best || faster || as_fast_and_smaller) best = prediction;
  }
  choice.any_fits = best.has_value();
  choice.group = best ? best->group : *std::min_element(candidates.begin(), candidates.end());
  return choice;
}

std::vector<DeviceMemoryDemand> pipeline_memory_demand(const PipelineWorkload& workload, std::size_t device_count) {
  std::vector<DeviceMemoryDemand> demand(device_count);
  const PipelinePlan& plan = workload.plan;
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    const PipelineStage& stage = plan.stages[s];
    const int replicas = static_cast<int>(stage.devices.size());
    for (int q = 0; q < replicas; ++q) {
      DeviceMemoryDemand& device = demand.at(stage.devices[q]);
      device.stage = static_cast<int>(s);
      device.model_states = stage_model_state_bytes(workload, s);
      const int samples = replica_share(plan.micro_batch_size(), replicas, q).count;
      for (const LayerRange& range : stage.chunks)
        device.activations_per_micro_batch += chunk_activation_bytes(workload.model, range, samples);
    }
  }
  return demand;
}

std::vector<Bytes> kfkb_peak_memory(const std::vector<DeviceMemoryDemand>& demand, const PipelineShape& shape,
                                    int group) {
  std::vector<Bytes> peak;
  for (const DeviceMemoryDemand& device : demand) {
    if (device.stage < 0) {
      peak.emplace_back(0);
      continue;
    }
    const int in_flight = std::min(group * (shape.stages - device.stage), shape.micro_batches);
    peak.push_back(device.model_states + device.activations_per_micro_batch * in_flight);
  }
  return peak;
}

bool fits_capacity(const std::vector<Bytes>& peak, const std::vector<Bytes>& capacity) {
  if (peak.size() != capacity.size()) throw std::invalid_argument("fits_capacity: one capacity per device is needed");
  for (std::size_t d = 0; d < peak.size(); ++d)
    if (peak[d] > capacity[d]) return false;
  return true;
}

}  // namespace dnnsim
