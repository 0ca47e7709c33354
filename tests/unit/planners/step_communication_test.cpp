// The LLM exchanges of a pipeline step (planners/schedules/step_communication.hpp): which GPUs meet in
// each group (Megatron-Core's rank order, tensor rank fastest, then context, then replica) and the
// collectives a step adds, each size derived by hand from llm_parallel.hpp's formulas.
#include "planners/schedules/step_communication.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "models/calibration/calibration.hpp"
#include "models/dnn/zoo.hpp"
#include "models/hardware/catalog.hpp"
#include "planners/common/layer_cost.hpp"

namespace dnnsim {
namespace {

// `name` split as Megatron-Core runs it, on one stage of `plan_devices` plan devices of TP·CP GPUs,
// with the selective recomputation `modules` (RecomputeModule bits).
PipelineWorkload llm_workload(const std::string& name, int tp, const LlmParallelism& llm, int plan_devices,
                              std::uint8_t modules = 0) {
  const LayerModel model = builtin_models().at(name).value(ModelOptions{});
  PipelineWorkload workload;
  workload.tensor_parallel = TensorParallelOptions{.degree = tp, .sequence_parallel = tp > 1};
  workload.transformer = transformer_shape(model);
  workload.llm = llm;
  workload.model = shard_for_llm(model, workload.tensor_parallel, llm, modules);
  workload.dtype = Dtype::bf16;
  PipelineStage stage{{LayerRange{0, workload.model.layers.size()}}, {}};
  for (int d = 0; d < plan_devices; ++d) stage.devices.push_back(static_cast<DeviceId>(d));
  workload.plan.stages = {stage};
  return workload;
}

const StepCollective* find(const std::vector<StepCollective>& all, const std::string& what) {
  for (const StepCollective& c : all)
    if (c.what == what) return &c;
  return nullptr;
}

// A step has collectives only with tensor, expert or context parallelism or FSDP on a transformer
// (step_collectives' four sources); a plain data-parallel replica of the same model has none, for
// every rank, so the lowering skips building its groups.
TEST(StepCommunication, CollectivesOnlyWithAnLlmSplit) {
  const PipelineWorkload plain = llm_workload("qwen3-30b-a3b", 1, LlmParallelism{}, 4);
  EXPECT_FALSE(has_step_collectives(plain));
  const PipelineStage& stage = plain.plan.stages.front();
  EXPECT_TRUE(
      step_collectives(plain, step_groups(plain, stage, 2, 0), 0, stage.chunks.front(), 1, Pass::backward, false)
          .empty());
  EXPECT_TRUE(has_step_collectives(llm_workload("qwen3-30b-a3b", 2, LlmParallelism{}, 4)));
  for (const auto split : {&LlmParallelism::expert, &LlmParallelism::context}) {
    LlmParallelism llm;
    llm.*split = 2;
    EXPECT_TRUE(has_step_collectives(llm_workload("qwen3-30b-a3b", 1, llm, 4)));
  }
  LlmParallelism fsdp;
  fsdp.fsdp = true;
  EXPECT_TRUE(has_step_collectives(llm_workload("qwen3-30b-a3b", 1, fsdp, 4)));
}

// Qwen3-30B-A3B with EP 8 on 8 GPUs (TP 1): GPU 3's expert group is all 8, led by itself; its forward
// over the whole model sends, per MoE layer (48), a dispatch and a combine of b·s·k·h·2 =
// 4,096 · 8 · 2,048 · 2 bytes each: one all-to-all task of 96 calls. No expert-data-parallel peers (8/8).
TEST(StepCommunication, ExpertAllToAllsPerMoeLayer) {
  LlmParallelism llm;
  llm.expert = 8;
  const PipelineWorkload workload = llm_workload("qwen3-30b-a3b", 1, llm, 8);
  const PipelineStage& stage = workload.plan.stages.front();
  const StepGroups groups = step_groups(workload, stage, 3, 0);
  EXPECT_EQ(groups.expert, (std::vector<DeviceId>{3, 4, 5, 6, 7, 0, 1, 2}));
  EXPECT_EQ(groups.expert_data, (std::vector<DeviceId>{3}));
  const auto all = step_collectives(workload, groups, 0, stage.chunks.front(), 1, Pass::forward, false);
  const StepCollective* a2a = find(all, "ep all-to-all");
  ASSERT_NE(a2a, nullptr);
  EXPECT_EQ(a2a->collective.kind, CollectiveKind::all_to_all);
  EXPECT_DOUBLE_EQ(a2a->collective.size.value(), 96.0 * 4096 * 8 * 2048 * 2);
  EXPECT_EQ(a2a->collective.calls, 96u);
  EXPECT_TRUE(a2a->collective.alone);
  EXPECT_FALSE(a2a->overlapped);  // the alltoall dispatcher waits for it unless moe.overlap
  EXPECT_FALSE(expert_gradient_all_reduce(workload, groups, stage.chunks.front()).has_value());
  // EP 4 on the same 8 GPUs: two expert groups, and each expert's two replicas all-reduce its gradients.
  llm.expert = 4;
  const PipelineWorkload halves = llm_workload("qwen3-30b-a3b", 1, llm, 8);
  const StepGroups of5 = step_groups(halves, halves.plan.stages.front(), 5, 0);
  EXPECT_EQ(of5.expert, (std::vector<DeviceId>{5, 6, 7, 4}));
  EXPECT_EQ(of5.expert_data, (std::vector<DeviceId>{5, 1}));
  ASSERT_TRUE(expert_gradient_all_reduce(halves, of5, halves.plan.stages.front().chunks.front()).has_value());
}

// Llama 3 8B with TP 2 × CP 2 (plan devices of 4 GPUs) on 2 plan devices: GPU 7 is tensor rank 1,
// context rank 1 of replica 1; its ring is {7, 5}, its tensor group {6, 7}, its FSDP group the
// 4 GPUs of tensor rank 1 {7, 1, 3, 5}. A ring chunk is 4,096 tokens · 8 KV heads · 256 / TP 2 · 2 bytes;
// per attention layer (32) the forward sends CP − 1 = 1 chunk (one phase of 1 step), the backward 2
// (one phase of 2 steps: the K/V out, the dK/dV home), each phase as an all-gather's ring of CP/(CP − 1)
// = 2 times the bytes sent, one call per step and layer. No layer times without a device: nothing
// overlaps the exchange. The ring is not among step_collectives.
TEST(StepCommunication, ContextRingAndGroups) {
  LlmParallelism llm;
  llm.context = 2;
  const PipelineWorkload workload = llm_workload("llama3-8b", 2, llm, 2);
  const PipelineStage& stage = workload.plan.stages.front();
  const StepGroups groups = step_groups(workload, stage, 1, 3);
  EXPECT_EQ(groups.context, (std::vector<DeviceId>{7, 5}));
  EXPECT_EQ(groups.tensor, (std::vector<DeviceId>{6, 7}));
  EXPECT_EQ(groups.sharding, (std::vector<DeviceId>{7, 1, 3, 5}));
  const double chunk = 4096.0 * 8 * 256 / 2 * 2;
  const LayerRange layers = stage.chunks.front();
  const auto forward = context_ring(workload, groups, layers, nullptr, 1, Pass::forward);
  ASSERT_EQ(forward.size(), 1u);
  EXPECT_EQ(forward[0].exchange.kind, CollectiveKind::all_gather);
  // TE's isend/irecv to the next CP rank, never NCCL's channels (docs/collectives.md, "p2p-ring").
  EXPECT_EQ(forward[0].exchange.algorithm, "p2p-ring");
  EXPECT_EQ(forward[0].exchange.group, groups.context);
  EXPECT_DOUBLE_EQ(forward[0].exchange.size.value(), 2 * chunk * 32);
  EXPECT_EQ(forward[0].exchange.calls, 32u);
  EXPECT_TRUE(forward[0].exchange.alone);
  EXPECT_EQ(forward[0].attention.value(), 0);
  const auto backward = context_ring(workload, groups, layers, nullptr, 1, Pass::backward);
  ASSERT_EQ(backward.size(), 1u);
  EXPECT_DOUBLE_EQ(backward[0].exchange.size.value(), 2 * 2 * chunk * 32);
  EXPECT_EQ(backward[0].exchange.calls, 64u);
  for (const StepCollective& c : step_collectives(workload, groups, 1, layers, 1, Pass::backward, false))
    EXPECT_EQ(c.collective.kind == CollectiveKind::all_gather && c.collective.group == groups.context, false);
  EXPECT_EQ(find(step_collectives(workload, groups, 1, layers, 1, Pass::forward, false), "tp all-gather"),
            nullptr);  // rank 1 of its tensor group: rank 0 adds those
}

// The same GPU (rank 3 of replica 1, ring {7, 5}) with cp_comm_type all_gather, then a2a: no ring
// phases, and per step serial collectives over the CP group, 32 attention layers each. The local K/V is
// the ring chunk c = 4,096 · 8 · 256 / 2 · 2 bytes; all_gather forward gathers CP·c per layer (K and V:
// 2 calls), backward gathers it again and reduce-scatters the CP·c dK/dV; a2a moves, per pass and layer,
// the K/V plus Q and O: 4,096 tokens · 32/2 heads · (128 + 128) · 2 bytes = 4·c (16 query heads per
// tensor rank against 4 KV heads), 5·c in all, in 4 calls. A
// recomputed forward repeats its attention's exchanges.
TEST(StepCommunication, ContextAllGatherAndAllToAllAreSerial) {
  LlmParallelism llm;
  llm.context = 2;
  llm.context_comm = ContextComm::all_gather;
  const PipelineWorkload gather = llm_workload("llama3-8b", 2, llm, 2);
  const PipelineStage& stage = gather.plan.stages.front();
  const StepGroups groups = step_groups(gather, stage, 1, 3);
  const LayerRange layers = stage.chunks.front();
  const double chunk = 4096.0 * 8 * 256 / 2 * 2;
  EXPECT_TRUE(context_ring(gather, groups, layers, nullptr, 1, Pass::backward).empty());
  const auto backward = step_collectives(gather, groups, 1, layers, 1, Pass::backward, false);
  const StepCollective* all_gather = find(backward, "cp all-gather");
  const StepCollective* reduce_scatter = find(backward, "cp reduce-scatter");
  ASSERT_NE(all_gather, nullptr);
  ASSERT_NE(reduce_scatter, nullptr);
  for (const StepCollective* c : {all_gather, reduce_scatter}) {
    EXPECT_FALSE(c->overlapped);
    EXPECT_EQ(c->collective.group, groups.context);
    EXPECT_DOUBLE_EQ(c->collective.size.value(), 2 * chunk * 32);
    EXPECT_EQ(c->collective.calls, 64u);
  }
  EXPECT_EQ(find(step_collectives(gather, groups, 1, layers, 1, Pass::forward, false), "cp reduce-scatter"), nullptr);
  EXPECT_NE(find(step_collectives(gather, groups, 1, layers, 1, Pass::forward, true), "cp all-gather"), nullptr);

  llm.context_comm = ContextComm::a2a;
  const PipelineWorkload a2a = llm_workload("llama3-8b", 2, llm, 2);
  const auto exchanges = step_collectives(a2a, groups, 1, layers, 1, Pass::forward, false);
  const StepCollective* all_to_all = find(exchanges, "cp all-to-all");
  ASSERT_NE(all_to_all, nullptr);
  EXPECT_EQ(all_to_all->collective.kind, CollectiveKind::all_to_all);
  EXPECT_DOUBLE_EQ(all_to_all->collective.size.value(), (1 + 4) * chunk * 32);
  EXPECT_EQ(all_to_all->collective.calls, 128u);
}

// a2a+p2p, Llama 3 8B with TP 2 × CP 4 as A = 2 × P = 2 on one plan device of 8 GPUs: GPU 5 is tensor
// rank 1 of context rank 2; the CP ranks' GPUs of tensor rank 1 are 1, 3, 5, 7 (context ranks 0–3), its
// a2a group the consecutive context ranks {2, 3} = GPUs {5, 7}, its ring the ranks congruent modulo 2,
// {0, 2} = GPUs {1, 5}, led by itself: {5, 1}. A ring chunk is the flat ring's at CP 4: 8,192/4 tokens
// (b = 1) · 8 KV heads · 256 / 2 · 2 bytes; the ring has 2 ranks, so the forward sends 1 chunk per core
// (as an all-gather's ring: 2·c·32, 32 calls) and the backward 2 (2·2·c·32, 64 calls). Around each core
// the 4 all-to-alls over {5, 7}: the rank's own 2,048 tokens of K/V (c) and of Q and O, 16 heads · 256
// · 2 bytes each: 4·c, 5·c per core, 32 cores, 128 calls.
TEST(StepCommunication, HierarchicalContextGroups) {
  LlmParallelism llm;
  llm.context = 4;
  llm.context_comm = ContextComm::a2a_p2p;
  llm.context_a2a = 2;
  const PipelineWorkload workload = llm_workload("llama3-8b", 2, llm, 1);
  const PipelineStage& stage = workload.plan.stages.front();
  const StepGroups groups = step_groups(workload, stage, 0, 5);
  EXPECT_EQ(groups.context_collectives, (std::vector<DeviceId>{5, 7}));
  EXPECT_EQ(groups.context, (std::vector<DeviceId>{5, 1}));
  EXPECT_EQ(groups.sharding, (std::vector<DeviceId>{5, 7, 1, 3}));
  const double chunk = 2048.0 * 8 * 256 / 2 * 2;
  const LayerRange layers = stage.chunks.front();
  const auto forward = context_ring(workload, groups, layers, nullptr, 1, Pass::forward);
  ASSERT_EQ(forward.size(), 1u);
  EXPECT_EQ(forward[0].exchange.group, groups.context);
  EXPECT_DOUBLE_EQ(forward[0].exchange.size.value(), 2 * chunk * 32);
  EXPECT_EQ(forward[0].exchange.calls, 32u);
  const auto backward = context_ring(workload, groups, layers, nullptr, 1, Pass::backward);
  ASSERT_EQ(backward.size(), 1u);
  EXPECT_DOUBLE_EQ(backward[0].exchange.size.value(), 2 * 2 * chunk * 32);
  EXPECT_EQ(backward[0].exchange.calls, 64u);
  for (const Pass pass : {Pass::forward, Pass::backward}) {
    const auto all = step_collectives(workload, groups, 1, layers, 1, pass, false);
    const StepCollective* all_to_all = find(all, "cp all-to-all");
    ASSERT_NE(all_to_all, nullptr);
    EXPECT_EQ(all_to_all->collective.group, groups.context_collectives);
    EXPECT_DOUBLE_EQ(all_to_all->collective.size.value(), 5 * chunk * 32);
    EXPECT_EQ(all_to_all->collective.calls, 128u);
    EXPECT_FALSE(all_to_all->overlapped);
  }
  // A = 1 is the plain ring: no all-to-all, the ring over all four CP ranks.
  llm.context_a2a = 1;
  const PipelineWorkload flat = llm_workload("llama3-8b", 2, llm, 1);
  const StepGroups flat_groups = step_groups(flat, flat.plan.stages.front(), 0, 5);
  EXPECT_EQ(flat_groups.context, (std::vector<DeviceId>{5, 7, 1, 3}));
  EXPECT_EQ(flat_groups.context_collectives, (std::vector<DeviceId>{5}));
  EXPECT_EQ(find(step_collectives(flat, flat_groups, 1, layers, 1, Pass::forward, false), "cp all-to-all"), nullptr);
}

// Selective recomputation of core_attn (Megatron-Core checkpoints Transformer Engine's whole attention
// function, its CP communication included) re-runs each core's forward, exchanges and all, at the
// start of its backward. Same GPU as above (ring {7, 5}, chunk c = 4,096 · 8 · 256 / 2 · 2 bytes, 32
// cores). p2p: the backward ring is the forward's ring (1 step of 1 chunk per core: 2·c·32 as an
// all-gather's ring, 32 calls) then the backward's (2 steps: 2·2·c·32, 64 calls). On an H100 (no
// calibration: the roofline), the forward ring overlaps (CP − 1)/CP = 1/2 of the cores' forward
// attention F, as in the forward pass, and the backward ring the rest of their backward time, which
// now includes F: with compute-bound cores the time is linear in the FLOPs, so that rest is the plain
// backward's B (to rounding) and ring_attention_overlapped is F/2 + B. all_gather: the backward adds a
// forward all-gather (2·c·32, 64 calls) before its own gather and reduce-scatter.
TEST(StepCommunication, SelectivelyRecomputedCoresExchangeAgain) {
  LlmParallelism llm;
  llm.context = 2;
  const auto core_attn = static_cast<std::uint8_t>(RecomputeModule::core_attn);
  const PipelineWorkload plain = llm_workload("llama3-8b", 2, llm, 2);
  const PipelineWorkload rerun = llm_workload("llama3-8b", 2, llm, 2, core_attn);
  const PipelineStage& stage = rerun.plan.stages.front();
  const StepGroups groups = step_groups(rerun, stage, 1, 3);
  const LayerRange layers = stage.chunks.front();
  const double chunk = 4096.0 * 8 * 256 / 2 * 2;
  const auto backward = context_ring(rerun, groups, layers, nullptr, 1, Pass::backward);
  ASSERT_EQ(backward.size(), 2u);
  EXPECT_DOUBLE_EQ(backward[0].exchange.size.value(), 2 * chunk * 32);
  EXPECT_EQ(backward[0].exchange.calls, 32u);
  EXPECT_DOUBLE_EQ(backward[1].exchange.size.value(), 2 * 2 * chunk * 32);
  EXPECT_EQ(backward[1].exchange.calls, 64u);
  EXPECT_EQ(context_ring(rerun, groups, layers, nullptr, 1, Pass::forward).size(), 1u);  // the forward is as before

  const ClusterDevice h100{"node0/gpu0", *HardwareCatalog::builtin().find_gpu("H100-SXM"), 0};
  const double forward = context_ring(plain, groups, layers, &h100, 1, Pass::forward)[0].attention.value() * 2;
  const double plain_backward = context_ring(plain, groups, layers, &h100, 1, Pass::backward)[0].attention.value();
  ASSERT_GT(forward, 0);
  const auto timed = context_ring(rerun, groups, layers, &h100, 1, Pass::backward);
  ASSERT_EQ(timed.size(), 2u);
  EXPECT_DOUBLE_EQ(timed[0].attention.value(), forward / 2);
  EXPECT_NEAR(timed[1].attention.value(), plain_backward, 1e-9 * plain_backward);
  EXPECT_NEAR(ring_attention_overlapped(rerun, layers, h100, 1, Pass::backward).value(), forward / 2 + plain_backward,
              1e-9 * plain_backward);

  llm.context_comm = ContextComm::all_gather;
  const PipelineWorkload gather = llm_workload("llama3-8b", 2, llm, 2, core_attn);
  int gathers = 0;
  for (const StepCollective& c : step_collectives(gather, groups, 1, layers, 1, Pass::backward, false)) {
    if (c.what != "cp all-gather") continue;
    ++gathers;
    EXPECT_DOUBLE_EQ(c.collective.size.value(), 2 * chunk * 32);
    EXPECT_EQ(c.collective.calls, 64u);
  }
  EXPECT_EQ(gathers, 2);
  EXPECT_NE(find(step_collectives(gather, groups, 1, layers, 1, Pass::backward, false), "cp reduce-scatter"), nullptr);
}

// The two ring tests' fixture: Llama 3 8B's first attention core at TP 2 and CP 8 on an H100 whose
// hand-made attention curves are indexed, as a calibration's are, by one head over one sequence
// (attention_heads_per_call): the ring's and all_gather's calls run the rank's 32 / 2 = 16 heads, a2a's
// 32 / (2 · 8) = 2 over the whole sequence. The curves read 0.25 at F/64 and 0.5 from F/16 on forward,
// 0.2 at B/128 and 0.4 from B/16 on backward (F, B: the CP 8 core's FLOPs per GPU; constant beyond
// their ends).
struct RingCurves {
  std::size_t core = 0;
  double f = 0;  // the core's forward FLOPs per GPU
  std::shared_ptr<CalibrationTable> table = std::make_shared<CalibrationTable>();
  ClusterDevice h100{"node0/gpu0", *HardwareCatalog::builtin().find_gpu("H100-SXM"), 0};

