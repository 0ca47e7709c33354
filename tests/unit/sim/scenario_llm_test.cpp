// The pipeline kind's LLM keys (sim/workloads/pipeline/llm_keys.hpp, docs/scenarios.md) and node types'
// NVLink domains (`nvlink_domain`): what they set, and every bad input located at its key, all at once.
//
// Line numbers: the scenario below has its `nvlink_domain` line (or a comment) on line 9, its `nodes`
// group on line 10, the workload's `model` on line 14 and the keys given to `llm()` from line 19.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "sim/scenario/scenario.hpp"
#include "sim/workloads/pipeline/pipeline_workload.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/pipeline_scenarios.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

using namespace testing;

struct LlmCase {
  std::string gpu = "B200";
  int gpus_per_node = 8;
  std::string domain = "# no NVLink domain";
  int nodes = 1;
  std::string model = "qwen3-30b-a3b";
  int seq = 4096;
};

std::string llm(const LlmCase& setup, const std::string& keys) {
  return "name: llm\n"
         "cluster:\n"
         "  node_types:\n"
         "    tray:\n"
         "      gpu: " +
         setup.gpu +
         "\n"
         "      gpus_per_node: " +
         std::to_string(setup.gpus_per_node) +
         "\n"
         "      fabric: nvswitch\n"
         "      nic: {link: IB-NDR, per_gpu: true}\n"
         "      " +
         setup.domain +
         "\n"
         "  nodes: [{type: tray, count: " +
         std::to_string(setup.nodes) +
         "}]\n"
         "  interconnect: {kind: switch, latency: \"1us\"}\n"
         "workload:\n"
         "  kind: pipeline\n"
         "  model: {zoo: " +
         setup.model + ", seq: " + std::to_string(setup.seq) +
         "}\n"
         "  global_batch: 64\n"
         "  micro_batch_size: 8\n"
         "  schedule: 1f1b\n"
         "  planner: {name: uniform, stages: 1}\n" +
         keys;
}

using testing::pipeline_scenarios::expect_single_error;
using testing::pipeline_scenarios::spec_of;

// Qwen3-30B-A3B on one DGX B200 as Megatron-Bridge's table runs it: EP 8 (16 of the 128 experts per
// GPU), MXFP8, BF16 Adam moments, selective recomputation of the MoE activation.
TEST(ScenarioLlm, KeysSetTheParallelismsAndTheRecipe) {
  const Scenario scenario = load(llm({},
                                     "  expert_parallel: 8\n  precision_recipe: mxfp8\n"
                                     "  precision_aware_optimizer: true\n  recompute_modules: [moe_act]\n"
                                     "  moe: {capacity_factor: 1.25, overlap: true}\n"));
  const PipelineWorkloadSpec& spec = spec_of(scenario);
  EXPECT_EQ(spec.llm.expert, 8);
  EXPECT_EQ(spec.llm.precision.low, LowPrecision::mxfp8);
  EXPECT_TRUE(spec.llm.precision.precision_aware_optimizer);
  EXPECT_EQ(spec.recompute_modules, static_cast<std::uint8_t>(RecomputeModule::moe_act));
  EXPECT_DOUBLE_EQ(spec.llm.routing.load(), 1.25);
  EXPECT_TRUE(spec.llm.expert_overlap);
  EXPECT_TRUE(spec.tensor_parallel_set);  // Megatron's layout, tensor parallel 1
  const PipelineSetup setup = plan_pipeline(scenario, spec);
  ASSERT_TRUE(setup.report.plan.feasible) << setup.report.plan.reason;
  EXPECT_EQ(setup.workload.ranks(), 1);
}

// EP 48 does not divide 128 experts; CP 3 does not cut 4,096 tokens into 6 equal chunks; Hopper has no
// MX formats. All three at once, each at its value.
TEST(ScenarioLlm, BadParallelismAndRecipeAreLocated) {
  LlmCase hopper;
  hopper.gpu = "H100-SXM";
  expect_errors(
      errors_of(llm(hopper, "  expert_parallel: 48\n  context_parallel: 3\n  precision_recipe: mxfp8\n")),
      {{19, 20, "does not divide the 128 experts"}, {20, 21, "2 × 3 equal chunks"}, {21, 21, "needs MX formats"}});
}

