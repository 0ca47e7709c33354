// Hand-derived planner cases: Formula 2 and Algorithm 1 by hand, a DP-vs-straight decision, the
// uniform splits, L1 (pipeline-mapping ≤ dapple on a hierarchy), out-of-memory and bad requests;
// the search over block boundaries and its early stop.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "models/dnn/zoo.hpp"
#include "planners/parallel/planners.hpp"
#include "tests/support/planner_entries.hpp"
#include "tests/support/planner_fixtures.hpp"

namespace dnnsim {
namespace {

using testing::hierarchical_cluster;
using testing::make_request;
using testing::measured_layer;
using testing::random_model;

TEST(Formula2, PivotIsTheLastStageWhenItDominates) {
  // Stages (F, B, AR): (1, 2, 0.5), network (0.1, 0.1, 0), (2, 3, 0.2); M = 4.
  // Algorithm 1: Q = 2; s = 1: l1 = 3·0.2 = 0.6 ≤ l2 = 3·5 = 15; s = 0: l1 = 3·3 = 9 ≤ 15 + 0.2.
  // T_w = 1 + 0.1 + 2 = 3.1, T_s = 3·5 = 15, T_e = max(0.2 + 3, 0 + 3.1, 0.5 + 3 + 0.1 + 2) = 5.6.
  const std::vector<Formula2Stage> stages{{Seconds(1), Seconds(2), Seconds(0.5)},
                                          {Seconds(0.1), Seconds(0.1), Seconds(0)},
                                          {Seconds(2), Seconds(3), Seconds(0.2)}};
  EXPECT_EQ(pivot_stage(stages, 4), 2u);
  EXPECT_NEAR(formula2_latency(stages, 4).value(), 3.1 + 15 + 5.6, 1e-12);
}

TEST(Formula2, PivotMovesToAHeavyFirstStage) {
  // (3, 6, 0), (0, 0, 0), (1, 1, 0); M = 3. s = 0: l1 = 2·9 = 18 > l2 = 2·2 + 0 = 4, so Q = 0.
  // T_w = 3, T_s = 18, T_e = max(0 + 6, 0 − (6 + 0), 0 − (6 + 0 + 1)) = 6 (the paper's minus sign).
  const std::vector<Formula2Stage> stages{
      {Seconds(3), Seconds(6), Seconds(0)}, {Seconds(0), Seconds(0), Seconds(0)}, {Seconds(1), Seconds(1), Seconds(0)}};
  EXPECT_EQ(pivot_stage(stages, 3), 0u);
  EXPECT_NEAR(formula2_latency(stages, 3).value(), 27, 1e-12);
}

// Two identical layers (1 ms forward, 2 ms backward per sample, no weights, no activation) on 2 GPUs
// of one node; global batch 4 in M = 2 micro-batches of 2.
//  - DP: one stage, each replica 1 sample: F = 2 ms, B = 4 ms; no weights, so no gradient bucket to
//    all-reduce (the overlapped all-reduce skips empty buckets, as the lowering does): AR = 0,
//    L = F + (M−1)(F+B) + B = 12 ms, and the estimator's 1-stage timeline is M(F+B) = 12 ms too.
//  - straight [0,1) | [1,2): F = 2, B = 4 per stage, cut α = 1 µs each way; Q = 2,
//    L = 2 + 0.001 + 2 + 6 + (4 + 0.001 + 4) ≈ 18 ms. DAPPLE picks DP.
TEST(DapplePlanner, PicksDataParallelWithoutWeights) {
  LayerModel model;
  model.measured_on = "V100-16GB";
  model.layers = {measured_layer(1, 2, 0, 0), measured_layer(1, 2, 0, 0)};
  const PlanRequest request = make_request(model, hierarchical_cluster(1, 2), 4, 2);
  for (const std::string name : {"dapple", "pipeline-mapping"}) {
    const PlanResult result = testing::plan_with(name, request);
    ASSERT_TRUE(result.feasible) << result.reason;
    ASSERT_EQ(result.plan.stages.size(), 1u) << name;
    EXPECT_EQ(result.plan.stages[0].devices.size(), 2u);
    EXPECT_NEAR(result.predicted_iteration_time.value(), 12e-3, 1e-12);
    EXPECT_GT(result.statistics.candidates, 1u);
  }
}

// Two V100s in one node joined at 150 GB/s with no latency, so a cut of no bytes costs nothing and
// a ring all-reduce of S bytes over the two takes 2 steps of S/2: S / 150 GB/s.
ClusterView two_gpus_without_latency() {
  ClusterView cluster = hierarchical_cluster(1, 2);
  cluster.path_cost = [with_latency = cluster.path_cost](DeviceId a, DeviceId b) {
    return PathCost{Seconds(0), with_latency(a, b).bandwidth};
  };
  return cluster;
}

TEST(StageCost, TheOverlappedAllReduceCountsOnlyWhatOutlastsTheBackward) {
  // One stage of two layers on both GPUs, micro-batch of 2: each replica backpropagates 1 sample,
  // the top layer l1 in 1 ms, then l0 in 3 ms (B = 4 ms). 25 MB buckets: l1's 300 MB, then l0's
  // 75 MB, all-reduced in 2 ms and 0.5 ms. Bucket l1 is ready at 1 ms and done at 3; bucket l0 is
  // ready at 4 ms (the end of the backward) and done at 4.5: 0.5 ms outlast the backward. Without
  // overlap both follow the backward: 2.5 ms. The backward hides 2 ms.
  LayerModel model;
  model.measured_on = "V100-16GB";
  model.layers = {measured_layer(1, 3, 75, 0), measured_layer(1, 1, 300, 0)};
  PlanRequest request = make_request(model, two_gpus_without_latency(), 2, 1);
  const std::vector<DeviceId> both{0, 1};
  EXPECT_NEAR(StageCostModel(request).all_reduce({0, 2}, both).value(), 0.5e-3, 1e-12);
  request.overlap_all_reduce = false;
  EXPECT_NEAR(StageCostModel(request).all_reduce({0, 2}, both).value(), 2.5e-3, 1e-12);
}

TEST(StageCost, ATwoTensorCutCostsBothTransfers) {
  // Three layers where l2 reads l0's 3 MB output beside l1's 1 MB (a skip edge): the cut after l1
  // carries 4 MB per sample. Micro-batch of 2 from GPU 0 to GPU 1 (150 GB/s, no latency): 8 MB in
  // 53.3 µs, where the chain's 2 MB would take 13.3 µs.
  LayerModel model;
  model.measured_on = "V100-16GB";
  model.layers = {measured_layer(1, 2, 0, 3), measured_layer(1, 2, 0, 1), measured_layer(1, 2, 0, 1)};
  model.layers[1].cut_bytes = Bytes(4e6);
  const PlanRequest request = make_request(model, two_gpus_without_latency(), 2, 1);
  const std::vector<DeviceId> first{0}, second{1};
  EXPECT_NEAR(StageCostModel(request).cut(1, first, second).value(), 8e6 / 150e9, 1e-15);
  EXPECT_DOUBLE_EQ(StageCostModel(request).cut_bytes(1).value(), 8e6);
  EXPECT_NEAR(StageCostModel(request).cut(0, first, second).value(), 6e6 / 150e9, 1e-15);  // l0: its own 3 MB
}

// A near-tie that Formula 2 settles on its own error. Two layers on the two GPUs above: l0 with
// t_f = 0.5, t_b = 1 ms per sample and 375 MB of weights, l1 with 0.25 and 0.75 ms and none; no
// activations; global batch 8 in M = 4 micro-batches of 2. The search's plans: DP and the straight cut.
//  - straight [0,1) | [1,2), one GPU each, 2 samples: F0 = 1, B0 = 2, F1 = 0.5, B1 = 1.5 ms; no
//    all-reduce, free cuts. Formula 2: L(Q = 0) = F0 + 3(F0 + B0) + B0 = 12 ms, L(Q = 1) = F0 + F1
//    + 3(F1 + B1) + B0 + B1 = 11 ms, so 12 ms. Under 1F1B stage 0 runs F(mb0) 0–1, F(mb1) 1–2, but
//    mb0's gradient is back only at F0 + F1 + B1 = 3 ms: a 1 ms bubble Formula 2 leaves out. Then
//    each stage-0 backward waits for its gradient: B(mb0) 3–5, F(mb2) 5–6, B(mb1) 6–8, F(mb3) 8–9,
//    B(mb2) 9–11, B(mb3) 11–13. The estimator: 13 ms.
//  - DP [0,2) on both, 1 sample each: F = 0.75, B = 1.75 ms, M(F + B) = 10 ms; l0's 375 MB are one
//    bucket, ready at the end of the backward, so its all-reduce, 375 MB / 150 GB/s = 2.5 ms, is all
//    exposed: 12.5 ms for Formula 2 and for the estimator alike (no bubble in one stage).
// Formula 2 prefers the straight plan (12 < 12.5 ms), the estimator DP (12.5 < 13 ms).
TEST(DapplePlanner, ReRankingChoosesThePlanTheEstimatorPrefers) {
  LayerModel model;
  model.measured_on = "V100-16GB";
  model.layers = {measured_layer(0.5, 1, 375, 0), measured_layer(0.25, 0.75, 0, 0)};
  PlanRequest request = make_request(model, two_gpus_without_latency(), 8, 4);
  for (const std::string name : {"dapple", "pipeline-mapping"}) {
    SCOPED_TRACE(name);
    // Formula 2 alone (rerank 1): the straight plan.
    const PlanResult alone = testing::plan_with(name, request, {{"rerank", std::int64_t{1}}});
    ASSERT_TRUE(alone.feasible) << alone.reason;
    EXPECT_EQ(alone.plan.stages.size(), 2u);
    EXPECT_NEAR(alone.predicted_iteration_time.value(), 12e-3, 1e-12);
    EXPECT_TRUE(alone.reranked.empty());

    const PlanResult reranked = testing::plan_with(name, request, {{"rerank", std::int64_t{4}}});
    ASSERT_TRUE(reranked.feasible) << reranked.reason;
    ASSERT_EQ(reranked.plan.stages.size(), 1u);
    EXPECT_EQ(reranked.plan.stages[0].devices.size(), 2u);
    EXPECT_NEAR(reranked.predicted_iteration_time.value(), 12.5e-3, 1e-12);
    // Both kept plans, by Formula 2 first, each with both estimates.
    ASSERT_EQ(reranked.reranked.size(), 2u);
    EXPECT_EQ(reranked.reranked[0].plan.stages.size(), 2u);
    EXPECT_NEAR(reranked.reranked[0].formula2.value(), 12e-3, 1e-12);
    EXPECT_NEAR(reranked.reranked[0].estimate.value(), 13e-3, 1e-12);
    EXPECT_EQ(reranked.reranked[1].plan.stages.size(), 1u);
    EXPECT_NEAR(reranked.reranked[1].formula2.value(), 12.5e-3, 1e-12);
    EXPECT_NEAR(reranked.reranked[1].estimate.value(), 12.5e-3, 1e-12);
  }
}

TEST(UniformPlanner, EqualSplitsWithTheRemainderFirst) {
  // 10 layers in 4 parts: 10 = 4·2 + 2, the first two parts get 3.
  EXPECT_EQ(equal_split(10, 4), (std::vector<LayerRange>{{0, 3}, {3, 6}, {6, 8}, {8, 10}}));
  std::mt19937 random(1);
  PlanRequest request = make_request(random_model(random, 10), hierarchical_cluster(1, 4), 8, 4);
  const PlanResult plain = testing::plan_with("uniform", request, {{"stages", std::int64_t{2}}});
  ASSERT_TRUE(plain.feasible) << plain.reason;
  ASSERT_EQ(plain.plan.stages.size(), 2u);
  EXPECT_EQ(plain.plan.stages[0].chunks, (std::vector<LayerRange>{{0, 5}}));
  EXPECT_EQ(plain.plan.stages[1].devices, (std::vector<DeviceId>{2, 3}));
  // v = 2: 4 virtual stages of 3, 3, 2, 2 layers; chunk c of stage s is virtual stage 2c + s.
  request.chunks_per_stage = 2;
  const PlanResult interleaved = testing::plan_with("uniform", request, {{"stages", std::int64_t{2}}});
  ASSERT_TRUE(interleaved.feasible) << interleaved.reason;
  EXPECT_EQ(interleaved.plan.stages[0].chunks, (std::vector<LayerRange>{{0, 3}, {6, 8}}));
  EXPECT_EQ(interleaved.plan.stages[1].chunks, (std::vector<LayerRange>{{3, 6}, {8, 10}}));
  EXPECT_TRUE(interleaved.plan.problems(10, 4).empty());
  // 4 GPUs do not split into 3 stages.
  request.chunks_per_stage = 1;
  const PlanResult uneven = testing::plan_with("uniform", request, {{"stages", std::int64_t{3}}});
  EXPECT_FALSE(uneven.feasible);
  EXPECT_NE(uneven.reason.find("cannot be split evenly into 3 stages"), std::string::npos) << uneven.reason;
}

// Megatron-LM splits whole transformer blocks (SC'21 §2.2). gpt2-small is embedding, 12 blocks of 7
// sub-layers (block b: layers 1 + 7b … 7 + 7b), final_norm and head: 87 layers.
TEST(UniformPlanner, SplitsWholeBlocksWithEmbeddingFirstAndHeadLast) {
  const LayerModel gpt = builtin_models().at("gpt2-small").value(ModelOptions{});
  ASSERT_EQ(gpt.layers.size(), 88u);
  // 4 parts of 3 blocks: part k starts at block 3k (layer 1 + 21k), part 0 at 0 with the embedding,
  // the last ends at 88 with final_norm, head and cross_entropy (21 + 3 layers).
  EXPECT_EQ(uniform_split(gpt, 4), (std::vector<LayerRange>{{0, 22}, {22, 43}, {43, 64}, {64, 88}}));
  // 12 = 5·2 + 2 blocks: 3, 3, 2, 2, 2, starting at blocks 0, 3, 6, 8, 10 (layers 1, 22, 43, 57, 71).
  EXPECT_EQ(uniform_split(gpt, 5), (std::vector<LayerRange>{{0, 22}, {22, 43}, {43, 57}, {57, 71}, {71, 88}}));
  // More parts than blocks: the layers' equal split (88 = 13·6 + 10).
  EXPECT_EQ(uniform_split(gpt, 13), equal_split(88, 13));
  // A layer between blocks (T5's encoder norm) stays with the block before it; no blocks: layers.
  LayerModel named;
  for (const char* name : {"embed", "encoder.block0.a", "encoder.block0.b", "encoder.norm", "decoder.block0.a",
                           "decoder.block0.b", "head"})
    named.layers.push_back(Layer{name});
  EXPECT_EQ(uniform_split(named, 2), (std::vector<LayerRange>{{0, 4}, {4, 7}}));
  LayerModel plain;
  plain.layers = {Layer{"a"}, Layer{"b"}, Layer{"c"}};
  EXPECT_EQ(uniform_split(plain, 2), equal_split(3, 2));
  // The planner says it split by blocks (16 units: the blocks, embedding, final_norm, head, cross_entropy).
  PlanRequest request = make_request(gpt, hierarchical_cluster(1, 4), 8, 4);
  const PlanResult plan = testing::plan_with("uniform", request);
  ASSERT_TRUE(plan.feasible) << plan.reason;
  EXPECT_EQ(plan.plan.stages[3].chunks, (std::vector<LayerRange>{{64, 88}}));
  EXPECT_EQ(plan.searched_blocks, 16u);
}

TEST(Planners, RejectChunksExceptUniform) {
  std::mt19937 random(2);
  PlanRequest request = make_request(random_model(random, 6), hierarchical_cluster(1, 2), 4, 2);
  request.chunks_per_stage = 2;
  for (const std::string name : {"pipedream", "dapple", "pipeline-mapping"}) {
    const PlanResult result = testing::plan_with(name, request);
    EXPECT_FALSE(result.feasible) << name;
    EXPECT_NE(result.reason.find("chunks_per_stage = 2"), std::string::npos) << result.reason;
  }
}

TEST(Planners, OutOfMemoryIsAResultNamingTheMemory) {
  // Two layers of 4 GB of fp32 weights each: with Adam every GPU holds 16 B per parameter, 16 GB per
  // layer, more than a V100-16GB (16 GiB = 17.2 GB) can hold with the activations... and the whole
  // model needs 32 GB: no stage of one layer or more fits anywhere.
  LayerModel model;
  model.measured_on = "V100-16GB";
  model.layers = {measured_layer(1, 2, 5000, 1), measured_layer(1, 2, 5000, 1)};
  const PlanRequest request = make_request(model, hierarchical_cluster(1, 2), 4, 2);
  for (const auto& entry : builtin_planners().entries()) {
    // The transformer planners (megatron, megatron-5d) cannot split this model: their own tests.
    if (!entry.value->model_problem(model).empty()) continue;
    const PlanResult result = testing::plan_with(entry.name, request);
    EXPECT_FALSE(result.feasible) << entry.name;
    EXPECT_NE(result.reason.find("out of memory"), std::string::npos) << entry.name << ": " << result.reason;
  }
}

TEST(PipeDreamPlanner, StashedWeightsPushAPlanOutOfMemoryUnderPipeDreamAsync) {
  // Two layers of Ψ = 0.9e9 fp32 parameters (3.6 GB) on 2 V100-16GB (16 GiB = 17.18 GB). Under 1f1b
  // a layer per GPU fits: fp32 Adam is 16 B per parameter, 14.4 GB, plus tiny activations (one
  // stage on both GPUs would hold 28.8 GB). Under pipedream-async stage 0 of 2 also keeps p − i = 2
  // stashed fp32 weight versions, 2 × 3.6 = 7.2 GB: 21.6 GB, and even a last stage's one version
  // gives 18 GB. No plan fits, and the planner says out of memory.
  LayerModel model;
  model.measured_on = "V100-16GB";
  model.layers = {measured_layer(1, 2, 3600, 1), measured_layer(1, 2, 3600, 1)};
  PlanRequest request = make_request(model, hierarchical_cluster(1, 2), 4, 2);
  const PlanResult flushed = testing::plan_with("pipedream", request);
  ASSERT_TRUE(flushed.feasible) << flushed.reason;
  EXPECT_EQ(flushed.plan.stages.size(), 2u);
  request.schedule = testing::make_schedule("pipedream-async");
  const PlanResult asynchronous = testing::plan_with("pipedream", request);
  EXPECT_FALSE(asynchronous.feasible);
  EXPECT_NE(asynchronous.reason.find("out of memory"), std::string::npos) << asynchronous.reason;
}

TEST(StageCost, TheEstimateUnderPipeDreamAsyncIsTheSteadyState) {
  // Two single-GPU stages of one layer each, one sample per micro-batch, nothing crossing the cut
  // but its 1 µs latency: stage 0 takes 1 + 2 ms a micro-batch, stage 1 2 + 4 ms. Under 1f1b an
  // iteration of M = 4 is a fill and a drain around stage 1's four pairs: stage 1 starts at 1 ms +
  // 1 µs and runs 24 ms, then its last gradient returns (1 µs) to stage 0's last backward (2 ms):
  // 27.002 ms. Under pipedream-async, once warm, the slowest stage runs back to back (stage 0 is
  // p − i = 2 micro-batches ahead and twice as fast): M × 6 ms = 24 ms per iteration.
  LayerModel model;
  model.measured_on = "V100-16GB";
  model.measured_batch = 1;
  model.layers = {measured_layer(1, 2, 1, 0), measured_layer(2, 4, 1, 0)};
  PlanRequest request = make_request(model, hierarchical_cluster(1, 2), 4, 4);
  const std::vector<StageSpec> stages = {StageSpec{{0, 1}, {0}}, StageSpec{{1, 2}, {1}}};
  {
    const StageCostModel cost(request);
    EXPECT_NEAR(estimate_synchronous(cost, stages).value(), 27.002e-3, 1e-12);
  }
  request.schedule = testing::make_schedule("pipedream-async");
  const StageCostModel cost(request);
  EXPECT_NEAR(estimate_synchronous(cost, stages).value(), 24e-3, 1e-12);
}

// L1 (papers-parallelism.md §9): on a 2-node hierarchy, pipeline-mapping's latency is at most
// DAPPLE's under the same cost model. Its islands are the nodes, so its placements include DAPPLE's
// and it keys states by the exact GPU set; the DP being a heuristic, this is checked, not implied.
TEST(PipelineMappingPlanner, NoSlowerThanDappleOnAHierarchy) {
  std::mt19937 random(11);
  for (int trial = 0; trial < 10; ++trial) {
    const PlanRequest request = make_request(random_model(random, 8), hierarchical_cluster(2, 2), 16, 4);
    const PlanResult dapple = testing::plan_with("dapple", request);
    const PlanResult mapping = testing::plan_with("pipeline-mapping", request);
    ASSERT_TRUE(dapple.feasible && mapping.feasible);
    EXPECT_LE(mapping.predicted_iteration_time.value(), dapple.predicted_iteration_time.value() * (1 + 1e-12))
        << "trial " << trial;
  }
}

// Islands that a symmetry of the bandwidth matrix swaps share a state key; others keep their place.
// Three nodes of 2 GPUs on one switch: taking a GPU of node 0 or of node 2 leaves the same future.
// With node 2's uplink at half the bandwidth, every node sees the others over two path costs, so
// the key tells all three apart (the rule only merges islands with one path cost out).
TEST(PipelineMappingPlanner, StateKeysMergeOnlyInterchangeableIslands) {
  const std::vector<bool> first_of_node0 = {true, false, false, false, false, false};
  const std::vector<bool> first_of_node1 = {false, false, true, false, false, false};
  const std::vector<bool> first_of_node2 = {false, false, false, false, true, false};
  const ClusterView flat = hierarchical_cluster(3, 2);
  const BandwidthPlacement on_flat(flat);
  EXPECT_EQ(on_flat.state_key(first_of_node0), on_flat.state_key(first_of_node2));
  ClusterView slow_node2 = hierarchical_cluster(3, 2);
  slow_node2.path_cost = [fast = flat.path_cost](DeviceId a, DeviceId b) {
    PathCost path = fast(a, b);
    if (a / 2 != b / 2 && (a / 2 == 2 || b / 2 == 2)) path.bandwidth = path.bandwidth / 2.0;
    return path;
  };
  const BandwidthPlacement on_slow(slow_node2);
  EXPECT_NE(on_slow.state_key(first_of_node0), on_slow.state_key(first_of_node2));
  EXPECT_NE(on_slow.state_key(first_of_node1), on_slow.state_key(first_of_node2));
  EXPECT_NE(on_slow.state_key(first_of_node0), on_slow.state_key(first_of_node1));
}

}  // namespace
}  // namespace dnnsim

