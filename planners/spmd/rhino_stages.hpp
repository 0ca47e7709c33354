// Rhino's pipeline stage partitioning of a graph that need not be a chain (alibaba/TePDist
// hlo_graph_sketch.cc StagePlan, InferStageRangeByFlops and IlpStageModel): without first putting
// the DAG in a line, every operator gets a stage s_i, and an integer program (COIN-OR Cbc) minimizes
// the bytes that cross stage boundaries. TePDist's model has an integer s_i and a big-M "across flag"
// per edge; here s_i is written with binaries z_ik = [s_i ≤ k], k < S − 1 (s_i = Σ_k (1 − z_ik)), so
// that every constraint is a difference of two variables and the program's matrix is totally
// unimodular (a closure problem: Cbc's root LP is integral, seconds become milliseconds on the zoo):
//   min Σ_(u→v) bytes(u) · Σ_k (z_uk − z_vk)   the bytes of u times the boundaries they cross
//   z_vk ≤ z_uk                                 for every edge u → v (stages never go back)
//   z_ik ≤ z_i(k+1)
//   z_ik = 0 for k < asap_i, 1 for k ≥ alap_i   balance: stage = ⌊(FLOPs before i − tolerance + FLOPs_i / 2) / per
//   stage⌋
//                             at the earliest and S − 1 − ⌊(FLOPs after i + FLOPs_i / 2 − tolerance) / per
//                             stage⌋ at the latest, per stage = total / S, tolerance = unbalanced × per stage
//   1 + k − u ≤ Σ_i FLOPs_i · z_ik / per stage ≤ 1 + k + u   stages 0..k hold k + 1 stages' FLOPs (u: unbalanced)
// where "before" and "after" are all the FLOPs of the operator's ancestors and descendants. The last
// rows are not TePDist's: its windows alone bound a chain's stages but not parallel branches (a
// diamond's two branches may both land in the first stage). They cost the matrix its unimodularity
// but not its speed on the zoo (inception, 253 operators, 8 stages: under 0.1 s). A tensor
// crossing two boundaries counts twice (it is forwarded through the stage between, as the pipeline
// lowering sends it) and once per reader (TePDist's per-user flags). Parameters are not variables:
// each goes with its first reader.
#pragma once

#include <optional>
#include <vector>

#include "models/spmd/op_graph.hpp"

namespace dnnsim {

struct StagePartition {
  std::vector<int> stage;  // of each operator
  double cut_bytes = 0;    // the objective: bytes × boundaries crossed, per edge
  bool optimal = false;    // proven by Cbc within the limit
};

// `stages` ≥ 2 stages; `unbalanced`: TePDist's UNBALANCED_RATIO as a fraction (0.08). None when the
// windows admit no partition (a graph too small or too unbalanced for that many stages).
[[nodiscard]] std::optional<StagePartition> partition_stages(const OpGraph& graph, int stages, double unbalanced,
                                                             double seconds);

// The FLOPs of each stage's operators (forward), for balance checks and estimates.
[[nodiscard]] std::vector<double> stage_flops(const OpGraph& graph, const std::vector<int>& stage, int stages);

}  // namespace dnnsim