// FP8 on a GPU without FP8 tensor cores (A100), EP on a dense model.
TEST(ScenarioLlm, Fp8WithoutFp8AndExpertsWithoutExpertsAreLocated) {
  LlmCase ampere;
  ampere.gpu = "A100-80GB-SXM";
  ampere.model = "llama3-8b";
  ampere.seq = 8192;
  expect_errors(errors_of(llm(ampere, "  expert_parallel: 2\n  precision_recipe: fp8-cs\n")),
                {{19, 20, "'llama3-8b' is dense"}, {20, 21, "no FP8 tensor cores"}});
}

// An unknown GPU model or model is the one error (the recipe and the LLM keys are not checked against the
// empty spec it leaves), and a name cut short is offered the names it begins, not the nearest by edit
// distance (P100 for H100).
TEST(ScenarioLlm, AnUnknownNameIsTheOneError) {
  LlmCase unknown;
  unknown.gpu = "H100";
  expect_errors(errors_of(llm(unknown, "  precision_recipe: fp8-cs\n")),
                {{5, 12, "unknown GPU model 'H100'; did you mean 'H100-PCIe' or 'H100-SXM'?"}});
  LlmCase cut_short;
  cut_short.model = "qwen3-30b";
  expect_errors(errors_of(llm(cut_short, "  expert_parallel: 8\n")),
                {{14, 16, "unknown model 'qwen3-30b'; did you mean 'qwen3-30b-a3b'?"}});
}

// Megatron-Core's cpu_offloading_num_layers: Qwen3-30B-A3B's 48 blocks take up to 47 offloaded (Transformer
// Engine never offloads the last), and only without a pipeline (transformer_config.py).
TEST(ScenarioLlm, ActivationOffloadNeedsASingleStageAndABlockLeft) {
  const Scenario scenario = load(llm({}, "  activation_offload_layers: 47\n"));
  EXPECT_EQ(spec_of(scenario).llm.offloaded_layers, 47);
  ASSERT_TRUE(plan_pipeline(scenario, spec_of(scenario)).report.plan.feasible);
  expect_errors(errors_of(llm({}, "  activation_offload_layers: 48\n")),
                {{19, 30, "must be below the 48 transformer blocks"}});
  const Scenario two = load(edited(llm({}, "  activation_offload_layers: 8\n"), "stages: 1", "stages: 2"));
  const auto planned_errors = diagnostics_thrown_by([&] { (void)plan_pipeline(two, spec_of(two)); });
  ASSERT_EQ(planned_errors.size(), 1u) << dump(planned_errors);
  EXPECT_NE(planned_errors[0].message.find("needs a single pipeline stage"), std::string::npos) << dump(planned_errors);
}

// Transformer Engine's cp_comm_type: `all_gather` is read; `a2a` with Llama 3 70B at TP 4 leaves 8/4 = 2
// KV heads per tensor rank, which CP 4 does not divide (TE asserts it); "a2a+p2p" needs its two sizes
// (hierarchical_context_parallel_sizes: [A, P], A·P = CP), whose A = 2 divides those heads and A = 4
// does not; the sizes are an error with another type, in a count other than 2, or multiplying to
// another CP. Each at its value.
TEST(ScenarioLlm, ContextParallelCommIsReadAndA2aNeedsDivisibleHeads) {
  LlmCase llama;
  llama.gpu = "H100-SXM";
  llama.model = "llama3-70b";
  llama.seq = 8192;
  llama.nodes = 2;
  const std::string given = "  tensor_parallel: 4\n  context_parallel: 4\n";
  const Scenario scenario = load(llm(llama, given + "  context_parallel_comm: all_gather\n"));
  EXPECT_EQ(spec_of(scenario).llm.context_comm, ContextComm::all_gather);
  expect_errors(errors_of(llm(llama, given + "  context_parallel_comm: a2a\n")),
                {{21, 26, "key/value heads per tensor rank (2) divisible by context_parallel 4"}});
  const std::string hierarchical = given + "  context_parallel_comm: a2a+p2p\n";
  expect_errors(errors_of(llm(llama, hierarchical)), {{21, 26, "needs hierarchical_context_parallel_sizes"}});
  const Scenario two_by_two = load(llm(llama, hierarchical + "  hierarchical_context_parallel_sizes: [2, 2]\n"));
  EXPECT_EQ(spec_of(two_by_two).llm.context_comm, ContextComm::a2a_p2p);
  EXPECT_EQ(spec_of(two_by_two).llm.context_a2a, 2);
  expect_errors(errors_of(llm(llama, hierarchical + "  hierarchical_context_parallel_sizes: [4, 1]\n")),
                {{22, 40, "key/value heads per tensor rank (2) divisible by the a2a groups' size 4"}});
  expect_errors(errors_of(llm(llama, hierarchical + "  hierarchical_context_parallel_sizes: [2, 4]\n")),
                {{22, 40, "[2, 4] multiply to 8, not context_parallel 4"}});
  expect_errors(errors_of(llm(llama, hierarchical + "  hierarchical_context_parallel_sizes: [2, 2, 1]\n")),
                {{22, 40, "has 3 entries"}});
  expect_errors(errors_of(llm(llama, given + "  context_parallel_comm: all_gather\n"
                                             "  hierarchical_context_parallel_sizes: [2, 2]\n")),
                {{22, 40, "read by context_parallel_comm a2a+p2p only"}});
}

