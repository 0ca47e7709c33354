// The bounds of the Formula 2 search (see formula2_bounds.hpp).
#include "planners/parallel/formula2_bounds.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dnnsim {

std::vector<int> fewest_gpus(const StageCostModel& cost, const std::vector<std::size_t>& boundaries) {
  const std::size_t layers = cost.layer_count();
  const int devices = static_cast<int>(cost.device_count());
  const int impossible = devices + 1;
  const int max_replicas = std::min(devices, cost.micro_batch_size());
  std::vector<int> fewest(layers + 1, impossible);
  fewest[layers] = 0;
  std::vector<int> shorter(layers + 1, impossible);  // G(·, t − 1)
  shorter[layers] = 0;
  for (int followers = 0; followers < std::min<int>(devices, static_cast<int>(layers)); ++followers) {
    int in_flight = cost.request().micro_batches;  // I(t)
    for (int stages = followers + 1; stages <= devices; ++stages)
      in_flight = std::min(in_flight, cost.in_flight(stages - 1 - followers, stages));
    std::vector<int> current(layers + 1, impossible);  // G(·, t); a stage is never empty
    for (std::size_t b = 0; b + 1 < boundaries.size(); ++b) {
      const std::size_t j = boundaries[b];
      for (int replicas = 1; replicas <= max_replicas; ++replicas) {
        const std::size_t last_end = cost.max_stage_end(j, replicas, std::max(0, in_flight));
        for (std::size_t e = b + 1; e < boundaries.size() && boundaries[e] <= last_end; ++e)
          current[j] = std::min(current[j], replicas + shorter[boundaries[e]]);
      }
    }
    for (std::size_t j = 0; j < layers; ++j) fewest[j] = std::min(fewest[j], current[j]);
    shorter = std::move(current);
  }
  return fewest;
}

LowerBound formula2_lower_bound(const PrefixSummary& prefix, Seconds cut_in, PassTimes stage, PassTimes last,
                                int micro_batches, Seconds last_all_reduce) {
  const double m = micro_batches - 1.0;
  const double warm_up = prefix.forward_sum.value() + cut_in.value() + stage.forward.value();
  const double ending = prefix.ending.value() + cut_in.value();
  LowerBound bound;
  bound.stage = warm_up + m * (stage.forward + stage.backward).value() + std::max(ending, 0.0) + stage.backward.value();
  const double last_term = warm_up + last.forward.value() + m * (last.forward + last.backward).value() +
                           std::max(ending + stage.backward.value(), last_all_reduce.value()) + last.backward.value();
  bound.whole = std::max({prefix.alone.value(), bound.stage, last_term});
  return bound;
}

bool exceeds(double lower_bound, double limit) {
  if (limit == std::numeric_limits<double>::infinity()) return false;
  if (limit == -std::numeric_limits<double>::infinity()) return true;
  return lower_bound > limit + 1e-9 * std::abs(limit);
}

}  // namespace dnnsim
