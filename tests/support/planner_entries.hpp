// Planners and job schedulers made as a scenario makes them: from their registry entry with its
// declared options at their defaults, some set by the test (tests/support/options.hpp).
#pragma once

#include <memory>
#include <string>

#include "planners/jobs/job_scheduler.hpp"
#include "planners/parallel/planner.hpp"
#include "planners/schedules/schedule.hpp"
#include "tests/support/options.hpp"

namespace dnnsim::testing {

// The pipeline planner `name` run on `request` with its options (PlanRequest::options) at their
// defaults and `values`.
inline PlanResult plan_with(const std::string& name, PlanRequest request, OptionValues values = {}) {
  request.options = options_of(builtin_planners(), name, values);
  return builtin_planners().at(name).value->plan(request);
}

// The pipeline schedule `name` with its options at their defaults and `values`, for a workload of
// `micro_batches` micro-batches (0: not checked against any).
inline std::shared_ptr<const PipelineSchedule> make_schedule(const std::string& name, OptionValues values = {},
                                                             int micro_batches = 0) {
  return builtin_schedules().at(name).value(options_of(builtin_schedules(), name, values), micro_batches);
}

// kFkB with groups of `k` micro-batches.
inline std::shared_ptr<const PipelineSchedule> kfkb(int k) {
  return make_schedule("kfkb", {{"group", std::int64_t{k}}});
}

// The tolerance of schedule times that are sums of a few exactly representable stage times: rounding
// only.
inline constexpr double kExact = 1e-12;

// The placement policy `name` with its defaults, seeded.
inline std::unique_ptr<PlacementPolicy> make_placement(const std::string& name, std::uint64_t seed = 0) {
  return builtin_placements().at(name).value(builtin_placements().defaults(name), seed);
}

// The job scheduler `name` with its defaults and `values`, placing through `placement`.
inline std::unique_ptr<JobScheduler> make_scheduler(const std::string& name, const JobSpeedModel& speed,
                                                    const PlacementPolicy& placement, OptionValues values = {}) {
  const Options options = options_of(builtin_schedulers(), name, values);
  return builtin_schedulers().at(name).value(SchedulerContext{options, placement, speed, 0});
}

}  // namespace dnnsim::testing
