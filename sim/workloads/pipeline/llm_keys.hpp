// The pipeline kind's LLM keys (docs/scenarios.md, kind: pipeline; models/dnn/llm_parallel.hpp):
//   expert_parallel: 64            context_parallel: 2            fsdp: true
//   context_parallel_comm: p2p | all_gather | a2a | a2a+p2p   hierarchical_context_parallel_sizes: [2, 4]
//   precision_recipe: fp8-cs       precision_aware_optimizer: true
//   tensor_parallel_overlap: true  recompute_modules: [moe_act, layernorm]
//   activation_offload_layers: 40
//   moe: {imbalance: 1.0, capacity_factor: 1.25, overlap: false}
// read with located errors: EP not dividing the model's experts, CP not dividing its sequence into
// 2·CP chunks, a2a with heads per tensor rank that CP does not divide (a2a+p2p: its a2a groups' size),
// a2a+p2p without its two sizes or with sizes whose product is not CP, a recipe a node type's GPU
// cannot run (no FP8; MXFP8 without MX formats), keys that need an LLM of the zoo. What depends on
// the plan (EP dividing a stage's GPUs, a2a under a planner's TP) is checked after planning
// (llm_parallel_problems).
#pragma once

#include "models/common/yaml_reader.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workloads/pipeline/pipeline_workload.hpp"

namespace dnnsim {

// Reads the keys above into spec.llm and spec.recompute_modules; returns whether any was given.
bool read_llm_parallelism(YamlReader& reader, MapReader& map, PipelineWorkloadSpec& spec, const Cluster& cluster);

}  // namespace dnnsim
