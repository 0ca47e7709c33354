// Megatron's pipeline layout strings (planners/parallel/pipeline_layout.hpp) over the LLM zoo.
#include "planners/parallel/pipeline_layout.hpp"

#include <gtest/gtest.h>

#include "models/dnn/zoo.hpp"

namespace dnnsim {
namespace {

LayerModel deepseek(int mtp) {
  ModelOptions options;
  options.mtp_layers = mtp;
  return builtin_models().at("deepseek-v3").value(options);
}

std::size_t first_layer_of(const LayerModel& model, const std::string& prefix) {
  for (std::size_t l = 0; l < model.layers.size(); ++l)
    if (model.layers[l].name.rfind(prefix, 0) == 0) return l;
  return model.layers.size();
}

// The B200 DeepSeek-V3 recipe's layout (Megatron-Bridge v0.2.1): 16 virtual stages; the first holds the
// embedding and blocks 0-3, stages 1-14 four blocks each (4 + 14·4 = 60), the last block 60, the MTP
// layer and the loss (final norm, head, cross-entropy), which sit between block 60 and the MTP layer.
TEST(PipelineLayout, DeepSeekV3WithMtpOverSixteenStages) {
  const LayerModel model = deepseek(1);
  const LayoutSplit split = split_by_layout("Et*4|(t*4|)*14tmL", model, 16);
  ASSERT_TRUE(split.problem.empty()) << split.problem;
  ASSERT_EQ(split.virtual_stages.size(), 16u);
  EXPECT_EQ(split.virtual_stages[0].begin, 0u);
  EXPECT_EQ(split.virtual_stages[0].end, first_layer_of(model, "block4."));
  EXPECT_EQ(split.virtual_stages[1].begin, first_layer_of(model, "block4."));
  EXPECT_EQ(split.virtual_stages[1].end, first_layer_of(model, "block8."));
  EXPECT_EQ(split.virtual_stages[15].begin, first_layer_of(model, "block60."));
  EXPECT_EQ(split.virtual_stages[15].end, model.layers.size());
  // Spaces are ignored, and a group repeats as a whole.
  EXPECT_TRUE(split_by_layout("E t*4 | (t*4|)*14 t m L", model, 16).problem.empty());
}

// Layouts that do not fit are problems, each saying why: the MTP layer left out, a stage count other
// than the plan's, a block placed twice over, bad syntax.
TEST(PipelineLayout, RefusesLayoutsThatDoNotFit) {
  const LayerModel model = deepseek(1);
  EXPECT_NE(split_by_layout("Et*4|(t*4|)*14tL", model, 16).problem.find("MTP"), std::string::npos);
  EXPECT_NE(split_by_layout("Et*4|(t*4|)*14tmL", model, 8).problem.find("virtual stages"), std::string::npos);
  EXPECT_NE(split_by_layout("Et*5|(t*4|)*14tmL", model, 16).problem.find("more than"), std::string::npos);
  EXPECT_NE(split_by_layout("Et*|(t*4|)*14tmL", model, 16).problem.find("without a count"), std::string::npos);
  EXPECT_NE(split_by_layout("Et*4|(t*4|*14tmL", model, 16).problem.find("')'"), std::string::npos);
  EXPECT_NE(split_by_layout("Ex", model, 1).problem.find("unknown letter"), std::string::npos);
  EXPECT_TRUE(split_by_layout("Et*4|(t*4|)*14tmL", model, 16).virtual_stages.size() == 16);
  EXPECT_TRUE(split_by_layout("Et*4|(t*4|)*14tL", deepseek(0), 16).problem.empty());
}

// The scenario reader refuses bad syntax at the value (the uniform planner's `layout` option checks it);
// whether a layout fits the model is known only when planning.
TEST(PipelineLayout, SyntaxAloneIsCheckedWhenRead) {
  EXPECT_TRUE(layout_syntax_problem("Et*3|(t*4|)*14ttL").empty());
  EXPECT_TRUE(layout_syntax_problem("Et*99|L").empty());  // too many blocks: a planning problem
  EXPECT_NE(layout_syntax_problem("Et*3|(t*4|*14ttL").find("')'"), std::string::npos);
  EXPECT_NE(layout_syntax_problem("").find("empty"), std::string::npos);
  // A count past int (a fuzzer's mutation of a shipped layout) and a nest that multiplies out to
  // 2^21 letters (2^20 allowed, one per layer at most) are refused, not thrown or expanded.
  EXPECT_NE(layout_syntax_problem("Et*4|(t*4|)*9223372036854775808tmL").find("too large"), std::string::npos);
  EXPECT_NE(layout_syntax_problem("((t*1024)*1024)*2").find("more than"), std::string::npos);
  // Groups nest at most 64 deep: 20,000 nested parentheses overflowed the reader's stack (crasher
  // tests/fuzz/crashers/scenario/layout-nested-parentheses.yaml).
  const auto nested = [](int depth) { return std::string(depth, '(') + "t" + std::string(depth, ')'); };
  EXPECT_TRUE(layout_syntax_problem(nested(64)).empty());
  EXPECT_NE(layout_syntax_problem(nested(65)).find("nested deeper than 64"), std::string::npos);
  EXPECT_NE(layout_syntax_problem(nested(100000)).find("nested deeper than 64"), std::string::npos);
}

}  // namespace
}  // namespace dnnsim
