#include "models/dnn/zoo_llm.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>

#include "models/dnn/zoo_builder.hpp"

namespace dnnsim {
namespace {

using namespace zoo_detail;

constexpr auto bits(RecomputeModule module) { return static_cast<std::uint8_t>(module); }

// A Transformer Engine linear layer over `tokens` rows: y = x·W (+ b). It keeps its input for the
// weight gradient (`kept_input` elements: 0 where another layer already keeps the same tensor; a
// low-precision recipe keeps its own quantized copy of all `tokens · in` either way).
void te_linear(Builder& b, std::string name, double tokens, double in, double out, bool bias, double kept_input,
               LayerRole role = LayerRole::linear, std::uint8_t modules = 0) {
  b.layer(std::move(name), LayerKind::matmul)
      .weights(in * out + (bias ? out : 0.0))
      .product(tokens, out, in, true)
      .io(tokens * (in + out))
      .keep(kept_input);
  if (role != LayerRole::router) b.last().saved_input_elements = tokens * in;
  b.last().role = role;
  b.last().recompute_modules = modules;
}

// RMSNorm (no shift): keeps its input.
void rms_norm(Builder& b, std::string name, double tokens, double width) {
  b.layer(std::move(name), LayerKind::normalization).weights(width).elementwise(tokens * width, kNormFlops);
  b.keep(tokens * width).last().recompute_modules = bits(RecomputeModule::layernorm);
}

// The fused attention core (FlashAttention) of `heads` query heads over `tokens` queries, each
// meeting `keys` keys on average (s/2 causal, or the window), with d_k / d_v the key and value head
// dims and `kv_heads` key/value heads: Q·Kᵀ and P·V, the backward's recomputed scores on top.
void attention_core(Builder& b, const std::string& prefix, double tokens, double keys, int heads, int kv_heads,
                    double d_k, double d_v) {
  b.layer(prefix + "core", LayerKind::attention)
      .product(heads * tokens, keys, d_k, false)   // S = Q·Kᵀ
      .product(heads * tokens, d_v, keys, false);  // O = P·V
  Layer& core = b.last();
  core.backward_flops += core.forward_flops * 0.5;  // FlashAttention-2 backward: 5 products against 2
  core.recompute_modules = bits(RecomputeModule::core_attn);
  const double qkv = tokens * (heads * d_k + kv_heads * (d_k + d_v));
  const double kept = qkv + tokens * heads * d_v + 2.0 * tokens * heads;
  b.io(qkv + tokens * heads * d_v)  // reads Q, K, V, writes O
      .keep(kept);                  // Q, K, V, O and the fp32 log-sum-exp
  // Checkpointed (core_attn), the core keeps its inputs Q, K, V, and O stays as the output projection's
  // input: the log-sum-exp is what it frees.
  core.recompute_frees = bits(RecomputeModule::core_attn);
  core.recompute_frees_share = 2.0 * tokens * heads / kept;
}

// YaRN's concentration factor (the "mscale" multiplying cos and sin) with yarn_mscale unset: 0.1·ln(scale) + 1
// (Megatron-Core yarn_rotary_pos_embedding.py, _yarn_get_concentration_factor; 1 without YaRN).
double yarn_concentration(const LlmConfig& c) { return c.yarn_scale > 1 ? 0.1 * std::log(c.yarn_scale) + 1.0 : 1.0; }

// RoPE on the queries and keys (`elements` of them) as Megatron-Core core_dev_r0.15.0 runs it when
// Transformer Engine's fused kernel cannot (megatron/core/models/common/embeddings/rope_utils.py, apply_rotary_pos_emb:
// "mscale … is not supported by TE's fused RoPE. Using unfused implementation"; _apply_rotary_pos_emb_bshd),
// eagerly, in element passes over t: _rotate_half's negation of one half (1) and cat (2), t·cos (2),
// rotate_half(t)·sin (2), their sum (3), the final cat with the empty pass-through part (2): 12 forward.
// Backward: the products' gradients (2 + 2), the negation's (1), the chunk's cat (2), the sum of t's two
// gradients (3): 10, a lower bound (the empty pass-through slice's gradient, zeros of t's size from
// PyTorch's slice_backward, not counted). The fused RoPE of the other models (a read and a write each
// way) is not modelled.
void unfused_rope(Builder& b, const std::string& prefix, double elements) {
  b.layer(prefix + "rope", LayerKind::elementwise)
      .work(4.0 * elements)
      .io(12.0 * elements)
      .backward_io(10.0 * elements);
}

void gqa_attention(Builder& b, const std::string& prefix, const LlmConfig& c, double s, double keys) {
  const double h = c.hidden, d = c.head_dim;
  rms_norm(b, prefix + "norm", s, h);
  te_linear(b, prefix + "qkv", s, h, (c.heads + 2.0 * c.kv_heads) * d, c.bias, s * h);
  if (yarn_concentration(c) != 1.0) unfused_rope(b, prefix, s * (c.heads + c.kv_heads) * d);
  attention_core(b, prefix, s, keys, c.heads, c.kv_heads, d, d);
  te_linear(b, prefix + "out", s, c.heads * d, h, c.bias, 0);  // its input O is kept by the core
  b.elementwise(s * h, kSimpleFlops);                          // residual add
  if (c.bias) {
    // The output projection's bias comes back from the GEMM (skip_bias_add) to the bias-dropout-add,
    // which GPT-OSS runs unfused (Megatron-Bridge GPTOSSProvider bias_dropout_fusion=False; Megatron-Core
    // fusions/fused_bias_dropout.py, _bias_dropout_add_func: x = x + bias, then residual + out): one more
    // pass reading and writing [s, h] forward; backward, the bias gradient's reduction over the tokens.
    b.layer(prefix + "out.bias", LayerKind::elementwise).work(s * h).io(2.0 * s * h).backward_io(s * h);
  }
}

// DeepSeek-V3's multi-head latent attention (DeepSeek-AI, arXiv:2412.19437 §2.1.1): low-rank q and
// kv projections with norms on the latents, a decoupled RoPE key shared by the heads.
void mla_attention(Builder& b, const std::string& prefix, const LlmConfig& c, double s, double keys) {
  const double h = c.hidden;
  const double d_k = c.qk_nope + c.qk_rope;
  const auto up = bits(RecomputeModule::mla_up_proj);
  rms_norm(b, prefix + "norm", s, h);
  te_linear(b, prefix + "q_down", s, h, c.q_lora, false, s * h);
  // MLA's input norm is a TENorm of its own (gpt_layer_specs.py: fuse_input_layernorm False): recomputed
  // (layernorm), its output, which q_down keeps (kv_down shares it), is discarded.
  b.last().recompute_frees = bits(RecomputeModule::layernorm);
  rms_norm(b, prefix + "q_norm", s, c.q_lora);
  te_linear(b, prefix + "q_up", s, c.q_lora, c.heads * d_k, false, s * c.q_lora, LayerRole::linear, up);
  te_linear(b, prefix + "kv_down", s, h, c.kv_lora + c.qk_rope, false, 0);  // shares the norm's output
  b.last().recompute_frees =
      bits(RecomputeModule::layernorm);  // its quantized copy (set_for_recompute_input_layernorm)
  rms_norm(b, prefix + "kv_norm", s, c.kv_lora);
  te_linear(b, prefix + "kv_up", s, c.kv_lora, c.heads * (c.qk_nope + c.v_head), false, s * c.kv_lora,
            LayerRole::linear, up);
  attention_core(b, prefix, s, keys, c.heads, c.heads, d_k, c.v_head);
  // mla_up_proj discards the up-projected Q, K, V once the core has run (multi_latent_attention.py,
  // qkv_up_checkpoint): the core's saved copies of them go, O and the log-sum-exp stay.
  Layer& core = b.last();
  core.recompute_frees = up;
  core.recompute_frees_share = s * c.heads * (2.0 * d_k + c.v_head) / core.activation_bytes.value() * b.element_bytes();
  te_linear(b, prefix + "out", s, c.heads * c.v_head, h, false, 0);
  b.elementwise(s * h, kSimpleFlops);
}

// fc1 (2·F wide when gated), the activation (gated: reads 2F, writes F), fc2, the residual add; `modules`
// re-run them, `frees` free what they keep (Layer::recompute_frees).
void dense_mlp(Builder& b, const std::string& prefix, const LlmConfig& c, double s, int ffn, std::uint8_t modules,
               bool with_norm, std::uint8_t frees) {
  const double h = c.hidden;
  const double up = c.gated ? 2.0 * ffn : ffn;
  if (with_norm) rms_norm(b, prefix + "norm", s, h);
  // Checkpointed (mlp, shared_experts), the MLP keeps its input (the norm's input, or the router's) and
  // frees what its layers save.
  te_linear(b, prefix + "fc1", s, h, up, c.bias, with_norm ? s * h : 0, LayerRole::linear, modules);
  // Without its own norm (a shared expert), fc1 reads the pre-MLP norm's output, whose recomputation
  // (layernorm) frees fc1's quantized copy too (set_for_recompute_pre_mlp_layernorm: save_original_input).
  b.last().recompute_frees = with_norm ? frees : frees | bits(RecomputeModule::layernorm);
  b.layer(prefix + "act", LayerKind::elementwise).work(s * up * kGeluFlops).io(s * (up + ffn)).keep(s * up);
  b.last().recompute_modules = modules;
  b.last().recompute_frees = frees;
  te_linear(b, prefix + "fc2", s, ffn, h, c.bias, s * ffn, LayerRole::linear, modules);
  b.last().recompute_frees = frees;
  if (with_norm) b.elementwise(s * h, kSimpleFlops);
}

// The clamp of a gated activation's two halves (x_glu ≤ v, −v ≤ x_linear ≤ v) over the fc1 output of
// `elements`, as Megatron-Core core_dev_r0.15.0 runs it for the fused quick-GEGLU
// (fusions/fused_bias_geglu.py, weighted_bias_quick_geglu_impl): two eager clamps and a torch.cat outside
// the compiled (jit_fuser) activation, which then reads the cat's copy. Forward: each clamp reads and
// writes its half, the cat reads and writes both: 4 elements (8 B) each. Backward (PyTorch's
// clamp_backward: where(mask, grad, 0); the cat's gradient is a view): the upper clamp's half builds its
// 1-byte mask from its input (2 + 1 B) and selects (1 + 2 read, 2 written): 8 B; the two-sided half two
// masks (3 + 3 B), their logical_and_ (3 B) and the select (5 B): 14 B; then the chunk's gradient
// concatenated (read, write: 4 B): (8 + 14) / 2 + 4 = 15 B, 7.5 elements each. Kept: nothing more. The
// clamps keep the fc1 output, which the activation's kept bytes already count: with moe_act recomputed,
// the checkpoint's input is all that stays; without it, the activation's saved copy (the cat's output)
// stays too, not counted (the kept activations here are an upper bound otherwise: llm_parallel.hpp).
void clamped_halves(Builder& b, const std::string& prefix, double elements, std::uint8_t modules) {
  b.layer(prefix + "experts.clamp", LayerKind::elementwise)
      .work(2.0 * elements)
      .io(4.0 * elements)
      .backward_io(7.5 * elements);
  b.last().recompute_modules = modules;
}

// The MoE layer as Megatron-Core's alltoall dispatcher runs it: router (top-k of E scores), permute
// (each token copied to its k experts' slots), the experts' grouped GEMMs, un-permute (the k outputs
// weighed by their router probabilities and summed), the shared expert beside them.
void moe(Builder& b, const std::string& prefix, const LlmConfig& c, double s) {
  const double h = c.hidden, k = c.top_k, E = c.experts, F = c.expert_ffn;
  const double up = c.gated ? 2.0 * F : F;
  const auto moe_bits = bits(RecomputeModule::moe);
  rms_norm(b, prefix + "norm", s, h);
  // The router keeps the pre-MLP norm's output (RouterGatingLinearFunction saves its input), which is
  // the moe checkpoint's input and what the norm's recomputation (layernorm: an MoE layer's pre-MLP norm
  // is a TENorm of its own, fuse_pre_mlp_layernorm False) discards, and its fp32 probabilities, which
  // the checkpointed moe frees (not counted as freed: one share per layer, the layernorm one; 2E of h + 2E).
  te_linear(b, prefix + "router", s, h, E, false, s * h, LayerRole::router, moe_bits);
  b.elementwise(s * E, kSoftmaxFlops).keep(2.0 * s * E);  // scores and top-k, fp32 probabilities kept
  b.last().recompute_frees = bits(RecomputeModule::layernorm);
  b.last().recompute_frees_share = h / (h + 2.0 * E);
  b.layer(prefix + "dispatch", LayerKind::elementwise).work(s * k * h).io(s * h + s * k * h);
  b.last().recompute_modules = moe_bits;
  const auto experts = [&](std::string name, double in, double out, double kept) {
    b.layer(prefix + std::move(name), LayerKind::matmul).weights(E * (in * out + (c.bias ? out : 0.0)));
    b.product(s * k, out, in, true).io(s * k * (in + out)).keep(kept);
    Layer& layer = b.last();
    layer.matmuls.back().m = std::max<std::int64_t>(1, std::llround(s * k / E));  // one expert's rows
    layer.role = LayerRole::experts;
    layer.recompute_modules = moe_bits;
    layer.recompute_frees = moe_bits;
    layer.saved_input_elements = s * k * in;
  };
  experts("experts.fc1", h, up, s * k * h);
  if (c.act_clamp > 0) clamped_halves(b, prefix, s * k * up, bits(RecomputeModule::moe_act) | moe_bits);
  b.layer(prefix + "experts.act", LayerKind::elementwise).work(s * k * up * kGeluFlops).io(s * k * (up + F));
  b.keep(s * k * up).last().recompute_modules = bits(RecomputeModule::moe_act) | moe_bits;
  b.last().recompute_frees = moe_bits;  // its input is moe_act's checkpoint
  experts("experts.fc2", F, h, s * k * F);
  b.last().recompute_frees = bits(RecomputeModule::moe_act) | moe_bits;  // the activation's discarded output
  if (c.bias) {
    // fc2's bias, which TEGroupedMLP takes back from the grouped GEMM (skip_bias_add) and adds weighed by
    // the router probabilities, one local expert at a time (Megatron-Core core_dev_r0.15.0,
    // moe/experts.py, TEGroupedMLP._apply_bias: torch.cat([t + b * p for each expert's rows])), eagerly,
    // over the [s·k, h] output in bf16 (the alltoall dispatcher's probabilities; HybridEP's are fp32, which
    // doubles the temporaries: not modelled). Forward: b·p written, t and b·p read and their sum written,
    // the sum read and written by the cat: 6 elements each. Backward: the split's gradient concatenated
    // (read, write), b's gradient (grad·p written and read back by the reduction over rows) and p's (grad
    // read, grad·b written and read back by the reduction over the row): 8 elements each.
    b.layer(prefix + "experts.bias", LayerKind::elementwise)
        .work(2.0 * s * k * h)
        .io(6.0 * s * k * h)
        .backward_io(8.0 * s * k * h);
    b.last().recompute_modules = moe_bits;
  }
  b.layer(prefix + "combine", LayerKind::elementwise).work(2.0 * s * k * h).io(s * k * h + s * h).keep(s * k * h);
  b.last().recompute_modules = moe_bits;
  b.last().recompute_frees = moe_bits;
  if (c.shared_ffn > 0) {
    LlmConfig shared = c;
    shared.bias = false;
    dense_mlp(b, prefix + "shared.", shared, s, c.shared_ffn, bits(RecomputeModule::shared_experts), false,
              bits(RecomputeModule::shared_experts) | moe_bits);
  }
  b.elementwise(s * h, kSimpleFlops);  // residual add
}

void block(Builder& b, const std::string& prefix, const LlmConfig& c, int index, double s) {
  const bool windowed = c.window > 0 && c.window_every > 0 && index % c.window_every == 0;
  const double keys = windowed ? std::min<double>(c.window, s / 2.0) : s / 2.0;
  if (c.q_lora > 0)
    mla_attention(b, prefix + "attn.", c, s, keys);
  else
    gqa_attention(b, prefix + "attn.", c, s, keys);
  if (c.experts > 0 && index >= c.dense_layers)
    moe(b, prefix + "moe.", c, s);
  else
    dense_mlp(b, prefix + "mlp.", c, s, c.ffn, bits(RecomputeModule::mlp), true, bits(RecomputeModule::mlp));
}

double padded_vocab(const LlmConfig& c, int tp) {
  const double multiple = static_cast<double>(c.vocab_divisor) * tp;
  return std::ceil(c.vocab / multiple) * multiple;
}

// The LM head (untied) and the fused cross-entropy; `shared`: the head's weights are another's (MTP).
void head(Builder& b, const std::string& prefix, double s, double h, double vocab, bool shared) {
  const double logits = s * vocab;
  b.layer(prefix + "head", LayerKind::matmul)
      .weights(shared ? 0.0 : vocab * h)
      .product(s, vocab, h, true)
      .io(s * h + logits)
      .backward_io(2.0 * s * h + logits)
      .keep(s * h);
  b.last().cut_bytes = Bytes(logits * b.element_bytes());
  // Transformer Engine's fused cross-entropy (cross_entropy_fusion_impl "te"): one pass over the bf16
  // logits forward (online max and sum), one reading them and writing their gradient backward; it
  // keeps the logits.
  b.layer(prefix + "cross_entropy", LayerKind::loss).work(logits * kSoftmaxFlops).io(logits).backward_io(2.0 * logits);
  b.keep(logits);
}

std::string description(const LlmConfig& c) {
  std::string text = fmt::format("{} layers, hidden {}, {} heads ({} KV), FFN {}, vocab {}, seq {}", c.layers, c.hidden,
                                 c.heads, c.kv_heads, c.ffn, c.vocab, c.seq);
  if (c.q_lora > 0) text += fmt::format(", MLA (q rank {}, kv rank {})", c.q_lora, c.kv_lora);
  if (c.experts > 0)
    text += fmt::format(", {} experts top-{} (FFN {}){}{}", c.experts, c.top_k, c.expert_ffn,
                        c.shared_ffn > 0 ? fmt::format(" + shared {}", c.shared_ffn) : "",
                        c.dense_layers > 0 ? fmt::format(", first {} dense", c.dense_layers) : "");
  if (c.window > 0) text += fmt::format(", sliding window {} on one block in {}", c.window, c.window_every);
  return text;
}

}  // namespace

LayerModel llm_model(const LlmConfig& c, const ModelOptions& options) {
  Builder b(c.name, options);
  const int mtp = options.mtp_layers >= 0 ? options.mtp_layers : c.mtp_layers;
  require(mtp == 0 || c.experts > 0, c.name, "multi-token prediction is modelled for DeepSeek-V3 only");
  const double s = options.seq > 0 ? options.seq : c.seq;
  const double h = c.hidden;
  const double vocab = padded_vocab(c, 1);
  b.layer("embedding", LayerKind::embedding).weights(vocab * h).elementwise(s * h, kSimpleFlops);
  b.keep(s * h).last().backward_weight_flops = b.last().backward_flops;
  for (int i = 0; i < c.layers; ++i) block(b, fmt::format("block{}.", i), c, i, s);
  rms_norm(b, "final_norm", s, h);
  head(b, "", s, h, vocab, false);
  for (int m = 0; m < mtp; ++m) {
    // Multi-token prediction (DeepSeek-V3 §2.2; Megatron-Core's MultiTokenPredictionLayer): norms of
    // the hidden state and of the next tokens' embedding, their concatenation projected 2h → h, one
    // more block, its own final norm, the shared head and its loss.
    const std::string prefix = fmt::format("mtp{}.", m);
    rms_norm(b, prefix + "enorm", s, h);
    rms_norm(b, prefix + "hnorm", s, h);
    te_linear(b, prefix + "eh_proj", s, 2 * h, h, false, 2 * s * h);
    block(b, fmt::format("{}block{}.", prefix, c.layers + m), c, c.layers + m, s);
    rms_norm(b, prefix + "final_norm", s, h);
    head(b, prefix, s, h, vocab, true);
  }
  LayerModel model = b.build();
  model.tokens_per_sample = static_cast<int>(s);
  model.weight_layout = WeightLayout::out_in;  // PyTorch / Transformer Engine store out × in
  const int d_k = c.q_lora > 0 ? c.qk_nope + c.qk_rope : c.head_dim;
  const int d_v = c.q_lora > 0 ? c.v_head : c.head_dim;
  const int kv_heads = c.q_lora > 0 ? c.heads : c.kv_heads;
  model.transformer = TransformerDims{.hidden = c.hidden,
                                      .heads = c.heads,
                                      .kv_heads = kv_heads,
                                      .kv_width = kv_heads * (d_k + d_v),
                                      .value_width = kv_heads * d_v,
                                      .seq = static_cast<int>(s),
                                      .experts = c.experts,
                                      .top_k = c.top_k,
                                      .layers = c.layers};
  model.model_flops_per_sample = megatron_bridge_flops(c, static_cast<int>(s), 1, mtp);
  return model;
}

// A transcription of Megatron-Bridge v0.2.1's transformer_flops() (flop_utils.py), checked against
// every row of the 25.11 table (data/megatron-bridge/model_flops.py; tests/unit/models/zoo_llm_test.cpp).
Flop megatron_bridge_flops(const LlmConfig& c, int seq, int tp, int mtp_layers) {
  const double s = seq, h = c.hidden;
  const double layers = c.layers + mtp_layers;
  const double moe_layers = c.experts > 0 ? c.layers - c.dense_layers + mtp_layers : 0;
  const double dense_layers = layers - moe_layers;
  const double gate = c.gated && c.silu ? 1.5 : 1.0;
  const double per_gemm = 3 * 2;  // forward + two backward GEMMs, 2 FLOPs per multiply-add
  double attention = 0;
  if (c.q_lora > 0) {
    const double a = c.heads;
    attention = per_gemm * layers *
                (c.q_lora * (h + a * (c.qk_nope + c.qk_rope) + 1) + c.kv_lora * (h + a * (c.qk_nope + c.v_head) + 1) +
                 h * c.qk_rope + a * c.v_head * h + s * a * (c.qk_nope + c.qk_rope) / 2 + s * a * c.v_head / 2);
  } else {
    const double ratio = static_cast<double>(c.head_dim) * c.heads / h;
    attention = 2 * per_gemm * layers * h * h * ((1 + static_cast<double>(c.kv_heads) / c.heads + s / h / 2) * ratio);
  }
  const double expert_ffn = c.experts > 0 ? c.expert_ffn : c.ffn;
  const double mlp =
      2 * per_gemm * h * gate * (c.ffn * dense_layers + (expert_ffn * c.top_k + c.shared_ffn) * moe_layers);
  const double mtp = per_gemm * mtp_layers * (3 * h + 2 * h * h);
  const double logits = per_gemm * h * padded_vocab(c, tp) * (mtp_layers + 1);
  return Flop(s * (attention + mlp + mtp + logits));
}

namespace {

// Megatron-Bridge v0.2.1 model providers (src/megatron/bridge/models/*/…_provider.py) and, for
// GPT-OSS, openai/gpt-oss gpt_oss/torch/model.py (docs/research/llm-models.md).
const std::array kLlms{
    LlmConfig{.name = "llama3-8b",
              .layers = 32,
              .hidden = 4096,
              .heads = 32,
              .kv_heads = 8,
              .head_dim = 128,
              .ffn = 14336,
              .vocab = 128256,
              .seq = 8192},
    LlmConfig{.name = "llama3-70b",
              .layers = 80,
              .hidden = 8192,
              .heads = 64,
              .kv_heads = 8,
              .head_dim = 128,
              .ffn = 28672,
              .vocab = 128256,
              .seq = 8192},
    LlmConfig{.name = "llama3.1-405b",
              .layers = 126,
              .hidden = 16384,
              .heads = 128,
              .kv_heads = 8,
              .head_dim = 128,
              .ffn = 53248,
              .vocab = 128256,
              .seq = 8192},
    LlmConfig{.name = "deepseek-v3",
              .layers = 61,
              .hidden = 7168,
              .heads = 128,
              .kv_heads = 128,
              .head_dim = 128,
              .ffn = 18432,
              .vocab = 129280,
              .vocab_divisor = 1280,
              .seq = 4096,
              .q_lora = 1536,
              .kv_lora = 512,
              .qk_nope = 128,
              .qk_rope = 64,
              .v_head = 128,
              .experts = 256,
              .top_k = 8,
              .expert_ffn = 2048,
              .shared_ffn = 2048,
              .dense_layers = 3},
    LlmConfig{.name = "qwen3-30b-a3b",
              .layers = 48,
              .hidden = 2048,
              .heads = 32,
              .kv_heads = 4,
              .head_dim = 128,
              .ffn = 6144,
              .vocab = 151936,
              .seq = 4096,
              .experts = 128,
              .top_k = 8,
              .expert_ffn = 768},
    LlmConfig{.name = "qwen3-235b-a22b",
              .layers = 94,
              .hidden = 4096,
              .heads = 64,
              .kv_heads = 4,
              .head_dim = 128,
              .ffn = 12288,
              .vocab = 151936,
              .seq = 4096,
              .experts = 128,
              .top_k = 8,
              .expert_ffn = 1536},
    LlmConfig{.name = "gpt-oss-120b",
              .layers = 36,
              .hidden = 2880,
              .heads = 64,
              .kv_heads = 8,
              .head_dim = 64,
              .ffn = 2880,
              .silu = false,
              .bias = true,
              .act_clamp = 7.0,
              .yarn_scale = 32,
              .vocab = 201088,
              .seq = 8192,
              .experts = 128,
              .top_k = 4,
              .expert_ffn = 2880,
              .window = 128,
              .window_every = 2},
};

constexpr const char* kSources[] = {
    "Meta, The Llama 3 Herd of Models, arXiv:2407.21783, Table 3; Megatron-Bridge v0.2.1 Llama3ModelProvider8B",
    "Meta, The Llama 3 Herd of Models, arXiv:2407.21783, Table 3; Megatron-Bridge v0.2.1 Llama3ModelProvider70B",
    "Meta, The Llama 3 Herd of Models, arXiv:2407.21783, Table 3; Megatron-Bridge v0.2.1 Llama31ModelProvider405B",
    "DeepSeek-AI, DeepSeek-V3 Technical Report, arXiv:2412.19437, §2 and §4.2; Megatron-Bridge v0.2.1 "
    "DeepSeekV3ModelProvider",
    "Qwen Team, Qwen3 Technical Report, arXiv:2505.09388, Table 2; Megatron-Bridge v0.2.1 Qwen3MoEModelProvider30B_A3B",
    "Qwen Team, Qwen3 Technical Report, arXiv:2505.09388, Table 2; Megatron-Bridge v0.2.1 "
    "Qwen3MoEModelProvider235B_A22B",
    "OpenAI, gpt-oss-120b & gpt-oss-20b Model Card (2025); openai/gpt-oss gpt_oss/torch/model.py; Megatron-Bridge "
    "v0.2.1 GPTOSSProvider120B",
};

}  // namespace

const LlmConfig* find_llm_config(const std::string& name) {
  for (const LlmConfig& config : kLlms)
    if (config.name == name) return &config;
  return nullptr;
}

void register_llm_models(ModelRegistry& registry) {
  for (std::size_t i = 0; i < kLlms.size(); ++i) {
    const LlmConfig& config = kLlms[i];
    registry.add(config.name, description(config), kSources[i],
                 [&config](const ModelOptions& options) { return llm_model(config, options); });
  }
}

}  // namespace dnnsim
