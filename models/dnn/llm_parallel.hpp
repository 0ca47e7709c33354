// Expert, context and fully sharded data parallelism of an LLM (a LayerModel with TransformerDims,
// models/dnn/zoo_llm.hpp), as Megatron-Core runs them: what each GPU computes and holds, and the
// bytes of the communication each adds. The pipeline lowering places the communication
// (planners/schedules/step_communication.hpp); everything here is arithmetic, unit-tested with its
// derivations (tests/unit/models/llm_parallel_test.cpp).
//
// Ranks (Megatron-Core's default order "tp-cp-ep-dp-pp", parallel_state.py): the GPUs of a pipeline
// stage are numbered tensor rank fastest, then context, then data-parallel replica. Expert layers
// re-slice the same GPUs (expert tensor parallel 1 in every recipe here): a GPU's expert-parallel
// group is the EP consecutive GPUs of its stage containing it, and its expert-data-parallel group the
// stage's GPUs congruent to it modulo EP (expert_data_parallel_size = TP·CP·DP / EP).
//
// Expert parallelism (Lepikhin et al., GShard, ICLR'21 §2.2; Megatron-Core MoE, alltoall dispatcher):
// each GPU holds E/EP of every MoE layer's experts. Its T local tokens (b·s / (TP·CP): sequence
// parallelism splits them over the tensor ranks) are routed to k experts each; the dispatch all-to-all
// sends each copy to the GPU that holds its expert, T·k·h BF16 values in all (T·k·h/EP of them to
// itself), the experts run, and the combine all-to-all returns as many; backward the gradients take
// the same two exchanges the other way. Balanced routing (the table's force-balanced runs) gives every
// GPU T·k token-expert pairs, T·k·EP/E rows per local expert. A routing `load` ≥ 1 (imbalance, or a
// capacity factor padded to) scales the busiest GPU's expert work and the bytes it receives.
//
// Context parallelism (ring attention: Liu et al., arXiv:2310.01889; Megatron-Core/TE's CP with the
// sequence cut into 2·CP chunks so that causal work balances): each GPU holds s/CP tokens of every
// sequence, so every layer's work, traffic and kept activations per sample divide by CP, and the
// attention core meets the other ranks' keys and values by passing them around the CP ring, as
// Transformer Engine's AttnFuncWithCPAndKVP2P (cp_comm_type "p2p", Megatron-Core's default when
// cp_comm_type is unset: TEDotProductAttention) runs it, in CP steps per layer and pass:
//  - forward: step i computes the attention of the local queries with the K/V chunk held since step
//    i − 1 while sending that chunk to the next rank and receiving the previous rank's (steps 0 to
//    CP − 2; the last step sends nothing). Each causal step is half of a (s/CP)² block (the diagonal
//    step's two causal chunks, or the upper/lower triangles' half queries or half keys), so each is 1/CP
//    of the rank's attention; a step lasts max(its exchange, its attention), the last one its attention.
//  - backward: CP steps of the attention backward, step i overlapping one exchange: step 0 sends the
//    K/V only, steps 1 to CP − 2 the K/V and the dK/dV accumulated so far (2 chunks), the last step the
//    dK/dV only, back to the rank that owns them (p2p_comm_buffers of 2 × kv in the K/V dtype).
// One chunk is b·(s/CP)·kv_width/TP_kv BF16 values (kv heads split over the tensor ranks when there are
// at least TP of them).
// Transformer Engine's other cp_comm_type values (TE v2.9, 70f5366, transformer_engine/pytorch/attention/
// dot_product_attention/context_parallel.py), each exposed: the attention core waits for them and
// nothing else runs beside them, so a step lasts its compute plus them (context_exchanges):
//  - "all_gather" (AttnFuncWithCPAndKVAllGather, "KV all-gather between CP ranks is exposed", after
//    Llama 3, arXiv:2407.21783 §3.3.2): forward, K and V are all-gathered over the CP group
//    (gather_along_first_dim, one call each) and the rank's 2 query chunks meet the whole K/V below
//    them, on two streams for wave quantization only — the same causal work as the ring's; it saves
//    the local K/V, so the backward gathers them again, runs the attention backward into full-length
//    dK/dV and reduce-scatters those (reduce_scatter_along_first_dim, one call each, K/V dtype).
//    Per layer and GPU: forward (CP − 1) chunks received, backward (CP − 1) received and (CP − 1)
//    sent. Megatron-Core (core_r0.15.0 transformer_config.py, cp_comm_type): "The all-gather is not
//    async, and cannot be overlapped." During the core a GPU holds 2·CP chunks (the gathered K/V and
//    its reordered index_select copy forward; the gathered K/V and the full-length dK/dV backward),
//    one layer at a time: a transient peak, not kept activations (context_gather_buffer_bytes).
//  - "a2a" (DeepSpeed-Ulysses: Jacobs et al., arXiv:2309.14509 §3.1; AttnFuncWithCPAndQKVOA2A):
//    forward, Q, K and V go from sequence-sharded to head-sharded (all_to_all_single, one call each),
//    the core runs over the whole sequence for heads/(TP·CP) heads, and the output O returns (one
//    call); backward dO forward, then dQ, dK, dV back (4 calls). Each call's input is the rank's local
//    tensor, of which it sends (CP − 1)/CP: per layer and pass b·(s/CP)·(q + k + v + o widths)/TP
//    BF16 values in, q + o = heads·(d_k + d_v) = heads·kv_width/kv_heads (exact for MLA's d_k ≠ d_v).
//    TE asserts "The number of attention heads needs to be divisible by CP size!" of the rank's Q
//    and K heads (context_comm_problem). What it saves is the head-sharded Q/K/V and O, as large as
//    the sequence-sharded ones: the kept activations do not change.
//  - "a2a+p2p" (hierarchical CP: AttnFuncWithCPAndKVP2P with cp_group = [a2a group, p2p group];
//    Megatron-Core's hierarchical_context_parallel_sizes [A, P], A·P = CP, parallel_state.py
//    create_hierarchical_parallel_groups): the CP ranks form A × P, the a2a groups A consecutive CP
//    ranks, the p2p rings the P ranks congruent modulo A (TE's send_dst = cp_global_ranks[(rank + 1) %
//    P · A + rank_a2a]). Around the core, "a2a"'s four all-to-alls over the a2a group (the same local
//    tensors, of which (A − 1)/A leaves), between them the "p2p" ring over P ranks: after the a2a each
//    rank holds s/P tokens of heads/(TP·A) heads, so a ring chunk, b·(s/P)·kv_width/(TP_kv·A), is the
//    flat ring's b·(s/CP)·kv_width/TP_kv, and the ring takes P steps of 1/P of the attention each. The
//    a2a's head rule holds for A (context_comm_problem).
// Fully sharded data parallelism (ZeRO-3: Rajbhandari et al., SC'20 §5; Megatron-FSDP
// optim_grads_params): weights, gradients and optimizer state are divided over the F = DP·CP ranks of
// a stage's tensor rank; each layer's weights are all-gathered before its forward and again before
// its backward (W·P bytes gathered, P the weight bytes per parameter the recipe gathers: 1 for FP8
// parameters, 2 for BF16), and its gradients reduce-scattered after its backward (2 bytes per
// parameter, BF16): per micro-batch, prefetched one layer ahead so that the exchange overlaps compute.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/units.hpp"
#include "models/dnn/layer_model.hpp"
#include "models/dnn/precision_recipe.hpp"
#include "models/dnn/tensor_parallel.hpp"
#include "models/program/task_graph.hpp"

