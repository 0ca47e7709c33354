// Rhino's SPMD strategy search on one mesh (Zhang et al., arXiv 2302.08141; alibaba/TePDist
// cost_spmd_strategy.cc): a strategy per operator is one of its rules on every mesh axis (split,
// replicate, partial sum, and the strided split of fused weights: planners/spmd/sharding.hpp). The
// graph is decomposed (rhino_graph.hpp); in a cone, the strategy of every operator follows its root's
// by a dynamic program over the cone's tree (each operator's best strategy given its reader's, as
// TePDist infers a cone from its root); within a sub-graph an integer program (COIN-OR Cbc) picks one
// strategy per cone, x[c][s] ∈ {0, 1}, Σ_s x[c][s] = 1, minimizing the cones' costs plus the
// conversions on the edges between cones (y ≥ x[c][s] + x[c'][s'] − 1, TePDist's BuildILPModel), the
// tensor entering the sub-graph in a fixed layout; across sub-graphs a dynamic program over the layout
// of the critical tensor between them. Sub-graphs of the same structure (a transformer's layers) are
// solved once and their answers reused. Costs are the shared profiled model's (spmd_cost.hpp) on the
// cluster's fitted collective lines for the mesh, even shares: the node cost of an operator's strategy
// its computation and own collectives; an edge's, the conversion of its tensor and, for a weight that
// arrives replicated at a sharded reader, its gradient all-reduce (a weight stored split and gathered
// for its reader — ZeRO-3's, FSDP's layout — has its gradient summed by the gather's backward mirror, a
// reduce-scatter, instead).
//
// Memory: what a device holds at the end of the forward pass (spmd_cost.hpp memory_multiplier: the
// model state, kModelStateFactor × its share of every parameter, and its share of every output kept
// for the backward pass) enters the search as a price per byte (`memory_price`, seconds per byte): the
// Lagrangian relaxation of the constraint "memory ≤ limit" (Fisher, "The Lagrangian Relaxation
// Method for Solving Integer Programming Problems", Management Science 27(1), 1981). The constraint
// sums over the whole graph, so it cannot sit in one sub-graph's integer program; priced, it is a node
// cost like any other, and the cones' DP, the integer programs, the DP across sub-graphs and the reuse
// of equal sub-graphs all stay exact for the priced objective. The planner searches the price
// (rhino_planner.cpp).
#pragma once

#include <cstddef>

#include "planners/spmd/sharding.hpp"

namespace dnnsim {

struct RhinoSearchOptions {
  Mesh mesh;
  int group = 1;            // critical nodes per sub-graph
  bool fine = true;         // the finer cone roots (thorough) or not (fast)
  double ilp_seconds = 60;  // Cbc's limit per integer program
  double memory_price = 0;  // seconds per byte of memory on a device (0: memory is free)
  // The part of a gradient all-reduce's time the search charges: 1, all of it (nothing hides it); 0,
  // none (the backward pass hides it). The truth lies between and depends on the whole program, so the
  // planner searches at both bounds and keeps the program whose iteration_time is shorter.
  double sync_weight = 1;
};

struct RhinoStatistics {
  std::size_t subgraphs = 0;
  std::size_t cones = 0;
  std::size_t ilps = 0;         // integer programs solved
  std::size_t ilps_reused = 0;  // answered from a sub-graph of the same structure
  bool optimal = true;          // every integer program proven optimal
};

// The program Rhino's search chooses on `options.mesh` (even shares).
[[nodiscard]] SpmdProgram rhino_search(const OpGraph& graph, const SpmdCluster& cluster,
                                       const RhinoSearchOptions& options, RhinoStatistics* statistics = nullptr);

}  // namespace dnnsim
