#include "planners/jobs/parameter_server.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

namespace dnnsim {

int default_ps_count(const JobRecord& job, int workers) {
  return std::max(1, static_cast<int>(std::ceil(workers * job.ps_per_worker - 1e-9)));
}

std::vector<std::pair<int, int>> worker_ps_choices(const JobRecord& job, int requested, int max_gpus) {
  std::vector<int> ws;
  for (int w = 1; w < requested; w *= 2) ws.push_back(w);
  ws.push_back(requested);
  std::vector<std::pair<int, int>> choices;
  for (int w : ws) {
    if (w > max_gpus) continue;
    std::vector<int> ks{0};
    if (job.ps_per_worker > 0) ks = {(w + 3) / 4, (w + 1) / 2, w, default_ps_count(job, w)};
    std::sort(ks.begin(), ks.end());
    ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
    for (int k : ks) choices.emplace_back(w, k);
  }
  return choices;
}

double nominal_rate(const JobSpeedModel& speed, const std::vector<ServerInfo>& servers, const JobRecord& job, int w,
                    int k) {
  Placement placement = nominal_placement(servers, w);
  if (k > 0) placement.ps = colocated_ps_layout(placement, k);
  return speed.iterations_per_second(job, placement, servers);
}

double requested_rate(const JobSpeedModel& speed, const std::vector<ServerInfo>& servers, const JobView& job) {
  const JobRecord& record = *job.record;
  return nominal_rate(speed, servers, record, job.gpus,
                      record.ps_per_worker > 0 ? default_ps_count(record, job.gpus) : 0);
}

double time_to_next_release(const ClusterState& state, double otherwise) {
  double next = std::numeric_limits<double>::infinity();
  for (const JobView& job : state.running) next = std::min(next, job.oracle_remaining().value());
  return std::isfinite(next) ? next : otherwise;
}

WaitingPrice waiting_price(const JobSpeedModel& speed, const ClusterState& state,
                           const std::vector<const JobView*>& window) {
  WaitingPrice price;
  double longest = 0.0;
  for (const JobView* job : window) {
    price.rate.push_back(requested_rate(speed, state.servers, *job));
    longest = std::max(longest, job->remaining_iterations() / price.rate.back());
  }
  price.wait = time_to_next_release(state, longest);
  return price;
}

std::vector<std::pair<int, int>> colocated_ps_layout(const Placement& workers, int k) {
  std::vector<int> counts(workers.slices.size(), 0);
  for (int i = 0; i < k; ++i) ++counts[static_cast<std::size_t>(i) % counts.size()];
  std::vector<std::pair<int, int>> layout;
  for (std::size_t i = 0; i < counts.size(); ++i)
    if (counts[i] > 0) layout.emplace_back(workers.slices[i].first, counts[i]);
  return layout;
}

std::optional<std::vector<std::pair<int, int>>> place_parameter_servers(const std::vector<int>& free_cpus,
                                                                        const Placement& workers, int k, int cores) {
  std::vector<int> free = free_cpus;
  std::map<int, int> placed;
  auto deal = [&](const std::vector<int>& order) {
    for (bool progress = true; k > 0 && progress;) {
      progress = false;
      for (int server : order) {
        if (k == 0) break;
        if (free[static_cast<std::size_t>(server)] < cores) continue;
        free[static_cast<std::size_t>(server)] -= cores;
        ++placed[server];
        --k;
        progress = true;
      }
    }
  };
  std::vector<int> local;
  for (const auto& [server, count] : workers.slices) local.push_back(server);
  deal(local);
  std::vector<int> others;
  for (int s = 0; s < static_cast<int>(free.size()); ++s)
    if (std::find(local.begin(), local.end(), s) == local.end()) others.push_back(s);
  std::stable_sort(others.begin(), others.end(),
                   [&](int a, int b) { return free[static_cast<std::size_t>(a)] > free[static_cast<std::size_t>(b)]; });
  deal(others);
  if (k > 0) return std::nullopt;
  return std::vector<std::pair<int, int>>(placed.begin(), placed.end());
}

Seconds ps_layer_sync_time(Bytes bytes, const Placement& placement, const std::vector<ServerInfo>& servers) {
  const double p = bytes.value();
  if (p <= 0) return Seconds(0);
  std::map<int, std::pair<int, int>> on;  // server → (workers, PSs)
  for (const auto& [server, count] : placement.slices) on[server].first += count;
  for (const auto& [server, count] : placement.ps) on[server].second += count;
  const double w = placement.gpus(), k = placement.parameter_servers();
  double push = 0.0;
  Seconds latency{0};
  for (const auto& [server, tasks] : on) {
    const ServerInfo& info = servers[static_cast<std::size_t>(server)];
    const double ws = tasks.first, ks = tasks.second;
    const double send = ws * p * (k - ks) / k, receive = (w - ws) * p * ks / k, local = ws * p * ks / k;
    push = std::max({push, send / info.nic_bandwidth.value(), receive / info.nic_bandwidth.value(),
                     local / info.intra_bandwidth.value()});
    if (send > 0 || receive > 0) latency = std::max(latency, info.link_latency);
  }
  return Seconds(2.0 * push) + latency * 2.0;
}

PsIteration ps_iteration(const std::vector<PsLayerTimes>& layers) {
  PsIteration result;
  for (const PsLayerTimes& layer : layers) {
    result.forward += layer.forward;
    result.backward += layer.backward;
  }
  Seconds backward_done{0}, finish{0};
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
    backward_done += it->backward;
    finish = std::max(finish, backward_done) + it->sync;
  }
  result.finish = std::max(finish, result.backward);
  return result;
}

}  // namespace dnnsim
