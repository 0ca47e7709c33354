// Rhino's decomposition of a graph for its strategy search (Zhang et al., "Auto-Parallelizing Large
// Models with Rhino", arXiv 2302.08141; its code alibaba/TePDist @12af478, cost_spmd_strategy.cc
// FindSubGraphs, HloSubGraph::FindConeRoots, ExtractCone; hlo_graph_sketch.cc FindCriticalInsts):
//  - critical nodes: operators through which the whole graph passes — after one, its output is the
//    only tensor that crosses (parameters aside: they are read where they are defined, TePDist's
//    GetAttr). The graph is cut into sub-graphs at critical nodes, `group` of them per sub-graph
//    (TePDist: critical_inst_num_per_group); the strategy search runs a dynamic program across
//    sub-graphs over the layout of the critical tensor between them.
//  - cones: within a sub-graph, roots are the operators whose output more than one operator of the
//    sub-graph reads, and those that nothing in it reads (its tail, outputs leaving it); at the
//    finer level also every operator with two operands or more computed in the sub-graph, and those
//    operands (FindConeRoots opt_level ≥ 2). A cone is a root with the operators only it reads,
//    transitively, up to other roots: a tree, whose strategy follows from its root's.
#pragma once

#include <optional>
#include <vector>

#include "models/spmd/op_graph.hpp"

namespace dnnsim {

struct RhinoCone {
  OpId root = 0;
  std::vector<OpId> ops;  // in id order (the root last)
};

struct RhinoSubgraph {
  OpId begin = 0, end = 0;       // operators [begin, end)
  std::optional<OpId> entering;  // the critical tensor produced before `begin` (none for the first)
  std::vector<RhinoCone> cones;  // in root order
};

// Operators after which only their own output (and parameters) cross into the rest of the graph.
[[nodiscard]] std::vector<OpId> critical_nodes(const OpGraph& graph);

// The sub-graphs between every `group`-th critical node, each cut into cones; `fine`: the finer
// roots (multi-operand operators and their operands).
[[nodiscard]] std::vector<RhinoSubgraph> decompose(const OpGraph& graph, int group, bool fine);

}  // namespace dnnsim
