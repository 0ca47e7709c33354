#include "planners/schedules/critical_path.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <utility>

namespace dnnsim {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// One stage of the list schedule: its compute stream, its two send streams (FIFO, as in the
// estimator) and what has arrived for it.
struct StageState {
  int cap = 1;
  double free = 0;
  double send_next_free = 0;
  double send_prev_free = 0;
  int next_forward = 0;
  int in_flight = 0;
  std::vector<double> activation;                // [micro-batch] arrival; kNever until sent
  std::deque<std::pair<double, int>> gradients;  // (arrival, micro-batch), in arrival order
};

}  // namespace

std::vector<std::vector<PipelineStep>> critical_path_orders(const PipelineShape& shape, const PipelineTimings& timings,
                                                            std::optional<int> max_in_flight) {
  const int p = shape.stages;
  const int micro_batches = shape.micro_batches;
  const auto stages = static_cast<std::size_t>(p);
  if (p < 1 || micro_batches < 1 || shape.chunks != 1 || timings.stages != p || timings.forward.size() != stages ||
      timings.backward.size() != stages || timings.activation_transfer.size() + 1 != stages ||
      timings.gradient_transfer.size() + 1 != stages)
    throw std::invalid_argument(fmt::format("critical_path_orders: shape {}×{}×{} against timings of {} stages", p,
                                            micro_batches, shape.chunks, timings.stages));
  if (max_in_flight && *max_in_flight < 1)
    throw std::invalid_argument(fmt::format("critical-path: max_in_flight must be at least 1, got {}", *max_in_flight));

  std::vector<StageState> state(stages);
  for (int s = 0; s < p; ++s) {
    state[s].cap = std::min(max_in_flight.value_or(p - s), micro_batches);
    state[s].activation.assign(static_cast<std::size_t>(micro_batches), s == 0 ? 0.0 : kNever);
  }
  std::vector<std::vector<PipelineStep>> orders(stages);
  // The earliest time a stage can start some step (the forward only while under its cap).
  const auto next_start = [&](const StageState& stage) {
    double forward = kNever;
    if (stage.next_forward < micro_batches && stage.in_flight < stage.cap)
      forward = std::max(stage.free, stage.activation[stage.next_forward]);
    const double backward = stage.gradients.empty() ? kNever : std::max(stage.free, stage.gradients.front().first);
    return std::min(forward, backward);
  };

  for (std::size_t remaining = 2 * stages * static_cast<std::size_t>(micro_batches); remaining > 0; --remaining) {
    std::size_t s = stages;
    double start = kNever;
    for (std::size_t candidate = 0; candidate < stages; ++candidate)
      if (const double t = next_start(state[candidate]); t < start) {
        start = t;
        s = candidate;
      }
    if (s == stages) throw std::logic_error("critical_path_orders: no stage can run a step");
    StageState& stage = state[s];
    // Longest remaining path first: the forward, when it has arrived and the cap allows it.
    const bool forward = stage.next_forward < micro_batches && stage.in_flight < stage.cap &&
                         stage.activation[stage.next_forward] <= start;
    int micro_batch = 0;
    if (forward) {
      micro_batch = stage.next_forward++;
      ++stage.in_flight;
    } else {
      micro_batch = stage.gradients.front().second;
      stage.gradients.pop_front();
      --stage.in_flight;
    }
    const double end = start + (forward ? timings.forward[s] : timings.backward[s]).value();
    stage.free = end;
    orders[s].push_back(PipelineStep{forward ? PassKind::forward : PassKind::backward, micro_batch, 0});
    if (forward && s + 1 < stages) {
      stage.send_next_free = std::max(stage.send_next_free, end) + timings.activation_transfer[s].value();
      state[s + 1].activation[static_cast<std::size_t>(micro_batch)] = stage.send_next_free;
    } else if (forward) {  // the last stage's backward needs only its own forward
      stage.gradients.emplace_back(end, micro_batch);
    } else if (s > 0) {
      stage.send_prev_free = std::max(stage.send_prev_free, end) + timings.gradient_transfer[s - 1].value();
      state[s - 1].gradients.emplace_back(stage.send_prev_free, micro_batch);
    }
  }
  return orders;
}

