// The parallelism keys of a `kind: pipeline` workload (docs/megatron.md, docs/collectives.md): tensor and
// sequence parallelism, the Megatron planner's search space, tensor_parallel_fidelity (mirrored ranks)
// and data_parallel_fidelity (symmetric windows of replicas), read and planned without an engine.
//
// Line numbers: tests/support/pipeline_scenarios.hpp (the body's first line is line 11).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "sim/scenario/scenario.hpp"
#include "sim/workloads/chakra/chakra_kind.hpp"
#include "sim/workloads/pipeline/pipeline_workload.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/pipeline_scenarios.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

using namespace testing;
using namespace testing::pipeline_scenarios;

// Exporting the scenario `yaml` to Chakra is one error whose message contains `remedy`.
void expect_chakra_export_refused(const std::string& yaml, const std::string& remedy) {
  const Scenario scenario = load(yaml);
  const auto errors =
      diagnostics_thrown_by([&] { (void)export_scenario_chakra(scenario, testing::test_dir().string()); });
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_NE(errors[0].message.find(remedy), std::string::npos) << errors[0].message;
}

// ---- tensor parallelism (docs/megatron.md) --------------------------------------------------------

// A GPT-like stack of 2 blocks, hidden 64 and 4 heads (line 11), 4 sequences in 2 micro-batches,
// 1F1B (lines 12–14), then `rest` from line 15.
std::string tiny_transformer(const std::string& rest) {
  return pipeline(R"(  model: {name: tiny, transformer: {layers: 2, hidden: 64, heads: 4, seq: 16, vocab: 128}}
  global_batch: 4
  micro_batches: 2
  schedule: 1f1b
)" + rest);
}

// The uniform planner (line 15), then the tensor-parallel keys from line 16.
std::string tensor_parallel(const std::string& keys) {
  return tiny_transformer("  planner: {name: uniform, stages: 1}\n" + keys);
}

TEST(ScenarioPipeline, TensorParallelPlansOverGroups) {
  const Scenario scenario =
      load(tensor_parallel("  tensor_parallel: 2\n  sequence_parallel: true\n  recompute: selective\n"));
  const PipelineWorkloadSpec& spec = spec_of(scenario);
  EXPECT_EQ(spec.tensor_parallel.degree, 2);
  EXPECT_TRUE(spec.tensor_parallel.sequence_parallel);
  EXPECT_EQ(spec.tensor_parallel.recompute, Recompute::selective);
  // 4 GPUs in groups of 2: one stage replicated on the 2 groups (plan devices 0 and 1).
  const PipelineSetup setup = plan_pipeline(scenario, spec);
  ASSERT_TRUE(setup.report.plan.feasible) << setup.report.plan.reason;
  EXPECT_EQ(setup.report.plan.plan.stages.front().devices, (std::vector<DeviceId>{0, 1}));
  EXPECT_EQ(setup.workload.ranks(), 2);
}

// 4 heads: t = 3 divides neither the heads nor the hidden size 64, and does not divide the 4 GPUs.
TEST(ScenarioPipeline, TensorParallelThatDoesNotDivideIsLocated) {
  expect_errors(errors_of(tensor_parallel("  tensor_parallel: 3\n")),
                {{16, 20, "does not divide the cluster's 4 GPUs"},
                 {16, 20, "does not divide the 4 attention heads"},
                 {16, 20, "does not divide the hidden size 64"}});
}

TEST(ScenarioPipeline, TensorParallelLargerThanTheClusterIsLocated) {
  const auto errors = errors_of(tensor_parallel("  tensor_parallel: 8\n"));
  ASSERT_GE(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 16, 20, "larger than the cluster's 4 GPUs");
}

// A transformer's sizes (line 11): hidden 64 over 5 heads is one error, at `heads` (column 64); a size
// that is no integer is one error at its own key (column 53), not a second "hidden 1 is not a multiple
// of heads 4" about a default standing in for it.
TEST(ScenarioPipeline, BadTransformerSizesAreLocatedOnce) {
  const auto errors_with = [](const std::string& sizes) {
    return errors_of(pipeline("  model: {name: t, transformer: {layers: 2, " + sizes +
                              ", seq: 16}}\n  global_batch: 4\n  micro_batches: 2\n  schedule: 1f1b\n"
                              "  planner: {name: uniform, stages: 1}\n"));
  };
  expect_errors(errors_with("hidden: 64, heads: 5"), {{11, 64, "hidden 64 is not a multiple of heads 5"}});
  expect_errors(errors_with("hidden: wide, heads: 4"), {{11, 53, "expected an integer"}});
}

