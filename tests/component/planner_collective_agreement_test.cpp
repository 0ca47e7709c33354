// The planners' price of a collective against the simulator, on the planners' own view of the
// scenario (make_cluster_view: the devices with their NICs, the platform's routes as path costs,
// ClusterView::topology()), not on a topology the test builds: what the 5D planner ranks layouts by is
// what `dnnsim run` then measures. One collective per TEST (one SimGrid engine per process).
//
// Platform (tests/support/collective_platforms.hpp, two_nodes): 2 nodes × 4 GPUs, NVSwitch inside
// (α_in = 2 µs, β_in = 100 GB/s), between nodes GPU → PCIe → NIC → switch → NIC → PCIe (α_out = 6 µs,
// β_out = 25 GB/s), a NIC per GPU or one per node. A ring all-gather of S = 256 MiB over the 8 GPUs,
// p − 1 = 7 rounds (docs/collectives.md, "Channels"):
//  - a NIC per GPU: 4 channels, per round S/32 = 8 MiB across and 3S/32 = 24 MiB within, at once:
//    7 · max(6 µs + 8 MiB / 25 GB/s, 2 µs + 24 MiB / 100 GB/s) = 7 · 341.5 µs = 2.391 ms;
//  - one NIC per node: the group-order ring, S/8 = 32 MiB across per round at 3 → 4 and 7 → 0:
//    7 · (6 µs + 32 MiB / 25 GB/s) = 7 · 1,348.2 µs = 9.437 ms.
// The simulator runs the first as 4 channels at flow fidelity and the second as one ring; each
// must agree with the planner's price within 2%, as collective_cost_test's cases do.
#include <gtest/gtest.h>

#include <numeric>

#include "models/cost/collective_cost.hpp"
#include "sim/run/simulation.hpp"
#include "sim/scenario/cluster_view_builder.hpp"
#include "sim/scenario/layout.hpp"
#include "tests/support/collective_platforms.hpp"
#include "tests/support/scenario_files.hpp"
#include "tests/support/task_graph_ops.hpp"

namespace dnnsim {
namespace {

using testing::kMiB;
constexpr double kSize = 256 * kMiB;

void expect_planner_agrees(bool nic_per_gpu, double derived) {
  const Scenario scenario = testing::load(testing::two_nodes(nic_per_gpu));
  const ClusterView view = make_cluster_view(scenario.cluster, make_layout(scenario.cluster));
  std::vector<DeviceId> group(view.size());
  std::iota(group.begin(), group.end(), DeviceId{0});
  const Collective c{CollectiveKind::all_gather, group, Bytes(kSize), "ring"};
  const double planned = collective_time(c, view.topology(), view.path_cost).value();
  EXPECT_NEAR(planned, derived, 1e-9 * derived) << "the planner's price against the derivation";

  TaskGraph graph = testing::graph_on_gpus(scenario);
  Task task{c};
  task.stream = graph.add_stream("comm");
  graph.add(std::move(task));
  const double simulated = simulate(scenario, std::move(graph), {}).task_end[0];
  EXPECT_NEAR(planned, simulated, 0.02 * simulated) << "planned " << planned << " s, simulated " << simulated << " s";
}

TEST(PlannerCollectiveAgreement, RingInChannelsWithANicPerGpu) {
  expect_planner_agrees(true, 7 * std::max(6e-6 + 8 * kMiB / 25e9, 2e-6 + 24 * kMiB / 100e9));
}

TEST(PlannerCollectiveAgreement, OneRingThroughASharedNic) {
  expect_planner_agrees(false, 7 * (6e-6 + 32 * kMiB / 25e9));
}

}  // namespace
}  // namespace dnnsim
