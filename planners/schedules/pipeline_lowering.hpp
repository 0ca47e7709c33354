// Lowering of a pipeline plan under a schedule into TaskGraph tasks, one iteration at a time, so that
// fixed schedules build all iterations up front (build_pipeline) and Ada-Grouper's controller can
// re-lower every iteration with a new group size after measuring the previous one:
//
//   TaskGraph graph;  for (gpu : cluster GPUs) graph.add_device(gpu);
//   LoweredIteration it = lower_pipeline_iteration(graph, workload, *schedule, 0);
//   … run it, then observe_iteration(it, …) and choose_group_size(…) (ada_grouper.hpp) …
//   lower_pipeline_iteration(graph, workload, *make_group_schedule(k), 1);
//
// Layout, per device of stage s (conventions of the data-parallel builder, planners/data_parallel):
//  - stream "compute": the stage's steps in the schedule's order, each step one Compute per replica
//    for the whole chunk (layers_compute), Phase::forward / Phase::backward; with re-materialization
//    a "recompute" Compute (Phase::recompute: the forward pass run again, which counts in
//    hardware but not in model FLOPs) just before each backward; then the optimizer step (Phase::optimizer)
//    after the stage's all-reduces. The next iteration's first forward follows it on this stream.
//  - stream "send-next": activation Transfers to the next virtual stage, in forward order, each
//    after the forward that produced it; the receiving forward depends on it.
//  - stream "send-prev": gradient Transfers to the previous virtual stage, after the producing backward.
//  - stream "allreduce": per chunk, the all-reduce of its gradients over the stage's replicas (none
//    for one replica), size parameters × gradient bytes per parameter (models/cost/memory_model.hpp).
//    With `overlap_all_reduce` (the default) it is bucketed and overlapped with the chunk's last
//    backward as PyTorch DDP does (Li et al., VLDB'20; planners/data_parallel's gradient_buckets):
//    gradients accumulate over the micro-batches, so only the last micro-batch's backward can hide
//    the all-reduce; that backward step is lowered as one Compute per bucket (highest layers first,
//    each bucket's layers timed as their own kernel), and each bucket's all-reduce waits for its
//    piece on every replica. The pieces of a step run back to back on the compute stream, the first
//    waits for the incoming gradients, the last sends the outgoing ones and frees the step's
//    activations; a stage's chunks are all-reduced in the order their last backwards run. Without
//    it, one all-reduce per chunk, every one after the stage's last backward step (the flush), in
//    chunk order, as DDP without overlap and Megatron-LM's local DDP run it.
//  - streams "offload-d2h" / "offload-h2d" (an LLM's activation offload, LlmParallelism::offloaded_layers,
//    as Transformer Engine 2.9's AsyncDoubleBufferGroupOffloadHandler runs it: offload_windows in
//    models/dnn/llm_parallel.hpp): each offloaded block's copy to its GPU's host memory and back
//    (Transfer::host, Layer::offloaded_bytes × samples), over the GPU↔host link. A step's compute is
//    split where a copy is issued or waited for: forward, block 0's copy starts after block 0, and
//    after the last block of window i the compute waits for block i's copy and block i + 1's starts;
//    backward, before the last block of window i the compute waits for block i + 1's reload and block
//    i's starts, and before block 0 it waits for block 0's. A copy starts after the compute before its
//    issue and after the previous copy of its stream; the memory stays as offload_activations says.
// An asynchronous schedule (pipedream-async, PipeDream SOSP'19 §3.2–3.3) is lowered as one run
// (lower_pipeline_run): the stage orders cover iterations × M micro-batches with no flush, each task
// tagged with the iteration of its micro-batch (j div M). A stage of r replicas updates its weights
// after every r-th backward of its order (and its last): the bucketed all-reduce over the replicas as
// for a last backward above, then one optimizer step per GPU on the compute stream, before the
// stage's next step; the gradients of the r micro-batches accumulate. PipeDream's r replicas take
// whole minibatches round-robin and each syncs once per minibatch it ran, i.e. the stage syncs once
// per r minibatches; dnnsim's replicas split every micro-batch (above), and syncing once per r of
// them keeps PipeDream's synchronization per sample (its DP's (1/m)·2(m−1)·W/B). One replica: an
// update after every backward. The first task also allocates the stashed weight versions, weight
// bytes × stashed_weight_versions(p − i, r) (pipeline_estimator.hpp): p − i for one replica, as
// PipeDream's runtime clones num_versions = warm-up + 1 copies of the stage's parameters.
// Replicas (DAPPLE §4.2, Fig. 8a; pipeline_plan.hpp): a micro-batch's samples are split by
// replica_share; between virtual stages, each (source replica, destination replica) pair whose
// sample ranges overlap gets one Transfer of overlap × the activation bytes per sample of the
// sending chunk's last layer (split-concat); gradients go back with the same sizes.
// Memory (measured by the executor, not assumed): the first task of iteration 0 on each device
// allocates the stage's weights, gradients and optimizer state (bytes_per_parameter); a forward
// allocates Σ activation_bytes of the chunk's layers × its samples and the matching backward frees
// them. With re-materialization the forward keeps only the chunk's input (activation_bytes of the
// layer before the chunk, 0 for layer 0: memory_model.hpp's rule), the recompute allocates the full
// activations, and the backward frees both. The recompute waits for the incoming gradient, although
// it needs only the stashed input: Megatron-LM and DeepSpeed recompute inside the backward step,
// which starts after the blocking receive of the gradient (torch.utils.checkpoint re-runs the
// forward when autograd reaches it), so a stage cannot hide its recompute behind the wait, and the
// pipeline estimators' backward step (recompute included) is what runs. Transfers allocate nothing
// (a received activation is counted once, on its producer).
// Tensor parallelism (models/dnn/tensor_parallel.hpp; Narayanan et al. SC'21 §2.3): with degree t,
// plan device g stands for the tensor-parallel group of GPUs g·t … g·t + t − 1 (consecutive GPUs,
// inside a node when t divides the node's GPUs). `model` is then one rank's shard, every compute
// step is one Compute per rank, followed on the "compute" stream by the step's tensor-parallel
// collectives over the group (forward and re-materialization: the blocks' all-reduces or all-gathers
// + reduce-scatters; backward: the same per block), which the group's next step waits for, as in
// Megatron where they are synchronous. Rank r sends its 1/t of a boundary activation to rank r of
// the next group; the data-parallel all-reduce of rank r runs over the rank-r GPUs of the replicas.
// Full recomputation re-runs the chunk's transformer blocks only (checkpointed_span: the embedding,
// final norm, head and loss keep their activations), keeps each block's input (2·s·b·h) and
// recomputes one block at a time (one block's activations live during it); the other modes keep
// Korthikanti's figure. Every backward of a chunk but its first since its last update also adds its
// weight gradients to the accumulated ones (gradient_accumulation, timed after the step's layers).
// With `mirror_ranks` (tensor_parallel_fidelity: group) only rank 0 of each group is lowered: its
// computes, sends, all-reduces and optimizer steps; the tensor-parallel collectives keep the whole
// group but are marked Collective::mirrored, so rank 0 spends their uncontended time and ranks
// 1 … t − 1 run nothing. Exact when the ranks are symmetric and share no link outside the group
// (docs/megatron.md, "Tensor-parallel fidelity"); indices [replica · ranks + rank] then have one rank.
// With `replica_window` = w (data_parallel_fidelity: window) only replicas 0 … w − 1 of each stage
// are lowered, and each stage's data-parallel all-reduce runs over their GPUs as a group standing for
// d / w copies of itself (Collective::copies); rank r of replica q ≥ w mirrors rank r of replica
// q mod w (TaskGraph::set_mirror; with mirror_ranks, that rank mirrors its rank 0 in turn). Exact when translating
// every stage's replicas by w maps the platform and the traffic onto themselves: equal replica counts and shares, each
// stage on whole nodes of one type, one non-blocking switch (docs/collectives.md, "Symmetric windows").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/cost/memory_model.hpp"
#include "models/dnn/layer_model.hpp"
#include "models/dnn/llm_parallel.hpp"
#include "models/dnn/tensor_parallel.hpp"
#include "models/program/task_graph.hpp"
#include "planners/common/cluster_view.hpp"
#include "planners/common/pipeline_plan.hpp"
#include "planners/data_parallel/data_parallel.hpp"
#include "planners/schedules/schedule.hpp"