  explicit RingCurves(const PipelineWorkload& workload) {
    while (workload.model.layers[core].kind != LayerKind::attention) ++core;
    f = workload.model.layers[core].forward_flops.value();
    const double b = workload.model.layers[core].backward_flops.value();
    table->device = "H100-SXM";
    table->compute[{"attention", Dtype::bf16}] = EfficiencyCurve{{{f / 64, 0.25}, {f / 16, 0.5}}};
    table->backward_compute[{"attention", Dtype::bf16}] = EfficiencyCurve{{{b / 128, 0.2}, {b / 16, 0.4}}};
    h100.calibration = table;
  }
  [[nodiscard]] LayerRange one() const { return {core, core + 1}; }
};

// Transformer Engine splits an attention core's pass under CP into calls run one after another
// (attention_calls_in_sequence): the p2p ring at CP 8 makes 8 calls of 1/8 of the core's FLOPs each,
// two at a time forward (4 pairs, each 1/4 of the forward FLOPs F over 16 heads: F/64 per head) and one
// at a time backward (8 of B/8: B/128 per head); all_gather (two calls on two streams) runs the whole
// core's 16 heads (F/16 per head) and a2a one call of 2 heads over the whole sequence (F/2 per head).
// With the fixture's curves the compute-bound core (math ≫ memory here: 1,024 tokens against 8,192
// keys) takes F/(0.25·peak) forward on the ring against F/(0.5·peak) for a2a — twice as long — and
// backward B/(0.2·peak) against B/(0.4·peak), twice again; all_gather times as a2a. The ring alone adds
// its merges, memory-bound kernels of their own (ring_attention_corrections, derived in
// llm_parallel_test.cpp), priced apart here. At CP 2 the forward is one pair of 16 heads (F₂/16 per
// head, F₂ = 4F the CP 2 core's FLOPs) against a2a's 8 heads (F₂/8): both read 0.5, as a2a's.
TEST(StepCommunication, RingAttentionCallsReadTheCurveAtTheirOwnSize) {
  LlmParallelism llm;
  llm.context = 8;
  const PipelineWorkload ring = llm_workload("llama3-8b", 2, llm, 1);
  const RingCurves curves(ring);
  const std::size_t core = curves.core;
  const double f = curves.f;
  const ClusterDevice& h100 = curves.h100;
  const LayerRange one = curves.one();
  const auto time = [&](const PipelineWorkload& workload, Pass pass) {
    return step_layers_time(workload, one, h100, 1, pass).value();
  };
  const auto merges = [&](const PipelineWorkload& workload, Pass pass) {
    return ring_corrections_time(workload, h100, 1, pass == Pass::backward).value();
  };
  llm.context_comm = ContextComm::a2a;
  const PipelineWorkload a2a = llm_workload("llama3-8b", 2, llm, 1);
  llm.context_comm = ContextComm::all_gather;
  const PipelineWorkload gather = llm_workload("llama3-8b", 2, llm, 1);
  ASSERT_DOUBLE_EQ(a2a.model.layers[core].forward_flops.value(), f);
  const double peak = h100.gpu.peak(Dtype::bf16)->value();
  EXPECT_NEAR(time(a2a, Pass::forward), f / (0.5 * peak), 1e-12);
  EXPECT_GT(merges(ring, Pass::forward), 0.0);
  EXPECT_NEAR(time(ring, Pass::forward) - merges(ring, Pass::forward), 2 * time(a2a, Pass::forward), 1e-12);
  EXPECT_NEAR(time(ring, Pass::backward) - merges(ring, Pass::backward), 2 * time(a2a, Pass::backward), 1e-12);
  EXPECT_DOUBLE_EQ(time(gather, Pass::forward), time(a2a, Pass::forward));
  EXPECT_DOUBLE_EQ(time(gather, Pass::backward), time(a2a, Pass::backward));

  llm.context = 2;
  llm.context_comm = ContextComm::p2p;
  const PipelineWorkload pair = llm_workload("llama3-8b", 2, llm, 1);
  llm.context_comm = ContextComm::a2a;
  EXPECT_NEAR(time(pair, Pass::forward) - merges(pair, Pass::forward),
              time(llm_workload("llama3-8b", 2, llm, 1), Pass::forward), 1e-12);
}

// The forward ring's P calls are one causal (step 0, the rank's own K/V) and P − 1 over full blocks of
// keys without a mask (TE's AttnFuncWithCPAndKVP2P), each at its calls' size on its mask's curve. With
// the fixture's table plus an unmasked curve reading twice the causal one (0.5 at F/64, 1.0 from F/16
// on, per head), the CP 8 ring's forward core (F/64 per head and call) takes
// F/8 / (0.25·peak) + 7F/8 / (0.5·peak) = (1/8 · 4 + 7/8 · 2) F/peak = 2.25 F/peak, against 4 F/peak
// with every call causal; all_gather's calls (F/16 per head) have 15/16 of their FLOPs unmasked
// (unmasked_attention_share): F/16 / (0.5·peak) + 15F/16 / (1.0·peak) = 17/16 F/peak, against 2 F/peak;
// the backward (one curve) and a2a's whole causal call are unchanged.
TEST(StepCommunication, UnmaskedKeysOfTheForwardCoreReadTheUnmaskedCurve) {
  LlmParallelism llm;
  llm.context = 8;
  const PipelineWorkload ring = llm_workload("llama3-8b", 2, llm, 1);
  const RingCurves curves(ring);
  const double f = curves.f;
  const ClusterDevice& h100 = curves.h100;
  const LayerRange one = curves.one();
  const auto core_time = [&](const PipelineWorkload& workload, Pass pass) {
    return step_layers_time(workload, one, h100, 1, pass).value() -
           ring_corrections_time(workload, h100, 1, pass == Pass::backward).value();
  };
  const double backward = core_time(ring, Pass::backward);
  llm.context_comm = ContextComm::a2a;
  const PipelineWorkload a2a = llm_workload("llama3-8b", 2, llm, 1);
  const double whole = core_time(a2a, Pass::forward);
  curves.table->unmasked_compute[{"attention", Dtype::bf16}] = EfficiencyCurve{{{f / 64, 0.5}, {f / 16, 1.0}}};
  const double peak = h100.gpu.peak(Dtype::bf16)->value();
  EXPECT_NEAR(core_time(ring, Pass::forward), 2.25 * f / peak, 1e-12);
  llm.context_comm = ContextComm::all_gather;
  EXPECT_NEAR(core_time(llm_workload("llama3-8b", 2, llm, 1), Pass::forward), 17.0 / 16 * f / peak, 1e-12);
  EXPECT_DOUBLE_EQ(core_time(ring, Pass::backward), backward);
  EXPECT_DOUBLE_EQ(core_time(a2a, Pass::forward), whole);
}

// A calibration's attention curves are indexed by one head over one sequence, so splitting the heads
// over tensor ranks halves a core's time rather than moving it down the curve: Llama 3 8B's first core
// at TP 2 (16 heads per rank) takes half its TP 1 time (32 heads) on a table whose curve rises tenfold
// over the range (0.05 at 1 GFLOP, 0.5 at 1 TFLOP per head), forward and backward. Without an attention
// curve of its own the core reads the matmul curve at the call's FLOPs: TP 2's half-size call then
// runs further from peak and takes more than half.
TEST(StepCommunication, AttentionCurvesAreIndexedPerHeadAndSequence) {
  const PipelineWorkload whole = llm_workload("llama3-8b", 1, LlmParallelism{}, 1);
  const PipelineWorkload half = llm_workload("llama3-8b", 2, LlmParallelism{}, 1);
  std::size_t core = 0;
  while (whole.model.layers[core].kind != LayerKind::attention) ++core;
  ASSERT_EQ(half.model.layers[core].kind, LayerKind::attention);
  auto table = std::make_shared<CalibrationTable>();
  table->device = "H100-SXM";
  const EfficiencyCurve rising{{{1e9, 0.05}, {1e12, 0.5}}};
  table->compute[{"attention", Dtype::bf16}] = rising;
  table->backward_compute[{"attention", Dtype::bf16}] = rising;
  ClusterDevice h100{"node0/gpu0", *HardwareCatalog::builtin().find_gpu("H100-SXM"), 0};
  h100.calibration = table;
  const LayerRange one{core, core + 1};
  for (const Pass pass : {Pass::forward, Pass::backward}) {
    const double t1 = step_layers_time(whole, one, h100, 1, pass).value();
    EXPECT_NEAR(step_layers_time(half, one, h100, 1, pass).value(), t1 / 2, 1e-12 * t1);
    // The other planners' layer_time reads the heads off the core's first product (heads × tokens).
    for (const PipelineWorkload* w : {&whole, &half})
      EXPECT_DOUBLE_EQ(layer_time(w->model, w->model.layers[core], h100, 1, Dtype::bf16, pass).value(),
                       step_layers_time(*w, one, h100, 1, pass).value());
  }
  table->compute.clear();
  table->backward_compute.clear();
  table->compute[{"matmul", Dtype::bf16}] = rising;
  const double t1 = step_layers_time(whole, one, h100, 1, Pass::forward).value();
  EXPECT_GT(step_layers_time(half, one, h100, 1, Pass::forward).value(), 0.5 * t1 * 1.01);
}

// Llama 3 8B under FSDP with FP8 parameters on 8 GPUs: each step gathers its layers' weights at 1 byte
// per parameter (once per block: 32 calls), the backward also reduce-scatters their BF16 gradients; a
// recomputed forward gathers nothing more (the weights are still there).
TEST(StepCommunication, FsdpGathersAndReduceScatters) {
  LlmParallelism llm;
  llm.fsdp = true;
  llm.precision.low = LowPrecision::fp8_current_scaling;
  const PipelineWorkload workload = llm_workload("llama3-8b", 1, llm, 8);
  const PipelineStage& stage = workload.plan.stages.front();
  const StepGroups groups = step_groups(workload, stage, 0, 0);
  ASSERT_EQ(groups.sharding.size(), 8u);
  const LayerRange all = stage.chunks.front();
  const ParameterSplit parameters = parameter_split(workload.model, all.begin, all.end);
  const auto forward = step_collectives(workload, groups, 0, all, 1, Pass::forward, false);
  ASSERT_NE(find(forward, "fsdp all-gather"), nullptr);
  EXPECT_DOUBLE_EQ(find(forward, "fsdp all-gather")->collective.size.value(), parameters.dense * 1);
  EXPECT_EQ(find(forward, "fsdp all-gather")->collective.calls, 32u);
  const auto backward = step_collectives(workload, groups, 0, all, 1, Pass::backward, false);
  ASSERT_NE(find(backward, "fsdp reduce-scatter"), nullptr);
  EXPECT_DOUBLE_EQ(find(backward, "fsdp reduce-scatter")->collective.size.value(), parameters.dense * 2);
  EXPECT_TRUE(step_collectives(workload, groups, 0, all, 1, Pass::forward, true).empty());
}

}  // namespace
}  // namespace dnnsim
