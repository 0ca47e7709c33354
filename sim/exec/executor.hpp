// Runs a TaskGraph on a SimGrid platform with CUDA-stream semantics (docs/architecture.md):
// one SimGrid actor per (device, stream) runs that stream's work in order, each piece after its
// dependencies; compute is a SimGrid execution on the device's host, a transfer a host-to-host
// communication routed over the platform's links (so flows share links under SimGrid's max-min
// model, and bandwidth profiles slow them down), and a collective is expanded by its algorithm
// (models/program/collective_algorithms.hpp) into point-to-point steps.
//
// Observers subscribe to task start/end and transfer events instead of editing the executor
// (as SimGrid's host_load plugin subscribes to Exec signals).
#pragma once

#include <simgrid/s4u.hpp>

#include <cstdint>
#include <memory>
#include <vector>

#include "models/hardware/catalog.hpp"
#include "models/program/collective_algorithms.hpp"
#include "models/program/task_graph.hpp"
#include "sim/scenario/scenario.hpp"

namespace dnnsim {

class ExecutionObserver {
 public:
  virtual ~ExecutionObserver() = default;
  // A collective starts when all its dependencies are done and ends when its last step does.
  virtual void on_task_start(TaskId /*task*/, double /*now*/) {}
  virtual void on_task_end(TaskId /*task*/, double /*now*/) {}
  // One point-to-point flow, standalone or a step of collective `task`.
  virtual void on_transfer(TaskId /*task*/, DeviceId /*src*/, DeviceId /*dst*/, double /*bytes*/, double /*start*/,
                           double /*end*/) {}
};

struct DeviceBinding {
  simgrid::s4u::Host* host = nullptr;
  const GpuSpec* gpu = nullptr;
  double compute_efficiency = 1.0;
  const CalibrationTable* calibration = nullptr;  // when set, its curves replace compute_efficiency
};

struct ExecutorOptions {
  Fidelity fidelity = Fidelity::detailed;
  // Link failure windows [from, to): a transfer cut by a failure is sent again once the window ends.
  std::vector<std::pair<double, double>> link_failures;
};

class Executor {
 public:
  // `graph` must be valid (TaskGraph::validate): a stream order that contradicts the dependencies
  // would leave its tasks unfinished. @throw InputError if a collective cannot be expanded.
  Executor(const TaskGraph& graph, std::vector<DeviceBinding> devices, const DeviceTopology& topology,
           ExecutorOptions options);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  void add_observer(ExecutionObserver* observer) { observers_.push_back(observer); }
  // Creates the stream actors; the caller then runs the engine.
  void start();

  [[nodiscard]] std::size_t finished_task_count() const { return finished_tasks_; }
  [[nodiscard]] std::size_t operation_count() const;  // computes, flows and synchronisations after expansion
  [[nodiscard]] std::size_t flow_count() const;
  [[nodiscard]] std::size_t retried_transfers() const { return retried_transfers_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<ExecutionObserver*> observers_;
  std::size_t finished_tasks_ = 0;
  std::size_t retried_transfers_ = 0;
};

}  // namespace dnnsim
