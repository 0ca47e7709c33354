// Recorders that subscribe to the executor (ExecutionObserver): each keeps one kind of record, so a
// run pays only for what its reports need.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/program/collective_algorithms.hpp"
#include "models/program/task_graph.hpp"
#include "sim/exec/executor.hpp"
#include "sim/scenario/layout.hpp"

namespace dnnsim {

// Start and end date of every task (NaN until it happens).
class TimelineRecorder : public ExecutionObserver {
 public:
  explicit TimelineRecorder(std::size_t task_count);
  void on_task_start(TaskId task, double now) override { start_[task] = now; }
  void on_task_end(TaskId task, double now) override { end_[task] = now; }
  void on_tasks_appended(const TaskGraph& graph, TaskId first) override;
  [[nodiscard]] const std::vector<double>& start() const { return start_; }
  [[nodiscard]] const std::vector<double>& end() const { return end_; }
  // After the run: hands the dates over instead of a copy, which at the end of a run with millions of
  // tasks was the peak of its resident memory (docs/performance.md, "Memory per operation").
  [[nodiscard]] std::vector<double> take_start() { return std::move(start_); }
  [[nodiscard]] std::vector<double> take_end() { return std::move(end_); }

 private:
  std::vector<double> start_;
  std::vector<double> end_;
};

// Memory in use per device: a task's `alloc_bytes` is taken at its start and `free_bytes` released
// at its end, on each device it occupies. Keeps the peak and when it happened.
class MemoryTracker : public ExecutionObserver {
 public:
  MemoryTracker(const TaskGraph& graph, std::size_t device_count);
  void on_task_start(TaskId task, double now) override;
  void on_task_end(TaskId task, double now) override;
  // The running totals carry on: memory held by earlier iterations stays counted.
  void on_tasks_appended(const TaskGraph& graph, TaskId first) override;
  [[nodiscard]] const std::vector<double>& peak_bytes() const { return peak_; }

 private:
  void index_tasks(TaskId first);  // fills takes_ and releases_ for tasks [first, size)

  const TaskGraph* graph_;
  // Which tasks allocate or free anything: most do neither, and this keeps the hot path off the
  // (large) Task records.
  std::vector<bool> takes_;
  std::vector<bool> releases_;
  std::vector<double> in_use_;
  std::vector<double> peak_;
};

// Bytes carried by each link, per direction, from the routes of the layout; optionally every flow
// (for the link-utilisation counters of the Chrome trace).
//
// Tensor-parallel ranks left out (Collective::mirrored, tensor_parallel_fidelity: group) still load
// their links in the run they stand for, and the recorder counts that traffic: rank r of a group
// sends what its rank 0 sends, to rank r of the receiving group (the lowering pairs ranks so; the
// groups' members are in rank order), so a flow between two mirrored groups' first members is
// counted once per rank pair; and a mirrored collective, which runs as one delay, adds when it ends
// the bytes of the flows its algorithm puts on the wire (plan_collective_flows: the per-pair volumes,
// which the step expansion moves too). Under the conditions that make the mirroring exact (every
// rank's traffic a translate of rank 0's on links of its own, docs/megatron.md) these are the bytes
// of every link of the full run, switch ports included.
class LinkTrafficRecorder : public ExecutionObserver {
 public:
  struct Flow {
    DeviceId src, dst;
    double bytes, start, end;
  };
  // `gpu_of_device` maps the graph's devices to the cluster's GPU indices (the layout's numbering);
  // `graph` is the graph the executor runs (its mirrored collectives name the groups).
  LinkTrafficRecorder(const PlatformLayout& layout, const TaskGraph& graph, DeviceTopology topology,
                      std::vector<std::uint32_t> gpu_of_device, bool keep_flows);
  void on_transfer(TaskId task, DeviceId src, DeviceId dst, double bytes, double start, double end) override;
  void on_task_start(TaskId task, double now) override;
  void on_task_end(TaskId task, double now) override;
  void on_tasks_appended(const TaskGraph& graph, TaskId first) override;
  [[nodiscard]] const std::vector<double>& bytes_up() const { return bytes_up_; }
  [[nodiscard]] const std::vector<double>& bytes_down() const { return bytes_down_; }
  [[nodiscard]] std::vector<Flow> take_flows() { return std::move(flows_); }

 private:
  // Whether src and dst are the first members of mirrored groups of one size: the flow stands for
  // one from rank r of src's group to rank r of dst's for every r.
  [[nodiscard]] bool has_translates(DeviceId src, DeviceId dst) const;
  // The route from src to dst (a cache looked up per flow, never iterated; node-based, so
  // references stay valid as it grows).
  const Route& route(DeviceId src, DeviceId dst);
  // With translates: the routes of every rank pair (r = 0 … t − 1), concatenated; cached the same way.
  const Route& translated_route(DeviceId src, DeviceId dst);
  void index_mirrored(TaskId first);  // fills ranks_ and mirrored_ for tasks [first, size)
  void add(const Route& route, double bytes);

  const PlatformLayout* layout_;
  const TaskGraph* graph_;
  DeviceTopology topology_;
  std::vector<std::uint32_t> gpu_of_device_;
  bool keep_flows_;
  std::vector<double> bytes_up_;
  std::vector<double> bytes_down_;
  std::vector<Flow> flows_;
  std::unordered_map<std::uint64_t, Route> routes_;
  std::unordered_map<std::uint64_t, Route> translated_routes_;
  // A mirrored group's members by its first member (empty: not the first member of one).
  std::vector<std::vector<DeviceId>> ranks_;
  std::vector<bool> mirrored_;  // per task: a mirrored collective
  // A mirrored collective's flows (src, dst, bytes) by what they depend on (kind, algorithm, size,
  // root, copies, group): the same shape recurs every step.
  using CollectiveShape =
      std::tuple<CollectiveKind, std::string, double, DeviceId, std::uint32_t, std::vector<DeviceId>>;
  std::map<CollectiveShape, std::vector<CollectiveFlow>> collective_flows_;
  std::unordered_map<TaskId, double> mirrored_start_;  // with keep_flows: start of a running mirrored collective
};

// Lets a controller actor wait for the end of an iteration (Task::iteration) of a growable executor
// (sim/exec/executor.hpp): counts, per iteration, the tasks appended so far and those finished.
//   IterationBarrier iterations(graph);   // the engine must exist
//   executor.add_observer(&iterations);
//   … in the controller actor: iterations.wait_until_iteration_done(i);
// A task that never finishes (a failed GPU) keeps its iteration open: the waiting controller then
// never resumes, and SimGrid ends the run as a deadlock once nothing else can happen.
class IterationBarrier : public ExecutionObserver {
 public:
  explicit IterationBarrier(const TaskGraph& graph);
  void on_task_end(TaskId task, double now) override;
  void on_tasks_appended(const TaskGraph& graph, TaskId first) override;

  // Every task of `iteration` appended so far has finished (true for an iteration with no task).
  [[nodiscard]] bool iteration_done(std::uint32_t iteration) const;
  // From an actor: blocks until iteration_done(iteration); returns at once if it already is.
  void wait_until_iteration_done(std::uint32_t iteration);

 private:
  void count_tasks(const TaskGraph& graph, TaskId first);

  std::vector<std::uint32_t> iteration_of_task_;
  std::vector<std::size_t> task_count_;  // per iteration
  std::vector<std::size_t> finished_count_;
  simgrid::s4u::MutexPtr mutex_;
  simgrid::s4u::ConditionVariablePtr iteration_ended_;
};

}  // namespace dnnsim
