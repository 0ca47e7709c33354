// SMSG's symbolic cost model (Wang, Tachon, Li, Robert, Limet, "SMSG: Profiling-Free Parallelism
// Modeling for Distributed Training of DNN", IJPP 51(2/3):109–127, 2023), in the form of its public
// lineage, MindSpore's recursive partitioner (mindspore/ccsrc/frontend/parallel/auto_parallel/rec_core
// rec_cost.cc): every cost is an amount of data, in tensor elements, with no device speed, bandwidth,
// profile or calibration in it — so the strategy it ranks does not depend on the hardware.
//
// A cut divides one mesh axis of q devices (a two-way cut: q = 2) among an operator's shards; each
// operator kind has a cost per cut (its rules of planners/spmd/sharding.hpp), counted on the local
// shapes left by the cuts before it, in units of (q − 1)/q elements (the share a device lacks):
//   matmul C[m×n] = A[m×k]·B[k×n]:  cut m (rows)   k·n — B is needed whole by every shard (rec_cost's
//                                                  StrConcatDimI(j, k) = j·k/2 for q = 2)
//                                    cut n (columns) m·k — A is needed whole (StrConcatDimJ)
//                                    cut k (partial) m·n — the shards' partial C must be summed (StrReduceDimK)
//   any operator, generally: the elements of each operand a sharded rule reads whole (its gradient or
//   its gathering is the data exchanged), plus the elements of a partial output (to be summed); an
//   expert-parallel experts operator its routed rows out and back; a replicated rule its output.
// Redistribution (rec_cost's CostRedis): a tensor read in another layout than its producer's costs its
// local elements × `redistribution_weight` (MindSpore's REDIS_COEF = 16), except a replicated
// tensor read as a split (each shard keeps its slice: free).
#pragma once

#include <cstdint>
#include <vector>

#include "planners/spmd/sharding.hpp"

namespace dnnsim {

// A tensor's rows × columns on one device after the cuts made so far.
struct LocalShape {
  std::int64_t rows = 0;
  std::int64_t columns = 0;
  [[nodiscard]] std::int64_t elements() const { return rows * columns; }
};

// The symbolic cost of running operator `id` by `rule` on a cut of the axis, its operands and output of
// `shapes` (indexed by operator id: each tensor's local shape), in units of (q − 1)/q elements.
[[nodiscard]] std::int64_t symbolic_rule_cost(const OpGraph& graph, OpId id, const ShardingRule& rule,
                                              const std::vector<LocalShape>& shapes);
// A tensor of `elements` local elements produced as `from` and read as `to`.
[[nodiscard]] std::int64_t symbolic_redistribution(Layout from, Layout to, std::int64_t elements, std::int64_t weight);
// Whether `rule` can cut operator `id` on an axis of `q` devices: every dimension it splits keeps at
// least one row or column per device.
[[nodiscard]] bool cuttable(const OpGraph& graph, OpId id, const ShardingRule& rule,
                            const std::vector<LocalShape>& shapes, int q);
// The local shape of a tensor of `shape` after a cut of `q` that leaves it in `layout`.
[[nodiscard]] LocalShape after_cut(LocalShape shape, Layout layout, int q);

}  // namespace dnnsim
