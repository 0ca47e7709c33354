// A calibration table's `launch` section (docs/calibration.md, "Kernel launches"): a device's
// compute tasks are issued by its host, h apart, and run from max(their issue, the GPU's previous
// end); the sender's host waits for a point-to-point send, which pays the table's NCCL latency per
// call (its `collectives` section). Compute tasks carry measured times on the A100 itself, so they
// run exactly that long; the NVSwitch ports have no latency, so a flow alone takes size / bandwidth.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/run/simulation.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/collective_platforms.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

// 2 A100s on an NVSwitch of 100 GB/s ports; the table issues kernels 100 µs apart, charges 30 µs per
// NCCL call and halves what the ports carry (50 GB/s).
Scenario two_gpus(bool launch) {
  return testing::load(testing::a100_switch(2) +
                       testing::a100_calibration(launch ? "launch: {host_overhead: \"100us\"}\n" : ""));
}

Task kernel(double seconds, std::uint32_t launches = 1) {
  Compute compute;
  compute.device = 0;
  compute.measured_time = Seconds(seconds);
  compute.measured_on = "A100-80GB-SXM";
  compute.launches = launches;
  return Task{compute};
}

// Runs `tasks` (all on stream "compute" but transfers, on "send") and returns every task's end.
std::vector<double> ends(bool launch, std::vector<Task> tasks) {
  const Scenario scenario = two_gpus(launch);
  return testing::in_child([&] {
    TaskGraph graph = testing::graph_on_gpus(scenario);
    const StreamId compute = graph.add_stream("compute");
    const StreamId send = graph.add_stream("send");
    for (Task& task : tasks) {
      task.stream = task.is_transfer() ? send : compute;
      graph.add(std::move(task));
    }
    const SimulationResult result = simulate(scenario, std::move(graph), {});
    return result.task_end;
  });
}

// Three 1 ms kernels then three 10 µs ones, h = 100 µs. Kernel i is issued at i·h (0.1 … 0.6 ms):
//   long:  0.1 → 1.1, 1.1 → 2.1, 2.1 → 3.1 (the GPU is behind the host from the first one on);
//   short: issued long before, 3.1 → 3.11 → 3.12 → 3.13 ms.
// Adding h to every kernel (the sum model of a fitted t0) would give 6·0.1 + 3.03 = 3.63 ms.
// Short ones first: 0.1 → 0.11, issued 0.2 → 0.21, 0.3 → 0.31 (the GPU waits for the host), then the
// long ones from their issue at 0.4: 1.4, 2.4, 3.4 ms. Without the section: 3.03 ms either way.
TEST(LaunchQueue, LongKernelsHideTheIssueOfTheNextOnes) {
  std::vector<Task> long_first;
  for (int i = 0; i < 3; ++i) long_first.push_back(kernel(1e-3));
  for (int i = 0; i < 3; ++i) long_first.push_back(kernel(10e-6));
  const std::vector<double> queue = ends(true, long_first);
  const std::vector<double> expected{1.1e-3, 2.1e-3, 3.1e-3, 3.11e-3, 3.12e-3, 3.13e-3};
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(queue[i], expected[i], 1e-9) << i;
  EXPECT_NEAR(ends(false, long_first).back(), 3.03e-3, 1e-9);

  std::vector<Task> short_first(long_first.rbegin(), long_first.rend());
  EXPECT_NEAR(ends(true, short_first).back(), 3.4e-3, 1e-9);
}

// One task standing for 5 kernels of 50 µs in all: its host issues 5·h = 0.5 ms; the GPU runs from
// the first issue (0.1 ms) for 0.05 ms; the task ends with the issuing, max(h + G, n·h) = 0.5 ms.
// The next 1 ms kernel is issued at 0.6 ms and ends at 1.6 ms.
TEST(LaunchQueue, ATaskOfSeveralKernelsEndsWhenItsHostHasIssuedThemAll) {
  const std::vector<double> queue = ends(true, {kernel(50e-6, 5), kernel(1e-3)});
  EXPECT_NEAR(queue[0], 0.5e-3, 1e-9);
  EXPECT_NEAR(queue[1], 1.6e-3, 1e-9);
}

// GPU 0 runs a 1 ms kernel A, sends its 5 MB output to GPU 1 (T, after A), then a 10 µs kernel B.
// T: 30 µs of NCCL latency, then 5e6 B / 50 GB/s = 100 µs: from 1.1 ms (A's end) to 1.23 ms.
// B's host synchronizes on T, then issues B: 1.23 + 0.1 → B runs 1.33 → 1.34 ms. Without the launch
// section B would run right after A (1.0 → 1.01 ms) and T end at 1.13 ms.
TEST(LaunchQueue, TheSenderWaitsForItsSendAndTheSendPaysTheCallLatency) {
  const auto tasks = [] {
    Task send{Transfer{0, 1, Bytes(5e6)}};
    send.deps = {0};
    return std::vector<Task>{kernel(1e-3), send, kernel(10e-6)};
  };
  const std::vector<double> queue = ends(true, tasks());
  EXPECT_NEAR(queue[0], 1.1e-3, 1e-9);
  EXPECT_NEAR(queue[1], 1.23e-3, 1e-9);
  EXPECT_NEAR(queue[2], 1.34e-3, 1e-9);
  const std::vector<double> plain = ends(false, tasks());
  EXPECT_NEAR(plain[1], 1.13e-3, 1e-9);
  EXPECT_NEAR(plain[2], 1.01e-3, 1e-9);
}

// The same send waited on the GPU only (Megatron-Core's overlap_p2p_comm, Transfer::host_synchronizes
// false): the host issues the 10 µs kernel at 0.2 ms, h after the first, and it runs once the GPU
// is free, 1.1 → 1.11 ms, while the send still takes 1.1 + 0.03 + 0.1 = 1.23 ms.
TEST(LaunchQueue, ASendWaitedOnTheGpuLeavesTheHostIssuing) {
  Task send{Transfer{0, 1, Bytes(5e6), false}};
  send.deps = {0};
  const std::vector<double> queue = ends(true, {kernel(1e-3), send, kernel(10e-6)});
  EXPECT_NEAR(queue[0], 1.1e-3, 1e-9);
  EXPECT_NEAR(queue[1], 1.23e-3, 1e-9);
  EXPECT_NEAR(queue[2], 1.11e-3, 1e-9);
}

}  // namespace
}  // namespace dnnsim
