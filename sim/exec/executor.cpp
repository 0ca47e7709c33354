#include "sim/exec/executor.hpp"

#include <xbt/config.hpp>

#include <malloc.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <exception>
#include <limits>
#include <unordered_map>
#include <new>
#include <span>

#include "models/cost/collective_cost.hpp"
#include "models/cost/compute_cost.hpp"
#include "sim/platform/transfer.hpp"

namespace sg4 = simgrid::s4u;

namespace dnnsim {

namespace {
constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint32_t kMoreWork = kNone - 1;  // StreamSlot::waiting_on of an actor whose queue is exhausted
// The stream of a device's host thread under a launch model (LaunchCalibration): its queue holds
// the delays of issuing the device's kernels, in the order their tasks were added.
constexpr StreamId kHostStream = std::numeric_limits<StreamId>::max();


// The unit of execution after lowering. A task becomes one operation (compute, transfer) or, for a
// collective, a start barrier, its steps (step fidelity) or per phase one `flows` op per sender and a
// phase barrier (flow fidelity), an end barrier and one fence per member stream (so that a member's
// later work on that stream waits for the collective, as it would behind an NCCL kernel). A
// calibrated collective starts with a `delay` per member: the fixed latency of its calls, and so does
// a transfer between calibrated GPUs (one call). Under a launch model a compute task is issued by
// `delay`s on its device's host stream (Impl::lower). A mirrored collective is one `delay` on its
// first member (Collective::mirrored).
enum class OpKind : std::uint8_t { compute, transfer, flows, barrier, fence, delay };

// 32 bytes: there are millions of these in a step-level run at a thousand GPUs.
struct Op {
  double amount = 0;  // flop for the host (duration × host speed), bytes, or seconds for a delay
  TaskId task = 0;
  DeviceId device = 0;  // compute device, transfer or flows source
  std::uint32_t dst = 0;  // transfer destination; for `flows`, the index of its first FlowSpec
  std::uint32_t pending = 0;
  std::uint32_t slot = kNone;  // stream actor that runs it (none for barriers)
  OpKind kind = OpKind::compute;
  bool starts_task = false;  // its start is the task's start
  bool ends_task = false;    // its end is the task's end
  bool done = false;
};
static_assert(sizeof(Op) <= 32);

// One flow of a `flows` op: its sender's flows of one phase are consecutive, by increasing delay.
struct FlowSpec {
  double bytes = 0;
  double delay = 0;  // after the phase starts
  DeviceId dst = 0;
  bool last = false;  // of its op
};

// A (device, stream) queue and its actor's wake-up. `waiting_on` is the op the blocked actor waits
// for (or kMoreWork); whoever releases `wake` resets it first, so a wait is released once.
struct StreamSlot {
  DeviceId device = 0;
  StreamId stream = 0;
  std::vector<std::uint32_t> ops;
  std::size_t idle_at = 0;  // length of `ops` when the actor ran out of work (waiting_on == kMoreWork)
  std::uint32_t waiting_on = kNone;
  sg4::SemaphorePtr wake;
};
}  // namespace

struct Executor::Impl {
  std::vector<Op> ops;
  std::vector<FlowSpec> flow_specs;
  std::vector<std::vector<std::uint32_t>> successors;
  // Boxed: a stream actor holds a reference to its slot while append() adds slots.
  std::vector<std::unique_ptr<StreamSlot>> slots;
  // Per device, its (stream, slot) pairs in creation order: a device has a handful of streams, and a
  // scan of them is cheaper than a tree lookup for every op. Actors are created in slot order.
  std::vector<std::vector<std::pair<StreamId, std::uint32_t>>> slot_index;
  std::vector<DeviceBinding> devices;
  std::vector<double> host_speed;  // flop/s, looked up once per device rather than per task
  DeviceTopology topology;
  ExecutorOptions options;
  std::vector<ExecutionObserver*> observers;
  std::vector<std::uint32_t> completion_of_task;  // the op whose end is the task's end
  std::vector<std::uint32_t> barrier_stack;       // scratch of complete(), reused
  // Per device under a launch model: the completions of the transfers it sent since its host last
  // issued a kernel, which the next issue waits for (the host synchronizes after a send).
  std::vector<std::vector<std::uint32_t>> host_syncs;
  std::unordered_map<const sg4::Link*, double> nominal_bandwidth;  // before any profile applies
  std::unordered_map<std::uint64_t, RouteCost> route_costs;        // by src << 32 | dst
  std::size_t flows = 0;
  std::size_t finished_tasks = 0;
  std::size_t retried_transfers = 0;
  bool interrupted = false;
  std::exception_ptr failure;  // the first std::bad_alloc of a stream actor
  bool started = false;
  bool closed = false;