// The megatron planner's search space (line 15): the recomputation modes it may choose and whether its
// tensor-parallel candidates use sequence parallelism.
TEST(ScenarioPipeline, TheMegatronPlannersSearchSpace) {
  const PipelineWorkloadSpec spec = spec_of(
      load(tiny_transformer("  planner: {name: megatron, recompute: [full, none], sequence_parallel: false}\n")));
  EXPECT_EQ(spec.planner_options.choice_list("recompute"), (std::vector<std::string>{"full", "none"}));
  EXPECT_FALSE(spec.planner_options.flag("sequence_parallel"));
  const PipelineWorkloadSpec unset = spec_of(load(tiny_transformer("  planner: megatron\n")));
  EXPECT_TRUE(unset.planner_options.choice_list("recompute").empty());  // every mode
  EXPECT_FALSE(unset.planner_options.has("sequence_parallel"));
}

TEST(ScenarioPipeline, TheMegatronPlannersSearchSpaceErrorsAreLocated) {
  // "  planner: {name: megatron, recompute: [full, sometimes, full]}": sometimes at column 47, the
  // second full at 58.
  expect_errors(errors_of(tiny_transformer("  planner: {name: megatron, recompute: [full, sometimes, full]}\n")),
                {{15, 47, "option 'recompute' of planner 'megatron': unknown recompute 'sometimes'"},
                 {15, 58, "option 'recompute' of planner 'megatron': 'full' is listed twice"}});
  // Only the megatron planner takes either: recompute at column 27, sequence_parallel at 46.
  expect_errors(
      errors_of(pipeline(valid_head() + "  planner: {name: dapple, recompute: [full], sequence_parallel: false}\n")),
      {{15, 27, "planner 'dapple' has no option 'recompute' (an option of megatron)"},
       {15, 46, "planner 'dapple' has no option 'sequence_parallel' (an option of megatron)"}});
}

TEST(ScenarioPipeline, SequenceParallelNeedsTensorParallel) {
  expect_single_error(tensor_parallel("  sequence_parallel: true\n"), 16, 22, "needs tensor_parallel of at least 2");
  // A tensor_parallel refused where it is written (line 16, the value at column 20) is the one error,
  // not also judged by the 1 in its place.
  expect_single_error(tensor_parallel("  tensor_parallel: -1\n  sequence_parallel: true\n"), 16, 20,
                      "expected an integer in [1, 65536], got -1");
}

// ---- tensor_parallel_fidelity: group (docs/megatron.md, "Tensor-parallel fidelity") ---------------

// kCluster with a NIC per GPU: the t = 2 groups fill their nodes and reach the non-blocking switch on
// links of their own, so ranks 1 can mirror ranks 0. Lines as tensor_parallel().
std::string mirrored(const std::string& keys) {
  std::string yaml = tensor_parallel(keys);
  const std::string nic = R"(latency: "5us"})";
  yaml.replace(yaml.find(nic), nic.size(), R"(latency: "5us", per_gpu: true})");
  return yaml;
}

TEST(ScenarioPipeline, GroupFidelityMirrorsRanksOnAClusterWithANicPerGpu) {
  const Scenario scenario = load(mirrored("  tensor_parallel: 2\n  tensor_parallel_fidelity: group\n"));
  const PipelineWorkloadSpec& spec = spec_of(scenario);
  EXPECT_EQ(spec.rank_fidelity, PipelineWorkloadSpec::RankFidelity::group);
  const PipelineSetup setup = plan_pipeline(scenario, spec);
  EXPECT_TRUE(setup.workload.mirror_ranks);
  EXPECT_TRUE(setup.report.mirror_ranks);
  EXPECT_EQ(setup.workload.lowered_ranks(), 1);
}

// auto: mirrored where exact (a NIC per GPU), every rank simulated with the reason where not
// (kCluster's shared NIC), and no error either way.
TEST(ScenarioPipeline, AutoFidelityMirrorsWhereExactAndSaysWhyNotElsewhere) {
  const std::string keys = "  tensor_parallel: 2\n  tensor_parallel_fidelity: auto\n";
  const Scenario exact = load(mirrored(keys));
  EXPECT_TRUE(plan_pipeline(exact, spec_of(exact)).workload.mirror_ranks);
  const Scenario shared = load(tensor_parallel(keys));
  const PipelineSetup setup = plan_pipeline(shared, spec_of(shared));
  EXPECT_FALSE(setup.workload.mirror_ranks);
  EXPECT_FALSE(setup.report.mirror_ranks);
  EXPECT_TRUE(setup.mirror_problems.empty());
  EXPECT_NE(setup.report.all_ranks_because.find("node type 'box' has one NIC"), std::string::npos)
      << setup.report.all_ranks_because;
}

