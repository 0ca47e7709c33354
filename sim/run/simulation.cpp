#include "sim/run/simulation.hpp"

#include <fmt/format.h>
#include <malloc.h>
#include <signal.h>
#include <unistd.h>
#include <xbt/log.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <iostream>
#include <optional>
#include <simgrid/s4u.hpp>
#include <string_view>
#include <unordered_map>

#include "sim/exec/executor.hpp"
#include "sim/exec/observers.hpp"
#include "sim/platform/actors.hpp"
#include "sim/platform/platform.hpp"
#include "sim/run/progress.hpp"
#include "sim/run/resource_guard.hpp"

namespace sg4 = simgrid::s4u;

namespace dnnsim {

TaskGraph build_workload(const Scenario& scenario) {
  std::optional<TaskGraph> graph = builtin_workload_kinds().at(scenario.workload_kind).value->lower(scenario);
  if (!graph)
    throw InputError(
        scenario.workload->where,
        fmt::format("a {} workload is not one TaskGraph: it drives the simulation itself", scenario.workload_kind));
  return std::move(*graph);
}

std::unique_ptr<sg4::Engine> create_engine() {
  // SimGrid's informational logs would mix with our output; errors still show.
  xbt_log_control_set("root.thresh:critical");
  int argc = 1;
  char program[] = "dnnsim";
  char* argv[] = {program, nullptr};
  // SimGrid's engine installs a SIGINT handler that exits the process (status 1, no reports); the
  // disposition from before stays instead: an InterruptGuard's, which stops the run and writes what
  // was simulated (docs/reports.md, "Progress and interruption"), or the default.
  struct sigaction before {};
  ::sigaction(SIGINT, nullptr, &before);
  auto engine = std::make_unique<sg4::Engine>(&argc, argv);
  ::sigaction(SIGINT, &before, nullptr);
  // CM02 without cross-traffic: a flow alone on a path gets exactly latency + size/bandwidth
  // (LV08's 0.97 bandwidth factor and 5% reverse traffic model TCP over Ethernet, not NVLink or
  // NCCL over InfiniBand). TCP-gamma 0 removes the TCP window bound on long-latency routes.
  engine->set_config("network/model:CM02");
  engine->set_config("network/crosstraffic:0");
  engine->set_config("network/TCP-gamma:0");
  // No guard page below each actor's stack: it is a second memory mapping per actor, and Linux
  // allows 65,530 per process (vm.max_map_count), so a 16k-GPU run (two or three stream actors per
  // GPU) aborted in SimGrid ("Failed to protect stack"). dnnsim's actors run loops, not recursion.
  // Without a guard SimGrid callocs the stack; a fixed mmap threshold keeps every stack a fresh
  // mapping whose pages are touched only as the actor uses them (glibc's dynamic threshold rises
  // when the first stacks are freed, and later 8 MiB stacks then came from the heap, zeroed: 3×
  // the resident memory at 1,024 GPUs). This is for glibc's malloc (the Python module, sanitized
  // builds); the release CLI links jemalloc, whose large blocks stay untouched until used anyway.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  engine->set_config("contexts/guard-size:0");
  return engine;
}

SimulationResult simulate(const Scenario& scenario, TaskGraph graph, SimulationOptions options) {
  // The guard on the graph as given (lowered once); a controlled run's graph grows, and its kind
  // checks the whole of it (check_graph_resources).
  std::optional<ResourceEstimate> estimate;
  if (!options.controller) estimate = check_graph_resources(scenario, graph);
  const auto engine = create_engine();

  SimulationResult result;
  // Host copies (Transfer::host) reach their node's CPU: its host exists only when some task needs it.
  const bool host_copies = std::any_of(graph.tasks().begin(), graph.tasks().end(), [](const Task& task) {
    const auto* transfer = std::get_if<Transfer>(&task.op);
    return transfer != nullptr && transfer->host != HostCopy::none;
  });
  PlatformOptions platform_options;
  if (host_copies) platform_options.cpu_hosts.assign(scenario.cluster.nodes.size(), {CpuHostSpec{}});
  platform_options.stop = stop_flag(options);
  Platform platform = build_platform(scenario, platform_options);
  result.gpu_names = scenario.cluster.gpu_names();

  // The graph's devices are GPU names; bind each to its host.
  std::vector<DeviceBinding> bindings;
  std::vector<std::uint32_t> node_of_device;
  std::vector<bool> own_nic;
  std::vector<std::uint32_t> gpu_of_device;
  const std::vector<std::uint32_t> node_of_gpu = scenario.cluster.node_of_gpu();
  // By name, not by a scan per device: 16,384 GPUs would be 134 M string comparisons.
  std::unordered_map<std::string_view, std::size_t> gpu_index;
  for (std::size_t g = 0; g < result.gpu_names.size(); ++g) gpu_index.emplace(result.gpu_names[g], g);
  for (const std::string& device : graph.devices()) {
    const auto found = gpu_index.find(device);
    const std::size_t gpu = found == gpu_index.end() ? result.gpu_names.size() : found->second;
    bindings.push_back(DeviceBinding{platform.gpus[gpu], platform.gpu_specs[gpu], platform.compute_efficiency[gpu],
                                     platform.calibration[gpu],
                                     host_copies ? platform.cpus.at(node_of_gpu[gpu]).front() : nullptr});
    node_of_device.push_back(node_of_gpu[gpu]);
    own_nic.push_back(scenario.cluster.type_of(scenario.cluster.nodes[node_of_gpu[gpu]]).nic_per_gpu);
    gpu_of_device.push_back(static_cast<std::uint32_t>(gpu));
    result.gpu_models.push_back(platform.gpu_specs[gpu]->name);
    result.memory_capacity_bytes.push_back(platform.gpu_specs[gpu]->memory.value());
  }

  // Before the executor: a signal during lowering already asks the run to stop at its first operation.
  std::optional<InterruptGuard> interrupt_guard;
  if (options.progress) interrupt_guard.emplace();
  ExecutorOptions executor_options;
  executor_options.stop = stop_flag(options);
  executor_options.collective_fidelity = scenario.run.collective_fidelity;
  executor_options.growable = static_cast<bool>(options.controller);
  for (const FailureWindow& w : scenario.network.failures)
    if (!w.is_host) executor_options.link_failures.emplace_back(w.from.value(), w.to.value());
  const DeviceTopology topology{std::move(node_of_device), std::move(own_nic)};
  Executor executor(graph, std::move(bindings), topology, std::move(executor_options));
  if (!options.controller) graph.drop_dependencies();  // lowered: nothing reads them again
  TimelineRecorder timeline(graph.tasks().size());
  MemoryTracker memory(graph, graph.devices().size());
  LinkTrafficRecorder traffic(platform.layout, graph, topology, std::move(gpu_of_device), options.keep_flows);
  executor.add_observer(&timeline);
  executor.add_observer(&memory);
  executor.add_observer(&traffic);
  std::optional<ProgressObserver> progress;
  if (options.progress) {
    progress.emplace(*options.progress, options.progress == &std::cerr && ::isatty(STDERR_FILENO) != 0,
                     graph.tasks().size(), executor);
    executor.add_observer(&*progress);
  }
  std::optional<IterationBarrier> iterations;
  if (options.controller) {
    iterations.emplace(graph);
    executor.add_observer(&*iterations);
  }
  executor.start();
  // An error inside an actor cannot unwind through the engine: it is kept and rethrown after run().
  std::exception_ptr controller_error;
  if (options.controller)
    start_actor("iteration-controller", platform.gpus.front(), ActorStack::deep, [&]() {
      try {
        for (std::uint32_t finished = 0;; ++finished) {
          iterations->wait_until_iteration_done(finished);
          const auto first = static_cast<TaskId>(graph.tasks().size());
          if (!options.controller(finished, graph, timeline.start(), timeline.end())) break;
          executor.append(graph, first);
        }
      } catch (...) {
        controller_error = std::current_exception();
      }
      executor.close();  // the idle stream actors exit; without it the run would end as a deadlock
    });
  start_background_flows(scenario, platform);
  engine->run();
  if (progress) progress->finish();
  executor.rethrow_failure();
  if (controller_error) std::rethrow_exception(controller_error);

  result.makespan_s = 0;
  for (double end : timeline.end())
    if (end == end) result.makespan_s = std::max(result.makespan_s, end);
  result.task_start = timeline.take_start();
  result.task_end = timeline.take_end();
  result.peak_memory_bytes = memory.peak_bytes();
  result.link_bytes_up = traffic.bytes_up();
  result.link_bytes_down = traffic.bytes_down();
  result.flows = traffic.take_flows();
  result.operations = executor.operation_count();
  result.flow_count = executor.flow_count();
  result.transfer_retries = executor.retried_transfers();
  result.unfinished_tasks = graph.tasks().size() - executor.finished_task_count();
  result.interrupted = executor.interrupted();
  if (estimate) result.estimated_memory_bytes = estimate->memory.value();
  result.layout = std::move(platform.layout);
  result.graph = std::move(graph);
  return result;
}

const std::atomic<bool>* stop_flag(const SimulationOptions& options) {
  return options.progress != nullptr ? &InterruptGuard::flag() : nullptr;
}

SimulationResult engine_driven_result(const Scenario& scenario, std::shared_ptr<const WorkloadResult> workload_result,
                                      double makespan_s, std::size_t operations, std::size_t flow_count,
                                      bool interrupted, std::string stopped) {
  SimulationResult result;
  result.workload_result = std::move(workload_result);
  result.gpu_names = scenario.cluster.gpu_names();
  result.makespan_s = makespan_s;
  result.operations = operations;
  result.flow_count = flow_count;
  result.interrupted = interrupted;
  result.stopped = std::move(stopped);
  return result;
}

}  // namespace dnnsim

namespace dnnsim {

SimulationResult run_scenario(const Scenario& scenario, SimulationOptions options) {
  // From before the lowering, which can take long: a Ctrl-C then stops the simulation at its first
  // operation and the reports are written, instead of the process ending with none.
  std::optional<InterruptGuard> interrupt_guard;
  if (options.progress) interrupt_guard.emplace();
  const auto wall_start = std::chrono::steady_clock::now();
  SimulationResult result = builtin_workload_kinds().at(scenario.workload_kind).value->run(scenario, options);
  result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace dnnsim
