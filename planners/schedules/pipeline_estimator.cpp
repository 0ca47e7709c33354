#include "planners/schedules/pipeline_estimator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace dnnsim {

PipelineTimings PipelineTimings::uniform(int stages, int chunks, Seconds forward, Seconds backward, Seconds transfer) {
  if (stages < 1 || chunks < 1)
    throw std::invalid_argument(fmt::format("PipelineTimings::uniform: {} stages of {} chunks", stages, chunks));
  const auto virtual_stages = static_cast<std::size_t>(stages * chunks);
  PipelineTimings timings;
  timings.stages = stages;
  timings.forward.assign(virtual_stages, forward);
  timings.backward.assign(virtual_stages, backward);
  timings.activation_transfer.assign(virtual_stages - 1, transfer);
  timings.gradient_transfer.assign(virtual_stages - 1, transfer);
  return timings;
}

int peak_in_flight(const std::vector<PipelineStep>& order) {
  int held = 0;
  int peak = 0;
  for (const PipelineStep& step : order) {
    held += step.pass == PassKind::forward ? 1 : -1;
    peak = std::max(peak, held);
  }
  return peak;
}

int stashed_weight_versions(int in_flight, int replicas) {
  if (in_flight < 1) return 0;
  const int r = std::max(1, replicas);
  return (in_flight - 1 + r - 1) / r + 1;
}

PipelineEstimate estimate_pipeline(const std::vector<std::vector<PipelineStep>>& orders,
                                   const PipelineTimings& timings) {
  const int p = timings.stages;
  const std::size_t virtual_stages = timings.forward.size();
  if (p < 1 || orders.size() != static_cast<std::size_t>(p) || virtual_stages % p != 0 ||
      timings.backward.size() != virtual_stages || timings.activation_transfer.size() + 1 != virtual_stages ||
      timings.gradient_transfer.size() + 1 != virtual_stages ||
      (!timings.tail.empty() && timings.tail.size() != orders.size()) ||
      (!timings.update.empty() && timings.update.size() != orders.size()))
    throw std::invalid_argument(fmt::format(
        "estimate_pipeline: {} stage orders, {} stages, {}/{} forward/backward times, {}/{} transfer times, {} tails, "
        "{} updates",
        orders.size(), p, virtual_stages, timings.backward.size(), timings.activation_transfer.size(),
        timings.gradient_transfer.size(), timings.tail.size(), timings.update.size()));
  int micro_batches = 0;
  for (const auto& order : orders)
    for (const PipelineStep& step : order) micro_batches = std::max(micro_batches, step.micro_batch + 1);

  // When the input of a step has arrived: [virtual stage][micro-batch]; none until its transfer is known.
  using Arrivals = std::vector<std::vector<std::optional<double>>>;
  Arrivals activation_arrival(virtual_stages, std::vector<std::optional<double>>(micro_batches));
  Arrivals gradient_arrival(virtual_stages, std::vector<std::optional<double>>(micro_batches));
  for (auto& arrival : activation_arrival.front()) arrival = 0.0;  // the data loader's input
  // The last virtual stage's backward follows its own forward, which the stage order already ensures.
  for (auto& arrival : gradient_arrival.back()) arrival = 0.0;

  PipelineEstimate estimate;
  estimate.steps.resize(orders.size());
  std::vector<std::size_t> next(orders.size(), 0);
  std::vector<double> stage_free(orders.size(), 0.0);
  std::vector<double> send_next_free(orders.size(), 0.0);
  std::vector<double> send_prev_free(orders.size(), 0.0);

  std::size_t remaining = 0;
  for (const auto& order : orders) remaining += order.size();
  while (remaining > 0) {
    bool progressed = false;
    for (std::size_t s = 0; s < orders.size(); ++s) {
      while (next[s] < orders[s].size()) {
        const PipelineStep& step = orders[s][next[s]];
        const std::size_t u = static_cast<std::size_t>(step.chunk) * p + s;
        if (step.chunk < 0 || step.micro_batch < 0 || u >= virtual_stages)
          throw std::invalid_argument(fmt::format("estimate_pipeline: stage {} has a step of chunk {} (of {})", s,
                                                  step.chunk, virtual_stages / p));
        const bool forward = step.pass == PassKind::forward;
        const std::optional<double>& input = (forward ? activation_arrival : gradient_arrival)[u][step.micro_batch];
        if (!input) break;
        const double start = std::max(stage_free[s], *input);
        const double end = start + (forward ? timings.forward[u] : timings.backward[u]).value();
        estimate.steps[s].push_back(StepTime{Seconds(start), Seconds(end)});
        stage_free[s] = end + (forward || timings.update.empty() ? 0.0 : timings.update[s].value());
        if (forward && u + 1 < virtual_stages) {
          send_next_free[s] = std::max(send_next_free[s], end) + timings.activation_transfer[u].value();
          activation_arrival[u + 1][step.micro_batch] = send_next_free[s];
        } else if (!forward && u > 0) {
          send_prev_free[s] = std::max(send_prev_free[s], end) + timings.gradient_transfer[u - 1].value();
          gradient_arrival[u - 1][step.micro_batch] = send_prev_free[s];
        }
        ++next[s];
        --remaining;
        progressed = true;
      }
    }
    if (!progressed) throw std::logic_error("estimate_pipeline: the stage orders deadlock");
  }

  for (std::size_t s = 0; s < orders.size(); ++s) {
    const double last = estimate.steps[s].empty() ? 0.0 : stage_free[s];
    const double tail = timings.tail.empty() ? 0.0 : timings.tail[s].value();
    estimate.iteration = std::max(estimate.iteration, Seconds(last + tail));
    estimate.peak_in_flight.push_back(peak_in_flight(orders[s]));
  }
  return estimate;
}

PipelineEstimate estimate_pipeline(const PipelineSchedule& schedule, const PipelineShape& shape,
                                   const PipelineTimings& timings) {
  if (shape.stages != timings.stages)
    throw std::invalid_argument(
        fmt::format("estimate_pipeline: shape has {} stages, timings {}", shape.stages, timings.stages));
  std::vector<std::vector<PipelineStep>> orders;
  for (int s = 0; s < shape.stages; ++s) orders.push_back(schedule.stage_order(s, shape));
  return estimate_pipeline(orders, timings);
}

}  // namespace dnnsim
