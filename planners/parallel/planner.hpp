// Parallelization planners: choose how to cut a model into pipeline stages, which GPUs run each
// stage (and how many replicas it has), for a given cluster, global batch and micro-batch count.
// One interface, one registry (`dnnsim list planners`, `dnnsim plan`).
//
// Built-in planners and their sources (docs/planners.md; docs/research/papers-parallelism.md):
//  - uniform: GPipe's equal split (Huang et al., NeurIPS'19 §2.2) into a given number of stages of
//    equal layer count (or equal compute), devices in order, stages replicated evenly.
//  - pipedream: PipeDream's hierarchical dynamic program (Narayanan et al., SOSP'19 §3.1): minimise
//    the slowest stage, level by level of the topology.
//  - dapple: DAPPLE's planner (Fan et al., PPoPP'21 §4): dynamic program over layer prefixes and
//    device sets with the Fresh-, Append- and Scatter-first placement policies, scored by the
//    pivot-stage latency model (Formulas 1–3).
//  - pipeline-mapping: Luo et al., "Efficient Pipeline Planning for Expedited Distributed DNN
//    Training" (INFOCOM'22) — "-like": the paper text was not available; stage partition and device
//    mapping over an arbitrary bandwidth matrix, as specified in papers-parallelism.md §4.2.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/common/options.hpp"
#include "models/common/registry.hpp"
#include "models/cost/memory_model.hpp"
#include "models/dnn/layer_model.hpp"
#include "models/dnn/llm_parallel.hpp"
#include "models/dnn/tensor_parallel.hpp"
#include "planners/common/cluster_view.hpp"
#include "planners/common/pipeline_plan.hpp"
#include "planners/data_parallel/data_parallel.hpp"
#include "planners/schedules/schedule.hpp"

namespace dnnsim {

struct PlanRequest {
  LayerModel model;
  ClusterView cluster;
  int global_batch = 1;
  int micro_batches = 1;  // M
  Dtype dtype = Dtype::fp32;
  // Precision, optimizer, recomputation and framework overhead of every device; the planner sets
  // micro_batch and micro_batches_in_flight per stage from the plan and the schedule.
  TrainingMemoryConfig memory;
  // false: a plan is not refused for memory, which the simulation measures and reports instead (an
  // LLM's layout, given whole by the scenario: its memory per GPU comes from the lowering's
  // allocations, which know its experts, FSDP and precision recipe).
  bool check_memory = true;
  // Peak in-flight micro-batches of stage i of p under the schedule the plan will run with
  // (1F1B: min(p − i, M)); planners use it for their memory check. Empty: 1F1B's.
  // `chunks`: model chunks per stage (chunks_per_stage, or the megatron planner's candidate v).
  std::function<int(int stage, int stages, int micro_batches, int chunks)> in_flight;
  int chunks_per_stage = 1;  // interleaved schedules; planners other than uniform reject v > 1
  // Choose the chunks per stage v as well (1: plain 1F1B; v > 1: interleaved 1F1B with whole blocks per
  // chunk) instead of taking chunks_per_stage: the schedule's `chunks: auto`, for a planner that
  // chooses_chunks().
  bool choose_chunks = false;
  // Where stages may begin and end, as layer indices from 0 to the layer count, ascending: the
  // model's blocks (block_boundaries) so that a search over a zoo transformer's sub-layers costs what
  // one over its blocks does. Empty: between any two layers. dapple, pipeline-mapping and pipedream
  // honour it.
  std::vector<std::size_t> boundaries;
  // The stages' gradient all-reduce bucketed and overlapped with their last backward, as the lowering
  // runs it (pipeline_lowering.hpp, `overlap` and `bucket_size` of the workload): stage costs then
  // price the part of the all-reduce the backward does not hide (stage_cost.hpp).
  bool overlap_all_reduce = true;
  Bytes bucket_size = kDdpBucketSize;
  // The schedule the plan will run under (empty: 1f1b). dapple and pipeline-mapping re-rank their
  // best plans with its exact timeline (pipeline_estimator.hpp).
  std::shared_ptr<const PipelineSchedule> schedule;
  // The planner's own options, as its registry entry declares them (PlannerRegistry::defaults, or as
  // the scenario's `planner:` section gave them: option_reader.hpp).
  Options options;
  // Called as a search advances with the fraction done; returning false stops it, and the best plan
  // found so far is returned with PlanResult::stopped_early set. Empty: the search runs to its end.
  std::function<bool(double fraction)> progress;
  // An LLM's recipe, for a planner that chooses its whole layout (chooses_llm_layout): the precision
  // recipe, routing and overlaps of `llm` and the recomputation modules (RecomputeModule bits) are
  // kept; its context, expert and FSDP settings are the planner's to choose.
  LlmParallelism llm;
  std::uint8_t recompute_modules = 0;
};

// The boundaries of a model's blocks (model_blocks, models/dnn/layer_model.hpp): every layer before,
// between and after the blocks is its own unit, each block one. Every index 0..N without blocks.
[[nodiscard]] std::vector<std::size_t> block_boundaries(const LayerModel& model);

struct PlanStatistics {
  std::size_t candidates = 0;  // partial or complete plans scored
  double wall_seconds = 0;     // search time (not written to reports: they must be byte-identical)
  // dapple, pipeline-mapping: candidates not scored because a lower bound on their Formula 2 showed
  // that no kept set would take them (branch and bound, formula2_search.hpp; the result is the same).
  std::size_t bounded = 0;
  // The LLM layout planner: layouts its framework accepts (enumerated), and of those the ones refused
  // for memory before pricing (out_of_memory); candidates are then the layouts priced.
  std::size_t enumerated = 0;
  std::size_t out_of_memory = 0;
};

struct PlanResult {
  bool feasible = false;
  std::string reason;  // why no plan fits (out of memory everywhere, too few devices), when infeasible
  PipelinePlan plan;
  Seconds predicted_iteration_time{0};  // the planner's own cost model
  std::string cost_model;               // which one: "DAPPLE Formula 2", "PipeDream slowest stage", …
  PlanStatistics statistics;
  // The 3D planner (planners/megatron): the tensor-parallel degree and options it chose (plan devices
  // are then groups of that many GPUs), and its fitting candidates, best first, one line each.
  std::optional<TensorParallelOptions> tensor_parallel;
  std::vector<std::string> ranking;
  // The LLM layout planner (planners/megatron/llm_layout_planner.hpp): what it chose besides
  // tensor_parallel (plan devices are then groups of tensor × context GPUs), for the workload to run.
  struct LlmChoice {
    int context = 1;
    int expert = 1;
    bool fsdp = false;
    ContextComm context_comm = ContextComm::p2p;  // with its option context_comm: search
    int context_a2a = 1;
    std::string describe;  // "TP 8 × PP 8 × VP 4 × CP 1 × EP 64 × DP 16, micro-batch 1"
  };
  std::optional<LlmChoice> llm_layout;
  // Its option `reference` (a published layout): where that layout ranks among those priced, and its
  // predicted time against the best's; or why it is not a candidate.
  std::string reference;
  // Where the planner's options narrowed its search space ("recompute full", "no sequence
  // parallelism": a framework's limits), for listings.
  std::vector<std::string> search_limits;
  // dapple, pipeline-mapping with PlanRequest::rerank > 1: the plans kept by Formula 2, best first
  // by Formula 2, each with both estimates; `plan` is the one the estimator ranks first.
  struct RankedPlan {
    PipelinePlan plan;
    Seconds formula2{0};
    Seconds estimate{0};  // pipeline_estimator.hpp's timeline under the request's schedule
  };
  std::vector<RankedPlan> reranked;
  // Units the search cut between when it honoured PlanRequest::boundaries (0: every layer).
  std::size_t searched_blocks = 0;
  // The search was stopped (PlanRequest::progress returned false): the plan is the best found so far.
  bool stopped_early = false;
};

class Planner {
 public:
  virtual ~Planner() = default;
  // Never throws for a valid request: an infeasible request is a result with feasible = false.
  [[nodiscard]] virtual PlanResult plan(const PlanRequest& request) const = 0;

