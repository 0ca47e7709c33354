// Lowers an SPMD plan (planners/spmd/sharding.hpp) into a TaskGraph, one training iteration after the
// other, on the devices in the plan's order.
//
// Every device runs the program in order on its "compute" stream: the forward conversions of each
// operator's inputs as collectives over all devices, then its compute task — FLOPs × the device's
// share of the split dimension (HAP's rounding of the ratios: shards of unequal size become tasks of
// unequal cost, so a V100 + P100 cluster runs as it would), or all the FLOPs for a replicated operator.
// A matmul's task carries its shard's GEMM shape (the split dimension cut to the shard; the pair of
// gradients backward), so a calibration table with shape grids prices each shard by its own shape.
// The backward pass runs the operators in reverse with 2× the FLOPs and each conversion's mirror
// (all-gather ↔ reduce-scatter, all-reduce, all-to-all, slice ↔ all-gather); the all-reduce of a
// replicated weight's gradient runs on a "comm" stream as soon as its operator's backward is done,
// overlapping the rest of the backward pass (as data-parallel frameworks bucket it). Collectives of
// split tensors are padded to the largest shard. Memory: each device allocates its share of every
// parameter's weights, gradients and Adam state (4× the weight bytes in fp32) once, and each forward
// task's output share until its backward task ends.
#pragma once

#include "models/program/task_graph.hpp"
#include "models/spmd/op_graph.hpp"
#include "planners/spmd/sharding.hpp"

namespace dnnsim {

[[nodiscard]] TaskGraph lower_spmd(const OpGraph& graph, const SpmdPlan& plan, const std::vector<std::string>& devices,
                                   int iterations);

}  // namespace dnnsim