// The same scenario asking the LLM layout planner for its layout instead of giving it.
std::string planned(const std::string& keys, const std::string& planner = "megatron-5d") {
  std::string yaml = llm({}, keys);
  const std::string given = "{name: uniform, stages: 1}";
  return yaml.replace(yaml.find(given), given.size(), planner);
}

// The planner's layout is what the workload runs: its EP, CP and FSDP, on plan devices of TP·CP GPUs.
TEST(ScenarioLlm, TheLayoutPlannersChoiceIsRun) {
  const Scenario scenario = load(planned("  precision_recipe: mxfp8\n"));
  const PipelineWorkloadSpec& spec = spec_of(scenario);
  const PipelineSetup setup = plan_pipeline(scenario, spec);
  ASSERT_TRUE(setup.report.plan.feasible) << setup.report.plan.reason;
  const auto& layout = setup.report.plan.llm_layout;
  ASSERT_TRUE(layout.has_value());
  EXPECT_EQ(setup.workload.llm.expert, layout->expert);
  EXPECT_EQ(setup.workload.llm.context, layout->context);
  EXPECT_EQ(setup.workload.llm.fsdp, layout->fsdp);
  EXPECT_EQ(setup.workload.ranks(), setup.report.plan.tensor_parallel->degree * layout->context);
  EXPECT_EQ(setup.workload.llm.precision.low, LowPrecision::mxfp8);
}

// It chooses EP, CP and FSDP: a scenario that gives them too is told where, all at once.
TEST(ScenarioLlm, KeysTheLayoutPlannerChoosesAreLocated) {
  expect_errors(errors_of(planned("  expert_parallel: 8\n  fsdp: true\n")),
                {{19, 20, "chooses 'expert_parallel'"}, {20, 9, "chooses 'fsdp'"}});
}

// With `context_comm: search` it chooses the CP type too: the recipe's type and a2a+p2p's sizes are then
// refused where they are given (line 18 is the planner, 19 and 20 the keys), and the type it chose runs.
TEST(ScenarioLlm, TheLayoutPlannersCpTypeSearchOwnsTheType) {
  expect_errors(errors_of(planned("  context_parallel_comm: a2a+p2p\n  hierarchical_context_parallel_sizes: [2, 2]\n",
                                  "{name: megatron-5d, context_comm: search}")),
                {{19, 26, "context_comm: search chooses 'context_parallel_comm'"},
                 {20, 40, "chooses 'hierarchical_context_parallel_sizes'"}});
  const Scenario scenario = load(planned("", "{name: megatron-5d, context_comm: search}"));
  const PipelineSetup setup = plan_pipeline(scenario, spec_of(scenario));
  ASSERT_TRUE(setup.report.plan.feasible) << setup.report.plan.reason;
  const auto& layout = setup.report.plan.llm_layout;
  ASSERT_TRUE(layout.has_value());
  EXPECT_EQ(setup.workload.llm.context_comm, layout->context_comm);
  EXPECT_EQ(setup.workload.llm.context_a2a, layout->context_a2a);
}

