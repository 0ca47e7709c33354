#include "sim/run/resource_guard.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sim/platform/actors.hpp"
#include "sim/scenario/layout.hpp"

namespace dnnsim {
namespace {

// Bytes per unit. The terms of the simulation phase are fitted to measured peak RSS (release build,
// jemalloc, reports off): peak − the resident set at the guard − the task dates, by least squares on
// its relative error, on three runs of different shape (ASTRA-like data parallelism on 1,024 GPUs at
// flow fidelity and on 256 GPUs at step fidelity: many flows, few streams; GPT-3 175B 1F1B on 1,024
// GPUs: many tasks and streams), and checked on six others (docs/performance.md, "Resource guard":
// the fit, the runs and the check). The fitted values agree with the structures that hold a unit:
//
// An executor operation (models/exec/lowering.hpp): its Op record (32 bytes), the ends of its successor
// list (8), ~1.3 edges of 8 bytes, its entry in a stream queue (4), in grown vectors. Fitted: 56.5.
// Since then the Op is 24 bytes and one end is freed before the run, so this over-counts by ~12; kept,
// and checked instead: the estimate stayed within 1.22–1.36 of the measured peaks (docs/performance.md,
// "Memory per operation").
constexpr double kPerOperation = 56.5;
// A step of the collective being expanded, all held at once while the executor lowers it: the step
// (40 bytes) in a grown vector, its dependency block (32), its index and successor flag (5).
constexpr double kPerExpansionStep = 1.5 * 40 + 32 + 5;
// A Task record in the graph's grown vector, its dependency block and the four dates per task
// (the timeline's start and end, and the result's copy of both).
constexpr double kPerTaskDates = 4 * 8;
constexpr double kPerTaskDeps = 32;
// A SimGrid actor per (device, stream): the actor, its context and the one or two pages of its stack
// it touches (jemalloc leaves the rest of a 256 KiB stack untouched, so not resident). Fitted: 3,457.
constexpr double kPerStreamActor = 3457;
// SimGrid allocates a stack per stream actor (ActorStack::loop, sim/platform/actors.hpp; no guard
// page, sim/run/simulation.cpp): address space, not resident memory, until the actor touches it —
// but under an address-space limit (ulimit -v) a run with many streams failed inside SimGrid
// ("Failed to allocate stack", abort).
constexpr double kActorStack = stack_bytes(ActorStack::loop);
// Per GPU of the platform, built after the guard: its host, its links and its part of its node's
// routes (one zone holds every host and computes the routes across nodes when SimGrid asks:
// sim/platform/cluster_routes.hpp). Fitted: 14,393.
constexpr double kPerGpu = 14393;
// The fit's estimates were 0.88–0.95 of the measured peaks on the six runs it was checked on: the guard's
// estimate is the fit's times this factor, so that it errs on the side of refusing. The trace's
// terms below are derived, not fitted.
constexpr double kMargin = 1.25;
// With the trace on, each flow is kept from the moment it ends to the end of the reports: 40 bytes
// (LinkTrafficRecorder::Flow) in a vector grown by push_back, moved into the result.
constexpr double kTraceKeptFlow = 1.5 * 40;
// trace.json's link counters (sim/report/report.cpp write_chrome_trace): a rate change (16 bytes)
// at each end of each flow on each link of its route (PlatformLayout::gpu_route), in one array sized
// to fit; the links are counted on the routes of the run's flows (WorkloadSize::flow_links). Tasks'
// events and tasks.csv's rows are written as they are formatted: nothing per task or per row is held.
constexpr double kTraceRateChangesPerLink = 2 * 16;

std::string count(double n) {
  std::string digits = fmt::format("{:.0f}", n);
  for (auto i = static_cast<std::ptrdiff_t>(digits.size()) - 3; i > 0; i -= 3)
    digits.insert(static_cast<std::size_t>(i), ",");
  return digits;
}

// What the process holds already: the shared libraries it maps (SimGrid, libtorch, … — about
// 250 MiB resident before any scenario on the project's machine) and the scenario as read.
// `field` 0 of /proc/self/statm is the address space mapped, 1 the resident set, in pages.
double process_memory(int field) {
  std::ifstream statm("/proc/self/statm");
  double pages[2] = {0, 0};
  if (statm >> pages[0] >> pages[1]) return pages[field] * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  return 256.0 * 1024 * 1024;  // no /proc: the size measured here
}
double resident_now() { return process_memory(1); }

Bytes physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  return Bytes(pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0);
}

}  // namespace

