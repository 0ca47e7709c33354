// Ada-Grouper-like adaptive group size for kFkB (Wang et al., "Ada-Grouper: Accelerating Pipeline
// Parallelism in Preempted Network by Adaptive Group-Scheduling", arXiv:2303.01675). The paper's
// text was not available, only its abstract: kFkB runs k forwards then k backwards, and the
// scheduler "regularly adjusts" k as the preempted network changes, under the memory limit. What
// follows is therefore the specification of papers-parallelism.md §3.2 ("-like"), not the paper's
// algorithm:
//  - after each iteration, measure per-stage forward/backward times and per-boundary activation and
//    gradient transfer times (observe_iteration, from the executor's task start/end times);
//  - predict the next iteration's time for every candidate k with the pipeline estimator
//    (pipeline_estimator.hpp) on those times;
//  - keep the candidates whose peak memory fits, W_i + min(k(p−i), M)·A_i ≤ capacity on every device
//    (kfkb_peak_memory), and pick the fastest; ties (within 1e-9 relative) go to the smaller k, which
//    holds less memory.
//
// How the simulation drives it (one iteration lowered at a time, pipeline_lowering.hpp):
//   auto demand = pipeline_memory_demand(workload, graph.devices().size());
//   auto fits = [&](int k) { return fits_capacity(kfkb_peak_memory(demand, shape, k), capacity); };
//   LoweredIteration it = lower_pipeline_iteration(graph, workload, *kfkb(first k), 0);
//   loop: run until it's tasks end; PipelineTimings t = observe_iteration(it, task_start, task_end);
//         GroupChoice choice = choose_group_size(t, shape, candidates, fits);
//         it = lower_pipeline_iteration(graph, workload, *kfkb(choice.group), next iteration);
#pragma once

#include <functional>
#include <vector>

#include "models/common/units.hpp"
#include "planners/schedules/pipeline_estimator.hpp"
#include "planners/schedules/pipeline_lowering.hpp"

namespace dnnsim {

// Per-virtual-stage and per-boundary mean times of one lowered iteration, from the measured start
// and end of every task (indexed by TaskId, in seconds). For each micro-batch the slowest replica
// (or split-concat piece) counts, since it gates the next stage; a recomputation counts as part of
// its backward (a backward split into gradient buckets runs from its first piece's start to its last
// piece's end); a stage's tail is how long its last all-reduce ends after its last step (the part the
// overlapped backward did not hide, 0 when it hid all) plus its slowest optimizer step.
[[nodiscard]] PipelineTimings observe_iteration(const LoweredIteration& iteration,
                                                const std::vector<double>& task_start,
                                                const std::vector<double>& task_end);

struct GroupPrediction {
  int group = 1;
  Seconds iteration{0};  // predicted by the estimator
  bool fits = true;      // peak memory within capacity
};

struct GroupChoice {
  int group = 1;                             // the chosen k
  bool any_fits = true;                      // false: no candidate fits; `group` is then the smallest candidate
  std::vector<GroupPrediction> predictions;  // every candidate, in the order given
};

// The best group size for the next iteration among `candidates` (empty: 1..M), given the times
// observed in the last one (a one-chunk pipeline: timings.forward.size() == shape.stages).
[[nodiscard]] GroupChoice choose_group_size(const PipelineTimings& observed, const PipelineShape& shape,
                                            std::vector<int> candidates, const std::function<bool(int group)>& fits);

// What each device holds, as the lowering allocates it: its stage's weights, gradients and optimizer
// state, and the activations of one micro-batch (its replica share). Devices outside the plan: stage −1, zeros.
struct DeviceMemoryDemand {
  int stage = -1;
  Bytes model_states{0};
  Bytes activations_per_micro_batch{0};
};
[[nodiscard]] std::vector<DeviceMemoryDemand> pipeline_memory_demand(const PipelineWorkload& workload,
                                                                     std::size_t device_count);

// Peak bytes of each device under kFkB with group `group`: model states + min(k(p−i), M) micro-batches.
[[nodiscard]] std::vector<Bytes> kfkb_peak_memory(const std::vector<DeviceMemoryDemand>& demand,
                                                  const PipelineShape& shape, int group);

// Whether every device's peak is within its capacity (equal fits). Sizes must match.
[[nodiscard]] bool fits_capacity(const std::vector<Bytes>& peak, const std::vector<Bytes>& capacity);

}  // namespace dnnsim
