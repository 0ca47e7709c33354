// Runs a TaskGraph on a SimGrid platform with CUDA-stream semantics (docs/architecture.md): the
// graph is lowered into per-(device, stream) queues of operations (models/exec/lowering.hpp, pure:
// collectives at their fidelity, launch models, fences), and one SimGrid actor per queue runs its
// operations in order, each after its dependencies; compute is a SimGrid execution on the device's
// host, a transfer a host-to-host communication routed over the platform's links (so flows share
// links under SimGrid's max-min model, and bandwidth profiles slow them down). While an op that
// communicates runs (Op::communicates), a bounded execution on its device's host takes the
// calibrated share of the device's speed (CollectiveCalibration::compute_share) from the computations
// beside it, as an NCCL kernel's SMs do.
//
// Observers subscribe to task start/end and transfer events instead of editing the executor
// (as SimGrid's host_load plugin subscribes to Exec signals).
//
// A growable executor (ExecutorOptions::growable) accepts tasks while the simulation runs, so that
// a schedule can be re-planned between iterations from what was just measured (Ada-Grouper: the
// next iteration depends on how preempted links behaved) in ONE engine — same clock, same link
// profiles, same background flows; SimGrid cannot restart an engine in a process
// (simgrid-recipes.md §4). It is driven by a controller actor:
//
//   Executor executor(graph, bindings, topology, ExecutorOptions{.growable = true});
//   IterationBarrier iterations(graph);            // sim/exec/observers.hpp; plus the recorders
//   executor.add_observer(&iterations);
//   executor.start();
//   start_actor("controller", host, ActorStack::deep, [&] {   // sim/platform/actors.hpp
//     for (std::uint32_t i = 0; i + 1 < iteration_count; ++i) {
//       iterations.wait_until_iteration_done(i);   // clock = end of iteration i's last task
//       const auto first = static_cast<TaskId>(graph.tasks().size());
//       add_iteration(graph, i + 1, measured_timeline);  // graph.add(...): same TaskGraph object
//       executor.append(graph, first);
//     }
//     executor.close();                            // without it the idle stream actors never exit
//   });
//   engine->run();
//
// Tasks appended at time t start at t at the earliest (nothing runs in the past); they may depend on
// any earlier task, finished or not.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <simgrid/s4u.hpp>
#include <vector>

#include "models/calibration/calibration.hpp"
#include "models/hardware/catalog.hpp"
#include "models/program/collective_algorithms.hpp"
#include "models/program/task_graph.hpp"

namespace dnnsim {

// Callbacks run inside the simulation, from the actor that caused the event; they must not block
// (no s4u wait), though releasing a semaphore or notifying a condition variable is fine.
class ExecutionObserver {
 public:
  virtual ~ExecutionObserver() = default;
  // A collective starts when all its dependencies are done and ends when its last step does.
  virtual void on_task_start(TaskId /*task*/, double /*now*/) {}
  virtual void on_task_end(TaskId /*task*/, double /*now*/) {}
  // One point-to-point flow, standalone or a step of collective `task`.
  virtual void on_transfer(TaskId /*task*/, DeviceId /*src*/, DeviceId /*dst*/, double /*bytes*/, double /*start*/,
                           double /*end*/) {}
  // Tasks [first, graph.tasks().size()) were appended (Executor::append); called before any of them
  // can start, so per-task records can grow.
  virtual void on_tasks_appended(const TaskGraph& /*graph*/, TaskId /*first*/) {}
};

struct DeviceBinding {
  simgrid::s4u::Host* host = nullptr;
  const GpuSpec* gpu = nullptr;
  double compute_efficiency = 1.0;
  // When set, its curves replace compute_efficiency; its collectives section (if any) gives the
  // latency per call of the collectives and point-to-point transfers this device takes part in, and
  // its launch section (if any) has this device's compute tasks issued by a host thread (a launch
  // queue: docs/calibration.md, "Kernel launches"). The host issues a device's compute tasks in the
  // order they were added, so a graph under a launch model must not make a compute task wait for a
  // later-added compute task of the same device (the pipeline lowering's single compute stream does not).
  const CalibrationTable* calibration = nullptr;
  // The host whose memory the device's host copies (Transfer::host) reach over its GPU↔host link;
  // null when the graph has none.
  simgrid::s4u::Host* host_memory = nullptr;
};

struct ExecutorOptions {
  // Polled before each operation of every stream: once set, the first stream to see it ends the run
  // (every stream returns when it next runs, its current activity done; other actors are killed; the
  // unfinished tasks are reported) and interrupted() becomes true.
  const std::atomic<bool>* stop = nullptr;
  // The workload's collective fidelity; unset: the default rule (effective_collective_fidelity).
  // A collective's own Collective::fidelity wins.
  std::optional<CollectiveFidelity> collective_fidelity;
  // Link failure windows [from, to): a transfer cut by a failure is sent again once the window ends.
  std::vector<std::pair<double, double>> link_failures;
  // A stream actor that has run its whole queue waits for appended work until close(), instead of
  // exiting (see the controller pattern above). Off: the graph given at construction is all there is.
  bool growable = false;
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

  void add_observer(ExecutionObserver* observer);
  // Creates the stream actors; the caller then runs the engine.
  void start();

  // Growable executors only, before close(). `graph` is the graph given at construction, grown by
  // tasks [first, size) — `first` is the size it had at the previous construction/append — on the
  // devices bound at construction; the whole graph must still be valid. The new tasks are lowered as
  // the constructor does; a dependency on a finished task is already met. Observers hear
  // on_tasks_appended, then actors are created for new (device, stream) pairs and waiting ones woken.
  // From an actor (the controller: it may run while stream actors are blocked in their activities),
  // or before the engine runs; not from an observer callback. @throw InputError if a collective
  // cannot be expanded (the executor is then unusable: end the run).
  void append(const TaskGraph& graph, TaskId first);
  // No more work: idle stream actors exit now, busy ones when their queue is done.
  void close();
  // After the engine has run: rethrows the std::bad_alloc a stream actor hit (an exception cannot
  // unwind through the engine; the actor that hit it ended every other actor so that the run
  // stops at once). Nothing when the run went through.
  void rethrow_failure() const;

  [[nodiscard]] std::size_t finished_task_count() const;
  [[nodiscard]] bool interrupted() const;             // stopped by ExecutorOptions::stop
  [[nodiscard]] std::size_t operation_count() const;  // computes, flows and synchronisations after expansion
  [[nodiscard]] std::size_t flow_count() const;
  [[nodiscard]] std::size_t retried_transfers() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dnnsim