Bytes resident_memory() { return Bytes(resident_now()); }

DeviceTopology device_topology(const Scenario& scenario, const TaskGraph& graph) {
  const std::vector<std::optional<ClusterGpu>> located = scenario.cluster.locate_gpus(graph.devices());
  const auto nodes = static_cast<std::uint32_t>(scenario.cluster.nodes.size());
  DeviceTopology topology;
  for (std::size_t d = 0; d < located.size(); ++d) {
    // A device that is no GPU is refused when the run lowers; here it sits on a node of its own.
    topology.node_of_device.push_back(located[d] ? located[d]->node : nodes + static_cast<std::uint32_t>(d));
    topology.own_nic.push_back(located[d] && located[d]->type->nic_per_gpu);
  }
  return topology;
}

std::vector<CalibratedDevice> calibrated_devices(const Scenario& scenario, const TaskGraph& graph) {
  std::vector<CalibratedDevice> calibrated;
  for (const std::optional<ClusterGpu>& gpu : scenario.cluster.locate_gpus(graph.devices())) {
    const CalibrationTable* table = gpu ? gpu->type->calibration.get() : nullptr;
    calibrated.push_back(
        CalibratedDevice{table != nullptr && table->launch.has_value(),
                         table != nullptr && table->collectives && table->collectives->latency.value() > 0});
  }
  return calibrated;
}

RouteLinksFn route_links(const Scenario& scenario, const TaskGraph& graph) {
  auto layout = std::make_shared<const PlatformLayout>(make_layout(scenario.cluster));
  std::vector<std::optional<std::uint32_t>> gpu_of_device;
  const std::vector<std::string> gpus = scenario.cluster.gpu_names();
  std::unordered_map<std::string_view, std::uint32_t> gpu_index;
  for (std::size_t g = 0; g < gpus.size(); ++g) gpu_index.emplace(gpus[g], static_cast<std::uint32_t>(g));
  for (const std::string& device : graph.devices()) {
    const auto found = gpu_index.find(device);
    gpu_of_device.push_back(found == gpu_index.end() ? std::nullopt : std::optional(found->second));
  }
  return [layout, gpu_of_device = std::move(gpu_of_device)](DeviceId src, DeviceId dst) {
    const std::optional<std::uint32_t> a = src < gpu_of_device.size() ? gpu_of_device[src] : std::nullopt;
    const std::optional<std::uint32_t> b = dst < gpu_of_device.size() ? gpu_of_device[dst] : std::nullopt;
    return a && b ? static_cast<double>(layout->gpu_route_length(*a, *b)) : 0.0;
  };
}

