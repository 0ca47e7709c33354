// GADGET-like scheduling (planners/jobs/gadget.hpp): the ring embedding, the ring model with
// contention and the greedy, each on a small cluster derived by hand.
#include "planners/jobs/gadget.hpp"

#include <gtest/gtest.h>

#include "tests/support/planner_entries.hpp"

namespace dnnsim {
namespace {

// A job of `work` GPU-seconds per iteration that scales linearly (compute = work / w) and all-reduces
// `gradients` bytes per iteration: each member sends 2(w − 1)/w of them.
class LinearSpeed final : public JobSpeedModel {
 public:
  IterationCost iteration(const JobRecord& job, const Placement& placement,
                          const std::vector<ServerInfo>&) const override {
    const int w = placement.gpus();
    const double work = job.duration.value();  // the fixture keeps the per-iteration work in `duration`
    return IterationCost{Seconds(work / w), Seconds(0), Bytes(w > 1 ? 2.0 * (w - 1) / w * 1e9 : 0.0)};
  }
};

ServerInfo server(int rack, int gpus) {
  ServerInfo info{rack, gpus, "V100", 1.0};
  info.intra_bandwidth = BytesPerSecond(100e9);
  info.nic_bandwidth = BytesPerSecond(1e9);
  info.link_latency = Seconds(0);
  return info;
}

TEST(Gadget, RingEmbeddingBestFitServerThenRackThenCluster) {
  // Servers s0, s1 in rack 0 with 2 and 4 free GPUs, s2 in rack 1 with 3.
  const std::vector<ServerInfo> servers{server(0, 8), server(0, 8), server(1, 8)};
  const std::vector<int> free{2, 4, 3};
  // 3 GPUs: s2 (3 free) fits best; 4: s1.
  EXPECT_EQ(ring_embedding(servers, free, 3)->to_string(), "s2:3");
  EXPECT_EQ(ring_embedding(servers, free, 4)->to_string(), "s1:4");
  // 5: no server; rack 0 has 6 free: s1's 4 then 1 of s0. Rack 1 has 3 only.
  EXPECT_EQ(ring_embedding(servers, free, 5)->to_string(), "s0:1+s1:4");
  // 8: no rack; by descending free GPUs s1 (4), s2 (3), s0 (1).
  EXPECT_EQ(ring_embedding(servers, free, 8)->to_string(), "s0:1+s1:4+s2:3");
  EXPECT_FALSE(ring_embedding(servers, free, 10).has_value());
}

TEST(Gadget, RingTimeIsTheSlowestHopWithNicsSharedByRings) {
  std::vector<ServerInfo> servers{server(0, 8), server(0, 8)};
  servers[0].link_latency = servers[1].link_latency = Seconds(10e-6);
  const IterationCost solo{Seconds(1), Seconds(0), Bytes(1.6e9)};
  const Placement across{{{0, 1}, {1, 4}}};  // w = 5
  // Alone: min(100 GB/s inside s1, 1 GB/s per NIC) = 1 GB/s: 1.6 s + 2 · 4 hops · 10 µs.
  RingEstimate alone = ring_estimate(solo, across, servers, {0, 0});
  EXPECT_DOUBLE_EQ(alone.bandwidth.value(), 1e9);
  EXPECT_NEAR(alone.all_reduce.value(), 1.6 + 8 * 10e-6, 1e-12);
  EXPECT_NEAR(alone.iteration.value(), 2.6 + 8 * 10e-6, 1e-12);
  // Another ring already through s1's NIC: it gets half, 0.5 GB/s, and 3.2 s.
  RingEstimate shared = ring_estimate(solo, across, servers, {0, 1});
  EXPECT_DOUBLE_EQ(shared.bandwidth.value(), 0.5e9);
  EXPECT_NEAR(shared.all_reduce.value(), 3.2 + 8 * 10e-6, 1e-12);
  // One server: its intra bandwidth, no NIC, no hop latency: 1.6e9 / 100e9 = 16 ms.
  EXPECT_NEAR(ring_estimate(solo, Placement{{{1, 4}}}, servers, {0, 3}).all_reduce.value(), 0.016, 1e-12);
}

struct GadgetFixture {
  std::vector<JobRecord> records;
  ClusterState state;
  LinearSpeed speed;
  std::unique_ptr<PlacementPolicy> placement = testing::make_placement("consolidated");

