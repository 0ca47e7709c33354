// The TaskGraph → operations lowering (models/exec/lowering.hpp), with no SimGrid engine: the ops,
// queues, dependencies, flow counts and amounts of each kind of task, derived by hand in the comments
// from the rules in the header (and, for collectives, the ring's steps: docs/collectives.md).
#include "models/exec/lowering.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "tests/support/task_graph_ops.hpp"

namespace dnnsim {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

using testing::collective_op;
using testing::compute_op;
using testing::iota_group;
using testing::kMiB;
using testing::nodes_of;
using testing::transfer_op;

// A device of round figures: 1 TFLOP/s at fp32, 100 GB/s of memory bandwidth.
GpuSpec round_gpu() {
  GpuSpec gpu;
  gpu.name = "round";
  gpu.peak_fp32 = FlopsPerSecond(1e12);
  gpu.memory_bandwidth = BytesPerSecond(1e11);
  return gpu;
}

// Every route: α = 1 µs, β = 1 GB/s.
constexpr double kAlpha = 1e-6;
constexpr double kBeta = 1e9;
RouteCost uniform_route(DeviceId /*src*/, DeviceId /*dst*/) {
  return RouteCost{Seconds(kAlpha), BytesPerSecond(kBeta)};
}

struct Fixture {
  GpuSpec gpu = round_gpu();
  TaskGraph graph;

  explicit Fixture(std::size_t devices) {
    for (std::size_t d = 0; d < devices; ++d) graph.add_device("gpu" + std::to_string(d));
  }

  // Devices on one node, all with `efficiency` and `calibration`.
  Lowering lowering(LoweringOptions options = {}, const CalibrationTable* calibration = nullptr,
                    double efficiency = 1.0) {
    const std::size_t n = graph.devices().size();
    return Lowering(std::vector<LoweringDevice>(n, LoweringDevice{&gpu, efficiency, calibration}), nodes_of(n, n),
                    uniform_route, options);
  }

  // The whole graph, lowered at once.
  LoweredProgram lower(const CalibrationTable* calibration = nullptr, double efficiency = 1.0) {
    Lowering all = lowering({}, calibration, efficiency);
    EXPECT_EQ(all.lower(graph, 0), graph.tasks().size());
    return all.program();
  }