// Its options are read as declared: a reference layout that is not TP×PP×VP×CP×EP×DP/micro-batch and a
// micro-batch size below 1 are located at their values (line 18: "  planner: {name: megatron-5d, …").
TEST(ScenarioLlm, BadLayoutPlannerOptionsAreLocated) {
  expect_errors(errors_of(planned("", "{name: megatron-5d, reference: 2x8, micro_batch_sizes: [0]}")),
                {{18, 43, "a layout is TP×PP×VP×CP×EP×DP/micro-batch"}, {18, 68, "micro_batch_sizes"}});
}

// The LLM keys need the dimensions only an LLM's generator gives its model.
TEST(ScenarioLlm, KeysNeedAnLlm) {
  LlmCase old;
  old.model = "gpt3-xl";
  old.seq = 2048;
  const auto errors = errors_of(llm(old, "  fsdp: true\n"));
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors.back().message.find("need an LLM: one of the zoo"), std::string::npos) << dump(errors);
}

// The scenario of llm() with its zoo model replaced by `model: {name: custom, llm: {…}}`: the model on
// line 14, `llm:` on line 16, the shape's keys from line 17 (indented six spaces).
std::string with_llm(const std::string& shape, const std::string& keys = "") {
  std::string yaml = llm({}, keys);
  const std::string zoo = "  model: {zoo: qwen3-30b-a3b, seq: 4096}\n";
  return yaml.replace(yaml.find(zoo), zoo.size(), "  model:\n    name: custom\n    llm:\n" + shape);
}

// Qwen3-30B-A3B's shape (Qwen3 Technical Report Table 2: 48 layers, hidden 2048, 32 query and 4 KV heads
// of 128, 128 experts top-8 of FFN 768, vocabulary 151,936) given as an `llm:` builds the zoo's model
// layer by layer: one generator, so every layer's FLOPs, bytes and kept activations agree, the model
// FLOPs (Megatron-Bridge's count) too, and the LLM keys (here expert parallelism) apply to it.
TEST(ScenarioLlm, AnLlmGivenByItsShapeIsBuiltAsTheZoosOwn) {
  const Scenario custom =
      load(with_llm("      layers: 48\n      hidden: 2048\n      heads: 32\n      kv_heads: 4\n"
                    "      head_dim: 128\n      vocab: 151936\n      seq: 4096\n"
                    "      experts: 128\n      top_k: 8\n      expert_ffn: 768\n",
                    "  expert_parallel: 8\n"));
  const Scenario zoo = load(llm({}, "  expert_parallel: 8\n"));
  const LayerModel& mine = spec_of(custom).model;
  const LayerModel& theirs = spec_of(zoo).model;
  EXPECT_EQ(mine.name, "custom");
  EXPECT_EQ(spec_of(custom).llm.expert, 8);
  ASSERT_EQ(mine.layers.size(), theirs.layers.size());
  for (std::size_t i = 0; i < mine.layers.size(); ++i) {
    EXPECT_EQ(mine.layers[i].name, theirs.layers[i].name);
    EXPECT_EQ(mine.layers[i].forward_flops, theirs.layers[i].forward_flops) << mine.layers[i].name;
    EXPECT_EQ(mine.layers[i].parameter_bytes, theirs.layers[i].parameter_bytes) << mine.layers[i].name;
    EXPECT_EQ(mine.layers[i].activation_bytes, theirs.layers[i].activation_bytes) << mine.layers[i].name;
  }
  ASSERT_TRUE(mine.model_flops_per_sample && theirs.model_flops_per_sample);
  EXPECT_EQ(*mine.model_flops_per_sample, *theirs.model_flops_per_sample);
  ASSERT_TRUE(mine.transformer);
  EXPECT_EQ(mine.transformer->experts, 128);
  EXPECT_EQ(mine.transformer->kv_width, 4 * (128 + 128));  // K and V of 128 for each of the 4 KV heads
}

