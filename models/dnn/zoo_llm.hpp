// Today's LLMs in the zoo, as Megatron-Bridge instantiates them for its published throughput table
// (NVIDIA-NeMo/Megatron-Bridge v0.2.1 model providers; docs/research/llm-models.md has every field with
// its source): Llama 3 8B / 70B and Llama 3.1 405B (grouped-query attention, SwiGLU, RoPE, 128k
// vocabulary), DeepSeek-V3 (multi-head latent attention, 256 routed + 1 shared expert, top-8, three
// dense first layers, optional multi-token prediction), Qwen3-30B-A3B and Qwen3-235B-A22B (GQA + MoE),
// GPT-OSS 120B (GQA with sliding windows + MoE).
//
// Layers, per sample of `seq` tokens (models/dnn/zoo.hpp conventions), by sub-layer as Megatron-Core
// runs them with Transformer Engine:
//  - embedding; per block: norm, the attention's projections (QKV, or MLA's q/kv down- and
//    up-projections with their norms), the attention core as one fused kernel (FlashAttention:
//    causal, so each query meets s/2 keys on average, or a sliding window's keys; Q, K, V, O and the
//    log-sum-exp kept; its backward recomputes the scores, 2.5× the forward's matmul FLOPs: Dao,
//    "FlashAttention-2", ICLR'24, §3.1.2: five products backward against two forward), the output
//    projection; then the MLP (norm, fc1 of 2·F columns for a gated unit, the activation, fc2) or the
//    MoE (norm, router, token permutation, the routed experts' grouped fc1 / activation / fc2, the
//    un-permutation that weighs and sums the k outputs, and the shared expert); final norm, the LM
//    head (untied: its own V × h weights) and the fused cross-entropy (one pass reading the bf16
//    logits forward, reading them and writing their gradient backward).
//  - What each layer keeps for its backward (activation_bytes) is what Transformer Engine saves: a
//    linear layer its input, a norm its input, the activation its input, the attention core Q, K, V,
//    O and the log-sum-exp, the un-permutation the experts' outputs.
//  - GPT-OSS runs four passes the other models do not, each an eager PyTorch sequence outside any fused
//    kernel in Megatron-Core core_dev_r0.15.0 (the 25.11 container's "dev 0.15.0"), priced by its bytes
//    at the memory-bound rate (zoo_llm.cpp has the code references and the byte counts): RoPE unfused
//    (YaRN's concentration factor ≠ 1 is not supported by Transformer Engine's fused RoPE), the
//    activation's input clamp (two clamps and a cat before the compiled quick-GEGLU), fc2's bias added
//    per local expert with the router probabilities (TEGroupedMLP._apply_bias), and the attention
//    output's bias added unfused (bias_dropout_fusion off). fc1's and QKV's biases ride the GEMMs'
//    epilogues (Transformer Engine's grouped and plain GEMMs, bias gradient fused in the weight-gradient
//    GEMM for BF16): no pass.
//  - Roles (layer_model.hpp): block linears and the experts are `linear`/`experts` (FP8 under a
//    low-precision recipe), the router `router`; recomputation modules as Megatron-Core names them.
//  - The routed experts' products carry the shape of ONE expert's GEMM (rows = s·k / E per sample:
//    balanced routing) with the FLOPs of all: a grouped GEMM runs its experts' products one after the
//    other, each at its own shape's efficiency. Expert parallelism scales the rows (llm_parallel.hpp).
//  - The vocabulary is padded to a multiple of `make_vocab_size_divisible_by` (128; DeepSeek 1,280) as
//    Megatron does; its further padding to a multiple of that times TP (≤ 0.6% of the head, ≤ 0.01% of
//    the model's FLOPs at TP 8) is not modelled.
//
// LayerModel::model_flops_per_sample is Megatron-Bridge's own count (flop_utils.py,
// num_floating_point_operations, v0.2.1), the "Model TFLOP/s" of its table: causal attention halved,
// sliding windows ignored, the gated MLP's ×3/2 only for SiLU (GPT-OSS's gated quick-GELU counted as
// two GEMMs), top-k routed + shared experts, no router, the LM head counted and the embedding not,
// MLA's norm terms, MTP as one more layer and head. The layers' FLOPs count the work actually done.
#pragma once

#include <string>

#include "models/dnn/zoo.hpp"

namespace dnnsim {

struct LlmConfig {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;      // query heads
  int kv_heads = 0;   // GQA key/value heads
  int head_dim = 0;   // kv_channels
  int ffn = 0;        // dense MLP hidden size (the first `dense_layers` of an MoE model)
  bool gated = true;  // gated linear unit: fc1 is 2·ffn wide
  bool silu = true;   // SiLU gate (Megatron-Bridge's count applies ×3/2 only then)
  bool bias = false;  // linear biases (GPT-OSS)
  // The gated activation's input clamp (Megatron-Core activation_func_clamp_value; GPT-OSS 7): 0 = none.
  double act_clamp = 0;
  // YaRN's rotary scaling factor (yarn_rotary_scaling_factor; GPT-OSS 32, its mscales unset): 0 = none.
  double yarn_scale = 0;
  int vocab = 0;
  int vocab_divisor = 128;  // make_vocab_size_divisible_by
  int seq = 0;              // default sequence length
  // Multi-head latent attention (DeepSeek-V2/V3): q_lora > 0.
  int q_lora = 0, kv_lora = 0, qk_nope = 0, qk_rope = 0, v_head = 0;
  // Mixture of experts: experts > 0.
  int experts = 0, top_k = 0, expert_ffn = 0, shared_ffn = 0;
  int dense_layers = 0;  // the first blocks keep a dense MLP
  // Sliding-window attention of `window` keys on the blocks l (0-based) with l % window_every == 0.
  int window = 0, window_every = 0;
  int mtp_layers = 0;  // multi-token prediction depth by default (ModelOptions::mtp_layers overrides)
};

// @throw InputError for options that do not fit (ModelGenerator).
[[nodiscard]] LayerModel llm_model(const LlmConfig& config, const ModelOptions& options);

// Megatron-Bridge's training FLOPs for one sequence of `seq` tokens (see above), with the
// vocabulary padded for tensor-parallel degree `tp` as its counter does.
[[nodiscard]] Flop megatron_bridge_flops(const LlmConfig& config, int seq, int tp, int mtp_layers);

// The zoo's LLM entries ("llama3-8b", "deepseek-v3", …), by name; nullptr for another name.
[[nodiscard]] const LlmConfig* find_llm_config(const std::string& name);

// Adds the LLM entries to the zoo registry (called by register_builtin_models).
void register_llm_models(ModelRegistry& registry);

}  // namespace dnnsim
