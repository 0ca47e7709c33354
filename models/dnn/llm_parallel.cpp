#include "models/dnn/llm_parallel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "models/common/enum_names.hpp"

namespace dnnsim {
namespace {

constexpr double kBf16 = 2.0;

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// `layer` keeps `kept` per sample from now on; what it moves and what crosses a cut after it stay.
void keep_only(Layer& layer, Bytes kept) {
  layer.backward_bytes = layer.backward_traffic();
  layer.forward_bytes = layer.forward_traffic();
  if (!layer.cut_bytes) layer.cut_bytes = layer.activation_bytes;
  layer.activation_bytes = kept;
}

}  // namespace

std::vector<std::string> llm_parallel_problems(const LayerModel& model, const LlmParallelism& parallel, int tp,
                                               int stage_gpus) {
  std::vector<std::string> problems;
  const bool needs_dims = parallel.context > 1 || parallel.expert > 1;
  if (needs_dims && !model.transformer) {
    problems.push_back(
        fmt::format("expert and context parallelism need an LLM: one of the zoo (`dnnsim list models`: "
                    "llama3-8b, deepseek-v3, …) or `model: {{llm: {{…}}}}`; '{}' has no transformer dimensions",
                    model.name));
    return problems;
  }
  if (parallel.expert > 1) {
    const TransformerDims& dims = *model.transformer;
    if (dims.experts == 0)
      problems.push_back(fmt::format("expert_parallel {} needs a mixture-of-experts model; '{}' is dense",
                                     parallel.expert, model.name));
    else if (dims.experts % parallel.expert != 0)
      problems.push_back(fmt::format("expert_parallel {} does not divide the {} experts of '{}'", parallel.expert,
                                     dims.experts, model.name));
    if (stage_gpus > 0 && stage_gpus % parallel.expert != 0)
      problems.push_back(
          fmt::format("expert_parallel {} does not divide a pipeline stage's {} GPUs (tensor × context "
                      "× data parallel), from which Megatron carves the expert groups",
                      parallel.expert, stage_gpus));
  }
  if (parallel.context > 1) {
    const int seq = model.transformer->seq;
    if (seq % (2 * parallel.context) != 0)
      problems.push_back(
          fmt::format("context_parallel {} does not divide the sequence of {} tokens into 2 × {} equal "
                      "chunks (ring attention's causal load balancing)",
                      parallel.context, seq, parallel.context));
    if (tp > 1 && (seq / parallel.context) % tp != 0)
      problems.push_back(fmt::format("the {} tokens per context rank do not split over tensor_parallel {}",
                                     seq / parallel.context, tp));
  }
  if (parallel.context > 1 && model.transformer)
    if (std::string why =
            context_comm_problem(*model.transformer, parallel.context_comm, tp, parallel.context, parallel.context_a2a);
        !why.empty())
      problems.push_back(std::move(why));
  if (parallel.routing.imbalance < 1.0)
    problems.push_back(fmt::format("moe imbalance {} is below 1 (the busiest GPU gets at least the balanced share)",
                                   parallel.routing.imbalance));
  return problems;
}

double local_tokens(const TransformerDims& dims, int tp, bool sequence_parallel, int cp) {
  return static_cast<double>(dims.seq) / cp / (sequence_parallel ? tp : 1);
}

Bytes expert_all_to_all_bytes(const TransformerDims& dims, int micro_batch, int tp, bool sequence_parallel, int cp,
                              const MoeRouting& routing) {
  return Bytes(micro_batch * local_tokens(dims, tp, sequence_parallel, cp) * dims.top_k * dims.hidden * kBf16 *
               routing.load());
}

Bytes ring_attention_step_bytes(const TransformerDims& dims, int micro_batch, int tp, int cp) {
  // Key/value heads split over the tensor ranks when there are enough of them, replicated otherwise.
  const double kv_split = std::min(tp, std::max(1, dims.kv_heads));
  return Bytes(micro_batch * (static_cast<double>(dims.seq) / cp) * dims.kv_width / kv_split * kBf16);
}

namespace {

// Transformer Engine's cp_comm_type spellings, in ContextComm order.
constexpr std::array<std::string_view, 4> kContextCommNames{"p2p", "all_gather", "a2a", "a2a+p2p"};

// Key/value heads on one tensor rank: split over the tensor ranks when there are at least TP of
// them, one replicated head group otherwise (as ring_attention_step_bytes).
int kv_heads_per_rank(const TransformerDims& dims, int tp) {
  const int kv = std::max(1, dims.kv_heads);
  return kv / std::min(tp, kv);
}

}  // namespace

std::vector<std::string> context_comm_names() { return enum_names(kContextCommNames); }

std::string_view context_comm_name(ContextComm comm) { return kContextCommNames[static_cast<std::size_t>(comm)]; }

std::optional<ContextComm> context_comm_from_name(std::string_view name) {
  return enum_from_name<ContextComm>(kContextCommNames, name);
}

int context_ring_size(const LlmParallelism& parallel) {
  if (parallel.context_comm == ContextComm::p2p) return parallel.context;
  if (parallel.context_comm == ContextComm::a2a_p2p) return parallel.context / std::max(1, parallel.context_a2a);
  return 1;
}

double attention_calls_in_sequence(const LlmParallelism& parallel, bool backward) {
  const int ring = context_ring_size(parallel);
  if (ring <= 1) return 1.0;
  return backward ? ring : std::max(1.0, ring / 2.0);
}

int attention_heads_per_call(const TransformerDims& dims, int tp, const LlmParallelism& parallel) {
  const int a2a = parallel.context_comm == ContextComm::a2a       ? parallel.context
                  : parallel.context_comm == ContextComm::a2a_p2p ? parallel.context_a2a
                                                                  : 1;
  return std::max(1, dims.heads / std::max(1, tp) / std::max(1, a2a));
}

double unmasked_attention_share(const LlmParallelism& parallel) {
  if (parallel.context <= 1) return 0.0;
  if (parallel.context_comm == ContextComm::all_gather)
    return (2.0 * parallel.context - 1.0) / (2.0 * parallel.context);
  const int ring = context_ring_size(parallel);
  return ring > 1 ? (ring - 1.0) / ring : 0.0;
}

std::string context_comm_problem(const TransformerDims& dims, ContextComm comm, int tp, int cp, int a2a) {
  if (cp <= 1 || (comm != ContextComm::a2a && comm != ContextComm::a2a_p2p)) return {};
  if (comm == ContextComm::a2a_p2p && (a2a < 1 || cp % a2a != 0))
    return fmt::format("context_parallel_comm a2a+p2p needs its a2a groups' size ({}) to divide context_parallel {}",
                       a2a, cp);
  const int group = comm == ContextComm::a2a ? cp : a2a;
  const int heads = dims.heads / std::max(1, tp);
  const int kv = kv_heads_per_rank(dims, tp);
  if (heads % group == 0 && kv % group == 0) return {};
  return fmt::format(
      "context_parallel_comm {} needs the attention heads per tensor rank ({} = {} / TP {}) and the key/value "
      "heads per tensor rank ({}) divisible by {} {} (Transformer Engine's all-to-all splits heads over {})",
      comm == ContextComm::a2a ? "a2a" : "a2a+p2p", heads, dims.heads, tp, kv,
      comm == ContextComm::a2a ? "context_parallel" : "the a2a groups' size", group,
      comm == ContextComm::a2a ? "the CP ranks" : "an a2a group");
}

std::vector<ContextExchange> context_exchanges(const TransformerDims& dims, ContextComm comm, int micro_batch, int tp,
                                               int cp, bool backward) {
  if (cp <= 1 || comm == ContextComm::p2p) return {};
  // The rank's own K and V (one ring chunk): an all-gather's output and a reduce-scatter's input are
  // CP of them; each is one call for K and one for V.
  const Bytes local_kv = ring_attention_step_bytes(dims, micro_batch, tp, cp);
  if (comm == ContextComm::all_gather) {
    std::vector<ContextExchange> result{{CollectiveKind::all_gather, local_kv * cp, 2}};
    if (backward) result.push_back({CollectiveKind::reduce_scatter, local_kv * cp, 2});
    return result;
  }
  // a2a: Q and O (or dO and dQ) add heads·(d_k + d_v) per token to K and V's kv_width.
  const double per_head = static_cast<double>(dims.kv_width) / std::max(1, dims.kv_heads);
  const Bytes local_qo(micro_batch * (static_cast<double>(dims.seq) / cp) * dims.heads / tp * per_head * kBf16);
  return {{CollectiveKind::all_to_all, local_kv + local_qo, 4}};
}

Bytes context_gather_buffer_bytes(const TransformerDims& dims, ContextComm comm, int micro_batch, int tp, int cp) {
  if (cp <= 1 || comm != ContextComm::all_gather) return Bytes(0);
  return ring_attention_step_bytes(dims, micro_batch, tp, cp) * (2.0 * cp);
}

std::vector<RingPhase> ring_attention_phases(int cp, bool backward) {
  if (cp <= 1) return {};
  if (!backward) return {{cp - 1, 1}};
  std::vector<RingPhase> phases{{2, 1}};
  if (cp > 2) phases.push_back({cp - 2, 2});
  return phases;
}

RingCorrections ring_attention_corrections(const TransformerDims& dims, int micro_batch, int tp, int cp, int ring,
                                           bool backward) {
  RingCorrections slowest;
  if (ring <= 1 || dims.kv_heads <= 0) return slowest;
  const double tokens = micro_batch * static_cast<double>(dims.seq) / cp;
  const double heads = static_cast<double>(dims.heads) / tp;
  const double d_v = static_cast<double>(dims.value_width) / dims.kv_heads;
  const double d_k = static_cast<double>(dims.kv_width) / dims.kv_heads - d_v;
  // BF16 elements per token on a GPU: the output, dQ, and dK + dV.
  const double o = heads * d_v;
  const double q = heads * d_k;
  const double kv = static_cast<double>(dims.kv_width) / std::min(tp, std::max(1, dims.kv_heads));
  constexpr double kLse = 4.0;  // fp32 log-sum-exp, one per query head and token
  const int p = ring;
  // Each rank's steps fall into a few runs of equal merges, summed per run: the ring can be as long as
  // the CP degree, and the 5D planner asks once per layer shape and candidate CP (O(P) per call, not O(P²)).
  for (int r = 0; r < p; ++r) {
    double bytes = 0;  // per token
    int kernels = 0;
    if (!backward) {
      // Step 0 scales into out; steps 1..r come from below (all queries), r+1..P−1 from above (half).
      bytes = 2 * o * kBf16 + 2 * heads * kLse + r * (3 * o * kBf16 + 2 * heads * kLse) +
              (p - 1 - r) * (1.5 * o * kBf16 + heads * kLse);
      kernels = p;
    } else {
      // Step i meets K/V from below for i > P − r − 1, the diagonal at i = P − r − 1 = m, from above before.
      const int m = p - r - 1;
      // dQ: the r steps from below all queries (an add); step m copies the first half (all of it when it
      // is step 0); the m steps before it the second half (copied at step 0, added after).
      double accesses = r * 3 * q + (r == p - 1 ? 2 * q : 2.5 * q);
      kernels = r + (r == p - 1 ? 1 : 2) + m;
      if (m > 0) accesses += q + (m - 1) * 1.5 * q;
      // dK/dV (two tensors): the last step (the diagonal) all keys; steps m..P−2 from below their first
      // half (copied when that is step 0); steps before m all keys (copied at step 0, added after).
      accesses += r == 0 ? 2.5 * kv : 3 * kv;
      kernels += r == 0 ? 4 : 2;
      accesses += r == p - 1 ? kv + (r - 1) * 1.5 * kv : r * 1.5 * kv;
      kernels += 2 * r;
      if (m > 0) accesses += 2 * kv + (m - 1) * 3 * kv;
      kernels += 2 * m;
      bytes = accesses * kBf16;
    }
    if (bytes * tokens > slowest.bytes.value()) slowest = {Bytes(bytes * tokens), kernels};
  }
  return slowest;
}

FsdpTraffic fsdp_traffic(double parameters, const PrecisionRecipe& recipe, bool backward) {
  FsdpTraffic traffic;
  traffic.all_gather = Bytes(parameters * recipe.bytes_per_parameter().weights);
  if (backward) traffic.reduce_scatter = Bytes(parameters * recipe.bytes_per_parameter().gradients);
  return traffic;
}

int moe_layers_in_range(const LayerModel& model, std::size_t begin, std::size_t end) {
  int count = 0;
  for (std::size_t l = begin; l < end && l < model.layers.size(); ++l)
    if (model.layers[l].role == LayerRole::experts && ends_with(model.layers[l].name, "fc1")) ++count;
  return count;
}

int attention_layers_in_range(const LayerModel& model, std::size_t begin, std::size_t end) {
  int count = 0;
  for (std::size_t l = begin; l < end && l < model.layers.size(); ++l)
    if (model.layers[l].kind == LayerKind::attention) ++count;
  return count;
}

ParameterSplit parameter_split(const LayerModel& model, std::size_t begin, std::size_t end) {
  ParameterSplit split;
  for (std::size_t l = begin; l < end && l < model.layers.size(); ++l) {
    const double parameters = model.layers[l].parameter_bytes.value() / kProfileBytesPerParameter;
    (model.layers[l].role == LayerRole::experts ? split.experts : split.dense) += parameters;
  }
  return split;
}

ModelStates llm_model_states(const ParameterSplit& parameters, const BytesPerParameter& per, double shards, int tp,
                             int ep, bool fsdp) {
  const double expert_shards = shards > 1 ? std::max(1.0, shards * tp / std::max(1, ep)) : 1.0;
  const auto states = [&](double count, double divisor) {
    const double sharded = fsdp ? divisor : 1.0;
    // FSDP's shard is never a GEMM operand, so it has no transpose (its gathered layers do).
    return ModelStates{Bytes(count * (fsdp ? per.weights / sharded : per.whole_weights())),
                       Bytes(count * per.gradients / sharded), Bytes(count * per.optimizer_state / divisor)};
  };
  const ModelStates dense = states(parameters.dense, shards);
  const ModelStates experts = states(parameters.experts, expert_shards);
  return {dense.weights + experts.weights, dense.gradients + experts.gradients,
          dense.optimizer_state + experts.optimizer_state};
}

std::vector<std::string> recompute_module_names() {
  return {"core_attn", "layernorm", "mla_up_proj", "moe_act", "mlp", "moe", "shared_experts"};
}

std::optional<RecomputeModule> recompute_module_from_name(std::string_view name) {
  const std::vector<std::string> names = recompute_module_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<RecomputeModule>(1u << i);
  return std::nullopt;
}

LayerModel recompute_modules(const LayerModel& model, std::uint8_t modules) {
  LayerModel result = model;
  if (modules == 0) return result;
  for (Layer& layer : result.layers) {
    if ((layer.recompute_frees & modules) != 0)
      keep_only(layer, layer.activation_bytes * (1.0 - layer.recompute_frees_share));
    if ((layer.recompute_modules & modules) != 0) recompute_in_backward(layer);
  }
  return result;
}

LayerModel offload_activations(const LayerModel& model, int layers) {
  LayerModel result = model;
  if (layers <= 0) return result;
  // The embedding, the final norm and the head are in no block: they keep their activations.
  const std::vector<LayerRange> blocks = model_blocks(result);
  for (std::size_t b = 0; b < blocks.size() && b < static_cast<std::size_t>(layers); ++b)
    for (std::size_t l = blocks[b].begin; l < blocks[b].end; ++l) {
      Layer& layer = result.layers[l];
      layer.offloaded_bytes = layer.activation_bytes;
      keep_only(layer, Bytes(0));
    }
  return result;
}

std::vector<int> offload_windows(int blocks, int offloaded) {
  // TE's layer_window_map: the blocks split into `offloaded` near-equal windows, the first
  // blocks % offloaded of them one block longer.
  std::vector<int> windows;
  int longer = 0;
  for (int i = 0; i < offloaded; ++i) {
    int window = blocks / offloaded * (i + 1) - 1;
    if (i < blocks % offloaded) {
      window += i + 1;
      longer = i + 1;
    } else {
      window += longer;
    }
    windows.push_back(window);
  }
  return windows;
}

LayerModel shard_for_llm(const LayerModel& model, const TensorParallelOptions& tensor, const LlmParallelism& parallel,
                         std::uint8_t modules) {
  LayerModel share = shard_for_tensor_parallel(model, tensor);
  share = shard_for_context_parallel(share, parallel.context);
  if (model.transformer && model.transformer->experts > 0)
    share = shard_for_expert_parallel(share, parallel.expert, parallel.routing);
  if (parallel.precision.active())
    for (Layer& layer : share.layers)
      if (const Bytes kept = parallel.precision.saved_input_bytes(layer); kept != layer.activation_bytes)
        keep_only(layer, kept);
  return offload_activations(recompute_modules(share, modules), parallel.offloaded_layers);
}

LayerModel shard_for_context_parallel(const LayerModel& model, int cp) {
  LayerModel sharded = model;
  if (cp <= 1) return sharded;
  const double c = cp;
  for (Layer& layer : sharded.layers) {
    // Make the traffic defaults explicit before the activations are divided (as tensor_parallel.cpp).
    layer.backward_bytes = layer.backward_traffic() / c;
    layer.forward_bytes = layer.forward_traffic() / c;
    layer.forward_flops = layer.forward_flops / c;
    layer.backward_flops = layer.backward_flops / c;
    layer.backward_weight_flops = layer.backward_weight_flops / c;
    layer.activation_bytes = layer.activation_bytes / c;
    layer.saved_input_elements /= c;
    if (layer.cut_bytes) layer.cut_bytes = *layer.cut_bytes / c;
    for (MatmulShape& product : layer.matmuls) product.m = std::max<std::int64_t>(1, product.m / cp);
  }
  return sharded;
}

LayerModel shard_for_expert_parallel(const LayerModel& model, int ep, const MoeRouting& routing) {
  LayerModel sharded = model;
  const double load = routing.load();
  for (Layer& layer : sharded.layers) {
    const bool experts = layer.role == LayerRole::experts;
    // The routed experts' memory-bound passes (activation, clamp, bias: "….experts.*") follow their rows.
    const bool expert_work = experts || layer.name.find(".experts.") != std::string::npos ||
                             ends_with(layer.name, "combine") || ends_with(layer.name, "dispatch");
    if (!expert_work) continue;
    layer.backward_bytes = layer.backward_traffic() * load;
    layer.forward_bytes = layer.forward_traffic() * load;
    layer.forward_flops = layer.forward_flops * load;
    layer.backward_flops = layer.backward_flops * load;
    layer.backward_weight_flops = layer.backward_weight_flops * load;
    layer.activation_bytes = layer.activation_bytes * load;
    layer.saved_input_elements *= load;
    if (!experts) continue;
    layer.parameter_bytes = layer.parameter_bytes / ep;
    for (MatmulShape& product : layer.matmuls)
      product.m = std::max<std::int64_t>(1, std::llround(static_cast<double>(product.m) * ep * load));
  }
  return sharded;
}

}  // namespace dnnsim
