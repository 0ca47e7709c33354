// A calibration table's `collectives` section (docs/calibration.md, "Collectives"): a fixed latency
// per collective call, paid before the expansion's steps, and links that reach a fraction of their
// nominal bandwidth. SimGrid's CM02 without cross-traffic gives a flow alone on its route
// latency + size / narrowest bandwidth (tests/component/collective_fidelity_test.cpp).
#include <fmt/format.h>
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

// The duration of one ring all-reduce of `bytes` over the 4 GPUs standing for `calls` calls.
double all_reduce_time(bool calibrated, double bytes, std::uint32_t calls, CollectiveFidelity fidelity) {
  // 4 GPUs on an NVSwitch of 100 GB/s ports without latency; the table (when given) adds 30 µs per
  // call and halves what the ports carry.
  const Scenario scenario = testing::load(testing::a100_switch(4) + (calibrated ? testing::a100_calibration() : ""));
  return testing::in_child([&] {
    TaskGraph graph = testing::graph_on_gpus(scenario);
    Collective collective{CollectiveKind::all_reduce, {0, 1, 2, 3}, Bytes(bytes), "ring", 0};
    collective.calls = calls;
    collective.fidelity = fidelity;
    Task task{collective};
    task.stream = graph.add_stream("comm");
    graph.add(std::move(task));
    const SimulationResult result = simulate(scenario, std::move(graph), {});
    return std::vector<double>{result.task_end[0] - result.task_start[0]};
  })[0];
}

// Ring all-reduce of S bytes over p GPUs (docs/collectives.md): 2(p − 1) rounds, each member sending
// S/p to the next one up its port and down the next one's, one flow per port direction at a time, so
// each round takes S/(p·B') with B' the port bandwidth the flows reach. With the table:
//   T = calls · α + 2(p − 1)/p · S / (η · B)
// S = 64 MiB, p = 4, B = 100 GB/s, η = 0.5, α = 30 µs, calls = 3:
//   3 · 30 µs + 1.5 · 67,108,864 B / 50 GB/s = 90 µs + 2,013.27 µs.
TEST(CollectiveCalibration, LatencyPerCallAndLinkEfficiency) {
  const double bytes = 64.0 * 1024 * 1024;
  const double bandwidth_term = 1.5 * bytes / 50e9;
  for (const CollectiveFidelity fidelity : {CollectiveFidelity::step, CollectiveFidelity::flow}) {
    EXPECT_NEAR(all_reduce_time(true, bytes, 3, fidelity), 3 * 30e-6 + bandwidth_term, 1e-9);
    EXPECT_NEAR(all_reduce_time(true, bytes, 1, fidelity), 30e-6 + bandwidth_term, 1e-9);
    // Without the table: no latency, the nominal 100 GB/s.
    EXPECT_NEAR(all_reduce_time(false, bytes, 3, fidelity), 1.5 * bytes / 100e9, 1e-9);
  }
}

// [start, end] of a 1 TFLOP fp16 compute on GPU 0 and of a 64 MiB send from GPU 0 to GPU 1 on
// another stream, both from t = 0, under a table whose NCCL kernels take `share` of the GPU.
std::vector<double> compute_beside_send(double share) {
  const Scenario scenario =
      testing::load(testing::a100_switch(4) + testing::a100_calibration("", fmt::format(", compute_share: {}", share)));
  return testing::in_child([&] {
    TaskGraph graph = testing::graph_on_gpus(scenario);
    Compute compute;
    compute.flops = Flop(1e12);
    compute.dtype = Dtype::fp16;
    Task work{compute};
    work.stream = graph.add_stream("compute");
    graph.add(std::move(work));
    Task send{Transfer{0, 1, Bytes(64.0 * 1024 * 1024)}};
    send.stream = graph.add_stream("comm");
    graph.add(std::move(send));
    const SimulationResult result = simulate(scenario, std::move(graph), {});
    return std::vector<double>{result.task_start[0], result.task_end[0], result.task_start[1], result.task_end[1]};
  });
}

// compute_share: while the send's kernel runs (its call latency and its bytes, D seconds) GPU 0
// computes at (1 − f) of its speed, so a compute of T seconds alone that outlasts the send ends at
//   T + f · D  (T − (1 − f)·D of its work is left at D, done at full speed),
// and the send itself takes what it takes without the share. f = 0.25, and the compute (1 TFLOP at
// 312 TFLOP/s, 3.2 ms) outlasts the send (30 µs + 64 MiB at 50 GB/s, 1.37 ms).
TEST(CollectiveCalibration, ComputeShareSlowsTheComputeBesideACommunication) {
  const std::vector<double> alone = compute_beside_send(0);
  const std::vector<double> shared = compute_beside_send(0.25);
  const double send = alone[3] - alone[2];
  ASSERT_GT(alone[1] - alone[0], send);
  EXPECT_NEAR(shared[3] - shared[2], send, 1e-12);
  EXPECT_NEAR(shared[1] - shared[0], alone[1] - alone[0] + 0.25 * send, 1e-9);
}

}  // namespace
}  // namespace dnnsim
