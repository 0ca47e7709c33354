// Megatron-style tensor (intra-layer) parallelism of a transformer LayerModel, and the memory a GPU
// needs under it.
//
// Tensor parallelism (Shoeybi et al., "Megatron-LM", arXiv:1909.08053, §3 and Fig. 3): in every block
// the QKV and MLP up-projections are column-parallel and the attention output and MLP down-projection
// row-parallel, so each of the t ranks of the tensor-parallel group holds 1/t of the weights and does
// 1/t of the GEMM and attention FLOPs (heads split across ranks), and the block needs 2 all-reduces of
// the b·s·h activation in forward (after the two row-parallel GEMMs: operator g) and 2 in backward
// (operator f before the two column-parallel GEMMs). The embedding is vocabulary-parallel (one
// all-reduce of b·s·h in forward) and the LM head is vocabulary-parallel with a fused cross entropy
// (its all-reduces move b·s floats: not modelled). LayerNorms, dropouts and residual adds are
// replicated on every rank.
//
// Sequence parallelism (Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
// Models", MLSys'23 / arXiv:2205.05198, §4.2.2): the replicated regions are split along the sequence
// instead, so each all-reduce becomes an all-gather (before the column-parallel GEMM) plus a
// reduce-scatter (after the row-parallel one) of the same b·s·h buffer: the same bytes on the wire
// (a ring all-reduce is a reduce-scatter + an all-gather), and LayerNorm/dropout work divided by t.
//
// Activation memory per transformer layer, in bytes, fp16 activations, Korthikanti et al. Table 2
// (s sequence, b micro-batch, h hidden, a heads, t tensor-parallel size):
//   no parallelism                          s·b·h·(34 + 5·a·s/h)
//   tensor parallel                         s·b·h·(10 + 24/t + 5·a·s/(h·t))
//   tensor + sequence parallel              s·b·h·(34/t + 5·a·s/(h·t))
//   tensor parallel + selective recompute   s·b·h·(10 + 24/t)
//   tensor + sequence + selective           s·b·h·34/t
//   full recompute                          s·b·h·2            (only each layer's input is kept; §4.1)
// (full recompute with sequence parallelism keeps the input split: 2·s·b·h/t.)
//
// The transformer's shape is read back from the zoo's layers (models/dnn/zoo.hpp granularity): a
// block is one LayerKind::attention layer, whose first product is Q·Kᵀ with m = heads·seq,
// n = kv_len, k = d_head.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/common/units.hpp"
#include "models/dnn/layer_model.hpp"

