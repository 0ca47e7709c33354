// The built-in planners (registered by builtin_planners(), planner.hpp) and the pieces of them the
// unit tests check on their own. Formulas and sources: docs/planners.md.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "planners/parallel/formula2_search.hpp"
#include "planners/parallel/planner.hpp"
#include "planners/parallel/stage_cost.hpp"

namespace dnnsim {

// GPipe's equal split (Huang et al., NeurIPS'19 §2.2): p = its option `stages` (default: one per GPU)
// stages, or p·v virtual stages with v = chunks_per_stage, of equal parts (uniform_split: whole
// transformer blocks, else layers); stage s on GPUs [s·G/p, (s+1)·G/p). Scored with Formula 2
// (chunks > 1: the p·v virtual stages as a chain, a bound, not the interleaved schedule's time).
class UniformPlanner final : public Planner {
 public:
  [[nodiscard]] static OptionSchema options();
  [[nodiscard]] PlanResult plan(const PlanRequest& request) const override;
};
// Layer counts of an equal split of `layers` into `parts` (the first layers % parts one more).
[[nodiscard]] std::vector<LayerRange> equal_split(std::size_t layers, std::size_t parts);
// Megatron-LM's split (Narayanan et al., SC'21 §2.2: num_layers / (p·v) transformer blocks per model
// chunk): the model's blocks (model_blocks) split by equal_split — where they do not divide, the first
// parts get one more, a layout Megatron-LM refuses — the layers before the first block (embedding)
// with the first part, and the layers after a block with that block (final norm and head: the last
// part). With fewer blocks than parts, or none: equal_split of the layers.
[[nodiscard]] std::vector<LayerRange> uniform_split(const LayerModel& model, std::size_t parts);

// PipeDream's hierarchical dynamic program (Narayanan et al., SOSP'19 §3.1), level 1 the GPUs of a
// node (bandwidth B_1: the slowest path inside a node), level 2 the nodes (B_2: the slowest path
// between nodes); one level over all GPUs (slowest path) when nodes differ in size or with its
// option `flat` (PipeDream's optimizer run with a single level of `num_machines` workers):
//   T^k(i→j, m) = (1/m)·max(A^{k−1}(i→j, m_{k−1}), 2(m−1)·W(i→j)/B_k)
//   A^k(i→j, m) = min_{i≤s<j} min_{1≤m'<m} max(A^k(i→s, m−m'), 2·a_s/B_k, T^k(s+1→j, m'))
//   A^k(i→j, m) also takes T^k(i→j, m) (one stage replicated m times); A^0(i→j) = Σ T_l on one GPU.
// T_l is forward + backward of one micro-batch (shared stage costs), W the stage's gradient bytes,
// a_s the micro-batch's activation after layer s. The DP keeps a stage if it fits with one micro-batch
// in flight (it does not know the stage's position); the chosen plan is then checked exactly.
// Prediction: M × the slowest stage under pipedream-async (PipeDream's steady state), (M + S − 1) ×
// it under a synchronous schedule (DAPPLE's Table 6 comparison).
class PipeDreamPlanner final : public Planner {
 public:
  [[nodiscard]] static OptionSchema options();
  [[nodiscard]] PlanResult plan(const PlanRequest& request) const override;
};

// The objective of PipeDream's DP for a flat plan on one level of bandwidth `bandwidth`: the slowest
// of its stages' T^1 and of its cuts' 2·a/B (the tests' oracle scores with it).
[[nodiscard]] Seconds pipedream_stage_time(const StageCostModel& cost, LayerRange layers, DeviceId device, int replicas,
                                           BytesPerSecond bandwidth);
[[nodiscard]] Seconds pipedream_cut_time(const StageCostModel& cost, std::size_t last, BytesPerSecond bandwidth);

// DAPPLE's placement policies over the machines (nodes) of the cluster (Fan et al., PPoPP'21 §4.2,
// Fig. 5): Fresh First (GPUs of unused machines first), Append First (GPUs of partly used machines
// first), Scatter First (one GPU from each machine with free GPUs in turn). Machines of one GPU model
// and size are interchangeable: a set of used GPUs is characterised by how many each machine gives.
class MachinePlacement final : public StagePlacementPolicy {
 public:
  explicit MachinePlacement(const ClusterView& cluster);
  [[nodiscard]] std::vector<std::vector<DeviceId>> place(const std::vector<bool>& used,
                                                         std::span<const DeviceId> previous, int count) const override;
  [[nodiscard]] std::string state_key(const std::vector<bool>& used) const override;

 private:
  std::vector<std::vector<DeviceId>> machines_;  // GPUs of each node, ascending
  std::vector<std::size_t> machine_class_;       // equal for interchangeable machines
};

class DapplePlanner final : public Planner {
 public:
  [[nodiscard]] PlanResult plan(const PlanRequest& request) const override;
};

// Placements read off the bandwidth matrix for the pipeline-mapping planner ("-like" Luo et al.,
// INFOCOM'22; papers-parallelism.md §4.2). Islands: the connected components of the GPUs joined by
// their fastest links (the largest bandwidth found in the matrix). Candidate groups:
//  - Fresh/Append/Scatter First over the islands, as DAPPLE does over machines;
//  - nearest to the previous stage: grow the group one GPU at a time, taking the unused GPU with the
//    fastest path from the previous stage's GPUs (then the fastest path to the group), so that the
//    cut crosses the best links the matrix offers.
// GPUs of one island are interchangeable (the fastest links join them all): a used set is keyed by
// how many GPUs each island gives; islands are NOT assumed interchangeable (unlike DAPPLE's machines).
class BandwidthPlacement final : public StagePlacementPolicy {
 public:
  explicit BandwidthPlacement(const ClusterView& cluster);
  [[nodiscard]] std::vector<std::vector<DeviceId>> place(const std::vector<bool>& used,
                                                         std::span<const DeviceId> previous, int count) const override;
  // The GPUs each island gives, islands that a symmetry of the bandwidth matrix swaps counted as
  // one class (the constructor): without it the states of 8 identical nodes on one switch are
  // every ordered count vector, and a 64-GPU search outgrew 20 GB.
  [[nodiscard]] std::string state_key(const std::vector<bool>& used) const override;

 private:
  const ClusterView& cluster_;
  std::vector<std::vector<DeviceId>> islands_;
  std::vector<std::size_t> island_class_;  // equal for interchangeable islands
};

// Searches with BandwidthPlacement and with DAPPLE's MachinePlacement and keeps the faster plan, so
// that it is never slower than dapple under the same cost model (L1) on any topology.
class PipelineMappingPlanner final : public Planner {
 public:
  [[nodiscard]] PlanResult plan(const PlanRequest& request) const override;
};

// Fresh/Append/Scatter First over groups of GPUs (machines or islands), shared by both policies.
[[nodiscard]] std::vector<std::vector<DeviceId>> group_policies(const std::vector<std::vector<DeviceId>>& groups,
                                                                const std::vector<bool>& used, int count);
// A state key over groups of GPUs: the used GPUs of each group with its class ("class:taken," sorted),
// so that used sets differing by a permutation of groups of one class share a key.
[[nodiscard]] std::string group_usage_key(const std::vector<std::vector<DeviceId>>& groups,
                                          const std::vector<std::size_t>& group_class, const std::vector<bool>& used);

}  // namespace dnnsim
