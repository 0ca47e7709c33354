// End-to-end timings on tiny platforms, each derived by hand below. SimGrid's CM02 model without
// cross-traffic (set by simulate()) gives a flow alone on its path exactly
//   time = Σ latency(route) + size / min bandwidth(route),
// and max-min fair sharing among flows on a common link. Every TEST runs in its own process.
#include "sim/run/simulation.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/report/report.hpp"
#include "sim/scenario/layout.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/collective_platforms.hpp"
#include "tests/support/scenario_files.hpp"
#include "traces/network/preemption.hpp"

namespace dnnsim {
namespace {

using testing::kSimulationPrecision;

using testing::load;

// node0/gpu0 → node1/gpu0 crosses the two 10 GB/s NICs, 5 us each (testing::pcie_node_pair).
const std::string kTwoNodes = testing::pcie_node_pair("5us");

TaskGraph transfers(const Scenario& scenario, const std::vector<std::pair<std::string, std::string>>& pairs,
                    double bytes) {
  TaskGraph graph = testing::graph_on_gpus(scenario);
  const StreamId stream = graph.add_stream("comm");
  for (const auto& [from, to] : pairs) {
    Task task{Transfer{*graph.device_by_name(from), *graph.device_by_name(to), Bytes(bytes)}};
    task.stream = stream;
    graph.add(std::move(task));
  }
  return graph;
}

// One 1 GB transfer node0/gpu0 → node1/gpu0 on the node pair without latency, under `network` (a
// `network:` section): the network-condition cases below differ only in that section.
SimulationResult one_transfer_under(const std::string& network) {
  const Scenario scenario = load(testing::pcie_node_pair("0s") + network);
  return simulate(scenario, transfers(scenario, {{"node0/gpu0", "node1/gpu0"}}, 1e9), {});
}

// one_transfer_under while node1/nic follows `schedule`, a YAML list of {at, bandwidth}.
SimulationResult one_transfer_under_schedule(const std::string& schedule) {
  return one_transfer_under("\nnetwork:\n  conditions:\n    - links: \"node1/nic\"\n      schedule: " + schedule +
                            "\n");
}

TEST(Simulation, OneTransferIsLatencyPlusSizeOverBandwidth) {
  // 1 GB over the 10 GB/s NICs: 0.1 s, plus 5 us at each NIC (switch and PCIe add nothing).
  const Scenario scenario = load(kTwoNodes);
  const auto result = simulate(scenario, transfers(scenario, {{"node0/gpu0", "node1/gpu0"}}, 1e9), {});
  EXPECT_NEAR(result.task_end[0], 0.1 + 10e-6, kSimulationPrecision);
}

TEST(Simulation, TwoFlowsShareTheirCommonLink) {
  // Both GPUs of node0 send 1 GB to node1: node0/nic (up) carries both flows, 5 GB/s each:
  // 1e9 / 5e9 = 0.2 s, plus the two NIC latencies.
  const Scenario scenario = load(kTwoNodes);
  const auto result =
      simulate(scenario, transfers(scenario, {{"node0/gpu0", "node1/gpu0"}, {"node0/gpu1", "node1/gpu1"}}, 1e9), {});
  EXPECT_NEAR(result.task_end[0], 0.2 + 10e-6, kSimulationPrecision);
  EXPECT_NEAR(result.task_end[1], 0.2 + 10e-6, kSimulationPrecision);
}

TEST(Simulation, LinkAtHalfBandwidthDoublesTheTransfer) {
  // node1/nic held at 5 GB/s for the whole run: 1e9 / 5e9 = 0.2 s (+ latencies) instead of 0.1 s.
  const Scenario scenario = load(kTwoNodes + R"(
network:
  conditions:
    - {links: "node1/nic", bandwidth: "5GB/s"}
)");
  const auto result = simulate(scenario, transfers(scenario, {{"node0/gpu0", "node1/gpu0"}}, 1e9), {});
  EXPECT_NEAR(result.task_end[0], 0.2 + 10e-6, kSimulationPrecision);
}

TEST(Simulation, BandwidthDropMidTransferIntegratesPiecewise) {
  // No latency; node1/nic drops from 10 GB/s to 2 GB/s at t = 0.05 s. By then 0.5 GB of the 1 GB
  // has moved; the other 0.5 GB takes 0.5e9 / 2e9 = 0.25 s: the transfer ends at 0.30 s.
  const auto result =
      one_transfer_under_schedule(R"([{at: "0s", bandwidth: "10GB/s"}, {at: "50ms", bandwidth: "2GB/s"}])");
  EXPECT_NEAR(result.task_end[0], 0.30, kSimulationPrecision);
}

// Four GPUs on an NVSwitch, every port 100 GB/s and 1 us per direction.
using testing::kSwitch4;

// One ring all-reduce of 400 MB over the four GPUs, alone on its stream: the step-level and the
// flow-level cases below time the same collective.
TaskGraph ring_all_reduce_400mb(const Scenario& scenario) {
  TaskGraph graph = testing::graph_on_gpus(scenario);
  Task task{Collective{CollectiveKind::all_reduce, {0, 1, 2, 3}, Bytes(400e6), "ring", 0}};
  task.stream = graph.add_stream("comm");
  graph.add(std::move(task));
  return graph;
}

TEST(Simulation, RingAllReduceMatchesItsFormula) {
  // Ring all-reduce of S bytes on p GPUs: 2(p−1) steps of S/p, each GPU i sending to i+1 through
  // port i (up) and port i+1 (down): one flow per link direction, so a step costs α + S/(pB) with
  // α = the route's latency (2 ports × 1 us) and B = 100 GB/s.
  // S = 400 MB, p = 4: 2·3·(2e-6 + 1e8/1e11) = 6·(1.002e-3) = 6.012e-3 s.
  const Scenario scenario = load(kSwitch4);
  const auto result = simulate(scenario, ring_all_reduce_400mb(scenario), {});
  EXPECT_NEAR(result.task_end[0], 2 * 3 * (2e-6 + 400e6 / 4 / 100e9), kSimulationPrecision);
}

// Two GPUs, a two-layer model with measured times on the same GPU type (no scaling):
// forward 10 ms per layer, backward 20 ms per layer, 100 MB of parameters and 1 MB of activations
// per layer, one layer per bucket. SGD (no optimizer state). All-reduce of one bucket on 2 GPUs over
// 50 GB/s ports with no latency: 2 steps of 50 MB → 2 × 1 ms = 2 ms (testing::kV100PairSwitch and
// two_bucketed_layers, shared with pipeline_run_test.cpp's replicated stage).
std::string ddp_scenario(bool overlap) {
  return "\nname: ddp\n" + testing::kV100PairSwitch + "workload:\n  kind: data_parallel\n  global_batch: 2\n" +
         testing::two_bucketed_layers(overlap, R"(, activation_bytes: "1MB")");
}

TEST(Simulation, DataParallelOverlapHidesCommunicationUnderBackward) {
  // Backward of "second" ends at 20 + 20 = 40 ms; its bucket all-reduces 40–42 ms while "first"'s
  // backward runs 40–60 ms; the last bucket all-reduces 60–62 ms; then the optimizer step.
  const Scenario scenario = load(ddp_scenario(true));
  const auto result = simulate(scenario, build_workload(scenario), {});
  EXPECT_NEAR(result.makespan_s, 0.062 + testing::v100_sgd_step_seconds(200e6), kSimulationPrecision);
  const auto summary = make_summary(scenario, result);
  // Exposed communication: only the last bucket's 2 ms.
  EXPECT_NEAR(summary["devices"]["node0/gpu0"]["exposed_communication_s"].get<double>(), 0.002, kSimulationPrecision);
}

TEST(Simulation, DataParallelWithoutOverlapWaitsForTheWholeBackward) {
  // Both all-reduces start after the backward pass (60 ms) and run one after the other on the comm
  // stream: 60–62, 62–64 ms; then the optimizer.
  const Scenario scenario = load(ddp_scenario(false));
  const auto result = simulate(scenario, build_workload(scenario), {});
  EXPECT_NEAR(result.makespan_s, 0.064 + testing::v100_sgd_step_seconds(200e6), kSimulationPrecision);
}

TEST(Simulation, PeakMemoryCountsStateAndActivations) {
  // Weights + gradients (SGD: no state) = 2 × 200 MB, plus both layers' activations (1 MB per sample,
  // 1 sample per GPU) held until their backward: 400 MB + 2 MB.
  const Scenario scenario = load(ddp_scenario(true));
  const auto result = simulate(scenario, build_workload(scenario), {});
  EXPECT_DOUBLE_EQ(result.peak_memory_bytes[0], 402e6);
}

TEST(Simulation, BandwidthRecoveryMidTransferSpeedsItUp) {
  // No latency; node1/nic at 1 GB/s until t = 50 ms, then 10 GB/s. By 50 ms, 50 MB of the 1 GB has
  // moved; the remaining 950 MB take 0.95e9 / 1e10 = 95 ms: the transfer ends at 0.145 s.
  const auto result =
      one_transfer_under_schedule(R"([{at: "0s", bandwidth: "1GB/s"}, {at: "50ms", bandwidth: "10GB/s"}])");
  EXPECT_NEAR(result.task_end[0], 0.145, kSimulationPrecision);
}

TEST(Simulation, LinkAtZeroBandwidthStallsItsFlowsUntilItReturns) {
  // No latency; node1/nic offers nothing from 50 ms to 150 ms. By 50 ms, 0.5 GB of the 1 GB has
  // moved; nothing moves for 100 ms (one byte per second: 1e-11 s of the rest); the other 0.5 GB
  // takes 50 ms: the transfer ends at 0.200 s. Were the 0 passed to SimGrid as is, its solver would
  // leave the link out and the 10 GB/s NIC of node0 would end it at 0.100 s.
  const auto result = one_transfer_under_schedule(
      R"([{at: "0s", bandwidth: "10GB/s"}, {at: "50ms", bandwidth: 0}, {at: "150ms", bandwidth: "10GB/s"}])");
  EXPECT_NEAR(result.task_end[0], 0.200, kSimulationPrecision);
}

// A 1 GB transfer over node1/nic preempted by a seeded on/off process that leaves `busy_fraction` of
// its 10 GB/s (run.seed 42; no latency; the other NIC runs at 10 GB/s and never binds below the
// preempted one's nominal 10 GB/s).
Scenario preempted_pair(double busy_fraction) {
  return load(testing::pcie_node_pair("0s") + fmt::format(R"(
network:
  conditions:
    - links: "node1/nic"
      preemption: {{mean_busy: "20ms", mean_idle: "30ms", busy_fraction: {}}}
run: {{seed: 42}}
)",
                                                          busy_fraction));
}

// Its end as the same process, replayed from the same derived seed by the pure traces library and
// integrated piecewise (BandwidthSchedule::transfer_time), predicts it.
double replayed_end(double busy_fraction) {
  const PlatformLayout layout = make_layout(preempted_pair(busy_fraction).cluster);
  const auto names = layout.link_names();
  const auto index = static_cast<std::uint64_t>(std::find(names.begin(), names.end(), "node1/nic") - names.begin());
  PreemptionProcess process(
      PreemptionParams{BytesPerSecond(10e9), Seconds(0.02), Seconds(0.03), busy_fraction, derive_seed(42, index)});
  return process.until(Seconds(10)).transfer_time(Bytes(1e9), Seconds(0)).value();
}

double simulated_end(double busy_fraction) {
  const Scenario scenario = preempted_pair(busy_fraction);
  return simulate(scenario, transfers(scenario, {{"node0/gpu0", "node1/gpu0"}}, 1e9), {}).task_end[0];
}

TEST(Simulation, PreemptedLinkFollowsItsGeneratedSchedule) {
  EXPECT_GT(replayed_end(0.1), 0.1);  // the preemption did slow it down
  EXPECT_NEAR(simulated_end(0.1), replayed_end(0.1), 1e-9);
}

TEST(Simulation, FullyPreemptedLinkStallsItsFlowsWhileBusy) {
  // busy_fraction 0: nothing moves while the tenant holds the link (one byte per second of it, far
  // below the 1e-9 s asked), so the transfer ends later than with a tenant that leaves 10%.
  EXPECT_GT(replayed_end(0.0), replayed_end(0.1));
  EXPECT_NEAR(simulated_end(0.0), replayed_end(0.0), 1e-9);
}

TEST(Simulation, TransferCutByALinkFailureIsSentAgainAfterTheWindow) {
  // No latency; node1/nic fails from 50 ms to 80 ms. The 1 GB transfer at 10 GB/s is cut at 50 ms
  // (half sent, lost) and sent again from the start when the link is back: 80 ms + 100 ms = 0.18 s.
  const auto result = one_transfer_under(R"(
network:
  failures:
    - {link: "node1/nic", from: "50ms", to: "80ms"}
)");
  EXPECT_NEAR(result.task_end[0], 0.18, kSimulationPrecision);
  EXPECT_EQ(result.transfer_retries, 1u);
  EXPECT_EQ(result.unfinished_tasks, 0u);
}

TEST(Simulation, HostFailureStopsItsWorkAndIsReported) {
  // node1/gpu0 fails at 50 ms, during the 100 ms transfer it receives: the transfer and the task
  // after it on node1/gpu0 never finish; the run reports them instead of crashing.
  const Scenario scenario = load(testing::pcie_node_pair("0s") + R"(
network:
  failures:
    - {host: "node1/gpu0", from: "50ms", to: "1s"}
)");
  TaskGraph graph = transfers(scenario, {{"node0/gpu0", "node1/gpu0"}}, 1e9);
  Task after{Compute{*graph.device_by_name("node1/gpu0"), Flop(1e9)}};
  after.deps = {0};
  graph.add(std::move(after));
  const auto result = simulate(scenario, std::move(graph), {});
  EXPECT_EQ(result.unfinished_tasks, 2u);
  const auto summary = make_summary(scenario, result);
  EXPECT_EQ(summary["status"], "failed");
}

TEST(Simulation, FlowFidelityRunsARingAsOneFlowPerHop) {
  // Flow ring all-reduce: each GPU sends its successor 2(p−1)/p·S in one flow, after a delay of
  // 2(p−1) − 1 route latencies; every port carries one flow per direction. S = 400 MB, p = 4: 600 MB
  // at 100 GB/s = 6 ms, plus 6 latencies of 2 ports × 1 us — the step-level 2(p−1)(α + S/(pB)).
  const Scenario scenario = load(kSwitch4 + "run: {collective_fidelity: flow}\n");
  const auto result = simulate(scenario, ring_all_reduce_400mb(scenario), {});
  EXPECT_NEAR(result.task_end[0], 6 * 2e-6 + 600e6 / 100e9, kSimulationPrecision);
  EXPECT_EQ(result.flow_count, 4u);
}

TEST(Simulation, BackgroundFlowSharesTheLinkWithTheWorkload) {
  // Another tenant sends 1 GB from node0/gpu1 to node1/gpu1 at t = 0: with the workload's 1 GB from
  // node0/gpu0, node0/nic carries two flows at 5 GB/s each, so the workload's transfer takes 0.2 s
  // (no latency), as if the tenant were a second transfer.
  const auto result = one_transfer_under(R"(
network:
  background_flows:
    - {from: node0/gpu1, to: node1/gpu1, size: "1GB", start: "0s"}
)");
  EXPECT_NEAR(result.task_end[0], 0.2, kSimulationPrecision);
}

TEST(Simulation, BandwidthTraceFileDrivesTheLink) {
  // node1/nic follows a CSV trace: 10 GB/s from 0, 2 GB/s from 50 ms (bare numbers in the header's
  // unit). As in BandwidthDropMidTransferIntegratesPiecewise: 0.5 GB by 50 ms, then 0.5 GB / 2 GB/s.
  testing::write_file("nic.csv", "time_s,bandwidth_GBps\n0,10\n0.05,2\n");
  const auto result = one_transfer_under(R"(
network:
  conditions:
    - {links: "node1/nic", trace: nic.csv}
)");
  EXPECT_NEAR(result.task_end[0], 0.30, kSimulationPrecision);
}

TEST(Simulation, OutOfMemoryIsAReportedResult) {
  // One 5 GB layer trained with Adam: weights + gradients + two moments = 4 × 5 GB = 20 GB, beyond
  // a V100-16GB's 16 GiB. The run completes and says so, naming the device and both sizes.
  std::string yaml = kTwoNodes;
  yaml.replace(yaml.find("{forward_flops: \"1GFlop\"}"), 25, "{forward_flops: \"1GFlop\", parameter_bytes: \"5GB\"}");
  const Scenario scenario = load(yaml);
  const auto result = simulate(scenario, build_workload(scenario), {});
  EXPECT_DOUBLE_EQ(result.peak_memory_bytes[0], 20e9);
  EXPECT_EQ(result.unfinished_tasks, 0u);
  const auto summary = make_summary(scenario, result);
  EXPECT_EQ(summary["status"], "out_of_memory");
  ASSERT_EQ(summary["messages"].size(), 4u);  // every GPU of the cluster
  EXPECT_EQ(summary["messages"][0], "out of memory on node0/gpu0: needs 18.63 GiB, has 16 GiB");
}

TEST(Simulation, CalibrationTableSetsTheComputeEfficiency) {
  // One compute task of 15.7 TFlop (fp32, matmul) on a V100 (15.7 TFlops fp32 peak): 1 s at peak.
  // A table whose fp32 matmul curve is flat at 0.5 halves the rate: 2 s. Memory traffic is zero.
  testing::write_file("half.yaml", R"(device: V100-16GB
source: test table
peak: {fp32: "15.7TFlops"}
memory_bandwidth: "900GB/s"
compute:
  - {kind: matmul, dtype: fp32, curve: [{size: "1Flop", efficiency: 0.5}]}
)");
  const Scenario scenario = load(kTwoNodes + "calibration: half.yaml\n");
  TaskGraph graph = testing::graph_on_gpus(scenario);
  Compute work;
  work.device = 0;
  work.flops = Flop(15.7e12);
  work.kernel = LayerKind::matmul;
  Task task{work};
  task.stream = graph.add_stream("compute");
  graph.add(std::move(task));
  const auto result = simulate(scenario, std::move(graph), {});
  EXPECT_NEAR(result.task_end[0], 2.0, kSimulationPrecision);
}

}  // namespace
}  // namespace dnnsim
