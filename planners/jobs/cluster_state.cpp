#include "planners/jobs/cluster_state.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace dnnsim {

int Placement::gpus() const {
  int total = 0;
  for (const auto& [server, count] : slices) total += count;
  return total;
}

int Placement::parameter_servers() const {
  int total = 0;
  for (const auto& [server, count] : ps) total += count;
  return total;
}

std::vector<int> Placement::shape() const {
  std::vector<int> result;
  for (const auto& [server, count] : slices) result.push_back(count);
  std::sort(result.begin(), result.end(), std::greater<>());
  return result;
}

std::string Placement::to_string() const {
  std::string text;
  for (const auto& [server, count] : slices) text += fmt::format("{}s{}:{}", text.empty() ? "" : "+", server, count);
  for (std::size_t i = 0; i < ps.size(); ++i)
    text += fmt::format("{}s{}:{}", i == 0 ? " ps " : "+", ps[i].first, ps[i].second);
  return text;
}

Placement nominal_placement(const std::vector<ServerInfo>& servers, int gpus) {
  Placement placement;
  for (std::size_t s = 0; s < servers.size() && gpus > 0; ++s) {
    const int take = std::min(gpus, servers[s].gpus);
    if (take > 0) placement.slices.emplace_back(static_cast<int>(s), take);
    gpus -= take;
  }
  return placement;
}

Seconds JobView::oracle_remaining() const {
  return solo_rate > 0.0 ? Seconds(remaining_iterations() / solo_rate) : Seconds(0.0);
}

Seconds JobView::oracle_duration() const {
  return solo_rate > 0.0 ? Seconds(total_iterations / solo_rate) : Seconds(0.0);
}

int ClusterState::total_gpus() const {
  int total = 0;
  for (const ServerInfo& server : servers) total += server.gpus;
  return total;
}

int ClusterState::total_free() const { return std::accumulate(free_gpus.begin(), free_gpus.end(), 0); }

}  // namespace dnnsim
