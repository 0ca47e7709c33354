// A model as a chain of layers with per-sample costs: the input of the data-parallel builder (and of
// the planners that later split it into stages). Costs are either FLOPs, turned into time by the
// roofline cost model on each GPU (models/cost/compute_cost.hpp), or times measured on one catalog
// GPU for `measured_batch` samples, as in the PipeDream/DAPPLE profiles (Narayanan et al., SOSP'19;
// Fan et al., PPoPP'21), scaled to other GPUs by the cost model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/units.hpp"

namespace dnnsim {

// What a layer computes, for efficiency curves (calibration tables are per kind) and sharding.
// `loss`: a loss over a model's outputs (an LM's softmax cross-entropy over the logits): memory-bound
// passes, split with the vocabulary under tensor parallelism (Megatron's vocab-parallel cross-entropy).
enum class LayerKind : std::uint8_t {
  matmul,
  convolution,
  attention,
  elementwise,
  normalization,
  embedding,
  pooling,
  loss,
  other
};
[[nodiscard]] std::string_view layer_kind_name(LayerKind kind);
[[nodiscard]] std::optional<LayerKind> layer_kind_from_name(std::string_view name);
[[nodiscard]] std::vector<std::string> layer_kind_names();

// How the framework stores a linear layer's weights, which fixes the operand layouts of the layer's
// GEMMs (docs/calibration.md, "Operand layouts and backward passes"): `in_out` (in × out, the forward
// product's B: TensorFlow/Keras Dense, Flax Dense) runs the forward as A·B (nn) and the backward as
// dA = dC·Bᵀ (nt) and dB = Aᵀ·dC (tn); `out_in` (out × in: PyTorch's nn.Linear, Y = X·Wᵀ) runs the
// forward as A·Bᵀ (nt) and the backward as dA = dC·B (nn) and dB = dCᵀ·A (tn).
enum class WeightLayout : std::uint8_t { in_out, out_in };
[[nodiscard]] std::optional<WeightLayout> weight_layout_from_name(std::string_view name);
[[nodiscard]] std::vector<std::string> weight_layout_names();

// Where a layer's activation_bytes come from (docs/memory.md, "Where the activations come from"):
// reports and `dnnsim plan` say it, since a profile's output tensors alone understate what the
// backward pass keeps (a transformer block keeps ~17× its output: Korthikanti et al., MLSys'23 §4.1).
enum class ActivationSource : std::uint8_t {
  given,           // a scenario's `activation_bytes` (or none given)
  zoo,             // the zoo's per-layer count of the tensors the backward keeps (models/dnn/zoo.hpp)
  profile_output,  // a profile's activation_size: the layer's output tensor only
  saved_bytes,     // a profile's saved_bytes: what the layer keeps, measured or derived by its author
  zoo_block,       // a profile layer declared a zoo transformer's block: Korthikanti's per-block count
};

// What a layer is to the parallelisms and precision recipes that treat layers differently
// (models/dnn/llm_parallel.hpp): `plain` for every layer of the older zoo and of profiles.
//  - linear: a transformer block's linear layer (Transformer Engine's Linear), which a low-precision
//    recipe runs in FP8 (the LM head and the router are not: Megatron builds them outside TE);
//  - experts: the grouped GEMM of a mixture of experts' routed experts (a linear too), whose weights
//    expert parallelism divides and tensor parallelism (expert tensor parallel 1) does not;
//  - router: the MoE gate, replicated on every rank of a tensor-parallel group.
enum class LayerRole : std::uint8_t { plain, linear, experts, router };

// Megatron-Core's selective recomputation modules (TransformerConfig.recompute_modules): a layer
// belongs to at most a few, as bits; a scenario's `recompute_modules` re-runs the layers in them.
enum class RecomputeModule : std::uint8_t {
  core_attn = 1,
  layernorm = 2,
  mla_up_proj = 4,
  moe_act = 8,
  mlp = 16,
  moe = 32,
  shared_experts = 64,
};

// One matrix product of a layer, per sample: C[m×n] = A[m×k]·B[k×n], 2·m·n·k FLOPs forward. A
// convolution is given as its implicit GEMM (m = output pixels, n = output channels, k = C_in·kh·kw).
// Sharding planners split these.
struct MatmulShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  [[nodiscard]] Flop flops() const { return Flop(2.0 * static_cast<double>(m) * n * k); }
};

