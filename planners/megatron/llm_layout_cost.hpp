// What an LLM layout (llm_layout.hpp) costs per GPU and per iteration, engine-free, with the pieces
// the LLM workload kind is lowered with, so that what the planner ranks is what `dnnsim run` would
// simulate:
//  - each GPU's share of the model: shard_for_llm (tensor, context and expert parallelism and the
//    recomputation modules; models/dnn/llm_parallel.hpp);
//  - compute: step_layers_time per layer (calibrated GEMM grids, attention curves, memory-bound
//    kernels, the precision recipe's FP8 rates and quantization kernels; step_communication.hpp);
//  - communication: step_collectives of each virtual stage (the tensor-parallel collectives, the EP
//    all-to-alls, the FSDP gathers and reduce-scatters), each timed by collective_time over the
//    cluster's paths plus the calibrated per-call latency, as the executor times a mirrored collective
//    (models/cost/collective_cost.hpp); serial ones add to the step, overlapped ones expose what the
//    step's compute does not hide (the lowering's coarse view of per-layer overlap) and slow that
//    compute by the calibration's compute_share while they run (overlapped_span); the CP ring's
//    phases (context_ring) expose what each phase's exchange does not hide under its attention, which
//    it slows the same way;
//  - the gradients' data-parallel all-reduce (dense over DP·CP, experts over their expert-data group:
//    expert_gradient_all_reduce) and the optimizer step after the pipeline, the all-reduce hidden
//    under one micro-batch's backward when it overlaps (Megatron's overlap_grad_reduce; overlapped_span);
//  - memory per GPU, every stage: stage_model_state_bytes's rule (the recipe's bytes per parameter,
//    the optimizer state over DP·CP with the distributed optimizer, everything over DP·CP plus two
//    blocks' gathered weights with FSDP; the largest block of the model stands for the stage's) plus
//    the kept activations × the micro-batches the schedule keeps in flight on that stage
//    (PlanRequest::in_flight) plus the framework overhead.
// The iteration, analytically (Narayanan et al. SC'21 §2.2.2, as the 3D planner):
//   T = (M + (p − 1)/v)·(max over stages of the step's forward + backward + 2v·t_send)
//       + (M − 1)·t_acc + max over stages of (exposed all-reduce + optimizer)
// and, for the candidates kept, the schedule's own timeline (pipeline_estimator.hpp) over the same
// per-virtual-stage times. A lower bound on T — its compute alone — prunes layouts before their
// communication is priced.
#pragma once

#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "planners/megatron/llm_layout.hpp"
#include "planners/parallel/planner.hpp"
#include "planners/schedules/pipeline_lowering.hpp"

namespace dnnsim {

class LlmLayoutCost {
 public:
  explicit LlmLayoutCost(const PlanRequest& request);
  LlmLayoutCost(const LlmLayoutCost&) = delete;
  LlmLayoutCost& operator=(const LlmLayoutCost&) = delete;
  ~LlmLayoutCost();

  // The model's blocks and tensor-parallel divisibility, for llm_layout.hpp's rules.
  [[nodiscard]] LlmLayoutModel layout_model() const;
  // Peak bytes per GPU over the stages.
  [[nodiscard]] Bytes memory(const LlmLayout& layout);
  // The iteration's compute alone (no communication, no tail): a lower bound on analytic().
  [[nodiscard]] Seconds compute_bound(const LlmLayout& layout);
  // T above.
  [[nodiscard]] Seconds analytic(const LlmLayout& layout);
  // The schedule estimator's iteration over the same times (+ the accumulation), or nullopt when the
  // request has no schedule or it cannot run the layout's pipeline shape.
  [[nodiscard]] std::optional<Seconds> estimate(const LlmLayout& layout);
  // The layout's virtual stages (chunk c of stage s at c·p + s).
  [[nodiscard]] const std::vector<LayerRange>& virtual_stages(const LlmLayout& layout);
  // What the planner prices one collective at: collective_time over the cluster's paths and its
  // topology (a ring across nodes whose GPUs have NICs of their own runs in channels, as simulated),
  // plus the calibrated per-call latency × c.calls.
  [[nodiscard]] Seconds collective(const Collective& c);

 private:
  struct Shard;
  struct StageTimes {
    std::vector<Seconds> forward, backward;  // per virtual stage, exposed communication included
    std::vector<Seconds> tail;               // per stage
    Seconds send{0}, accumulation{0};
  };
  Shard& shard(const LlmLayout& layout);
  const std::vector<std::pair<Seconds, Seconds>>& compute_prefix(Shard& shard, int micro_batch);
  int in_flight(int stage, int stages, int micro_batches, int chunks);
  StageTimes stage_times(const LlmLayout& layout);

  const PlanRequest& request_;
  DeviceTopology topology_;
  TransformerShape shape_;
  // By (TP, CP, EP, CP type, a2a size): what shard_for_llm and the attention calls read.
  std::map<std::tuple<int, int, int, ContextComm, int>, std::unique_ptr<Shard>> shards_;
  std::map<int, std::vector<LayerRange>> splits_;
  // A collective's time by size (collective()), per kind, algorithm and group: a + b·S when affine,
  // else each size asked, timed.
  struct Line {
    Seconds a{0}, b{0};
    bool affine = true;
    std::map<double, Seconds> exact;
  };
  std::map<std::tuple<int, InternedString, std::vector<DeviceId>>, Line> collectives_;
  std::map<std::tuple<int, int, int, int>, int> in_flight_;
};

}  // namespace dnnsim
