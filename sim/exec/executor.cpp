#include "sim/exec/executor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <exception>
#include <limits>
#include <new>
#include <unordered_map>

#include "models/exec/lowering.hpp"
#include "sim/platform/actors.hpp"

namespace sg4 = simgrid::s4u;

namespace dnnsim {

namespace {
constexpr std::uint32_t kMoreWork = kNoOp - 1;  // StreamActor::waiting_on of an actor whose queue is exhausted

// The runtime side of a queue (LoweredProgram::queues, same index): its actor's wake-up.
// `waiting_on` is the op the blocked actor waits for (or kMoreWork); whoever wakes it resets it
// first, so a wait is ended once. The actor suspends itself and is resumed (a semaphore did the same
// with an acquisition activity per wait: docs/performance.md, "Scale without shortcuts"). A resume
// is never lost: an actor is resumed only once it has set `waiting_on`, and the maestro handles the
// simcalls of one scheduling round in the order the actors ran, its suspension before the resume.
struct StreamActor {
  std::size_t idle_at = 0;  // length of the queue when the actor ran out of work (waiting_on == kMoreWork)
  std::uint32_t waiting_on = kNoOp;
  sg4::ActorPtr self;

  void wait_for(std::uint32_t op) {
    waiting_on = op;
    sg4::this_actor::suspend();
  }
  void wake() {
    waiting_on = kNoOp;
    self->resume();
  }
};

std::vector<LoweringDevice> lowering_devices(const std::vector<DeviceBinding>& devices) {
  std::vector<LoweringDevice> lowering;
  lowering.reserve(devices.size());
  for (const DeviceBinding& binding : devices)
    lowering.push_back(LoweringDevice{binding.gpu, binding.compute_efficiency, binding.calibration});
  return lowering;
}
}  // namespace

struct Executor::Impl {
  Impl(std::vector<DeviceBinding> bindings, const DeviceTopology& topology, ExecutorOptions executor_options)
      : devices(std::move(bindings)),
        options(std::move(executor_options)),
        lowering(
            lowering_devices(devices), topology, [this](DeviceId src, DeviceId dst) { return route_cost(src, dst); },
            LoweringOptions{options.collective_fidelity, options.stop}),
        program(lowering.program()) {
    for (const DeviceBinding& binding : devices) {
      host_speed.push_back(binding.host->get_speed());
      communication_rate.push_back(collectives_of(binding.calibration).compute_share * host_speed.back());
    }
    for (const sg4::Link* link : sg4::Engine::get_instance()->get_all_links())
      nominal_bandwidth.emplace(link, link->get_bandwidth());
  }

  std::vector<DeviceBinding> devices;
  ExecutorOptions options;
  Lowering lowering;
  LoweredProgram& program;  // the lowering's: this runtime counts `pending` down and sets `done`
  // Boxed: a stream actor holds a reference to its state while append() adds queues.
  std::vector<std::unique_ptr<StreamActor>> actors;
  std::vector<double> host_speed;  // flop/s, looked up once per device rather than per op
  // flop/s an op that communicates takes from its device's computations (CollectiveCalibration::compute_share)
  std::vector<double> communication_rate;
  std::vector<ExecutionObserver*> observers;
  std::vector<std::uint32_t> barrier_stack;                        // scratch of complete(), reused
  std::unordered_map<const sg4::Link*, double> nominal_bandwidth;  // before any profile applies
  std::unordered_map<std::uint64_t, RouteCost> route_costs;        // by src << 32 | dst
  std::size_t finished_tasks = 0;
  std::size_t retried_transfers = 0;
  bool interrupted = false;
  std::exception_ptr failure;  // the first std::bad_alloc of a stream actor
  bool started = false;
  bool closed = false;
  bool halted = false;  // halt(): every stream ends as soon as it runs again

