// Flow fidelity against step fidelity (docs/collectives.md, "Fidelity levels"). Each comparison
// simulates the same collectives twice, once per fidelity, each in a forked child (one SimGrid engine
// per process), and compares the collectives' durations. SimGrid's CM02 without cross-traffic
// (create_engine) gives a flow alone on its route exactly latency + size / narrowest bandwidth, and
// max-min fair shares among flows crossing a common link.
//
// Why they agree:
//  - alone on its links, a flow-level phase ends at T = rounds · max over hops (L + chunk/B) — the
//    step level's max-plus recurrence (collective_algorithms.cpp, ring_phase_flows); the generic form
//    (tree, direct, ring broadcast) times every pair's flow by the expansion's own critical path. So
//    on uncontended links, uniform or not, both give the same date up to rounding: 1e-9 relative;
//  - when hops share links, the flow of a hop is delayed by (rounds − 1)·L (plus the wait for the
//    slowest hop) and then gets the same max-min share as each of the hop's steps would, so the
//    bandwidth term is the same; the tests with contention and preempted links allow 2%.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "models/program/collective_algorithms.hpp"
#include "sim/run/simulation.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/collective_platforms.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

using testing::in_child;

constexpr double kExactRelative = 1e-9;
constexpr double kContendedTolerance = 0.02;  // with contention and preempted links (header)
constexpr double kMB = 1e6;

using testing::kSwitch8;
using testing::two_nodes;

// testing::single_gpu_nodes_cluster under a data-parallel workload: α = 10 us, β = 10 GB/s between nodes.
std::string single_gpu_nodes(int nodes, const std::string& interconnect = "") {
  return "\nname: nodes\n" + testing::single_gpu_nodes_cluster(nodes, interconnect) + "\n" +
         testing::one_layer_data_parallel(8);
}

// Simulates `collectives` side by side (each on a stream of its own, all starting at 0) at
// `fidelity` in a child process; returns each one's duration.
std::vector<double> durations(const std::string& yaml, const std::vector<Collective>& collectives,
                              CollectiveFidelity fidelity) {
  const Scenario scenario = testing::load(yaml);
  return in_child([&] {
    TaskGraph graph = testing::graph_on_gpus(scenario);
    for (std::size_t i = 0; i < collectives.size(); ++i) {
      Task task{collectives[i]};
      std::get<Collective>(task.op).fidelity = fidelity;
      task.stream = graph.add_stream("comm" + std::to_string(i));
      graph.add(std::move(task));
    }
    const SimulationResult result = simulate(scenario, std::move(graph), {});
    std::vector<double> out;
    for (std::size_t i = 0; i < collectives.size(); ++i) out.push_back(result.task_end[i] - result.task_start[i]);
    return out;
  });
}

std::vector<DeviceId> first_devices(std::size_t p) {
  std::vector<DeviceId> group(p);
  std::iota(group.begin(), group.end(), DeviceId{0});
  return group;
}

// Both fidelities of `collectives`; expects them within `relative` and returns step's durations.
std::vector<double> compare(const std::string& yaml, const std::vector<Collective>& collectives, double relative) {
  const std::vector<double> step = durations(yaml, collectives, CollectiveFidelity::step);
  const std::vector<double> flow = durations(yaml, collectives, CollectiveFidelity::flow);
  EXPECT_EQ(step.size(), collectives.size());
  EXPECT_EQ(flow.size(), collectives.size());
  for (std::size_t i = 0; i < std::min(step.size(), flow.size()); ++i)
    EXPECT_NEAR(flow[i], step[i], relative * step[i]) << "collective " << i;
  return step;
}

struct FidelityCase {
  std::string name;
  std::string yaml;
  Collective collective;
};
void PrintTo(const FidelityCase& test, std::ostream* out) { *out << test.name; }

std::vector<FidelityCase> uniform_cases() {
  using K = CollectiveKind;
  std::vector<FidelityCase> all;
  for (const double s : {256 * 1024.0 * 1024.0, 8 * 1024.0}) {  // bandwidth- and latency-dominated
    const std::string tag = s > 1e6 ? "256MiB" : "8KiB";
    const auto add = [&](const std::string& name, const std::string& yaml, K kind, const std::string& algorithm) {
      all.push_back({name + "_" + tag, yaml, Collective{kind, first_devices(8), Bytes(s), algorithm, 0}});
    };
    add("ring_all_reduce", kSwitch8, K::all_reduce, "ring");
    add("ring_all_gather", kSwitch8, K::all_gather, "ring");
    add("ring_reduce_scatter", kSwitch8, K::reduce_scatter, "ring");
    add("ring_broadcast", kSwitch8, K::broadcast, "ring");
    // Hierarchical with one NIC per node: the 4 inter-node rings share it in both fidelities.
    add("hierarchical_nic_per_gpu", two_nodes(true), K::all_reduce, "hierarchical");
    add("hierarchical_shared_nic", two_nodes(false), K::all_reduce, "hierarchical");
  }
  return all;
}

