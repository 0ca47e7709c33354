// The `kind: pipeline` workload (docs/scenarios.md): its keys as read (schedule options, planner,
// explicit stages by GPU count and by device globs), every input error at its line and column, and
// plan_pipeline (sim/workloads/pipeline/pipeline_workload.hpp), which turns the read workload into a plan without
// an engine: explicit stages, an infeasible planner result (a result, not an error), and a schedule
// that cannot run the plan's shape (an error located at the workload).
//
// Line numbers: every scenario below is kCluster (8 lines) + "workload:" (line 9) + "  kind: pipeline"
// (line 10) + the body given to `pipeline()`, whose first line is line 11. The workload mapping
// itself starts at its first key, 10:3.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/workloads/chakra/chakra_kind.hpp"
#include "sim/workloads/pipeline/pipeline_workload.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/scenario_files.hpp"
#include "dnnsim/source_paths.hpp"

namespace dnnsim {
namespace {

using testing::diagnostics_thrown_by;
using testing::dump;
using testing::errors_of;
using testing::expect_error;
using testing::load;

// Two nodes of two V100-16GB (16 GiB each): GPUs node0/gpu0, node0/gpu1, node1/gpu0, node1/gpu1 in
// cluster order (indices 0 … 3).
const std::string kCluster = R"(name: pipe
cluster:
  node_types:
    box:
      gpu: V100-16GB
      gpus_per_node: 2
      nic: {bandwidth: "25Gbps", latency: "5us"}
  nodes: [{type: box, count: 2}]
)";

// Four identical layers: 4 MB of parameters (1e6 fp32 parameters) and 1 MB of activations each.
const std::string kModel =
    R"(  model: {layers: [{forward_flops: "1GFlop", parameter_bytes: "4MB", activation_bytes: "1MB", repeat: 4}]}
)";

std::string pipeline(const std::string& body) { return kCluster + "workload:\n  kind: pipeline\n" + body; }

// Lines 11–14 of a valid workload without its planner/stages (line 15 on): 4 layers, 8 samples in 4
// micro-batches, 1F1B.
std::string valid_head() { return kModel + "  global_batch: 8\n  micro_batches: 4\n  schedule: 1f1b\n"; }

const PipelineWorkloadSpec& spec_of(const Scenario& scenario) {
  const auto* spec = scenario.workload_as<PipelineWorkloadSpec>();
  if (spec == nullptr) throw std::logic_error("not a pipeline workload");
  return *spec;
}

// Exactly one diagnostic, at line:column, containing `text`.
void expect_single_error(const std::string& yaml, int line, int column, const std::string& text) {
  const auto errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], line, column, text);
}

// ---- a valid workload --------------------------------------------------------------------------

