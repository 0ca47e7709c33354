// One simulation of a scenario, start to finish: build the workload's TaskGraph, the SimGrid engine
// and platform, run the executor with its recorders, and return what the reports need.
// SimGrid keeps global state (the clock is never reset, profile dates are absolute, the network
// model cannot change): ONE simulation per process (simgrid-recipes.md §4). Tests that simulate run
// each in its own process (ctest), and `dnnsim sweep` forks a process per point.
#pragma once

#include <simgrid/s4u/Engine.hpp>

#include <memory>
#include <string>
#include <vector>

#include "models/program/task_graph.hpp"
#include "sim/scenario/layout.hpp"
#include "sim/scenario/scenario.hpp"

namespace dnnsim {

// The process's SimGrid engine, configured as every dnnsim simulation runs: CM02 without
// cross-traffic and without the TCP-gamma window bound, SimGrid's own logs silenced below critical.
[[nodiscard]] std::unique_ptr<simgrid::s4u::Engine> create_engine();

// The workload as a TaskGraph whose devices are the cluster's GPUs.
// @throw InputError (an unknown device in a TaskGraph file, …).
[[nodiscard]] TaskGraph build_workload(const Scenario& scenario);

struct SimulationResult {
  TaskGraph graph;
  PlatformLayout layout;
  std::vector<std::string> gpu_names;
  std::vector<std::string> gpu_models;
  std::vector<double> memory_capacity_bytes;
  std::vector<double> task_start;  // NaN for a task that never started (a failed host)
  std::vector<double> task_end;
  std::vector<double> peak_memory_bytes;
  std::vector<double> link_bytes_up;
  std::vector<double> link_bytes_down;
  struct Flow {
    DeviceId src, dst;
    double bytes, start, end;
  };
  std::vector<Flow> flows;  // kept only when the trace is written
  double makespan_s = 0;
  std::size_t operations = 0;
  std::size_t flow_count = 0;
  std::size_t transfer_retries = 0;
  std::size_t unfinished_tasks = 0;
  double wall_seconds = 0;  // not written to reports: they must be byte-identical run to run
};

struct SimulationOptions {
  bool keep_flows = false;
};

// @throw InputError
[[nodiscard]] SimulationResult simulate(const Scenario& scenario, TaskGraph graph, SimulationOptions options);

}  // namespace dnnsim
