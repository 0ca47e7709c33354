// The LLM layout planner (`planner: megatron-5d`): TP × PP × VP × CP × EP × DP, with or without FSDP,
// and the micro-batch size, for an LLM of the zoo on a cluster, within the limits of Megatron-Core as
// it is today (llm_layout.hpp's rules, cited there; the planner's options narrow them further).
//
// Search (branch and bound over an enumeration; the result is the same as pricing every layout):
//  1. enumerate every layout the rules accept (llm_layout.hpp);
//  2. refuse those that do not fit in a GPU's memory (llm_layout_cost.hpp's memory: model states as
//     the precision recipe stores them and the layout shards them, the schedule's micro-batches in
//     flight); none fitting is a reported result naming the layout that came closest;
//  3. order the rest by a lower bound, their compute alone, and price them in that order with the
//     analytic iteration time of llm_layout_cost.hpp (compute, exposed TP/EP/CP/FSDP communication,
//     pipeline bubble and sends, the data-parallel all-reduce and optimizer); stop when the bound
//     of the next layout is no better than the k-th best price (k = `keep`): no layout left can
//     enter the k best;
//  4. re-rank the k best with the schedule estimator's timeline (pipeline_estimator.hpp) over the
//     same per-virtual-stage times, when the request has a schedule that can run them.
// The plan is the PipelinePlan of the chosen layout over plan devices of TP·CP consecutive GPUs
// (Megatron's rank order tp-cp-ep-dp-pp), with PlanResult::tensor_parallel and llm_layout set.
#pragma once

#include "planners/megatron/llm_layout.hpp"
#include "planners/parallel/planner.hpp"

namespace dnnsim {

class LlmLayoutPlanner final : public Planner {
 public:
  [[nodiscard]] static OptionSchema options();
  [[nodiscard]] PlanResult plan(const PlanRequest& request) const override;
  [[nodiscard]] bool chooses_tensor_parallel() const override { return true; }
  [[nodiscard]] bool chooses_chunks() const override { return true; }
  [[nodiscard]] bool chooses_llm_layout() const override { return true; }
  [[nodiscard]] bool chooses_context_comm(const Options& options) const override {
    return options.choice("context_comm") == "search";
  }
  [[nodiscard]] bool ranks_configurations() const override { return true; }
  [[nodiscard]] std::string model_problem(const LayerModel& model) const override;
};

// The limits the planner's options and the cluster give (TP ≤ the GPUs of a node unless the option
// `max_tensor_parallel` says otherwise).
[[nodiscard]] LlmLayoutLimits llm_layout_limits(const PlanRequest& request);

}  // namespace dnnsim
