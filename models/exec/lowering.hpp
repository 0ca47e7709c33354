// The lowering of a TaskGraph into the operations the executor runs (docs/architecture.md, "As
// built"; docs/collectives.md, "Fidelity levels"): one queue of operations per (device, stream),
// each operation run after the operations it depends on.
//
// Why here, in models/ and not in sim/exec/: the lowering needs only pure parts — the TaskGraph, the
// collective algorithms (models/program/), the compute and collective costs (models/cost/), the
// calibration tables — and from the platform one number per pair of devices, the uncontended cost
// of the route between them, which it takes as a function (RouteCostFn). So it sits in the layer
// that cannot include a SimGrid header, and its unit tests (tests/unit/models/lowering_test.cpp)
// link no engine. sim/exec/executor runs the result: one SimGrid actor per queue.
//
// A task becomes:
//  - a compute: one `compute` op on its stream, lasting the cost model's time (models/cost/
//    compute_cost.hpp). Under a launch model (LaunchCalibration) its device's host thread issues it:
//    a `delay` of h on the device's host stream (kHostStream) that the compute waits for, and, when
//    the task stands for n > 1 kernels, a second delay of (n − 1)·h and an end barrier after both;
//  - a transfer: one `transfer` op on the sender's stream, after a `delay` of one calibrated call
//    latency (CollectiveCalibration::latency) when the ends have one;
//  - a host copy (Transfer::host): one `host_copy` op on its stream, no call latency (a
//    cudaMemcpyAsync, not an NCCL call);
//  - a collective: a start barrier; a `delay` of latency × calls per member when calibrated; at
//    `step` fidelity one `transfer` op per step of its algorithm's expansion (on the sender's stream,
//    after the steps it depends on); at `flow` fidelity per phase one `flows` op per sender (its
//    flows, FlowSpec, consecutive) and a phase barrier; an end barrier; and one `fence` per member
//    on its stream, waiting for the end barrier, so that a member's later work on that stream waits
//    for the collective as it would behind an NCCL kernel;
//  - a mirrored collective (Collective::mirrored): one `delay` on its first member, its uncontended
//    time (models/cost/collective_cost.hpp) plus its calls' latency.
// A task's dependencies feed its entry op (the compute, the first delay or transfer, the start
// barrier); its dependents wait for its completion op (the compute, the transfer, the end barrier).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "models/calibration/calibration.hpp"
#include "models/hardware/catalog.hpp"
#include "models/program/collective_algorithms.hpp"
#include "models/program/task_graph.hpp"

