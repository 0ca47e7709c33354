// The LLM zoo (models/dnn/zoo_llm.hpp): parameter counts against the models' published sizes, and
// Megatron-Bridge's FLOP count against its own published table (data/megatron-bridge/).
#include "models/dnn/zoo_llm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "dnnsim/source_paths.hpp"
#include "models/cost/memory_model.hpp"

namespace dnnsim {
namespace {

LayerModel make(const std::string& name, int seq = 0, int mtp = -1) {
  ModelOptions options;
  options.seq = seq;
  options.mtp_layers = mtp;
  return builtin_models().at(name).value(options);
}

double parameters(const LayerModel& model) { return model.parameter_bytes().value() / kProfileBytesPerParameter; }

// The published totals (Llama 3 paper Table 3: 8B, 70B, 405B; DeepSeek-V3: 671B without its MTP
// module; Qwen3: 30.5B and 235B; GPT-OSS model card: 116.8B) within 2%: the zoo counts every weight
// matrix, norm and (GPT-OSS) bias it builds, and the embedding and head separately (untied).
TEST(LlmZoo, ParameterCountsMatchThePublishedSizes) {
  const std::map<std::string, double> published{
      {"llama3-8b", 8.03e9},     {"llama3-70b", 70.6e9},     {"llama3.1-405b", 405.9e9}, {"deepseek-v3", 671e9},
      {"qwen3-30b-a3b", 30.5e9}, {"qwen3-235b-a22b", 235e9}, {"gpt-oss-120b", 116.8e9}};
  for (const auto& [name, count] : published) EXPECT_NEAR(parameters(make(name)) / count, 1.0, 0.02) << name;
}

// Every layer keeps its forward FLOPs' multiple: the dims the parallelisms read are the provider's.
TEST(LlmZoo, DimensionsAreTheProvidersAndNotInferredFromTheProducts) {
  const LayerModel qwen = make("qwen3-30b-a3b");
  ASSERT_TRUE(qwen.transformer.has_value());
  EXPECT_EQ(qwen.transformer->hidden, 2048);  // heads × head dim = 32 × 128 = 4,096 ≠ hidden
  EXPECT_EQ(qwen.transformer->heads, 32);
  EXPECT_EQ(qwen.transformer->kv_width, 4 * (128 + 128));
  EXPECT_EQ(qwen.transformer->experts, 128);
  EXPECT_EQ(qwen.transformer->top_k, 8);
  const LayerModel deepseek = make("deepseek-v3");
  EXPECT_EQ(deepseek.transformer->kv_width, 128 * (192 + 128));  // MLA: keys 128 + 64 RoPE, values 128
}

struct Row {
  std::string gpu, model, precision, label;
  int seq = 0, tp = 0;
  double tokens = 0, tflops = 0;
};

std::vector<Row> table_rows() {
  std::ifstream file(DNNSIM_DATA_DIR "/megatron-bridge/performance-25.11.csv");
  std::string line;
  std::getline(file, line);
  std::vector<Row> rows;
  while (std::getline(file, line)) {
    std::vector<std::string> cells;
    std::stringstream stream(line);
    for (std::string cell; std::getline(stream, cell, ',');) cells.push_back(cell);
    // system,gpu,num_gpus,model,precision,gbs,mbs,seq_len,fsdp,tp,pp,cp,vp,ep,ga,tokens,tflops,release,task,label,…
    rows.push_back(Row{cells[1], cells[3], cells[4], cells[19], std::stoi(cells[7]), std::stoi(cells[9]),
                       std::stod(cells[15]), std::stod(cells[16])});
  }
  return rows;
}

// "Model TFLOP/s/GPU ÷ tokens/s/GPU = FLOPs per token" (both per GPU per second: the step time and GPU
// count cancel), so the table's own ratio checks a FLOP count with no timing in it. dnnsim's count
// (megatron_bridge_flops, and the model's model_flops_per_sample at TP 1) must reproduce every one of
// the 32 rows within 2% (the integers are rounded to 3-4 digits: model_flops.py finds 0.30% at worst).
TEST(LlmZoo, ModelFlopsReproduceTheTablesRatioOnEveryRow) {
  const std::vector<Row> rows = table_rows();
  ASSERT_EQ(rows.size(), 32u);
  for (const Row& row : rows) {
    SCOPED_TRACE(row.gpu + " " + row.model + " " + row.precision);
    const int mtp = row.label.find("w/ MTP") != std::string::npos ? 1 : 0;
    const LlmConfig* config = find_llm_config(row.model);
    ASSERT_NE(config, nullptr);
    const double table_per_token = row.tflops * 1e12 / row.tokens;
    const double ours = megatron_bridge_flops(*config, row.seq, row.tp, mtp).value() / row.seq;
    EXPECT_NEAR(ours / table_per_token, 1.0, 0.02);
    // The model's own count pads the vocabulary for TP 1: within 2% as well.
    const LayerModel model = make(row.model, row.seq, mtp);
    ASSERT_TRUE(model.model_flops_per_sample.has_value());
    EXPECT_NEAR(model.model_flops_per_sample->value() / row.seq / table_per_token, 1.0, 0.02);
  }
}

// The layers count the work done, which differs from the framework's count where Megatron-Bridge's
// formula simplifies: GPT-OSS's gated MLP has three GEMMs (the formula counts two) and half its blocks
// attend to a window of 128 keys (the formula counts s/2). For Llama 3 8B at s = 8,192 the two agree
// within 1% (the layers add the backward's recomputed attention scores: FlashAttention-2's five
// products against the formula's four, 0.5 × the core's forward, ~1.5% of the total… and the norms).
TEST(LlmZoo, LayersCountTheWorkDone) {
  const LayerModel llama = make("llama3-8b", 8192);
  double forward = 0, backward = 0;
  for (const Layer& layer : llama.layers) {
    forward += layer.forward_flops.value();
    backward += layer.backward_flops.value();
  }
  // The core's 2·(2·s·(s/2)·d·a) forward FLOPs per block, the backward's extra half of it.
  const double core_forward = 32 * 2 * (2.0 * 8192 * 4096 * 128 * 32);
  const double framework = llama.model_flops_per_sample->value();
  EXPECT_NEAR((forward + backward - 0.5 * core_forward) / framework, 1.0, 0.01);
}

const Layer* find_layer(const LayerModel& model, const std::string& name) {
  for (const Layer& layer : model.layers)
    if (layer.name == name) return &layer;
  return nullptr;
}

// GPT-OSS's eager passes (Megatron-Core core_dev_r0.15.0; zoo_llm.cpp has the code references), by hand
// for one sample of s = 4,096 tokens in bf16 (2 bytes), top-4 routing: N = s·k = 16,384 expert rows,
// fc1 output 2F = 5,760 wide, hidden h = 2,880.
//  - the clamp of the activation's halves and their cat: forward 4 × 2 B = 8 B per element of
//    [N, 2F] = 8 · 16,384 · 5,760 = 754,974,720 B; backward 15 B (the clamps' masks and selects 8 B on
//    the glu half, 14 B on the two-sided linear half, the chunk's cat 4 B): 1,415,577,600 B.
//  - fc2's bias added per expert with the probabilities: forward 6 × 2 B = 12 B per element of [N, h]
//    = 12 · 16,384 · 2,880 = 566,231,040 B; backward 8 × 2 B = 16 B: 754,974,720 B.
//  - RoPE unfused (YaRN's concentration 0.1·ln 32 + 1 = 1.347 ≠ 1) on 64 query and 8 key heads of 64:
//    4,608 · 4,096 = 18,874,368 elements; forward 12 × 2 B = 24 B each = 452,984,832 B; backward
//    10 × 2 B = 20 B: 377,487,360 B.
//  - the attention output's bias added unfused: forward 4 B per element of [s, h] = 47,185,920 B;
//    backward the bias gradient's reduction, 2 B: 23,592,960 B.
// Qwen3 (no biases, SwiGLU without a clamp) has none of them.
TEST(LlmZoo, GptOssPaysItsEagerPasses) {
  const LayerModel oss = make("gpt-oss-120b", 4096);
  const Layer* clamp = find_layer(oss, "block0.moe.experts.clamp");
  const Layer* bias = find_layer(oss, "block0.moe.experts.bias");
  const Layer* out_bias = find_layer(oss, "block0.attn.out.bias");
  ASSERT_NE(clamp, nullptr);
  ASSERT_NE(bias, nullptr);
  ASSERT_NE(out_bias, nullptr);
  EXPECT_DOUBLE_EQ(clamp->forward_traffic().value(), 754974720.0);
  EXPECT_DOUBLE_EQ(clamp->backward_traffic().value(), 1415577600.0);
  EXPECT_DOUBLE_EQ(bias->forward_traffic().value(), 566231040.0);
  EXPECT_DOUBLE_EQ(bias->backward_traffic().value(), 754974720.0);
  const Layer* rope = find_layer(oss, "block0.attn.rope");
  ASSERT_NE(rope, nullptr);
  EXPECT_DOUBLE_EQ(rope->forward_traffic().value(), 452984832.0);
  EXPECT_DOUBLE_EQ(rope->backward_traffic().value(), 377487360.0);
  EXPECT_DOUBLE_EQ(out_bias->forward_traffic().value(), 47185920.0);
  EXPECT_DOUBLE_EQ(out_bias->backward_traffic().value(), 23592960.0);
  const LayerModel qwen = make("qwen3-30b-a3b", 4096);
  EXPECT_EQ(find_layer(qwen, "block0.moe.experts.clamp"), nullptr);
  EXPECT_EQ(find_layer(qwen, "block0.moe.experts.bias"), nullptr);
  EXPECT_EQ(find_layer(qwen, "block0.attn.out.bias"), nullptr);
  EXPECT_EQ(find_layer(qwen, "block0.attn.rope"), nullptr);
}

}  // namespace
}  // namespace dnnsim
