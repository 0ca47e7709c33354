#include "models/dnn/zoo.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "models/common/diagnostics.hpp"
#include "models/dnn/model_table.hpp"

namespace dnnsim {
namespace {

LayerModel zoo(const std::string& name, const ModelOptions& options = {}) {
  return builtin_models().at(name).value(options);
}

double parameters(const std::string& name) { return model_totals(zoo(name)).parameters; }

Flop matmul_flops(const LayerModel& model) {
  Flop total{0};
  for (const Layer& layer : model.layers)
    for (const MatmulShape& shape : layer.matmuls) total += shape.flops();
  return total;
}

// Published parameter counts, within 2%.
TEST(Zoo, ParameterCountsMatchThePapers) {
  struct Published {
    const char* name;
    double parameters;
  };
  for (const Published& p : {
           Published{"gpt3-175b", 175e9},     // Brown et al. 2020, Table 2.1
           Published{"gpt3-13b", 13.0e9},     // idem
           Published{"gpt3-xl", 1.3e9},       // idem
           Published{"gpt2-xl", 1542e6},      // Radford et al. 2019, Table 2
           Published{"bert-large", 340e6},    // Devlin et al. 2019, §3
           Published{"bert-base", 110e6},     // idem
           Published{"bert-48", 640e6},       // Fan et al. (DAPPLE) 2021; its profile sums to 637.5M
           Published{"t5-base", 220e6},       // Raffel et al. 2020, §3.7
           Published{"vit-base/16", 86e6},    // Dosovitskiy et al. 2021, Table 1
           Published{"vit-large/16", 307e6},  // idem
           Published{"vit-huge/14", 632e6},   // idem
           Published{"vgg16", 138e6},         // Simonyan & Zisserman 2015, Table 2
           Published{"vgg19", 144e6},         // idem
           Published{"resnet50", 25.6e6},     // torchvision model card (He et al. 2016 give no count)
           Published{"resnet152", 60.2e6},    // idem
       }) {
    EXPECT_NEAR(parameters(p.name) / p.parameters, 1.0, 0.02) << p.name << ": " << parameters(p.name);
  }
}

// Exact counts of the reference implementations, derived by hand:
// GPT-2 small (HF GPT2LMHeadModel, tied head): (50257 + 1024)·768 + 12·(12·768² + 13·768) + 2·768
//   = 39,383,808 + 85,054,464 + 1,536 = 124,439,808.
// VGG-16 (torchvision): 14,714,688 convolution + 123,642,856 fc = 138,357,544.
// ResNet-50 (torchvision, BatchNorm affine counted, running statistics not): 25,557,032.
// ViT-B/16 (timm): 768·(3·16·16 + 1) + 768 [CLS] + 197·768 + 12·7,087,872 + 2·768 + 769·1000 = 86,567,656.
TEST(Zoo, ParameterCountsMatchTheReferenceImplementationsExactly) {
  EXPECT_DOUBLE_EQ(parameters("gpt2-small"), 124'439'808);
  EXPECT_DOUBLE_EQ(parameters("vgg16"), 138'357'544);
  EXPECT_DOUBLE_EQ(parameters("resnet50"), 25'557'032);
  EXPECT_DOUBLE_EQ(parameters("vit-base/16"), 86'567'656);
}

// He et al. 2016, Table 1 print 3.8e9 "FLOPs" (multiply-adds) for ResNet-50 v1 (stride on the first
// 1×1 of a block); torchvision's v1.5 (stride on the 3×3), which the zoo builds, has 4.09e9 MACs in
// its convolutions and fc (torchvision model card "GFLOPS 4.09", counted by fvcore as MACs). MACs =
// FLOPs / 2. The element-wise work (BatchNorm, ReLU, adds, pooling) adds under 2% on top.
TEST(Zoo, ResNet50ForwardIs4Point1GigaMacs) {
  const LayerModel model = zoo("resnet50");
  EXPECT_NEAR(matmul_flops(model).value() / 2 / 4.089e9, 1.0, 0.005);
  EXPECT_NEAR(model_totals(model).forward_flops.value() / 2 / 4.089e9, 1.0, 0.02);
  // ResNet-152: torchvision 11.51 GMACs; VGG-16: 15.47 GMACs.
  EXPECT_NEAR(matmul_flops(zoo("resnet152")).value() / 2 / 11.51e9, 1.0, 0.01);
  EXPECT_NEAR(matmul_flops(zoo("vgg16")).value() / 2 / 15.47e9, 1.0, 0.01);
}

// Kaplan et al. 2020, Table 1: C_forward ≈ 2N + 2·n_layer·n_ctx·d_attn FLOPs per token (N: parameters;
// the zoo's N includes the tied embedding, which accounts for the de-embedding 2·d_model·n_vocab).
// That attention term is the Q·Kᵀ product only; the zoo also counts P·V, which is as large, without
// causal skipping (dense kernels compute the masked half). So per token
//   forward ≈ 2N + 4·n_layer·n_ctx·d_model,
// which is also Narayanan et al. (SC'21, §5.1): 24·s·l·h²·(1 + s/(6h) + V/(12·l·h)) per sequence,
// and backward ≈ 2 × forward. Element-wise work (norms, softmax, GeLU) stays under 2%.
TEST(Zoo, GptForwardFlopsFollowKaplanAndMegatron) {
  struct Gpt {
    const char* name;
    double layers, hidden, seq, vocab;
  };
  for (const Gpt& g : {Gpt{"gpt2-small", 12, 768, 1024, 50257}, Gpt{"gpt2-xl", 48, 1600, 1024, 50257},
                       Gpt{"gpt3-small", 12, 768, 2048, 50257}, Gpt{"gpt3-2.7b", 32, 2560, 2048, 50257},
                       Gpt{"gpt3-175b", 96, 12288, 2048, 50257}}) {
    SCOPED_TRACE(g.name);
    const ModelTotals totals = model_totals(zoo(g.name));
    const double per_token = totals.forward_flops.value() / g.seq;
    EXPECT_NEAR(per_token / (2 * totals.parameters + 4 * g.layers * g.seq * g.hidden), 1.0, 0.02);
    const double megatron = 24 * g.seq * g.layers * g.hidden * g.hidden *
                            (1 + g.seq / (6 * g.hidden) + g.vocab / (12 * g.layers * g.hidden));
    EXPECT_NEAR(totals.forward_flops.value() / megatron, 1.0, 0.02);
    EXPECT_NEAR(totals.backward_flops / totals.forward_flops, 2.0, 0.04);
  }
}

TEST(Zoo, EveryLayerIsComplete) {
  for (const auto& entry : builtin_models().entries()) {
    SCOPED_TRACE(entry.name);
    EXPECT_FALSE(entry.description.empty());
    EXPECT_FALSE(entry.source.empty());
    const LayerModel model = entry.value(ModelOptions{});
    EXPECT_EQ(model.name, entry.name);
    ASSERT_FALSE(model.layers.empty());
    if (!model.measured_on.empty()) {
      // A profile-backed entry (amoebanet-36): measured times on every layer, no FLOPs.
      for (const Layer& layer : model.layers) {
        SCOPED_TRACE(layer.name);
        ASSERT_TRUE(layer.forward_time.has_value() && layer.backward_time.has_value());
        EXPECT_GE(layer.forward_time->value(), 0.0);
        EXPECT_EQ(layer.forward_flops.value(), 0.0);
      }
      continue;
    }
    for (const Layer& layer : model.layers) {
      SCOPED_TRACE(layer.name);
      EXPECT_FALSE(layer.name.empty());
      EXPECT_NE(layer.kind, LayerKind::other);
      EXPECT_GT(layer.forward_flops.value(), 0.0);
      EXPECT_GE(layer.backward_flops, layer.forward_flops);
      EXPECT_GE(layer.backward_weight_flops.value(), 0.0);
      EXPECT_LE(layer.backward_weight_flops, layer.backward_flops);
      EXPECT_GE(layer.parameter_bytes.value(), 0.0);
      // The LLM zoo keeps a tensor once, where Transformer Engine saves it (zoo_llm.hpp): a layer whose
      // input another layer keeps (the output projection's, the core's O) keeps nothing of its own.
      if (model.transformer)
        EXPECT_GE(layer.activation_bytes.value(), 0.0);
      else
        EXPECT_GT(layer.activation_bytes.value(), 0.0);
      EXPECT_GT(layer.forward_bytes.value(), 0.0);
      EXPECT_FALSE(layer.forward_time.has_value());
      Flop products{0};
      for (const MatmulShape& shape : layer.matmuls) {
        EXPECT_GT(shape.m * shape.n * shape.k, 0);
        products += shape.flops();
      }
      EXPECT_LE(products, layer.forward_flops);
      const bool has_products =
          layer.kind == LayerKind::matmul || layer.kind == LayerKind::convolution || layer.kind == LayerKind::attention;
      EXPECT_EQ(!layer.matmuls.empty(), has_products);
    }
  }
}

TEST(Zoo, UnknownNameSuggestsTheClosest) {
  try {
    (void)builtin_models().at("gpt2-smal");
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_THAT(error.what(), ::testing::HasSubstr("unknown model 'gpt2-smal'"));
    EXPECT_THAT(error.what(), ::testing::HasSubstr("gpt2-small"));
  }
}

TEST(Zoo, OptionsChangeCostsNotParameters) {
  const ModelTotals base = model_totals(zoo("gpt2-small"));
  const ModelTotals short_seq = model_totals(zoo("gpt2-small", {.seq = 512}));
  EXPECT_DOUBLE_EQ(short_seq.parameters, base.parameters);
  EXPECT_LT(short_seq.forward_flops.value(), base.forward_flops.value() / 2);  // attention shrinks quadratically
  EXPECT_GT(short_seq.forward_flops.value(), base.forward_flops.value() / 2.2);

  // Element sizes scale the bytes only, but for the loss's fp32 softmax (4 bytes per logit, 1,024 ×
  // 50,257 logits per sample, at either size): fp32 = 2 · (base − 4·L) + 4·L = 2 · base − 4·L.
  const ModelTotals fp32 = model_totals(zoo("gpt2-small", {.activation_bytes_per_element = 4}));
  EXPECT_DOUBLE_EQ(fp32.activation_bytes.value(), 2 * base.activation_bytes.value() - 4.0 * 1024 * 50257);
  const LayerModel fp16_weights = zoo("gpt2-small", {.parameter_bytes_per_element = 2});
  EXPECT_DOUBLE_EQ(fp16_weights.parameter_bytes().value() * 2, base.parameter_bytes.value());

  // ViT at 384 pixels: (384/16)² + 1 = 577 tokens; only the position table grows.
  const LayerModel vit384 = zoo("vit-base/16", {.image = 384});
  EXPECT_DOUBLE_EQ(model_totals(vit384).parameters - parameters("vit-base/16"), (577 - 197) * 768.0);
  EXPECT_EQ(vit384.layers[2].matmuls.front().m, 577);  // block0.attn.qkv
}

// The LM head and its loss as Megatron-LM runs them (the logits GEMM, then
// vocab_parallel_cross_entropy(logits.float(), …) as kernels of its own), per sample of GPT-2 small
// (seq 1024, vocabulary 50,257, hidden 768). fp16 activations (e = 2 bytes): forward, the product
// reads its input (768 elements per token) and writes the logits (1 per logit); the loss moves 6
// (cast) + 4 (max) + 8 (subtract) + 8 (exp) + 4 (sum) + 8 (divide) = 38 bytes = 19 elements per
// logit. Backward, the product reads the logits' gradient and its input and writes the input's
// gradient (1 + 2 · 768); the loss scales the kept softmax (8 bytes) and casts it back (6): 7
// elements. The product keeps its input (768 per token) while a cut after it carries the logits; the
// loss keeps the fp32 softmax (4 bytes per logit). fp32 (e = 4): no casts, 32 / 4 = 8 elements
// forward and 8 / 4 = 2 backward.
TEST(Zoo, TheLanguageModelHeadIsFollowedByItsFp32CrossEntropy) {
  const double tokens = 1024, vocab = 50257, hidden = 768;
  const LayerModel half = zoo("gpt2-small");
  const Layer& head = half.layers[half.layers.size() - 2];
  const Layer& loss = half.layers.back();
  EXPECT_EQ(head.name, "head");
  EXPECT_EQ(loss.name, "cross_entropy");
  EXPECT_EQ(loss.kind, LayerKind::loss);
  EXPECT_DOUBLE_EQ(head.forward_bytes.value(), tokens * (hidden + vocab) * 2);
  EXPECT_DOUBLE_EQ(head.backward_bytes.value(), tokens * (2 * hidden + vocab) * 2);
  EXPECT_DOUBLE_EQ(head.activation_bytes.value(), tokens * hidden * 2);
  EXPECT_DOUBLE_EQ(head.bytes_across_cut().value(), tokens * vocab * 2);
  EXPECT_DOUBLE_EQ(loss.forward_bytes.value(), tokens * 19 * vocab * 2);
  EXPECT_DOUBLE_EQ(loss.backward_bytes.value(), tokens * 7 * vocab * 2);
  EXPECT_DOUBLE_EQ(loss.activation_bytes.value(), tokens * vocab * 4);
  const Layer fp32 = zoo("gpt2-small", {.activation_bytes_per_element = 4}).layers.back();
  EXPECT_DOUBLE_EQ(fp32.forward_bytes.value(), tokens * 8 * vocab * 4);
  EXPECT_DOUBLE_EQ(fp32.backward_bytes.value(), tokens * 2 * vocab * 4);
  EXPECT_DOUBLE_EQ(fp32.activation_bytes.value(), tokens * vocab * 4);
}

TEST(Zoo, OptionsThatDoNotFitAreInputErrors) {
  EXPECT_THROW((void)zoo("gpt2-small", {.seq = 2048}), InputError);    // 1024 learned positions
  EXPECT_THROW((void)zoo("vit-base/16", {.image = 200}), InputError);  // not a multiple of 16
  EXPECT_THROW((void)zoo("resnet50", {.image = 16}), InputError);
  EXPECT_THROW((void)zoo("vgg16", {.seq = -1}), InputError);
}

// A mixture of E experts with top-k routing holds E MLPs but runs k per token: against the same block
// with a dense MLP, the parameters grow by (E − 1)·(2·h·f + f + h) + h·E (router) and the MLP
// products by k.
TEST(Zoo, MoeCountsAllExpertsInParametersAndTopKInFlops) {
  const TransformerConfig moe{
      .name = "moe", .layers = 1, .hidden = 1024, .heads = 16, .seq = 1024, .vocab = 0, .experts = 8, .top_k = 2};
  TransformerConfig dense = moe;
  dense.experts = dense.top_k = 0;
  const LayerModel sparse_model = transformer_model(moe, {});
  const LayerModel dense_model = transformer_model(dense, {});
  const double h = 1024, f = 4096;
  EXPECT_DOUBLE_EQ(model_totals(sparse_model).parameters - model_totals(dense_model).parameters,
                   7 * (2 * h * f + f + h) + h * 8);
  const auto layer = [](const LayerModel& model, const std::string& name) -> const Layer& {
    for (const Layer& l : model.layers)
      if (l.name == name) return l;
    throw std::runtime_error("no layer " + name);
  };
  EXPECT_DOUBLE_EQ(layer(sparse_model, "block0.mlp.fc1").matmuls.front().flops().value(),
                   2 * layer(dense_model, "block0.mlp.fc1").matmuls.front().flops().value());
  EXPECT_DOUBLE_EQ(model_totals(zoo("moe-layer")).parameters, model_totals(sparse_model).parameters);
}

TEST(Zoo, EncoderDecoderHasCrossAttention) {
  const LayerModel t5 = zoo("t5-base");
  int cross = 0;
  for (const Layer& layer : t5.layers) cross += layer.name.find(".cross.core") != std::string::npos ? 1 : 0;
  EXPECT_EQ(cross, 12);
  const Layer& head = t5.layers[t5.layers.size() - 2];
  EXPECT_EQ(head.name, "head");
  EXPECT_DOUBLE_EQ(head.parameter_bytes.value(), 0.0);  // tied to the shared embedding
}

TEST(ModelTable, ListsEveryLayerAndTheTotals) {
  const LayerModel model = zoo("resnet50");
  const std::string table = format_model_table(model, 8);
  EXPECT_THAT(table, ::testing::HasSubstr("model resnet50: 20 layers, batch 8"));
  EXPECT_THAT(table, ::testing::HasSubstr("stage4.block2"));
  EXPECT_THAT(table, ::testing::HasSubstr("parameters: 25.56M"));
  // 8 × 2 × 4.1 GMACs ≈ 65.8 GFLOP forward.
  EXPECT_THAT(table, ::testing::HasSubstr("FLOPs for 8 samples: forward 66"));
  const ModelTotals totals = model_totals(model);
  EXPECT_DOUBLE_EQ(totals.parameter_bytes.value(), 4 * 25'557'032.0);
  EXPECT_FALSE(totals.measured);
}

TEST(ModelTable, MeasuredModelsShowScaledTimes) {
  LayerModel model;
  model.name = "measured";
  model.measured_on = "V100-16GB";
  model.measured_batch = 4;
  Layer layer;
  layer.name = "conv";
  layer.kind = LayerKind::convolution;
  layer.forward_time = Seconds(2e-3);
  layer.backward_time = Seconds(4e-3);
  layer.parameter_bytes = Bytes(4e6);
  model.layers = {layer, layer};
  const std::string table = format_model_table(model, 8);  // twice the measured batch
  EXPECT_THAT(table, ::testing::HasSubstr("times measured on V100-16GB for 4 samples"));
  EXPECT_THAT(table, ::testing::HasSubstr("4 ms"));  // one layer's forward, × 8/4
  EXPECT_THAT(table, ::testing::HasSubstr("measured: forward 8 ms, backward 16 ms for 8 samples"));
  EXPECT_THAT(table, ::testing::HasSubstr("parameters: 2.00M"));
  EXPECT_NEAR(model_totals(model).forward_time.value(), 4e-3, 1e-15);
}

}  // namespace
}  // namespace dnnsim
