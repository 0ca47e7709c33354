// Lowering of an SPMD plan with Rhino's pipeline stages (SpmdPlan::pipeline) through the pipeline
// lowering (planners/schedules/pipeline_lowering.hpp): the operators in a topological order that keeps
// each stage contiguous become layers, each stage one chunk, data parallel over its devices, GPipe's
// schedule over the micro-batches; what crosses a stage boundary is every tensor live across it.
#pragma once

#include "planners/spmd/spmd_planner.hpp"

namespace dnnsim {

// `comm`: the stages' gradient all-reduces' algorithm (empty: the default rule) and buckets (0: the
// pipeline lowering's own, DDP's 25 MB).
[[nodiscard]] TaskGraph lower_spmd_pipeline(const OpGraph& graph, const SpmdPlan& plan,
                                            const std::vector<std::string>& devices, int iterations,
                                            const SpmdCommOptions& comm = {});

}  // namespace dnnsim
