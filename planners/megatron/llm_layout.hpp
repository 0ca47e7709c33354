// The layouts Megatron-Core accepts for an LLM of the zoo on G GPUs: tensor (TP) × pipeline (PP) ×
// virtual pipeline (VP) × context (CP) × expert (EP) × data parallelism (DP), with or without FSDP,
// and a micro-batch size — the search space of the LLM layout planner (llm_layout_planner.hpp).
//
// The rules, as Megatron-Core states them (NVIDIA/Megatron-LM, megatron/core/parallel_state.py
// initialize_model_parallel, megatron/core/transformer/transformer_config.py, megatron/training/
// arguments.py and microbatches.py) and as dnnsim runs them (models/dnn/llm_parallel.hpp):
//  1. TP·CP·PP·DP = G: "data_parallel_size = world_size // (tensor_model_parallel_size *
//     pipeline_model_parallel_size * context_parallel_size)", world_size divisible by that product.
//  2. TP divides the attention heads and the hidden size, and TP and the key/value heads
//     (num_query_groups) divide one another (tensor_parallel_problems), and TP ≤ the GPUs of one NVLink
//     domain (a limit of the planner's, Narayanan et al. SC'21 Takeaway #1: tensor
//     parallelism inside a node); sequence parallelism with every TP > 1 ("When using expert
//     parallelism and tensor parallelism, sequence parallelism must be used"; the recipes use it
//     for dense models too).
//  3. EP divides the routed experts (num_moe_experts % expert_model_parallel_size == 0), and the expert
//     layers fold EP into the dense layers' data-parallel ranks: "expert_tensor_model_pipeline_
//     parallel_size = expert_tensor_parallel_size * expert_model_parallel_size *
//     pipeline_model_parallel_size" must divide world_size, and with expert tensor parallel 1 (every
//     recipe here, and what dnnsim models) that is EP dividing TP·CP·DP, the GPUs of a stage. A dense
//     model has EP 1.
//  4. CP cuts the sequence into 2·CP equal chunks (Transformer Engine's load-balanced causal ring,
//     get_batch_on_this_cp_rank): the sequence divisible by 2·CP.
//  5. VP > 1 needs PP > 1 ("pipeline-model-parallel size should be greater than 1 with interleaved
//     schedule"); the blocks split into PP·VP virtual stages of whole blocks: with `even` split the
//     blocks divisible by PP·VP (Megatron's default num_layers_per_virtual_pipeline_stage), else a
//     pipeline_model_parallel_layout of ⌊L/(PP·VP)⌋ or ⌈L/(PP·VP)⌉ blocks each (at least one block per
//     virtual stage; the embedding with the first, the head and loss with the last: uniform_split);
//     interleaving needs the micro-batches to be a multiple of PP (dnnsim's interleaved schedule, as
//     Megatron-Core's before microbatch_group_size_per_vp_stage).
//  6. The global batch divisible by micro-batch × DP ("global batch size is not divisible by micro
//     batch size times data parallel size", microbatches.py).
//  7. FSDP (Megatron-FSDP, optim_grads_params) shards over DP·CP, so it needs DP·CP > 1; with PP > 1
//     only when the limits allow it (every published Megatron-Bridge FSDP recipe runs PP 1: a
//     planner limit, `fsdp_with_pipeline`).
//  8. CPU activation offloading (`activation_offload_layers`) needs PP 1 ("Currently there is no support
//     for Pipeline parallelism with CPU offloading", transformer_config.py).
//  9. With cp_comm_type a2a (context_parallel_comm), CP divides the query and the key/value heads of
//     each tensor rank (Transformer Engine's AttnFuncWithCPAndQKVOA2A: "The number of attention heads
//     needs to be divisible by CP size!"; context_comm_problem); with a2a+p2p, the a2a groups' size A
//     (the scenario's) divides CP and those heads, and the rings take CP / A.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "models/dnn/layer_model.hpp"
#include "models/dnn/llm_parallel.hpp"
#include "planners/common/cluster_view.hpp"

namespace dnnsim {

struct LlmLayout {
  int tensor = 1;
  int pipeline = 1;
  int chunks = 1;  // VP, model chunks per pipeline stage
  int context = 1;
  int expert = 1;
  int data = 1;
  int micro_batch = 1;
  bool fsdp = false;
  ContextComm context_comm = ContextComm::p2p;  // cp_comm_type (rule 9); p2p with CP 1 (no exchange)
  int context_a2a = 1;                          // a2a+p2p: the a2a groups' size A; else 1

  [[nodiscard]] int gpus() const { return tensor * pipeline * context * data; }
  // M = global batch / (micro-batch · DP), per pipeline.
  [[nodiscard]] int micro_batches(int global_batch) const { return global_batch / (micro_batch * data); }
  // "TP 8 × PP 8 × VP 4 × CP 1 × EP 64 × DP 16 (FSDP), micro-batch 1"; CP > 1 with its type:
  // "CP 4 (a2a)", "CP 8 (a2a+p2p [2, 4])" (hierarchical_context_parallel_sizes)
  [[nodiscard]] std::string describe() const;
  friend bool operator==(const LlmLayout&, const LlmLayout&) = default;
};

// The framework's limits, as the planner's options give them.
struct LlmLayoutLimits {
  int nvlink_domain = 8;                // TP ≤ this
  bool even_split = false;              // rule 5: blocks divisible by PP·VP (no pipeline layout string)
  std::vector<int> micro_batches;       // micro-batch sizes to try; empty: the powers of two
  std::vector<bool> fsdp{false, true};  // the FSDP settings to try
  bool fsdp_with_pipeline = false;      // rule 7
  bool single_stage = false;            // rule 8: the recipe offloads activations to the host
  int max_chunks = 0;                   // VP ≤ this (0: as many as the blocks allow)
  int chunks = 0;                       // VP = this (a schedule of fixed chunks per stage); 0: any
  ContextComm context_comm = ContextComm::p2p;  // rule 9: the recipe's cp_comm_type
  int context_a2a = 1;                          // rule 9: a2a+p2p's a2a groups' size
  bool search_context_comm = false;             // rule 9: every type TE offers, not the recipe's
};

// What the rules need of the model.
struct LlmLayoutModel {
  TransformerDims dims;
  int blocks = 0;  // transformer blocks (model_blocks)
  // Rule 2's divisibility by TP (tensor_parallel_problems), empty when TP divides the model.
  std::function<bool(int tensor)> splits_over;
};

// The positive divisors of n, ascending (the degrees a layout of n GPUs can take; the 3D planner's too).
[[nodiscard]] std::vector<int> divisors(int n);

// The GPUs of the cluster's first node (devices are listed node by node): the NVLink domain both
// planners keep TP inside unless told otherwise.
[[nodiscard]] std::size_t gpus_per_node(const ClusterView& cluster);

// Why `layout` breaks a rule above on `gpus` GPUs with `global_batch` sequences per iteration, one
// reason per broken rule; empty when Megatron-Core accepts it.
[[nodiscard]] std::vector<std::string> llm_layout_problems(const LlmLayoutModel& model, int gpus, int global_batch,
                                                           const LlmLayoutLimits& limits, const LlmLayout& layout);

// Every layout the rules accept, TP outermost, then CP, PP, VP, EP, micro-batch, FSDP and the CP type.
[[nodiscard]] std::vector<LlmLayout> enumerate_llm_layouts(const LlmLayoutModel& model, int gpus, int global_batch,
                                                           const LlmLayoutLimits& limits);

}  // namespace dnnsim