  // Two 4-GPU servers of one rack (100 GB/s inside, 1 GB/s NICs); jobs (GPUs asked, work per
  // iteration in GPU-seconds, iterations), all queued.
  GadgetFixture(std::vector<std::tuple<int, double, double>> jobs) {
    state.servers = {server(0, 4), server(0, 4)};
    state.free_gpus = {4, 4};
    records.reserve(jobs.size());
    for (const auto& [gpus, work, iterations] : jobs) {
      JobRecord record;
      record.id = "j" + std::to_string(records.size());
      record.gpus = gpus;
      record.duration = Seconds(work);
      records.push_back(record);
      JobView view;
      view.id = records.size() - 1;
      view.gpus = gpus;
      view.total_iterations = iterations;
      state.queued.push_back(view);
    }
    for (std::size_t i = 0; i < records.size(); ++i) state.queued[i].record = &records[i];
  }
  std::vector<Decision> decide(const std::string& name = "gadget", testing::OptionValues options = {}) {
    return testing::make_scheduler(name, speed, *placement, options)->decide(state, SchedulerEvent::arrival);
  }
};

// Slot Δ = 600 s. Job A asks 8 GPUs, 8 GPU-s per iteration, 1,000 iterations; job B asks 4, 4 GPU-s,
// 100 iterations. U = min(Δ / t_iter, remaining) / K. Per-GPU gains from nothing:
//   B on 1 GPU: t = 4 s, 150 iterations capped at 100: U = 1, gain 1 — B first, and more GPUs add
//     nothing to B (U stays 1).
//   A on 1 GPU: t = 8 s, 75 it, U = 0.075. On 2 (one server): t = 4 + 1e9/100e9 = 4.01 s, U = 0.14963:
//     marginal gain over 1 GPU 0.07463. On 4: t = 2 + 1.5e9/100e9 = 2.015 s, U = 0.29777, marginal
//     over 2 GPUs (0.29777 − 0.14963)/2 = 0.07407. On 8 GPUs A would cross the 1 GB/s NICs
//     (t = 1 + 1.75 s) and besides only 7 GPUs are left after B: infeasible.
// So B gets 1 GPU, then A grows 1 → 2 → 4 GPUs on the other server (B's server has 3 left).
TEST(Gadget, GreedyPlacesByMarginalUtilityPerGpu) {
  GadgetFixture f({{8, 8.0, 1000.0}, {4, 4.0, 100.0}});
  const std::vector<Decision> decisions = f.decide();
  ASSERT_EQ(decisions.size(), 2u);
  EXPECT_EQ(decisions[0].job, 0u);
  EXPECT_EQ(decisions[0].placement.gpus(), 4);
  EXPECT_EQ(decisions[0].placement.servers(), 1);
  EXPECT_EQ(decisions[1].job, 1u);
  EXPECT_EQ(decisions[1].placement.gpus(), 1);
  EXPECT_NE(decisions[0].placement.slices[0].first, decisions[1].placement.slices[0].first);
}

// The energy utility charges ε · w · Δ/3600 per slot: at ε = 1 per GPU-hour a GPU costs 1/6 of
// utility per 600 s slot, more than A's 0.075 on one GPU: A is not started; B's gain 1 − 1/6 > 0.
TEST(Gadget, EnergyWeightCanMakeAJobNotWorthItsGpus) {
  GadgetFixture f({{8, 8.0, 1000.0}, {4, 4.0, 100.0}});
  const std::vector<Decision> decisions = f.decide("gadget-energy", {{"energy_weight", 1.0}});
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].job, 1u);
  EXPECT_EQ(decisions[0].placement.gpus(), 1);
}

}  // namespace
}  // namespace dnnsim