namespace dnnsim {

struct PipelineWorkload {
  LayerModel model;
  PipelinePlan plan;  // device ids index the TaskGraph's devices (the cluster's GPUs, in order)
  Dtype dtype = Dtype::fp32;
  Precision precision = Precision::fp32;
  Optimizer optimizer = Optimizer::adam;
  std::string collective_algorithm;             // empty: the default rule of collective_algorithms.hpp
  TensorParallelOptions tensor_parallel;        // degree 1 and no transformer: plain pipeline × data
  std::optional<TransformerShape> transformer;  // the unsharded shape, set when `model` is a tensor-parallel shard
  // Every GPU of the graph (ClusterView order), or empty. When given, a step's Compute carries the sum
  // of its layers' times on that GPU (layer_time: each layer its own kernel under the cost model or
  // calibration curve) as its measured time, instead of the chunk's FLOPs and bytes timed as one
  // kernel, which would give a whole chunk the efficiency of one huge GEMM.
  std::vector<ClusterDevice> gpus;
  // Gradient all-reduce bucketed and overlapped with the last backward (see above); DDP's bucket cap.
  bool overlap_all_reduce = true;
  Bytes bucket_size = kDdpBucketSize;
  bool mirror_ranks = false;  // lower rank 0 of each tensor-parallel group only (see above)
  // Replicas lowered per stage (see above); 0: all of them.
  int replica_window = 0;
  // Expert, context and fully sharded data parallelism, the precision recipe and the overlaps of an
  // LLM (models/dnn/llm_parallel.hpp; `model` is then one GPU's share of all of them). With context
  // parallelism a plan device is TP·CP GPUs, tensor rank fastest; the step's exchanges follow
  // planners/schedules/step_communication.hpp.
  LlmParallelism llm;

