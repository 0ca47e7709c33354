// SimulationResults built by hand, without simulating: the tasks and the dates they ran, for the
// tests of what is drawn or written from a run (Gantt charts, tasks.csv, trace.json).
#pragma once

#include <utility>

#include "sim/run/simulation.hpp"

namespace dnnsim::testing {

// Two GPUs of one node, "node0/gpu0" and "node0/gpu1" (devices 0 and 1), each with the streams
// "compute" (0) and "comm" (1); no task yet.
inline SimulationResult two_gpu_result() {
  SimulationResult result;
  result.graph.add_device("node0/gpu0");
  result.graph.add_device("node0/gpu1");
  result.graph.add_stream("compute");
  result.graph.add_stream("comm");
  return result;
}
inline constexpr StreamId kComputeStream = 0;
inline constexpr StreamId kCommStream = 1;

// Adds `task` to the result's graph with the dates it ran (NaN for a task that never ran).
inline TaskId add_ran_task(SimulationResult& result, Task task, double start, double end) {
  const TaskId id = result.graph.add(std::move(task));
  result.task_start.push_back(start);
  result.task_end.push_back(end);
  return id;
}

}  // namespace dnnsim::testing
