// The communication of one pipeline step (a chunk's forward, recompute or backward on the GPUs of a
// plan device) besides its sends, as the lowering places it (pipeline_lowering.hpp): Megatron's
// tensor-parallel collectives, and the LLM parallelisms of models/dnn/llm_parallel.hpp — the expert
// all-to-alls, the context-parallel ring, the FSDP gathers and reduce-scatters.
//
// Placement, per step and lowered GPU:
//  - serial: after the step's compute on its compute stream; the step's consumers wait for the last
//    (the tensor-parallel collectives of Megatron-LM, synchronous; the expert all-to-alls of the
//    alltoall dispatcher between the router and the experts; the CP all-gathers and reduce-scatters
//    or all-to-alls of cp_comm_type all_gather and a2a, which the attention core waits for);
//  - overlapped: on the GPU's "overlap" stream, starting when the step's compute can start (the same
//    inputs and the compute stream's previous task), the step's consumers waiting for both: FSDP's
//    prefetched gathers, and the tensor-parallel collectives under TE's userbuffer overlap or the
//    all-to-alls under overlap_moe_expert_parallel_comm when the recipe enables them. A whole step's overlapped
//    communication against its whole compute is the coarse view of per-layer overlap: what one layer's
//    exchange exposes before the first kernel it can hide under is not counted.
//  - the context-parallel ring (context_ring, cp_comm_type p2p): per phase of llm_parallel.hpp's ring, the exchange on
//    the GPU's "context" stream beside the compute of the attention it overlaps, split off the step's
//    compute: the step computes its other layers (and the forward's last ring step), then each phase
//    lasts max(its exchange, its attention), the next phase waiting for both — Σ over a layer's steps
//    of max(exchange, attention) as TE runs them, summed over the step's identical attention layers.
// The tensor-parallel collectives run on their group's links as flows (mirrored with
// `mirror_ranks`, as before); the LLM exchanges are mirrored collectives (Collective::mirrored): each
// lowered GPU spends its group's collective alone on its links, with the calibrated per-call latency
// of its calls — exact for the symmetric groups of balanced routing and equal chunks when nothing
// else shares those links, and what keeps 64-way all-to-alls off the flow solver.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/program/task_graph.hpp"
#include "planners/common/layer_cost.hpp"
#include "planners/schedules/pipeline_lowering.hpp"

