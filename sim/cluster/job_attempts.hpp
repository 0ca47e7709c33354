// How one attempt of a job runs on the platform in the cluster simulation (sim/cluster/cluster_sim.hpp):
// the attempt's actor at job level (one execution of its remaining run time) or in network mode
// (batches of compute and a ring of flows, or push/pull flows to its parameter servers). Internal to
// sim/cluster/: cluster_sim.cpp holds the controller, which decides what runs where and accounts
// for it; the actors started here only run what it decided and post their completion.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <simgrid/s4u.hpp>
#include <vector>

#include "planners/jobs/job_scheduler.hpp"
#include "planners/jobs/job_speed.hpp"
#include "planners/jobs/pollux_goodput.hpp"
#include "sim/cluster/cluster_sim.hpp"

namespace dnnsim {

// Where a job is in its life in the simulation.
enum class JobPhase { pending, queued, running, finished, never_fits, rejected };

// One job of the trace: the scheduler's view of it, the controller's accounting, and the activities
// of its running attempt (which the controller cancels when it preempts the attempt).
struct JobRun {
  JobView view;
  JobPhase phase = JobPhase::pending;
  simgrid::s4u::ActorPtr actor;
  simgrid::s4u::ExecPtr exec;
  std::vector<simgrid::s4u::ActivityPtr> transfers;
  double attempt_start = 0;
  double attempt_seconds = 0;  // job level: length of the attempt's execution
  double rate = 0;             // iterations/s on the current placement, solo
  // A job whose work is progress (its batch size adapting, JobScheduler::goodput, Pollux; or counted
  // as the artifact's TunedJobs, JobSpeedModel::counts_progress): its progress rate epoch by epoch on
  // the current placement; empty: `rate` throughout.
  std::vector<ProgressSegment> curve;
  double slowdown_sum = 0;
  int batches = 0;
  double batch_start = -1;      // network mode: start of the batch in flight (−1: none)
  double batch_iterations = 0;  // its iterations
  double batch_slowdown = 1;    // the packing slowdown it runs at
  // Packing (Decision::Kind::pack): the job sharing this one's GPU, and how many times slower than
  // alone this one runs meanwhile. Job level: the execution in flight is replaced at each change of
  // speed (`repricing` tells its actor so), its progress so far moved into done_iterations, and
  // `segment_start` is when the current speed began. `speed_version` counts the changes: the actor
  // yields while it creates and starts an execution (both are simcalls, and the controller may
  // reprice then), so it checks the count once its execution runs and redoes it when it moved.
  std::optional<JobId> partner;
  double slowdown = 1;
  double segment_start = 0;
  bool repricing = false;
  unsigned speed_version = 0;
  double packed_seconds = 0;
  double packed_since = -1;
  int generation = 0;
  double first_start = -1, end = -1;
  double price = -1;  // posted price per GPU-hour at arrival (admission); −1: none

  // Solo time from `done` iterations to the end of the work, at the current slowdown.
  [[nodiscard]] double seconds_to_finish() const;
  // Iterations done in `seconds` of solo run from `done`, at the current slowdown.
  [[nodiscard]] double progress_in(double seconds) const;
};

// What an attempt's actor reads from and reports to the simulation; outlives every actor.
struct AttemptContext {
  const ClusterSimInput* in = nullptr;
  std::size_t* flows = nullptr;                              // the result's flow count
  std::function<void(JobId job, int generation)> completed;  // posts the attempt's completion
};

// Starts the actor of `run`'s attempt on `placement` (run.actor), whose solo iteration costs `cost`,
// at `now`: it first pays `restart` seconds (checkpoint restore), then runs until the job's work is
// done and posts its completion with `generation`, unless the controller preempts it first (kills
// the actor and cancels what it waits on).
void start_attempt(JobRun& run, const Placement& placement, const IterationCost& cost, double restart, int generation,
                   double now, const AttemptContext& context);

}  // namespace dnnsim