WorkloadSize count_task_graph(const TaskGraph& graph, const DeviceTopology& topology,
                              std::optional<CollectiveFidelity> fidelity,
                              const std::vector<CalibratedDevice>& calibrated, const RouteLinksFn& links) {
  WorkloadSize size;
  // A step-level collective's mean links a flow, by the shape its pairs depend on (kind, algorithm, root,
  // copies, group): a data-parallel run repeats one group in every bucket and iteration.
  using Shape = std::tuple<CollectiveKind, std::string, DeviceId, std::uint32_t, std::vector<DeviceId>>;
  std::map<Shape, double> step_links;
  const auto unit = [](DeviceId, DeviceId) { return RouteCost{Seconds(0), BytesPerSecond(1)}; };
  const auto mean_step_links = [&](const Collective& collective, const SourceLocation& where) {
    const std::string algorithm =
        collective.algorithm.empty() ? default_collective_algorithm(collective, topology) : collective.algorithm.str();
    auto [found, added] = step_links.try_emplace(
        Shape{collective.kind, algorithm, collective.root, collective.copies, collective.group}, 0.0);
    if (!added) return found->second;
    std::vector<std::pair<DeviceId, DeviceId>> pairs;
    if (builtin_collective_algorithms().at(algorithm, where).value->supports_flow(collective.kind)) {
      for (const auto& phase : plan_collective_flows(collective, topology, unit, where).phases)
        for (const CollectiveFlow& flow : phase) pairs.emplace_back(flow.src, flow.dst);
    } else {
      for (const CollectiveStep& step : expand_collective(collective, topology, where).steps)
        pairs.emplace_back(step.src, step.dst);
    }
    double sum = 0;
    for (const auto& [src, dst] : pairs) sum += links(src, dst);
    return found->second = pairs.empty() ? 0.0 : sum / static_cast<double>(pairs.size());
  };
  const std::size_t devices = graph.devices().size();
  std::vector<std::vector<bool>> stream_used(graph.streams().size(), std::vector<bool>(devices, false));
  const auto use = [&](DeviceId device, StreamId stream) {
    if (stream < stream_used.size() && device < devices) stream_used[stream][device] = true;
  };
  const auto of = [&](DeviceId device) { return device < calibrated.size() ? calibrated[device] : CalibratedDevice{}; };
  std::vector<bool> host_used(devices, false);  // the host stream of a launch-queued device
  for (TaskId id = 0; id < graph.tasks().size(); ++id) {
    const Task& task = graph.task(id);
    size.tasks += 1;
    if (const auto* compute = std::get_if<Compute>(&task.op)) {
      size.operations += 1;
      use(compute->device, task.stream);
      if (of(compute->device).launch_queue) {
        // The host's issue of the first kernel; with more kernels, their issue and a barrier joining
        // it to the GPU part.
        size.operations += compute->launches > 1 ? 3 : 1;
        host_used[compute->device] = true;
      }
    } else if (const auto* transfer = std::get_if<Transfer>(&task.op)) {
      size.operations += 1;
      size.flows += 1;
      use(transfer->src, task.stream);
      if (links) size.flow_links += links(transfer->src, transfer->dst);
      if (of(transfer->src).call_latency || of(transfer->dst).call_latency) size.operations += 1;  // the call's delay
    } else if (const auto& collective = std::get<Collective>(task.op); collective.mirrored || collective.alone) {
      // One delay on the first member (models/exec/lowering.cpp lower_collective); no flow.
      size.operations += 1;
      use(collective.group.front(), task.stream);
    } else {
      const auto p = static_cast<double>(collective.group.size());
      double flows = 0;
      double ops = 0;
      if (effective_collective_fidelity(collective, fidelity, topology) == CollectiveFidelity::step) {
        flows = ops = static_cast<double>(count_collective_steps(collective, topology, graph.origin(id)));
        if (links && flows > 0) size.flow_links += flows * mean_step_links(collective, graph.origin(id));
      } else {
        // The plan's shape does not depend on the route costs (models/exec/lowering.cpp lower_collective):
        // per phase one `flows` op per sender and a phase barrier.
        for (const auto& phase : plan_collective_flows(collective, topology, unit, graph.origin(id)).phases) {
          std::vector<DeviceId> senders;
          for (const CollectiveFlow& flow : phase) {
            senders.push_back(flow.src);
            if (links) size.flow_links += links(flow.src, flow.dst);
          }
          std::sort(senders.begin(), senders.end());
          flows += static_cast<double>(phase.size());
          ops += static_cast<double>(std::unique(senders.begin(), senders.end()) - senders.begin()) + 1;
        }
      }
      size.operations += ops + 2 + p;  // the steps (or flow ops), a start and an end barrier, a fence per member
      if (std::any_of(collective.group.begin(), collective.group.end(),
                      [&](DeviceId member) { return of(member).call_latency; }))
        size.operations += p;  // the calls' delay at the head of each member's queue
      size.flows += flows;
      size.largest_expansion = std::max(size.largest_expansion, flows);
      for (DeviceId member : collective.group) use(member, task.stream);
    }
  }
  for (const auto& used : stream_used) size.streams += static_cast<double>(std::count(used.begin(), used.end(), true));
  size.streams += static_cast<double>(std::count(host_used.begin(), host_used.end(), true));
  return size;
}

