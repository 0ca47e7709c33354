#include "sim/exec/executor.hpp"

#include <simgrid/Exception.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "models/cost/compute_cost.hpp"

namespace sg4 = simgrid::s4u;

namespace dnnsim {

namespace {
constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

// The unit of execution after lowering. A task becomes one operation (compute, transfer) or, for a
// collective, a start barrier, its steps, an end barrier and one fence per member stream (so that a
// member's later work on that stream waits for the collective, as it would behind an NCCL kernel).
enum class OpKind { compute, transfer, barrier, fence };

struct Op {
  OpKind kind = OpKind::compute;
  TaskId task = 0;
  DeviceId device = 0;  // compute device or transfer source
  DeviceId dst = 0;
  double amount = 0;  // flop for the host (duration × host speed) or bytes
  std::uint32_t pending = 0;
  std::uint32_t slot = kNone;  // stream actor that runs it (none for barriers)
  bool starts_task = false;    // its start is the task's start
  bool ends_task = false;      // its end is the task's end
};

// A (device, stream) queue and its actor's wake-up.
struct StreamSlot {
  DeviceId device = 0;
  StreamId stream = 0;
  std::vector<std::uint32_t> ops;
  std::uint32_t waiting_on = kNone;
  sg4::SemaphorePtr wake;
};
}  // namespace

struct Executor::Impl {
  std::vector<Op> ops;
  std::vector<std::vector<std::uint32_t>> successors;
  std::vector<StreamSlot> slots;
  std::vector<DeviceBinding> devices;
  ExecutorOptions options;
  std::vector<std::uint32_t> completion_of_task;  // the op whose end is the task's end
  std::vector<std::uint32_t> barrier_stack;       // scratch of complete(), reused
  std::size_t flows = 0;

