#include "planners/jobs/pollux_tuned.hpp"

#include <array>
#include <cmath>

namespace dnnsim {
namespace {

constexpr std::array<int, 10> kReplicaCounts{1, 2, 4, 6, 8, 12, 16, 24, 32, 48};  // applications.py
constexpr int kGpusPerNode = 4;          // "Assuming a cluster of 16 nodes each with 4 GPUs"
constexpr double kMaxJct = 12 * 3600.0;  // applications.py: best_jct < 12 * 3600

}  // namespace

std::vector<PolluxTunedConfiguration> pollux_tuned_configurations(const PolluxGoodput& goodput,
                                                                  const std::string& application, double lo,
                                                                  double hi) {
  JobRecord job;
  job.model = application;
  const PolluxSpeedModel& speed = goodput.speed();
  const auto& app = speed.application(job);
  const double min_local = app.min_local_bsz;
  const double max_local = goodput.max_local(job);
  const double largest = app.validation.back().batch;
  std::vector<PolluxTunedConfiguration> result;
  PolluxTunedConfiguration base;
  for (const int replicas : kReplicaCounts) {
    if (replicas * min_local > largest) break;
    Placement placement;
    for (int left = replicas, node = 0; left > 0; left -= kGpusPerNode, ++node)
      placement.slices.emplace_back(node, std::min(left, kGpusPerNode));
    PolluxTunedConfiguration best;
    for (const auto& [batch, iterations] : app.target) {
      const double local = std::ceil(batch / replicas - kPolluxRounding);
      if (local < min_local) continue;
      const auto [atomic, accum] = split_local_batch(local, max_local, false);
      const IterationCost step = speed.measured(job, placement, atomic);
      const double jct = iterations * (step.total().value() + accum * step.compute.value());
      if (best.batch == 0 || jct < best.jct) best = {replicas, static_cast<int>(batch), jct};
    }
    if (replicas == 1)
      base = best;
    else if (best.batch > 0 && best.jct < kMaxJct && lo < base.jct / best.jct / replicas &&
             base.jct / best.jct / replicas < hi)
      result.push_back(best);
  }
  if (result.empty()) result.push_back(base);
  return result;
}

PolluxConfigurations pollux_tuned_configurations(const PolluxGoodput& goodput) {
  PolluxConfigurations all;
  for (const std::string& application : goodput.speed().models())
    for (const PolluxTunedConfiguration& c : pollux_tuned_configurations(goodput, application))
      all[application].emplace_back(c.replicas, c.batch);
  return all;
}

}  // namespace dnnsim
