// The 3D planner (`planner: megatron`): tensor × pipeline × data parallelism for a transformer, chosen
// as Narayanan et al. ("Efficient Large-Scale Language Model Training on GPU Clusters Using
// Megatron-LM", SC'21 §3) reason about it: enumerate every (TP t, PP p, DP d, micro-batch size b,
// recomputation) with t · p · d = GPUs, t ≤ GPUs per node (their Takeaway #1: TP inside a node) and t
// dividing the heads and hidden size, b a power of two dividing the global batch's share B/d (the
// paper's own Table 1 runs took b = 1 … 16), recomputation among its option `recompute`, keep
// those whose first stage fits in memory, and rank them by an analytical iteration time:
//   T = (M + (p − 1)/v) · (t_f + t_b + t_r + t_tp + 2v·t_send) + (M − 1)·t_acc + t_dp
// with M = B/(d·b) micro-batches per pipeline, v the schedule's model chunks per stage or, with
// PlanRequest::choose_chunks, each v with whole blocks per chunk (interleaved 1F1B shrinks the bubble
// by v, §2.2.2, and sends v times as often: t_send is one micro-batch's boundary tensor, 2·s·b·h/t
// bytes per rank, over the slowest path between consecutive stages, α + bytes/β, sent forward and
// back once per chunk; p = 1 sends nothing), t_f/t_b/t_r the forward/backward/recomputation (of the
// blocks only, checkpointed_span) time of one micro-batch on one stage (each layer its own kernel, layer_time; under a
// launch model the stage's n kernels of a pass take max(h + G, n·h), issued_time), t_tp the tensor-parallel collectives
// of that micro-batch over the group's ring, one per kind and pass as the lowering runs them (all-reduce 2(t−1)·(α +
// size/(t·β)), all-gather and reduce-scatter half that; full recomputation runs the blocks' forward ones again), t_acc
// the gradient accumulation of every backward but a chunk's first (3 × the gradient bytes of the stage's parameters,
// memory-bound: layer_cost.hpp's gradient_accumulation), and t_dp the data-parallel all-reduce of a stage's gradient
// shard as the simulator's default rule runs it (all_reduce_paths.hpp: a ring, or hierarchical when every node holds
// the same number g > 1 of the replicas; not overlapped, as in Megatron's default; one call per model chunk). Every
// NCCL call — each block's tensor-parallel all-reduce, each send, each chunk's all-reduce — also pays the calibration
// table's per-call latency (CollectiveCalibration::latency, as the executor does). Memory per GPU: model
// states of 1/(t·p) of the parameters (÷ d for the optimizer state with the distributed optimizer),
// plus Korthikanti et al.'s activations per layer × layers per stage × the micro-batches the
// schedule keeps in flight on stage 0 (PlanRequest::in_flight), plus the framework overhead. Sequence
// parallelism is on whenever t > 1 (it only saves memory, at the same bytes on the wire) unless its
// option `sequence_parallel` says false.
// The best plan is returned as a PipelinePlan over tensor-parallel groups (group g = GPUs g·t …
// g·t + t − 1), with the choice and every fitting candidate, best first.
#pragma once

#include <vector>

#include "models/dnn/tensor_parallel.hpp"
#include "planners/parallel/planner.hpp"

namespace dnnsim {

struct MegatronCandidate {
  int tensor = 1;
  int pipeline = 1;
  int data = 1;
  int micro_batch = 1;
  int chunks = 1;                 // v, model chunks per stage
  TensorParallelOptions options;  // degree = tensor; sequence_parallel, recompute
  Bytes memory{0};                // first stage, per GPU
  Seconds predicted{0};
};

struct MegatronSearch {
  std::vector<MegatronCandidate> fitting;  // best first
  std::size_t considered = 0;
  std::string first_problem;  // why the first configuration considered did not fit (when none fits)
};

// `request.model` is the unsharded transformer and `request.cluster` every GPU; request.micro_batches
// is ignored (the search chooses the micro-batch size). `distributed_optimizer` as in the workload.
[[nodiscard]] MegatronSearch search_megatron(const PlanRequest& request, bool distributed_optimizer);

// The Planner interface: the PipelinePlan (over its tensor-parallel groups) of the candidate its
// option `candidate` names (1: the best). Options: `candidate`, `recompute` (the modes it may
// choose: a framework's limits; Megatron-LM of 2021 had no selective recomputation) and
// `sequence_parallel` (false: never, for frameworks without it).
class MegatronPlanner final : public Planner {
 public:
  [[nodiscard]] static OptionSchema options();
  [[nodiscard]] PlanResult plan(const PlanRequest& request) const override;
  [[nodiscard]] bool chooses_tensor_parallel() const override { return true; }
  [[nodiscard]] bool chooses_chunks() const override { return true; }
  [[nodiscard]] bool ranks_configurations() const override { return true; }
  // Megatron-LM's default runs the data-parallel all-reduce after the pipeline, as t_dp prices it.
  [[nodiscard]] bool overlaps_all_reduce() const override { return false; }
  [[nodiscard]] std::string model_problem(const LayerModel& model) const override;
};

}  // namespace dnnsim