// A GPT-style MoE with the plain GELU MLP (`mlp: gelu`): each expert's fc1 is F = 1024 wide, where a
// gated unit's (SwiGLU, the default) is 2F: it computes the gate and the value side by side (Shazeer,
// "GLU Variants Improve Transformer", 2020, eq. 6). Without kv_heads the attention is multi-head.
TEST(ScenarioLlm, APlainGeluMoeLayerCountsOneFc1WidthPerExpert) {
  const std::string shape =
      "      layers: 2\n      hidden: 1024\n      heads: 16\n      vocab: 32000\n"
      "      seq: 1024\n      experts: 8\n      top_k: 2\n      expert_ffn: 1024\n";
  const auto fc1_width = [](const LayerModel& model) {
    const auto fc1 = std::find_if(model.layers.begin(), model.layers.end(),
                                  [](const Layer& l) { return l.name == "block0.moe.experts.fc1"; });
    return fc1 == model.layers.end() || fc1->matmuls.empty() ? -1 : fc1->matmuls.front().n;
  };
  const Scenario gelu = load(with_llm(shape + "      mlp: gelu\n"));
  const Scenario swiglu = load(with_llm(shape));
  EXPECT_EQ(fc1_width(spec_of(gelu).model), 1024);
  EXPECT_EQ(fc1_width(spec_of(swiglu).model), 2048);
  EXPECT_EQ(spec_of(gelu).model.transformer->kv_heads, 16);
}

// Shapes that no model has, each at its key and all at once (lines from 17: layers, hidden, heads,
// kv_heads on 20, vocab, seq, experts, expert_ffn, top_k on 25, ffn, dense_layers on 27, window_every on
// 28, and a misspelt key on 29).
TEST(ScenarioLlm, BadLlmShapesAreLocated) {
  expect_errors(errors_of(with_llm("      layers: 4\n      hidden: 1024\n      heads: 16\n      kv_heads: 5\n"
                                   "      vocab: 32000\n      seq: 1024\n      experts: 8\n      expert_ffn: 512\n"
                                   "      top_k: 9\n      ffn: 4096\n      dense_layers: 5\n"
                                   "      window_every: 2\n      windows: 128\n")),
                {{20, 17, "kv_heads 5 must divide heads 16"},
                 {25, 14, "top_k 9 exceeds the 8 experts"},
                 {27, 21, "dense_layers 5 exceeds the 4 layers"},
                 {28, 21, "window and window_every go together"},
                 {29, 7, "unknown key 'windows'"}});
}

// A refused `experts` (line 23, `      experts: 32x`) is one error: the model is not also judged dense
// ("a dense LLM needs ffn") nor its expert keys as needing experts.
TEST(ScenarioLlm, ARefusedExpertCountIsOneError) {
  expect_errors(errors_of(with_llm("      layers: 2\n      hidden: 1024\n      heads: 16\n      vocab: 32000\n"
                                   "      seq: 1024\n      top_k: 2\n      experts: 32x\n      expert_ffn: 512\n")),
                {{23, 16, "expected an integer, got \"32x\""}});
}

// A misspelt top_k or expert_ffn of a mixture is said at the misspelling, not also as missing
// ("a mixture of experts needs top_k"). Lines: top_k on 22, expert_ffn on 24.
TEST(ScenarioLlm, AMisspeltExpertKeyIsOneError) {
  expect_errors(errors_of(with_llm("      layers: 2\n      hidden: 1024\n      heads: 16\n      vocab: 32000\n"
                                   "      seq: 1024\n      top_: 2\n      experts: 32\n      expert_ff: 512\n")),
                {{22, 7, "unknown key 'top_' in the LLM; did you mean 'top_k'?"},
                 {24, 7, "unknown key 'expert_ff' in the LLM; did you mean 'expert_ffn'?"}});
}