// A Chakra trace has a file per rank: a graph whose ranks 1 copy ranks 0 cannot be written as one.
TEST(ScenarioPipeline, AMirroredGraphIsNotExportedToChakra) {
  expect_chakra_export_refused(mirrored("  tensor_parallel: 2\n  tensor_parallel_fidelity: group\n"),
                               "export it with tensor_parallel_fidelity: ranks");
}

// kCluster's nodes share one NIC between their two GPUs: both ranks' sends would cross it.
TEST(ScenarioPipeline, GroupFidelityWithASharedNicIsLocated) {
  expect_single_error(tensor_parallel("  tensor_parallel: 2\n  tensor_parallel_fidelity: group\n"), 17, 29,
                      "node type 'box' has one NIC for its GPUs");
}

// Nodes of 4 GPUs with t = 2: the other group of a node would send and all-reduce over the NVLink
// ports this group's collectives use.
TEST(ScenarioPipeline, GroupFidelityNeedsAGroupThatFillsItsNode) {
  expect_single_error(edited(mirrored("  tensor_parallel: 2\n  tensor_parallel_fidelity: group\n"), "gpus_per_node: 2",
                             "gpus_per_node: 4"),
                      17, 29, "a tensor-parallel group of 2 GPUs does not fill a node of type 'box' (4 GPUs)");
}

TEST(ScenarioPipeline, GroupFidelityNeedsTensorParallel) {
  expect_single_error(mirrored("  tensor_parallel_fidelity: group\n"), 16, 29,
                      "needs tensor_parallel of at least 2 or the megatron planner");
}

TEST(ScenarioPipeline, UnknownTensorParallelFidelitySuggestsTheClosest) {
  expect_single_error(mirrored("  tensor_parallel: 2\n  tensor_parallel_fidelity: rank\n"), 17, 29,
                      "did you mean 'ranks'");
}

// The network section would slow links of rank 1's GPUs, which run nothing: refused at the section
// (line 18, after the two keys).
TEST(ScenarioPipeline, GroupFidelityRefusesANetworkSection) {
  expect_single_error(mirrored("  tensor_parallel: 2\n  tensor_parallel_fidelity: group\nnetwork:\n"
                               "  conditions: [{links: \"node*/gpu1/nic\", bandwidth: \"1GB/s\"}]\n"),
                      19, 3, "cannot apply network conditions");
}

// ---- data_parallel_fidelity: window (docs/collectives.md, "Symmetric windows") -------------------

// kCluster with `nodes` nodes of 2 GPUs: the uniform planner's 2 stages each fill nodes/2 whole
// consecutive nodes, 32 samples in 4 micro-batches of 8 (one share per replica up to 8 replicas).
// Lines: the workload's keys start at line 16.
std::string replicated(const std::string& keys, int nodes = 8) {
  std::string yaml = pipeline(kModel +
                              "  global_batch: 32\n  micro_batches: 4\n  schedule: 1f1b\n"
                              "  planner: {name: uniform, stages: 2}\n" +
                              keys);
  yaml.replace(yaml.find("count: 2"), 8, fmt::format("count: {}", nodes));
  return yaml;
}

// 4 nodes per stage: the smallest window of whole nodes that divides them is 2 nodes, 4 replicas.
TEST(ScenarioPipeline, WindowFidelitySimulatesTwoNodesOfReplicas) {
  const Scenario scenario = load(replicated("  data_parallel_fidelity: window\n"));
  const PipelineWorkloadSpec& spec = spec_of(scenario);
  EXPECT_EQ(spec.replica_fidelity, ReplicaFidelity::window);
  const PipelineSetup setup = plan_pipeline(scenario, spec);
  ASSERT_TRUE(setup.window_problems.empty()) << setup.window_problems.front();
  EXPECT_EQ(setup.workload.replica_window, 4);
  EXPECT_EQ(setup.report.replica_window, 4);
  // Replica 5 of stage 1 (GPU 8 + 5 = node6/gpu1) mirrors replica 1 (GPU 9 = node4/gpu1).
  const TaskGraph graph = build_pipeline(setup.workload, *setup.schedule, scenario.cluster.gpu_names(), 1);
  const auto mirror = std::find(graph.mirrors().begin(), graph.mirrors().end(), std::pair<DeviceId, DeviceId>{13, 9});
  EXPECT_NE(mirror, graph.mirrors().end());
  EXPECT_EQ(graph.mirrors().size(), 8u);
}