  std::uint32_t add_op(Op op) {
    ops.push_back(op);
    successors.emplace_back();
    return static_cast<std::uint32_t>(ops.size() - 1);
  }
  // A finished op is not waited for: an appended task may depend on one.
  void depend(std::uint32_t op, std::uint32_t on) {
    if (ops[on].done) return;
    successors[on].push_back(op);
    ++ops[op].pending;
  }
  std::uint32_t slot_of(DeviceId device, StreamId stream) {
    if (device >= slot_index.size()) slot_index.resize(device + std::size_t{1});
    for (const auto& [known, slot] : slot_index[device])
      if (known == stream) return slot;
    const auto slot = static_cast<std::uint32_t>(slots.size());
    slots.push_back(std::make_unique<StreamSlot>(StreamSlot{device, stream, {}, 0, kNone, nullptr}));
    slot_index[device].emplace_back(stream, slot);
    return slot;
  }
  // Appends `op` to the queue of (op.device, stream).
  std::uint32_t add_on_stream(Op op, StreamId stream) {
    op.slot = slot_of(op.device, stream);
    const std::uint32_t index = add_op(op);
    slots[op.slot]->ops.push_back(index);
    return index;
  }

  void lower(const TaskGraph& graph, TaskId first);
  void lower_collective(const Task& task, TaskId id, std::uint32_t& entry);
  // The calibrated fixed cost of one NCCL call among `members` (CollectiveCalibration::latency): the
  // largest of their tables', 0 when none has a collectives section.
  [[nodiscard]] double call_latency(std::span<const DeviceId> members) const {
    double latency = 0;
    for (DeviceId member : members)
      if (const CalibrationTable* table = devices[member].calibration; table && table->collectives)
        latency = std::max(latency, table->collectives->latency.value());
    return latency;
  }
  RouteCost route_cost(DeviceId src, DeviceId dst);
  bool send_or_stop(DeviceId src, DeviceId dst, double bytes);
  void complete(std::uint32_t first, double now);
  void resolve_ready_barriers(std::uint32_t first_op);
  void spawn_stream_actor(std::uint32_t slot);
  void run_stream(StreamSlot& slot);
};

// Lowers tasks [first, size) of `graph`. A task's dependencies feed its entry op; its dependents
// wait for its completion op (the same op for a compute or a transfer; the start and end barriers
// for a collective).
void Executor::Impl::lower(const TaskGraph& graph, TaskId first) {
  const auto end_task = static_cast<TaskId>(graph.tasks().size());
  std::vector<std::uint32_t> entry_of_task(end_task - first, kNone);
  std::vector<std::uint32_t> issue_of_task(end_task - first, kNone);  // first host delay, under a launch model
  host_syncs.resize(devices.size());
  completion_of_task.resize(end_task, kNone);
  // Every task is at least one op: grown once to that, ahead (geometrically, for appends), rather than
  // copied at each doubling on the way — fresh pages cost a fault each, dear on this VM.
  const std::size_t at_least = ops.size() + (end_task - first);
  if (at_least > ops.capacity()) {
    ops.reserve(std::max(at_least, 2 * ops.capacity()));
    successors.reserve(ops.capacity());
  }

  // A stop asked for while lowering (millions of operations at step fidelity) ends it here: the run
  // stops at its first operation anyway, and the tasks not lowered are reported unfinished.
  TaskId lowered_end = end_task;
  for (TaskId id = first; id < end_task; ++id) {
    if (options.stop != nullptr && options.stop->load(std::memory_order_relaxed)) {
      lowered_end = id;
      interrupted = true;
      break;
    }
    const Task& task = graph.task(id);
    std::uint32_t& entry = entry_of_task[id - first];
    if (const auto* compute = std::get_if<Compute>(&task.op)) {
      const DeviceBinding& binding = devices.at(compute->device);
      Op op;
      op.kind = OpKind::compute;
      op.task = id;
      op.device = compute->device;
      const Seconds duration = binding.calibration ? compute_time(*compute, *binding.gpu, *binding.calibration)
                                                   : compute_time(*compute, *binding.gpu, binding.compute_efficiency);
      op.amount = duration.value() * host_speed[compute->device];
      op.starts_task = op.ends_task = true;
      const LaunchCalibration* launch =
          binding.calibration && binding.calibration->launch ? &*binding.calibration->launch : nullptr;
      if (launch == nullptr) {
        entry = completion_of_task[id] = add_on_stream(op, task.stream);
        continue;
      }
      // Launch queue (LaunchCalibration): the host issues the task's n kernels one h apart after what
      // it issued before, and after the sends it waits for. The GPU part starts once the first kernel
      // is issued and runs its whole time from there; the task ends when both the GPU part and the
      // host's issuing are done: max(h + G, n·h) after the issue starts. That is the queue's exact end
      // when the GPU never idles after the first kernel (G ≥ the issuing) or the kernels' GPU times
      // are negligible beside h; in between it is short by at most the last kernel's GPU time.
      const double h = launch->host_overhead.value();
      Op issue;
      issue.kind = OpKind::delay;
      issue.task = id;
      issue.device = compute->device;
      issue.amount = h;
      const std::uint32_t issue_index = add_on_stream(issue, kHostStream);
      for (std::uint32_t sync : host_syncs[compute->device]) depend(issue_index, sync);
      host_syncs[compute->device].clear();
      issue_of_task[id - first] = issue_index;
      entry = add_on_stream(op, task.stream);
      depend(entry, issue_index);
      completion_of_task[id] = entry;
      if (compute->launches > 1) {
        issue.amount = h * (compute->launches - 1);
        const std::uint32_t rest = add_on_stream(issue, kHostStream);
        Op end;
        end.kind = OpKind::barrier;
        end.task = id;
        end.ends_task = true;
        ops[entry].ends_task = false;
        completion_of_task[id] = add_op(end);
        depend(completion_of_task[id], entry);
        depend(completion_of_task[id], rest);
      }
    } else if (const auto* transfer = std::get_if<Transfer>(&task.op)) {
      Op op;
      op.kind = OpKind::transfer;
      op.task = id;
      op.device = transfer->src;
      op.dst = transfer->dst;
      op.amount = transfer->size.value();
      op.starts_task = op.ends_task = true;
      // A point-to-point send is an NCCL call as a collective is (ncclSend/ncclRecv): it pays the
      // calibrated latency of one call (the larger of the two ends' tables) before its bytes move.
      const double latency = call_latency(std::array{transfer->src, transfer->dst});
      if (latency > 0) {
        Op delay;
        delay.kind = OpKind::delay;
        delay.task = id;
        delay.device = transfer->src;
        delay.amount = latency;
        delay.starts_task = true;
        op.starts_task = false;
        entry = add_on_stream(delay, task.stream);
        completion_of_task[id] = add_on_stream(op, task.stream);
        depend(completion_of_task[id], entry);
      } else {
        entry = completion_of_task[id] = add_on_stream(op, task.stream);
      }
      ++flows;
      // Under a launch model the sender's host synchronizes after the send (Megatron-LM's
      // torch.cuda.synchronize() after its point-to-point calls): its next issue waits for it.
      if (const CalibrationTable* table = devices[transfer->src].calibration; table && table->launch)
        host_syncs[transfer->src].push_back(completion_of_task[id]);
    } else {
      lower_collective(task, id, entry);
    }
  }
  for (TaskId id = first; id < lowered_end; ++id)
    for (TaskId dep : graph.task(id).deps)
      if (completion_of_task[dep] != kNone) {
        depend(entry_of_task[id - first], completion_of_task[dep]);
        // The receiver's host synchronizes on its receive before it issues the consumer's kernels.
        if (issue_of_task[id - first] != kNone && graph.task(dep).is_transfer())
          depend(issue_of_task[id - first], completion_of_task[dep]);
      }
}

// The uncontended cost of a route, from the links' nominal bandwidths (an appended collective must
// not be planned on a link that a profile happens to slow at that moment).
RouteCost Executor::Impl::route_cost(DeviceId src, DeviceId dst) {
  const std::uint64_t key = (std::uint64_t{src} << 32) | dst;
  if (const auto it = route_costs.find(key); it != route_costs.end()) return it->second;
  std::vector<sg4::Link*> links;
  double latency = 0;
  devices[src].host->route_to(devices[dst].host, links, &latency);
  double bandwidth = std::numeric_limits<double>::infinity();
  for (const sg4::Link* link : links) {
    const auto nominal = nominal_bandwidth.find(link);
    bandwidth = std::min(bandwidth, nominal != nominal_bandwidth.end() ? nominal->second : link->get_bandwidth());
  }
  return route_costs[key] = RouteCost{Seconds(latency), BytesPerSecond(bandwidth)};
}

void Executor::Impl::lower_collective(const Task& task, TaskId id, std::uint32_t& entry) {
  const auto& collective = std::get<Collective>(task.op);
  if (collective.mirrored) {
    // Its time alone on its links: exactly what the flows of a symmetric group take when no other
    // traffic shares those links (the condition under which a workload mirrors ranks).
    Op op;
    op.kind = OpKind::delay;
    op.task = id;
    op.device = collective.group.front();
    op.amount = call_latency(collective.group) * collective.calls +
                collective_time(collective, topology,
                                [this](DeviceId src, DeviceId dst) {
                                  const RouteCost cost = route_cost(src, dst);
                                  return PathCost{cost.latency, cost.bandwidth};
                                })
                    .value();
    op.starts_task = op.ends_task = true;
    entry = completion_of_task[id] = add_on_stream(op, task.stream);
    return;
  }
  Op start;
  start.kind = OpKind::barrier;
  start.task = id;
  start.starts_task = true;
  const std::uint32_t start_index = add_op(start);
  Op end;
  end.kind = OpKind::barrier;
  end.task = id;
  end.ends_task = true;

  // The calibrated fixed cost of the calls (CollectiveCalibration::latency; the slowest member's
  // table, if they differ): one delay at the head of every member's queue for the collective, so
  // that each member's first step leaves `latency × calls` after the start and the rest follows
  // (α + the expansion's time: the α–β form NCCL's own tuning model uses).
  const double delay = call_latency(collective.group) * collective.calls;
  std::vector<std::uint32_t> delay_of_member;
  if (delay > 0)
    for (DeviceId member : collective.group) {
      Op op;
      op.kind = OpKind::delay;
      op.task = id;
      op.device = member;
      op.amount = delay;
      delay_of_member.push_back(add_on_stream(op, task.stream));
      depend(delay_of_member.back(), start_index);
    }

  std::uint32_t end_index = 0;
  if (effective_collective_fidelity(collective, options.collective_fidelity, topology) == CollectiveFidelity::step) {
    const CollectiveExpansion expansion = expand_collective(collective, topology, task.origin);
    std::vector<std::uint32_t> step_index(expansion.steps.size());
    std::vector<bool> has_successor(expansion.steps.size(), false);
    for (std::size_t s = 0; s < expansion.steps.size(); ++s) {
      const CollectiveStep& step = expansion.steps[s];
      Op op;
      op.kind = OpKind::transfer;
      op.task = id;
      op.device = step.src;
      op.dst = step.dst;
      op.amount = step.size.value();
      step_index[s] = add_on_stream(op, task.stream);
      if (step.deps.empty()) depend(step_index[s], start_index);
      for (std::uint32_t dep : step.deps) {
        depend(step_index[s], step_index[dep]);
        has_successor[dep] = true;
      }
      ++flows;
    }
    end_index = add_op(end);
    for (std::size_t s = 0; s < expansion.steps.size(); ++s)
      if (!has_successor[s]) depend(end_index, step_index[s]);
    if (expansion.steps.empty()) depend(end_index, start_index);
  } else {
    CollectiveFlowPlan plan = plan_collective_flows(
        collective, topology, [this](DeviceId src, DeviceId dst) { return route_cost(src, dst); }, task.origin);
    std::uint32_t phase_start = start_index;
    for (std::vector<CollectiveFlow>& phase : plan.phases) {
      std::stable_sort(phase.begin(), phase.end(), [](const CollectiveFlow& a, const CollectiveFlow& b) {
        return a.src != b.src ? a.src < b.src : a.delay < b.delay;
      });
      Op phase_end;
      phase_end.kind = OpKind::barrier;
      phase_end.task = id;
      std::vector<std::uint32_t> senders;
      for (std::size_t f = 0; f < phase.size(); ++f) {
        if (f == 0 || phase[f].src != phase[f - 1].src) {
          Op op;
          op.kind = OpKind::flows;
          op.task = id;
          op.device = phase[f].src;
          op.dst = static_cast<std::uint32_t>(flow_specs.size());
          senders.push_back(add_on_stream(op, task.stream));
          depend(senders.back(), phase_start);
        }
        const bool last = f + 1 == phase.size() || phase[f + 1].src != phase[f].src;
        flow_specs.push_back(FlowSpec{phase[f].size.value(), phase[f].delay.value(), phase[f].dst, last});
        ops[senders.back()].amount += phase[f].size.value();
        ++flows;
      }
      const std::uint32_t phase_index = add_op(phase_end);
      for (std::uint32_t sender : senders) depend(phase_index, sender);
      if (senders.empty()) depend(phase_index, phase_start);
      phase_start = phase_index;
    }
    end_index = add_op(end);
    depend(end_index, phase_start);
  }
  for (std::uint32_t d : delay_of_member) depend(end_index, d);  // also when the expansion has no step
  for (DeviceId member : collective.group) {
    Op fence;
    fence.kind = OpKind::fence;
    fence.task = id;
    fence.device = member;
    depend(add_on_stream(fence, task.stream), end_index);
  }
  entry = start_index;
  completion_of_task[id] = end_index;
}

// Marks `first` done at `now` and propagates through barriers; wakes stream actors whose next op
// became ready. A semaphore release, or an observer's callback that makes a simcall (as
// IterationBarrier notifies its controller), lets the other actors of this scheduling round run —
// another complete(), or the controller's append() growing `ops`, `successors` and `slots`: so
// nothing is read through a reference into those vectors across such a call, and the shared stack
// is fine (every op on it is a ready barrier at this same date, whoever pops it).
void Executor::Impl::complete(std::uint32_t first, double now) {
  barrier_stack.push_back(first);
  while (!barrier_stack.empty()) {
    const std::uint32_t id = barrier_stack.back();
    barrier_stack.pop_back();
    Op& op = ops[id];
    op.done = true;
    const TaskId task = op.task;
    const bool starts_collective = op.kind == OpKind::barrier && op.starts_task;
    const bool ends_task = op.ends_task;
    if (starts_collective)
      for (ExecutionObserver* o : observers) o->on_task_start(task, now);
    if (ends_task) {
      ++finished_tasks;
      for (ExecutionObserver* o : observers) o->on_task_end(task, now);
    }
    // By index: a done op gains no successor, but `successors` itself may reallocate.
    const std::size_t successor_count = successors[id].size();
    for (std::size_t k = 0; k < successor_count; ++k) {
      const std::uint32_t next = successors[id][k];
      Op& successor = ops[next];
      if (--successor.pending > 0) continue;
      if (successor.kind == OpKind::barrier) {
        barrier_stack.push_back(next);
      } else if (StreamSlot& slot = *slots[successor.slot]; slot.waiting_on == next) {
        slot.waiting_on = kNone;
        slot.wake->release();
      }
    }
  }
}

// Barriers with no pending dependency among ops [first_op, end) (a collective that can start at
// once) are resolved now by the calling actor, or, before the engine runs, by a first actor at the
// current date before any stream actor looks at its queue.
void Executor::Impl::resolve_ready_barriers(std::uint32_t first_op) {
  std::vector<std::uint32_t> ready;
  for (auto id = first_op; id < ops.size(); ++id)
    if (ops[id].kind == OpKind::barrier && ops[id].pending == 0 && !ops[id].done) ready.push_back(id);
  if (ready.empty()) return;
  if (!sg4::Actor::is_maestro()) {
    for (std::uint32_t id : ready) complete(id, sg4::Engine::get_clock());
    return;
  }
  sg4::Actor::create("collective-starts", devices.front().host, [this, ready]() {
    for (std::uint32_t id : ready) complete(id, sg4::Engine::get_clock());
  });
}

void Executor::Impl::spawn_stream_actor(std::uint32_t s) {
  StreamSlot& slot = *slots[s];
  slot.wake = sg4::Semaphore::create(0);
  sg4::Actor::create(slot.stream == kHostStream ? fmt::format("host-{}", slot.device)
                                                : fmt::format("stream-{}-{}", slot.device, slot.stream),
                     devices.at(slot.device).host,
                     [this, &slot]() {
                       try {
                         run_stream(slot);
                       } catch (const std::bad_alloc&) {
                         if (!failure) failure = std::current_exception();
                         sg4::Actor::kill_all();
                       }
                     });
}

// Sends `bytes` and waits for them. A failed peer GPU ends the stream (false): its work can never
// complete, and the report counts the unfinished tasks. A failed link is waited out, then the flow is
// sent again from the start (NCCL would time out and the step be redone; the report counts the resends).
bool Executor::Impl::send_or_stop(DeviceId src, DeviceId dst, double bytes) {
  for (;;) {
    if (finish_transfer(start_transfer(devices[src].host, devices[dst].host, bytes))) return true;
    if (!devices[dst].host->is_on()) return false;
    const double now = sg4::Engine::get_clock();
    double resume = std::numeric_limits<double>::infinity();
    for (const auto& [from, to] : options.link_failures)
      if (from <= now && now < to) resume = std::min(resume, to);
    if (!std::isfinite(resume)) return false;  // cut by something no window explains: reported as unfinished
    ++retried_transfers;
    sg4::this_actor::sleep_until(resume);
  }
}

void Executor::Impl::run_stream(StreamSlot& slot) {
  for (std::size_t position = 0;; ++position) {
    while (position == slot.ops.size()) {
      if (!options.growable || closed) return;
      slot.idle_at = position;
      slot.waiting_on = kMoreWork;
      slot.wake->acquire();
    }
    const std::uint32_t id = slot.ops[position];
    if (options.stop != nullptr && options.stop->load()) {
      interrupted = true;
      sg4::Actor::kill_all();
      return;
    }
    while (ops[id].pending > 0) {
      slot.waiting_on = id;
      slot.wake->acquire();
    }
    const Op op = ops[id];  // a copy: append() may reallocate `ops` while this actor is blocked below
    const double start = sg4::Engine::get_clock();
    if (op.starts_task)
      for (ExecutionObserver* o : observers) o->on_task_start(op.task, start);
    switch (op.kind) {
      case OpKind::compute:
        if (op.amount > 0) sg4::this_actor::execute(op.amount);
        break;
      case OpKind::transfer:
        if (!send_or_stop(op.device, op.dst, op.amount)) return;
        break;
      case OpKind::flows: {
        // A sender's flows of one phase run side by side, each from its delay on.
        std::vector<std::pair<sg4::ActivityPtr, std::uint32_t>> transfers;
        for (std::uint32_t f = op.dst;; ++f) {
          const FlowSpec spec = flow_specs[f];
          if (spec.delay > 0) sg4::this_actor::sleep_until(start + spec.delay);
          transfers.emplace_back(start_transfer(devices[op.device].host, devices[spec.dst].host, spec.bytes), f);
          if (spec.last) break;
        }
        for (auto& [transfer, f] : transfers) {
          const FlowSpec spec = flow_specs[f];
          if (!finish_transfer(transfer)) {
            if (!send_or_stop(op.device, spec.dst, spec.bytes)) return;
            for (ExecutionObserver* o : observers)
              o->on_transfer(op.task, op.device, spec.dst, spec.bytes, start, sg4::Engine::get_clock());
            continue;
          }
          for (ExecutionObserver* o : observers)
            o->on_transfer(op.task, op.device, spec.dst, spec.bytes, transfer->get_start_time(), transfer->get_finish_time());
        }
        break;
      }
      case OpKind::delay:
        sg4::this_actor::sleep_for(op.amount);
        break;
      case OpKind::fence:
      case OpKind::barrier:
        break;
    }
    const double end = sg4::Engine::get_clock();
    if (op.kind == OpKind::transfer)
      for (ExecutionObserver* o : observers) o->on_transfer(op.task, op.device, op.dst, op.amount, start, end);
    complete(id, end);
  }
}

// glibc's M_TOP_PAD default (mallopt(3): 128 × 1024), restored after the stacks are made.
constexpr int kDefaultTopPad = 128 * 1024;

// SimGrid callocs a stack when it has no guard page; calloc zeroes a chunk unless it is freshly
// taken from the system at the top of the heap, and with no top pad most stacks are (the heap grows
// by just that stack; glibc still zeroes a stack carved where the heap reached before a trim), so
// their pages stay untouched until the actor uses them. Freeing them costs no system call. (That is
// glibc's malloc; under the release CLI's jemalloc the top pad is unused and fresh large blocks are
// untouched pages too.) The stack
// size is set through the configuration, which applies to the actors created next (see
// sim/cluster/cluster_sim.cpp: SimGrid 3.32's Actor::init()->set_stacksize() is broken).
StreamActorStacks::StreamActorStacks() : previous_kib_(simgrid::config::get_value<int>("contexts/stack-size")) {
  sg4::Engine::set_config("contexts/stack-size", kStreamActorStackKiB);
  mallopt(M_TOP_PAD, 0);
}

StreamActorStacks::~StreamActorStacks() {
  mallopt(M_TOP_PAD, kDefaultTopPad);
  sg4::Engine::set_config("contexts/stack-size", previous_kib_);
}

Executor::Executor(const TaskGraph& graph, std::vector<DeviceBinding> devices, const DeviceTopology& topology,
                   ExecutorOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& im = *impl_;
  im.devices = std::move(devices);
  im.topology = topology;
  im.options = std::move(options);
  for (const DeviceBinding& binding : im.devices) im.host_speed.push_back(binding.host->get_speed());
  for (const sg4::Link* link : sg4::Engine::get_instance()->get_all_links())
    im.nominal_bandwidth.emplace(link, link->get_bandwidth());
  im.lower(graph, 0);
}

Executor::~Executor() = default;

void Executor::add_observer(ExecutionObserver* observer) { impl_->observers.push_back(observer); }
std::size_t Executor::finished_task_count() const { return impl_->finished_tasks; }
bool Executor::interrupted() const { return impl_->interrupted; }
std::size_t Executor::operation_count() const { return impl_->ops.size(); }
std::size_t Executor::flow_count() const { return impl_->flows; }
std::size_t Executor::retried_transfers() const { return impl_->retried_transfers; }

void Executor::start() {
  Impl& im = *impl_;
  im.started = true;
  im.resolve_ready_barriers(0);
  const StreamActorStacks stacks;
  for (std::uint32_t s = 0; s < im.slots.size(); ++s) im.spawn_stream_actor(s);
}

void Executor::append(const TaskGraph& graph, TaskId first) {
  Impl& im = *impl_;
  assert(im.options.growable && "append() needs ExecutorOptions::growable: other stream actors exit when done");
  assert(!im.closed && "append() after close()");
  assert(first == im.completion_of_task.size() && "append() continues where the executor's graph ended");
  assert(graph.devices().size() <= im.devices.size() && "appended tasks run on the devices bound at construction");
  const auto first_op = static_cast<std::uint32_t>(im.ops.size());
  const auto first_slot = static_cast<std::uint32_t>(im.slots.size());
  im.lower(graph, first);
  for (ExecutionObserver* o : im.observers) o->on_tasks_appended(graph, first);
  if (!im.started) return;  // start() creates every actor and resolves every ready barrier
  {
    const StreamActorStacks stacks;
    for (std::uint32_t s = first_slot; s < im.slots.size(); ++s) im.spawn_stream_actor(s);
  }
  im.resolve_ready_barriers(first_op);
  for (std::size_t s = 0; s < im.slots.size(); ++s)  // by index: a release lets other actors run
    if (StreamSlot& slot = *im.slots[s]; slot.waiting_on == kMoreWork && slot.ops.size() > slot.idle_at) {
      slot.waiting_on = kNone;
      slot.wake->release();
    }
}

void Executor::rethrow_failure() const {
  if (impl_->failure) std::rethrow_exception(impl_->failure);
}

void Executor::close() {
  Impl& im = *impl_;
  im.closed = true;
  for (std::size_t s = 0; s < im.slots.size(); ++s)
    if (StreamSlot& slot = *im.slots[s]; slot.waiting_on == kMoreWork) {
      slot.waiting_on = kNone;
      slot.wake->release();
    }
}

}  // namespace dnnsim