class UniformLinks : public ::testing::TestWithParam<FidelityCase> {};

TEST_P(UniformLinks, FlowEqualsStep) { compare(GetParam().yaml, {GetParam().collective}, kExactRelative); }

INSTANTIATE_TEST_SUITE_P(CollectiveFidelity, UniformLinks, ::testing::ValuesIn(uniform_cases()),
                         [](const ::testing::TestParamInfo<FidelityCase>& info) { return info.param.name; });

TEST(CollectiveFidelity, RingAllReduceOnUniformLinksIsItsFormula) {
  // 2(p−1)(α + S/(pβ)) with p = 8, α = 2 us, β = 100 GB/s, S = 800 MB: 14 × (2 us + 1 ms).
  const auto step =
      compare(kSwitch8, {Collective{CollectiveKind::all_reduce, first_devices(8), Bytes(800 * kMB), "ring", 0}},
              kExactRelative);
  EXPECT_NEAR(step.at(0), 14 * (2e-6 + 1e-3), 1e-12);
}

TEST(CollectiveFidelity, TreeAndDirectHaveNoFlowForm) {
  // Large groups fall back to step; asking for flow is a located error.
  for (const std::string algorithm : {"tree", "direct"}) {
    const Collective c{CollectiveKind::all_reduce, first_devices(kStepFidelityMaxGroup + 1), Bytes(1), algorithm, 0};
    const DeviceTopology topology{std::vector<std::uint32_t>(c.group.size(), 0)};
    EXPECT_EQ(effective_collective_fidelity(c, std::nullopt, topology), CollectiveFidelity::step);
    const auto errors = testing::diagnostics_thrown_by([&] {
      (void)plan_collective_flows(
          c, topology, [](DeviceId, DeviceId) { return RouteCost{}; }, SourceLocation{"x.yaml", 3, 5});
    });
    ASSERT_EQ(errors.size(), 1u) << testing::dump(errors);
    EXPECT_NE(errors[0].message.find("at flow fidelity; algorithms that do: ring, p2p-ring, hierarchical"),
              std::string::npos)
        << errors[0].message;
    EXPECT_EQ(errors[0].location.line, 3);
  }
}

TEST(CollectiveFidelity, RingOverMixedNvlinkAndNicHopsIsGatedByTheSlowestHop) {
  // (d) A ring over all 8 GPUs of 2 × 4 sharing a NIC per node: 6 hops on NVSwitch (α_in = 2 us,
  // β_in = 100 GB/s), 3 → 4 and 7 → 0 over PCIe + NIC (α_out = 6 us, β_out = 25 GB/s). At step level
  // the slowest hop gates every round: 2(p−1) · max(α_in + S/(pβ_in), α_out + S/(pβ_out))
  // = 14 × (6 us + 100 MB / 25 GB/s) = 14 × 4.006 ms for S = 800 MB. Flow delays the fast hops'
  // flows by exactly their wait, so both agree to rounding.
  const auto step =
      compare(two_nodes(false), {Collective{CollectiveKind::all_reduce, first_devices(8), Bytes(800 * kMB), "ring", 0}},
              kExactRelative);
  EXPECT_NEAR(step.at(0), 14 * (6e-6 + 4e-3), 1e-9);
}

TEST(CollectiveFidelity, RingInChannelsRunsItsChannelsAtOnceOnlyAtFlowLevel) {
  // The same ring with a NIC per GPU runs in 4 channels (docs/collectives.md, "Channels"): per round
  // each GPU sends 25 MB across through its own NIC (6 us + 25 MB / 25 GB/s = 1.006 ms) and 75 MB
  // within its node (2 us + 75 MB / 100 GB/s = 0.752 ms) at once; node 0's 4 flows across fill its
  // 100 GB/s switch port exactly. Flow: 14 × 1.006 ms. The step form sends the two one after the other,
  // so it can only be slower.
  const Collective ring{CollectiveKind::all_reduce, first_devices(8), Bytes(800 * kMB), "ring", 0};
  const double flow = durations(two_nodes(true), {ring}, CollectiveFidelity::flow).at(0);
  EXPECT_NEAR(flow, 14 * (6e-6 + 1e-3), 1e-9);
  EXPECT_GT(durations(two_nodes(true), {ring}, CollectiveFidelity::step).at(0), flow);
}

