// HAP's baselines (planners/spmd/spmd_baselines.cpp): DeepSpeed's expert parallelism with even shares
// and, with `shares: flops`, HAP's uneven experts under the same strategy (HAP §5.7).
#include <gtest/gtest.h>

#include "planners/spmd/spmd_cost.hpp"
#include "tests/support/spmd_fixtures.hpp"

namespace dnnsim {
namespace {

using testing::cluster_of;
using testing::plan_with;

// Eight experts over two devices of 30 TFLOP/s and two of 10: DeepSpeed gives each device 8/4 = 2
// experts; in proportion to FLOP/s the shares are 30/80 = 0.375 and 10/80 = 0.125, i.e. 3, 3, 1 and
// 1 whole experts, and each device computes that share of the experts operator.
TEST(DeepSpeedBaseline, FlopsSharesGiveTheFastDevicesMoreExperts) {
  const OpGraph g = testing::experts_layer(8);
  const SpmdCluster c = cluster_of({30e12, 30e12, 10e12, 10e12});
  const OpId e = testing::op_named(g, "experts");
  const SpmdPlan even = plan_with("deepspeed", g, c);
  EXPECT_EQ(device_shares(g, even.program, even.ratios, e), (std::vector<double>{0.25, 0.25, 0.25, 0.25}));
  const SpmdPlan uneven = plan_with("deepspeed", g, c, {{"shares", "flops"}});
  EXPECT_EQ(uneven.program.ops()[e].rule.inputs[1], Layout::split_rows);  // still expert parallel
  EXPECT_EQ(device_shares(g, uneven.program, uneven.ratios, e), (std::vector<double>{0.375, 0.375, 0.125, 0.125}));
}

}  // namespace
}  // namespace dnnsim
