// The allocation step most schedulers share (Tiresias' simulator, Helios', Blox's "priority then
// place"): given jobs in priority order, gang-allocate them greedily.
//   preemptive    walk the order over running + queued jobs; a running job keeps its GPUs if its turn
//                 comes while they are still counted free; jobs that lose their turn are preempted;
//                 queued jobs are placed through the placement policy on what is left.
//   non-preemptive  running jobs keep their GPUs; queued jobs are started in order; `backfill` lets a
//                 later job start when the head does not fit (Tiresias' `fjf`), otherwise the walk
//                 stops at the first job that does not fit (strict FIFO / YARN-CS).
#pragma once

#include <vector>

#include "planners/jobs/cluster_state.hpp"
#include "planners/jobs/placement.hpp"

namespace dnnsim {

enum class AllocationMode { preemptive, non_preemptive_strict, non_preemptive_backfill };

// `order`: job ids, highest priority first; ids not in state.running/queued are ignored, running
// jobs absent from `order` are preempted in preemptive mode and kept otherwise.
[[nodiscard]] std::vector<Decision> allocate_in_order(const ClusterState& state, const std::vector<JobId>& order,
                                                      const PlacementPolicy& placement, AllocationMode mode);

}  // namespace dnnsim