TEST(CollectiveFidelity, TwoJobsRingsSharingNicsWithinTwoPercent) {
  // (a) 2 × 4 GPUs, one NIC per node. Job A rings over node0/gpu0, gpu1, node1/gpu0, gpu1 and job B
  // over the gpu2, gpu3 pairs: each ring has two inter-node hops (node0 → node1 and back), and the
  // two jobs' hops share each NIC direction: 12.5 GB/s each. The slowest hop gates every round:
  // 2(p−1) · (α_out + S/(p · 12.5 GB/s)) = 6 × (6 us + 100 MB / 12.5 GB/s) = 6 × 8.006 ms, S = 400 MB.
  const std::vector<Collective> jobs{Collective{CollectiveKind::all_reduce, {0, 1, 4, 5}, Bytes(400 * kMB), "ring", 0},
                                     Collective{CollectiveKind::all_reduce, {2, 3, 6, 7}, Bytes(400 * kMB), "ring", 0}};
  const auto step = compare(two_nodes(false), jobs, kContendedTolerance);
  for (double t : step) EXPECT_NEAR(t, 6 * (6e-6 + 8e-3), 0.001 * t);
}

TEST(CollectiveFidelity, RingOnOversubscribedLeafSpineWithinTwoPercent) {
  // (b) 8 single-GPU nodes, 4 per leaf, one spine, 4:1 oversubscribed: each uplink direction has
  // 4 × 10 GB/s / 4 = 10 GB/s. The ring 0,4,1,5,2,6,3,7 crosses leaves on every hop, so each uplink
  // direction carries 4 of its flows at once: 2.5 GB/s each. Latency α = 2 × 5 us (NICs; the
  // switches have none). 2(p−1)(α + S/(p · 2.5 GB/s)) = 14 × (10 us + 100 MB / 2.5 GB/s) for S = 800 MB.
  const std::string yaml =
      single_gpu_nodes(8, R"(  interconnect: {kind: leaf_spine, nodes_per_leaf: 4, spines: 1, oversubscription: 4}
)");
  const auto step =
      compare(yaml, {Collective{CollectiveKind::all_reduce, {0, 4, 1, 5, 2, 6, 3, 7}, Bytes(800 * kMB), "ring", 0}},
              kContendedTolerance);
  EXPECT_NEAR(step.at(0), 14 * (10e-6 + 0.04), 0.001 * step.at(0));
}

TEST(CollectiveFidelity, LinkPreemptedMidCollectiveWithinTwoPercent) {
  // (c) 4 single-GPU nodes, ring all-reduce of S = 400 MB: 6 rounds of 100 MB, 10.01 ms each when
  // alone (α = 10 us, β = 10 GB/s). node1/nic drops to 2.5 GB/s from 20 ms to 40 ms. Step: rounds 1-2
  // end at 20.02 ms; round 3 is gated by node1's hops: 49.95 MB at 2.5 GB/s until 40 ms, the other
  // 50.05 MB at 10 GB/s (5.005 ms); rounds 4-6 take 3 × 10.01 ms: ≈ 75.05 ms. Flow: node1's flows
  // (600 MB, after a 50 us delay) move 199.5 MB by 20 ms, 50 MB in the window, 350.5 MB after:
  // ≈ 75.05 ms too.
  const std::string yaml = single_gpu_nodes(4) + R"(
network:
  conditions:
    - links: "node1/nic"
      schedule: [{at: "0s", bandwidth: "10GB/s"}, {at: "20ms", bandwidth: "2.5GB/s"}, {at: "40ms", bandwidth: "10GB/s"}]
)";
  const auto step =
      compare(yaml, {Collective{CollectiveKind::all_reduce, first_devices(4), Bytes(400 * kMB), "ring", 0}},
              kContendedTolerance);
  EXPECT_NEAR(step.at(0), 0.07505, 0.0005);
}

TEST(CollectiveFidelity, LargeGroupsDefaultToFlow) {
  Collective c{CollectiveKind::all_reduce, first_devices(kStepFidelityMaxGroup), Bytes(1), "ring", 0};
  const DeviceTopology topology{std::vector<std::uint32_t>(kStepFidelityMaxGroup + 1, 0)};
  EXPECT_EQ(effective_collective_fidelity(c, std::nullopt, topology), CollectiveFidelity::step);
  c.group.push_back(static_cast<DeviceId>(kStepFidelityMaxGroup));
  EXPECT_EQ(effective_collective_fidelity(c, std::nullopt, topology), CollectiveFidelity::flow);
  EXPECT_EQ(effective_collective_fidelity(c, CollectiveFidelity::step, topology), CollectiveFidelity::step);
  c.fidelity = CollectiveFidelity::flow;
  EXPECT_EQ(effective_collective_fidelity(c, CollectiveFidelity::step, topology), CollectiveFidelity::flow);
}

TEST(CollectiveFidelity, UnknownFidelityIsALocatedError) {
  const auto errors = testing::diagnostics_thrown_by(
      [] { (void)testing::load(single_gpu_nodes(2) + "run: {collective_fidelity: flows}\n"); });
  ASSERT_EQ(errors.size(), 1u) << testing::dump(errors);
  EXPECT_NE(errors[0].message.find("flows"), std::string::npos) << errors[0].message;
  EXPECT_GT(errors[0].location.line, 0);
}

}  // namespace
}  // namespace dnnsim
