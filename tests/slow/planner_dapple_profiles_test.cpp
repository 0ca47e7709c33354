// DAPPLE's planner on the profiles measured by the DAPPLE authors (data/profiles/dapple), 2 × 8
// V100-16GB with NVLink inside and 25 Gbps between (Config-A), against Table 4 of the paper
// (papers-parallelism.md §9 D2). Micro-batches of the profiling batch size (M = GBS / pbs), fp32
// Adam, 1F1B (DAPPLE policy A) in-flight counts. Only the decisions the planner reproduces are
// asserted; docs/planners.md records the others as known gaps with the reason.
#include <gtest/gtest.h>

#include "models/dnn/profile_graph.hpp"
#include "models/dnn/zoo.hpp"
#include "planners/parallel/planners.hpp"
#include "tests/support/dapple_profiles.hpp"
#include "tests/support/planner_entries.hpp"
#include "tests/support/planner_fixtures.hpp"

namespace dnnsim {
namespace {

PlanResult plan_profile(const std::string& file, int global_batch, int profile_batch) {
  const LayerModel model = load_profile_graph(testing::dapple_profile(file));
  const PlanRequest request =
      testing::make_request(model, testing::hierarchical_cluster(2, 8), global_batch, global_batch / profile_batch);
  const PlanResult result = testing::plan_with("dapple", request);
  std::cout << file << " GBS " << global_batch << ": "
            << (result.feasible ? result.plan.describe(request.cluster.names()) : result.reason)
            << ", L = " << result.predicted_iteration_time.value() << " s, " << result.statistics.candidates
            << " candidates, " << result.statistics.wall_seconds << " s\n";
  return result;
}

TEST(DappleProfiles, Gnmt16) {
  const PlanResult result = plan_profile("gnmt-16-pbs-64.txt", 1024, 64);
  ASSERT_TRUE(result.feasible) << result.reason;
}

TEST(DappleProfiles, Bert48) {
  const PlanResult result = plan_profile("bert-48-pbs-2.txt", 64, 2);
  ASSERT_TRUE(result.feasible) << result.reason;
}

// L1 (papers-parallelism.md §9) on the DAPPLE BERT-48 profile, 2 × 8: pipeline-mapping's predicted
// latency is at most dapple's under the same cost model, since it also searches dapple's machine
// placements and keeps the better plan (the case where the bandwidth placements alone lost, 0.451 s
// against 0.280 s, before).
TEST(DappleProfiles, PipelineMappingNoSlowerThanDappleOnBert48) {
  const LayerModel model = load_profile_graph(testing::dapple_profile("bert-48-pbs-2.txt"));
  const PlanRequest request = testing::make_request(model, testing::hierarchical_cluster(2, 8), 64, 32);
  const PlanResult dapple = testing::plan_with("dapple", request);
  const PlanResult mapping = testing::plan_with("pipeline-mapping", request);
  ASSERT_TRUE(dapple.feasible && mapping.feasible);
  EXPECT_LE(mapping.predicted_iteration_time.value(), dapple.predicted_iteration_time.value() * (1 + 1e-12));
}

TEST(DappleProfiles, ResNet50) {
  const LayerModel model = builtin_models().at("resnet50").value(ModelOptions{});
  const PlanRequest request = testing::make_request(model, testing::hierarchical_cluster(2, 8), 2048, 16);
  const PlanResult result = testing::plan_with("dapple", request);
  ASSERT_TRUE(result.feasible) << result.reason;
  std::cout << "resnet50 GBS 2048: " << result.plan.describe(request.cluster.names()) << "\n";
}

}  // namespace
}  // namespace dnnsim
