#include "planners/gnn/core_assignment.hpp"

#include <stdexcept>
#include <tuple>
#include <utility>

namespace dnnsim::gnn {

namespace {
// The stage with the largest work / cores (lowest index on ties) and that time.
std::pair<std::uint32_t, double> slowest(const std::vector<double>& work, const std::vector<std::uint32_t>& cores) {
  std::uint32_t stage = 0;
  double time = -1;
  for (std::uint32_t i = 0; i < work.size(); ++i)
    if (work[i] / cores[i] > time) {
      time = work[i] / cores[i];
      stage = i;
    }
  return {stage, time};
}
}  // namespace

CoreAssignment assign_cores(const std::vector<double>& stage_work, std::uint32_t total_cores) {
  if (stage_work.empty() || total_cores < stage_work.size())
    throw std::invalid_argument("assign_cores: every stage needs at least one core");
  CoreAssignment result{std::vector<std::uint32_t>(stage_work.size(), 1)};
  for (auto spare = total_cores - static_cast<std::uint32_t>(stage_work.size()); spare > 0; --spare)
    ++result.cores[slowest(stage_work, result.cores).first];
  std::tie(result.bottleneck_stage, result.bottleneck) = slowest(stage_work, result.cores);
  return result;
}

}  // namespace dnnsim::gnn