  [[nodiscard]] PipelineShape shape() const;
  // GPUs per plan device (the tensor-parallel degree × the context-parallel one).
  [[nodiscard]] int ranks() const { return transformer ? tensor_parallel.degree * std::max(1, llm.context) : 1; }
  // The ranks of a group that get tasks: 1 with mirror_ranks, else ranks().
  [[nodiscard]] int lowered_ranks() const { return mirror_ranks ? 1 : ranks(); }
  // The replicas of `stage` that get tasks: the window's, or all.
  [[nodiscard]] std::size_t lowered_replicas(const PipelineStage& stage) const {
    return replica_window > 0 ? std::min(stage.devices.size(), static_cast<std::size_t>(replica_window))
                              : stage.devices.size();
  }
  // Weights, gradients and optimizer state per parameter: the LLM precision recipe's when the workload
  // has LLM parallelism, else the precision and optimizer's (memory_model.hpp).
  [[nodiscard]] BytesPerParameter bytes_per_parameter() const {
    return llm.any() ? llm.precision.bytes_per_parameter() : dnnsim::bytes_per_parameter(precision, optimizer);
  }
  // The same as `stage`'s GPUs hold them: with an LLM recipe's FP8 weight transposes where the stage's
  // GPU runs TN-only FP8 GEMMs (PrecisionRecipe::resident_bytes_per_parameter).
  [[nodiscard]] BytesPerParameter resident_bytes_per_parameter(const PipelineStage& stage) const {
    if (!llm.any() || gpus.empty()) return bytes_per_parameter();
    return llm.precision.resident_bytes_per_parameter(gpus.at(stage.devices.front() * ranks()).gpu);
  }
  // The ranks a stage's optimizer state is divided over: its replicas (× the context ranks) with the
  // distributed optimizer or FSDP, else 1.
  [[nodiscard]] double optimizer_shards(const PipelineStage& stage) const {
    if (!tensor_parallel.distributed_optimizer && !llm.fsdp) return 1.0;
    return static_cast<double>(stage.devices.size()) * (llm.any() ? std::max(1, llm.context) : 1);
  }
  // Re-materialization: the schedule's, or Recompute::full.
  [[nodiscard]] bool recomputes(const PipelineSchedule& schedule) const {
    return schedule.recompute() || (transformer && tensor_parallel.recompute == Recompute::full);
  }
};

// The task ids of one lowered iteration. Virtual stage u = chunk·p + stage; boundary u joins
// virtual stages u and u + 1.
struct LoweredIteration {
  std::uint32_t iteration = 0;
  PipelineShape shape;
  // [virtual stage][micro-batch][replica · lowered_ranks() + rank]
  std::vector<std::vector<std::vector<TaskId>>> forward;
  std::vector<std::vector<std::vector<TaskId>>> recompute;  // empty without re-materialization
  // A backward step split into gradient buckets (overlap_all_reduce) is its first piece here (the
  // task the incoming gradients wait for) and its last piece in backward_end (what the outgoing
  // gradients wait for); an unsplit step is the same task in both.
  std::vector<std::vector<std::vector<TaskId>>> backward;
  std::vector<std::vector<std::vector<TaskId>>> backward_end;
  // [boundary][micro-batch]: the split-concat transfers, one per overlapping (source, destination) replica pair
  std::vector<std::vector<std::vector<TaskId>>> activation_transfers;
  std::vector<std::vector<std::vector<TaskId>>> gradient_transfers;
  // [virtual stage]: the chunk's last all-reduce (its lowest bucket; rank 0's with tensor
  // parallelism), none for one replica or no parameters; of an asynchronous run, its last update's
  std::vector<std::optional<TaskId>> all_reduce;
  std::vector<std::vector<TaskId>> optimizer;  // [stage][replica]; of an asynchronous run, its last update's
};

// Why `workload` cannot be lowered with `schedule` on `device_count` devices (the plan's problems,
// a schedule that does not support the shape, a chunk count the schedule does not use); empty if it can.
[[nodiscard]] std::vector<std::string> pipeline_problems(const PipelineWorkload& workload,
                                                         const PipelineSchedule& schedule, std::size_t device_count);

// Appends iteration `iteration` to `graph`, whose devices are already added. Weights, gradients and
// optimizer state are allocated by iteration 0's tasks, so lower iteration 0 first, once.
// @throw InputError with pipeline_problems(); std::invalid_argument for an asynchronous schedule.
LoweredIteration lower_pipeline_iteration(TaskGraph& graph, const PipelineWorkload& workload,
                                          const PipelineSchedule& schedule, std::uint32_t iteration);
// Appends a whole run of `iterations` iterations of an asynchronous schedule (see above); the result's
// shape has iterations × M micro-batches, indexed by their position in the run.
// @throw InputError with pipeline_problems(); std::invalid_argument for a synchronous schedule or
// iterations < 1.
LoweredIteration lower_pipeline_run(TaskGraph& graph, const PipelineWorkload& workload,
                                    const PipelineSchedule& schedule, int iterations);

// `iterations` iterations of a fixed schedule on devices named `device_names` (the cluster's GPUs).
// @throw InputError with pipeline_problems().
[[nodiscard]] TaskGraph build_pipeline(const PipelineWorkload& workload, const PipelineSchedule& schedule,
                                       const std::vector<std::string>& device_names, int iterations);

// Parameters of the layers `range` (their fp32-counted parameter_bytes / 4).
[[nodiscard]] double parameter_count(const LayerModel& model, LayerRange range);
// Weights + gradients + optimizer state of `stage` (all its chunks), on each of its replicas.
[[nodiscard]] Bytes stage_model_state_bytes(const PipelineWorkload& workload, std::size_t stage);
// The same for a workload with LLM parallelism (llm_model_states), by kind, without FSDP's gathered weights.
[[nodiscard]] ModelStates stage_llm_model_states(const PipelineWorkload& workload, std::size_t stage);
// The activations a forward of the layers `range` keeps for `samples` samples until its backward.
[[nodiscard]] Bytes chunk_activation_bytes(const LayerModel& model, LayerRange range, int samples);

}  // namespace dnnsim
