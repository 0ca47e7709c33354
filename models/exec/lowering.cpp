#include "models/exec/lowering.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "models/cost/collective_cost.hpp"
#include "models/cost/compute_cost.hpp"

namespace dnnsim {

Lowering::Lowering(std::vector<LoweringDevice> devices, DeviceTopology topology, RouteCostFn route_cost,
                   LoweringOptions options)
    : devices_(std::move(devices)),
      topology_(std::move(topology)),
      route_cost_(std::move(route_cost)),
      options_(options) {}

std::vector<std::uint32_t> LoweredProgram::successors(std::uint32_t op) const {
  std::vector<std::uint32_t> list;
  for (std::uint32_t e = first_successor[op]; e != kNoOp; e = successor_edges[e].next)
    list.push_back(successor_edges[e].op);
  return list;
}

std::uint32_t Lowering::add_op(Op op) {
  program_.ops.push_back(op);
  program_.first_successor.push_back(kNoOp);
  program_.last_successor.push_back(kNoOp);
  return static_cast<std::uint32_t>(program_.ops.size() - 1);
}

// A done op is not waited for: an appended task may depend on one.
void Lowering::depend(std::uint32_t op, std::uint32_t on) {
  if (program_.ops[on].done) return;
  const auto edge = static_cast<std::uint32_t>(program_.successor_edges.size());
  program_.successor_edges.push_back(SuccessorEdge{op, kNoOp});
  if (program_.last_successor[on] == kNoOp)
    program_.first_successor[on] = edge;
  else
    program_.successor_edges[program_.last_successor[on]].next = edge;
  program_.last_successor[on] = edge;
  Op& waiting = program_.ops[op];
  if (waiting.pending == kMaxPending) throw std::length_error("an operation waits for more than 2^24 - 1 others");
  ++waiting.pending;
}

void Lowering::seal() { std::vector<std::uint32_t>().swap(program_.last_successor); }

std::uint32_t Lowering::queue_of(DeviceId device, StreamId stream) {
  if (device >= queue_index_.size()) queue_index_.resize(device + std::size_t{1});
  for (const auto& [known, queue] : queue_index_[device])
    if (known == stream) return queue;
  const auto queue = static_cast<std::uint32_t>(program_.queues.size());
  program_.queues.push_back(StreamQueue{device, stream, {}});
  queue_index_[device].emplace_back(stream, queue);
  return queue;
}

// Appends `op` to the queue of (device, stream).
std::uint32_t Lowering::add_on_stream(Op op, DeviceId device, StreamId stream) {
  op.queue = queue_of(device, stream);
  const std::uint32_t index = add_op(op);
  program_.queues[op.queue].ops.push_back(index);
  return index;
}

// The calibrated fixed cost of one NCCL call among `members` (CollectiveCalibration::latency): the
// largest of their tables', 0 when none has a collectives section.
double Lowering::call_latency(std::span<const DeviceId> members) const {
  double latency = 0;
  for (DeviceId member : members)
    latency = std::max(latency, collectives_of(devices_[member].calibration).latency.value());
  return latency;
}

TaskId Lowering::lower(const TaskGraph& graph, TaskId first) {
  const auto end_task = static_cast<TaskId>(graph.tasks().size());
  std::vector<std::uint32_t> entry_of_task(end_task - first, kNoOp);
  std::vector<std::uint32_t> issue_of_task(end_task - first, kNoOp);  // first host delay, under a launch model
  host_syncs_.resize(devices_.size());
  program_.completion_of_task.resize(end_task, kNoOp);
  // Every task is at least one op: grown once to that, ahead (geometrically, for appends), rather than
  // copied at each doubling on the way — fresh pages cost a fault each, dear on this VM.
  const std::size_t at_least = program_.ops.size() + (end_task - first);
  if (at_least > program_.ops.capacity()) {
    program_.ops.reserve(std::max(at_least, 2 * program_.ops.capacity()));
    program_.first_successor.reserve(program_.ops.capacity());
    program_.last_successor.reserve(program_.ops.capacity());
  }

  // A stop asked for while lowering (millions of operations at step fidelity) ends it here.
  TaskId lowered_end = end_task;
  for (TaskId id = first; id < end_task; ++id) {
    if (options_.stop != nullptr && options_.stop->load(std::memory_order_relaxed)) {
      lowered_end = id;
      break;
    }
    const Task& task = graph.task(id);
    std::uint32_t& entry = entry_of_task[id - first];
    if (const auto* compute = std::get_if<Compute>(&task.op))
      entry = lower_compute(*compute, task, id, issue_of_task[id - first]);
    else if (const auto* transfer = std::get_if<Transfer>(&task.op))
      entry = lower_transfer(*transfer, task, id);
    else
      entry = lower_collective(std::get<Collective>(task.op), task, id, graph.origin(id));
  }
  for (TaskId id = first; id < lowered_end; ++id)
    for (TaskId dep : graph.task(id).deps)
      if (program_.completion_of_task[dep] != kNoOp) {
        depend(entry_of_task[id - first], program_.completion_of_task[dep]);
        // The receiver's host synchronizes on its receive before it issues the consumer's kernels.
        if (issue_of_task[id - first] != kNoOp && graph.task(dep).is_transfer() &&
            std::get<Transfer>(graph.task(dep).op).host_synchronizes)
          depend(issue_of_task[id - first], program_.completion_of_task[dep]);
      }
  return lowered_end;
}

// Returns the entry op; `issue` becomes the first host delay under a launch model.
std::uint32_t Lowering::lower_compute(const Compute& compute, const Task& task, TaskId id, std::uint32_t& issue) {
  const LoweringDevice& device = devices_.at(compute.device);
  const Seconds duration = device.calibration ? compute_time(compute, *device.gpu, *device.calibration)
                                              : compute_time(compute, *device.gpu, device.compute_efficiency);
  const Op op{
      .amount = duration.value(), .task = id, .kind = OperationKind::compute, .starts_task = true, .ends_task = true};
  std::uint32_t& completion = program_.completion_of_task[id];
  const LaunchCalibration* launch =
      device.calibration && device.calibration->launch ? &*device.calibration->launch : nullptr;
  if (launch == nullptr) return completion = add_on_stream(op, compute.device, task.stream);
  // Launch queue (LaunchCalibration): the host issues the task's n kernels one h apart after what it
  // issued before, and after the sends it waits for. The GPU part starts once the first kernel is
  // issued and runs its whole time from there; the task ends when both the GPU part and the host's
  // issuing are done: max(h + G, n·h) after the issue starts. That is the queue's exact end when the
  // GPU never idles after the first kernel (G ≥ the issuing) or the kernels' GPU times are
  // negligible beside h; in between it is short by at most the last kernel's GPU time.
  const double h = launch->host_overhead.value();
  Op delay{.amount = h, .task = id, .kind = OperationKind::delay};
  issue = add_on_stream(delay, compute.device, kHostStream);
  for (std::uint32_t sync : host_syncs_[compute.device]) depend(issue, sync);
  host_syncs_[compute.device].clear();
  const std::uint32_t entry = add_on_stream(op, compute.device, task.stream);
  depend(entry, issue);
  completion = entry;
  if (compute.launches > 1) {
    delay.amount = h * (compute.launches - 1);
    const std::uint32_t rest = add_on_stream(delay, compute.device, kHostStream);
    program_.ops[entry].ends_task = false;
    completion = add_op(Op{.task = id, .kind = OperationKind::barrier, .ends_task = true});
    depend(completion, entry);
    depend(completion, rest);
  }
  return entry;
}

std::uint32_t Lowering::lower_transfer(const Transfer& transfer, const Task& task, TaskId id) {
  if (transfer.host != HostCopy::none) {
    ++program_.flow_count;
    return program_.completion_of_task[id] = add_on_stream(Op{.amount = transfer.size.value(),
                                                              .task = id,
                                                              .dst = transfer.host == HostCopy::to_host ? 0u : 1u,
                                                              .kind = OperationKind::host_copy,
                                                              .starts_task = true,
                                                              .ends_task = true},
                                                           transfer.src, task.stream);
  }
  Op op{.amount = transfer.size.value(),
        .task = id,
        .dst = transfer.dst,
        .kind = OperationKind::transfer,
        .starts_task = true,
        .ends_task = true,
        .communicates = true};
  std::uint32_t& completion = program_.completion_of_task[id];
  std::uint32_t entry = 0;
  // A point-to-point send is an NCCL call as a collective is (ncclSend/ncclRecv): it pays the
  // calibrated latency of one call (the larger of the two ends' tables) before its bytes move.
  const double latency = call_latency(std::array{transfer.src, transfer.dst});
  if (latency > 0) {
    op.starts_task = false;
    entry = add_on_stream(
        Op{.amount = latency, .task = id, .kind = OperationKind::delay, .starts_task = true, .communicates = true},
        transfer.src, task.stream);
    completion = add_on_stream(op, transfer.src, task.stream);
    depend(completion, entry);
  } else {
    entry = completion = add_on_stream(op, transfer.src, task.stream);
  }
  ++program_.flow_count;
  // Under a launch model the sender's host synchronizes after the send (Megatron-LM's
  // torch.cuda.synchronize() after its point-to-point calls): its next issue waits for it.
  if (const CalibrationTable* table = devices_[transfer.src].calibration;
      table && table->launch && transfer.host_synchronizes)
    host_syncs_[transfer.src].push_back(completion);
  return entry;
}

// Returns the entry op (the start barrier, or a mirrored collective's one delay).
std::uint32_t Lowering::lower_collective(const Collective& collective, const Task& task, TaskId id,
                                         const SourceLocation& origin) {
  std::uint32_t& completion = program_.completion_of_task[id];
  if (collective.mirrored || collective.alone) {
    // Its time alone on its links: exactly what the flows of a symmetric group take when no other
    // traffic shares those links (the condition under which a workload mirrors ranks).
    const auto path = [this](DeviceId src, DeviceId dst) {
      const RouteCost cost = route_cost_(src, dst);
      return PathCost{cost.latency, cost.bandwidth};
    };
    auto [known, added] =
        alone_time_.try_emplace(CollectiveShape{collective.kind, collective.algorithm, collective.size.value(),
                                                collective.root, collective.copies, collective.group},
                                0.0);
    if (added) known->second = collective_time(collective, topology_, path).value();
    const Op op{.amount = call_latency(collective.group) * collective.calls + known->second,
                .task = id,
                .kind = OperationKind::delay,
                .starts_task = true,
                .ends_task = true,
                .communicates = true};
    return completion = add_on_stream(op, collective.group.front(), task.stream);
  }
  const std::uint32_t start_index = add_op(Op{.task = id, .kind = OperationKind::barrier, .starts_task = true});

  // The calibrated fixed cost of the calls (CollectiveCalibration::latency; the slowest member's
  // table, if they differ): one delay at the head of every member's queue for the collective, so
  // that each member's first step leaves `latency × calls` after the start and the rest follows
  // (α + the expansion's time: the α–β form NCCL's own tuning model uses).
  const double delay = call_latency(collective.group) * collective.calls;
  std::vector<std::uint32_t> delay_of_member;
  if (delay > 0)
    for (DeviceId member : collective.group) {
      delay_of_member.push_back(add_on_stream(
          Op{.amount = delay, .task = id, .kind = OperationKind::delay, .communicates = true}, member, task.stream));
      depend(delay_of_member.back(), start_index);
    }

  const std::uint32_t end_index =
      effective_collective_fidelity(collective, options_.collective_fidelity, topology_) == CollectiveFidelity::step
          ? lower_steps(collective, task, id, start_index, origin)
          : lower_flows(collective, task, id, start_index, origin);
  for (std::uint32_t d : delay_of_member) depend(end_index, d);  // also when the expansion has no step
  for (DeviceId member : collective.group)
    depend(add_on_stream(Op{.task = id, .kind = OperationKind::fence}, member, task.stream), end_index);
  completion = end_index;
  return start_index;
}

// Step fidelity: one transfer op per step of the expansion. Returns the end barrier.
std::uint32_t Lowering::lower_steps(const Collective& collective, const Task& task, TaskId id, std::uint32_t start,
                                    const SourceLocation& origin) {
  const CollectiveExpansion expansion = expand_collective(collective, topology_, origin);
  std::vector<std::uint32_t> step_index(expansion.steps.size());
  std::vector<bool> has_successor(expansion.steps.size(), false);
  for (std::size_t s = 0; s < expansion.steps.size(); ++s) {
    const CollectiveStep& step = expansion.steps[s];
    step_index[s] = add_on_stream(Op{.amount = step.size.value(),
                                     .task = id,
                                     .dst = step.dst,
                                     .kind = OperationKind::transfer,
                                     .communicates = true},
                                  step.src, task.stream);
    if (step.deps.empty()) depend(step_index[s], start);
    for (std::uint32_t dep : step.deps) {
      depend(step_index[s], step_index[dep]);
      has_successor[dep] = true;
    }
    ++program_.flow_count;
  }
  const std::uint32_t end_index = add_op(Op{.task = id, .kind = OperationKind::barrier, .ends_task = true});
  for (std::size_t s = 0; s < expansion.steps.size(); ++s)
    if (!has_successor[s]) depend(end_index, step_index[s]);
  if (expansion.steps.empty()) depend(end_index, start);
  return end_index;
}

// Flow fidelity: per phase one flows op per sender and a phase barrier. Returns the end barrier.
std::uint32_t Lowering::lower_flows(const Collective& collective, const Task& task, TaskId id, std::uint32_t start,
                                    const SourceLocation& origin) {
  CollectiveFlowPlan plan = plan_collective_flows(collective, topology_, route_cost_, origin);
  std::uint32_t phase_start = start;
  for (std::vector<CollectiveFlow>& phase : plan.phases) {
    std::stable_sort(phase.begin(), phase.end(), [](const CollectiveFlow& a, const CollectiveFlow& b) {
      return a.src != b.src ? a.src < b.src : a.delay < b.delay;
    });
    std::vector<std::uint32_t> senders;
    for (std::size_t f = 0; f < phase.size(); ++f) {
      if (f == 0 || phase[f].src != phase[f - 1].src) {
        const auto first_flow = static_cast<std::uint32_t>(program_.flow_specs.size());
        senders.push_back(
            add_on_stream(Op{.task = id, .dst = first_flow, .kind = OperationKind::flows, .communicates = true},
                          phase[f].src, task.stream));
        depend(senders.back(), phase_start);
      }
      const bool last = f + 1 == phase.size() || phase[f + 1].src != phase[f].src;
      program_.flow_specs.push_back(FlowSpec{phase[f].size.value(), phase[f].delay.value(), phase[f].dst, last});
      program_.ops[senders.back()].amount += phase[f].size.value();
      ++program_.flow_count;
    }
    const std::uint32_t phase_index = add_op(Op{.task = id, .kind = OperationKind::barrier});
    for (std::uint32_t sender : senders) depend(phase_index, sender);
    if (senders.empty()) depend(phase_index, phase_start);
    phase_start = phase_index;
  }
  const std::uint32_t end_index = add_op(Op{.task = id, .kind = OperationKind::barrier, .ends_task = true});
  depend(end_index, phase_start);
  return end_index;
}

}  // namespace dnnsim
