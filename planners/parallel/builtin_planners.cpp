#include <memory>

#include "models/common/builtin_registry.hpp"
#include "planners/megatron/llm_layout_planner.hpp"
#include "planners/megatron/megatron_planner.hpp"
#include "planners/parallel/planners.hpp"

namespace dnnsim {
namespace {

void register_builtin_planners(PlannerRegistry& r) {
  r.add("uniform",
        "equal whole transformer blocks (else layers) per stage, GPUs in order, stages replicated evenly; scored "
        "with Formula 2",
        "Huang et al., GPipe, NeurIPS'19 §2.2; block split: Narayanan et al., SC'21 §2.2",
        std::make_shared<UniformPlanner>(), UniformPlanner::options());
  r.add("pipedream",
        "hierarchical DP minimising the slowest stage (GPUs of a node, then nodes); iteration = (M+S−1)·slowest",
        "Narayanan et al., PipeDream, SOSP'19 §3.1", std::make_shared<PipeDreamPlanner>(), PipeDreamPlanner::options());
  r.add("dapple",
        "DP over layer prefixes and GPU sets, Fresh/Append/Scatter-first placement, Formula 2 with pivot stage",
        "Fan et al., DAPPLE, PPoPP'21 §4", std::make_shared<DapplePlanner>(), formula2_options());
  r.add("pipeline-mapping",
        "-like: DAPPLE's DP with stage-to-GPU mapping read off the bandwidth matrix (paper text not available)",
        "Luo et al., Efficient Pipeline Planning for Expedited Distributed DNN Training, INFOCOM'22 (-like)",
        std::make_shared<PipelineMappingPlanner>(), formula2_options());
  r.add("megatron",
        "3D: every (TP inside a node, PP, DP, micro-batch, recompute) that fits, ranked by an analytical estimate; "
        "the best lowered with tensor-parallel groups",
        "Narayanan et al., Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM, SC'21 §3",
        std::make_shared<MegatronPlanner>(), MegatronPlanner::options());
  r.add("megatron-5d",
        "an LLM's TP × PP × VP × CP × EP × DP/FSDP and micro-batch within Megatron-Core's rules, memory first, "
        "then best-first by a compute bound, priced with the LLM lowering's costs; the best re-ranked by the "
        "schedule's timeline",
        "Megatron-Core parallel_state.py and arguments.py (rules); Narayanan et al. SC'21 §2.2.2 (estimate)",
        std::make_shared<LlmLayoutPlanner>(), LlmLayoutPlanner::options());
}

}  // namespace

const PlannerRegistry& builtin_planners() {
  return builtin_registry<PlannerRegistry, register_builtin_planners>("planner");
}

}  // namespace dnnsim
