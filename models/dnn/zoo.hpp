// The model zoo: published DNN architectures generated as LayerModels with analytical per-layer
// costs, by name (`dnnsim model describe gpt3-175b`). Every entry states its configuration and the
// paper it comes from; docs/models.md lists them with the totals this code computes next to the
// published ones.
//
// Conventions of every generated layer:
// - Costs are PER SAMPLE: one sequence of `seq` tokens for language models, one image for vision
//   models. A cost for a batch is the per-sample cost times the batch.
// - FLOPs count a multiply-add as 2 FLOPs (FLOPs = 2·MACs). A matrix product C[m×n] = A[m×k]·B[k×n]
//   is 2mnk forward. Its backward is 2× forward when it has weights (input gradient + weight
//   gradient, backward_weight_flops = forward) and also 2× forward without weights (attention's
//   Q·Kᵀ and P·V: gradients of both operands, backward_weight_flops = 0). Element-wise,
//   normalization, softmax and pooling work is counted at nominal FLOPs per element (normalization
//   5, softmax 5, GeLU 8, ReLU/add 1, LSTM gate non-linearities 5 per gate element) and as much
//   backward, with no weight part: these layers are memory-bound and timed by forward_bytes.
// - parameter_bytes = parameters × ModelOptions::parameter_bytes_per_element (default 4: fp32
//   master weights, as the PipeDream/DAPPLE profiles count them; models/cost/memory_model.hpp
//   assumes 4 when it turns bytes back into a parameter count).
// - activation_bytes = elements the layer keeps for its backward pass × activation_bytes_per_element
//   (default 2, fp16 training): its output, plus the internal tensors of operations folded into it
//   (GeLU input, softmax probabilities of attention, BatchNorm inputs of a ResNet block, LSTM gates).
//   So activation_bytes can exceed the output that the next layer reads.
// - forward_bytes = activation elements read and written by the forward pass (inputs + outputs of
//   every operation folded into the layer) × activation_bytes_per_element; weights are not per
//   sample and are not included.
// - matmuls lists the layer's products per sample. Per-head attention products are one shape with
//   the heads folded into m (m = heads·q_len: splitting m splits heads); a convolution is its
//   implicit GEMM (m = output pixels, n = output channels, k = C_in·kh·kw); an LSTM step is one
//   product of [x; h] with the four gate matrices, all time steps folded into m.
//
// Granularity (one Layer each):
// - transformers: the embedding; per block the pre-attention norm, QKV projection, attention (scores,
//   softmax, context), output projection (+ residual add), pre-MLP norm, MLP up-projection (+ GeLU),
//   MLP down-projection (+ residual add); a final norm; the head. Pre-LN order for all (GPT-2/3, ViT,
//   T5); for post-LN models (BERT, XLNet) the costs are the same and the final norm stands for the
//   embedding LayerNorm. The LM head is tied to the token embedding (its weights are counted once, in
//   the embedding; its weight gradient flows there), as in GPT-2/3, BERT, T5 and XLNet.
// - CNNs: one Layer per VGG convolution (+ ReLU) and per ResNet bottleneck block (its 3 or 4
//   convolutions, BatchNorms, ReLUs and residual add, matmuls listed per convolution).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "models/common/registry.hpp"
#include "models/dnn/layer_model.hpp"

namespace dnnsim {

struct ModelOptions {
  int seq = 0;                           // tokens per sample; 0: the model's default (its pre-training sequence length)
  int image = 0;                         // image side in pixels; 0: the model's default (224)
  int parameter_bytes_per_element = 4;   // fp32 master weights
  int activation_bytes_per_element = 2;  // fp16/bf16 activations
  int mtp_layers = -1;                   // multi-token prediction depth (DeepSeek-V3); -1: the model's default
};

// @throw InputError when an option does not fit the model (negative size, image not divisible by
// the ViT patch, image too small for the CNN's downsampling).
using ModelGenerator = std::function<LayerModel(const ModelOptions&)>;
using ModelRegistry = Registry<ModelGenerator>;

void register_builtin_models(ModelRegistry& registry);
// The zoo ("model" registry), built once.
[[nodiscard]] const ModelRegistry& builtin_models();

// A stack of transformer blocks (Vaswani et al., NeurIPS'17).
struct TransformerConfig {
  std::string name;
  int layers = 0;            // blocks per stack (an encoder-decoder has `layers` in each)
  int hidden = 0;            // d_model
  int heads = 0;             // d_head = hidden / heads
  int seq = 0;               // default tokens per sample (ModelOptions::seq overrides it)
  int vocab = 0;             // 0: no embedding, final norm or head (a bare stack of blocks)
  int ffn = 0;               // 0: 4·hidden
  bool decoder_only = true;  // one stack of self-attention blocks (GPT, and also encoder-only BERT,
                             // XLNet: same costs); false: encoder-decoder (T5), the decoder blocks
                             // add cross-attention on the encoder output (decoder length = seq)
  int experts = 0;           // > 0: every block's MLP is a mixture of `experts` experts (Shazeer et al. 2017)
  int top_k = 0;             // experts each token is routed to. Parameters count all experts; FLOPs count
                             // top_k experts per token with perfect load balance (capacity factor 1)
  int positions = -1;        // rows of the learned position table; -1: seq; 0: none (relative positions)
  int token_types = 0;       // rows of the segment table (BERT: 2)
  bool bias = true;          // linear biases and LayerNorm shift; false: none, norms have a scale only (T5)
  bool mlm_head = false;     // BERT's masked-LM head: dense + GeLU + LayerNorm before the tied decoder,
                             // which has an output bias
};

// @throw InputError for options that do not fit (see ModelGenerator).
[[nodiscard]] LayerModel transformer_model(const TransformerConfig& config, const ModelOptions& options);

// Vision Transformer (Dosovitskiy et al., ICLR'21): patch embedding, [CLS] token and learned
// positions, pre-LN blocks with GeLU MLP, final norm, linear classifier on [CLS]. The sequence is
// (image / patch)² + 1 tokens; ModelOptions::seq is ignored.
struct VitConfig {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int mlp = 0;
  int patch = 16;
  int classes = 1000;
};
[[nodiscard]] LayerModel vit_model(const VitConfig& config, const ModelOptions& options);

// VGG (Simonyan & Zisserman, ICLR'15): 3×3 convolutions (+ ReLU) in five stages of
// 64/128/256/512/512 channels, each followed by 2×2 max pooling, an adaptive average pool to 7×7 (as
// torchvision, so the classifier does not depend on the image size), fc 25088→4096→4096→1000.
[[nodiscard]] LayerModel vgg_model(const std::string& name, const std::vector<int>& convs_per_stage,
                                   const ModelOptions& options);

// ResNet with bottleneck blocks (He et al., CVPR'16), torchvision's v1.5: the stride-2 of a stage's
// first block is on its 3×3 convolution (the paper's v1 puts it on the first 1×1, 3.8 vs 4.1 GMACs
// for ResNet-50). `blocks`: bottleneck blocks of the four stages ({3, 4, 6, 3} for ResNet-50).
[[nodiscard]] LayerModel resnet_model(const std::string& name, const std::vector<int>& blocks,
                                      const ModelOptions& options);

}  // namespace dnnsim