  TaskId add(Task task) { return graph.add(std::move(task)); }
};

Task on_stream(std::variant<Compute, Transfer, Collective> op, StreamId stream, std::vector<TaskId> deps = {}) {
  Task task;
  task.op = std::move(op);
  task.stream = stream;
  task.deps = std::move(deps);
  return task;
}

Collective ring_all_reduce(std::vector<DeviceId> group, double size, std::optional<CollectiveFidelity> fidelity) {
  Collective c = collective_op(CollectiveKind::all_reduce, std::move(group), size, "ring");
  c.fidelity = fidelity;
  return c;
}

std::vector<OperationKind> kinds(const LoweredProgram& program) {
  std::vector<OperationKind> result;
  for (const Op& op : program.ops) result.push_back(op.kind);
  return result;
}

TEST(Lowering, ComputeIsOneOpOfTheCostModelsSeconds) {
  Fixture f(1);
  f.add(on_stream(compute_op(0, 2e12, 1e9), 3));
  const LoweredProgram p = f.lower(nullptr, 0.5);
  // Roofline at efficiency 0.5: max(2e12 / (1e12 · 0.5), 1e9 / (1e11 · 0.5)) = max(4 s, 0.02 s) = 4 s.
  ASSERT_EQ(p.ops.size(), 1u);
  const Op& op = p.ops[0];
  EXPECT_EQ(op.kind, OperationKind::compute);
  EXPECT_DOUBLE_EQ(op.amount, 4.0);
  EXPECT_EQ(p.device_of(op), 0u);
  EXPECT_EQ(op.pending, 0u);
  EXPECT_TRUE(op.starts_task && op.ends_task);
  ASSERT_EQ(p.queues.size(), 1u);
  EXPECT_EQ(p.queues[0].device, 0u);
  EXPECT_EQ(p.queues[0].stream, 3u);
  EXPECT_THAT(p.queues[0].ops, ElementsAre(0u));
  EXPECT_EQ(op.queue, 0u);
  EXPECT_THAT(p.completion_of_task, ElementsAre(0u));
  EXPECT_EQ(p.flow_count, 0u);
}

TEST(Lowering, TransferIsOneFlowOnTheSendersStream) {
  Fixture f(2);
  f.add(on_stream(transfer_op(1, 0, kMiB), 2));
  const LoweredProgram p = f.lower();
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_EQ(p.ops[0].kind, OperationKind::transfer);
  EXPECT_EQ(p.device_of(p.ops[0]), 1u);
  EXPECT_EQ(p.ops[0].dst, 0u);
  EXPECT_DOUBLE_EQ(p.ops[0].amount, kMiB);
  ASSERT_EQ(p.queues.size(), 1u);
  EXPECT_EQ(p.queues[0].device, 1u);
  EXPECT_EQ(p.queues[0].stream, 2u);
  EXPECT_EQ(p.flow_count, 1u);
}

// One call's latency first: the larger of the two ends' tables (here the receiver's 5 µs; the
// sender has none), as a delay that starts the task, then the bytes.
TEST(Lowering, CalibratedTransferPaysOneCallLatencyFirst) {
  Fixture f(2);
  f.add(on_stream(transfer_op(0, 1, kMiB), 0));
  CalibrationTable table;
  table.collectives = CollectiveCalibration{Seconds(5e-6), 1.0};
  const std::vector<LoweringDevice> devices{{&f.gpu, 1.0, nullptr}, {&f.gpu, 1.0, &table}};
  Lowering lowering(devices, nodes_of(2, 2), uniform_route, {});
  lowering.lower(f.graph, 0);
  const LoweredProgram& p = lowering.program();
  EXPECT_THAT(kinds(p), ElementsAre(OperationKind::delay, OperationKind::transfer));
  EXPECT_DOUBLE_EQ(p.ops[0].amount, 5e-6);
  EXPECT_TRUE(p.ops[0].starts_task);
  EXPECT_FALSE(p.ops[0].ends_task);
  EXPECT_FALSE(p.ops[1].starts_task);
  EXPECT_TRUE(p.ops[1].ends_task);
  EXPECT_EQ(p.ops[1].pending, 1u);
  EXPECT_THAT(p.successors(0), ElementsAre(1u));
  EXPECT_THAT(p.queues[0].ops, ElementsAre(0u, 1u));  // one queue, the sender's
  EXPECT_THAT(p.completion_of_task, ElementsAre(1u));
  EXPECT_EQ(p.flow_count, 1u);
}

// Ring all-reduce over p = 4 at step fidelity: 2(p−1) = 6 rounds of p = 4 sends of S/p, 24 steps.
// A send of round r ≥ 1 waits for the send into its sender in round r−1; round 0's wait for the
// start barrier; the end barrier waits for the sends no later send waits for, the last round's 4.
// Ops: start + 24 transfers + end + 4 fences = 30; per member's queue 6 transfers and its fence.
TEST(Lowering, RingAllReduceAtStepFidelity) {
  Fixture f(4);
  const double size = 4 * kMiB;
  f.add(on_stream(ring_all_reduce(iota_group(4), size, CollectiveFidelity::step), 1));
  const LoweredProgram p = f.lower();
  ASSERT_EQ(p.ops.size(), 30u);
  EXPECT_EQ(p.flow_count, 24u);
  EXPECT_THAT(p.flow_specs, IsEmpty());
  const Op& start = p.ops[0];
  EXPECT_EQ(start.kind, OperationKind::barrier);
  EXPECT_TRUE(start.starts_task);
  EXPECT_EQ(start.queue, kNoOp);
  EXPECT_EQ(p.successors(0).size(), 4u);  // round 0
  for (std::uint32_t s = 1; s <= 24; ++s) {
    EXPECT_EQ(p.ops[s].kind, OperationKind::transfer);
    EXPECT_DOUBLE_EQ(p.ops[s].amount, size / 4);
    EXPECT_EQ(p.ops[s].pending, 1u) << "step " << s;
    EXPECT_EQ(p.ops[s].dst, (p.device_of(p.ops[s]) + 1) % 4);
  }
  const std::uint32_t end = 25;
  EXPECT_EQ(p.ops[end].kind, OperationKind::barrier);
  EXPECT_TRUE(p.ops[end].ends_task);
  EXPECT_EQ(p.ops[end].pending, 4u);
  EXPECT_THAT(p.successors(end), ElementsAre(26u, 27u, 28u, 29u));  // the fences
  ASSERT_EQ(p.queues.size(), 4u);
  for (const StreamQueue& queue : p.queues) {
    EXPECT_EQ(queue.stream, 1u);
    ASSERT_EQ(queue.ops.size(), 7u);
    EXPECT_EQ(p.ops[queue.ops.back()].kind, OperationKind::fence);
    EXPECT_EQ(p.device_of(p.ops[queue.ops.back()]), queue.device);
  }
  EXPECT_EQ(p.completion_of_task[0], end);
}

// The same at flow fidelity: one phase, one flow per ring hop carrying its 6 rounds, 6·S/4 = 1.5 S,
// delayed so that alone it ends with the steps: T = 6(α + (S/4)/β), delay = T − α − 1.5 S/β = 5α.
// Ops: start + 4 flows ops (one sender each) + phase barrier + end + 4 fences = 11; 4 flows.
TEST(Lowering, RingAllReduceAtFlowFidelity) {
  Fixture f(4);
  const double size = 4 * kMiB;
  f.add(on_stream(ring_all_reduce(iota_group(4), size, CollectiveFidelity::flow), 0));
  const LoweredProgram p = f.lower();
  EXPECT_THAT(kinds(p),
              ElementsAre(OperationKind::barrier, OperationKind::flows, OperationKind::flows, OperationKind::flows,
                          OperationKind::flows, OperationKind::barrier, OperationKind::barrier, OperationKind::fence,
                          OperationKind::fence, OperationKind::fence, OperationKind::fence));
  EXPECT_EQ(p.flow_count, 4u);
  ASSERT_EQ(p.flow_specs.size(), 4u);
  for (std::uint32_t s = 0; s < 4; ++s) {
    const Op& flows = p.ops[1 + s];
    EXPECT_EQ(p.device_of(flows), s);
    EXPECT_EQ(flows.dst, s);  // its first FlowSpec
    EXPECT_DOUBLE_EQ(flows.amount, 1.5 * size);
    EXPECT_EQ(flows.pending, 1u);  // the start barrier
    const FlowSpec& spec = p.flow_specs[s];
    EXPECT_EQ(spec.dst, (s + 1) % 4);
    EXPECT_DOUBLE_EQ(spec.bytes, 1.5 * size);
    EXPECT_NEAR(spec.delay, 5 * kAlpha, 1e-15);
    EXPECT_TRUE(spec.last);
  }
  EXPECT_EQ(p.ops[5].pending, 4u);  // the phase barrier waits for every sender
  EXPECT_THAT(p.successors(5), ElementsAre(6u));
  EXPECT_EQ(p.completion_of_task[0], 6u);
}

// A mirrored collective is one delay on its first member: the ring's closed form alone on its
// links, 2(p−1)(α + (S/p)/β) = 6 · (1 µs + 1 MB / 1 GB/s) = 6.006 ms for p = 4, S = 4 MB. No flow.
TEST(Lowering, MirroredCollectiveIsOneDelayOnItsFirstMember) {
  Fixture f(4);
  Collective c = ring_all_reduce({2, 3, 0, 1}, 4e6, std::nullopt);
  c.mirrored = true;
  f.add(on_stream(std::move(c), 0));
  const LoweredProgram p = f.lower();
  EXPECT_THAT(kinds(p), ElementsAre(OperationKind::delay));
  EXPECT_EQ(p.device_of(p.ops[0]), 2u);
  EXPECT_NEAR(p.ops[0].amount, 6.006e-3, 1e-15);
  EXPECT_TRUE(p.ops[0].starts_task && p.ops[0].ends_task);
  ASSERT_EQ(p.queues.size(), 1u);
  EXPECT_EQ(p.queues[0].device, 2u);
  EXPECT_EQ(p.flow_count, 0u);
}

// Copies (a symmetric window, docs/collectives.md): group {0, 1} standing for 4 copies, p = 8. Only
// the window runs, with p's chunks and rounds: 2(p−1) = 14 rounds of 2 sends of S/8, the last
// member's into group[0]; 28 steps. At flow fidelity: 2 flows of 14 · S/8 = 1.75 S.
TEST(Lowering, CollectiveWithCopiesRunsItsWindow) {
  const double size = 8 * kMiB;
  for (const CollectiveFidelity fidelity : {CollectiveFidelity::step, CollectiveFidelity::flow}) {
    Fixture f(2);
    Collective c = ring_all_reduce({0, 1}, size, fidelity);
    c.copies = 4;
    f.add(on_stream(std::move(c), 0));
    const LoweredProgram p = f.lower();
    ASSERT_EQ(p.queues.size(), 2u);
    if (fidelity == CollectiveFidelity::step) {
      EXPECT_EQ(p.flow_count, 28u);
      EXPECT_EQ(p.ops.size(), 1 + 28 + 1 + 2u);
      for (const StreamQueue& queue : p.queues) EXPECT_EQ(queue.ops.size(), 14 + 1u);
      for (std::uint32_t s = 1; s <= 28; ++s) {
        EXPECT_DOUBLE_EQ(p.ops[s].amount, size / 8);
        EXPECT_EQ(p.ops[s].dst, 1 - p.device_of(p.ops[s]));
      }
    } else {
      EXPECT_EQ(p.flow_count, 2u);
      ASSERT_EQ(p.flow_specs.size(), 2u);
      EXPECT_DOUBLE_EQ(p.flow_specs[0].bytes, 1.75 * size);
      EXPECT_EQ(p.flow_specs[0].dst, 1u);
      EXPECT_EQ(p.flow_specs[1].dst, 0u);
    }
  }
}

// A calibrated collective: one delay of latency × calls per member after the start barrier, which
// the end barrier also waits for. Ring over 2 at step fidelity, 2 calls of 10 µs: 20 µs each.
TEST(Lowering, CalibratedCollectiveDelaysEveryMember) {
  Fixture f(2);
  Collective c = ring_all_reduce({0, 1}, kMiB, CollectiveFidelity::step);
  c.calls = 2;
  f.add(on_stream(std::move(c), 0));
  CalibrationTable table;
  table.collectives = CollectiveCalibration{Seconds(1e-5), 1.0};
  const LoweredProgram p = f.lower(&table);
  // start, 2 delays, 2(p−1)·p = 4 steps, end, 2 fences.
  EXPECT_THAT(kinds(p),
              ElementsAre(OperationKind::barrier, OperationKind::delay, OperationKind::delay, OperationKind::transfer,
                          OperationKind::transfer, OperationKind::transfer, OperationKind::transfer,
                          OperationKind::barrier, OperationKind::fence, OperationKind::fence));
  EXPECT_DOUBLE_EQ(p.ops[1].amount, 2e-5);
  EXPECT_THAT(p.successors(0), ElementsAre(1u, 2u, 3u, 4u));  // the delays, then round 0's steps
  EXPECT_EQ(p.ops[7].pending, 2u + 2u);                       // the last round's 2 steps and the 2 delays
  EXPECT_THAT(p.queues[0].ops, ElementsAre(1u, 3u, 5u, 8u));  // member 0: its delay, its sends, its fence
}

// Under a launch model (h per kernel) the device's host thread issues its compute tasks, on a
// queue of their own (kHostStream), and waits for what it sent and what its compute receives:
//  t0 compute on 0, 3 kernels: issue h (op 0), the compute after it (1), the other 2h (2), an end
//     barrier after both (3), which ends the task in place of the compute;
//  t1 transfer 0 → 1 (4): the host of 0 synchronizes after it;
//  t2 compute on 0, 1 kernel: its issue (5) waits for the send (4) and follows op 2 on the host
//     queue; the compute (6);
//  t3 compute on 1 after t1: its issue (7) and its compute (8) both wait for the receive (4).
TEST(Lowering, LaunchModelIssuesComputeFromAHostStream) {
  Fixture f(2);
  Compute three = compute_op(0, 1e9);
  three.launches = 3;
  f.add(on_stream(three, 0));
  f.add(on_stream(transfer_op(0, 1, kMiB), 1));
  f.add(on_stream(compute_op(0, 1e9), 0));
  f.add(on_stream(compute_op(1, 1e9), 0, {1}));
  const double h = 1e-5;
  CalibrationTable table;
  table.launch = LaunchCalibration{Seconds(h)};
  const LoweredProgram p = f.lower(&table);
  EXPECT_THAT(kinds(p), ElementsAre(OperationKind::delay, OperationKind::compute, OperationKind::delay,
                                    OperationKind::barrier, OperationKind::transfer, OperationKind::delay,
                                    OperationKind::compute, OperationKind::delay, OperationKind::compute));
  EXPECT_DOUBLE_EQ(p.ops[0].amount, h);
  EXPECT_DOUBLE_EQ(p.ops[2].amount, 2 * h);
  EXPECT_FALSE(p.ops[1].ends_task);
  EXPECT_TRUE(p.ops[3].ends_task);
  EXPECT_EQ(p.ops[1].pending, 1u);
  EXPECT_EQ(p.ops[3].pending, 2u);
  EXPECT_EQ(p.ops[5].pending, 1u);
  EXPECT_EQ(p.ops[6].pending, 1u);
  EXPECT_EQ(p.ops[7].pending, 1u);
  EXPECT_EQ(p.ops[8].pending, 2u);
  EXPECT_THAT(p.successors(4), UnorderedElementsAre(5u, 7u, 8u));
  ASSERT_EQ(p.queues.size(), 5u);
  const std::vector<std::pair<DeviceId, StreamId>> expected{{0, kHostStream}, {0, 0}, {0, 1}, {1, kHostStream}, {1, 0}};
  for (std::size_t q = 0; q < expected.size(); ++q) {
    EXPECT_EQ(p.queues[q].device, expected[q].first) << "queue " << q;
    EXPECT_EQ(p.queues[q].stream, expected[q].second) << "queue " << q;
  }
  EXPECT_THAT(p.queues[0].ops, ElementsAre(0u, 2u, 5u));
  EXPECT_THAT(p.completion_of_task, ElementsAre(3u, 4u, 6u, 8u));
}

// Dependencies feed a task's entry op and wait for its completion op; a collective's fences keep a
// member's later work on that stream behind it without a dependency:
//  t0 compute on 0 (op 0); t1 ring all-reduce {0, 1} on stream 1 after t0: start (1), round 0's
//  steps 0→1 (2) and 1→0 (3), round 1's 0→1 (4, after 3) and 1→0 (5, after 2), end (6, after 4
//  and 5), fences (7 on 0, 8 on 1); t2 compute on 1, stream 1, no dependency (9, behind fence 8);
//  t3 compute on 0 after t1 (10, waits for the end barrier).
TEST(Lowering, DependenciesAndFences) {
  Fixture f(2);
  f.add(on_stream(compute_op(0, 1e9), 0));
  f.add(on_stream(ring_all_reduce({0, 1}, kMiB, CollectiveFidelity::step), 1, {0}));
  f.add(on_stream(compute_op(1, 1e9), 1));
  f.add(on_stream(compute_op(0, 1e9), 0, {1}));
  const LoweredProgram p = f.lower();
  ASSERT_EQ(p.ops.size(), 11u);
  EXPECT_THAT(p.successors(0), ElementsAre(1u));
  EXPECT_THAT(p.successors(1), ElementsAre(2u, 3u));
  EXPECT_THAT(p.successors(2), ElementsAre(5u));
  EXPECT_THAT(p.successors(3), ElementsAre(4u));
  EXPECT_THAT(p.successors(6), ElementsAre(7u, 8u, 10u));
  const std::vector<std::uint32_t> pending{0, 1, 1, 1, 1, 1, 2, 1, 1, 0, 1};
  for (std::size_t i = 0; i < pending.size(); ++i) EXPECT_EQ(p.ops[i].pending, pending[i]) << "op " << i;
  // Queues by first op: (0, 0), (0, 1), (1, 1).
  ASSERT_EQ(p.queues.size(), 3u);
  EXPECT_THAT(p.queues[0].ops, ElementsAre(0u, 10u));
  EXPECT_THAT(p.queues[1].ops, ElementsAre(2u, 4u, 7u));
  EXPECT_THAT(p.queues[2].ops, ElementsAre(3u, 5u, 8u, 9u));
  EXPECT_THAT(p.completion_of_task, ElementsAre(0u, 6u, 9u, 10u));
}

// Lowering in batches (a growable executor): a dependency on an op the runtime has marked done is
// already met; one on an op not done yet is waited for.
TEST(Lowering, AppendedTasksDoNotWaitForDoneOps) {
  Fixture f(1);
  f.add(on_stream(compute_op(0, 1e9), 0));
  f.add(on_stream(compute_op(0, 1e9), 1));
  Lowering lowering = f.lowering();
  EXPECT_EQ(lowering.lower(f.graph, 0), 2u);
  lowering.program().ops[0].done = true;  // as the runtime does when op 0 ends
  f.add(on_stream(compute_op(0, 1e9), 0, {0, 1}));
  EXPECT_EQ(lowering.lower(f.graph, 2), 3u);
  const LoweredProgram& p = lowering.program();
  ASSERT_EQ(p.ops.size(), 3u);
  EXPECT_EQ(p.ops[2].pending, 1u);  // op 1 only
  EXPECT_THAT(p.successors(0), IsEmpty());
  EXPECT_THAT(p.successors(1), ElementsAre(2u));
  EXPECT_THAT(p.queues[0].ops, ElementsAre(0u, 2u));  // the same queue, continued
}

TEST(Lowering, StopEndsLoweringBeforeTheNextTask) {
  Fixture f(1);
  f.add(on_stream(compute_op(0, 1e9), 0));
  const std::atomic<bool> stop{true};
  Lowering lowering = f.lowering(LoweringOptions{std::nullopt, &stop});
  EXPECT_EQ(lowering.lower(f.graph, 0), 0u);
  EXPECT_THAT(lowering.program().ops, IsEmpty());
  EXPECT_THAT(lowering.program().completion_of_task, ElementsAre(kNoOp));
}

}  // namespace
}  // namespace dnnsim