struct Layer {
  std::string name;
  LayerKind kind = LayerKind::other;
  Flop forward_flops{0};                // per sample
  Flop backward_flops{0};               // per sample: input gradient + weight gradient (≈ 2× forward for matmuls)
  Flop backward_weight_flops{0};        // the weight-gradient part of backward_flops (0 when not known)
  std::optional<Seconds> forward_time;  // for LayerModel::measured_batch samples on LayerModel::measured_on
  std::optional<Seconds> backward_time;
  Bytes parameter_bytes{0};  // weights as stored; gradients have the same size
  // Per sample, what the layer keeps from its forward pass to its backward pass: every stashed
  // tensor (the zoo's count, a profile's saved_bytes), or only the output when nothing more is known
  // (a profile's activation_size). The memory model, the lowering's allocations and the planners'
  // memory checks all read this one number.
  Bytes activation_bytes{0};
  ActivationSource activation_source = ActivationSource::given;
  // Forward memory traffic per sample (inputs read, outputs written; weights are counted once per
  // micro-batch separately). 0: estimated as 2 × activation_bytes.
  Bytes forward_bytes{0};
  // Backward memory traffic per sample. 0: twice the forward's, which holds where the backward
  // reads what the forward read and wrote and writes the gradients of both; a layer whose forward
  // makes passes its backward does not repeat (the fp32 cross-entropy after an LM head) sets it.
  Bytes backward_bytes{0};
  std::vector<MatmulShape> matmuls;  // per sample; empty when the layer has none or they are not known
  // Per sample, every tensor that crosses a cut right after this layer when the model is a DAG (a
  // profile graph with skip edges: profile_graph.hpp), or the output alone when activation_bytes
  // counts more than the output (keep_activations); nullopt: a chain whose activation_bytes is the
  // output that crosses.
  std::optional<Bytes> cut_bytes;
  LayerRole role = LayerRole::plain;
  std::uint8_t recompute_modules = 0;  // RecomputeModule bits
  // What Megatron-Core's selective recomputation of the modules `recompute_frees` (RecomputeModule bits)
  // frees of the tensors this layer keeps, as a share of activation_bytes: a checkpointed module's
  // internal tensors, or the output of a module run under CheckpointWithoutOutput as its consumer
  // keeps it (recompute_modules in models/dnn/llm_parallel.hpp).
  std::uint8_t recompute_frees = 0;
  double recompute_frees_share = 1.0;
  // Per sample, the elements of the input a Transformer Engine linear (role linear or experts) saves for
  // its weight gradient, whether it keeps that copy in the model's dtype (activation_bytes) or another
  // layer does; a low-precision recipe saves it quantized instead (PrecisionRecipe::saved_input_bytes).
  double saved_input_elements = 0;
  // Per sample, the kept activations that wait in host memory instead (Megatron-Core's CPU offload:
  // offload_activations in models/dnn/llm_parallel.hpp), copied out after the forward and back before
  // the backward; 0 for a layer that keeps its activations on the GPU.
  Bytes offloaded_bytes{0};
  // Selective recomputation re-runs this layer's forward at the start of its backward
  // (recompute_in_backward): backward_flops and backward_bytes include it, and an attention core's
  // context-parallel exchanges run again with it (step_communication.hpp).
  bool forward_in_backward = false;

