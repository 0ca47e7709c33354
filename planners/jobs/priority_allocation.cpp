#include "planners/jobs/priority_allocation.hpp"

#include <map>

namespace dnnsim {

std::vector<Decision> allocate_in_order(const ClusterState& state, const std::vector<JobId>& order,
                                        const PlacementPolicy& placement, AllocationMode mode) {
  std::map<JobId, const JobView*> running;
  std::map<JobId, const JobView*> queued;
  for (const JobView& job : state.running) running.emplace(job.id, &job);
  for (const JobView& job : state.queued) queued.emplace(job.id, &job);

  std::vector<Decision> decisions;
  std::vector<int> free = state.free_gpus;
  auto start = [&](const JobView& job) {
    auto where = placement.place(state, free, job);
    if (!where) return false;
    for (const auto& [server, count] : where->slices) free[server] -= count;
    decisions.push_back(Decision{Decision::Kind::start, job.id, std::move(*where)});
    return true;
  };

  if (mode != AllocationMode::preemptive) {
    for (JobId id : order) {
      auto it = queued.find(id);
      if (it == queued.end()) continue;
      if (!start(*it->second) && mode == AllocationMode::non_preemptive_strict) break;
    }
    return decisions;
  }

  // Preemptive: first choose by GPU count (the order's prefix that fits the cluster, skipping jobs
  // that do not fit what is left), then release the losers and place the winners that wait.
  int budget = state.total_gpus();
  std::vector<const JobView*> winners;
  std::map<JobId, bool> wins;
  // Two jobs packed on one GPU (Gandiva) hold it once: the second of a pair to win costs nothing, and
  // the GPU is freed only when both lose.
  for (JobId id : order) {
    const JobView* job = running.count(id) ? running[id] : (queued.count(id) ? queued[id] : nullptr);
    if (job == nullptr || wins.count(id)) continue;
    const bool shares = job->packed_with && wins.count(*job->packed_with);
    if (!shares && job->gpus > budget) continue;
    if (!shares) budget -= job->gpus;
    wins[id] = true;
    winners.push_back(job);
  }
  for (const auto& [id, job] : running) {
    if (wins.count(id)) continue;
    decisions.push_back(Decision{Decision::Kind::preempt, id, {}});
    const bool partner_keeps_it = job->packed_with && (wins.count(*job->packed_with) || *job->packed_with < id);
    if (!partner_keeps_it)
      for (const auto& [server, count] : job->placement->slices) free[server] += count;
  }
  for (const JobView* job : winners)
    if (!running.count(job->id)) start(*job);  // fragmentation may leave it waiting
  return decisions;
}

}  // namespace dnnsim
