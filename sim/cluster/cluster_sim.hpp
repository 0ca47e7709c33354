// Cluster-level simulation (ARCHITECTURE.md "Two fidelities, one engine"): a job stream replayed on
// the scenario's cluster under a JobScheduler and a PlacementPolicy (planners/jobs/), in SimGrid.
//
// Actors: an arrival actor (sleeps to each submission), a round actor (when the scheduler has a
// round), one actor per running attempt of a job, and the controller, which wakes on their events
// (a condition variable), gives the scheduler a pure ClusterState and applies its decisions.
//   job level   (no network): an attempt is one SimGrid execution of its remaining run time,
//               bounded at 1 s/s, so a preemption reads the exact work done from the activity;
//   network     an attempt runs batches: N iterations as one compute execution (N × (compute + the
//               intra-server part of the sync)) then one communication phase: a ring of flows, one
//               per server of the job to the next, each N × sync_bytes, over the platform's real
//               links (NICs, uplinks, their bandwidth profiles), so jobs sharing a NIC or a
//               preempted link slow each other. N is chosen so that a batch lasts about
//               `batch_seconds` solo. Progress is checkpointed at batch ends; a preempted batch is lost.
// A (re)started attempt first pays `restart_cost` (checkpoint restore) when it is not the first, or
// always with `restart_cost_on_start`.
// A job asking for more GPUs than the cluster has never runs: status "never_fits" in the results.
#pragma once

#include <limits>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "planners/jobs/admission.hpp"
#include "planners/jobs/job_scheduler.hpp"
#include "planners/jobs/job_speed.hpp"
#include "traces/jobs/job_trace.hpp"

namespace dnnsim {

struct ClusterSimInput {
  std::vector<ServerInfo> servers;
  // Network mode: one host per server GPU, server by server (hosts[s][g]); empty = job level.
  std::vector<std::vector<simgrid::s4u::Host*>> server_gpus;
  simgrid::s4u::Host* controller_host = nullptr;  // any host (job level: a host of huge speed)
  const JobTrace* trace = nullptr;
  const JobSpeedModel* speed = nullptr;
  JobScheduler* scheduler = nullptr;
  Seconds restart_cost{0};
  // The first start pays restart_cost too (Pollux's artifact: simulator.py Job.reallocate sets a 30 s
  // rescale on every allocation, the first included).
  bool restart_cost_on_start = false;
  Seconds batch_seconds{60};
  Seconds utilisation_interval{3600};
  // The most samples the utilisation series may hold: its share of run.memory_budget. The series grows
  // with simulated time, which no input bounds before the run (a job's run time comes from its speed
  // model), so the run stops at the first event past it (ClusterSimResult::stopped).
  std::size_t max_utilisation_samples = std::numeric_limits<std::size_t>::max();
  bool progress = false;  // a line on stderr every few wall-clock seconds
  // Admission at arrival (planners/jobs/admission.hpp): null admits every job; otherwise each job's
  // value per GPU-hour, in trace order.
  const AdmissionPolicy* admission = nullptr;
  std::vector<double> job_values;
};

struct JobOutcome {
  enum class Status { finished, never_fits, unfinished, rejected };
  Status status = Status::finished;
  double submit = 0, start = -1, end = -1;  // seconds; -1 = never
  int gpus = 0;
  std::string placement;  // of the last attempt
  int preemptions = 0;
  double iterations = 0;
  double solo_seconds = 0;         // run time alone at its requested GPUs, consolidated
  double contention_slowdown = 1;  // network mode: mean over batches of batch time / solo batch time
  double packed_s = 0;             // time spent sharing a GPU with another job (Gandiva's packing)
  double value = -1, price = -1;   // admission: value and posted price per GPU-hour at arrival (−1: none)
};

struct UtilisationSample {
  double start = 0;
  double busy_gpus = 0;  // time-averaged over the interval
  double running = 0, queued = 0;
};

// One attempt of a job on its placement (start → completion or preemption), for the Chrome trace.
struct JobAttempt {
  std::size_t job = 0;
  Placement placement;
  double start = 0, end = 0;
};

struct ClusterSimResult {
  std::vector<JobOutcome> jobs;      // in trace order
  std::vector<JobAttempt> attempts;  // in the order they ended
  std::vector<UtilisationSample> utilisation;
  int total_gpus = 0;
  double makespan = 0;                // last completion
  // Where an interruption or a limit stopped the run, with jobs running: the integrals below reach it,
  // not the makespan. −1 when the run reached its end.
  double stopped_at = -1;
  double busy_gpu_seconds = 0;        // Σ allocated GPUs × time (restarts included)
  double jobs_in_system_seconds = 0;  // ∫ (running + queued) dt, for Little's law
  std::size_t scheduler_calls = 0;
  std::size_t events = 0;
  std::size_t flows = 0;
  std::size_t ps_deferred = 0;  // starts put off because the free CPU cores could not hold the job's PSs
  bool interrupted = false;     // Ctrl-C or SIGTERM: running jobs stopped where they were, the rest unfinished
  // Why a limit stopped the run before its end, as an interruption stops it; empty when it ran to its end.
  std::string stopped;
};

// The engine and the hosts must exist; runs the engine to the end. @throw InputError
[[nodiscard]] ClusterSimResult simulate_cluster(const ClusterSimInput& input);

}  // namespace dnnsim
