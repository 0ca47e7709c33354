// The `kind: pipeline` workload (docs/scenarios.md): its keys as read (schedule options, planner,
// explicit stages by GPU count and by device globs), every input error at its line and column, and
// plan_pipeline (sim/workloads/pipeline/pipeline_workload.hpp), which turns the read workload into a plan without
// an engine: explicit stages, an infeasible planner result (a result, not an error), and a schedule
// that cannot run the plan's shape (an error located at the workload).
// Tensor, sequence and replica fidelity keys are in scenario_pipeline_parallelism_test.cpp.
//
// Line numbers: tests/support/pipeline_scenarios.hpp (the body's first line is line 11).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"
#include "sim/workloads/pipeline/pipeline_workload.hpp"
#include "tests/support/dapple_profiles.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/pipeline_scenarios.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

using namespace testing;
using namespace testing::pipeline_scenarios;

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
  const std::string profile = testing::dapple_profile("bert-48-pbs-2.txt");
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
  // A misspelt zoo is said at the misspelling only.
  expect_single_error(workload("{zo: bert-48}"), 13, 25, "unknown key 'zo' in saved_activations; did you mean 'zoo'?");
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
  expect_single_error(
      pipeline(kModel + "  global_batch: 8\n  micro_batch_size: 3\n  schedule: 1f1b\n  planner: dapple\n"), 13, 21,
      "global_batch 8 is not a multiple of micro_batch_size 3");
}

// A batch key refused where it is written is the one error: the checks that combine it with the
// others skip it. Line 12 "  global_batch: -1" (the value at column 17), line 13 "  micro_batches: -1"
// (column 18).
TEST(ScenarioPipeline, ARefusedBatchKeyIsTheOneError) {
  expect_single_error(
      pipeline(kModel + "  global_batch: -1\n  micro_batches: 4\n  schedule: 1f1b\n  planner: dapple\n"), 12, 17,
      "expected an integer in [1, 1073741824], got -1");
  expect_single_error(
      pipeline(kModel + "  global_batch: 8\n  micro_batches: -1\n  schedule: 1f1b\n  planner: dapple\n"), 13, 18,
      "expected an integer in [1, 1048576], got -1");
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
      pipeline(kModel +
               "  global_batch: 8\n  micro_batches: 4\n  schedule: {name: gpipe, group: 2}\n  planner: dapple\n"),
      14, 27, "schedule 'gpipe' has no option 'group' (an option of kfkb); its options: recompute");
  // 1F1B reads none: "  schedule: {name: 1f1b, chunks: 2}", chunks at column 26.
  expect_single_error(
      pipeline(kModel +
               "  global_batch: 8\n  micro_batches: 4\n  schedule: {name: 1f1b, chunks: 2}\n  planner: dapple\n"),
      14, 26, "schedule '1f1b' has no option 'chunks' (an option of interleaved); it has no options");
  // DAPPLE lists both of its options; a typo gets a suggestion instead of an owner.
  expect_single_error(
      pipeline(kModel + "  global_batch: 8\n  micro_batches: 4\n  schedule: {name: dapple, recompute: true}\n"
                        "  planner: dapple\n"),
      14, 28, "its options: policy, max_in_flight");
  expect_single_error(pipeline(kModel + "  global_batch: 8\n  micro_batches: 4\n  schedule: {name: dapple, polcy: B}\n"
                                        "  planner: dapple\n"),
                      14, 28, "schedule 'dapple' has no option 'polcy' (did you mean 'policy'?)");
}

