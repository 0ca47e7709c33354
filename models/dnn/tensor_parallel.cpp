#include "models/dnn/tensor_parallel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <map>

#include "models/common/enum_names.hpp"

namespace dnnsim {
namespace {

// Indexed by Recompute, in declaration order.
constexpr std::array<std::string_view, 3> kRecomputeNames{"none", "selective", "full"};

// fp16/bf16 activations (Korthikanti et al.'s byte counts assume 2-byte activations).
constexpr double kActivationBytes = 2.0;

bool splits(LayerKind kind) {
  return kind == LayerKind::matmul || kind == LayerKind::attention || kind == LayerKind::embedding ||
         kind == LayerKind::convolution || kind == LayerKind::loss;
}

// "block3." of "block3.attn.qkv" (also "decoder.block3."), empty outside the blocks.
std::string block_of(const std::string& name) {
  const auto at = name.find("block");
  if (at == std::string::npos) return {};
  const auto dot = name.find('.', at);
  return dot == std::string::npos ? std::string{} : name.substr(0, dot + 1);
}

}  // namespace

std::string_view recompute_name(Recompute recompute) { return kRecomputeNames.at(static_cast<std::size_t>(recompute)); }
std::optional<Recompute> recompute_from_name(std::string_view name) {
  return enum_from_name<Recompute>(kRecomputeNames, name);
}
std::vector<std::string> recompute_names() { return enum_names(kRecomputeNames); }

std::optional<TransformerShape> transformer_shape(const LayerModel& model) {
  TransformerShape shape;
  if (model.transformer) {
    // A generator that knows the dimensions (the LLM zoo): heads × head dim need not be the hidden size.
    shape = {blocks_in_range(model, 0, model.layers.size()), model.transformer->hidden, model.transformer->heads,
             model.transformer->seq};
    if (shape.blocks == 0) return std::nullopt;
    return shape;
  }
  for (const Layer& layer : model.layers) {
    if (layer.kind != LayerKind::attention || layer.matmuls.empty()) continue;
    if (shape.blocks++ > 0) continue;
    const MatmulShape& scores = layer.matmuls.front();  // m = heads·seq, n = kv_len, k = d_head
    shape.seq = model.tokens_per_sample > 0 ? model.tokens_per_sample : static_cast<int>(scores.n);
    if (shape.seq <= 0 || scores.m % shape.seq != 0) return std::nullopt;
    shape.heads = static_cast<int>(scores.m / shape.seq);
    shape.hidden = static_cast<int>(shape.heads * scores.k);
  }
  if (shape.blocks == 0 || shape.heads <= 0 || shape.hidden <= 0) return std::nullopt;
  return shape;
}

std::vector<std::string> tensor_parallel_problems(const LayerModel& model, int degree) {
  std::vector<std::string> problems;
  const auto shape = transformer_shape(model);
  if (!shape) {
    if (degree > 1)
      problems.push_back(
          fmt::format("tensor parallelism needs a transformer model (attention layers with their "
                      "products, as the zoo's); '{}' has none",
                      model.name));
    return problems;
  }
  if (shape->heads % degree != 0)
    problems.push_back(fmt::format("tensor_parallel {} does not divide the {} attention heads of '{}'", degree,
                                   shape->heads, model.name));
  if (shape->hidden % degree != 0)
    problems.push_back(fmt::format("tensor_parallel {} does not divide the hidden size {} of '{}'", degree,
                                   shape->hidden, model.name));
  if (model.transformer && model.transformer->kv_heads % degree != 0 && degree % model.transformer->kv_heads != 0)
    problems.push_back(fmt::format("tensor_parallel {} and the {} key/value heads of '{}' neither divide the other",
                                   degree, model.transformer->kv_heads, model.name));
  return problems;
}

Bytes layer_activation_bytes(const TransformerShape& shape, int micro_batch, const TensorParallelOptions& options) {
  const double s = shape.seq, b = micro_batch, h = shape.hidden, a = shape.heads;
  const double t = options.degree;
  const double sbh = s * b * h;
  const double attention = 5.0 * a * s / (h * t);  // softmax output, dropout mask and output: split by heads
  switch (options.recompute) {
    case Recompute::full:
      return Bytes(sbh * 2.0 / (options.sequence_parallel ? t : 1.0));
    case Recompute::selective:
      return Bytes(sbh * (options.sequence_parallel ? 34.0 / t : 10.0 + 24.0 / t));
    case Recompute::none:
      break;
  }
  return Bytes(sbh * ((options.sequence_parallel ? 34.0 / t : 10.0 + 24.0 / t) + attention));
}

Bytes tensor_parallel_call_bytes(const TransformerShape& shape, int micro_batch) {
  return Bytes(static_cast<double>(micro_batch) * shape.seq * shape.hidden * kActivationBytes);
}

TensorParallelTraffic block_traffic(const TransformerShape& shape, int micro_batch,
                                    const TensorParallelOptions& options) {
  if (options.degree <= 1) return {};
  const Bytes buffer = tensor_parallel_call_bytes(shape, micro_batch);
  if (options.sequence_parallel) return {Bytes(0), buffer * 2.0, buffer * 2.0};
  return {buffer * 2.0, Bytes(0), Bytes(0)};
}

int blocks_in_range(const LayerModel& model, std::size_t begin, std::size_t end) {
  int blocks = 0;
  for (std::size_t l = begin; l < end && l < model.layers.size(); ++l)
    if (model.layers[l].kind == LayerKind::attention) ++blocks;
  return blocks;
}

std::pair<std::size_t, std::size_t> checkpointed_span(const LayerModel& model, std::size_t begin, std::size_t end) {
  end = std::min(end, model.layers.size());
  std::size_t first = end, last = end;
  for (std::size_t l = begin; l < end; ++l)
    if (!block_of(model.layers[l].name).empty()) {
      if (first == end) first = l;
      last = l + 1;
    }
  return first == end ? std::pair{end, end} : std::pair{first, last};
}

TensorParallelTraffic range_traffic(const LayerModel& model, const TransformerShape& shape, std::size_t begin,
                                    std::size_t end, int micro_batch, const TensorParallelOptions& options,
                                    bool backward) {
  TensorParallelTraffic total;
  if (options.degree <= 1) return total;
  const TensorParallelTraffic block = block_traffic(shape, micro_batch, options);
  const int blocks = blocks_in_range(model, begin, end);
  total = {block.all_reduce * blocks, block.all_gather * blocks, block.reduce_scatter * blocks};
  if (!backward)
    for (std::size_t l = begin; l < end && l < model.layers.size(); ++l)
      if (model.layers[l].kind == LayerKind::embedding && model.layers[l].parameter_bytes.value() > 0)
        total.all_reduce += Bytes(static_cast<double>(micro_batch) * shape.seq * shape.hidden * kActivationBytes);
  return total;
}

Bytes recompute_checkpoint_bytes(const TransformerShape& shape, int micro_batch, const TensorParallelOptions& options) {
  return Bytes(2.0 * shape.seq * micro_batch * shape.hidden / (options.sequence_parallel ? options.degree : 1));
}

Bytes boundary_bytes_per_rank(const TransformerShape& shape, const TensorParallelOptions& options) {
  return Bytes(kActivationBytes * shape.seq * shape.hidden / options.degree);
}

void recompute_in_backward(Layer& layer) {
  layer.backward_bytes = layer.backward_traffic() + layer.forward_traffic();
  layer.backward_flops += layer.forward_flops;
  layer.forward_in_backward = true;
}

LayerModel shard_for_tensor_parallel(const LayerModel& model, const TensorParallelOptions& options) {
  assert(options.degree >= 1);
  const auto shape = transformer_shape(model);
  assert(shape.has_value());
  const double t = options.degree;
  LayerModel sharded = model;
  // Per block, the zoo's per-sample activation bytes are rescaled to Korthikanti's figure (per
  // sequence); full recompute is modelled by the schedule, which keeps the checkpoint only, so the
  // block keeps the no-recompute figure while it is being recomputed.
  TensorParallelOptions kept = options;
  if (kept.recompute == Recompute::full) kept.recompute = Recompute::none;
  const double per_block = layer_activation_bytes(*shape, 1, kept).value();
  std::map<std::string, double> zoo_block_bytes;
  for (const Layer& layer : model.layers)
    if (const std::string block = block_of(layer.name); !block.empty())
      zoo_block_bytes[block] += layer.activation_bytes.value();
  // The LLM zoo's layers keep what Transformer Engine saves (zoo_llm.hpp), which Korthikanti's
  // GPT-2-shaped figures would misstate (flash attention keeps no score matrix, GQA, gated MLPs,
  // experts): they are divided as their work is, not rescaled.
  const bool own_activations = model.transformer.has_value();
  for (Layer& layer : sharded.layers) {
    const std::string block = block_of(layer.name);
    // The experts (expert tensor parallel 1) and the router are not split: each rank routes and
    // computes its own tokens (sequence parallelism splits them), with all of its experts' weights.
    const bool whole_weights = layer.role == LayerRole::experts || layer.role == LayerRole::router;
    const double divisor = splits(layer.kind) || options.sequence_parallel ? t : 1.0;
    layer.forward_flops = layer.forward_flops / divisor;
    layer.backward_flops = layer.backward_flops / divisor;
    layer.backward_weight_flops = layer.backward_weight_flops / divisor;
    // The traffic estimates must not follow the activation rescaling below: make the defaults explicit.
    layer.backward_bytes = layer.backward_traffic() / divisor;
    layer.forward_bytes = layer.forward_traffic() / divisor;
    if (splits(layer.kind) && !whole_weights) layer.parameter_bytes = layer.parameter_bytes / t;
    // Heads (folded into m) are split in attention, and the tokens (rows) of the experts and router;
    // GEMMs are split along n (column-parallel) or k (row-parallel): n stands for both, as only the
    // product's FLOPs and size are read.
    if (splits(layer.kind))
      for (MatmulShape& product : layer.matmuls) {
        std::int64_t& split = layer.kind == LayerKind::attention || whole_weights ? product.m : product.n;
        split = std::max<std::int64_t>(1, split / options.degree);
      }
    if (own_activations) {
      layer.activation_bytes = layer.activation_bytes / divisor;
      layer.saved_input_elements /= divisor;
    } else if (!block.empty() && zoo_block_bytes[block] > 0)
      layer.activation_bytes = Bytes(layer.activation_bytes.value() * per_block / zoo_block_bytes[block]);
    else if (layer.kind == LayerKind::matmul)
      // A column-parallel GEMM outside the blocks (the LM head) keeps its input, which every rank
      // holds whole unless sequence parallelism splits it (and all-gathers it again backward).
      layer.activation_bytes = layer.activation_bytes / (options.sequence_parallel ? t : 1.0);
    else
      layer.activation_bytes = layer.activation_bytes / divisor;
    // Selective recomputation re-runs the core (QKᵀ, the masked softmax, dropout, the product with V;
    // Korthikanti et al. 2022 §5, Megatron-LM's CheckpointFunction around core_attention). Megatron's
    // unfused core is memory-bound, so its traffic, not its FLOPs, is the cost.
    if (options.recompute == Recompute::selective && layer.kind == LayerKind::attention) recompute_in_backward(layer);
  }
  return sharded;
}

}  // namespace dnnsim
