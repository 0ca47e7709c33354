// Expert, context and fully sharded data parallelism and the FP8 recipes (models/dnn/llm_parallel.hpp,
// precision_recipe.hpp): each expected value is derived by hand in its comment.
#include "models/dnn/llm_parallel.hpp"

#include <gtest/gtest.h>

#include "models/dnn/zoo.hpp"
#include "models/hardware/catalog.hpp"

namespace dnnsim {
namespace {

LayerModel make(const std::string& name, int seq = 0) {
  ModelOptions options;
  options.seq = seq;
  return builtin_models().at(name).value(options);
}

std::size_t index_of(const LayerModel& model, const std::string& name) {
  for (std::size_t l = 0; l < model.layers.size(); ++l)
    if (model.layers[l].name == name) return l;
  return model.layers.size();
}

// DeepSeek-V3 on GB200 (the 25.11 row): MBS 1, s = 4,096, TP 1, CP 1, k = 8, h = 7,168. Each GPU's 4,096
// tokens go to 8 experts each: the dispatch sends 4,096 · 8 · 7,168 BF16 values = 469,762,048 bytes
// (1/EP of them to itself), and the combine as many back; forward and backward, 4 such per MoE layer.
TEST(ExpertParallel, AllToAllVolumePerMoeLayer) {
  const TransformerDims dims = *make("deepseek-v3").transformer;
  EXPECT_DOUBLE_EQ(expert_all_to_all_bytes(dims, 1, 1, false, 1, {}).value(), 4096.0 * 8 * 7168 * 2);
  // Qwen3-235B on H100: TP 2 with sequence parallelism, MBS 1: each rank routes s/TP = 2,048 tokens to
  // 8 experts of h = 4,096: 2,048 · 8 · 4,096 · 2 = 134,217,728 bytes.
  const TransformerDims qwen = *make("qwen3-235b-a22b").transformer;
  EXPECT_DOUBLE_EQ(expert_all_to_all_bytes(qwen, 1, 2, true, 1, {}).value(), 2048.0 * 8 * 4096 * 2);
  // An imbalance of 1.5 puts 1.5× the balanced tokens on the busiest GPU; a capacity factor of 1.25
  // pads every expert to 1.25× and drops the rest, whatever the imbalance.
  MoeRouting skewed;
  skewed.imbalance = 1.5;
  EXPECT_DOUBLE_EQ(expert_all_to_all_bytes(qwen, 1, 2, true, 1, skewed).value(), 1.5 * 2048 * 8 * 4096 * 2);
  skewed.capacity_factor = 1.25;
  EXPECT_DOUBLE_EQ(expert_all_to_all_bytes(qwen, 1, 2, true, 1, skewed).value(), 1.25 * 2048 * 8 * 4096 * 2);
}

// TE's all_gather and a2a cp_comm_types (llm_parallel.hpp), per attention layer and pass, one GPU.
// Llama 3 70B (64 query heads, 8 KV heads of 128), s = 8,192, MBS 2, TP 4. Its local K/V (one ring
// chunk) at CP 4 is 2 · 2,048 tokens · 8·256 / 4 · 2 bytes = 4 MiB (RingAttentionTrafficPerStep).
//  - all_gather, CP 4: forward one all-gather of K and V (2 calls) whose output is the CP = 4 chunks,
//    16 MiB, of which a GPU receives the other 3: 12 MiB, the ring's (CP − 1) chunks; backward the same
//    gather again and a reduce-scatter of the 16 MiB full-length dK/dV (2 calls), 12 MiB sent.
//  - a2a needs 64/4 = 16 query heads and 8/4 = 2 KV heads per tensor rank divisible by CP: CP 2 runs,
//    CP 4 does not (2 KV heads). At CP 2 a GPU holds 4,096 tokens: K/V 2 · 4,096 · 2·256 · 2 = 8 MiB,
//    Q and O 2 · 4,096 · 16 heads · (128 + 128) · 2 = 64 MiB: each pass's 4 all-to-alls take 72 MiB in,
//    of which (CP − 1)/CP, 36 MiB, leave the GPU. With MHA (q = k = v = o) that is Ulysses' 4·(CP − 1)/CP
//    of one activation; GQA's K/V are 8 MiB of the 72.
TEST(ContextParallel, AllGatherAndAllToAllTrafficPerLayer) {
  const TransformerDims dims = *make("llama3-70b", 8192).transformer;
  constexpr double kMiB = 1024.0 * 1024;
  EXPECT_TRUE(context_exchanges(dims, ContextComm::p2p, 2, 4, 4, true).empty());  // the ring's phases instead
  EXPECT_TRUE(context_exchanges(dims, ContextComm::all_gather, 2, 4, 1, true).empty());
  const auto forward = context_exchanges(dims, ContextComm::all_gather, 2, 4, 4, false);
  ASSERT_EQ(forward.size(), 1u);
  EXPECT_EQ(forward[0].kind, CollectiveKind::all_gather);
  EXPECT_DOUBLE_EQ(forward[0].size.value(), 16 * kMiB);
  EXPECT_EQ(forward[0].calls, 2);
  const auto backward = context_exchanges(dims, ContextComm::all_gather, 2, 4, 4, true);
  ASSERT_EQ(backward.size(), 2u);
  EXPECT_EQ(backward[0].kind, CollectiveKind::all_gather);
  EXPECT_DOUBLE_EQ(backward[0].size.value(), 16 * kMiB);
  EXPECT_EQ(backward[1].kind, CollectiveKind::reduce_scatter);
  EXPECT_DOUBLE_EQ(backward[1].size.value(), 16 * kMiB);
  EXPECT_EQ(backward[1].calls, 2);

  EXPECT_TRUE(context_comm_problem(dims, ContextComm::a2a, 4, 2).empty());
  EXPECT_NE(context_comm_problem(dims, ContextComm::a2a, 4, 4).find("key/value heads per tensor rank (2)"),
            std::string::npos);
  EXPECT_TRUE(context_comm_problem(dims, ContextComm::p2p, 4, 4).empty());
  for (bool pass : {false, true}) {
    const auto a2a = context_exchanges(dims, ContextComm::a2a, 2, 4, 2, pass);
    ASSERT_EQ(a2a.size(), 1u);
    EXPECT_EQ(a2a[0].kind, CollectiveKind::all_to_all);
    EXPECT_DOUBLE_EQ(a2a[0].size.value(), 72 * kMiB);
    EXPECT_EQ(a2a[0].calls, 4);
  }
  // DeepSeek-V3's MLA (128 heads, d_k = 192, d_v = 128, kv_width 128 · 320), s = 4,096, MBS 1, TP 2,
  // CP 4: 1,024 tokens with 64 heads each of Q (192), K (192), V (128) and O (128): 1,024 · 64 · 640 · 2
  // bytes in. Llama 3.1 405B at TP 8 has one KV head per rank: no CP > 1 runs a2a.
  const TransformerDims mla = *make("deepseek-v3").transformer;
  EXPECT_TRUE(context_comm_problem(mla, ContextComm::a2a, 2, 4).empty());
  EXPECT_DOUBLE_EQ(context_exchanges(mla, ContextComm::a2a, 1, 2, 4, false)[0].size.value(), 1024.0 * 64 * 640 * 2);
  EXPECT_FALSE(context_comm_problem(*make("llama3.1-405b", 8192).transformer, ContextComm::a2a, 8, 2).empty());
  LlmParallelism parallel;
  parallel.context = 4;
  parallel.context_comm = ContextComm::a2a;
  EXPECT_EQ(llm_parallel_problems(make("llama3-70b", 8192), parallel, 4, 16).size(), 1u);
}

// TE's a2a+p2p (hierarchical CP, llm_parallel.hpp) on Llama 3 70B at s = 8,192, MBS 2, TP 4, CP 8 as
// A = 2 a2a groups × P = 4 rings. The all-to-alls are a2a's on the rank's own s/CP = 1,024 tokens: K/V
// 2 · 1,024 · 2·256 · 2 = 2 MiB and Q, O 2 · 1,024 · 16 · 256 · 2 = 16 MiB, 18 MiB in 4 calls, of which
// (A − 1)/A leaves the GPU (the group is A). The heads per tensor rank (16 query, 2 KV) must divide by A,
// not by CP: A = 2 runs, A = 4 does not (2 KV heads), and A must divide CP (3 does not divide 8). The
// ring has P = 4 ranks; p2p's ring is all CP = 8, and a2a has none.
TEST(ContextParallel, HierarchicalA2aP2p) {
  const TransformerDims dims = *make("llama3-70b", 8192).transformer;
  constexpr double kMiB = 1024.0 * 1024;
  const auto a2a = context_exchanges(dims, ContextComm::a2a_p2p, 2, 4, 8, true);
  ASSERT_EQ(a2a.size(), 1u);
  EXPECT_EQ(a2a[0].kind, CollectiveKind::all_to_all);
  EXPECT_DOUBLE_EQ(a2a[0].size.value(), 18 * kMiB);
  EXPECT_EQ(a2a[0].calls, 4);
  EXPECT_TRUE(context_comm_problem(dims, ContextComm::a2a_p2p, 4, 8, 2).empty());
  EXPECT_NE(context_comm_problem(dims, ContextComm::a2a_p2p, 4, 8, 4).find("key/value heads per tensor rank (2)"),
            std::string::npos);
  EXPECT_NE(context_comm_problem(dims, ContextComm::a2a_p2p, 4, 8, 3).find("size (3) to divide context_parallel 8"),
            std::string::npos);
  EXPECT_FALSE(context_comm_problem(dims, ContextComm::a2a, 4, 8).empty());  // flat a2a over 8 cannot
  LlmParallelism parallel;
  parallel.context = 8;
  parallel.context_comm = ContextComm::a2a_p2p;
  parallel.context_a2a = 2;
  EXPECT_EQ(context_ring_size(parallel), 4);
  EXPECT_TRUE(llm_parallel_problems(make("llama3-70b", 8192), parallel, 4, 32).empty());
  parallel.context_comm = ContextComm::p2p;
  EXPECT_EQ(context_ring_size(parallel), 8);
  parallel.context_comm = ContextComm::a2a;
  EXPECT_EQ(context_ring_size(parallel), 1);
}

// The share of a causal core's forward FLOPs over unmasked keys, by chunks: the sequence in 2·CP equal
// chunks, a query chunk against one key chunk is one unit, the diagonal half a unit; a rank holds chunks
// r and 2·CP − 1 − r, (r + 1/2) + (2·CP − 1 − r + 1/2) = 2·CP units.
//  - p2p at CP 4: step 0 (own K/V, causal) is 2 units with its two halves on the diagonal, the 3 other
//    steps 2 full units each: 6 of 8 units unmasked, 3/4 = (P − 1)/P.
//  - all_gather at CP 4: every unit but the two diagonal halves is unmasked: 7 of 8 = (2·CP − 1)/(2·CP).
//  - a2a+p2p [2, 2] at CP 4: the ring has P = 2 ranks (the a2a splits heads, not tokens): 1/2.
//  - a2a: one causal call over the whole sequence, no CP: 0.
TEST(ContextParallel, UnmaskedShareOfTheForwardCore) {
  LlmParallelism parallel;
  EXPECT_DOUBLE_EQ(unmasked_attention_share(parallel), 0.0);
  parallel.context = 4;
  EXPECT_DOUBLE_EQ(unmasked_attention_share(parallel), 0.75);
  parallel.context_comm = ContextComm::all_gather;
  EXPECT_DOUBLE_EQ(unmasked_attention_share(parallel), 0.875);
  parallel.context_comm = ContextComm::a2a_p2p;
  parallel.context_a2a = 2;
  EXPECT_DOUBLE_EQ(unmasked_attention_share(parallel), 0.5);
  parallel.context_comm = ContextComm::a2a;
  EXPECT_DOUBLE_EQ(unmasked_attention_share(parallel), 0.0);
}

// The query heads of one attention call on a rank (Llama 3 8B: 32 heads) at TP 2: the ring's and
// all_gather's calls run the tensor rank's 16 over chunks of the sequence; a2a's all-to-all hands each
// of CP 8 ranks the whole sequence of 16 / 8 = 2; a2a+p2p's groups of A = 2 ranks, 8.
TEST(ContextParallel, HeadsOfOneAttentionCall) {
  const TransformerDims dims{.hidden = 4096, .heads = 32, .kv_heads = 8, .kv_width = 2048, .seq = 8192};
  LlmParallelism parallel;
  EXPECT_EQ(attention_heads_per_call(dims, 1, parallel), 32);
  EXPECT_EQ(attention_heads_per_call(dims, 2, parallel), 16);
  parallel.context = 8;
  EXPECT_EQ(attention_heads_per_call(dims, 2, parallel), 16);
  parallel.context_comm = ContextComm::all_gather;
  EXPECT_EQ(attention_heads_per_call(dims, 2, parallel), 16);
  parallel.context_comm = ContextComm::a2a;
  EXPECT_EQ(attention_heads_per_call(dims, 2, parallel), 2);
  parallel.context_comm = ContextComm::a2a_p2p;
  parallel.context_a2a = 2;
  EXPECT_EQ(attention_heads_per_call(dims, 2, parallel), 8);
}

// The ring's merges (ring_attention_corrections, TE v2.9's AttnFuncWithCPAndKVP2P) on Llama 3 70B at
// s = 8,192, MBS 1, TP 8, CP 2: per token on a GPU the output and dQ are 64/8 heads · 128 = 1,024 BF16
// values, dK + dV 8/8 KV heads · 256 = 256, the log-sum-exps 8 fp32; s/CP = 4,096 tokens.
//  - forward: both ranks scale step 0 into out (read O, write O: 4,096 B; two log-sum-exps read: 64 B);
//    rank 1's step 1 comes from below, all queries (read out and O, write out: 6,144 B, + 64 B), rank 0's
//    from above, half of that (3,072 + 32 B). Rank 1 is the slowest: 10,368 B per token, 42,467,328 B,
//    in 2 kernels.
//  - backward (copy_ 2 and add_ 3 accesses per element, 2 B each): rank 0 copies the second half of dQ
//    (512 · 2) and all of dK/dV (256 · 2), then copies dQ's first half and adds its second (512 · 2 +
//    512 · 3) and on the diagonal adds dK/dV's first half and copies their second (128 · 3 + 128 · 2):
//    4,736 accesses, 9 kernels; rank 1 copies all of dQ (1,024 · 2) and dK/dV's first half (128 · 2),
//    then adds all of each (1,024 · 3 + 256 · 3): 6,144 accesses, 12,288 B per token, 50,331,648 B in
//    6 kernels, the slowest.
// DeepSeek-V3's MLA (128 heads, d_k 192, d_v 128; TP 1, s = 4,096, CP 2: 2,048 tokens): the forward's
// output is 128 · 128 = 16,384 values per token, so rank 1 moves 10 · 16,384 + 16 · 128 = 165,888 B per
// token, 339,738,624 B; dQ is 128 · 192 = 24,576 and dK + dV 128 · 320 = 40,960, rank 1's backward 5 dQ +
// 4 dK/dV = 286,720 accesses (rank 0's 3.5 + 4.5: 270,336), 1,174,405,120 B. At CP 4 (2,048 tokens)
// rank 3 meets every step from below: forward 4,160 + 3 · 6,208 = 22,784 B per token in 4 kernels;
// backward dQ copied whole then added 3 times (2 + 3 · 3 = 11 · 1,024 accesses), dK/dV's first half
// copied, added twice, then all added (1 + 2 · 1.5 + 3 = 7 · 256): 13,056 accesses in 12 kernels (ranks 0
// to 2: 9,344, 10,624 and 11,776). At CP 8 (1,024 tokens) rank 7 likewise: forward 4,160 + 7 · 6,208 =
// 47,616 B per token in 8 kernels; backward dQ 2 + 7 · 3 = 23 · 1,024 and dK/dV 1 + 6 · 1.5 + 3 = 13 · 256
// accesses, 26,880 (rank 6: 21.5 · 1,024 + 14 · 256 = 25,600), in 8 + 2 · 8 = 24 kernels. No ring, no merges.
TEST(ContextParallel, RingMergesPerLayerOnTheSlowestRank) {
  const TransformerDims llama = *make("llama3-70b", 8192).transformer;
  const RingCorrections forward = ring_attention_corrections(llama, 1, 8, 2, 2, false);
  EXPECT_DOUBLE_EQ(forward.bytes.value(), 10368.0 * 4096);
  EXPECT_EQ(forward.kernels, 2);
  const RingCorrections backward = ring_attention_corrections(llama, 1, 8, 2, 2, true);
  EXPECT_DOUBLE_EQ(backward.bytes.value(), 12288.0 * 4096);
  EXPECT_EQ(backward.kernels, 6);
  const TransformerDims mla = *make("deepseek-v3").transformer;
  EXPECT_DOUBLE_EQ(ring_attention_corrections(mla, 1, 1, 2, 2, false).bytes.value(), 165888.0 * 2048);
  EXPECT_DOUBLE_EQ(ring_attention_corrections(mla, 1, 1, 2, 2, true).bytes.value(), 286720.0 * 2 * 2048);
  const RingCorrections four = ring_attention_corrections(llama, 1, 8, 4, 4, true);
  EXPECT_DOUBLE_EQ(four.bytes.value(), 13056.0 * 2 * 2048);
  EXPECT_EQ(four.kernels, 12);
  EXPECT_DOUBLE_EQ(ring_attention_corrections(llama, 1, 8, 4, 4, false).bytes.value(), 22784.0 * 2048);
  const RingCorrections eight = ring_attention_corrections(llama, 1, 8, 8, 8, true);
  EXPECT_DOUBLE_EQ(eight.bytes.value(), 26880.0 * 2 * 1024);
  EXPECT_EQ(eight.kernels, 24);
  EXPECT_DOUBLE_EQ(ring_attention_corrections(llama, 1, 8, 8, 8, false).bytes.value(), 47616.0 * 1024);
  EXPECT_EQ(ring_attention_corrections(llama, 1, 8, 2, 1, true).kernels, 0);
}

// EP 64 divides DeepSeek-V3's 256 experts: each GPU holds 4 of every MoE layer's, and the grouped GEMM
// runs T·k·EP/E = 4,096 · 8 · 64 / 256 = 8,192 rows per local expert (balanced routing).
TEST(ExpertParallel, ShardsTheExpertsAndGroupsTheirRows) {
  const LayerModel model = make("deepseek-v3");
  const LayerModel share = shard_for_expert_parallel(model, 64, {});
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    if (model.layers[l].role != LayerRole::experts) continue;
    EXPECT_DOUBLE_EQ(share.layers[l].parameter_bytes.value(), model.layers[l].parameter_bytes.value() / 64);
    EXPECT_EQ(share.layers[l].matmuls.front().m, 8192);
    // FLOPs per GPU unchanged: every GPU still computes its tokens' 8 experts.
    EXPECT_DOUBLE_EQ(share.layers[l].forward_flops.value(), model.layers[l].forward_flops.value());
  }
  EXPECT_EQ(moe_layers_in_range(model, 0, model.layers.size()), 58);  // 61 blocks, the first 3 dense
  LlmParallelism parallel;
  parallel.expert = 48;  // 256 % 48 ≠ 0
  EXPECT_FALSE(llm_parallel_problems(model, parallel, 1, 64 * 3).empty());
  parallel.expert = 64;
  EXPECT_TRUE(llm_parallel_problems(model, parallel, 1, 64).empty());
  EXPECT_FALSE(llm_parallel_problems(model, parallel, 1, 96).empty());  // 64 ∤ a stage of 96 GPUs
}

// Llama 3.1 405B on 1,024 H100 (TP 8, CP 2, MBS 1, s = 8,192): each CP rank holds 4,096 tokens; one ring
// step sends a chunk's K and V: 4,096 tokens · 8 KV heads · (128 + 128) / TP 8 (one KV head per tensor
// rank) · 2 bytes (BF16: the K/V stay BF16 under the FP8 recipes, whose attention is not FP8) =
// 2,097,152 bytes. TE's AttnFuncWithCPAndKVP2P: forward CP − 1 = 1 step of one chunk; backward CP = 2
// steps, step 0 the K/V (1 chunk), the last the dK/dV (1 chunk).
TEST(ContextParallel, RingAttentionTrafficPerStep) {
  const TransformerDims dims = *make("llama3.1-405b", 8192).transformer;
  EXPECT_DOUBLE_EQ(ring_attention_step_bytes(dims, 1, 8, 2).value(), 4096.0 * 8 * 256 / 8 * 2);
  const auto shape = [](const std::vector<RingPhase>& phases) {
    std::vector<std::pair<int, int>> result;
    for (const RingPhase& phase : phases) result.emplace_back(phase.steps, phase.chunks);
    return result;
  };
  using Phases = std::vector<std::pair<int, int>>;
  EXPECT_EQ(shape(ring_attention_phases(1, true)), Phases{});
  EXPECT_EQ(shape(ring_attention_phases(2, false)), (Phases{{1, 1}}));
  EXPECT_EQ(shape(ring_attention_phases(2, true)), (Phases{{2, 1}}));
  EXPECT_EQ(shape(ring_attention_phases(4, false)), (Phases{{3, 1}}));
  // CP 4 backward: steps 0 and 3 one chunk (K/V out, dK/dV home), steps 1 and 2 both (2 chunks).
  EXPECT_EQ(shape(ring_attention_phases(4, true)), (Phases{{2, 1}, {2, 2}}));
  // Per layer: (CP − 1) chunks forward and 2·(CP − 1) backward, for every CP.
  for (int cp : {2, 3, 4, 8}) {
    for (bool backward : {false, true}) {
      int chunks = 0;
      for (const RingPhase& phase : ring_attention_phases(cp, backward)) chunks += phase.steps * phase.chunks;
      EXPECT_EQ(chunks, (backward ? 2 : 1) * (cp - 1)) << "CP " << cp;
    }
  }
  // Llama 3 70B (64 query heads in GQA groups of 8: 8 KV heads of 128), s = 8,192, MBS 2, TP 4, CP 4:
  // a chunk is 2 · 2,048 tokens · 8·256 / 4 · 2 bytes = 4 MiB; per layer forward 3 · 4 MiB = 12 MiB,
  // backward 6 · 4 MiB = 24 MiB.
  const TransformerDims llama70 = *make("llama3-70b", 8192).transformer;
  EXPECT_EQ(llama70.kv_heads, 8);
  EXPECT_DOUBLE_EQ(ring_attention_step_bytes(llama70, 2, 4, 4).value(), 4.0 * 1024 * 1024);
  // Qwen3 (4 KV heads) at TP 8: the heads are replicated, not split below one per rank: 4·256 / 4.
  const TransformerDims qwen = *make("qwen3-235b-a22b").transformer;
  EXPECT_DOUBLE_EQ(ring_attention_step_bytes(qwen, 1, 8, 2).value(), 2048.0 * 4 * 256 / 4 * 2);
  // CP divides the work per sample: 1/2 of every layer's FLOPs and of the kept activations.
  const LayerModel model = make("llama3-8b", 8192);
  const LayerModel share = shard_for_context_parallel(model, 2);
  EXPECT_DOUBLE_EQ(share.layers[3].forward_flops.value(), model.layers[3].forward_flops.value() / 2);
  EXPECT_DOUBLE_EQ(share.layers[3].activation_bytes.value(), model.layers[3].activation_bytes.value() / 2);
  LlmParallelism parallel;
  parallel.context = 3;  // 8,192 tokens do not split into 6 equal chunks
  EXPECT_FALSE(llm_parallel_problems(model, parallel, 1, 8).empty());
}

// Llama 3 8B under Megatron-FSDP with FP8 parameters (fp8_param_gather): one block has
// 4,096·(4,096 + 2·1,024) + 4,096·4,096 + 3·4,096·14,336 + 2·4,096 = 218,112,000 parameters; the forward
// gathers them at 1 byte each, the backward again and reduce-scatters their BF16 gradients (2 bytes).
TEST(Fsdp, GatherAndReduceScatterBytesPerLayer) {
  const double block = 4096.0 * (4096 + 2 * 1024) + 4096.0 * 4096 + 3.0 * 4096 * 14336 + 2 * 4096;
  const LayerModel model = make("llama3-8b");
  const std::size_t first = index_of(model, "block0.attn.norm");
  const std::size_t last = index_of(model, "block1.attn.norm");
  EXPECT_DOUBLE_EQ(parameter_split(model, first, last).dense, block);
  PrecisionRecipe fp8{LowPrecision::fp8_current_scaling};
  const FsdpTraffic forward = fsdp_traffic(block, fp8, false);
  EXPECT_DOUBLE_EQ(forward.all_gather.value(), block * 1);
  EXPECT_DOUBLE_EQ(forward.reduce_scatter.value(), 0);
  const FsdpTraffic backward = fsdp_traffic(block, fp8, true);
  EXPECT_DOUBLE_EQ(backward.all_gather.value(), block * 1);
  EXPECT_DOUBLE_EQ(backward.reduce_scatter.value(), block * 2);
  EXPECT_DOUBLE_EQ(fsdp_traffic(block, PrecisionRecipe{}, false).all_gather.value(), block * 2);  // BF16
}

// Bytes per parameter before sharding: BF16 2 + 2 + 12 (fp32 master, Adam m, v); FP8 current scaling's
// parameters are FP8: 1 + 2 + 12; MXFP8 keeps a rowwise and a columnwise copy with an 8-bit scale per
// 32: 2·(1 + 1/32) = 2.0625 + 2 + 12; the precision-aware optimizer keeps m and v in BF16: 4 + 2 + 2.
// Per GPU with the distributed optimizer over d ranks: w + g + 12/d.
TEST(PrecisionRecipe, MemoryPerParameter) {
  EXPECT_DOUBLE_EQ(PrecisionRecipe{}.bytes_per_parameter().total(), 16.0);
  EXPECT_DOUBLE_EQ(PrecisionRecipe{LowPrecision::fp8_current_scaling}.bytes_per_parameter().total(), 15.0);
  EXPECT_DOUBLE_EQ(PrecisionRecipe{LowPrecision::mxfp8}.bytes_per_parameter().total(), 16.0625);
  const BytesPerParameter aware = PrecisionRecipe{LowPrecision::fp8_current_scaling, true}.bytes_per_parameter();
  EXPECT_DOUBLE_EQ(aware.weights, 1.0);
  EXPECT_DOUBLE_EQ(aware.optimizer_state, 8.0);
  // Llama 3 70B (70.6e9 parameters) at FP8-CS over 64 data-parallel ranks: 70.6e9 · (1 + 2 + 12/64) =
  // 225 GB per GPU without FSDP — why the table's GB200 row shards it (FSDP 64: 70.6e9 · 15 / 64 = 16.5 GB).
  const double parameters = 70.6e9;
  const BytesPerParameter fp8 = PrecisionRecipe{LowPrecision::fp8_current_scaling}.bytes_per_parameter();
  EXPECT_NEAR(parameters * (fp8.weights + fp8.gradients + fp8.optimizer_state / 64) / 1e9, 225.0, 0.1);
  EXPECT_NEAR(parameters * fp8.total() / 64 / 1e9, 16.5, 0.1);
  // As a GPU holds them: FP8-CS keeps each weight's transpose beside it on H100 (TN-only FP8 GEMMs),
  // 1 + 1 + 2 + 12 = 16; not on B200 (15), and MXFP8 nowhere (its columnwise copy is among its weights).
  const GpuSpec& h100 = *HardwareCatalog::builtin().find_gpu("H100-SXM");
  const GpuSpec& b200 = *HardwareCatalog::builtin().find_gpu("B200");
  const PrecisionRecipe cs{LowPrecision::fp8_current_scaling};
  EXPECT_DOUBLE_EQ(cs.resident_bytes_per_parameter(h100).weight_transpose, 1.0);
  EXPECT_DOUBLE_EQ(cs.resident_bytes_per_parameter(h100).total(), 16.0);
  EXPECT_DOUBLE_EQ(cs.resident_bytes_per_parameter(b200).total(), 15.0);
  EXPECT_DOUBLE_EQ(PrecisionRecipe{LowPrecision::mxfp8}.resident_bytes_per_parameter(b200).total(), 16.0625);
  EXPECT_DOUBLE_EQ(PrecisionRecipe{}.resident_bytes_per_parameter(h100).total(), 16.0);
}

// FP8 runs the linears and experts at FP8 with their quantization traffic: current scaling reads a
// GEMM's input twice (amax, cast) and writes two FP8 copies on H100 (rowwise and transposed): 6 bytes
// per element; on B200, whose FP8 GEMMs read a transposed operand, the rowwise copy only: 5 bytes;
// MXFP8 one read and two copies with a scale per 32 on either: 2 + 2·(1 + 1/32) = 4.0625. Llama 3
// 8B's QKV projection forward quantizes its input, s · h = 8,192 · 4,096 elements per sequence.
TEST(PrecisionRecipe, QuantizesTheLinearsOnly) {
  const LayerModel model = make("llama3-8b", 8192);
  const Layer* qkv = nullptr;
  const Layer* core = nullptr;
  for (const Layer& layer : model.layers) {
    if (layer.name == "block0.attn.qkv") qkv = &layer;
    if (layer.name == "block0.attn.core") core = &layer;
  }
  ASSERT_NE(qkv, nullptr);
  ASSERT_NE(core, nullptr);
  const PrecisionRecipe cs{LowPrecision::fp8_current_scaling};
  const PrecisionRecipe mx{LowPrecision::mxfp8};
  EXPECT_EQ(cs.dtype_of(*qkv, Dtype::bf16), Dtype::fp8);
  EXPECT_EQ(mx.dtype_of(*qkv, Dtype::bf16), Dtype::mxfp8);  // block-scaled GEMMs, their own rates
  EXPECT_EQ(cs.dtype_of(*core, Dtype::bf16), Dtype::bf16);  // the attention core stays BF16
  EXPECT_EQ(mx.dtype_of(*core, Dtype::bf16), Dtype::bf16);
  EXPECT_EQ(PrecisionRecipe{}.dtype_of(*qkv, Dtype::bf16), Dtype::bf16);
  const GpuSpec& h100 = *HardwareCatalog::builtin().find_gpu("H100-SXM");
  const GpuSpec& b200 = *HardwareCatalog::builtin().find_gpu("B200");
  EXPECT_DOUBLE_EQ(cs.scaling_bytes(*qkv, false, h100).value(), 8192.0 * 4096 * 6);
  EXPECT_DOUBLE_EQ(cs.scaling_bytes(*qkv, false, b200).value(), 8192.0 * 4096 * 5);
  EXPECT_DOUBLE_EQ(mx.scaling_bytes(*qkv, false, b200).value(), 8192.0 * 4096 * 4.0625);
  // Backward: the output gradient, s × (a + 2g)·d = 8,192 × 6,144.
  EXPECT_DOUBLE_EQ(cs.scaling_bytes(*qkv, true, h100).value(), 8192.0 * 6144 * 6);
  EXPECT_DOUBLE_EQ(cs.scaling_bytes(*core, false, h100).value(), 0.0);
  // A task running a whole block reports the dtype of most of its FLOPs (its MFU's peak). Llama 3 8B's
  // block, per token forward: linears 2 · 4,096 · (6,144 + 4,096 + 28,672 + 14,336) = 436 MFLOP at
  // FP8, the core 2 · 2 · 32 · 4,096 · 128 = 67 MFLOP at BF16 (causal: 4,096 keys on average): FP8.
  std::size_t first = model.layers.size(), last = 0;
  for (std::size_t l = 0; l < model.layers.size(); ++l)
    if (model.layers[l].name.starts_with("block0.")) first = std::min(first, l), last = l + 1;
  EXPECT_EQ(cs.dominant_dtype(model.layers, first, last, Dtype::bf16), Dtype::fp8);
  EXPECT_EQ(mx.dominant_dtype(model.layers, first, last, Dtype::bf16), Dtype::mxfp8);
  EXPECT_EQ(PrecisionRecipe{}.dominant_dtype(model.layers, first, last, Dtype::bf16), Dtype::bf16);
  // The core alone is BF16 under any recipe.
  const auto core_index = static_cast<std::size_t>(core - model.layers.data());
  EXPECT_EQ(cs.dominant_dtype(model.layers, core_index, core_index + 1, Dtype::bf16), Dtype::bf16);
  GpuSpec hopper;
  hopper.name = "H100-SXM";
  hopper.peak_fp8 = FlopsPerSecond(1979e12);
  EXPECT_TRUE(cs.unsupported_on(hopper).empty());
  EXPECT_FALSE(mx.unsupported_on(hopper).empty());  // no MX formats on Hopper
  GpuSpec ampere;
  ampere.name = "A100-80GB-SXM";
  EXPECT_FALSE(cs.unsupported_on(ampere).empty());  // no FP8 at all
}

// What the layers named `prefix`… keep per sequence, in bytes.
double kept(const LayerModel& model, const std::string& prefix) {
  double bytes = 0;
  for (const Layer& layer : model.layers)
    if (layer.name.starts_with(prefix)) bytes += layer.activation_bytes.value();
  return bytes;
}

LayerModel share_of(const LayerModel& model, const LlmParallelism& parallel, std::uint8_t modules = 0) {
  TensorParallelOptions tensor;
  tensor.degree = 1;
  return shard_for_llm(model, tensor, parallel, modules);
}

std::uint8_t modules(std::initializer_list<RecomputeModule> list) {
  std::uint8_t bits = 0;
  for (RecomputeModule module : list) bits |= static_cast<std::uint8_t>(module);
  return bits;
}

// Llama 3 70B (h = 8,192, 64 query and 8 key/value heads of 128, FFN 28,672, gated), one block per
// token, in elements: the attention norm's input h and the QKV's input h (Transformer Engine's fused
// LayerNormLinear keeps both), the core's Q, K, V (8,192 + 2 · 1,024), O (8,192) and fp32 log-sum-exp
// (2 · 64), the MLP norm's input h and fc1's input h, the SwiGLU's input 2 · 28,672 and fc2's input
// 28,672: 4 · 8,192 + 18,560 + 57,344 + 28,672 = 137,344, 274,688 bytes in BF16.
// Recomputing core_attn, layernorm, moe_act and mlp (Megatron-Core 0.15, transformer_layer.py): the
// checkpointed core frees its log-sum-exp only (Q, K, V are the checkpoint's inputs, O the output
// projection's input); layernorm does nothing (both norms are fused into TE linears: IdentityOp), nor
// moe_act (no experts); the checkpointed MLP keeps its input (the norm's) and frees fc1's, the
// activation's and fc2's: 128 + 8,192 + 57,344 + 28,672 = 94,336 elements freed, 43,008 kept.
TEST(RecomputeModules, FreeWhatMegatronDiscards) {
  const LayerModel model = make("llama3-70b", 8192);
  const double s = 8192;
  EXPECT_DOUBLE_EQ(kept(model, "block0."), s * 137344 * 2);
  const LayerModel recomputed =
      recompute_modules(model, modules({RecomputeModule::core_attn, RecomputeModule::layernorm,
                                        RecomputeModule::moe_act, RecomputeModule::mlp}));
  EXPECT_DOUBLE_EQ(kept(recomputed, "block0."), s * 43008 * 2);
  // What moves and what crosses a pipeline cut stay as they were.
  const std::size_t fc2 = index_of(model, "block0.mlp.fc2");
  EXPECT_DOUBLE_EQ(recomputed.layers[fc2].forward_traffic().value(), model.layers[fc2].forward_traffic().value());
  EXPECT_DOUBLE_EQ(recomputed.layers[fc2].bytes_across_cut().value(), model.layers[fc2].bytes_across_cut().value());
  // layernorm alone frees nothing in a dense Llama block.
  EXPECT_DOUBLE_EQ(kept(recompute_modules(model, modules({RecomputeModule::layernorm})), "block0."), s * 137344 * 2);
}

// DeepSeek-V3's MLA (128 heads, d_k = 128 + 64, d_v = 128): mla_up_proj discards the up-projected Q,
// K, V after the core ran (multi_latent_attention.py, qkv_up_checkpoint), so the core keeps O and the
// log-sum-exp only: per token 128 · 128 + 2 · 128 = 16,640 of its 128 · (192 + 192 + 128) + 16,640 =
// 82,176 elements. GPT-OSS (h = 2,880, top-4, expert FFN 2,880) with layernorm and moe_act, the H100
// recipe's: the router's copy of the pre-MLP norm's output (h) and fc2's copy of the activation's
// output (4 · 2,880) go: 14,400 elements per token and MoE block.
TEST(RecomputeModules, CheckpointsWithoutOutputFreeTheConsumersCopy) {
  const LayerModel deepseek = make("deepseek-v3", 4096);
  const std::size_t core = index_of(deepseek, "block3.attn.core");
  ASSERT_LT(core, deepseek.layers.size());
  EXPECT_DOUBLE_EQ(deepseek.layers[core].activation_bytes.value(), 4096.0 * 82176 * 2);
  const LayerModel up = recompute_modules(deepseek, modules({RecomputeModule::mla_up_proj}));
  EXPECT_NEAR(up.layers[core].activation_bytes.value(), 4096.0 * 16640 * 2, 1e-3);
  EXPECT_NEAR(kept(deepseek, "block3.") - kept(up, "block3."), 4096.0 * 65536 * 2, 1e-3);

  const LayerModel oss = make("gpt-oss-120b", 4096);
  const std::uint8_t h100 = modules({RecomputeModule::layernorm, RecomputeModule::moe_act});
  const LayerModel freed = recompute_modules(oss, h100);
  EXPECT_NEAR(kept(oss, "block0.") - kept(freed, "block0."), 4096.0 * 14400 * 2, 1e-3);
  // The same through one GPU's share under the H100 row's EP 8 (balanced routing: the same tokens).
  LlmParallelism parallel;
  parallel.expert = 8;
  EXPECT_NEAR(kept(share_of(oss, parallel), "block0.") - kept(share_of(oss, parallel, h100), "block0."),
              4096.0 * 14400 * 2, 1e-3);
}

// FP8 keeps each Transformer Engine linear's input as its 1-byte quantized copy (TE 2.9 linear.py,
// layernorm_linear.py): Llama 3 70B's block, per token, QKV 8,192, output projection 8,192 (its own
// copy of O beside the core's BF16 one), fc1 8,192, fc2 28,672 bytes, against BF16's 2 · (8,192 +
// 8,192 + 28,672) for the three that kept their input: 274,688 − 90,112 + 53,248 = 237,824 bytes.
// MXFP8 adds an E8M0 scale per 32: 53,248 / 32 = 1,664 more.
TEST(PrecisionRecipe, KeepsTheLinearsInputsQuantized) {
  const LayerModel model = make("llama3-70b", 8192);
  LlmParallelism parallel;
  parallel.precision.low = LowPrecision::fp8_current_scaling;
  EXPECT_DOUBLE_EQ(kept(share_of(model, parallel), "block0."), 8192.0 * 237824);
  parallel.precision.low = LowPrecision::mxfp8;
  EXPECT_DOUBLE_EQ(kept(share_of(model, parallel), "block0."), 8192.0 * 239488);
  parallel.precision.low = LowPrecision::none;
  EXPECT_DOUBLE_EQ(kept(share_of(model, parallel), "block0."), 8192.0 * 274688);
}

// cpu_offloading_num_layers 40 (the GB200 Llama 3 70B recipe): the first 40 of the 80 blocks keep
// nothing on the GPU, the others and the head what they kept; the traffic is unchanged.
TEST(ActivationOffload, TheFirstBlocksKeepNothingOnTheGpu) {
  const LayerModel model = make("llama3-70b", 8192);
  LlmParallelism parallel;
  parallel.offloaded_layers = 40;
  const LayerModel share = share_of(model, parallel);
  EXPECT_DOUBLE_EQ(kept(share, "block0."), 0.0);
  EXPECT_DOUBLE_EQ(kept(share, "block39."), 0.0);
  EXPECT_DOUBLE_EQ(kept(share, "block40."), kept(model, "block40."));
  EXPECT_DOUBLE_EQ(kept(share, "head"), kept(model, "head"));
  const std::size_t qkv = index_of(model, "block0.attn.qkv");
  EXPECT_DOUBLE_EQ(share.layers[qkv].forward_traffic().value(), model.layers[qkv].forward_traffic().value());
  double total = 0, offloaded = 0;
  for (int b = 0; b < 80; ++b) (b < 40 ? offloaded : total) += kept(model, "block" + std::to_string(b) + ".");
  EXPECT_NEAR(offloaded, total, 1e-6 * total);  // equal blocks: half of them leave
}

// What leaves the GPU is what its copies carry: each offloaded layer's kept bytes move to offloaded_bytes.
TEST(ActivationOffload, TheCopiesCarryWhatTheBlocksKept) {
  const LayerModel model = make("llama3-70b", 8192);
  LlmParallelism parallel;
  const LayerModel kept_on_gpu = share_of(model, parallel);
  parallel.offloaded_layers = 40;
  const LayerModel share = share_of(model, parallel);
  const std::vector<LayerRange> blocks = model_blocks(share);
  ASSERT_EQ(blocks.size(), 80u);
  for (std::size_t l = 0; l < share.layers.size(); ++l) {
    const bool offloaded = l >= blocks[0].begin && l < blocks[39].end;
    EXPECT_DOUBLE_EQ(share.layers[l].offloaded_bytes.value(),
                     offloaded ? kept_on_gpu.layers[l].activation_bytes.value() : 0.0)
        << share.layers[l].name;
  }
}

// Transformer Engine's layer_window_map (cpu_offload.py): window i ends at (L / N)·(i + 1) − 1, plus
// i + 1 for the first L mod N windows and L mod N after them. 80 blocks, 40 offloaded: 2i + 1 (1, 3,
// …, 79); 20 offloaded: 4i + 3; 10 blocks, 3 offloaded: 3 − 1 + 1 = 3, 6 − 1 + 1 = 6, 9 − 1 + 1 = 9;
// 5 blocks, 4 offloaded: 0 + 1, 1 + 1, 2 + 1, 3 + 1.
TEST(ActivationOffload, WindowsAreTransformerEnginesLayerWindowMap) {
  const std::vector<int> forty = offload_windows(80, 40);
  ASSERT_EQ(forty.size(), 40u);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(forty[static_cast<std::size_t>(i)], 2 * i + 1);
  const std::vector<int> twenty = offload_windows(80, 20);
  ASSERT_EQ(twenty.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(twenty[static_cast<std::size_t>(i)], 4 * i + 3);
  EXPECT_EQ(offload_windows(10, 3), (std::vector<int>{3, 6, 9}));
  EXPECT_EQ(offload_windows(5, 4), (std::vector<int>{1, 2, 3, 4}));
}

// The distributed optimizer shards the dense parameters' optimizer state over the stage's DP × CP ranks
// and the routed experts' over the expert data-parallel ranks, DP·CP·TP / EP. H100 GPT-OSS-like (a
// stage of 16 replicas, TP 1, EP 8; BF16 with the precision-aware optimizer: 2 + 2 + 8 bytes): 1e9
// dense parameters hold 1e9 · (2 + 2 + 8/16) = 4.5 GB, 4e9 expert parameters 4e9 · (2 + 2 + 8/2) =
// 32 GB (expert DP = 16/8 = 2). EP 64 over a stage of 64 GPUs (GB200 DeepSeek-V3) leaves the experts'
// state whole: 4e9 · 12 = 48 GB. FSDP divides all three states: 1e9 · 15 / 64 at FP8-CS. On H100 an
// FP8-CS weight has its transpose beside it: 1e9 · (1 + 1) of weights whole, but FSDP's shard has
// none (its gathered layers do): 1e9 / 64.
TEST(DistributedOptimizer, ShardsTheExpertsOverTheirOwnRanks) {
  const BytesPerParameter aware = PrecisionRecipe{LowPrecision::none, true}.bytes_per_parameter();
  EXPECT_DOUBLE_EQ(llm_model_states({1e9, 4e9}, aware, 16, 1, 8, false).total().value(), 4.5e9 + 32e9);
  EXPECT_DOUBLE_EQ(llm_model_states({0, 4e9}, aware, 64, 1, 64, false).optimizer_state.value(), 32e9);
  EXPECT_DOUBLE_EQ(llm_model_states({0, 4e9}, aware, 64, 1, 64, false).total().value(), 48e9);
  const BytesPerParameter fp8 = PrecisionRecipe{LowPrecision::fp8_current_scaling}.bytes_per_parameter();
  EXPECT_DOUBLE_EQ(llm_model_states({1e9, 0}, fp8, 64, 1, 1, true).total().value(), 1e9 * 15 / 64);
  const BytesPerParameter hopper = PrecisionRecipe{LowPrecision::fp8_current_scaling}.resident_bytes_per_parameter(
      *HardwareCatalog::builtin().find_gpu("H100-SXM"));
  EXPECT_DOUBLE_EQ(llm_model_states({1e9, 0}, hopper, 64, 1, 1, false).weights.value(), 2e9);
  EXPECT_DOUBLE_EQ(llm_model_states({1e9, 0}, hopper, 64, 1, 1, true).weights.value(), 1e9 / 64);
  // Without the distributed optimizer (one shard) nothing is divided.
  EXPECT_DOUBLE_EQ(llm_model_states({1e9, 4e9}, aware, 1, 1, 8, false).total().value(), 5e9 * 12);
}

}  // namespace
}  // namespace dnnsim