TEST(ScenarioPipeline, GroupLargerThanTheMicroBatchesIsAnError) {
  // M = 4; "  schedule: {name: kfkb, group: 5}": the 5 at column 33.
  expect_single_error(
      pipeline(kModel +
               "  global_batch: 8\n  micro_batches: 4\n  schedule: {name: kfkb, group: 5}\n  planner: dapple\n"),
      14, 33, "schedule 'kfkb': group 5 is larger than the 4 micro-batches");
  // Ada-Grouper's candidates are group sizes too, at most M: "  schedule: {name: ada-grouper, candidates: [1, 8]}",
  // the list at column 45.
  expect_single_error(
      pipeline(kModel + "  global_batch: 8\n  micro_batches: 4\n  schedule: {name: ada-grouper, candidates: [1, 8]}\n"
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
  expect_single_error(pipeline(valid_head() + "  planner: dapel\n"), 15, 12,
                      "unknown planner 'dapel'; did you mean 'dapple'?");
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
  EXPECT_TRUE(spec_of(load(pipeline(valid_head() + "  planner: {name: pipedream, flat: true}\n")))
                  .planner_options.flag("flat"));
  EXPECT_FALSE(spec_of(load(pipeline(valid_head() + "  planner: pipedream\n"))).planner_options.flag("flat"));
}

TEST(ScenarioPipeline, OnlyTheMegatronPlannerTakesCandidate) {
  // "  planner: {name: dapple, candidate: 2}": candidate at column 27.
  expect_single_error(pipeline(valid_head() + "  planner: {name: dapple, candidate: 2}\n"), 15, 27,
                      "planner 'dapple' has no option 'candidate' (an option of megatron, megatron-5d)");
}

TEST(ScenarioPipeline, ChunksAutoNeedsTheMegatronPlanner) {
  // Line 14 "  schedule: {name: interleaved, chunks: auto}": auto at column 41.
  expect_single_error(
      pipeline(kModel + "  global_batch: 8\n  micro_batches: 4\n  schedule: {name: interleaved, chunks: "
                        "auto}\n  planner: dapple\n"),
      14, 41, "'chunks: auto' lets a planner that chooses the chunks per stage (megatron, megatron-5d) choose them");
  // An unknown planner is the one error: whether it would choose the chunks cannot be told (line 15,
  // "  planner: megatrn": the name at column 12).
  expect_single_error(
      pipeline(kModel + "  global_batch: 8\n  micro_batches: 4\n  schedule: {name: interleaved, chunks: "
                        "auto}\n  planner: megatrn\n"),
      15, 12, "unknown planner 'megatrn'; did you mean 'megatron'?");
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
  EXPECT_EQ(spec_of(load(pipeline(valid_head() + "  planner: {name: dapple, prefixes: 1}\n")))
                .planner_options.integer("prefixes"),
            1);
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

// A misspelt key is one error naming the key it misspells: not also "give exactly one of" the keys
// it should have been, nor a layer sum counting a default in its place.
TEST(ScenarioPipeline, AMisspeltStageKeyIsOneError) {
  // Line 16 "    - {layrs: 1, gpus: 1}": the key at column 8; line 17 "    - {layers: 3, gpu: 1}": 'gpu' at 19.
  expect_errors(errors_of(pipeline(valid_head() + R"(  stages:
    - {layrs: 1, gpus: 1}
    - {layers: 3, gpu: 1}
)")),
                {{16, 8, "unknown key 'layrs' in a stage; did you mean 'layers'?"},
                 {17, 19, "unknown key 'gpu' in a stage; did you mean 'gpus'?"}});
}

TEST(ScenarioPipeline, AMisspeltMicroBatchKeyIsOneError) {
  // Line 13 "  micro_batchs: 4".
  expect_single_error(pipeline(kModel + "  global_batch: 8\n  micro_batchs: 4\n  schedule: 1f1b\n  planner: dapple\n"),
                      13, 3, "unknown key 'micro_batchs' in the workload; did you mean 'micro_batches'?");
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
  expect_errors(errors_of(pipeline(kModel + R"(  global_batch: 8
  micro_batches: 3
  schedule: {name: gpipe, chunks: 2}
  planner: pipedrem
)")),
                {{13, 18, "global_batch 8 is not a multiple of micro_batches 3"},
                 {14, 27, "schedule 'gpipe' has no option 'chunks'"},
                 {15, 12, "unknown planner 'pipedrem'; did you mean 'pipedream'?"}});
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
  ASSERT_NO_FATAL_FAILURE(expect_errors(errors, {{10, 3, "schedule 'interleaved' cannot run the plan"}}));
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
  expect_errors(errors, {{10, 3, "schedule 'interleaved' cannot run the plan"}});
}

}  // namespace
}  // namespace dnnsim

namespace dnnsim {
namespace {}  // namespace
}  // namespace dnnsim