  std::uint32_t add_op(Op op) {
    ops.push_back(op);
    successors.emplace_back();
    return static_cast<std::uint32_t>(ops.size() - 1);
  }
  void depend(std::uint32_t op, std::uint32_t on) {
    successors[on].push_back(op);
    ++ops[op].pending;
  }
};

namespace {

// Steps of the coarse fidelity: each member sends its ring successor the bytes a ring algorithm
// would move per device, in one flow — the bandwidth term of the ring, one latency instead of 2(p−1).
CollectiveExpansion coarse_expansion(const Collective& c, const DeviceTopology& topology, const SourceLocation& where) {
  const auto p = static_cast<double>(c.group.size());
  double factor = 0;
  switch (c.kind) {
    case CollectiveKind::all_reduce:
      factor = 2 * (p - 1) / p;
      break;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
      factor = (p - 1) / p;
      break;
    case CollectiveKind::broadcast:
      factor = 1;
      break;
    case CollectiveKind::all_to_all:
      return expand_collective(c, topology, where);  // a personalised exchange has no ring form
  }
  CollectiveExpansion expansion;
  for (std::size_t i = 0; i < c.group.size(); ++i)
    expansion.steps.push_back(
        CollectiveStep{c.group[i], c.group[(i + 1) % c.group.size()], c.size * factor, {}});
  return expansion;
}

}  // namespace

Executor::Executor(const TaskGraph& graph, std::vector<DeviceBinding> devices, const DeviceTopology& topology,
                   ExecutorOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& im = *impl_;
  im.devices = std::move(devices);
  im.options = std::move(options);
  std::map<std::pair<DeviceId, StreamId>, std::uint32_t> slot_index;  // ordered: actor creation is deterministic
  const auto slot_of = [&](DeviceId device, StreamId stream) {
    auto [it, inserted] = slot_index.try_emplace({device, stream}, static_cast<std::uint32_t>(im.slots.size()));
    if (inserted) im.slots.push_back(StreamSlot{device, stream, {}, kNone, nullptr});
    return it->second;
  };
  // Appends `op` to the queue of (op.device, stream).
  const auto add_on_stream = [&](Op op, StreamId stream) {
    op.slot = slot_of(op.device, stream);
    const std::uint32_t index = im.add_op(op);
    im.slots[op.slot].ops.push_back(index);
    return index;
  };
  std::vector<double> host_speed;  // flop/s, looked up once per device rather than per task
  for (const DeviceBinding& binding : im.devices) host_speed.push_back(binding.host->get_speed());
  // A task's dependencies feed its entry op; its dependents wait for its completion op (the same op
  // for a compute or a transfer; the start and end barriers for a collective).
  std::vector<std::uint32_t> entry_of_task(graph.tasks().size(), kNone);
  im.completion_of_task.assign(graph.tasks().size(), kNone);

  for (TaskId id = 0; id < graph.tasks().size(); ++id) {
    const Task& task = graph.task(id);
    if (const auto* compute = std::get_if<Compute>(&task.op)) {
      const DeviceBinding& binding = im.devices.at(compute->device);
      Op op;
      op.kind = OpKind::compute;
      op.task = id;
      op.device = compute->device;
      const Seconds duration = binding.calibration ? compute_time(*compute, *binding.gpu, *binding.calibration)
                                                   : compute_time(*compute, *binding.gpu, binding.compute_efficiency);
      op.amount = duration.value() * host_speed[compute->device];
      op.starts_task = op.ends_task = true;
      entry_of_task[id] = im.completion_of_task[id] = add_on_stream(op, task.stream);
    } else if (const auto* transfer = std::get_if<Transfer>(&task.op)) {
      Op op;
      op.kind = OpKind::transfer;
      op.task = id;
      op.device = transfer->src;
      op.dst = transfer->dst;
      op.amount = transfer->size.value();
      op.starts_task = op.ends_task = true;
      entry_of_task[id] = im.completion_of_task[id] = add_on_stream(op, task.stream);
      ++im.flows;
    } else {
      const auto& collective = std::get<Collective>(task.op);
      const CollectiveExpansion expansion = im.options.fidelity == Fidelity::coarse
                                                ? coarse_expansion(collective, topology, task.origin)
                                                : expand_collective(collective, topology, task.origin);
      Op start;
      start.kind = OpKind::barrier;
      start.task = id;
      start.starts_task = true;
      const std::uint32_t start_index = im.add_op(start);
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
        if (step.deps.empty()) im.depend(step_index[s], start_index);
        for (std::uint32_t dep : step.deps) {
          im.depend(step_index[s], step_index[dep]);
          has_successor[dep] = true;
        }
        ++im.flows;
      }
      Op end;
      end.kind = OpKind::barrier;
      end.task = id;
      end.ends_task = true;
      const std::uint32_t end_index = im.add_op(end);
      for (std::size_t s = 0; s < expansion.steps.size(); ++s)
        if (!has_successor[s]) im.depend(end_index, step_index[s]);
      if (expansion.steps.empty()) im.depend(end_index, start_index);
      for (DeviceId member : collective.group) {
        Op fence;
        fence.kind = OpKind::fence;
        fence.task = id;
        fence.device = member;
        im.depend(add_on_stream(fence, task.stream), end_index);
      }
      entry_of_task[id] = start_index;
      im.completion_of_task[id] = end_index;
    }
  }
  for (TaskId id = 0; id < graph.tasks().size(); ++id)
    for (TaskId dep : graph.task(id).deps) im.depend(entry_of_task[id], im.completion_of_task[dep]);
}

Executor::~Executor() = default;

std::size_t Executor::operation_count() const { return impl_->ops.size(); }
std::size_t Executor::flow_count() const { return impl_->flows; }

