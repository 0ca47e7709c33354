#include "models/dnn/zoo.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <utility>

#include "dnnsim/source_paths.hpp"
#include "models/common/builtin_registry.hpp"
#include "models/dnn/profile_graph.hpp"
#include "models/dnn/zoo_builder.hpp"
#include "models/dnn/zoo_llm.hpp"

namespace dnnsim {
namespace {

using namespace zoo_detail;

// ---- transformer pieces -------------------------------------------------------------------------

// y = x·W (+ b) over `tokens` rows; `copies` weight matrices (MoE experts, each token uses one).
void linear(Builder& b, std::string name, double tokens, double in, double out, bool bias, double copies = 1) {
  b.layer(std::move(name), LayerKind::matmul)
      .weights(copies * (in * out + (bias ? out : 0.0)))
      .product(tokens, out, in, true)
      .io(tokens * (in + out))
      .keep(tokens * out);
}

void norm(Builder& b, std::string name, double tokens, double hidden, bool bias) {
  b.layer(std::move(name), LayerKind::normalization)
      .weights(bias ? 2.0 * hidden : hidden)
      .elementwise(tokens * hidden, kNormFlops)
      .keep(tokens * hidden);
}

// Token (+ position, + segment) lookup: `rows` table rows; the backward is the scatter-add into the
// table, all of it weight gradient.
void embedding(Builder& b, std::string name, double tokens, double hidden, double rows) {
  b.layer(std::move(name), LayerKind::embedding).weights(rows * hidden).elementwise(tokens * hidden, kSimpleFlops);
  b.keep(tokens * hidden).last().backward_weight_flops = b.last().backward_flops;
}

// Norm, projections, attention core (Q·Kᵀ per head, softmax, dropout, P·V) and output projection with
// the residual add. Cross-attention projects Q from the decoder and K, V from `kv_len` encoder tokens.
// The core runs unfused, as Megatron-LM does (baddbmm, fused scale-mask-softmax, dropout, bmm): the
// score matrix is written by Q·Kᵀ, read and rewritten by the softmax, read and rewritten by the
// dropout (which also writes its 1-byte mask) and read by P·V, the tensors Korthikanti et al. (MLSys'23,
// §4.1) count for its memory (softmax output, dropout mask and output: 5·a·s²·b bytes), as
// models/dnn/tensor_parallel.cpp does. Its time is mostly this traffic for short hidden sizes
// (s/h large), where the products are small.
void attention(Builder& b, const std::string& prefix, const TransformerConfig& c, double q_len, double kv_len,
               bool cross) {
  const double h = c.hidden;
  const double head_dim = h / c.heads;
  const double scores = c.heads * q_len * kv_len;
  norm(b, prefix + "norm", q_len, h, c.bias);
  if (cross) {
    linear(b, prefix + "q", q_len, h, h, c.bias);
    linear(b, prefix + "kv", kv_len, h, 2 * h, c.bias);
  } else {
    linear(b, prefix + "qkv", q_len, h, 3 * h, c.bias);
  }
  b.layer(prefix + "core", LayerKind::attention)
      .product(c.heads * q_len, kv_len, head_dim, false)  // scores = Q·Kᵀ
      .elementwise(scores, kSoftmaxFlops)                 // P = softmax(S): reads S, writes P
      .product(c.heads * q_len, head_dim, kv_len, false)  // context = P'·V
      .io(2 * q_len * h + 2 * kv_len * h + 2 * scores)    // Q, K, V, context; S written, P' read
      .io(2.5 * scores)                                   // dropout: reads P, writes P' and a 1-byte mask
      .keep(q_len * h + scores);                          // context and softmax probabilities
  linear(b, prefix + "out", q_len, h, h, c.bias);
  b.elementwise(q_len * h, kSimpleFlops);  // residual add
}

// Norm, up-projection + GeLU, down-projection + residual add; with experts, a router first and
// top_k experts per token.
void mlp(Builder& b, const std::string& prefix, const TransformerConfig& c, double tokens) {
  const double h = c.hidden;
  const double ffn = c.ffn > 0 ? c.ffn : 4.0 * h;
  double routed = tokens;
  double copies = 1;
  norm(b, prefix + "norm", tokens, h, c.bias);
  if (c.experts > 0) {
    linear(b, prefix + "router", tokens, h, c.experts, false);
    b.elementwise(tokens * c.experts, kSoftmaxFlops);
    routed = tokens * c.top_k;
    copies = c.experts;
  }
  linear(b, prefix + "fc1", routed, h, ffn, c.bias, copies);
  b.elementwise(routed * ffn, kGeluFlops).keep(routed * ffn);  // GeLU input and output are both kept
  linear(b, prefix + "fc2", routed, ffn, h, c.bias, copies);
  b.elementwise(tokens * h, kSimpleFlops);  // residual add (and the experts' weighted combine)
}

void blocks(Builder& b, const std::string& prefix, const TransformerConfig& c, double seq, bool cross) {
  for (int i = 0; i < c.layers; ++i) {
    const std::string block = fmt::format("{}block{}.", prefix, i);
    attention(b, block + "attn.", c, seq, seq, false);
    if (cross) attention(b, block + "cross.", c, seq, seq, true);
    mlp(b, block + "mlp.", c, seq);
  }
}

// ---- CNN pieces ---------------------------------------------------------------------------------

struct Feature {
  double c, h, w;
  [[nodiscard]] double elements() const { return c * h * w; }
};

double out_size(double in, int kernel, int stride, int pad) {
  return static_cast<double>((static_cast<int>(in) + 2 * pad - kernel) / stride + 1);
}

// A k×k convolution (padding k/2) with BatchNorm or a bias, then an optional in-place ReLU, added to
// the current layer. Keeps the convolution output (and the BatchNorm output).
Feature conv(Builder& b, Feature in, double out, int kernel, int stride, bool batch_norm, bool relu) {
  const Feature o{out, out_size(in.h, kernel, stride, kernel / 2), out_size(in.w, kernel, stride, kernel / 2)};
  const double k = in.c * kernel * kernel;
  b.weights(k * out + (batch_norm ? 2.0 * out : out)).product(o.h * o.w, out, k, true);
  b.io(in.elements() + o.elements()).keep(o.elements());
  if (batch_norm) b.elementwise(o.elements(), kNormFlops).keep(o.elements());
  if (relu) b.elementwise(o.elements(), kSimpleFlops);
  return o;
}

Feature pool(Builder& b, std::string name, Feature in, int kernel, int stride, int pad) {
  const Feature o{in.c, out_size(in.h, kernel, stride, pad), out_size(in.w, kernel, stride, pad)};
  b.layer(std::move(name), LayerKind::pooling)
      .work(o.elements() * kernel * kernel)
      .io(in.elements() + o.elements())
      .keep(o.elements());
  return o;
}

// Global (or adaptive) average pooling to side×side.
Feature average_pool(Builder& b, Feature in, double side) {
  const Feature o{in.c, side, side};
  b.layer("avgpool", LayerKind::pooling).work(in.elements()).io(in.elements() + o.elements()).keep(o.elements());
  return o;
}

int image_side(const std::string& name, const ModelOptions& options, int minimum) {
  const int image = options.image > 0 ? options.image : 224;
  require(image >= minimum, name, fmt::format("image {} is smaller than {} pixels", image, minimum));
  return image;
}

// ---- other models -------------------------------------------------------------------------------

// One LSTM layer (Hochreiter & Schmidhuber 1997) per direction: per step the four gates are one
// product of [x_t; h_{t-1}] (in + hidden) with a (in + hidden)×4·hidden matrix, two bias vectors (as
// cuDNN/PyTorch); all steps folded into m, although the recurrence makes them sequential.
void lstm(Builder& b, std::string name, double tokens, double in, double hidden, int directions) {
  b.layer(std::move(name), LayerKind::matmul)
      .weights(directions * (4 * hidden * (in + hidden) + 8 * hidden))
      .product(directions * tokens, 4 * hidden, in + hidden, true)
      .elementwise(directions * tokens * 4 * hidden, kGateFlops)
      .io(tokens * in + directions * tokens * hidden)
      .keep(directions * tokens * 6 * hidden);  // gates, cell state, output
}

// GNMT (Wu et al. 2016) with 8 encoder and 8 decoder LSTM layers of 1024, as PipeDream/DAPPLE run it:
// a bidirectional first encoder layer, residual connections from the third layer on, a normalized
// Bahdanau attention fed by the first decoder layer and concatenated to the input of the others.
LayerModel gnmt_model(const ModelOptions& options) {
  const double hidden = 1024;
  const double vocab = 32000;
  const std::string name = "gnmt-16";
  Builder b(name, options);
  const double seq = options.seq > 0 ? options.seq : 50;
  embedding(b, "encoder.embedding", seq, hidden, vocab);
  lstm(b, "encoder.lstm0", seq, hidden, hidden, 2);
  lstm(b, "encoder.lstm1", seq, 2 * hidden, hidden, 1);
  for (int i = 2; i < 8; ++i) {
    lstm(b, fmt::format("encoder.lstm{}", i), seq, hidden, hidden, 1);
    b.elementwise(seq * hidden, kSimpleFlops);  // residual
  }
  embedding(b, "decoder.embedding", seq, hidden, vocab);
  lstm(b, "decoder.lstm0", seq, hidden, hidden, 1);
  // score(q, k) = vᵀ·tanh(W_q·q + W_k·k + b): additive, about 3·hidden FLOPs per (query, key) pair.
  b.layer("decoder.attention", LayerKind::attention)
      .weights(2 * hidden * hidden + 3 * hidden)
      .product(seq, hidden, hidden, true)
      .product(seq, hidden, hidden, true)
      .work(3 * seq * seq * hidden)
      .elementwise(seq * seq, kSoftmaxFlops)
      .product(seq, hidden, seq, false)
      .io(4 * seq * hidden + seq * seq)
      .keep(seq * seq + seq * hidden);
  for (int i = 1; i < 8; ++i) {
    lstm(b, fmt::format("decoder.lstm{}", i), seq, 2 * hidden, hidden, 1);
    if (i >= 2) b.elementwise(seq * hidden, kSimpleFlops);  // residual
  }
  linear(b, "classifier", seq, hidden, vocab, true);
  b.elementwise(seq * vocab, kSoftmaxFlops);  // softmax cross-entropy
  return b.build();
}

std::string transformer_description(const std::string& what, const TransformerConfig& c) {
  return fmt::format("{}: {} layers{}, d_model {}, {} heads, FFN {}, seq {}{}{}", what, c.layers,
                     c.decoder_only ? "" : " per stack (encoder-decoder)", c.hidden, c.heads,
                     c.ffn > 0 ? c.ffn : 4 * c.hidden, c.seq, c.vocab > 0 ? fmt::format(", vocab {}", c.vocab) : "",
                     c.experts > 0 ? fmt::format(", {} experts top-{}", c.experts, c.top_k) : "");
}

}  // namespace

LayerModel transformer_model(const TransformerConfig& c, const ModelOptions& options) {
  Builder b(c.name, options);
  require(c.layers > 0 && c.hidden > 0 && c.heads > 0 && c.hidden % c.heads == 0 && c.seq > 0 && c.vocab >= 0, c.name,
          "layers, hidden, heads and seq must be > 0 and hidden a multiple of heads");
  require(c.experts == 0 || (c.top_k >= 1 && c.top_k <= c.experts), c.name, "top_k must be in [1, experts]");
  const double seq = options.seq > 0 ? options.seq : c.seq;
  const int positions = c.positions < 0 ? c.seq : c.positions;
  require(positions == 0 || seq <= positions, c.name,
          fmt::format("seq {} exceeds the {} learned positions", seq, positions));
  const bool lm = c.vocab > 0;
  const double h = c.hidden;
  if (lm) embedding(b, c.decoder_only ? "embedding" : "encoder.embedding", seq, h, c.vocab + positions + c.token_types);
  if (c.decoder_only) {
    blocks(b, "", c, seq, false);
    if (lm) norm(b, "final_norm", seq, h, c.bias);
  } else {
    blocks(b, "encoder.", c, seq, false);
    norm(b, "encoder.final_norm", seq, h, c.bias);
    if (lm) embedding(b, "decoder.embedding", seq, h, 0);  // shares the encoder's table
    blocks(b, "decoder.", c, seq, true);
    norm(b, "decoder.final_norm", seq, h, c.bias);
  }
  // Language models: a sample is a sequence, so reports can give tokens per second.
  const auto with_tokens = [seq](LayerModel model) {
    model.tokens_per_sample = static_cast<int>(seq);
    return model;
  };
  if (!lm) return with_tokens(b.build());
  if (c.mlm_head) {
    linear(b, "head.transform", seq, h, h, true);
    b.elementwise(seq * h, kGeluFlops).weights(2 * h).elementwise(seq * h, kNormFlops);
  }
  // The logits GEMM, tied to the token embedding: no weights of its own (an output bias for BERT's
  // MLM head). It keeps its input for the weight gradient, while a pipeline cut after it carries the
  // logits; forward it reads the input and writes the logits, backward it reads the logits' gradient
  // and the input and writes the input's gradient.
  const double logits = seq * c.vocab;
  b.layer("head", LayerKind::matmul)
      .weights(c.mlm_head ? c.vocab : 0.0)
      .product(seq, c.vocab, h, true)
      .io(seq * h + logits)
      .backward_io(2.0 * seq * h + logits)
      .keep(seq * h);
  b.last().cut_bytes = Bytes(logits * b.element_bytes());
  // The loss as Megatron-LM computes it, vocab_parallel_cross_entropy(logits.float(), labels)
  // (megatron/model/gpt_model.py, megatron/mpu/cross_entropy.py): kernels of their own after the
  // GEMM, so their time adds to it. Passes over the logits: a half-precision model's logits cast to
  // fp32 (read e, write 4 bytes per logit), then max (4), an in-place subtract (8), exp (8), sum (4)
  // and an in-place divide whose fp32 softmax is kept for the backward (8): 32 + e + 4 bytes per
  // logit. Backward: the softmax scaled in place by the loss gradient (8) and cast back (4 + e).
  const double e = b.element_bytes();
  const double cast = e < 4.0 ? 4.0 + e : 0.0;
  b.layer("cross_entropy", LayerKind::loss)
      .work(logits * kSoftmaxFlops)
      .io(logits * (32.0 + cast) / e)
      .backward_io(logits * (8.0 + cast) / e)
      .keep(logits * 4.0 / e);
  return with_tokens(b.build());
}

LayerModel vit_model(const VitConfig& c, const ModelOptions& options) {
  Builder b(c.name, options);
  const int image = image_side(c.name, options, c.patch);
  require(image % c.patch == 0, c.name, fmt::format("image {} is not a multiple of the patch {}", image, c.patch));
  const double patches = static_cast<double>(image / c.patch) * (image / c.patch);
  const double seq = patches + 1;
  const double h = c.hidden;
  const double patch_pixels = 3.0 * c.patch * c.patch;
  // A patch×patch convolution of stride patch: one product row per patch. [CLS] token and positions.
  b.layer("patch_embedding", LayerKind::convolution)
      .weights(patch_pixels * h + h + h + seq * h)
      .product(patches, h, patch_pixels, true)
      .io(3.0 * image * image + patches * h)
      .elementwise(seq * h, kSimpleFlops)
      .keep(seq * h);
  const TransformerConfig t{.name = c.name,
                            .layers = c.layers,
                            .hidden = c.hidden,
                            .heads = c.heads,
                            .seq = static_cast<int>(seq),
                            .vocab = 0,
                            .ffn = c.mlp};
  require(c.hidden % c.heads == 0, c.name, "hidden must be a multiple of heads");
  blocks(b, "", t, seq, false);
  norm(b, "final_norm", seq, h, true);
  linear(b, "head", 1, h, c.classes, true);  // on the [CLS] token
  return b.build();
}

LayerModel vgg_model(const std::string& name, const std::vector<int>& convs_per_stage, const ModelOptions& options) {
  Builder b(name, options);
  Feature x{3, 0, 0};
  x.h = x.w = image_side(name, options, 32);
  const double widths[] = {64, 128, 256, 512, 512};
  for (std::size_t s = 0; s < convs_per_stage.size() && s < 5; ++s) {
    for (int i = 0; i < convs_per_stage[s]; ++i) {
      b.layer(fmt::format("conv{}_{}", s + 1, i + 1), LayerKind::convolution);
      x = conv(b, x, widths[s], 3, 1, false, true);
    }
    x = pool(b, fmt::format("pool{}", s + 1), x, 2, 2, 0);
  }
  x = average_pool(b, x, 7);
  linear(b, "fc6", 1, x.elements(), 4096, true);
  b.elementwise(4096, kSimpleFlops);  // ReLU (dropout)
  linear(b, "fc7", 1, 4096, 4096, true);
  b.elementwise(4096, kSimpleFlops);
  linear(b, "fc8", 1, 4096, 1000, true);
  return b.build();
}

LayerModel resnet_model(const std::string& name, const std::vector<int>& blocks, const ModelOptions& options) {
  Builder b(name, options);
  Feature x{3, 0, 0};
  x.h = x.w = image_side(name, options, 32);
  b.layer("conv1", LayerKind::convolution);
  x = conv(b, x, 64, 7, 2, true, true);
  x = pool(b, "maxpool", x, 3, 2, 1);
  for (std::size_t s = 0; s < blocks.size(); ++s) {
    const double width = 64.0 * (1 << s);
    for (int i = 0; i < blocks[s]; ++i) {
      const int stride = (s > 0 && i == 0) ? 2 : 1;
      b.layer(fmt::format("stage{}.block{}", s + 1, i), LayerKind::convolution);
      Feature y = conv(b, x, width, 1, 1, true, true);
      y = conv(b, y, width, 3, stride, true, true);
      y = conv(b, y, 4 * width, 1, 1, true, false);
      if (i == 0) conv(b, x, 4 * width, 1, stride, true, false);  // projection shortcut
      b.elementwise(2 * y.elements(), kSimpleFlops);              // residual add, ReLU
      x = y;
    }
  }
  x = average_pool(b, x, 1);
  linear(b, "fc", 1, x.c, 1000, true);
  return b.build();
}

void register_builtin_models(ModelRegistry& registry) {
  const auto add_transformer = [&](const std::string& what, const std::string& source, TransformerConfig config,
                                   const std::string& note = "") {
    const std::string name = config.name;
    registry.add(
        name, transformer_description(what, config) + note, source,
        [config = std::move(config)](const ModelOptions& options) { return transformer_model(config, options); });
  };
  const std::string gpt2 = "Radford et al., Language Models are Unsupervised Multitask Learners, OpenAI 2019, Table 2";
  const auto gpt2_config = [](std::string name, int layers, int hidden) {
    return TransformerConfig{
        .name = std::move(name), .layers = layers, .hidden = hidden, .heads = hidden / 64, .seq = 1024, .vocab = 50257};
  };
  add_transformer("GPT-2 small (124M)", gpt2, gpt2_config("gpt2-small", 12, 768));
  add_transformer("GPT-2 medium (355M)", gpt2, gpt2_config("gpt2-medium", 24, 1024));
  add_transformer("GPT-2 large (774M)", gpt2, gpt2_config("gpt2-large", 36, 1280));
  add_transformer("GPT-2 XL (1.5B)", gpt2, gpt2_config("gpt2-xl", 48, 1600));

  const std::string gpt3 = "Brown et al., Language Models are Few-Shot Learners, NeurIPS 2020, Table 2.1";
  const auto gpt3_config = [](std::string name, int layers, int hidden, int heads) {
    return TransformerConfig{
        .name = std::move(name), .layers = layers, .hidden = hidden, .heads = heads, .seq = 2048, .vocab = 50257};
  };
  // Dense attention in every layer (GPT-3's alternating locally banded sparse layers are not modelled).
  add_transformer("GPT-3 Small (125M)", gpt3, gpt3_config("gpt3-small", 12, 768, 12));
  add_transformer("GPT-3 Medium (350M)", gpt3, gpt3_config("gpt3-medium", 24, 1024, 16));
  add_transformer("GPT-3 Large (760M)", gpt3, gpt3_config("gpt3-large", 24, 1536, 16));
  add_transformer("GPT-3 XL (1.3B)", gpt3, gpt3_config("gpt3-xl", 24, 2048, 16),
                  "; 16 heads of 128 (Table 2.1 prints 24 heads, inconsistent with d_model 2048)");
  add_transformer("GPT-3 2.7B", gpt3, gpt3_config("gpt3-2.7b", 32, 2560, 32));
  add_transformer("GPT-3 6.7B", gpt3, gpt3_config("gpt3-6.7b", 32, 4096, 32));
  add_transformer("GPT-3 13B", gpt3, gpt3_config("gpt3-13b", 40, 5120, 40),
                  "; d_model 40 × 128 (Table 2.1 prints 5140)");
  add_transformer("GPT-3 175B", gpt3, gpt3_config("gpt3-175b", 96, 12288, 96));

  const std::string bert = "Devlin et al., BERT: Pre-training of Deep Bidirectional Transformers, NAACL 2019, §3";
  const auto bert_config = [](std::string name, int layers, int hidden) {
    return TransformerConfig{.name = std::move(name),
                             .layers = layers,
                             .hidden = hidden,
                             .heads = hidden / 64,
                             .seq = 512,
                             .vocab = 30522,
                             .positions = 512,
                             .token_types = 2,
                             .mlm_head = true};
  };
  add_transformer("BERT-Base (110M)", bert, bert_config("bert-base", 12, 768), "; masked-LM head on every token");
  add_transformer("BERT-Large (340M)", bert, bert_config("bert-large", 24, 1024), "; masked-LM head on every token");
  add_transformer("BERT-48 (640M)",
                  "Fan et al., DAPPLE: A Pipelined Data Parallel Approach for Training Large Models, PPoPP 2021",
                  bert_config("bert-48", 48, 1024), "; BERT-Large widths, as in the DAPPLE experiments");

  const std::string t5 =
      "Raffel et al., Exploring the Limits of Transfer Learning with a Unified Text-to-Text "
      "Transformer, JMLR 21(140) 2020, §3.7";
  const auto t5_config = [](std::string name, int layers, int hidden, int ffn) {
    return TransformerConfig{.name = std::move(name),
                             .layers = layers,
                             .hidden = hidden,
                             .heads = hidden / 64,
                             .seq = 512,
                             .vocab = 32128,
                             .ffn = ffn,
                             .decoder_only = false,
                             .positions = 0,
                             .bias = false};
  };
  const std::string t5_note =
      "; no biases, relative position buckets ignored, embedding shared by both stacks and head";
  add_transformer("T5-Base (220M)", t5, t5_config("t5-base", 12, 768, 3072), t5_note);
  add_transformer("T5-Large (770M)", t5, t5_config("t5-large", 24, 1024, 4096), t5_note);

  add_transformer(
      "XLNet-36 (500M)",
      "Yang et al., XLNet, NeurIPS 2019 (Large: 24 layers, 1024, 16 heads); 36 layers in Fan et al., "
      "DAPPLE, PPoPP 2021",
      TransformerConfig{
          .name = "xlnet-36", .layers = 36, .hidden = 1024, .heads = 16, .seq = 512, .vocab = 32000, .positions = 0},
      "; as a plain transformer: two-stream and relative attention not modelled");
  add_transformer("one MoE transformer block",
                  "Lepikhin et al., GShard, ICLR 2021 (top-2 gating); Shazeer et al., "
                  "Outrageously Large Neural Networks, ICLR 2017",
                  TransformerConfig{.name = "moe-layer",
                                    .layers = 1,
                                    .hidden = 1024,
                                    .heads = 16,
                                    .seq = 1024,
                                    .vocab = 0,
                                    .experts = 8,
                                    .top_k = 2},
                  "; parameters count all experts, FLOPs top_k experts per token");

  const std::string vit = "Dosovitskiy et al., An Image is Worth 16x16 Words, ICLR 2021, Table 1";
  const auto add_vit = [&](const std::string& what, VitConfig config) {
    const std::string name = config.name;
    registry.add(name,
                 fmt::format("{}: {} layers, d_model {}, {} heads, MLP {}, patch {}, 224×224 image, {} classes", what,
                             config.layers, config.hidden, config.heads, config.mlp, config.patch, config.classes),
                 vit, [config = std::move(config)](const ModelOptions& options) { return vit_model(config, options); });
  };
  add_vit("ViT-Base/16 (86M)", {.name = "vit-base/16", .layers = 12, .hidden = 768, .heads = 12, .mlp = 3072});
  add_vit("ViT-Large/16 (307M)", {.name = "vit-large/16", .layers = 24, .hidden = 1024, .heads = 16, .mlp = 4096});
  add_vit("ViT-Huge/14 (632M)",
          {.name = "vit-huge/14", .layers = 32, .hidden = 1280, .heads = 16, .mlp = 5120, .patch = 14});

  const std::string vgg = "Simonyan & Zisserman, Very Deep Convolutional Networks, ICLR 2015, Table 1-2";
  const auto add_cnn = [&](const std::string& name, const std::string& description, const std::string& source,
                           LayerModel (*generator)(const std::string&, const std::vector<int>&, const ModelOptions&),
                           std::vector<int> stages) {
    registry.add(name, description, source,
                 [=](const ModelOptions& options) { return generator(name, stages, options); });
  };
  add_cnn("vgg16", "VGG-16 (configuration D, 138M): 13 conv 3×3 + 3 fc, 224×224 image", vgg, vgg_model,
          {2, 2, 3, 3, 3});
  add_cnn("vgg19", "VGG-19 (configuration E, 144M): 16 conv 3×3 + 3 fc, 224×224 image", vgg, vgg_model,
          {2, 2, 4, 4, 4});
  const std::string resnet = "He et al., Deep Residual Learning for Image Recognition, CVPR 2016, Table 1";
  add_cnn("resnet50",
          "ResNet-50 (25.6M): bottleneck blocks 3-4-6-3, torchvision v1.5, 224×224 image, one layer per block", resnet,
          resnet_model, {3, 4, 6, 3});
  add_cnn("resnet152",
          "ResNet-152 (60.2M): bottleneck blocks 3-8-36-3, torchvision v1.5, 224×224 image, one layer per block",
          resnet, resnet_model, {3, 8, 36, 3});

  registry.add(
      "gnmt-16",
      "GNMT-16: 8 encoder (first bidirectional) + 8 decoder LSTM layers of 1024, attention, vocab 32000, seq 50",
      "Wu et al., Google's Neural Machine Translation System, arXiv:1609.08144, 2016; GNMT-16 in Fan et al., "
      "DAPPLE, PPoPP 2021",
      gnmt_model);

  register_llm_models(registry);

  // No FLOP-level approximation of AmoebaNet-36's cells checked out against its measured time (see
  // docs/models.md), so the zoo offers the measured per-layer profile from the DAPPLE artifact.
  registry.add("amoebanet-36",
               "AmoebaNet-36 as measured per layer on a V100 for one image (DAPPLE profile amoeba-36-pbs-1); "
               "measured times, scaled to other GPUs by peak ratio; seq/image options do not apply",
               "Real et al., Regularized Evolution for Image Classifier Architecture Search, AAAI 2019; profile "
               "from Fan et al., DAPPLE, PPoPP 2021 (AlibabaPAI/DAPPLE, BSD licence, data/profiles/dapple/)",
               [](const ModelOptions&) {
                 LayerModel model = load_profile_graph(DNNSIM_DATA_DIR "/profiles/dapple/amoeba-36-pbs-1.txt");
                 model.name = "amoebanet-36";
                 return model;
               });
}

const ModelRegistry& builtin_models() { return builtin_registry<ModelRegistry, register_builtin_models>("model"); }

}  // namespace dnnsim
