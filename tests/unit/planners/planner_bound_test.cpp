// The exact reductions of the Formula 2 search (formula2_search.hpp): branch and bound over its
// transitions, the per-group costs looked up once (StageCostModel::GroupCosts) and completions
// scored from a prefix's summary (formula2_prefix.hpp), against the unreduced search, the
// per-device costs on a heterogeneous 8-GPU cluster and formula2_latency.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <span>

#include "dnnsim/source_paths.hpp"
#include "models/calibration/calibration.hpp"
#include "planners/parallel/formula2_prefix.hpp"
#include "planners/parallel/formula2_search.hpp"
#include "planners/parallel/planners.hpp"
#include "tests/support/planner_fixtures.hpp"

namespace dnnsim {
namespace {

using testing::make_request;
using testing::random_model;

// Two types: node0 holds 4 V100-16GB, node1 4 A100-40GB (NVLink 150 GB/s inside a node, 25 Gb/s
// between by default), so groups mix GPU classes and uneven shares (up to 4 distinct replica timings).
ClusterView two_type_cluster(double intra_bandwidth = 150e9, double inter_bandwidth = 3.125e9) {
  ClusterView cluster = testing::hierarchical_cluster(2, 4, intra_bandwidth, inter_bandwidth);
  const GpuSpec& a100 = *HardwareCatalog::builtin().find_gpu("A100-40GB-SXM");
  for (ClusterDevice& device : cluster.devices)
    if (device.node == 1) device.gpu = a100;
  return cluster;
}

// The bound skips only candidates that no kept set would take, so the outcome is the same with and
// without it, to the bit: the plan, its Formula 2, every kept plan, in order; and the skipped
// candidates are exactly those the unbounded search scores in addition. The fourth instance's slow
// links (1 GB/s, 0.5 GB/s) make the last stage's exposed all-reduce, a term of the bound, large.
TEST(Formula2Bound, SameOutcomeAsTheUnboundedSearch) {
  std::mt19937 random(20261126);
  std::size_t skipped = 0;
  for (int trial = 0; trial < 4; ++trial) {
    const ClusterView cluster = trial < 3 ? two_type_cluster() : two_type_cluster(1e9, 0.5e9);
    PlanRequest request = make_request(random_model(random, 6 + trial), cluster, 32, 4);
    request.memory.precision = Precision::mixed;
    const StageCostModel cost(request);
    for (int policy_kind = 0; policy_kind < 2; ++policy_kind) {
      const MachinePlacement machines(request.cluster);
      const BandwidthPlacement bandwidth(request.cluster);
      const StagePlacementPolicy& policy =
          policy_kind == 0 ? static_cast<const StagePlacementPolicy&>(machines) : bandwidth;
      const SearchOutcome bounded = formula2_search(cost, policy);
      const SearchOutcome full = formula2_search(StageCostModel(request), policy, SearchOptions{.bound = false});
      SCOPED_TRACE(::testing::Message() << "trial " << trial << ", policy " << policy_kind);
      ASSERT_FALSE(full.stages.empty());
      EXPECT_EQ(bounded.stages, full.stages);
      EXPECT_EQ(bounded.latency.value(), full.latency.value());
      ASSERT_EQ(bounded.kept.size(), full.kept.size());
      for (std::size_t k = 0; k < full.kept.size(); ++k) {
        EXPECT_EQ(bounded.kept[k].stages, full.kept[k].stages);
        EXPECT_EQ(bounded.kept[k].latency.value(), full.kept[k].latency.value());
      }
      EXPECT_EQ(full.bounded, 0u);
      EXPECT_EQ(bounded.candidates + bounded.bounded, full.candidates);
      skipped += bounded.bounded;
    }
  }
  // 13,037 with this seed; 12,874 without the last stage's all-reduce in the bound.
  EXPECT_GT(skipped, 0u) << "the instances no longer exercise the bound";
}

// Groups of different sizes can share every link cost (here any two GPUs of node0 see the same
// path), so the memo of the exposed all-reduce, keyed by one object per distinct link costs,
// must still tell them apart by their replica count: each group's all-reduce asked after the others
// equals the one a fresh cost model gives, and the per-group costs equal the per-device ones.
TEST(Formula2Bound, GroupCostsMatchThePerDeviceCosts) {
  std::mt19937 random(7);
  // Links slow enough (1 GB/s, 0.5 GB/s) that every all-reduce outlasts the backward it overlaps.
  PlanRequest request = make_request(random_model(random, 6), two_type_cluster(1e9, 0.5e9), 32, 4);
  const std::vector<std::vector<DeviceId>> groups = {{0, 1}, {0, 1, 2, 3}, {0, 1, 2}, {2, 5}, {0, 1, 4, 5, 6}};
  const LayerRange layers{1, 5};
  const StageCostModel shared(request);
  for (const std::vector<DeviceId>& group : groups) {
    const StageCostModel fresh(request);
    const Seconds alone = fresh.all_reduce(layers, group);
    EXPECT_GT(alone.value(), 0);
    EXPECT_EQ(shared.all_reduce(layers, shared.group_costs(group)).value(), alone.value());
    // Ranges to the last layer have their own memo row (ExposedTable::to_last).
    const LayerRange to_last{2, 6};
    EXPECT_EQ(shared.all_reduce(to_last, shared.group_costs(group)).value(), fresh.all_reduce(to_last, group).value());
    const PassTimes times = shared.compute(layers, shared.group_costs(group));
    EXPECT_EQ(times.forward.value(), fresh.compute(layers, group).forward.value());
    EXPECT_EQ(times.backward.value(), fresh.compute(layers, group).backward.value());
  }
  // A ring of 2 and one of 4 on the same edges: each GPU sends 2(p−1)/p of the bytes, 1 against 1.5.
  EXPECT_NE(shared.all_reduce(layers, groups[0]).value(), shared.all_reduce(layers, groups[1]).value());
  // The cut's transfers priced once: the same as walking the shares per call.
  const StageCostModel fresh(request);
  EXPECT_EQ(shared.cut(3, shared.cut_pattern(groups[2], groups[4])).value(),
            fresh.cut(3, groups[2], groups[4]).value());
}

// Under a launch model a stage's pass is one task of one kernel per layer issued by the host
// (docs/calibration.md "Kernel launches"): max(h + G, n·h) with G the pass's GPU time (the same
// table without the launch section) and n the stage's layers. h = 2 ms against layers of
// microseconds to milliseconds: short ranges are bound by the GPU plus one issue, long ones by n·h.
TEST(Formula2Bound, LaunchModelTimesAStagesPassByItsIssue) {
  std::mt19937 random(3);
  const PlanRequest base = make_request(random_model(random, 6), two_type_cluster(), 32, 4);
  CalibrationTable table = load_calibration(DNNSIM_SOURCE_DIR "/data/calibration/V100-16GB.yaml");
  PlanRequest gpu_only = base;
  PlanRequest launched = base;
  const auto plain = std::make_shared<const CalibrationTable>(table);
  table.launch = LaunchCalibration{Seconds(2e-3)};
  const auto with_launch = std::make_shared<const CalibrationTable>(table);
  for (std::size_t d = 0; d < 4; ++d) {  // node0's V100s
    gpu_only.cluster.devices[d].calibration = plain;
    launched.cluster.devices[d].calibration = with_launch;
  }
  const StageCostModel gpu(gpu_only);
  const StageCostModel issued(launched);
  const std::vector<DeviceId> group{0, 1};
  for (const LayerRange layers : {LayerRange{0, 1}, LayerRange{1, 4}, LayerRange{0, 6}}) {
    const PassTimes g = gpu.compute(layers, group);
    const PassTimes t = issued.compute(layers, group);
    const double h = 2e-3;
    const double n = static_cast<double>(layers.size());
    EXPECT_DOUBLE_EQ(t.forward.value(), std::max(h + g.forward.value(), n * h));
    EXPECT_DOUBLE_EQ(t.backward.value(), std::max(h + g.backward.value(), n * h));
  }
}

// Formula 2 of a completed prefix from the prefix's summary (completed_latency) against
// formula2_latency over all the entries. By hand first, M = 3: prefix A (F 1, B 2, AR 0), tail X
// (F 1, B 1, AR 2.5): L(A) = 1 + 2·3 + max(0 + 2, 2.5 − 3) = 9; L(X) = 2 + 2·2 + max(0 + 2 + 1,
// 2.5 + 1) = 9.5; so 9.5. Then random entries, prefixes of 0–5 entries and tails of 3 and 4 (the
// search's: cut in, stage, cut out, last stage): equal up to rounding, as the two sum in other orders.
TEST(Formula2Prefix, CompletionFromTheSummaryIsFormula2) {
  const auto entry = [](double f, double b, double ar) { return Formula2Stage{Seconds(f), Seconds(b), Seconds(ar)}; };
  const std::vector<Formula2Stage> by_hand{entry(1, 2, 0), entry(1, 1, 2.5)};
  EXPECT_DOUBLE_EQ(formula2_latency(by_hand, 3).value(), 9.5);
  EXPECT_DOUBLE_EQ(completed_latency(summarize({by_hand[0]}, 3, Seconds(0)), true,
                                     std::span<const Formula2Stage>(by_hand).subspan(1), 3),
                   9.5);
  std::mt19937 random(11);
  std::uniform_real_distribution<double> time(0.0, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    const int micro_batches = 1 + trial % 9;
    std::vector<Formula2Stage> entries;
    const std::size_t prefix = trial % 6;
    const std::size_t tail = 3 + trial % 2;
    for (std::size_t k = 0; k < prefix + tail; ++k)
      entries.push_back(entry(time(random), time(random), trial % 3 == 0 ? 0.0 : 3 * time(random)));
    const std::vector<Formula2Stage> head(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(prefix));
    const PrefixSummary summary = prefix == 0 ? PrefixSummary{} : summarize(head, micro_batches, Seconds(0));
    const double expected = formula2_latency(entries, micro_batches).value();
    EXPECT_NEAR(
        completed_latency(summary, prefix > 0, std::span<const Formula2Stage>(entries).subspan(prefix), micro_batches),
        expected, 1e-12 * expected)
        << "trial " << trial;
  }
}

}  // namespace
}  // namespace dnnsim