namespace dnnsim {

// No operation (an Op's queue for a barrier; a task not lowered in LoweredProgram::completion_of_task).
inline constexpr std::uint32_t kNoOp = std::numeric_limits<std::uint32_t>::max();
// The stream of a device's host thread under a launch model (LaunchCalibration): its queue holds the
// delays of issuing the device's kernels, in the order their tasks were added.
inline constexpr StreamId kHostStream = std::numeric_limits<StreamId>::max();

// host_copy: a transfer between its device and that device's host memory (Transfer::host), `dst`
// 0 to the host, 1 from it. Not `OpKind`: that is the SPMD operator graph's (models/spmd/op_graph.hpp),
// and two enums of one name in one namespace break the One Definition Rule (g++ -flto -Wodr).
enum class OperationKind : std::uint8_t { compute, transfer, flows, barrier, fence, delay, host_copy };

// One operation. 24 bytes: a 16,384-GPU pipeline with every replica has 6.1 M of them, a step-level
// run at a thousand GPUs 50 M (docs/performance.md, "Memory per operation"). Its device is its
// queue's (LoweredProgram::device_of): every op but a barrier runs on a queue of its device.
struct Op {
  // compute: seconds on its device (the executor runs seconds × its host's speed in flop);
  // transfer: bytes; flows: the bytes of all its flows; delay: seconds; barrier, fence: 0.
  double amount = 0;
  TaskId task = 0;
  std::uint32_t dst = 0;        // transfer destination; flows: the index of its first FlowSpec
  std::uint32_t queue = kNoOp;  // LoweredProgram::queues index that runs it; kNoOp for a barrier
  // Dependencies not met yet. The lowering counts them (at most kMaxPending: an op waits for one
  // op per member or step of one collective at most); the runtime counts them down and runs the op
  // (or, for a barrier, completes it) at 0.
  std::uint32_t pending : 24 = 0;
  OperationKind kind : 3 = OperationKind::compute;
  bool starts_task : 1 = false;  // its start is the task's start
  bool ends_task : 1 = false;    // its end is the task's end
  // An NCCL kernel's work (a transfer, a sender's flows, a mirrored collective, a call's latency):
  // while it runs it holds SMs its device's computations lose (CollectiveCalibration::compute_share).
  bool communicates : 1 = false;
  // Set by the runtime once the op has ended: a task lowered later (Lowering::lower with first > 0)
  // does not wait for it.
  bool done : 1 = false;
};
static_assert(sizeof(Op) == 24);
inline constexpr std::uint32_t kMaxPending = (1u << 24) - 1;

// One flow of a `flows` op: a sender's flows of one phase are consecutive, by increasing delay, and
// run side by side, each from its delay after the phase starts.
struct FlowSpec {
  double bytes = 0;
  double delay = 0;  // seconds after the phase starts
  DeviceId dst = 0;
  bool last = false;  // of its op
};

// The ops of one (device, stream), in the order they run.
struct StreamQueue {
  DeviceId device = 0;
  StreamId stream = 0;  // kHostStream for a device's host thread
  std::vector<std::uint32_t> ops;
};

// One dependency: `op` waits for the op whose successor list holds this edge; `next` is the list's
// following edge (kNoOp: the last).
struct SuccessorEdge {
  std::uint32_t op = 0;
  std::uint32_t next = kNoOp;
};

// The lowered form: plain data, indices into vectors, no pointers. Memory per operation: its Op
// (24 bytes), the ends of its successor list (8, 4 once sealed), an edge per successor (8; a vector
// per op took 24 bytes and a heap block: docs/performance.md, "Compact task records") and its entry
// in a queue (4 bytes); per flow at flow fidelity a FlowSpec (24 bytes).
// Order, for a consumer that would hold a window of it at a time: tasks are lowered in id order and
// the ops of one task are consecutive, so a task's ops form one range of `ops`; within a batch of
// tasks (Lowering::lower) an op may depend on any op of an earlier batch or of the same batch.
struct LoweredProgram {
  std::vector<Op> ops;
  // By op, the ops that wait for it, in the order their dependencies were added: a list of edges
  // linked in one array (a deque: it grows without copying, and an edge's index stays valid).
  std::vector<std::uint32_t> first_successor;  // by op: its first edge, kNoOp when none
  std::vector<std::uint32_t> last_successor;   // by op: its last edge, kNoOp when none; empty once sealed
  std::deque<SuccessorEdge> successor_edges;
  std::vector<FlowSpec> flow_specs;
  std::vector<StreamQueue> queues;                // in creation order: by first op added
  std::vector<std::uint32_t> completion_of_task;  // by task: the op whose end is its end (kNoOp: not lowered)
  std::size_t flow_count = 0;                     // transfers and flows: one per transfer op and per FlowSpec