namespace dnnsim {

// The GPUs around one GPU of a stage (llm_parallel.hpp's rank order), each group starting with the
// GPU itself (what a mirrored collective simulates).
struct StepGroups {
  std::vector<DeviceId> tensor;       // its tensor-parallel group, in rank order (not rotated)
  std::vector<DeviceId> context;      // its context-parallel ring (a2a+p2p: its p2p ring)
  // Its group for the CP collectives (context_exchanges): all_gather and a2a the whole ring above,
  // a2a+p2p its a2a group.
  std::vector<DeviceId> context_collectives;
  std::vector<DeviceId> expert;       // its expert-parallel group
  std::vector<DeviceId> expert_data;  // its expert-data-parallel group (the same experts' replicas)
  std::vector<DeviceId> sharding;     // its FSDP group: the data-parallel × context ranks of its tensor rank
};
[[nodiscard]] StepGroups step_groups(const PipelineWorkload& workload, const PipelineStage& stage, std::size_t replica,
                                     int rank);

struct StepCollective {
  Collective collective;
  bool overlapped = false;
  std::string what;  // "tp all-gather", "ep all-to-all", "fsdp all-gather", …
  // Waits for the step's CP ring too: a2a+p2p's all-to-alls bracket the ring (Q, K, V before it, O
  // after; all four placed after it here, serial either way).
  bool after_ring = false;
  // FSDP's add of the reduce-scattered shard into the rank's sharded gradients, which the collective's
  // stream runs after it; the step's ends then hold it in the collective's place.
  std::optional<Compute> accumulation;
};

// The collectives of one step of `layers` for `samples` sequences on the GPU whose groups are `groups`
// (rank `rank` of its plan device): tensor-parallel ones (`rank_in_tensor_group == 0` only, one task
// for the group) and the LLM exchanges other than the CP ring (context_ring): with cp_comm_type
// all_gather or a2a, the attention layers' context_exchanges. `pass`: forward (with
// `recompute`, the re-run forward, which repeats the forward's tensor-parallel collectives and expert
// exchanges but no FSDP gather or embedding reduction) or backward (whose attention cores that selective
// recomputation re-runs, Layer::forward_in_backward, exchange their forward's context_exchanges first).
[[nodiscard]] std::vector<StepCollective> step_collectives(const PipelineWorkload& workload, const StepGroups& groups,
                                                           int rank_in_tensor_group, LayerRange layers, int samples,
                                                           Pass pass, bool recompute);

// One phase of the step's CP ring (llm_parallel.hpp's RingPhase, over the step's attention layers): the
// exchange (an all-gather's ring of the phase's bytes, mirrored) and the attention compute it overlaps.
// A backward whose cores selective recomputation re-runs (Layer::forward_in_backward) starts with their
// forward ring's phases, beside their re-run forward attention, as TE re-runs its forward function.
struct RingExchange {
  Collective exchange;
  Seconds attention{0};
};
// The CP ring of one step of `layers` on the GPU whose groups are `groups`, its attention timed on
// `device` (none: without layer times, nothing overlaps the exchanges). Empty without CP or attention.
[[nodiscard]] std::vector<RingExchange> context_ring(const PipelineWorkload& workload, const StepGroups& groups,
                                                     LayerRange layers, const ClusterDevice* device, int samples,
                                                     Pass pass);
// The attention time the ring's phases take out of the step's compute on `device` (the sum of
// context_ring's `attention`): all of it backward, (CP − 1)/CP forward.
[[nodiscard]] Seconds ring_attention_overlapped(const PipelineWorkload& workload, LayerRange layers,
                                                const ClusterDevice& device, int samples, Pass pass);

// Whether step_collectives can return any collective for `workload` (tensor, expert or context
// parallelism, or FSDP, on a transformer): without, it returns none for every rank.
[[nodiscard]] bool has_step_collectives(const PipelineWorkload& workload);

// What the lowering keeps to place a step's overlapped collectives: each one's companion compute,
// whose inputs (pipeline transfers, added after pass 1) it must wait for too.
using Companions = std::unordered_map<TaskId, std::vector<TaskId>>;

// Adds the step's collectives (step_collectives of each lowered rank) after `computes`, the step's
// compute tasks, one per lowered rank of replica `replica` of `stage`; `before[r]`: what rank r's
// previous step ended with (empty for its first). Returns per rank what the step ends with: its serial
// tail first (the compute or its last serial collective), then its overlapped collectives.
[[nodiscard]] std::vector<std::vector<TaskId>> add_step_collectives(
    TaskGraph& graph, const PipelineWorkload& workload, const PipelineStage& stage, std::size_t replica,
    const std::vector<TaskId>& computes, const std::vector<std::vector<TaskId>>& before, Companions& companions,
    LayerRange layers, int samples, Pass pass, bool recompute, const std::string& label, std::uint32_t iteration);

// The memory-bound merges of one attention core's CP ring in one pass on `device`
// (ring_attention_corrections), as the kernels they are; zero without a ring. step_layers_time adds them
// after each core, outside the attention its ring phases overlap.
[[nodiscard]] Seconds ring_corrections_time(const PipelineWorkload& workload, const ClusterDevice& device, int samples,
                                            bool backward);

// The step's layers' time on `device` with the precision recipe: each layer its own kernel
// (layer_time) in the dtype the recipe gives it, plus its scaling kernels' traffic.
[[nodiscard]] Seconds step_layers_time(const PipelineWorkload& workload, LayerRange layers, const ClusterDevice& device,
                                       int samples, Pass pass);

// The expert parameters' gradient all-reduce of one chunk over `groups.expert_data` (mirrored), when
// that group has more than one member: expert parallelism leaves the experts' gradients to it
// instead of the data-parallel replicas.
[[nodiscard]] std::optional<Collective> expert_gradient_all_reduce(const PipelineWorkload& workload,
                                                                   const StepGroups& groups, LayerRange layers);

}  // namespace dnnsim