namespace {

// The run's memory in its two phases, beyond what the process holds already: while it simulates
// (the executor's operations and actors, and the flows the trace keeps) and while it writes reports
// (the executor is gone by then; the kept flows and the trace's sorted rate changes). What lives
// through both (the graph, its dates, the platform) is `common`.
struct Phases {
  double common = 0;
  double simulation = 0;
  double reports = 0;
};

// The TaskGraph as the model holds it: its records in a grown vector and their dependency blocks.
double graph_bytes(const WorkloadSize& size) {
  return (1.5 * static_cast<double>(sizeof(Task)) + kPerTaskDeps) * size.tasks;
}

Phases phases(const WorkloadSize& size, const Scenario& scenario) {
  Phases p;
  p.common =
      kPerGpu * static_cast<double>(scenario.cluster.gpu_count()) + graph_bytes(size) + kPerTaskDates * size.tasks;
  p.simulation =
      kPerStreamActor * size.streams + kPerOperation * size.operations + kPerExpansionStep * size.largest_expansion;
  if (scenario.outputs.trace) {
    p.simulation += kTraceKeptFlow * size.flows;
    p.reports += kTraceKeptFlow * size.flows + kTraceRateChangesPerLink * size.flow_links;
  }
  return p;
}

// What the process holds now without the run's TaskGraph: its resident memory, less the graph's
// modelled bytes when `graph_resident` (built already, so the resident memory holds it).
Bytes resident_baseline(const WorkloadSize& size, bool graph_resident) {
  return Bytes(resident_now() - (graph_resident ? graph_bytes(size) : 0));
}

}  // namespace

Bytes estimate_memory(const WorkloadSize& size, const Scenario& scenario, Bytes baseline) {
  const Phases p = phases(size, scenario);
  return Bytes(kMargin * (baseline.value() + p.common + std::max(p.simulation, p.reports)));
}

ResourceEstimate estimate_resources(const WorkloadSize& size, const Scenario& scenario) {
  const Bytes baseline = resident_baseline(size, false);
  return ResourceEstimate{size, estimate_memory(size, scenario, baseline), baseline, false};
}

ResourceEstimate check_graph_resources(const Scenario& scenario, const TaskGraph& graph) {
  const WorkloadSize size = size_of(scenario, graph);
  const Bytes baseline = resident_baseline(size, true);
  const ResourceEstimate estimate{size, estimate_memory(size, scenario, baseline), baseline, true};
  check_resource_estimate(scenario, estimate);
  return estimate;
}

Bytes memory_budget(const RunSettings& run) {
  if (run.memory_budget) return *run.memory_budget;
  // Half: a sweep runs a point per core, and the machine has other work.
  return physical_memory() * 0.5;
}

Bytes memory_budget(const Scenario& scenario) { return memory_budget(scenario.run); }

std::string over_memory_budget(const RunSettings& run) {
  return fmt::format("over the budget of {} (run.memory_budget{}); nothing was simulated",
                     format_bytes(memory_budget(run)), run.memory_budget ? "" : ", default: half of physical memory");
}