  // forward_bytes and backward_bytes with their defaults applied.
  [[nodiscard]] Bytes forward_traffic() const {
    return forward_bytes.value() > 0 ? forward_bytes : activation_bytes * 2.0;
  }
  [[nodiscard]] Bytes backward_traffic() const {
    return backward_bytes.value() > 0 ? backward_bytes : forward_traffic() * 2.0;
  }
  // What a pipeline cut after this layer carries per sample (planners' costs and the lowering).
  [[nodiscard]] Bytes bytes_across_cut() const { return cut_bytes.value_or(activation_bytes); }
  // Sets what the layer keeps per sample without changing what crosses a cut after it (so a profile
  // layer's saved tensors do not travel to the next stage).
  void keep_activations(Bytes per_sample, ActivationSource source) {
    if (!cut_bytes) cut_bytes = activation_bytes;
    activation_bytes = per_sample;
    activation_source = source;
  }
};

// The dimensions of a transformer as its generator knows them (the LLM zoo, zoo_llm.hpp), read by
// the parallelisms that split it instead of inferring them from the attention layer's products,
// which holds only where heads × head dim = hidden (not Qwen3, GPT-OSS or multi-head latent attention).
struct TransformerDims {
  int hidden = 0;
  int heads = 0;     // query heads
  int kv_heads = 0;  // key/value heads (GQA); MLA: the query heads
  int kv_width = 0;  // elements of one token's keys and values together, all heads: kv_heads · (d_k + d_v)
  int value_width = 0;  // elements of one token's values, all heads: kv_heads · d_v (MLA's d_v ≠ d_k)
  int seq = 0;
  int experts = 0;  // routed experts of an MoE layer, 0: dense
  int top_k = 0;    // experts per token
  int layers = 0;   // transformer blocks (without multi-token prediction's)
};

struct LayerModel {
  std::string name;
  std::vector<Layer> layers;
  std::string measured_on;  // catalog GPU of the measured times
  int measured_batch = 1;
  // Tokens in one sample (the sequence length of a language model; 0: not a token model), for
  // reports' tokens per second.
  int tokens_per_sample = 0;
  // The zoo model whose blocks gave the layers of source zoo_block their activations (empty: none).
  std::string activation_zoo_model;
  // The layouts the layers' GEMMs run in (for a calibration table's shape grids).
  WeightLayout weight_layout = WeightLayout::in_out;
  std::optional<TransformerDims> transformer;  // set by generators that know them (see above)
  // Training FLOPs of one sample as the framework counts them for its "model TFLOP/s" (Megatron-Bridge's
  // formula for the LLM zoo: zoo_llm.hpp), when it is not the sum of the layers' FLOPs; nullopt: that sum.
  std::optional<Flop> model_flops_per_sample;

  [[nodiscard]] Bytes parameter_bytes() const {
    Bytes total{0};
    for (const Layer& layer : layers) total += layer.parameter_bytes;
    return total;
  }
};

struct LayerRange {
  std::size_t begin = 0;  // first layer
  std::size_t end = 0;    // one past the last layer
  [[nodiscard]] std::size_t size() const { return end - begin; }
  friend bool operator==(const LayerRange&, const LayerRange&) = default;
};

// The model's blocks, in order (empty: it has none): consecutive layers whose names share a prefix
// ending in a component "block<N>" followed by more ("block3.attn.qkv", "block3.mlp.fc1"; T5's
// "decoder.block3.cross.q") — the zoo's transformer blocks; every other layer ("encoder.lstm2",
// "conv3_1") is in none. The one rule for what a block is: the planners' boundaries and the
// activation offload (models/dnn/llm_parallel.hpp) read it.
[[nodiscard]] std::vector<LayerRange> model_blocks(const LayerModel& model);

// One line on where the model's activation_bytes come from, by source with layer counts, e.g.
// "zoo bert-48 blocks (Korthikanti et al. MLSys'23): 48 layers; profile outputs only: 5 layers".
[[nodiscard]] std::string describe_activation_sources(const LayerModel& model);

}  // namespace dnnsim
