// A scenario's pipeline workload made concrete: the plan (from its planner, or its explicit stages),
// the schedule object, and the lowered TaskGraph. Pure (no engine): `dnnsim plan` and `validate`
// use it without simulating.
#pragma once

#include <memory>

#include "planners/schedules/pipeline_lowering.hpp"
#include "sim/run/simulation.hpp"

namespace dnnsim {

struct PipelineSetup {
  PipelineRunReport report;  // planner, schedule, plan result
  std::shared_ptr<const PipelineSchedule> schedule;
  PipelineWorkload workload;  // valid only when report.plan.feasible
};

// Plans the workload (runs the planner, or takes the explicit stages) and makes its schedule.
// An infeasible plan is a result (report.plan.feasible = false), not an error.
// @throw InputError when the schedule cannot run the plan's shape (interleaved needs M % p == 0, …)
// or an explicit plan is inconsistent, located at the workload.
[[nodiscard]] PipelineSetup plan_pipeline(const Scenario& scenario, const PipelineWorkloadSpec& spec);

}  // namespace dnnsim