namespace {

class CriticalPath final : public PipelineSchedule {
 public:
  CriticalPath(std::optional<int> max_in_flight, bool measured, std::optional<PipelineTimings> timings)
      : max_in_flight_(max_in_flight), measured_(measured), timings_(std::move(timings)) {
    if (max_in_flight && *max_in_flight < 1)
      throw std::invalid_argument(
          fmt::format("critical-path: max_in_flight must be at least 1, got {}", *max_in_flight));
  }

  [[nodiscard]] std::string unsupported(const PipelineShape& shape) const override {
    if (shape.chunks != 1) return "critical-path orders one model chunk per stage";
    if (timings_ && timings_->stages != shape.stages)
      return fmt::format("critical-path was ordered for {} stages, not {}", timings_->stages, shape.stages);
    return {};
  }

  // The list schedule gives every stage's order at once, and a lowering asks for them one stage at a
  // time (p times the O(M·p²) schedule otherwise): the orders of the last shape are kept.
  [[nodiscard]] std::vector<PipelineStep> stage_order(int stage, const PipelineShape& shape) const override {
    const std::lock_guard lock(mutex_);
    if (!cached_ || cached_->shape.stages != shape.stages || cached_->shape.micro_batches != shape.micro_batches ||
        cached_->shape.chunks != shape.chunks) {
      const PipelineTimings timings =
          timings_ ? *timings_ : PipelineTimings::uniform(shape.stages, 1, Seconds(1), Seconds(2));
      cached_ = Orders{shape, critical_path_orders(shape, timings, max_in_flight_)};
    }
    return cached_->orders.at(static_cast<std::size_t>(stage));
  }

  [[nodiscard]] bool orders_by_time() const override { return true; }
  [[nodiscard]] std::shared_ptr<const PipelineSchedule> for_timings(const PipelineTimings& predicted) const override {
    return std::make_shared<CriticalPath>(max_in_flight_, measured_, predicted);
  }
  [[nodiscard]] ScheduleAdaptation adaptation() const override {
    return measured_ ? ScheduleAdaptation{ScheduleAdaptation::Kind::measured_order, {}} : ScheduleAdaptation{};
  }

 private:
  std::optional<int> max_in_flight_;
  bool measured_;
  std::optional<PipelineTimings> timings_;
  struct Orders {
    PipelineShape shape;
    std::vector<std::vector<PipelineStep>> orders;
  };
  mutable std::mutex mutex_;  // a schedule is shared (const) between planners and runs
  mutable std::optional<Orders> cached_;
};

}  // namespace

OptionSchema critical_path_options() {
  OptionSchema schema;
  schema.integer("max_in_flight", std::nullopt, "D, the cap of micro-batches in flight on every stage; none: p − i")
      .at_least(1);
  schema.choice("times", "predicted", {"predicted", "measured"},
                "ordered for the plan's predicted times, or re-ordered before every iteration for the last one's "
                "measured times");
  return schema;
}

std::shared_ptr<const PipelineSchedule> make_critical_path_schedule(const Options& options, int /*micro_batches*/) {
  std::optional<int> max_in_flight;
  if (options.has("max_in_flight")) max_in_flight = static_cast<int>(options.integer("max_in_flight"));
  return std::make_shared<CriticalPath>(max_in_flight, options.choice("times") == "measured", std::nullopt);
}

std::shared_ptr<const PipelineSchedule> bind_timings(std::shared_ptr<const PipelineSchedule> schedule,
                                                     const PipelineTimings& predicted) {
  return schedule->orders_by_time() ? schedule->for_timings(predicted) : schedule;
}

}  // namespace dnnsim