namespace dnnsim {

enum class Recompute { none, selective, full };
[[nodiscard]] std::string_view recompute_name(Recompute recompute);
[[nodiscard]] std::optional<Recompute> recompute_from_name(std::string_view name);
[[nodiscard]] std::vector<std::string> recompute_names();

struct TensorParallelOptions {
  int degree = 1;  // t: GPUs of one tensor-parallel group
  bool sequence_parallel = false;
  Recompute recompute = Recompute::none;
  // ZeRO-1 over the data-parallel ranks (Megatron's --use-distributed-optimizer): the optimizer
  // state (fp32 master weights + Adam moments) divided by DP as well.
  bool distributed_optimizer = false;
};

struct TransformerShape {
  int blocks = 0;
  int hidden = 0;
  int heads = 0;
  int seq = 0;
};

// The shape of a zoo transformer (nullopt when the model has no attention layer with its products).
[[nodiscard]] std::optional<TransformerShape> transformer_shape(const LayerModel& model);

// Why `model` cannot be split over `degree` ranks: not a transformer, heads or hidden size not a
// multiple of the degree. Empty when it can.
[[nodiscard]] std::vector<std::string> tensor_parallel_problems(const LayerModel& model, int degree);

// Korthikanti et al. Table 2 (above): bytes one transformer layer keeps for its backward, per
// micro-batch of `micro_batch` sequences, on one rank.
[[nodiscard]] Bytes layer_activation_bytes(const TransformerShape& shape, int micro_batch,
                                           const TensorParallelOptions& options);

// The tensor-parallel collectives of one transformer block for one pass of a micro-batch of
// `micro_batch` sequences: {all_reduce: 2 × b·s·h·2 bytes} without sequence parallelism, {all_gather:
// 2 × …, reduce_scatter: 2 × …} with it; the buffer is the full b·s·h fp16 tensor (NCCL's count).
struct TensorParallelTraffic {
  Bytes all_reduce{0};
  Bytes all_gather{0};
  Bytes reduce_scatter{0};
  friend TensorParallelTraffic operator+(TensorParallelTraffic x, const TensorParallelTraffic& y) {
    return {x.all_reduce + y.all_reduce, x.all_gather + y.all_gather, x.reduce_scatter + y.reduce_scatter};
  }
};
// The buffer of one tensor-parallel call, b·s·h fp16 values: every term of block_traffic and
// range_traffic is a whole number of such calls (size / this = the NCCL calls a task stands for).
[[nodiscard]] Bytes tensor_parallel_call_bytes(const TransformerShape& shape, int micro_batch);
[[nodiscard]] TensorParallelTraffic block_traffic(const TransformerShape& shape, int micro_batch,
                                                  const TensorParallelOptions& options);

// A layer recomputed before its backward (selective recomputation, Megatron-Core's recompute modules):
// the backward re-runs the forward first, so it pays the forward's FLOPs and memory traffic once more.
void recompute_in_backward(Layer& layer);

// The layers [begin, end) of `model` as one rank of the group runs them: GEMM, attention, embedding
// and head FLOPs and weights divided by t; norms and elementwise layers replicated (divided by t with
// sequence parallelism); per-sample activation_bytes rescaled so that a block's layers sum to
// layer_activation_bytes / micro_batch; with selective recompute, the attention core is recomputed in
// its backward (recompute_in_backward; Korthikanti §5). Full recompute is the schedule's
// re-materialization (planners/schedules/pipeline_lowering.hpp). Asserts options.degree ≥ 1 and a
// transformer model.
[[nodiscard]] LayerModel shard_for_tensor_parallel(const LayerModel& model, const TensorParallelOptions& options);

// Forward collectives of the layers in [begin, end) for a micro-batch of `micro_batch` sequences:
// block_traffic per attention layer, plus one b·s·h all-reduce for a vocabulary-parallel embedding
// (in forward only). Backward: `backward` = true gives the blocks' traffic and no embedding term.
[[nodiscard]] TensorParallelTraffic range_traffic(const LayerModel& model, const TransformerShape& shape,
                                                  std::size_t begin, std::size_t end, int micro_batch,
                                                  const TensorParallelOptions& options, bool backward);

// Attention layers (transformer blocks) among the layers [begin, end).
[[nodiscard]] int blocks_in_range(const LayerModel& model, std::size_t begin, std::size_t end);

// What full recomputation re-runs of the layers [begin, end): the span of their transformer blocks'
// layers ("block<i>." names), as [first, last) — empty (first == last) without a block. Megatron-LM
// checkpoints the transformer layers only (ParallelTransformer's checkpointed forward; DeepSpeed's
// PipelineModule checkpoints ParallelTransformerLayerPipe only, Megatron-DeepSpeed's GPTModelPipe):
// the embedding, final norm, head and loss keep their activations and are not run again.
[[nodiscard]] std::pair<std::size_t, std::size_t> checkpointed_span(const LayerModel& model, std::size_t begin,
                                                                    std::size_t end);

// What full recomputation keeps per block until the backward: the block's input, 2·s·b·h bytes
// (divided by t with sequence parallelism, whose block input is split along the sequence).
[[nodiscard]] Bytes recompute_checkpoint_bytes(const TransformerShape& shape, int micro_batch,
                                               const TensorParallelOptions& options);

// What a pipeline stage sends per sequence: the b·s·h fp16 activation, split over the t ranks
// (Megatron's scatter/gather optimization, Narayanan et al. SC'21 §4.1: each rank sends 1/t and the
// receiving group all-gathers over NVLink, not modelled).
[[nodiscard]] Bytes boundary_bytes_per_rank(const TransformerShape& shape, const TensorParallelOptions& options);

}  // namespace dnnsim
