// The CPU interference registry (models/gnn/cpu_interference.hpp): what each entry gives the `gnn`
// pipeline. The simulated effects are tested in tests/component/gnn_pipeline_test.cpp.
#include <gtest/gtest.h>

#include "models/gnn/cpu_interference.hpp"
#include "tests/support/options.hpp"

namespace dnnsim::gnn {
namespace {

TEST(GnnCpuInterference, NoneInterferesWithNothing) {
  const CpuInterference none = builtin_interference_models().at("none").value(Options{});
  EXPECT_FALSE(none.enabled);
  EXPECT_EQ(none.time_sliced, (std::array<double, kCpuRoles>{1, 1, 1, 1}));
}

TEST(GnnCpuInterference, MeasuredTrafficFollowsTheCpuCosts) {
  // Defaults, with the default costs (6.1 M sampled edges and 2.5 GB/s gathered per core-second):
  // sampling 64 B × 6.1 M = 390.4 MB/s per core-second, gathering 2 × 2.5 = 5 GB/s, the copy 1 B per
  // byte, dispatch nothing; copy pays no factor (it has no core work).
  const CpuInterference model = builtin_interference_models().at("measured").value(
      testing::options_of(builtin_interference_models(), "measured", {{"gather_time_sliced", 0.9}}));
  ASSERT_TRUE(model.enabled);
  const std::array<double, kCpuRoles> rates = model.traffic_rates(GnnCpuCosts{});
  EXPECT_NEAR(rates[0], 390.4e6, 1e-3);
  EXPECT_DOUBLE_EQ(rates[1], 5e9);
  EXPECT_DOUBLE_EQ(rates[2], 1.0);
  EXPECT_DOUBLE_EQ(rates[3], 0.0);
  EXPECT_EQ(model.time_sliced, (std::array<double, kCpuRoles>{0.73, 0.9, 1, 1}));
}

}  // namespace
}  // namespace dnnsim::gnn
