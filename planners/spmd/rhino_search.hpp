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
// its computation, gradient syncs and own collectives; an edge's, the conversion of its tensor.
#pragma once

#include <cstddef>

#include "planners/spmd/sharding.hpp"

namespace dnnsim {

struct RhinoSearchOptions {
  Mesh mesh;
  int group = 1;            // critical nodes per sub-graph
  bool fine = true;         // the finer cone roots (thorough) or not (fast)
  double ilp_seconds = 60;  // Cbc's limit per integer program
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
