// DAPPLE's planner (Fan et al., PPoPP'21 §4): Formula 2 with the pivot stage (Algorithm 1), the
// dynamic program over (j, m, g) (formula2_search.hpp) and the machine-level placement policies.
#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "planners/parallel/plan_clock.hpp"
#include "planners/parallel/planners.hpp"

namespace dnnsim {

std::vector<std::vector<DeviceId>> group_policies(const std::vector<std::vector<DeviceId>>& groups,
                                                  const std::vector<bool>& used, int count) {
  std::vector<int> free(groups.size(), 0);
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (DeviceId d : groups[g]) free[g] += used[d] ? 0 : 1;
  const auto fresh = [&](std::size_t g) { return free[g] == static_cast<int>(groups[g].size()); };
  // Takes the unused GPUs of the groups in `order`, lowest ids first, until `count`.
  const auto take_in_order = [&](const std::vector<std::size_t>& order) {
    std::vector<DeviceId> group;
    for (std::size_t g : order)
      for (DeviceId d : groups[g])
        if (!used[d] && static_cast<int>(group.size()) < count) group.push_back(d);
    return group;
  };
  std::vector<std::size_t> fresh_first;
  std::vector<std::size_t> append_first;
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (free[g] == 0) continue;
      if (fresh(g) == (pass == 0)) fresh_first.push_back(g);
      if (fresh(g) == (pass == 1)) append_first.push_back(g);
    }
  // Scatter First: one GPU from each group with unused GPUs in turn.
  std::vector<DeviceId> scatter;
  std::vector<std::size_t> next(groups.size(), 0);
  for (bool progress = true; progress && static_cast<int>(scatter.size()) < count;) {
    progress = false;
    for (std::size_t g = 0; g < groups.size() && static_cast<int>(scatter.size()) < count; ++g) {
      while (next[g] < groups[g].size() && used[groups[g][next[g]]]) ++next[g];
      if (next[g] < groups[g].size()) {
        scatter.push_back(groups[g][next[g]++]);
        progress = true;
      }
    }
  }
  std::vector<std::vector<DeviceId>> result;
  for (std::vector<DeviceId> group : {take_in_order(fresh_first), take_in_order(append_first), scatter}) {
    if (static_cast<int>(group.size()) != count) continue;
    std::sort(group.begin(), group.end());
    if (std::find(result.begin(), result.end(), group) == result.end()) result.push_back(std::move(group));
  }
  return result;
}

MachinePlacement::MachinePlacement(const ClusterView& cluster) {
  std::map<std::uint32_t, std::vector<DeviceId>> by_node;
  for (DeviceId d = 0; d < cluster.size(); ++d) by_node[cluster.devices[d].node].push_back(d);
  std::vector<std::tuple<std::string, std::size_t, double>> classes;
  for (auto& [node, members] : by_node) {
    const ClusterDevice& first = cluster.devices[members.front()];
    const auto key = std::make_tuple(first.gpu.name, members.size(), first.compute_efficiency);
    auto found = std::find(classes.begin(), classes.end(), key);
    if (found == classes.end()) found = classes.insert(classes.end(), key);
    machine_class_.push_back(static_cast<std::size_t>(found - classes.begin()));
    machines_.push_back(std::move(members));
  }
}

std::vector<std::vector<DeviceId>> MachinePlacement::place(const std::vector<bool>& used,
                                                           std::span<const DeviceId> /*previous*/, int count) const {
  return group_policies(machines_, used, count);
}

std::string group_usage_key(const std::vector<std::vector<DeviceId>>& groups,
                            const std::vector<std::size_t>& group_class, const std::vector<bool>& used) {
  std::vector<std::pair<std::size_t, int>> usage;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    int taken = 0;
    for (DeviceId d : groups[g]) taken += used[d] ? 1 : 0;
    usage.emplace_back(group_class[g], taken);
  }
  std::sort(usage.begin(), usage.end());
  std::string key;
  for (const auto& [usage_class, taken] : usage) {  // built once per candidate group
    key += std::to_string(usage_class);
    key += ':';
    key += std::to_string(taken);
    key += ',';
  }
  return key;
}

std::string MachinePlacement::state_key(const std::vector<bool>& used) const {
  return group_usage_key(machines_, machine_class_, used);
}

PlanResult DapplePlanner::plan(const PlanRequest& request) const {
  const PlanClock timer;
  const std::string cost_model = "DAPPLE Formula 2 (pivot stage)";
  if (std::string problem = request_problem(request, false); !problem.empty())
    return infeasible(std::move(problem), cost_model, 0, timer.elapsed());
  const StageCostModel cost(request);
  const MachinePlacement placement(request.cluster);
  const SearchOptions settings = formula2_settings(request.options);
  const SearchOutcome outcome = formula2_search(cost, placement, settings);
  return search_result(outcome, cost, cost_model, timer.elapsed(), settings.rerank);
}

}  // namespace dnnsim