  // Lowers tasks [first, size) and gives every new queue its (not yet started) actor state: an op of
  // a new queue may be a successor of an op that completes before that queue's actor is created.
  void lower(const TaskGraph& graph, TaskId first) {
    if (lowering.lower(graph, first) < graph.tasks().size()) interrupted = true;
    while (actors.size() < program.queues.size()) actors.push_back(std::make_unique<StreamActor>());
  }
  RouteCost route_cost(DeviceId src, DeviceId dst);
  void halt();
  bool send_or_stop(DeviceId src, DeviceId dst, double bytes);
  void complete(std::uint32_t first, double now);
  void resolve_ready_barriers(std::uint32_t first_op);
  void spawn_stream_actors(std::uint32_t first_queue);
  void run_stream(std::uint32_t queue, StreamActor& actor);
  bool run_flows(const Op& op, DeviceId device, double start);
  bool run_op(const Op& op, DeviceId device, double start);
};

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

// Marks `first` done at `now` and propagates through barriers; wakes stream actors whose next op
// became ready. A semaphore release, or an observer's callback that makes a simcall (as
// IterationBarrier notifies its controller), lets the other actors of this scheduling round run —
// another complete(), or the controller's append() growing the program's vectors and `actors`: so
// nothing is read through a reference into those vectors across such a call, and the shared stack
// is fine (every op on it is a ready barrier at this same date, whoever pops it).
void Executor::Impl::complete(std::uint32_t first, double now) {
  barrier_stack.push_back(first);
  while (!barrier_stack.empty()) {
    const std::uint32_t id = barrier_stack.back();
    barrier_stack.pop_back();
    Op& op = program.ops[id];
    op.done = true;
    const TaskId task = op.task;
    const bool starts_collective = op.kind == OperationKind::barrier && op.starts_task;
    const bool ends_task = op.ends_task;
    if (starts_collective)
      for (ExecutionObserver* o : observers) o->on_task_start(task, now);
    if (ends_task) {
      ++finished_tasks;
      for (ExecutionObserver* o : observers) o->on_task_end(task, now);
    }
    // By index: a done op gains no successor, but the lists may grow (append()) during a wake.
    for (std::uint32_t e = program.first_successor[id]; e != kNoOp; e = program.successor_edges[e].next) {
      const std::uint32_t next = program.successor_edges[e].op;
      Op& successor = program.ops[next];
      if (--successor.pending > 0) continue;
      if (successor.kind == OperationKind::barrier) {
        barrier_stack.push_back(next);
      } else if (StreamActor& actor = *actors[successor.queue]; actor.waiting_on == next) {
        actor.wake();
      }
    }
  }
}

// Barriers with no pending dependency among ops [first_op, end) (a collective that can start at
// once) are resolved now by the calling actor, or, before the engine runs, by a first actor at the
// current date before any stream actor looks at its queue.
void Executor::Impl::resolve_ready_barriers(std::uint32_t first_op) {
  std::vector<std::uint32_t> ready;
  for (auto id = first_op; id < program.ops.size(); ++id)
    if (const Op& op = program.ops[id]; op.kind == OperationKind::barrier && op.pending == 0 && !op.done)
      ready.push_back(id);
  if (ready.empty()) return;
  if (!sg4::Actor::is_maestro()) {
    for (std::uint32_t id : ready) complete(id, sg4::Engine::get_clock());
    return;
  }
  start_actor("collective-starts", devices.front().host, ActorStack::loop, [this, ready]() {
    for (std::uint32_t id : ready) complete(id, sg4::Engine::get_clock());
  });
}

// Actors for queues [first_queue, end), in queue order.
void Executor::Impl::spawn_stream_actors(std::uint32_t first_queue) {
  const ActorLauncher launcher(ActorStack::loop);
  for (auto q = first_queue; q < program.queues.size(); ++q) {
    const StreamQueue& queue = program.queues[q];
    StreamActor& actor = *actors[q];
    actor.self = launcher.start(queue.stream == kHostStream ? fmt::format("host-{}", queue.device)
                                                            : fmt::format("stream-{}-{}", queue.device, queue.stream),
                                devices.at(queue.device).host, [this, q, &actor]() {
                                  try {
                                    run_stream(q, actor);
                                  } catch (const std::bad_alloc&) {
                                    if (!failure) failure = std::current_exception();
                                    halt();
                                  }
                                });
  }
}

// Ends the run early (a stop asked for, or a std::bad_alloc), from an actor. Stream actors wait for
// their computes with finish_execution (sim/platform/transfer.hpp: one SimGrid action per compute
// instead of two), so they are not killed (Actor::kill_all did that): each returns as soon as it runs
// again, woken now if it waits for a dependency or for more work, else when its activity or sleep
// ends, and marks nothing more done. The other actors (a controller, background flows) are killed.
void Executor::Impl::halt() {
  halted = true;
  std::vector<const sg4::Actor*> streams;
  for (const auto& actor : actors)
    if (actor->self) {
      streams.push_back(actor->self.get());
      if (actor->waiting_on != kNoOp) actor->wake();
    }
  std::sort(streams.begin(), streams.end());
  const sg4::Actor* self = sg4::Actor::self();
  for (const sg4::ActorPtr& actor : sg4::Engine::get_instance()->get_all_actors())
    if (actor.get() != self && !std::binary_search(streams.begin(), streams.end(), actor.get())) actor->kill();
}

// Sends `bytes` and waits for them. A failed peer GPU ends the stream (false): its work can never
// complete, and the report counts the unfinished tasks. A failed link is waited out, then the flow is
// sent again from the start (NCCL would time out and the step be redone; the report counts the resends).
bool Executor::Impl::send_or_stop(DeviceId src, DeviceId dst, double bytes) {
  for (;;) {
    const bool delivered = finish_transfer(start_transfer(devices[src].host, devices[dst].host, bytes));
    if (halted) return false;
    if (delivered) return true;
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

// A `flows` op: its sender's flows of one phase run side by side, each from its delay on. false: a
// flow could not be delivered (send_or_stop), and the stream ends.
bool Executor::Impl::run_flows(const Op& op, DeviceId device, double start) {
  std::vector<std::pair<sg4::ActivityPtr, std::uint32_t>> transfers;
  for (std::uint32_t f = op.dst;; ++f) {
    const FlowSpec spec = program.flow_specs[f];
    if (spec.delay > 0) sg4::this_actor::sleep_until(start + spec.delay);
    if (halted) return false;
    transfers.emplace_back(start_transfer(devices[device].host, devices[spec.dst].host, spec.bytes), f);
    if (spec.last) break;
  }
  for (auto& [transfer, f] : transfers) {
    const FlowSpec spec = program.flow_specs[f];
    const bool delivered = finish_transfer(transfer);
    if (halted) return false;
    if (!delivered) {
      if (!send_or_stop(device, spec.dst, spec.bytes)) return false;
      for (ExecutionObserver* o : observers)
        o->on_transfer(op.task, device, spec.dst, spec.bytes, start, sg4::Engine::get_clock());
      continue;
    }
    for (ExecutionObserver* o : observers)
      o->on_transfer(op.task, device, spec.dst, spec.bytes, transfer->get_start_time(), transfer->get_finish_time());
  }
  return true;
}

// Runs one op of `device`'s queue. false: the stream ends (a transfer that could not be delivered).
bool Executor::Impl::run_op(const Op& op, DeviceId device, double start) {
  switch (op.kind) {
    case OperationKind::compute:
      if (const double flops = op.amount * host_speed[device]; flops > 0)
        finish_execution(start_execution(devices[device].host, flops));
      break;
    case OperationKind::transfer:
      if (!send_or_stop(device, op.dst, op.amount)) return false;
      break;
    case OperationKind::flows:
      if (!run_flows(op, device, start)) return false;
      break;
    case OperationKind::delay:
      sg4::this_actor::sleep_for(op.amount);
      break;
    case OperationKind::host_copy: {
      sg4::Host* gpu = devices[device].host;
      sg4::Host* memory = devices[device].host_memory;
      if (op.dst == 0 ? !finish_transfer(start_transfer(gpu, memory, op.amount))
                      : !finish_transfer(start_transfer(memory, gpu, op.amount)))
        return false;  // cut by a link failure: reported as unfinished
      break;
    }
    case OperationKind::fence:
    case OperationKind::barrier:
      break;
  }
  return true;
}

// The queue is read by index at each step: append() may reallocate the program's vectors while this
// actor is blocked.
void Executor::Impl::run_stream(std::uint32_t queue, StreamActor& actor) {
  const DeviceId device = program.queues[queue].device;  // every op of a queue runs on its device
  for (std::size_t position = 0;; ++position) {
    while (position == program.queues[queue].ops.size()) {
      if (!options.growable || closed || halted) return;
      actor.idle_at = position;
      actor.wait_for(kMoreWork);
    }
    const std::uint32_t id = program.queues[queue].ops[position];
    if (halted) return;
    if (options.stop != nullptr && options.stop->load()) {
      interrupted = true;
      halt();
      return;
    }
    while (program.ops[id].pending > 0 && !halted) actor.wait_for(id);
    if (halted) return;
    const Op op = program.ops[id];  // a copy, for the same reason
    const double start = sg4::Engine::get_clock();
    if (op.starts_task)
      for (ExecutionObserver* o : observers) o->on_task_start(op.task, start);
    // An NCCL kernel holds its SMs for as long as it communicates, whatever it waits for: a GEMM on
    // another stream meanwhile runs on the rest (compute_share; a serial collective has none beside it).
    const sg4::ActivityPtr occupation = op.communicates && communication_rate[device] > 0
                                            ? start_occupation(devices[device].host, communication_rate[device])
                                            : nullptr;
    const bool ran = run_op(op, device, start);
    if (occupation) end_occupation(occupation);
    if (!ran || halted) return;
    const double end = sg4::Engine::get_clock();
    if (op.kind == OperationKind::transfer)
      for (ExecutionObserver* o : observers) o->on_transfer(op.task, device, op.dst, op.amount, start, end);
    complete(id, end);
  }
}

Executor::Executor(const TaskGraph& graph, std::vector<DeviceBinding> devices, const DeviceTopology& topology,
                   ExecutorOptions options)
    : impl_(std::make_unique<Impl>(std::move(devices), topology, std::move(options))) {
  impl_->lower(graph, 0);
  if (!impl_->options.growable) impl_->lowering.seal();
}

Executor::~Executor() = default;

void Executor::add_observer(ExecutionObserver* observer) { impl_->observers.push_back(observer); }
std::size_t Executor::finished_task_count() const { return impl_->finished_tasks; }
bool Executor::interrupted() const { return impl_->interrupted; }
std::size_t Executor::operation_count() const { return impl_->program.ops.size(); }
std::size_t Executor::flow_count() const { return impl_->program.flow_count; }
std::size_t Executor::retried_transfers() const { return impl_->retried_transfers; }

void Executor::start() {
  Impl& im = *impl_;
  im.started = true;
  im.resolve_ready_barriers(0);
  im.spawn_stream_actors(0);
}

void Executor::append(const TaskGraph& graph, TaskId first) {
  Impl& im = *impl_;
  assert(im.options.growable && "append() needs ExecutorOptions::growable: other stream actors exit when done");
  assert(!im.closed && "append() after close()");
  assert(first == im.program.completion_of_task.size() && "append() continues where the executor's graph ended");
  assert(graph.devices().size() <= im.devices.size() && "appended tasks run on the devices bound at construction");
  const auto first_op = static_cast<std::uint32_t>(im.program.ops.size());
  const auto first_queue = static_cast<std::uint32_t>(im.program.queues.size());
  im.lower(graph, first);
  for (ExecutionObserver* o : im.observers) o->on_tasks_appended(graph, first);
  if (!im.started) return;  // start() creates every actor and resolves every ready barrier
  im.spawn_stream_actors(first_queue);
  im.resolve_ready_barriers(first_op);
  for (std::size_t q = 0; q < im.actors.size(); ++q)  // by index: a release lets other actors run
    if (StreamActor& actor = *im.actors[q];
        actor.waiting_on == kMoreWork && im.program.queues[q].ops.size() > actor.idle_at)
      actor.wake();
}

void Executor::rethrow_failure() const {
  if (impl_->failure) std::rethrow_exception(impl_->failure);
}

void Executor::close() {
  Impl& im = *impl_;
  im.closed = true;
  for (std::size_t q = 0; q < im.actors.size(); ++q)
    if (StreamActor& actor = *im.actors[q]; actor.waiting_on == kMoreWork) actor.wake();
}

}  // namespace dnnsim