namespace dnnsim {

// Routing of the MoE layers (Megatron-Core's moe_router_force_load_balancing, moe_expert_capacity_factor).
struct MoeRouting {
  double imbalance = 1.0;                 // the busiest GPU's tokens over the balanced share (≥ 1)
  std::optional<double> capacity_factor;  // tokens per expert capped at factor × balanced, padded to it
  // What the busiest GPU's expert work and received bytes are scaled by: the capacity factor when
  // there is one (every expert is padded to it; imbalance beyond it is dropped), else the imbalance.
  [[nodiscard]] double load() const { return capacity_factor ? *capacity_factor : imbalance; }
};

// Transformer Engine's cp_comm_type (Megatron-Core's `cp_comm_type`; unset is "p2p").
enum class ContextComm : std::uint8_t { p2p, all_gather, a2a, a2a_p2p };
[[nodiscard]] std::vector<std::string> context_comm_names();  // "p2p", "all_gather", "a2a", "a2a+p2p"
[[nodiscard]] std::string_view context_comm_name(ContextComm comm);
[[nodiscard]] std::optional<ContextComm> context_comm_from_name(std::string_view name);

struct LlmParallelism {
  int context = 1;  // CP
  ContextComm context_comm = ContextComm::p2p;
  int context_a2a = 1;  // a2a+p2p: the a2a groups' size A (hierarchical_context_parallel_sizes[0])
  int expert = 1;   // EP
  bool fsdp = false;
  MoeRouting routing;
  bool expert_overlap = false;  // the EP all-to-alls overlap compute (overlap_moe_expert_parallel_comm)
  bool tensor_overlap = false;  // the TP collectives overlap the GEMMs (TE userbuffers: tp_comm_overlap)
  PrecisionRecipe precision;
  // Megatron-Core's cpu_offloading (activations only) of the first `offloaded_layers` transformer
  // blocks: their kept activations wait in host memory (offload_activations, below).
  int offloaded_layers = 0;
  [[nodiscard]] bool any() const {
    return context > 1 || expert > 1 || fsdp || precision.active() || tensor_overlap || expert_overlap ||
           offloaded_layers > 0;
  }
};

// Why `model` cannot run `parallel` with tensor degree `tp` on stages of `stage_gpus` GPUs (EP not
// dividing the experts or the stage, CP not dividing the sequence into 2·CP chunks, …); empty if it can.
[[nodiscard]] std::vector<std::string> llm_parallel_problems(const LayerModel& model, const LlmParallelism& parallel,
                                                             int tp, int stage_gpus);

// Tokens of one sequence on one GPU: s / (TP·CP) with sequence parallelism, s / CP without.
[[nodiscard]] double local_tokens(const TransformerDims& dims, int tp, bool sequence_parallel, int cp);

// Bytes ONE GPU sends in one all-to-all (a dispatch or a combine) of one MoE layer for a micro-batch
// of `micro_batch` sequences: b · local tokens · k · h · 2, times the routing's load.
[[nodiscard]] Bytes expert_all_to_all_bytes(const TransformerDims& dims, int micro_batch, int tp,
                                            bool sequence_parallel, int cp, const MoeRouting& routing);

// Bytes of ONE step of the CP ring for one attention layer and one micro-batch: a chunk's K and V on
// one GPU, b · (s/CP) · kv_width / TP_kv · 2.
[[nodiscard]] Bytes ring_attention_step_bytes(const TransformerDims& dims, int micro_batch, int tp, int cp);

// One phase of the CP ring of one attention layer: `steps` equal ring steps, each sending `chunks`
// chunks (ring_attention_step_bytes) to the next rank while computing 1/CP of the layer's attention.
struct RingPhase {
  int steps = 0;
  int chunks = 0;
};
// The phases of one layer's ring, as above: forward {CP − 1 steps × 1 chunk} (the last step's
// attention not overlapped); backward {2 × 1 chunk (the first and last steps), CP − 2 × 2 chunks}.
[[nodiscard]] std::vector<RingPhase> ring_attention_phases(int cp, bool backward);

// The memory-bound kernels with which the ring merges its steps' partial results, on the compute
// stream after each step's attention, neither overlapped with an exchange (TE v2.9
// AttnFuncWithCPAndKVP2P, causal, BSHD/SBHD, attention in BF16):
//  - forward, after the loop, one fused kernel per step (flash_attn_fwd_out_correction*, jit_fuser):
//    step 0 scales its output into `out` (reads O, writes O); a step whose K/V come from a rank at or
//    below this one (i ≤ rank: all queries) adds its rescaled output (reads O twice, writes O); a step
//    from above (the second half of the queries) half of that; each reads the two log-sum-exps (fp32,
//    one per query head and token) of the rows it merges. The log-sum-exp merges inside the loop run
//    on the side streams beside the next step's attention and are not counted.
//  - backward, per step, eager copy_/add_ into dQ, dK and dV (2 and 3 accesses per element): the
//    step's dQ of all queries (steps whose K/V come from below, and the diagonal) or of the second half
//    (from above), the first step copying; dK/dV, the ring's received partial sums, all keys (from
//    above, and the diagonal) or the first half (from below).
// In elements per token on a GPU: O = heads/TP · d_v, dQ = heads/TP · d_k, dK + dV = kv_width/TP_kv.
// The ranks differ (rank r meets r steps from below forward); the ring waits for its slowest at the
// next layer's exchanges, so this is the largest rank's count: `bytes` of one layer and micro-batch of
// `micro_batch` sequences, in `kernels` kernels. Zero for a ring of one rank.
struct RingCorrections {
  Bytes bytes{0};
  int kernels = 0;
};
[[nodiscard]] RingCorrections ring_attention_corrections(const TransformerDims& dims, int micro_batch, int tp, int cp,
                                                         int ring, bool backward);

// The ranks of one CP ring of `parallel`'s context parallelism: p2p CP, a2a+p2p CP / A, otherwise 1
// (no ring).
[[nodiscard]] int context_ring_size(const LlmParallelism& parallel);

// Into how many kernel calls run one after another Transformer Engine splits one attention layer's
// pass under `parallel`'s context parallelism (context_parallel.py, TE 2.x): the ring
// (AttnFuncWithCPAndKVP2P, over context_ring_size ranks P) makes one fused-attention call per step,
// its forward alternating them between two streams "to resolve wave quantization" (step i on
// flash_attn_streams[i % 2]), so P/2 pairs, its backward one call at a time on one stream, P;
// all_gather (AttnFuncWithCPAndKVAllGather) runs its two calls, one per local chunk, on those two
// streams at once, and a2a (AttnFuncWithCPAndQKVOA2A) one call over the whole sequence: 1. The ring's
// steps carry equal FLOPs (the load-balanced chunks: step 0 the causal local block, every other step
// half a block each way), so each call is 1/P of the layer's.
[[nodiscard]] double attention_calls_in_sequence(const LlmParallelism& parallel, bool backward);

// The query heads one of those calls computes on a rank: heads / TP, and over the a2a group (CP under
// a2a, A under a2a+p2p), whose all-to-all hands each rank the whole sequence of fewer heads. A call
// runs every one of them over each of its sequences; a calibration's attention curves are indexed by
// the FLOPs of one head over one sequence (docs/calibration.md).
[[nodiscard]] int attention_heads_per_call(const TransformerDims& dims, int tp, const LlmParallelism& parallel);

// The share of an attention core's forward FLOPs that Transformer Engine's CP calls compute over keys
// they see whole, without a mask (context_parallel.py, TE 2.x, causal attention): the ring's P − 1
// off-diagonal steps of its P, (P − 1) / P; all_gather's two calls, each a local chunk (of 2·CP) against
// the gathered keys up to its own end under a bottom-right causal mask, in which every key chunk before
// the query chunk's own is unmasked, (2·CP − 1) / (2·CP); a2a (one causal call over the whole sequence)
// and no CP, 0. The rest is causal: the diagonal blocks.
[[nodiscard]] double unmasked_attention_share(const LlmParallelism& parallel);

// Why TE cannot run `comm` with CP `cp` on TP `tp` (a2a: the query or key/value heads per tensor rank
// not divisible by CP; a2a+p2p, whose a2a groups are `a2a` ranks: `a2a` not dividing CP, or the heads
// not divisible by `a2a`); empty if it can.
[[nodiscard]] std::string context_comm_problem(const TransformerDims& dims, ContextComm comm, int tp, int cp,
                                               int a2a = 1);

// One of the exposed CP collectives of one attention layer and pass (all_gather, a2a, or a2a+p2p's
// all-to-alls; none for p2p, whose exchanges are the ring's phases), as NCCL sizes them: an all-gather's
// output, a reduce-scatter's input, an all-to-all's input per GPU (the rank's own s/CP tokens, whatever
// the group); `calls` NCCL calls.
struct ContextExchange {
  CollectiveKind kind = CollectiveKind::all_gather;
  Bytes size{0};
  int calls = 0;
};
[[nodiscard]] std::vector<ContextExchange> context_exchanges(const TransformerDims& dims, ContextComm comm,
                                                             int micro_batch, int tp, int cp, bool backward);

// What cp_comm_type all_gather holds beside the kept activations while one attention layer's core
// runs (zero for p2p and a2a): 2·CP local K/V chunks, as above. One layer at a time, freed after it.
[[nodiscard]] Bytes context_gather_buffer_bytes(const TransformerDims& dims, ContextComm comm, int micro_batch, int tp,
                                                int cp);

// FSDP, for the parameters of a layer range: the all-gather's output (each at the weight bytes the
// recipe gathers) and, backward, the reduce-scatter's input (their BF16 gradients), as NCCL sizes them.
struct FsdpTraffic {
  Bytes all_gather{0};
  Bytes reduce_scatter{0};
};
[[nodiscard]] FsdpTraffic fsdp_traffic(double parameters, const PrecisionRecipe& recipe, bool backward);

// MoE layers (routed experts' fc1) among the layers [begin, end).
[[nodiscard]] int moe_layers_in_range(const LayerModel& model, std::size_t begin, std::size_t end);
// Attention cores among the layers [begin, end).
[[nodiscard]] int attention_layers_in_range(const LayerModel& model, std::size_t begin, std::size_t end);

// Parameters (fp32-counted parameter_bytes / 4) of the routed experts among `layers`, and of the rest.
struct ParameterSplit {
  double dense = 0;
  double experts = 0;
};
[[nodiscard]] ParameterSplit parameter_split(const LayerModel& model, std::size_t begin, std::size_t end);

// One GPU's model states for `parameters` (its share: experts already divided by EP) at `per` bytes per
// parameter. `shards` ranks (a stage's data-parallel × context ranks; 1 without the distributed
// optimizer or FSDP) divide the dense parameters' optimizer state, and with `fsdp` their weights and
// gradients too; the routed experts' states are divided over the expert-data-parallel ranks instead,
// the stage's GPUs (shards · tp) over EP (expert tensor parallelism 1): Megatron-Core builds the experts'
// gradient buffers and optimizer shards on the expert data-parallel group (core_dev_r0.15.0
// parallel_state.py, get_expert_data_parallel_group; distributed/distributed_data_parallel.py,
// expert_parallel_buffers), which EP = all of a stage's GPUs leaves at one rank. An FP8 weight's
// transpose (per.weight_transpose) is held beside whole weights; FSDP's shard has none.
struct ModelStates {
  Bytes weights{0};
  Bytes gradients{0};
  Bytes optimizer_state{0};
  [[nodiscard]] Bytes total() const { return weights + gradients + optimizer_state; }
};
[[nodiscard]] ModelStates llm_model_states(const ParameterSplit& parameters, const BytesPerParameter& per,
                                           double shards, int tp, int ep, bool fsdp);

// The recomputation modules by their Megatron-Core names (core_attn, layernorm, mla_up_proj, moe_act,
// mlp, moe, shared_experts), in RecomputeModule bit order.
[[nodiscard]] std::vector<std::string> recompute_module_names();
[[nodiscard]] std::optional<RecomputeModule> recompute_module_from_name(std::string_view name);
// Megatron-Core's selective recomputation of `modules` (RecomputeModule bits; core_dev_r0.15.0,
// transformer_layer.py, multi_latent_attention.py, moe/experts.py): each layer in one of them runs its
// forward again in its backward (its forward FLOPs and traffic added to the backward's), and each
// layer's kept activations lose what the modules free (Layer::recompute_frees, set by the zoo):
//  - mlp, moe, shared_experts, core_attn (tensor_parallel.checkpoint): the module keeps its input
//    only; the tensors saved inside it are freed;
//  - layernorm, moe_act, mla_up_proj (CheckpointWithoutOutput): the module keeps its input, and its
//    output is discarded once the consumer has run (discard_output_and_register_recompute), so the
//    consumer's saved copy of it is freed (the pre-MLP norm's output the router keeps; the activation's
//    output fc2 keeps; the up-projected Q, K, V the attention core keeps).
// The traffic and the pipeline cuts stay as they were: recomputation changes what waits, not what moves.
[[nodiscard]] LayerModel recompute_modules(const LayerModel& model, std::uint8_t modules);

// Megatron-Core's cpu_offloading with cpu_offloading_num_layers = `layers` (activations only;
// core_dev_r0.15.0 transformer_block.py → Transformer Engine 2.9's get_cpu_offload_context,
// cpu_offload.py): the tensors the first `layers` transformer blocks (model_blocks) save for the
// backward wait in pinned host memory, so a GPU holds the other blocks' activations ("activation
// memory usage is equal to (num_layers − num_offloaded_layers) · T"). Those layers keep nothing on the
// GPU; what they kept moves to Layer::offloaded_bytes, the size of their copies, which the pipeline
// lowering places (offload_windows). Traffic and cuts unchanged. Megatron allows it without a
// pipeline only (transformer_config.py) and never for the last block.
[[nodiscard]] LayerModel offload_activations(const LayerModel& model, int layers);

// When Transformer Engine waits for the copies of `offloaded` of `blocks` blocks (AsyncDoubleBuffer-
// GroupOffloadHandler's layer_window_map, TE 2.9 cpu_offload.py): entry i is the block after whose
// forward the compute stream waits for block i's device-to-host copy and issues block i + 1's, and
// before whose backward it waits for block i + 1's host-to-device copy and issues block i's. The
// blocks split into `offloaded` windows of blocks / offloaded blocks, the first blocks % offloaded one
// longer; the last entry is the last block. Block 0's copy is issued after block 0's forward, and block
// 0's backward waits for its reload. So each copy has one window's compute to hide under:
// blocks / offloaded blocks (Llama 3 70B, 80 blocks: 2 with 40 offloaded, 4 with 20), block 0's one
// block less.
[[nodiscard]] std::vector<int> offload_windows(int blocks, int offloaded);

// One GPU's share under CP: every layer's per-sample FLOPs, traffic, kept activations and GEMM rows
// divided by `cp` (weights unchanged).
[[nodiscard]] LayerModel shard_for_context_parallel(const LayerModel& model, int cp);
// One GPU's share of `model` under all of them: tensor parallelism (tensor_parallel.hpp), then context
// and expert parallelism, then the recomputation modules and the activation offload.
[[nodiscard]] LayerModel shard_for_llm(const LayerModel& model, const TensorParallelOptions& tensor,
                                       const LlmParallelism& parallel, std::uint8_t modules);

// One GPU's share under EP: the routed experts' weights divided by `ep`, their rows per local expert
// multiplied by it (T·k·EP/E), their work, traffic and kept activations scaled by the routing's load.
[[nodiscard]] LayerModel shard_for_expert_parallel(const LayerModel& model, int ep, const MoeRouting& routing);

}  // namespace dnnsim