TEST(ScenarioPipeline, ReadsEveryKey) {
  const Scenario scenario = load(pipeline(kModel + R"(  global_batch: 8
  micro_batch_size: 2
  dtype: fp16
  precision: mixed
  optimizer: sgd
  collective_algorithm: tree
  framework_overhead: "1GiB"
  schedule: {name: kfkb, group: 2}
  planner: {name: uniform, stages: 2}
)"));
  const PipelineWorkloadSpec& spec = spec_of(scenario);
  EXPECT_EQ(spec.model.layers.size(), 4u);
  EXPECT_EQ(spec.global_batch, 8);
  EXPECT_EQ(spec.micro_batches, 4);  // M = global_batch / micro_batch_size = 8 / 2
  EXPECT_EQ(spec.dtype, Dtype::fp16);
  EXPECT_EQ(spec.precision, Precision::mixed);
  EXPECT_EQ(spec.optimizer, Optimizer::sgd);
  EXPECT_EQ(spec.collective_algorithm, "tree");
  EXPECT_EQ(spec.framework_overhead.value(), 1073741824.0);  // 2^30
  EXPECT_EQ(spec.schedule, "kfkb");
  EXPECT_EQ(spec.schedule_options.integer("group"), 2);
  EXPECT_EQ(spec.planner, "uniform");
  EXPECT_EQ(spec.planner_options.integer("stages"), 2);
  EXPECT_TRUE(spec.stages.empty());
  // The workload mapping starts at its first key, "kind" (10:3).
  EXPECT_EQ(spec.where.line, 10);
  EXPECT_EQ(spec.where.column, 3);
}

// `saved_activations: {zoo: bert-48}` beside the DAPPLE BERT-48 profile: its 48 layer_i keep
// bert-48's per-block count in fp32, 72,351,744 B per sequence (tests/unit/models/
// saved_activations_test.cpp derives it); the 5 other layers keep their outputs. Errors are placed
// at the key's value: line 13 ("    saved_activations: " is 23 columns).
TEST(ScenarioPipeline, SavedActivationsDeclareAProfilesLayersAsZooBlocks) {
  const std::string profile = std::string(DNNSIM_SOURCE_DIR) + "/data/profiles/dapple/bert-48-pbs-2.txt";
  const auto workload = [&](const std::string& saved) {
    return pipeline(
        "  model:\n    profile: " + profile + "\n    saved_activations: " + saved +
        "\n  global_batch: 4\n  micro_batches: 2\n  schedule: gpipe\n  planner: {name: uniform, stages: 2}\n");
  };
  const PipelineWorkloadSpec spec = spec_of(load(workload("{zoo: bert-48}")));
  ASSERT_EQ(spec.model.layers.size(), 53u);
  int blocks = 0;
  for (const Layer& layer : spec.model.layers)
    if (layer.activation_source == ActivationSource::zoo_block) {
      ++blocks;
      EXPECT_DOUBLE_EQ(layer.activation_bytes.value(), 72351744.0) << layer.name;
    }
  EXPECT_EQ(blocks, 48);
  expect_single_error(workload("{zoo: bert-large}"), 13, 24,
                      "48 layers of 'bert-48-pbs-2' have the parameters of one 'bert-large' block (50384896 B), "
                      "which has 24 blocks");
  expect_single_error(workload("{seq: 512}"), 13, 24, "saved_activations needs 'zoo'");
}

TEST(ScenarioPipeline, DefaultsOfAPlainWorkload) {
  const PipelineWorkloadSpec spec = spec_of(load(pipeline(valid_head() + "  planner: dapple\n")));
  EXPECT_EQ(spec.schedule, "1f1b");
  EXPECT_EQ(spec.planner, "dapple");
  EXPECT_EQ(spec.planner_options.integer("rerank"), 4);  // dapple's defaults
  EXPECT_EQ(spec.dtype, Dtype::fp32);
  EXPECT_EQ(spec.precision, Precision::fp32);
  EXPECT_EQ(spec.optimizer, Optimizer::adam);
  EXPECT_EQ(spec.collective_algorithm, "");
  EXPECT_EQ(spec.framework_overhead.value(), 0.0);
}

TEST(ScenarioPipeline, ReadsEachScheduleOwnOptions) {
  const auto schedule_of = [](const std::string& schedule) {
    return spec_of(load(pipeline(kModel + "  global_batch: 8\n  micro_batches: 4\n  schedule: " + schedule +
                                 "\n  planner: {name: uniform, stages: 2}\n")));
  };
  const PipelineWorkloadSpec gpipe = schedule_of("{name: gpipe, recompute: true}");
  EXPECT_EQ(gpipe.schedule, "gpipe");
  EXPECT_TRUE(gpipe.schedule_options.flag("recompute"));
  EXPECT_TRUE(gpipe.order->recompute());

  const PipelineWorkloadSpec dapple = schedule_of("{name: dapple, policy: B, max_in_flight: 3}");
  EXPECT_EQ(dapple.schedule, "dapple");
  EXPECT_EQ(dapple.schedule_options.choice("policy"), "B");
  EXPECT_EQ(dapple.schedule_options.integer("max_in_flight"), 3);

  // Interleaved: v = 2 unless given (the scalar form: InterleavedScalarFormHasTwoChunks below).
  EXPECT_EQ(schedule_of("{name: interleaved}").order->chunks(), 2);
  EXPECT_EQ(schedule_of("{name: interleaved, chunks: 3}").order->chunks(), 3);

  const PipelineWorkloadSpec ada = schedule_of("{name: ada-grouper, candidates: [1, 2, 4]}");
  EXPECT_EQ(ada.schedule, "ada-grouper");
  EXPECT_EQ(ada.order->adaptation().group_candidates, (std::vector<int>{1, 2, 4}));
}

// `schedule: interleaved` (the scalar form) gets the documented default v = 2, as the mapping form
// does (it once kept the schedule options' 1, and planning then threw).
TEST(ScenarioPipeline, InterleavedScalarFormHasTwoChunks) {
  const Scenario scenario = load(pipeline(kModel + R"(  global_batch: 8
  micro_batches: 4
  schedule: interleaved
  planner: {name: uniform, stages: 2}
)"));
  EXPECT_EQ(spec_of(scenario).order->chunks(), 2);
  // The same plan as `{name: interleaved}`: 2 stages × 2 chunks of one layer each.
  const PipelineSetup setup = plan_pipeline(scenario, spec_of(scenario));
  ASSERT_TRUE(setup.report.plan.feasible) << setup.report.plan.reason;
  EXPECT_EQ(setup.report.plan.plan.stages[0].chunks, (std::vector<LayerRange>{{0, 1}, {2, 3}}));
}

TEST(ScenarioPipeline, ExplicitStagesTakeTheNextGpusInClusterOrder) {
  const PipelineWorkloadSpec spec = spec_of(load(pipeline(valid_head() + R"(  stages:
    - {layers: 1, gpus: 1}
    - {layers: 3, gpus: 2}
)")));
  EXPECT_EQ(spec.planner, "");
  ASSERT_EQ(spec.stages.size(), 2u);
  // Stage 0: layer 0 on GPU 0; stage 1: layers 1–3 on GPUs 1 and 2 (node0/gpu1, node1/gpu0).
  EXPECT_EQ(spec.stages[0].chunks, (std::vector<LayerRange>{{0, 1}}));
  EXPECT_EQ(spec.stages[0].devices, (std::vector<DeviceId>{0}));
  EXPECT_EQ(spec.stages[1].chunks, (std::vector<LayerRange>{{1, 4}}));
  EXPECT_EQ(spec.stages[1].devices, (std::vector<DeviceId>{1, 2}));
}

TEST(ScenarioPipeline, ExplicitStagesByDeviceGlobsAndThenByCount) {
  const PipelineWorkloadSpec spec = spec_of(load(pipeline(valid_head() + R"(  stages:
    - {layers: 2, devices: ["node1/*"]}
    - {layers: 2, gpus: 2}
)")));
  ASSERT_EQ(spec.stages.size(), 2u);
  // node1/* = GPUs 2 and 3; the count then takes the unused GPUs in cluster order: 0 and 1.
  EXPECT_EQ(spec.stages[0].chunks, (std::vector<LayerRange>{{0, 2}}));
  EXPECT_EQ(spec.stages[0].devices, (std::vector<DeviceId>{2, 3}));
  EXPECT_EQ(spec.stages[1].chunks, (std::vector<LayerRange>{{2, 4}}));
  EXPECT_EQ(spec.stages[1].devices, (std::vector<DeviceId>{0, 1}));
}

// ---- micro-batches -------------------------------------------------------------------------------

TEST(ScenarioPipeline, BothMicroBatchKeysIsAnError) {
  expect_single_error(pipeline(kModel + R"(  global_batch: 8
  micro_batches: 4
  micro_batch_size: 2
  schedule: 1f1b
  planner: dapple
)"),
                      10, 3, "give exactly one of 'micro_batches' (M) and 'micro_batch_size'");
}

TEST(ScenarioPipeline, NeitherMicroBatchKeyIsAnError) {
  expect_single_error(pipeline(kModel + "  global_batch: 8\n  schedule: 1f1b\n  planner: dapple\n"), 10, 3,
                      "give exactly one of 'micro_batches' (M) and 'micro_batch_size'");
}

TEST(ScenarioPipeline, GlobalBatchMustBeAMultiple) {
  // Line 13 is "  micro_batches: 3": the value at column 18.
  expect_single_error(pipeline(kModel + "  global_batch: 8\n  micro_batches: 3\n  schedule: 1f1b\n  planner: dapple\n"),
                      13, 18, "global_batch 8 is not a multiple of micro_batches 3");
  // "  micro_batch_size: 3": the value at column 21.
  expect_single_error(pipeline(kModel + "  global_batch: 8\n  micro_batch_size: 3\n  schedule: 1f1b\n  planner: dapple\n"),
                      13, 21, "global_batch 8 is not a multiple of micro_batch_size 3");
}

// ---- schedule ----------------------------------------------------------------------------------------

TEST(ScenarioPipeline, UnknownScheduleSuggestsTheClosestName) {
  // Line 14 "  schedule: 1fb1": the value at column 13.
  expect_single_error(pipeline(kModel + "  global_batch: 8\n  micro_batches: 4\n  schedule: 1fb1\n  planner: dapple\n"),
                      14, 13, "unknown schedule '1fb1'; did you mean '1f1b'?");
  // The mapping form: "  schedule: {name: kfbk}", the name at column 20.
  expect_single_error(
      pipeline(kModel + "  global_batch: 8\n  micro_batches: 4\n  schedule: {name: kfbk}\n  planner: dapple\n"), 14, 20,
      "did you mean 'kfkb'?");
}

TEST(ScenarioPipeline, AnOptionTheScheduleDoesNotReadNamesItsOptions) {
  // "  schedule: {name: gpipe, group: 2}": group at column 27; kfkb's option.
  expect_single_error(
      pipeline(kModel + "  global_batch: 8\n  micro_batches: 4\n  schedule: {name: gpipe, group: 2}\n  planner: dapple\n"),
      14, 27, "schedule 'gpipe' has no option 'group' (an option of kfkb); its options: recompute");
  // 1F1B reads none: "  schedule: {name: 1f1b, chunks: 2}", chunks at column 26.
  expect_single_error(
      pipeline(kModel + "  global_batch: 8\n  micro_batches: 4\n  schedule: {name: 1f1b, chunks: 2}\n  planner: dapple\n"),
      14, 26, "schedule '1f1b' has no option 'chunks' (an option of interleaved); it has no options");
  // DAPPLE lists both of its options; a typo gets a suggestion instead of an owner.
  expect_single_error(pipeline(kModel +
                               "  global_batch: 8\n  micro_batches: 4\n  schedule: {name: dapple, recompute: true}\n"
                               "  planner: dapple\n"),
                      14, 28, "its options: policy, max_in_flight");
  expect_single_error(pipeline(kModel +
                               "  global_batch: 8\n  micro_batches: 4\n  schedule: {name: dapple, polcy: B}\n"
                               "  planner: dapple\n"),
                      14, 28, "schedule 'dapple' has no option 'polcy' (did you mean 'policy'?)");
}

TEST(ScenarioPipeline, GroupLargerThanTheMicroBatchesIsAnError) {
  // M = 4; "  schedule: {name: kfkb, group: 5}": the 5 at column 33.
  expect_single_error(
      pipeline(kModel + "  global_batch: 8\n  micro_batches: 4\n  schedule: {name: kfkb, group: 5}\n  planner: dapple\n"),
      14, 33, "schedule 'kfkb': group 5 is larger than the 4 micro-batches");
  // Ada-Grouper's candidates are group sizes too, at most M: "  schedule: {name: ada-grouper, candidates: [1, 8]}",
  // the list at column 45.
  expect_single_error(pipeline(kModel +
                               "  global_batch: 8\n  micro_batches: 4\n  schedule: {name: ada-grouper, candidates: [1, 8]}\n"
                               "  planner: dapple\n"),
                      14, 45, "schedule 'ada-grouper': candidate group size 8 is larger than the 4 micro-batches");
}

// ---- planner / stages ----------------------------------------------------------------------------------

TEST(ScenarioPipeline, PlannerAndStagesTogetherIsAnError) {
  expect_single_error(pipeline(valid_head() + "  planner: dapple\n  stages: [{layers: 4, gpus: 1}]\n"), 10, 3,
                      "give exactly one of 'planner' (a name of `dnnsim list planners`) and 'stages' (explicit)");
}

TEST(ScenarioPipeline, NeitherPlannerNorStagesIsAnError) {
  expect_single_error(pipeline(valid_head()), 10, 3, "give exactly one of 'planner'");
}

TEST(ScenarioPipeline, UnknownPlannerSuggestsTheClosestName) {
  // Line 15 "  planner: dapel": the value at column 12.
  expect_single_error(pipeline(valid_head() + "  planner: dapel\n"), 15, 12, "unknown planner 'dapel'; did you mean 'dapple'?");
  // The mapping form: "  planner: {name: unifrom}", the name at column 19.
  expect_single_error(pipeline(valid_head() + "  planner: {name: unifrom}\n"), 15, 19, "did you mean 'uniform'?");
}

// An option of another planner is refused at its key, naming the planner that has it and the given
// planner's own options (models/common/option_reader.hpp).
TEST(ScenarioPipeline, OnlyTheUniformPlannerTakesStages) {
  // "  planner: {name: dapple, stages: 2}": stages at column 27.
  expect_single_error(pipeline(valid_head() + "  planner: {name: dapple, stages: 2}\n"), 15, 27,
                      "planner 'dapple' has no option 'stages' (an option of uniform); its options: rerank, prefixes");
}

TEST(ScenarioPipeline, OnlyThePipeDreamPlannerTakesFlat) {
  // "  planner: {name: dapple, flat: true}": flat at column 27.
  expect_single_error(pipeline(valid_head() + "  planner: {name: dapple, flat: true}\n"), 15, 27,
                      "planner 'dapple' has no option 'flat' (an option of pipedream)");
  EXPECT_TRUE(spec_of(load(pipeline(valid_head() + "  planner: {name: pipedream, flat: true}\n"))).planner_options.flag("flat"));
  EXPECT_FALSE(spec_of(load(pipeline(valid_head() + "  planner: pipedream\n"))).planner_options.flag("flat"));
}

TEST(ScenarioPipeline, OnlyTheMegatronPlannerTakesCandidate) {
  // "  planner: {name: dapple, candidate: 2}": candidate at column 27.
  expect_single_error(pipeline(valid_head() + "  planner: {name: dapple, candidate: 2}\n"), 15, 27,
                      "planner 'dapple' has no option 'candidate' (an option of megatron)");
}

TEST(ScenarioPipeline, ChunksAutoNeedsTheMegatronPlanner) {
  // Line 14 "  schedule: {name: interleaved, chunks: auto}": auto at column 41.
  expect_single_error(pipeline(kModel + "  global_batch: 8\n  micro_batches: 4\n  schedule: {name: interleaved, chunks: "
                                        "auto}\n  planner: dapple\n"),
                      14, 41, "'chunks: auto' lets a planner that chooses the chunks per stage (megatron) choose them");
}

// `dnnsim plan --planner NAME` (replace_planner): the file reads as if it named NAME. Options NAME
// takes stay, the others and explicit stages go; nothing planner-dependent is checked against the
// file's planner (`flat` with dapple, `stages` with pipedream would be errors).
TEST(ScenarioPipeline, ReplacingThePlannerKeepsOnlyTheOptionsItTakes) {
  const auto planned = [](const std::string& planner_line, const std::string& name) {
    const std::string path = testing::write_file("replaced.yaml", pipeline(valid_head() + planner_line));
    return spec_of(load_scenario(path, {}, replace_planner(name)));
  };
  const PipelineWorkloadSpec flat = planned("  planner: {name: pipedream, flat: true}\n", "pipedream");
  EXPECT_EQ(flat.planner, "pipedream");
  EXPECT_TRUE(flat.planner_options.flag("flat"));
  const PipelineWorkloadSpec dapple = planned("  planner: {name: pipedream, flat: true}\n", "dapple");
  EXPECT_EQ(dapple.planner, "dapple");
  EXPECT_FALSE(dapple.planner_options.given("rerank"));
  const PipelineWorkloadSpec two = planned("  planner: {name: uniform, stages: 2}\n", "uniform");
  EXPECT_EQ(two.planner_options.integer("stages"), 2);
  const PipelineWorkloadSpec stages = planned("  stages: [{layers: 2, gpus: 2}, {layers: 2, gpus: 2}]\n", "pipedream");
  EXPECT_EQ(stages.planner, "pipedream");
  EXPECT_TRUE(stages.stages.empty());
}

TEST(ScenarioPipeline, OnlyTheFormula2PlannersTakePrefixes) {
  // "  planner: {name: pipedream, prefixes: 1}": prefixes at column 30.
  expect_single_error(pipeline(valid_head() + "  planner: {name: pipedream, prefixes: 1}\n"), 15, 30,
                      "planner 'pipedream' has no option 'prefixes' (an option of dapple, pipeline-mapping); its "
                      "options: flat");
  // "  planner: {name: dapple, prefixes: 0}": the 0 at column 37, below the range.
  expect_single_error(pipeline(valid_head() + "  planner: {name: dapple, prefixes: 0}\n"), 15, 37, "1024");
  EXPECT_EQ(spec_of(load(pipeline(valid_head() + "  planner: {name: dapple, prefixes: 1}\n"))).planner_options.integer("prefixes"), 1);
  // The default beam (formula2_search.hpp).
  EXPECT_EQ(spec_of(load(pipeline(valid_head() + "  planner: dapple\n"))).planner_options.integer("prefixes"), 2);
}

TEST(ScenarioPipeline, ExplicitStagesMustHoldEveryLayer) {
  // Line 15 "  stages:", its list starting on line 16 at column 5.
  expect_single_error(pipeline(valid_head() + R"(  stages:
    - {layers: 1, gpus: 1}
    - {layers: 2, gpus: 1}
)"),
                      16, 5, "the stages hold 3 layers but the model has 4");
}

TEST(ScenarioPipeline, ADeviceGlobMatchingNoGpuIsAnError) {
  // Line 16 "    - {layers: 4, devices: [node2/*]}": the pattern at column 29.
  expect_single_error(pipeline(valid_head() + "  stages:\n    - {layers: 4, devices: [node2/*]}\n"), 16, 29,
                      "no GPU of the cluster matches 'node2/*'");
}

TEST(ScenarioPipeline, AGpuInTwoStagesIsAnError) {
  // The second stage's glob node0/* also matches node0/gpu0 of the first: line 17, the pattern at column 29.
  expect_single_error(pipeline(valid_head() + R"(  stages:
    - {layers: 2, devices: [node0/gpu0]}
    - {layers: 2, devices: [node0/*]}
)"),
                      17, 29, "GPU node0/gpu0 already holds stage 0");
}

TEST(ScenarioPipeline, NotEnoughGpusForACount) {
  // 4 GPUs; the first stage takes node1/* (2), the second asks for 3 of the 2 left. Line 17
  // "    - {layers: 2, gpus: 3}": the 3 at column 25.
  expect_single_error(pipeline(valid_head() + R"(  stages:
    - {layers: 2, devices: [node1/*]}
    - {layers: 2, gpus: 3}
)"),
                      17, 25, "not enough GPUs: the cluster has 4");
}

TEST(ScenarioPipeline, GpusAndDevicesTogetherIsAnError) {
  // Line 16 "    - {layers: 4, gpus: 1, devices: [node0/gpu0]}": the stage mapping at column 7.
  expect_single_error(pipeline(valid_head() + "  stages:\n    - {layers: 4, gpus: 1, devices: [node0/gpu0]}\n"), 16, 7,
                      "give exactly one of 'gpus'");
}

TEST(ScenarioPipeline, SeveralErrorsAreReportedAtOnceInFileOrder) {
  const auto errors = errors_of(pipeline(kModel + R"(  global_batch: 8
  micro_batches: 3
  schedule: {name: gpipe, chunks: 2}
  planner: pipedrem
)"));
  ASSERT_EQ(errors.size(), 3u) << dump(errors);
  expect_error(errors[0], 13, 18, "global_batch 8 is not a multiple of micro_batches 3");
  expect_error(errors[1], 14, 27, "schedule 'gpipe' has no option 'chunks'");
  expect_error(errors[2], 15, 12, "unknown planner 'pipedrem'; did you mean 'pipedream'?");
}

// ---- plan_pipeline: the read workload made into a plan (pure, no engine) ----------------------------------

TEST(ScenarioPipelinePlan, ExplicitStagesAreTheFeasiblePlan) {
  const Scenario scenario = load(pipeline(valid_head() + R"(  stages:
    - {layers: 1, gpus: 1}
    - {layers: 3, gpus: 1}
)"));
  const PipelineSetup setup = plan_pipeline(scenario, spec_of(scenario));
  EXPECT_EQ(setup.report.planner, "explicit");
  EXPECT_EQ(setup.report.schedule, "1f1b");
  ASSERT_TRUE(setup.report.plan.feasible) << setup.report.plan.reason;
  const PipelinePlan& plan = setup.report.plan.plan;
  ASSERT_EQ(plan.stages.size(), 2u);
  EXPECT_EQ(plan.stages[1].chunks, (std::vector<LayerRange>{{1, 4}}));
  EXPECT_EQ(plan.micro_batches, 4);
  EXPECT_EQ(plan.micro_batch_size(), 2);  // 8 / 4
  EXPECT_EQ(setup.workload.plan.stages.size(), 2u);
  ASSERT_NE(setup.schedule, nullptr);
}

TEST(ScenarioPipelinePlan, UniformSplitsLayersAndGpusEvenly) {
  const Scenario scenario = load(pipeline(valid_head() + "  planner: {name: uniform, stages: 2}\n"));
  const PipelineSetup setup = plan_pipeline(scenario, spec_of(scenario));
  EXPECT_EQ(setup.report.planner, "uniform");
  ASSERT_TRUE(setup.report.plan.feasible) << setup.report.plan.reason;
  // 4 layers / 2 stages = 2 each; 4 GPUs / 2 stages = 2 replicas each, in cluster order.
  const PipelinePlan& plan = setup.report.plan.plan;
  ASSERT_EQ(plan.stages.size(), 2u);
  EXPECT_EQ(plan.stages[0].chunks, (std::vector<LayerRange>{{0, 2}}));
  EXPECT_EQ(plan.stages[0].devices, (std::vector<DeviceId>{0, 1}));
  EXPECT_EQ(plan.stages[1].chunks, (std::vector<LayerRange>{{2, 4}}));
  EXPECT_EQ(plan.stages[1].devices, (std::vector<DeviceId>{2, 3}));
  EXPECT_GT(setup.report.plan.predicted_iteration_time.value(), 0.0);
}

// Four layers of 8 GB of fp32 parameters (2e9 parameters each): fp32 Adam keeps 16 B per parameter,
// 32 GB per layer, twice a V100-16GB's 16 GiB (17.2 GB) even with one layer per GPU.
const std::string kTooBigModel =
    R"(  model: {layers: [{forward_flops: "1GFlop", parameter_bytes: "8GB", activation_bytes: "1MB", repeat: 4}]}
  global_batch: 8
  micro_batches: 4
  schedule: 1f1b
)";

TEST(ScenarioPipelinePlan, AModelTooBigForTheGpusIsAnInfeasibleResultNotAnError) {
  for (const std::string planner : {"uniform", "dapple"}) {
    SCOPED_TRACE(planner);
    const Scenario scenario = load(pipeline(kTooBigModel + "  planner: " + planner + "\n"));
    PipelineSetup setup;
    EXPECT_NO_THROW(setup = plan_pipeline(scenario, spec_of(scenario)));
    EXPECT_EQ(setup.report.planner, planner);
    EXPECT_FALSE(setup.report.plan.feasible);
    EXPECT_NE(setup.report.plan.reason.find("memory"), std::string::npos) << setup.report.plan.reason;
  }
}

TEST(ScenarioPipelinePlan, InterleavedNeedsMicroBatchesAMultipleOfTheStages) {
  // Uniform plans 2 stages × 2 chunks of one layer each; M = 3 is not a multiple of p = 2.
  const Scenario scenario = load(pipeline(kModel + R"(  global_batch: 6
  micro_batches: 3
  schedule: {name: interleaved, chunks: 2}
  planner: {name: uniform, stages: 2}
)"));
  const auto errors = diagnostics_thrown_by([&] { (void)plan_pipeline(scenario, spec_of(scenario)); });
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 10, 3, "schedule 'interleaved' cannot run the plan");
  EXPECT_NE(errors[0].message.find("micro-batches (3) to be a multiple of the stages (2)"), std::string::npos)
      << errors[0].message;
  EXPECT_EQ(errors[0].location.file, scenario.file);
}

TEST(ScenarioPipelinePlan, InterleavedNeedsAPlanWithChunks) {
  // Explicit stages hold one chunk each; interleaved runs two.
  const Scenario scenario = load(pipeline(kModel + R"(  global_batch: 8
  micro_batches: 4
  schedule: {name: interleaved}
  stages: [{layers: 2, gpus: 1}, {layers: 2, gpus: 1}]
)"));
  const auto errors = diagnostics_thrown_by([&] { (void)plan_pipeline(scenario, spec_of(scenario)); });
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 10, 3, "schedule 'interleaved' cannot run the plan");
}

}  // namespace
}  // namespace dnnsim

namespace dnnsim {
namespace {

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
  const Scenario scenario = load(tensor_parallel("  tensor_parallel: 2\n  sequence_parallel: true\n  recompute: selective\n"));
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
  const auto errors = errors_of(tensor_parallel("  tensor_parallel: 3\n"));
  ASSERT_EQ(errors.size(), 3u) << dump(errors);
  expect_error(errors[0], 16, 20, "does not divide the cluster's 4 GPUs");
  expect_error(errors[1], 16, 20, "does not divide the 4 attention heads");
  expect_error(errors[2], 16, 20, "does not divide the hidden size 64");
}

TEST(ScenarioPipeline, TensorParallelLargerThanTheClusterIsLocated) {
  const auto errors = errors_of(tensor_parallel("  tensor_parallel: 8\n"));
  ASSERT_GE(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 16, 20, "larger than the cluster's 4 GPUs");
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
  const auto errors = errors_of(tiny_transformer("  planner: {name: megatron, recompute: [full, sometimes, full]}\n"));
  ASSERT_EQ(errors.size(), 2u) << dump(errors);
  expect_error(errors[0], 15, 47, "option 'recompute' of planner 'megatron': unknown recompute 'sometimes'");
  expect_error(errors[1], 15, 58, "option 'recompute' of planner 'megatron': 'full' is listed twice");
  // Only the megatron planner takes either: recompute at column 27, sequence_parallel at 46.
  const auto other =
      errors_of(pipeline(valid_head() + "  planner: {name: dapple, recompute: [full], sequence_parallel: false}\n"));
  ASSERT_EQ(other.size(), 2u) << dump(other);
  expect_error(other[0], 15, 27, "planner 'dapple' has no option 'recompute' (an option of megatron)");
  expect_error(other[1], 15, 46, "planner 'dapple' has no option 'sequence_parallel' (an option of megatron)");
}

TEST(ScenarioPipeline, SequenceParallelNeedsTensorParallel) {
  expect_single_error(tensor_parallel("  sequence_parallel: true\n"), 16, 22, "needs tensor_parallel of at least 2");
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
  const Scenario scenario = load(mirrored("  tensor_parallel: 2\n  tensor_parallel_fidelity: group\n"));
  const auto errors =
      diagnostics_thrown_by([&] { (void)export_scenario_chakra(scenario, testing::test_dir().string()); });
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_NE(errors[0].message.find("export it with tensor_parallel_fidelity: ranks"), std::string::npos);
}

// kCluster's nodes share one NIC between their two GPUs: both ranks' sends would cross it.
TEST(ScenarioPipeline, GroupFidelityWithASharedNicIsLocated) {
  expect_single_error(tensor_parallel("  tensor_parallel: 2\n  tensor_parallel_fidelity: group\n"), 17, 29,
                      "node type 'box' has one NIC for its GPUs");
}

// Nodes of 4 GPUs with t = 2: the other group of a node would send and all-reduce over the NVLink
// ports this group's collectives use.
TEST(ScenarioPipeline, GroupFidelityNeedsAGroupThatFillsItsNode) {
  std::string yaml = mirrored("  tensor_parallel: 2\n  tensor_parallel_fidelity: group\n");
  yaml.replace(yaml.find("gpus_per_node: 2"), 16, "gpus_per_node: 4");
  expect_single_error(yaml, 17, 29, "a tensor-parallel group of 2 GPUs does not fill a node of type 'box' (4 GPUs)");
}

TEST(ScenarioPipeline, GroupFidelityNeedsTensorParallel) {
  expect_single_error(mirrored("  tensor_parallel_fidelity: group\n"), 16, 29,
                      "needs tensor_parallel of at least 2 or the megatron planner");
}

TEST(ScenarioPipeline, UnknownTensorParallelFidelitySuggestsTheClosest) {
  expect_single_error(mirrored("  tensor_parallel: 2\n  tensor_parallel_fidelity: rank\n"), 17, 29, "did you mean 'ranks'");
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
  std::string yaml = pipeline(kModel + "  global_batch: 32\n  micro_batches: 4\n  schedule: 1f1b\n"
                                       "  planner: {name: uniform, stages: 2}\n" + keys);
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
  std::string yaml = replicated("", 130);
  yaml.replace(yaml.find("global_batch: 32"), 16, "global_batch: 2080");
  const Scenario above = load(yaml);
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
  const Scenario scenario = load(replicated("  data_parallel_fidelity: window\n"));
  const auto errors =
      diagnostics_thrown_by([&] { (void)export_scenario_chakra(scenario, testing::test_dir().string()); });
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_NE(errors[0].message.find("export it with data_parallel_fidelity: replicas"), std::string::npos);
}

}  // namespace
}  // namespace dnnsim
