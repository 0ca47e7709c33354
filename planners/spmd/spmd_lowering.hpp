// Lowers an SPMD plan (planners/spmd/spmd_planner.hpp) into a TaskGraph, one training iteration after
// the other, on the devices in the plan's order.
//
// Every device runs the program in order on its "compute" stream: the forward conversions of each
// operator's inputs as collectives over the groups of their mesh axis (every group of the axis at
// once), then its compute task — FLOPs × the device's share of the split dimension on every axis it is
// sharded on (HAP's rounding of the ratios: shards of unequal size become tasks of unequal cost, so a
// V100 + P100 cluster runs as it would), or all the FLOPs for a replicated operator. A matmul's task
// carries its shard's GEMM shape (the split dimensions cut to the shard; the pair of gradients
// backward), so a calibration table with shape grids prices each shard by its own shape. The backward
// pass runs the operators in reverse with 2× the FLOPs and each conversion's mirror (all-gather ↔
// reduce-scatter, all-reduce, all-to-all, slice ↔ all-gather). Collectives of split tensors are padded
// to the largest shard. HAP's grouped Broadcast is one broadcast per shard from its owner, unpadded;
// its mirror, one Reduce per shard, runs as the unpadded reduce-scatter it amounts to (the task graph
// has no reduce collective). An SFB matmul all-gathers its input and its output's gradient before its
// backward, which computes the whole weight gradient on every device. An expert-parallel experts
// operator sends its routed rows to their experts (an all-to-all) before its compute and back after
// it, and the same backward. The all-reduce of a replicated weight's gradient runs on a "comm" stream
// as soon as its operator's backward is done, overlapping the rest of the backward pass (as
// data-parallel frameworks bucket it). Memory: each device allocates its share of every parameter's
// weights, gradients and Adam state (4× the weight bytes in fp32) once, and each forward task's output
// share until its backward task ends.
//
// A plan with a pipeline (Rhino's stages) is lowered by the pipeline lowering instead
// (spmd_pipeline.hpp): each stage's operators as one chunk, data parallel over its devices, GPipe.
#pragma once

#include "models/program/task_graph.hpp"
#include "models/spmd/op_graph.hpp"
#include "planners/spmd/spmd_planner.hpp"

namespace dnnsim {

// What an operator's kernel computes, for calibration curves.
[[nodiscard]] LayerKind layer_kind_of(OpKind kind);

// `comm`: every all-reduce's algorithm (the other collectives keep the default rule) and the gradient
// buckets.
[[nodiscard]] TaskGraph lower_spmd(const OpGraph& graph, const SpmdPlan& plan, const std::vector<std::string>& devices,
                                   int iterations, const SpmdCommOptions& comm = {});

}  // namespace dnnsim
