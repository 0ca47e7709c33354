// The 3D planner (planners/megatron/megatron_planner.hpp) on GPT-3 XL (1.3B: 24 blocks, hidden 2,048,
// 16 heads, sequence 2,048) over 2 nodes × 8 V100-16GB, fp16 with mixed-precision Adam.
#include "planners/megatron/megatron_planner.hpp"

#include <gtest/gtest.h>

#include "models/dnn/zoo.hpp"
#include "tests/unit/planners/planner_test_helpers.hpp"

namespace dnnsim {
namespace {

PlanRequest gpt3_xl_request(const std::string& model) {
  PlanRequest request = testing::make_request(builtin_models().at(model).value(ModelOptions{}),
                                              testing::hierarchical_cluster(2, 8), 64, 1);
  request.dtype = Dtype::fp16;
  request.memory.precision = Precision::mixed;
  return request;
}

// Model states alone: 1.3B parameters × 16 B (fp16 weights and gradients, fp32 master weights and
// two Adam moments) ≈ 21 GB > 16 GiB, so every fitting configuration splits the model (t·p ≥ 2);
// every one has t·p·d = 16, t within a node (≤ 8) dividing the 16 heads, and p dividing the 24
// blocks (v = 1). The ranking is by predicted time, best first.
TEST(MegatronPlanner, EveryFittingCandidateIsAValidSplitThatFits) {
  const MegatronSearch search = search_megatron(gpt3_xl_request("gpt3-xl"), false);
  ASSERT_FALSE(search.fitting.empty());
  for (std::size_t i = 0; i < search.fitting.size(); ++i) {
    const MegatronCandidate& c = search.fitting[i];
    EXPECT_EQ(c.tensor * c.pipeline * c.data, 16);
    EXPECT_LE(c.tensor, 8);
    EXPECT_EQ(16 % c.tensor, 0);
    EXPECT_EQ(24 % c.pipeline, 0);
    EXPECT_GE(c.tensor * c.pipeline, 2);
    EXPECT_LE(c.memory.value(), 16.0 * (1 << 30));
    EXPECT_EQ(64 % (c.data * c.micro_batch), 0);
    if (i > 0) {
      EXPECT_LE(search.fitting[i - 1].predicted.value(), c.predicted.value());
    }
  }
}

// The Planner interface returns the best candidate as a plan over tensor-parallel groups: p stages of
// d groups each, M = B/(d·b) micro-batches, and the chosen options.
TEST(MegatronPlanner, BestCandidateBecomesAPlanOverGroups) {
  const PlanRequest request = gpt3_xl_request("gpt3-xl");
  const MegatronCandidate best = search_megatron(request, false).fitting.front();
  const PlanResult result = MegatronPlanner().plan(request);
  ASSERT_TRUE(result.feasible);
  ASSERT_TRUE(result.tensor_parallel.has_value());
  EXPECT_EQ(result.tensor_parallel->degree, best.tensor);
  EXPECT_EQ(result.plan.stages.size(), static_cast<std::size_t>(best.pipeline));
  EXPECT_EQ(result.plan.stages.front().devices.size(), static_cast<std::size_t>(best.data));
  EXPECT_EQ(result.plan.micro_batches, 64 / (best.data * best.micro_batch));
  EXPECT_TRUE(result.plan.problems(request.model.layers.size(), 16 / static_cast<std::size_t>(best.tensor)).empty());
  EXPECT_DOUBLE_EQ(result.predicted_iteration_time.value(), best.predicted.value());
}

// A model without attention layers cannot be split by heads: a reason, not a plan.
TEST(MegatronPlanner, NeedsATransformer) {
  PlanRequest request = gpt3_xl_request("gpt3-xl");
  request.model = builtin_models().at("resnet50").value(ModelOptions{});
  const PlanResult result = MegatronPlanner().plan(request);
  EXPECT_FALSE(result.feasible);
  EXPECT_NE(result.reason.find("transformer"), std::string::npos) << result.reason;
}

// GPT-3 175B needs 175e9 × 16 B = 2.8 TB of model states: more than 16 × 16 GiB, so nothing fits and
// the result says why.
TEST(MegatronPlanner, AModelThatCannotFitIsAReportedResult) {
  const PlanResult result = MegatronPlanner().plan(gpt3_xl_request("gpt3-175b"));
  EXPECT_FALSE(result.feasible);
  EXPECT_NE(result.reason.find("out of memory"), std::string::npos) << result.reason;
}

}  // namespace
}  // namespace dnnsim