  // The ops that wait for `op`, in order (the executor walks the edges instead).
  [[nodiscard]] std::vector<std::uint32_t> successors(std::uint32_t op) const;
  // The device that runs `op` (not a barrier: a barrier has no queue).
  [[nodiscard]] DeviceId device_of(const Op& op) const { return queues[op.queue].device; }
};

// What the lowering needs of a device: the cost model's inputs.
struct LoweringDevice {
  const GpuSpec* gpu = nullptr;
  double compute_efficiency = 1.0;
  // When set, its curves replace compute_efficiency; its collectives section (if any) gives the
  // latency per call of the collectives and transfers the device takes part in; its launch section
  // (if any) has the device's compute tasks issued by a host thread. The host issues a device's
  // compute tasks in the order they were added, so a graph under a launch model must not make a
  // compute task wait for a later-added compute task of the same device.
  const CalibrationTable* calibration = nullptr;
};

struct LoweringOptions {
  // The workload's collective fidelity; unset: the default rule (effective_collective_fidelity).
  // A collective's own Collective::fidelity wins.
  std::optional<CollectiveFidelity> collective_fidelity;
  // Polled before each task: once set, lowering stops there (the run stops at its first operation
  // anyway, and the tasks not lowered are reported unfinished).
  const std::atomic<bool>* stop = nullptr;
};

class Lowering {
 public:
  // `route_cost`: the uncontended cost of the route between two devices (flow fidelity's plan and a
  // mirrored collective's time); called during lower() only.
  Lowering(std::vector<LoweringDevice> devices, DeviceTopology topology, RouteCostFn route_cost,
           LoweringOptions options);

  // Lowers tasks [first, graph.tasks().size()) of `graph` into program(). `first` is the size the
  // graph had at the previous call (0 at the first); the graph must be valid (TaskGraph::validate)
  // and its devices those given at construction. A dependency on a done op is already met. Returns
  // the end of the tasks lowered: the graph's size, or less when LoweringOptions::stop was set.
  // @throw InputError if a collective cannot be expanded; std::out_of_range for an unknown device.
  TaskId lower(const TaskGraph& graph, TaskId first);
  // No more tasks will be lowered: frees what only appending needs (the successor lists' ends,
  // 4 bytes an operation), before the run allocates its own.
  void seal();

  // The runtime counts `pending` down and sets `done` in it.
  [[nodiscard]] LoweredProgram& program() { return program_; }
  [[nodiscard]] const LoweredProgram& program() const { return program_; }

 private:
  std::uint32_t add_op(Op op);
  void depend(std::uint32_t op, std::uint32_t on);
  std::uint32_t queue_of(DeviceId device, StreamId stream);
  std::uint32_t add_on_stream(Op op, DeviceId device, StreamId stream);
  [[nodiscard]] double call_latency(std::span<const DeviceId> members) const;
  std::uint32_t lower_compute(const Compute& compute, const Task& task, TaskId id, std::uint32_t& issue);
  std::uint32_t lower_transfer(const Transfer& transfer, const Task& task, TaskId id);
  // `origin`: the task's (TaskGraph::origin), for an expansion's errors.
  std::uint32_t lower_collective(const Collective& collective, const Task& task, TaskId id,
                                 const SourceLocation& origin);
  std::uint32_t lower_steps(const Collective& collective, const Task& task, TaskId id, std::uint32_t start,
                            const SourceLocation& origin);
  std::uint32_t lower_flows(const Collective& collective, const Task& task, TaskId id, std::uint32_t start,
                            const SourceLocation& origin);

  std::vector<LoweringDevice> devices_;
  DeviceTopology topology_;
  RouteCostFn route_cost_;
  LoweringOptions options_;
  LoweredProgram program_;
  // Per device, its (stream, queue) pairs in creation order: a device has a handful of streams, and
  // a scan of them is cheaper than a tree lookup for every op.
  std::vector<std::vector<std::pair<StreamId, std::uint32_t>>> queue_index_;
  // Per device under a launch model: the completions of the transfers it sent since its host last
  // issued a kernel, which the next issue waits for (the host synchronizes after a send).
  std::vector<std::vector<std::uint32_t>> host_syncs_;
  // The uncontended time of a mirrored or alone collective by what it depends on (kind, algorithm,
  // size, root, copies, group): a pipeline repeats the same few every step, and a 64-way all-to-all's
  // expansion is 4,032 steps.
  using CollectiveShape =
      std::tuple<CollectiveKind, std::string, double, DeviceId, std::uint32_t, std::vector<DeviceId>>;
  std::map<CollectiveShape, double> alone_time_;
};

}  // namespace dnnsim
