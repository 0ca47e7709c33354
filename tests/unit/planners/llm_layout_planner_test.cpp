// The LLM layout planner (planners/megatron/llm_layout_planner.hpp) and Megatron-Core's rules it
// enumerates (llm_layout.hpp), on small mixtures of experts whose layouts can be counted by hand.
#include "planners/megatron/llm_layout_planner.hpp"

#include <gtest/gtest.h>

#include <set>

#include "models/dnn/zoo.hpp"
#include "models/dnn/zoo_llm.hpp"
#include "planners/megatron/llm_layout_cost.hpp"
#include "tests/support/planner_entries.hpp"
#include "tests/support/planner_fixtures.hpp"

namespace dnnsim {
namespace {

using testing::tiny_moe;

PlanRequest layout_request(LayerModel model, ClusterView cluster, int global_batch, testing::OptionValues values = {}) {
  PlanRequest request = testing::make_request(std::move(model), std::move(cluster), global_batch, 1);
  request.dtype = Dtype::bf16;
  request.memory.precision = Precision::mixed;
  request.choose_chunks = true;
  request.options = testing::options_of(builtin_planners(), "megatron-5d", values);
  return request;
}

std::vector<LlmLayout> enumerate(const PlanRequest& request) {
  const LlmLayoutCost cost(request);
  return enumerate_llm_layouts(cost.layout_model(), static_cast<int>(request.cluster.size()), request.global_batch,
                               llm_layout_limits(request));
}

// 4 GPUs in one node, 2 blocks, 4 experts, global batch 4, micro-batch 1. TP·CP·PP·DP = 4 with
// TP ∈ {1, 2, 4} (it splits 4 heads, hidden 256, 4 kv heads; ≤ the node's 4) and PP ≤ 2 (one block
// per stage at least): (TP, CP, PP, DP) =
//   PP 1: (1,1,1,4) (1,2,1,2) (1,4,1,1) (2,1,1,2) (2,2,1,1) (4,1,1,1) — 6, a stage of 4 GPUs
//   PP 2: (1,1,2,2) (1,2,2,1) (2,1,2,1)                               — 3, a stage of 2 GPUs
// every CP cutting the 64 tokens into 2·CP chunks (CP 4: 8 of 8). VP is 1 (VP 2 needs PP·VP = 4
// virtual stages of 2 blocks). EP divides the 4 experts and the stage: {1, 2, 4} with PP 1, {1, 2}
// with PP 2. Without FSDP: 6·3 + 3·2 = 24 layouts. FSDP needs PP 1 and DP·CP ≥ 2, which all PP-1
// tuples but (4,1,1,1) have: 5·3 = 15 more, 39 in all.
TEST(LlmLayoutRules, EnumerationCountIsDerivedByHand) {
  const ClusterView node = testing::hierarchical_cluster(1, 4, 150e9, 3.125e9, "H100-SXM");
  const PlanRequest no_fsdp =
      layout_request(tiny_moe(), node, 4, {{"micro_batch_sizes", std::vector<std::int64_t>{1}}, {"fsdp", "off"}});
  EXPECT_EQ(enumerate(no_fsdp).size(), 24U);
  const PlanRequest either = layout_request(tiny_moe(), node, 4, {{"micro_batch_sizes", std::vector<std::int64_t>{1}}});
  const std::vector<LlmLayout> layouts = enumerate(either);
  EXPECT_EQ(layouts.size(), 39U);
  for (const LlmLayout& layout : layouts) {
    EXPECT_EQ(layout.gpus(), 4);
    EXPECT_TRUE(!layout.fsdp || layout.pipeline == 1);
  }
  // Activations offloaded to the host (rule 8) leave the PP-1 layouts only: 6·3 + 15 = 33.
  PlanRequest offloading = either;
  offloading.llm.offloaded_layers = 1;
  const std::vector<LlmLayout> single = enumerate(offloading);
  EXPECT_EQ(single.size(), 33U);
  for (const LlmLayout& layout : single) EXPECT_EQ(layout.pipeline, 1);
}

// 6 experts and 36 tokens on 48 GPUs: EP must divide 6 (1, 2, 3, 6 — never 4, 8, …) and CP must cut
// 36 tokens into 2·CP equal chunks (CP 1, 2, 3, 6; CP 4 would need 8 | 36). No enumerated layout
// breaks either, and a layout that does is refused with the rule named.
TEST(LlmLayoutRules, ExpertAndContextViolationsAreNeverProposed) {
  const PlanRequest request = layout_request(tiny_moe(6, 36), testing::hierarchical_cluster(6, 8), 48);
  std::set<int> experts, contexts;
  for (const LlmLayout& layout : enumerate(request)) {
    experts.insert(layout.expert);
    contexts.insert(layout.context);
  }
  EXPECT_EQ(experts, (std::set<int>{1, 2, 3, 6}));
  EXPECT_EQ(contexts, (std::set<int>{1, 2, 3, 6}));
  const LlmLayoutCost cost(request);
  const LlmLayoutLimits limits = llm_layout_limits(request);
  const auto problems = [&](const LlmLayout& layout) {
    const std::vector<std::string> why = llm_layout_problems(cost.layout_model(), 48, 48, limits, layout);
    return why.empty() ? std::string() : why.front();
  };
  // TP 1 × PP 1 × CP 1 × DP 48 with EP 4: 4 does not divide 6.
  EXPECT_NE(problems(LlmLayout{1, 1, 1, 1, 4, 48, 1}).find("does not divide the 6 routed experts"), std::string::npos);
  // CP 4 × DP 12: 36 tokens are not 8 equal chunks.
  EXPECT_NE(problems(LlmLayout{1, 1, 1, 4, 1, 12, 1}).find("does not cut the sequence of 36 tokens"),
            std::string::npos);
  EXPECT_EQ(problems(LlmLayout{1, 1, 1, 6, 6, 8, 1}), "");
  // With cp_comm_type a2a (rule 9) CP must also divide the 4 query (and 4 KV) heads of each tensor
  // rank: 4/TP of them, so CP 3 and 6 never run, and CP 2 only with TP ≤ 2.
  PlanRequest a2a = request;
  a2a.llm.context_comm = ContextComm::a2a;
  std::set<int> a2a_contexts;
  for (const LlmLayout& layout : enumerate(a2a)) {
    a2a_contexts.insert(layout.context);
    EXPECT_EQ(4 / layout.tensor % layout.context, 0) << layout.describe();
  }
  EXPECT_EQ(a2a_contexts, (std::set<int>{1, 2}));
  const std::vector<std::string> why = llm_layout_problems(cost.layout_model(), 48, 48, llm_layout_limits(a2a),
                                                           LlmLayout{1, 1, 1, 6, 6, 8, 1, false, ContextComm::a2a});
  ASSERT_EQ(why.size(), 1u);
  EXPECT_NE(why.front().find("(rule 9)"), std::string::npos) << why.front();
}

// With `context_comm: search` the CP type is a dimension of the layout. On the 4 GPUs of
// EnumerationCountIsDerivedByHand (no FSDP: 24 layouts), 11 have CP > 1: CP 2 in (TP, PP, DP) = (1,1,2)
// and (2,1,1) with EP 1, 2, 4 and (1,2,1) with EP 1, 2 — 8 — and CP 4 in (1,1,1) with EP 1, 2, 4 — 3.
// Each CP 2 layout runs p2p, all_gather or a2a (4 heads and 4 KV heads per tensor rank at TP 1, 2 at
// TP 2, all divisible by 2), 3 types; each CP 4 layout those and a2a+p2p [2, 2] (A = 2, the one size
// strictly between 1 and 4, divides the 4 heads), 4 types: 13 + 8·3 + 3·4 = 49. Without the search a
// type other than the recipe's is refused with rule 9 named, and the recipe's type is that of every layout
// with CP > 1 (without CP there is no exchange: p2p, which runs none).
TEST(LlmLayoutRules, SearchingTheCpTypeMultipliesTheCpLayouts) {
  const ClusterView node = testing::hierarchical_cluster(1, 4, 150e9, 3.125e9, "H100-SXM");
  const std::vector<std::int64_t> one{1};
  const PlanRequest searching =
      layout_request(tiny_moe(), node, 4, {{"micro_batch_sizes", one}, {"fsdp", "off"}, {"context_comm", "search"}});
  const std::vector<LlmLayout> layouts = enumerate(searching);
  EXPECT_EQ(layouts.size(), 49U);
  std::set<std::tuple<int, ContextComm, int>> types;
  for (const LlmLayout& layout : layouts)
    if (layout.context > 1) types.emplace(layout.context, layout.context_comm, layout.context_a2a);
  EXPECT_EQ(types, (std::set<std::tuple<int, ContextComm, int>>{{2, ContextComm::p2p, 1},
                                                                {2, ContextComm::all_gather, 1},
                                                                {2, ContextComm::a2a, 1},
                                                                {4, ContextComm::p2p, 1},
                                                                {4, ContextComm::all_gather, 1},
                                                                {4, ContextComm::a2a, 1},
                                                                {4, ContextComm::a2a_p2p, 2}}));
  PlanRequest recipe = layout_request(tiny_moe(), node, 4, {{"micro_batch_sizes", one}, {"fsdp", "off"}});
  recipe.llm.context_comm = ContextComm::all_gather;
  for (const LlmLayout& layout : enumerate(recipe))
    EXPECT_EQ(layout.context_comm, layout.context > 1 ? ContextComm::all_gather : ContextComm::p2p);
  const LlmLayoutCost cost(recipe);
  const LlmLayout a2a{.tensor = 1, .context = 4, .data = 1, .context_comm = ContextComm::a2a};
  const std::vector<std::string> why = llm_layout_problems(cost.layout_model(), 4, 4, llm_layout_limits(recipe), a2a);
  ASSERT_EQ(why.size(), 1U);
  EXPECT_NE(why.front().find("CP 4 (a2a): the recipe's cp_comm_type is 4 (all_gather) (rule 9"), std::string::npos)
      << why.front();
  EXPECT_TRUE(llm_layout_problems(cost.layout_model(), 4, 4, llm_layout_limits(searching), a2a).empty());
}

// DeepSeek-V3 (671 B parameters) on 8 V100-16GB: BF16 weights and gradients and fp32 Adam state,
// 16 bytes per parameter, spread over all 8 GPUs is 671e9 · 16 / 8 ≈ 1.3 TB per GPU > 16 GiB, so no
// layout fits, and the result says so instead of failing.
TEST(LlmLayoutPlanner, AModelThatFitsNowhereIsAReportedResult) {
  const PlanRequest request =
      layout_request(builtin_models().at("deepseek-v3").value(ModelOptions{}), testing::hierarchical_cluster(1, 8), 8);
  const PlanResult result = builtin_planners().at("megatron-5d").value->plan(request);
  EXPECT_FALSE(result.feasible);
  EXPECT_NE(result.reason.find("out of memory in all"), std::string::npos) << result.reason;
  EXPECT_GT(result.statistics.enumerated, 0U);
  EXPECT_EQ(result.statistics.out_of_memory, result.statistics.enumerated);
}

// On 2 nodes × 4 H100: the plan is the best layout as PP stages of DP plan devices, each TP·CP GPUs;
// every enumerated layout is out of memory, pruned by the bound or priced; the kept ones are listed
// best first.
TEST(LlmLayoutPlanner, TheBestLayoutBecomesAPlan) {
  const PlanRequest request =
      layout_request(tiny_moe(), testing::hierarchical_cluster(2, 4, 150e9, 3.125e9, "H100-SXM"), 16);
  const PlanResult result = builtin_planners().at("megatron-5d").value->plan(request);
  ASSERT_TRUE(result.feasible) << result.reason;
  ASSERT_TRUE(result.llm_layout && result.tensor_parallel);
  const PlanStatistics& counts = result.statistics;
  EXPECT_EQ(counts.enumerated, counts.out_of_memory + counts.bounded + counts.candidates);
  const int tp = result.tensor_parallel->degree;
  const int cp = result.llm_layout->context;
  const auto d = result.plan.stages.front().devices.size();
  EXPECT_EQ(static_cast<std::size_t>(tp * cp) * d * result.plan.stages.size(), 8U);
  // M micro-batches of the whole pipeline, each b sequences on each of the d replicas: M·b·d = 16.
  EXPECT_EQ(result.plan.micro_batches * result.plan.micro_batch_size(), 16);
  EXPECT_EQ(result.plan.micro_batch_size() % static_cast<int>(d), 0);
  EXPECT_LE(result.ranking.size(), 10U);
  EXPECT_FALSE(result.ranking.empty());
}

// The bound prunes without changing the answer: keeping 1 layout prices no more than keeping every
// one, and both choose the same (the request has no schedule, so both rank by the analytic time).
TEST(LlmLayoutPlanner, PruningByTheBoundKeepsTheBest) {
  const ClusterView cluster = testing::hierarchical_cluster(2, 4, 150e9, 3.125e9, "H100-SXM");
  const PlanResult pruned =
      builtin_planners().at("megatron-5d").value->plan(layout_request(tiny_moe(), cluster, 16, {{"keep", 1}}));
  const PlanResult every =
      builtin_planners().at("megatron-5d").value->plan(layout_request(tiny_moe(), cluster, 16, {{"keep", 100000}}));
  ASSERT_TRUE(pruned.feasible && every.feasible);
  EXPECT_EQ(pruned.llm_layout->describe, every.llm_layout->describe);
  EXPECT_EQ(pruned.predicted_iteration_time.value(), every.predicted_iteration_time.value());
  EXPECT_LE(pruned.statistics.candidates, every.statistics.candidates);
  EXPECT_EQ(every.statistics.bounded, 0U);
}

}  // namespace
}  // namespace dnnsim
