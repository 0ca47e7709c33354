// Placement policies (planners/jobs/placement.hpp) on hand-built clusters: what each must choose.
#include "planners/jobs/placement.hpp"

#include <gtest/gtest.h>

#include "tests/support/planner_entries.hpp"

namespace dnnsim {
namespace {

// Servers 0–3 in rack 0, 4–7 in rack 1; 4 GPUs each; servers 4–7 are a faster type.
ClusterState two_racks() {
  ClusterState state;
  for (int s = 0; s < 8; ++s) state.servers.push_back(ServerInfo{s / 4, 4, s < 4 ? "T4" : "V100", s < 4 ? 0.5 : 1.0});
  state.free_gpus = std::vector<int>(8, 4);
  return state;
}

JobView job_of(int gpus) {
  JobView job;
  job.gpus = gpus;
  return job;
}

Placement place(const std::string& name, const ClusterState& state, int gpus) {
  const auto policy = testing::make_placement(name, 1);
  auto where = policy->place(state, state.free_gpus, job_of(gpus));
  EXPECT_TRUE(where.has_value());
  return where.value_or(Placement{});
}

TEST(Placement, ConsolidatedBestFitsOneServer) {
  ClusterState state = two_racks();
  state.free_gpus = {4, 2, 3, 4, 4, 4, 4, 4};
  // 2 GPUs: the server with the fewest free GPUs that holds them (server 1, 2 free).
  EXPECT_EQ(place("consolidated", state, 2).to_string(), "s1:2");
}

TEST(Placement, ConsolidatedFewestServersThenOneRack) {
  ClusterState state = two_racks();
  state.free_gpus = {2, 2, 2, 2, 4, 4, 0, 0};
  // 8 GPUs: rack 1 holds them on 2 servers (4 + 4), rack 0 would need 4: rack 1.
  EXPECT_EQ(place("consolidated", state, 8).to_string(), "s4:4+s5:4");
}

TEST(Placement, TopologyAwarePrefersOneRackOverFewerServers) {
  ClusterState state = two_racks();
  state.free_gpus = {3, 3, 3, 0, 4, 1, 0, 0};
  // 9 GPUs: rack 0 holds them on 3 servers; across racks 4 + 3 + 3 would be 3 servers too but 2 racks.
  const Placement where = place("topology-aware", state, 9);
  EXPECT_EQ(where.to_string(), "s0:3+s1:3+s2:3");
}

TEST(Placement, HeterogeneityAwareTakesTheFastestTypeThatFits) {
  ClusterState state = two_racks();
  EXPECT_EQ(place("heterogeneity-aware", state, 4).to_string(), "s4:4");
  state.free_gpus = {4, 4, 4, 4, 1, 1, 1, 0};
  // Only 3 V100s free: the job goes to the T4s, consolidated.
  EXPECT_EQ(place("heterogeneity-aware", state, 4).to_string(), "s0:4");
}

TEST(Placement, RandomIsSeededAndTakesFreeGpusOnly) {
  ClusterState state = two_racks();
  state.free_gpus = {0, 1, 0, 2, 0, 0, 3, 0};
  const Placement a = place("random", state, 5);
  const Placement b = place("random", state, 5);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.gpus(), 5);
  for (const auto& [server, count] : a.slices) EXPECT_LE(count, state.free_gpus[server]);
  const auto policy = testing::make_placement("random", 1);
  EXPECT_FALSE(policy->place(state, state.free_gpus, job_of(7)).has_value());
}

}  // namespace
}  // namespace dnnsim
