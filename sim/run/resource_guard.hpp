// The resource guard: before anything is lowered into executor operations, the run's memory is
// estimated from its size (the TaskGraph's tasks, collective steps, flows kept for the trace)
// and compared with a budget; a run over budget is refused with the estimate, the budget and what
// would fit (coarser collective fidelity, fewer iterations, reports off) — an InputError, exit 2,
// nothing simulated. A 1,024-GPU step-level all-reduce is 2.1 million flows: without the guard such a
// run takes the machine's memory before saying a word (docs/performance.md, "Resource guard").
//
// The model is linear in the counts: the simulation's coefficients (per operation, stream actor, GPU)
// fitted to measured peak RSS (/usr/bin/time -v) on three runs and checked on six others, the rest
// derived from the data structures that hold one unit (beside the constants in resource_guard.cpp):
// docs/performance.md, "Resource guard", has the fit and the check.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/common/units.hpp"
#include "models/program/collective_algorithms.hpp"
#include "models/program/task_graph.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workloads/workload_kind.hpp"

namespace dnnsim {

struct ResourceEstimate {
  WorkloadSize size;
  Bytes memory{0};  // peak resident memory of the whole process
  // What the process held when the estimate was made, without the run's own TaskGraph (its modelled
  // bytes taken off when it was built already): the changes the guard suggests are estimated from
  // it, so that none counts the run's graph, or memory its own re-lowering left behind, on top of
  // its own graph.
  Bytes baseline{0};
  bool graph_resident = false;  // the graph was built when the estimate was made
};

// The graph's devices on their nodes, as the executor sees them (a device is a GPU name).
[[nodiscard]] DeviceTopology device_topology(const Scenario& scenario, const TaskGraph& graph);

// What a graph device's calibration table adds to its lowering (models/exec/lowering.hpp): a launch
// model (LaunchCalibration) has its host issue the kernels, each compute task with host operations
// on one more stream; a collectives section with a call latency puts a delay before each of its
// sends and at the head of each collective it is in.
struct CalibratedDevice {
  bool launch_queue = false;
  bool call_latency = false;
};
[[nodiscard]] std::vector<CalibratedDevice> calibrated_devices(const Scenario& scenario, const TaskGraph& graph);

// The number of links on the route from one graph device to another (0 from a device to itself).
using RouteLinksFn = std::function<double(DeviceId src, DeviceId dst)>;
// The routes of the scenario's platform (PlatformLayout::gpu_route, as the trace's link counters take
// them) between the graph's devices; a device that is no GPU has none.
[[nodiscard]] RouteLinksFn route_links(const Scenario& scenario, const TaskGraph& graph);

// Counts a lowered graph as the executor would lower it, each collective at its effective fidelity
// (effective_collective_fidelity with `fidelity` as the workload's), without expanding steps, with
// what the devices' calibration adds (`calibrated`, per graph device; empty: none). Given
// `links`, WorkloadSize::flow_links sums it over the flows: exact for transfers and flow-level
// collectives; a step-level collective's steps are given the mean route of its flow plan (the same
// pairs: exact for a ring, whose every round sends once along each hop), or of its steps where it has
// no flow form (an all-to-all, expanded once per group).
// @throw InputError for a collective whose algorithm is unknown or does not support it.
[[nodiscard]] WorkloadSize count_task_graph(const TaskGraph& graph, const DeviceTopology& topology,
                                            std::optional<CollectiveFidelity> fidelity,
                                            const std::vector<CalibratedDevice>& calibrated = {},
                                            const RouteLinksFn& links = {});

// Peak resident memory of a run of this size with the scenario's reports, beyond `baseline` (what
// the process holds without the run's TaskGraph: ResourceEstimate::baseline): its graph, the graph's dates, the
// platform, then the larger of the simulation and the reports.
[[nodiscard]] Bytes estimate_memory(const WorkloadSize& size, const Scenario& scenario, Bytes baseline);
// The same from what the process holds now, the graph not built yet.
[[nodiscard]] ResourceEstimate estimate_resources(const WorkloadSize& size, const Scenario& scenario);

// run.memory_budget, or half of this machine's physical memory.
[[nodiscard]] Bytes memory_budget(const RunSettings& run);
[[nodiscard]] Bytes memory_budget(const Scenario& scenario);
// "over the budget of 12 GiB (run.memory_budget, default: …); nothing was simulated", for a refusal.
[[nodiscard]] std::string over_memory_budget(const RunSettings& run);
// This process's resident memory now (/proc/self/statm).
[[nodiscard]] Bytes resident_memory();

// The guard's check of an estimate against the budget (and, under `ulimit -v`, the address space).
// @throw InputError (at run.memory_budget when given, else at the workload) when the estimate is
// over the budget: the estimate, the budget and each change that would fit (re-sized through
// WorkloadKind::size, estimated from the estimate's baseline: what a run with that change would need).
void check_resource_estimate(const Scenario& scenario, const ResourceEstimate& estimate);

// The check on the graph about to be simulated, lowered once: simulate() applies it to every graph
// it is given whole, and a run whose later iterations are appended applies it to the whole graph
// itself (a pipeline under Ada-Grouper or measured ordering). @throw InputError as check_resource_estimate
ResourceEstimate check_graph_resources(const Scenario& scenario, const TaskGraph& graph);

}  // namespace dnnsim
