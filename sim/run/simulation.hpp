// One simulation of a scenario, start to finish: build the workload's TaskGraph, the SimGrid engine
// and platform, run the executor with its recorders, and return what the reports need.
// SimGrid keeps global state (the clock is never reset, profile dates are absolute, the network
// model cannot change): ONE simulation per process (simgrid-recipes.md §4). Tests that simulate run
// each in its own process (ctest), and `dnnsim sweep` forks a process per point.
#pragma once

#include <atomic>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <simgrid/s4u/Engine.hpp>
#include <string>
#include <vector>

#include "models/program/task_graph.hpp"
#include "sim/exec/observers.hpp"
#include "sim/scenario/layout.hpp"
#include "sim/scenario/scenario.hpp"

namespace dnnsim {

class LearningEpisode;  // planners/jobs/job_scheduler.hpp

// The process's SimGrid engine, configured as every dnnsim simulation runs: CM02 without
// cross-traffic and without the TCP-gamma window bound, SimGrid's own logs silenced below critical.
[[nodiscard]] std::unique_ptr<simgrid::s4u::Engine> create_engine();

// The workload as a TaskGraph whose devices are the cluster's GPUs (WorkloadKind::lower).
// @throw InputError (an unknown device in a TaskGraph file, no feasible pipeline plan, a kind that
// has no single TaskGraph, …).
[[nodiscard]] TaskGraph build_workload(const Scenario& scenario);

struct SimulationResult {
  // The graph that ran; its tasks' dependency lists are dropped once lowered (TaskGraph::
  // drop_dependencies) unless a controller grew it.
  TaskGraph graph;
  // The kind's own results (its plan, its per-job table, …), read by the same kind's reports.
  std::shared_ptr<const WorkloadResult> workload_result;
  // Not empty: nothing was simulated because the workload cannot run (no plan fits memory); the
  // reports give status "infeasible" with this reason.
  std::string infeasible_reason;
  PlatformLayout layout;
  std::vector<std::string> gpu_names;
  std::vector<std::string> gpu_models;
  std::vector<double> memory_capacity_bytes;
  std::vector<double> task_start;  // NaN for a task that never started (a failed host)
  std::vector<double> task_end;
  std::vector<double> peak_memory_bytes;
  std::vector<double> link_bytes_up;
  std::vector<double> link_bytes_down;
  using Flow = LinkTrafficRecorder::Flow;
  std::vector<Flow> flows;  // kept only when the trace is written: the recorder's, moved
  double makespan_s = 0;
  std::size_t operations = 0;
  std::size_t flow_count = 0;
  std::size_t transfer_retries = 0;
  std::size_t unfinished_tasks = 0;
  bool interrupted = false;  // stopped by SIGINT/SIGTERM: the results cover what was simulated
  // Why a limit stopped the run before its end (a cluster's utilisation series at run.memory_budget); the
  // results cover what was simulated. Empty when it ran to its end.
  std::string stopped;
  // Set by run_scenario(): the whole run, planning and lowering included. Not written to reports: they
  // must be byte-identical run to run.
  double wall_seconds = 0;
  // The resource guard's estimate of the process's peak memory (sim/run/resource_guard.hpp); 0 when
  // the workload kind gives none. Printed on stderr, not written to reports (a model, not a result).
  double estimated_memory_bytes = 0;
};

// Whether a task_start or task_end date was reached (NaN: the task never started, or never ended).
[[nodiscard]] inline bool happened(double date) { return !std::isnan(date); }

// Adds work while the simulation runs, one iteration at a time (Ada-Grouper re-plans the next
// iteration from what it just measured). Called by a controller actor once every task of iteration
// `finished` has ended, with the graph to append the next iteration's tasks to and the measured
// start/end of every task so far (indexed by TaskId; NaN for tasks not yet run). Returns false when
// it has appended nothing and the run should end.
using IterationController =
    std::function<bool(std::uint32_t finished, TaskGraph& graph, const std::vector<double>& task_start,
                       const std::vector<double>& task_end)>;

struct SimulationOptions {
  bool keep_flows = false;
  // Progress on this stream for runs longer than two seconds, and Ctrl-C / SIGTERM stop the run
  // cleanly (sim/run/progress.hpp); null: silent, and signals keep their default action.
  std::ostream* progress = nullptr;
  IterationController controller;  // empty: the graph is simulated as given
  // A cluster run's learned scheduler trains on this episode (`dnnsim train-scheduler`); null: it acts greedily.
  LearningEpisode* learning = nullptr;
};

// The run of a scenario from start to finish, by its workload kind (sim/workloads/): an infeasible
// workload gives a result with no tasks and its infeasible_reason. @throw InputError
[[nodiscard]] SimulationResult run_scenario(const Scenario& scenario, SimulationOptions options);

// Simulates a given graph. @throw InputError
[[nodiscard]] SimulationResult simulate(const Scenario& scenario, TaskGraph graph, SimulationOptions options);

// The flag at which a run stops early (InterruptGuard::flag, Ctrl-C or SIGTERM) when it shows progress,
// as the CLI's runs do; null for a silent run, which signals do not stop. For ExecutorOptions::stop and
// PlatformOptions::stop.
[[nodiscard]] const std::atomic<bool>* stop_flag(const SimulationOptions& options);

// The result of a kind that drives the engine with its own actors instead of a TaskGraph (cluster,
// parameter server, GNN pipeline): the fields every report reads, the kind's own results beside them.
// `operations` are the activities its actors ran (executions, flows, or a cluster's scheduling events).
[[nodiscard]] SimulationResult engine_driven_result(const Scenario& scenario,
                                                    std::shared_ptr<const WorkloadResult> workload_result,
                                                    double makespan_s, std::size_t operations, std::size_t flow_count,
                                                    bool interrupted, std::string stopped = {});

}  // namespace dnnsim