namespace dnnsim {
namespace {

using testing::hierarchical_cluster;
using testing::make_request;
using testing::random_model;

// gpt2-small is `embedding`, 12 blocks of 7 sub-layers ("block<i>.attn.norm" … "block<i>.mlp.fc2"),
// `final_norm`, `head` and `cross_entropy`: 88 layers, 16 units, boundaries 0, 1, 8, …, 78, 85, 86,
// 87, 88.
TEST(PlannerScale, BlockBoundariesGroupLayersByTheirNamePrefix) {
  const LayerModel model = builtin_models().at("gpt2-small").value(ModelOptions{});
  ASSERT_EQ(model.layers.size(), 88u);
  std::vector<std::size_t> expected{0};
  for (std::size_t b = 0; b <= 12; ++b) expected.push_back(1 + 7 * b);
  expected.push_back(86);
  expected.push_back(87);
  expected.push_back(88);
  EXPECT_EQ(block_boundaries(model), expected);
  // Only "block<N>" components group: GNMT's "encoder.lstm0", "encoder.lstm1" stay apart, T5's
  // "decoder.block0.*" group, and a name that is only "block3" has nothing below it to group.
  LayerModel named;
  for (const char* name : {"encoder.lstm0", "encoder.lstm1", "decoder.block0.attn.q", "decoder.block0.mlp.fc1",
                           "decoder.block1.attn.q", "block3", "block3"})
    named.layers.push_back(Layer{name});
  EXPECT_EQ(block_boundaries(named), (std::vector<std::size_t>{0, 1, 2, 4, 5, 6, 7}));
}

// With boundaries, every stage of dapple's, pipeline-mapping's and pipedream's plans begins and ends on one.
// Random 12-layer chain, blocks of 3 layers, 2 nodes × 2 V100.
TEST(PlannerScale, SearchesCutOnlyAtBoundaries) {
  std::mt19937 random(7);
  PlanRequest request = make_request(random_model(random, 12), hierarchical_cluster(2, 2), 16, 8);
  request.boundaries = {0, 3, 6, 9, 12};
  for (const std::string name : {"dapple", "pipeline-mapping", "pipedream"}) {
    const PlanResult result = testing::plan_with(name, request);
    ASSERT_TRUE(result.feasible) << result.reason;
    EXPECT_EQ(result.searched_blocks, 4u) << name;
    for (const PipelineStage& stage : result.plan.stages)
      for (const LayerRange& range : stage.chunks) {
        EXPECT_EQ(range.begin % 3, 0u) << name;
        EXPECT_EQ(range.end % 3, 0u) << name;
      }
  }
}

// A progress callback that says stop at once: the search ends before scoring anything and says why.
// One that stops at the second call keeps what the first prefix's transitions found.
TEST(PlannerScale, ProgressCanStopTheSearchWithTheBestPlanSoFar) {
  std::mt19937 random(7);
  PlanRequest request = make_request(random_model(random, 12), hierarchical_cluster(2, 2), 16, 8);
  request.progress = [](double) { return false; };
  PlanResult stopped = testing::plan_with("dapple", request);
  EXPECT_TRUE(stopped.stopped_early);
  EXPECT_FALSE(stopped.feasible);
  EXPECT_NE(stopped.reason.find("stopped before it found a plan"), std::string::npos);
  int calls = 0;
  request.progress = [&calls](double) { return ++calls < 2; };
  const PlanResult early = testing::plan_with("dapple", request);
  EXPECT_TRUE(early.stopped_early);
  ASSERT_TRUE(early.feasible) << early.reason;
  request.progress = {};
  const PlanResult full = testing::plan_with("dapple", request);
  EXPECT_FALSE(full.stopped_early);
  EXPECT_LE(full.predicted_iteration_time.value(), early.predicted_iteration_time.value());
}

// pipeline-mapping runs two searches (bandwidth placements and dapple's) at once: the bar is the mean
// of their fractions, so it never goes back (it used to restart at 0% for the second search).
TEST(PlannerScale, PipelineMappingProgressDoesNotRestart) {
  std::mt19937 random(7);
  PlanRequest request = make_request(random_model(random, 12), hierarchical_cluster(2, 2), 16, 8);
  std::vector<double> fractions;
  request.progress = [&fractions](double fraction) {
    fractions.push_back(fraction);
    return true;
  };
  ASSERT_TRUE(testing::plan_with("pipeline-mapping", request).feasible);
  ASSERT_FALSE(fractions.empty());
  EXPECT_TRUE(std::is_sorted(fractions.begin(), fractions.end()));
  EXPECT_GE(fractions.front(), 0.0);
  EXPECT_GE(fractions.back(), 0.5);  // both searches near their ends
  EXPECT_LT(fractions.back(), 1.0);
}

// A plan device of a tensor × context group is named by the group's first and last GPUs, a run of
// devices by the run's first GPU and its last: with 4 GPUs per group, device 1 is GPUs 4–7 and devices
// 2–3 GPUs 8–15; device 5 lies past the 16 names, so its GPUs 20–23 keep their fallback names.
TEST(PipelinePlan, GroupsAreNamedByTheirFirstAndLastGpus) {
  std::vector<std::string> gpus;
  for (int n = 0; n < 2; ++n)
    for (int g = 0; g < 8; ++g) gpus.push_back(fmt::format("node{}/gpu{}", n, g));
  const DeviceNames groups(gpus, 4);
  EXPECT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups.name(1), "node0/gpu4…node0/gpu7");
  EXPECT_EQ(describe_devices({0, 2, 3}, groups), "node0/gpu0…node0/gpu3,node1/gpu0…node1/gpu7");
  EXPECT_EQ(describe_devices({5}, groups), "#20…#23");
  const DeviceNames single(gpus);
  EXPECT_EQ(single.name(9), "node1/gpu1");
  EXPECT_EQ(describe_devices({0, 1, 9}, single), "node0/gpu0…node0/gpu1,node1/gpu1");
}

}  // namespace
}  // namespace dnnsim