// 3 nodes per stage (prime: no smaller window divides it), then 6 replicas that a micro-batch of 8
// does not split evenly: auto simulates every replica and says why; window asked is an error at run.
TEST(ScenarioPipeline, AutoWindowSimulatesEveryReplicaWhereNoWindowIsExact) {
  const Scenario three = load(replicated("  data_parallel_fidelity: auto\n", 6));
  const PipelineSetup setup = plan_pipeline(three, spec_of(three));
  EXPECT_EQ(setup.workload.replica_window, 0);
  EXPECT_TRUE(setup.window_problems.empty());
  EXPECT_NE(setup.report.all_replicas_because.find("a micro-batch of 8 samples does not split evenly over 6 replicas"),
            std::string::npos)
      << setup.report.all_replicas_because;
  const Scenario asked = load(replicated("  data_parallel_fidelity: window\n", 6));
  const PipelineSetup refused = plan_pipeline(asked, spec_of(asked));
  const auto errors = diagnostics_thrown_by([&] { require_mirroring(refused, spec_of(asked)); });
  ASSERT_EQ(errors.size(), 2u) << dump(errors);
  EXPECT_NE(errors[0].message.find("give data_parallel_fidelity: replicas"), std::string::npos) << errors[0].message;
  EXPECT_NE(errors[1].message.find("a stage spans 3 node(s): no window of fewer whole nodes divides it"),
            std::string::npos)
      << errors[1].message;
}

// Unset, both fidelities are `auto` above kMirroringByDefaultAbove GPUs, every GPU at 256. 130 nodes
// of 2 GPUs with 2,080 samples: 2 stages of 65 nodes, 130 replicas taking 4 samples of each
// micro-batch of 520; the window is 5 nodes (the smallest divisor ≥ 2 of 65), 10 replicas.
TEST(ScenarioPipeline, MirroringIsTheDefaultAbove256Gpus) {
  const Scenario at_limit = load(replicated("", 128));
  EXPECT_EQ(spec_of(at_limit).replica_fidelity, ReplicaFidelity::replicas);
  EXPECT_EQ(spec_of(at_limit).rank_fidelity, PipelineWorkloadSpec::RankFidelity::ranks);
  const Scenario above = load(edited(replicated("", 130), "global_batch: 32", "global_batch: 2080"));
  EXPECT_EQ(spec_of(above).replica_fidelity, ReplicaFidelity::automatic);
  EXPECT_EQ(spec_of(above).rank_fidelity, PipelineWorkloadSpec::RankFidelity::automatic);
  const PipelineSetup setup = plan_pipeline(above, spec_of(above));
  EXPECT_EQ(setup.report.replica_window, 10) << setup.report.all_replicas_because;
}

TEST(ScenarioPipeline, WindowFidelityWithATreeAllReduceIsLocated) {
  expect_single_error(replicated("  collective_algorithm: tree\n  data_parallel_fidelity: window\n"), 17, 27,
                      "collective algorithm 'tree' has no symmetric-window form");
}

TEST(ScenarioPipeline, UnknownDataParallelFidelitySuggestsTheClosest) {
  expect_single_error(replicated("  data_parallel_fidelity: replica\n"), 16, 27, "did you mean 'replicas'");
}

// Link conditions would slow links of replicas that run nothing: refused at the section.
TEST(ScenarioPipeline, WindowFidelityRefusesANetworkSection) {
  expect_single_error(replicated("  data_parallel_fidelity: window\nnetwork:\n"
                                 "  conditions: [{links: \"node5/nic\", bandwidth: \"1GB/s\"}]\n"),
                      18, 3, "data_parallel_fidelity: window simulates a window");
}

TEST(ScenarioPipeline, AWindowedGraphIsNotExportedToChakra) {
  expect_chakra_export_refused(replicated("  data_parallel_fidelity: window\n"),
                               "export it with data_parallel_fidelity: replicas");
}

}  // namespace
}  // namespace dnnsim
