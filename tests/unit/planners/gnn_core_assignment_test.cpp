#include <gtest/gtest.h>

#include <algorithm>

#include "planners/gnn/core_assignment.hpp"

namespace dnnsim::gnn {
namespace {

// The smallest bottleneck over every split of `cores` into positive parts, by enumeration.
double brute_force(const std::vector<double>& work, std::uint32_t cores, std::size_t stage = 0) {
  if (stage + 1 == work.size()) return work[stage] / cores;
  double best = 1e300;
  for (std::uint32_t c = 1; c + (work.size() - stage - 1) <= cores; ++c)
    best = std::min(best, std::max(work[stage] / c, brute_force(work, cores - c, stage + 1)));
  return best;
}

// Sampling 6, feature retrieval 3, H2D preparation 1 core-ms per batch on 10 cores: 6/6 = 3/3 = 1/1
// = 1 ms is a perfectly balanced split, which the greedy must find.
TEST(GnnCoreAssignment, BalancedSplitIsFound) {
  const CoreAssignment a = assign_cores({6, 3, 1}, 10);
  EXPECT_EQ(a.cores, (std::vector<std::uint32_t>{6, 3, 1}));
  EXPECT_DOUBLE_EQ(a.bottleneck, 1.0);
}

TEST(GnnCoreAssignment, MatchesBruteForce) {
  for (const auto& work : std::vector<std::vector<double>>{{5, 1, 1}, {2.5, 7, 0.3}, {1, 1, 1, 9}, {4, 0, 2}})
    for (std::uint32_t cores = static_cast<std::uint32_t>(work.size()); cores <= 16; ++cores)
      EXPECT_DOUBLE_EQ(assign_cores(work, cores).bottleneck, brute_force(work, cores)) << cores;
}

TEST(GnnCoreAssignment, TooFewCoresIsAnError) { EXPECT_THROW((void)assign_cores({1, 1, 1}, 2), std::invalid_argument); }

}  // namespace
}  // namespace dnnsim::gnn
