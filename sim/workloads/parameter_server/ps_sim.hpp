// Parameter-server training in SimGrid (workload kind parameter_server, docs/parameter-server.md).
//
// One actor per worker, on its GPU's host: it computes local steps (an execution of its step time,
// times its slowdown at that moment, so speed profiles and failures of the host apply) and, when
// the SyncPolicy says so, commits: it pushes its accumulated update to every server (one flow per
// server, a shard each, over the platform's real links, so pushes share the servers' NICs and
// preempted links), the servers apply it (an execution on each server's host, concurrent applies
// share it), the coordinator (ParameterServerState, plain state shared by the actors) prices the
// update with the statistical-efficiency model and decides when the worker may pull; then the worker
// pulls the model back (one flow from each server). A worker held by the policy (BSP's barrier,
// SSP's bound) waits on a condition variable: that wait is its blocked time.
// Optionally each server is also a process with one core (ADSP's Python PS under one interpreter lock,
// docs/parameter-server.md "The server's process"): every push must also be taken in by it at
// `receive_rate`, concurrently with the bytes arriving (the server reads as they come), so a push ends
// when both its transfer and its receive have; concurrent pushes share the core. With `busy_wait` w > 0,
// a held worker's server thread spins on that core until its release (mySSP.py return_pull,
// myAdacomm.py return_commit: `while True: ... min(worker_step_list)`), an execution of priority w:
// SimGrid shares a core in proportion to priorities, so m receives and h spinners leave each receive
// 1/(m + w·h) of the core.
// A ticker actor gives the policy the global loss every tick_period() and samples the loss curve.
// The run ends when the loss reaches the target, or at max_time; nothing after that is counted.
#pragma once

#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "models/sync/statistical_efficiency.hpp"
#include "planners/sync/sync_policy.hpp"

namespace dnnsim {

// A worker runs `factor` times slower from `from` until `until` (ADSP emulates heterogeneity by
// sleeping; a slowdown trace is a list of such windows). Later windows win where they overlap.
struct SlowdownWindow {
  std::vector<int> workers;
  double factor = 1;
  double from = 0, until = 1e300;
};

// Worker `worker`'s step-time factor at `time`: the last window covering both, else 1.
[[nodiscard]] double slowdown_factor(const std::vector<SlowdownWindow>& windows, int worker, double time);

struct PsSimInput {
  std::vector<simgrid::s4u::Host*> workers, servers;
  std::vector<double> step_seconds;  // per worker, at factor 1
  std::vector<SlowdownWindow> slowdowns;
  double update_bytes = 0;   // the whole model's update; each server gets 1/servers of it
  double apply_seconds = 0;  // one server applying its shard of one commit, alone on its host
  // Per server, its process's one-core host (speed 1: executions in core-seconds); empty: no process
  // model, pushes cost their transfer only.
  std::vector<simgrid::s4u::Host*> server_processes;
  double receive_rate = 0;  // bytes a server's process takes in per core-second
  double busy_wait = 0;     // a spinning held worker's weight on its servers' process cores; 0: none
  SyncPolicy* policy = nullptr;
  const StatisticalEfficiency* efficiency = nullptr;
  double target_loss = 0;
  double max_time = 0;
  double sample_interval = 0;  // loss-curve samples
  bool record_events = false;  // step starts, commits and releases, for tests and traces
  bool progress = false;
};

struct PsWorkerStats {
  long steps = 0, commits = 0;
  double compute_s = 0, communication_s = 0, blocked_s = 0;
};

struct PsEvent {
  enum class Kind { step_start, commit, release };
  double time = 0;
  int worker = 0;
  Kind kind = Kind::step_start;
  long commits = 0;  // the worker's commits applied so far
};

struct PsSimResult {
  bool converged = false;
  bool interrupted = false;
  double end_time = 0;  // convergence, max_time or interruption
  double final_loss = 0;
  double progress = 0;    // K of the statistical-efficiency model
  long global_steps = 0;  // updates applied to the global model: rounds (synchronous) or commits
  std::vector<PsWorkerStats> workers;
  std::vector<std::pair<double, double>> loss_samples;  // (time s, loss)
  std::vector<PsEvent> events;
  std::string policy_state;
  long flows = 0;       // pushes and pulls started
  long executions = 0;  // worker steps, server receives and applies (the spins of busy_wait not counted)
};

// The engine and platform must exist. @return at convergence, max_time or interruption.
[[nodiscard]] PsSimResult simulate_parameter_server(const PsSimInput& input);

}  // namespace dnnsim
