// The planners against brute-force oracles on small instances (≤ 8 layers × 4 GPUs): every
// contiguous partition, with every GPU assignment the planner's search space allows, scored with the
// planner's own objective through the shared stage costs (planners/parallel/stage_cost.hpp).
#include <gtest/gtest.h>

#include <functional>
#include <iostream>
#include <limits>

#include "planners/parallel/planners.hpp"
#include "tests/support/planner_entries.hpp"
#include "tests/support/planner_fixtures.hpp"

namespace dnnsim {
namespace {

using testing::hierarchical_cluster;
using testing::make_request;
using testing::random_model;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Every plan of the Formula 2 planners' space: stages cut anywhere; every stage but the last on a
// group the policy proposes after the previous stage, the last on all unused GPUs (DAPPLE §4.2).
// The minimum Formula 2 latency among the plans that fit in memory.
double formula2_oracle(const StageCostModel& cost, const StagePlacementPolicy& policy) {
  const std::size_t layers = cost.layer_count();
  const int devices = static_cast<int>(cost.device_count());
  const int micro_batch = cost.micro_batch_size();
  double best = kInfinity;
  std::vector<StageSpec> stages;
  std::function<void(std::size_t, std::vector<bool>&, int)> extend = [&](std::size_t begin, std::vector<bool>& used,
                                                                         int used_count) {
    std::vector<DeviceId> rest;
    for (int d = 0; d < devices; ++d)
      if (!used[d]) rest.push_back(d);
    if (static_cast<int>(rest.size()) <= micro_batch) {
      stages.push_back(StageSpec{{begin, layers}, rest});
      const PlanEvaluation evaluation = evaluate_synchronous(cost, stages);
      if (evaluation.problem.empty()) best = std::min(best, evaluation.latency.value());
      stages.pop_back();
    }
    const std::span<const DeviceId> previous = stages.empty() ? std::span<const DeviceId>() : stages.back().devices;
    for (int count = 1; count < devices - used_count && count <= micro_batch; ++count)
      for (const std::vector<DeviceId>& group : policy.place(used, previous, count))
        for (std::size_t end = begin + 1; end < layers; ++end) {
          stages.push_back(StageSpec{{begin, end}, group});
          for (DeviceId d : group) used[d] = true;
          extend(end, used, used_count + count);
          for (DeviceId d : group) used[d] = false;
          stages.pop_back();
        }
  };
  std::vector<bool> used(devices, false);
  extend(0, used, 0);
  return best;
}

struct Instance {
  int layers, nodes, per_node, global_batch, micro_batches;
};

std::vector<Instance> small_instances() {
  return {{4, 1, 4, 8, 2}, {6, 2, 2, 8, 4}, {8, 1, 4, 16, 4}, {5, 2, 2, 4, 2}, {7, 4, 1, 8, 8}, {8, 2, 2, 32, 8}};
}

void expect_plan_matches(const PlanResult& result, const PlanRequest& request) {
  ASSERT_TRUE(result.feasible) << result.reason;
  EXPECT_TRUE(result.plan.problems(request.model.layers.size(), request.cluster.size()).empty());
}

// DAPPLE's and pipeline-mapping's DP keeps a small Pareto set of prefixes per state (T_PL(j, m, g),
// formula2_search.cpp), by default at most 2 (a beam); the oracle keeps all. With the pivot as the
// largest L(Q) the dominance between prefixes is exact for latency; on these 30 instances the
// default beam reaches the oracle's minimum on every one (measured at widths 2, 3, 4 and 8, so it is
// asserted), the paper's one prefix per state on 28 (docs/planners.md). Also asserted: the plan is valid and achieves
// the predicted time under the shared model.
void check_formula2_planner(const std::string& planner,
                            const std::function<std::unique_ptr<StagePlacementPolicy>(const ClusterView&)>& policy_for,
                            int& matched, int& total,
                            std::int64_t prefixes_per_state = SearchOptions{}.prefixes_per_state) {
  std::mt19937 random(20240611);
  for (const Instance& instance : small_instances())
    for (int trial = 0; trial < 5; ++trial) {
      PlanRequest request =
          make_request(random_model(random, instance.layers), hierarchical_cluster(instance.nodes, instance.per_node),
                       instance.global_batch, instance.micro_batches);
      // The Formula 2 search alone (rerank 1; the re-ranking: planner_cases_test.cpp).
      const PlanResult result =
          testing::plan_with(planner, request, {{"rerank", std::int64_t{1}}, {"prefixes", prefixes_per_state}});
      expect_plan_matches(result, request);
      const StageCostModel cost(request);
      const auto policy = policy_for(request.cluster);
      const double oracle = formula2_oracle(cost, *policy);
      // The plan achieves the predicted time under the shared model.
      std::vector<StageSpec> stages;
      for (const PipelineStage& stage : result.plan.stages) stages.push_back(StageSpec{stage.chunks[0], stage.devices});
      EXPECT_NEAR(evaluate_synchronous(cost, stages).latency.value(), result.predicted_iteration_time.value(), 1e-12);
      EXPECT_GE(result.predicted_iteration_time.value(), oracle * (1 - 1e-12));
      ++total;
      if (result.predicted_iteration_time.value() <= oracle * (1 + 1e-12)) ++matched;
    }
}

TEST(DapplePlanner, MatchesTheExhaustiveSearchOfItsSpace) {
  int matched = 0, total = 0;
  check_formula2_planner(
      "dapple", [](const ClusterView& c) { return std::make_unique<MachinePlacement>(c); }, matched, total);
  EXPECT_EQ(matched, total);
}

TEST(PipelineMappingPlanner, MatchesTheExhaustiveSearchOfItsSpace) {
  int matched = 0, total = 0;
  check_formula2_planner(
      "pipeline-mapping", [](const ClusterView& c) { return std::make_unique<BandwidthPlacement>(c); }, matched, total);
  EXPECT_EQ(matched, total);
}

// `prefixes: 1`, the paper's DP (an opt-in heuristic for large searches): still a valid plan that
// achieves its prediction and is no better than the oracle (check_formula2_planner asserts both);
// how often it reaches the minimum is measured, not asserted (docs/planners.md records it).
TEST(DapplePlanner, OnePrefixPerStateIsTheHeuristicPapersDp) {
  int matched = 0, total = 0;
  check_formula2_planner(
      "dapple", [](const ClusterView& c) { return std::make_unique<MachinePlacement>(c); }, matched, total, 1);
  EXPECT_EQ(total, 30);
  ::testing::Test::RecordProperty("matched_oracle", matched);
  std::cout << "one prefix per state: at the oracle's minimum on " << matched << " of " << total << "\n";
}

// PipeDream's objective on one level of `devices` GPUs at `bandwidth`: every contiguous partition
// with every replication count summing to `devices` (PipeDream uses all workers), scored by
// max(stage T^1, cut 2a/B); the minimum.
double pipedream_one_level_oracle(const StageCostModel& cost, int devices, BytesPerSecond bandwidth) {
  const std::size_t layers = cost.layer_count();
  double oracle = kInfinity;
  std::function<void(std::size_t, int, double)> extend = [&](std::size_t begin, int left, double slowest) {
    for (int r = 1; r <= left; ++r)
      for (std::size_t end = begin + 1; end <= layers; ++end) {
        double time = std::max(slowest, pipedream_stage_time(cost, {begin, end}, 0, r, bandwidth).value());
        if (end == layers) {
          if (r == left) oracle = std::min(oracle, time);
          continue;
        }
        time = std::max(time, pipedream_cut_time(cost, end - 1, bandwidth).value());
        if (r < left) extend(end, left - r, time);
      }
  };
  extend(0, devices, 0);
  return oracle;
}

// PipeDream on one node of 4 GPUs (one level) against the exhaustive search.
TEST(PipeDreamPlanner, MatchesTheExhaustiveSearchOnOneLevel) {
  std::mt19937 random(7);
  for (int layers : {3, 5, 8})
    for (int trial = 0; trial < 6; ++trial) {
      const PlanRequest request = make_request(random_model(random, layers), hierarchical_cluster(1, 4), 8, 2);
      const StageCostModel cost(request);
      const BytesPerSecond bandwidth(150e9);
      const double oracle = pipedream_one_level_oracle(cost, 4, bandwidth);
      const PlanResult result = testing::plan_with("pipedream", request);
      expect_plan_matches(result, request);
      // The planner's objective, recomputed from its plan.
      double objective = 0;
      const auto& stages = result.plan.stages;
      for (std::size_t s = 0; s < stages.size(); ++s) {
        objective = std::max(objective, pipedream_stage_time(cost, stages[s].chunks[0], 0,
                                                             static_cast<int>(stages[s].devices.size()), bandwidth)
                                            .value());
        if (s + 1 < stages.size())
          objective = std::max(objective, pipedream_cut_time(cost, stages[s].chunks[0].end - 1, bandwidth).value());
      }
      EXPECT_NEAR(objective, oracle, oracle * 1e-12);
      // Synchronous iteration: (M + S − 1) periods of the slowest stage.
      EXPECT_NEAR(result.predicted_iteration_time.value(), oracle * (2 + stages.size() - 1), oracle * 1e-12);
      // Under pipedream-async, PipeDream's own steady state: no fill or drain per iteration, so an
      // iteration of M = 2 micro-batches is 2 periods of the slowest stage. The DP and its optimum
      // are the same (the weights stashed on these small stages fit either way).
      PlanRequest asynchronous = request;
      asynchronous.schedule = testing::make_schedule("pipedream-async");
      const PlanResult steady = testing::plan_with("pipedream", asynchronous);
      expect_plan_matches(steady, asynchronous);
      EXPECT_EQ(steady.plan.stages, result.plan.stages);
      EXPECT_NEAR(steady.predicted_iteration_time.value(), oracle * 2, oracle * 1e-12);
      EXPECT_EQ(steady.cost_model, "PipeDream slowest stage × M (asynchronous steady state)");
    }
}

// With `flat`, two nodes of two GPUs are one level of 4 at the slowest path (the 25 Gb/s between
// nodes, 3.125 GB/s): the same optimum as the exhaustive one-level search at that bandwidth, which
// may give a stage GPUs of both nodes (the two-level DP gives outer stages whole nodes).
TEST(PipeDreamPlanner, FlatIsOneLevelOverAllGpusAtTheSlowestPath) {
  std::mt19937 random(5);
  for (int trial = 0; trial < 6; ++trial) {
    PlanRequest request = make_request(random_model(random, 6), hierarchical_cluster(2, 2), 8, 2);
    const StageCostModel cost(request);
    const double oracle = pipedream_one_level_oracle(cost, 4, BytesPerSecond(3.125e9));
    const PlanResult result = testing::plan_with("pipedream", request, {{"flat", true}});
    expect_plan_matches(result, request);
    EXPECT_NEAR(result.predicted_iteration_time.value(), oracle * (2 + result.plan.stages.size() - 1), oracle * 1e-12)
        << "trial " << trial;
  }
}

}  // namespace
}  // namespace dnnsim