// Required keys missing or not numbers: each reported, and nothing divided by the missing head count
// (0 % 0 was a SIGFPE). Lines: layers on 17, heads on 18; hidden, vocab and seq are missing from the map
// on line 17 (reported where it starts).
TEST(ScenarioLlm, MissingShapeKeysAreReportedNotDividedBy) {
  const auto errors = errors_of(with_llm("      layers: 2\n      heads: many\n      ffn: 64\n"));
  ASSERT_FALSE(errors.empty());
  expect_error(errors.front(), 17, 7, "missing key 'hidden'");
  const bool heads_located = std::any_of(errors.begin(), errors.end(), [](const Diagnostic& d) {
    return d.location.line == 18 && d.message.find("expected an integer") != std::string::npos;
  });
  EXPECT_TRUE(heads_located) << dump(errors);
}

// 16 GB200 compute trays of 4 GPUs joined in one NVLink domain of 64.
LlmCase nvl64() {
  LlmCase rack;
  rack.gpu = "GB200";
  rack.gpus_per_node = 4;
  rack.domain = "nvlink_domain: 64";
  rack.nodes = 16;
  return rack;
}

// NVL72: 64 GB200 of 16 compute trays joined in one NVLink domain are one simulated node of 64 GPUs.
TEST(ScenarioLlm, NvlinkDomainJoinsTraysIntoOneNode) {
  const Scenario scenario = load(llm(nvl64(), "  expert_parallel: 8\n"));
  ASSERT_EQ(scenario.cluster.nodes.size(), 1u);
  EXPECT_EQ(scenario.cluster.node_types.front().gpus_per_node, 64);
  EXPECT_EQ(scenario.cluster.gpu_count(), 64u);
}

// A domain that is not whole trays, larger than NVL72, or that the nodes do not fill.
TEST(ScenarioLlm, BadNvlinkDomainsAreLocated) {
  LlmCase rack = nvl64();
  rack.nodes = 1;
  rack.domain = "nvlink_domain: 6";
  expect_error(errors_of(llm(rack, "")).at(0), 9, 22, "not a whole number of nodes of 4 GPUs");
  rack.domain = "nvlink_domain: 144";
  expect_error(errors_of(llm(rack, "")).at(0), 9, 22, "larger than the 72 GPUs");
  rack.domain = "nvlink_domain: 72";
  rack.nodes = 20;  // 80 GPUs: one rack and 8 GPUs over
  expect_error(errors_of(llm(rack, "")).at(0), 10, 11, "do not fill whole NVLink domains");
}

// A misspelt or refused key a domain's checks read is its own one error, not also a check of the default
// put in its place: `gpus_per_nod` (one GPU per node) is not also "an NVLink domain of 64 GPUs is larger
// than the 16 nodes of 1 GPUs", a NIC's `per_gp` not also "nvlink_domain needs nic: {per_gpu: true}", a
// group's `count: 16x` (one node) not also "larger than the 1 nodes of 4 GPUs".
TEST(ScenarioLlm, AMistakeBesideAnNvlinkDomainIsOneError) {
  const std::string valid = llm(nvl64(), "");
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string text = valid;
    return text.replace(text.find(from), from.size(), to);
  };
  // Line 6 "      gpus_per_node: 4"; line 8 "      nic: {link: IB-NDR, per_gpu: true}": per_gpu at column 27;
  // line 10 "  nodes: [{type: tray, count: 16}]": the count's value at column 31.
  expect_single_error(with("gpus_per_node:", "gpus_per_nod:"), 6, 7,
                      "unknown key 'gpus_per_nod' in node type 'tray'; did you mean 'gpus_per_node'?");
  expect_single_error(with("per_gpu:", "per_gp:"), 8, 27, "unknown key 'per_gp' in the NIC of node type 'tray'");
  expect_single_error(with("per_gpu: true", "per_gpu: yes please"), 8, 36, "expected true or false");
  expect_single_error(with("count: 16", "count: 16x"), 10, 31, "expected an integer");
}

// A misspelt `zoo` is one error: the model is not also read as a list of layers "missing key 'layers'".
TEST(ScenarioLlm, AMisspeltModelKindIsOneError) {
  // Line 14 "  model: {zoo: qwen3-30b-a3b, seq: 4096}": the key at column 11.
  std::string text = llm({}, "");
  text.replace(text.find("zoo:"), 4, "zo:");
  expect_single_error(text, 14, 11, "unknown key 'zo' in the model; did you mean 'zoo'?");
}

}  // namespace
}  // namespace dnnsim