  // What the planner chooses besides stages and devices, so that a workload asks it instead of
  // naming it. chooses_tensor_parallel: the tensor-parallel degree, sequence parallelism and
  // recomputation (the plan's PlanResult::tensor_parallel; the workload must not give them);
  // chooses_chunks: the chunks per stage, when PlanRequest::choose_chunks asks.
  [[nodiscard]] virtual bool chooses_tensor_parallel() const { return false; }
  [[nodiscard]] virtual bool chooses_chunks() const { return false; }
  // chooses_llm_layout: context and expert parallelism and FSDP as well (PlanResult::llm_layout; the
  // workload must not give them), for an LLM of the zoo (PlanRequest::llm carries its recipe).
  [[nodiscard]] virtual bool chooses_llm_layout() const { return false; }
  // Whether, with these options, it chooses CP's communication type too (LlmChoice::context_comm), so
  // that the scenario's context_parallel_comm would be overridden.
  [[nodiscard]] virtual bool chooses_context_comm(const Options& /*options*/) const { return false; }
  // Whether it ranks every configuration that fits (PlanResult::ranking), so that a runner-up can be
  // planned: its integer option `candidate` (1-based) picks which (`dnnsim plan --candidate`).
  [[nodiscard]] virtual bool ranks_configurations() const { return false; }
  // Whether its cost model overlaps the gradient all-reduce with the backward pass, as the plan should
  // then run by default (the workload's `overlap`); Megatron-LM's default runs it after the pipeline.
  [[nodiscard]] virtual bool overlaps_all_reduce() const { return true; }
  // Why it cannot plan `model` at all (a 3D planner needs a transformer), or empty.
  [[nodiscard]] virtual std::string model_problem(const LayerModel& /*model*/) const { return {}; }
};

using PlannerRegistry = Registry<std::shared_ptr<const Planner>>;

// uniform, pipedream, dapple, pipeline-mapping, megatron, megatron-5d, in that order.
[[nodiscard]] const PlannerRegistry& builtin_planners();

}  // namespace dnnsim