void Executor::start() {
  Impl& im = *impl_;
  for (StreamSlot& slot : im.slots) slot.wake = sg4::Semaphore::create(0);

  // Marks `first` done at `now` and propagates through barriers; wakes stream actors whose next op
  // became ready. Actors run one at a time and this never blocks, so one stack serves them all.
  auto complete = [this, &im](std::uint32_t first, double now) {
    std::vector<std::uint32_t>& stack = im.barrier_stack;
    stack.push_back(first);
    while (!stack.empty()) {
      const std::uint32_t id = stack.back();
      stack.pop_back();
      const Op& op = im.ops[id];
      if (op.kind == OpKind::barrier && op.starts_task)
        for (ExecutionObserver* o : observers_) o->on_task_start(op.task, now);
      if (op.ends_task) {
        ++finished_tasks_;
        for (ExecutionObserver* o : observers_) o->on_task_end(op.task, now);
      }
      for (std::uint32_t next : im.successors[id]) {
        Op& successor = im.ops[next];
        if (--successor.pending > 0) continue;
        if (successor.kind == OpKind::barrier) {
          stack.push_back(next);
        } else if (im.slots[successor.slot].waiting_on == next) {
          im.slots[successor.slot].wake->release();
        }
      }
    }
  };

  // Barriers with no dependencies (a collective that can start at once) are resolved by a first
  // actor at t = 0, before any stream actor looks at its queue.
  std::vector<std::uint32_t> ready_barriers;
  for (std::uint32_t id = 0; id < im.ops.size(); ++id)
    if (im.ops[id].kind == OpKind::barrier && im.ops[id].pending == 0) ready_barriers.push_back(id);
  if (!ready_barriers.empty())
    sg4::Actor::create("collective-starts", im.devices.front().host, [ready_barriers, complete]() {
      for (std::uint32_t id : ready_barriers) complete(id, 0.0);
    });

  for (std::uint32_t s = 0; s < im.slots.size(); ++s) {
    StreamSlot& slot = im.slots[s];
    if (slot.ops.empty()) continue;
    sg4::Host* host = im.devices.at(slot.device).host;
    sg4::Actor::create(fmt::format("stream-{}-{}", slot.device, slot.stream), host, [this, &im, &slot, complete]() {
      for (std::uint32_t id : slot.ops) {
        while (im.ops[id].pending > 0) {
          slot.waiting_on = id;
          slot.wake->acquire();
        }
        slot.waiting_on = kNone;
        const Op& op = im.ops[id];
        const double start = sg4::Engine::get_clock();
        if (op.starts_task)
          for (ExecutionObserver* o : observers_) o->on_task_start(op.task, start);
        switch (op.kind) {
          case OpKind::compute:
            if (op.amount > 0) sg4::this_actor::execute(op.amount);
            break;
          case OpKind::transfer:
            for (;;) {
              try {
                sg4::Comm::sendto(im.devices[op.device].host, im.devices[op.dst].host, op.amount);
                break;
              } catch (const simgrid::NetworkFailureException&) {
                // A failed peer GPU ends this stream: its work can never complete, and the report
                // counts the unfinished tasks. A failed link is waited out, then the flow is sent
                // again from the start (NCCL would time out and the step be redone; the report
                // counts the resends).
                if (!im.devices[op.dst].host->is_on()) return;
                const double now = sg4::Engine::get_clock();
                double resume = std::numeric_limits<double>::infinity();
                for (const auto& [from, to] : im.options.link_failures)
                  if (from <= now && now < to) resume = std::min(resume, to);
                if (!std::isfinite(resume)) return;  // cut by something no window explains: stop, reported as unfinished
                ++retried_transfers_;
                sg4::this_actor::sleep_until(resume);
              }
            }
            break;
          case OpKind::fence:
          case OpKind::barrier:
            break;
        }
        const double end = sg4::Engine::get_clock();
        if (op.kind == OpKind::transfer)
          for (ExecutionObserver* o : observers_) o->on_transfer(op.task, op.device, op.dst, op.amount, start, end);
        complete(id, end);
      }
    });
  }
}

}  // namespace dnnsim
