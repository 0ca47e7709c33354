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

// Ada-Grouper's run (schedule "ada-grouper"; Wang et al., arXiv:2303.01675, as specified in
// planners/schedules/ada_grouper.hpp): iteration 0 runs kFkB with the first candidate k whose peak
// memory fits every GPU; once an iteration has ended, the controller measures its per-stage compute
// and per-boundary transfer times, predicts the next iteration for every candidate with the pipeline
// estimator, and lowers the next iteration with the fastest k that fits. The choices (k and every
// fitting candidate's prediction) are appended to `choices` as the run goes.
struct AdaGrouperRun {
  TaskGraph graph;  // iteration 0
  IterationController controller;
};
[[nodiscard]] AdaGrouperRun start_ada_grouper(const Scenario& scenario, const PipelineWorkloadSpec& spec,
                                              const PipelineSetup& setup,
                                              std::shared_ptr<std::vector<PipelineRunReport::Choice>> choices);

}  // namespace dnnsim
