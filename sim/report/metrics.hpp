// The figures Megatron-LM users read, computed from a finished run (docs/reports.md defines each):
//
//   model FLOP/s per GPU  = model FLOPs / (makespan × GPUs)
//     (Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
//     Megatron-LM", SC'21 §5.1: "achieved teraFLOP/s per GPU");
//   MFU = model FLOPs / (makespan × Σ_devices peak FLOP/s)
//     (Chowdhery et al., "PaLM", 2022, Appendix B: model FLOPs utilization);
//   HFU = hardware FLOPs / (makespan × Σ_devices peak FLOP/s), hardware FLOPs = model FLOPs plus the
//     FLOPs of recomputed forward passes (Korthikanti et al., "Reducing Activation Recomputation in
//     Large Transformer Models", MLSys'23 §6: HFU counts the recomputation, MFU does not).
// Model FLOPs are the FLOPs of the task graph's compute tasks that ran (a mirrored device counted
// with its source's, mirror_sources), except recompute and optimizer tasks (the optimizer step is
// not a model FLOP in Megatron's or PaLM's count); each device's peak is its GPU's dense peak for the
// dtype carrying most of its FLOPs.
//
// Memory at peak: the measured peak of a device split into model states (weights, gradients,
// optimizer state: what the workload allocates once and keeps, WorkloadKind::model_state_memory),
// activations (the rest of the peak for workloads built from a layer model) and other (a task-graph
// file's allocations carry no category).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/cost/memory_model.hpp"
#include "sim/run/simulation.hpp"
#include "sim/scenario/scenario.hpp"

namespace dnnsim {

struct DeviceFlops {
  double model_flops = 0;     // over the whole run
  double hardware_flops = 0;  // model FLOPs + recomputation
  double peak_flops_per_s = 0;
};

struct FlopMetrics {
  std::vector<DeviceFlops> devices;  // by graph device
  double model_flops = 0;            // sums over devices
  double hardware_flops = 0;
  double peak_flops_per_s = 0;
  // The ratios of the header; 0 when nothing ran.
  [[nodiscard]] double mfu(double makespan_s) const;
  [[nodiscard]] double hfu(double makespan_s) const;
};

// The graph device whose figures each graph device reports: itself; for a device the graph says
// mirrors another (TaskGraph::mirrors: a data-parallel replica outside the simulated window), that
// device; for a later member of a mirrored collective (Collective::mirrored: a symmetric copy that
// runs no task), the collective's first member; chains followed to a device that ran its tasks.
[[nodiscard]] std::vector<DeviceId> mirror_sources(const TaskGraph& graph);

// The catalog GPU (with the scenario's overrides) of each graph device, from where Cluster::locate_gpus
// found it (an empty spec for a device that is no GPU: a GNN run's CPU host).
[[nodiscard]] std::vector<GpuSpec> gpu_specs_of_devices(const std::vector<std::optional<ClusterGpu>>& located);

// `sources`: mirror_sources(result.graph).
[[nodiscard]] FlopMetrics flop_metrics(const SimulationResult& result, const std::vector<GpuSpec>& gpus,
                                       const std::vector<DeviceId>& sources);

// A device's peak split as the header says: `states` empty → everything is "other".
[[nodiscard]] nlohmann::ordered_json memory_at_peak(double peak_bytes, const MemoryBreakdown* states);

// `dnnsim run --breakdown`: compute and communication time per layer (or stage, or collective) and
// phase, per device and iteration, in the order the workload first runs them. A task's row is its
// label without the pass word in front ("fwd", "bwd", "recompute", "wgrad") and the micro-batch at
// the end (" mb3"), so "fwd layer3" and "bwd layer3" share the row "layer3".
[[nodiscard]] std::string format_time_breakdown(const SimulationResult& result);

// Compresses device names that share figures: {node0/gpu0, …, node1023/gpu0} → "node0–1023/gpu0"
// (a name is prefix + number + "/" + prefix + number); names that do not follow that shape, or do
// not cover a full node × GPU product, give the first name and "…".
[[nodiscard]] std::string compress_device_names(const std::vector<std::string>& names);

}  // namespace dnnsim