void check_resource_estimate(const Scenario& scenario, const ResourceEstimate& found) {
  const ResourceEstimate* estimate = &found;
  const SourceLocation where = scenario.run.memory_budget ? scenario.run.memory_budget_where : scenario.workload->where;
  if (rlimit limit{}; ::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    // The stacks are mapped while the run simulates, and unmapped before the reports are built.
    const double stacks = kActorStack * estimate->size.streams;
    const Phases p = phases(estimate->size, scenario);
    // A graph built already is mapped: counted in the address space and in `p.common`, once.
    const double built = estimate->graph_resident ? graph_bytes(estimate->size) : 0;
    const double address_space = process_memory(0) - built + p.common + std::max(p.simulation + stacks, p.reports);
    if (address_space > static_cast<double>(limit.rlim_cur))
      throw InputError(
          where, fmt::format("the run would map about {} of address space ({} of it the stacks of its {} "
                             "SimGrid actors, one per GPU stream), over this process's limit of {} "
                             "(ulimit -v); nothing was simulated. Raise the limit, or use fewer GPUs",
                             format_bytes(Bytes(address_space)), format_bytes(Bytes(stacks)),
                             count(estimate->size.streams), format_bytes(Bytes(static_cast<double>(limit.rlim_cur)))));
  }
  const Bytes budget = memory_budget(scenario);
  if (estimate->memory.value() <= budget.value()) return;

  const WorkloadKind& kind = *builtin_workload_kinds().at(scenario.workload_kind).value;
  const auto fits = [&](const Bytes& memory) { return memory.value() <= budget.value() ? "fits" : "still over"; };
  std::string message = fmt::format(
      "the run would need about {} of memory ({} operations, {} flows, {} tasks{}), {}. What would change it:",
      format_bytes(estimate->memory), count(estimate->size.operations), count(estimate->size.flows),
      count(estimate->size.tasks), estimate->size.basis.empty() ? "" : ", " + estimate->size.basis,
      over_memory_budget(scenario.run));

  if (scenario.run.collective_fidelity != CollectiveFidelity::flow) {
    Scenario flow = scenario;
    flow.run.collective_fidelity = CollectiveFidelity::flow;
    if (const auto size = kind.size(flow)) {
      const Bytes memory = estimate_memory(*size, flow, estimate->baseline);
      message += fmt::format(
          "\n  run.collective_fidelity: flow (one flow per ring hop and phase, docs/collectives.md) — about {}, {}",
          format_bytes(memory), fits(memory));
    }
  }
  // tasks.csv is written as it is formatted and holds nothing: only the trace's kept flows count.
  if (scenario.outputs.trace) {
    Scenario quiet = scenario;
    quiet.outputs.trace = false;
    const Bytes memory = estimate_memory(estimate->size, quiet, estimate->baseline);
    message += fmt::format("\n  outputs.trace: false — about {}, {}", format_bytes(memory), fits(memory));
  }
  if (scenario.run.iterations > 1) {
    // Everything but the first iteration's share scales with iterations. Where one iteration lowers
    // the same tasks, run.iterations repeats nothing (a recorded graph, jobs that count their own):
    // no suggestion.
    Scenario one = scenario;
    one.run.iterations = 1;
    if (const auto size = kind.size(one); size && size->tasks != estimate->size.tasks) {
      const double first = estimate_memory(*size, one, estimate->baseline).value();
      const double per_iteration = (estimate->memory.value() - first) / (scenario.run.iterations - 1);
      const double more = per_iteration > 0 ? std::floor((budget.value() - first) / per_iteration) : 0;
      if (first > budget.value())
        message += fmt::format("\n  run.iterations: even 1 iteration needs about {}", format_bytes(Bytes(first)));
      else
        message += fmt::format("\n  run.iterations: {} — fits", 1 + static_cast<int>(std::max(0.0, more)));
    }
  }
  message +=
      fmt::format("\n  or raise run.memory_budget above {} if the machine has it", format_bytes(estimate->memory));
  throw InputError(where, message);
}

}  // namespace dnnsim
