// A growable executor (sim/exec/executor.hpp) takes tasks while the simulation runs: a controller
// actor waits for an iteration to end (IterationBarrier), appends the next one and finally closes
// the executor. Timings derived by hand as in simulation_test.cpp: SimGrid's CM02 without
// cross-traffic (create_engine) gives a flow alone on its path latency + size / bandwidth.
// Every TEST runs in its own process (one engine per process).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/exec/executor.hpp"
#include "sim/exec/observers.hpp"
#include "sim/platform/platform.hpp"
#include "sim/run/simulation.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/collective_platforms.hpp"
#include "tests/support/gpu_bindings.hpp"
#include "tests/support/scenario_files.hpp"

namespace sg4 = simgrid::s4u;

namespace dnnsim {
namespace {

using testing::kSimulationPrecision;

using testing::load;

// Two nodes of two GPUs, no latency anywhere: the 10 GB/s NICs alone shape node0/gpuX → node1/gpuY
// (testing::pcie_node_pair, as in simulation_test.cpp).
const std::string kTwoNodesNoLatency = testing::pcie_node_pair("0s");

// Four GPUs on an NVSwitch, every port 100 GB/s and 1 us per direction.
using testing::kSwitch4;

// Ring all-reduce of 400 MB on the four GPUs (simulation_test.cpp, RingAllReduceMatchesItsFormula):
// 2(p−1) steps of S/p, each costing the route latency (2 ports × 1 us) + S/(pB) at B = 100 GB/s.
constexpr double kRingAllReduce400MB = 2 * 3 * (2e-6 + 400e6 / 4 / 100e9);

TaskId add_transfer(TaskGraph& graph, const std::string& from, const std::string& to, double bytes, StreamId stream,
                    std::uint32_t iteration, std::vector<TaskId> deps = {}) {
  Task task{Transfer{*graph.device_by_name(from), *graph.device_by_name(to), Bytes(bytes)}};
  task.stream = stream;
  task.iteration = iteration;
  task.deps = std::move(deps);
  return graph.add(std::move(task));
}

TaskId add_all_reduce(TaskGraph& graph, StreamId stream, std::uint32_t iteration, std::vector<TaskId> deps = {}) {
  Task task{Collective{CollectiveKind::all_reduce, {0, 1, 2, 3}, Bytes(400e6), "ring", 0}};
  task.stream = stream;
  task.iteration = iteration;
  task.deps = std::move(deps);
  return graph.add(std::move(task));
}

struct AppendOutcome {
  std::vector<double> start;
  std::vector<double> end;
  std::vector<double> peak_memory_bytes;
  std::size_t finished_tasks = 0;
  bool deadlock = false;  // SimGrid found actors blocked with nothing left to happen
  double end_of_run = 0;
};

// What a controller actor gets to work with.
struct Control {
  TaskGraph& graph;
  Executor& executor;
  IterationBarrier& iterations;
  sg4::Engine& engine;
};
using Controller = std::function<void(Control&)>;

// Runs `graph` as simulate() wires it (sim/run/simulation.cpp: engine, platform, one binding per
// GPU of the cluster, recorders, background flows), plus `controller` as an actor on the first GPU.
AppendOutcome run(const Scenario& scenario, TaskGraph& graph, bool growable, const Controller& controller = {}) {
  const auto engine = create_engine();
  const Platform platform = build_platform(scenario);
  ExecutorOptions options;
  options.collective_fidelity = scenario.run.collective_fidelity;
  options.growable = growable;
  Executor executor(graph, testing::gpu_bindings(platform, graph.devices().size()),
                    DeviceTopology{scenario.cluster.node_of_gpu()}, options);
  TimelineRecorder timeline(graph.tasks().size());
  MemoryTracker memory(graph, graph.devices().size());
  IterationBarrier iterations(graph);
  executor.add_observer(&timeline);
  executor.add_observer(&memory);
  executor.add_observer(&iterations);
  AppendOutcome outcome;
  sg4::Engine::on_deadlock_cb([&outcome] { outcome.deadlock = true; });
  executor.start();
  Control control{graph, executor, iterations, *engine};
  if (controller) sg4::Actor::create("controller", platform.gpus.front(), [&] { controller(control); });
  start_background_flows(scenario, platform);
  engine->run();
  outcome.start = timeline.start();
  outcome.end = timeline.end();
  outcome.peak_memory_bytes = memory.peak_bytes();
  outcome.finished_tasks = executor.finished_task_count();
  outcome.end_of_run = sg4::Engine::get_clock();
  return outcome;
}

using testing::in_child;

// Iteration i of a small training step on the four GPUs: a compute per GPU (GPU d: d + 1 TFlop, so
// they end at different times), a 100 MB transfer gpu0 → gpu1 after gpu0's compute, and an
// all-reduce after everything; the next iteration's computes wait for that all-reduce, so
// iterations do not overlap. Returns the all-reduce.
TaskId add_training_step(TaskGraph& graph, std::uint32_t iteration, std::optional<TaskId> previous_all_reduce) {
  const StreamId compute_stream = graph.stream("compute");
  std::vector<TaskId> computes;
  for (DeviceId d = 0; d < 4; ++d) {
    Compute work;
    work.device = d;
    work.flops = Flop((d + 1) * 1e12);
    Task task{work};
    task.stream = compute_stream;
    task.iteration = iteration;
    if (previous_all_reduce) task.deps = {*previous_all_reduce};
    computes.push_back(graph.add(std::move(task)));
  }
  const TaskId send =
      add_transfer(graph, "node0/gpu0", "node0/gpu1", 100e6, graph.stream("p2p"), iteration, {computes[0]});
  std::vector<TaskId> before_all_reduce = computes;
  before_all_reduce.push_back(send);
  return add_all_reduce(graph, graph.stream("comm"), iteration, before_all_reduce);
}

std::vector<double> timeline_of(const AppendOutcome& outcome) {
  std::vector<double> numbers = outcome.start;
  numbers.insert(numbers.end(), outcome.end.begin(), outcome.end.end());
  return numbers;
}

TEST(ExecutorAppend, IterationsAppendedOneByOneRunAsTheWholeGraph) {
  // Three iterations given at once to today's (not growable) executor, against iteration 0 given at
  // construction and iterations 1, 2 appended by a controller when the previous one has ended: with
  // no overlap between iterations, every task starts and ends at the same date, exactly.
  constexpr std::uint32_t kIterations = 3;
  const std::vector<double> whole = in_child([] {
    const Scenario scenario = load(kSwitch4);
    TaskGraph graph = testing::graph_on_gpus(scenario);
    std::optional<TaskId> last;
    for (std::uint32_t i = 0; i < kIterations; ++i) last = add_training_step(graph, i, last);
    return timeline_of(run(scenario, graph, false));
  });
  const std::vector<double> appended = in_child([] {
    const Scenario scenario = load(kSwitch4);
    TaskGraph graph = testing::graph_on_gpus(scenario);
    TaskId last = add_training_step(graph, 0, std::nullopt);
    const AppendOutcome outcome = run(scenario, graph, true, [&last](Control& c) {
      for (std::uint32_t i = 0; i + 1 < kIterations; ++i) {
        c.iterations.wait_until_iteration_done(i);
        const auto first = static_cast<TaskId>(c.graph.tasks().size());
        last = add_training_step(c.graph, i + 1, last);
        c.executor.append(c.graph, first);
      }
      c.executor.close();
    });
    EXPECT_FALSE(outcome.deadlock);
    return timeline_of(outcome);
  });
  ASSERT_EQ(whole.size(), 2u * kIterations * 6);  // start and end of 6 tasks per iteration
  ASSERT_EQ(appended.size(), whole.size());
  for (std::size_t k = 0; k < whole.size(); ++k) {
    EXPECT_FALSE(std::isnan(whole[k])) << k;
    EXPECT_EQ(appended[k], whole[k]) << (k < whole.size() / 2 ? "start" : "end") << " of task "
                                     << k % (whole.size() / 2);
  }
}

TEST(ExecutorAppend, TaskDependingOnAFinishedTaskStartsAtOnce) {
  // 1 GB node0/gpu0 → node1/gpu0 at 10 GB/s: 0 – 0.1 s, taking 1 GB of memory on node0/gpu0. The
  // controller resumes at 0.1 s, sleeps to 0.25 s and appends the same transfer on the same (idle)
  // stream, depending on the finished one: 0.25 – 0.35 s. It takes 0.5 GB and frees 1.5 GB, so the
  // peak on node0/gpu0 is 1 + 0.5 = 1.5 GB: the tracker kept iteration 0's total.
  const Scenario scenario = load(kTwoNodesNoLatency);
  TaskGraph graph = testing::graph_on_gpus(scenario);
  const StreamId stream = graph.add_stream("comm");
  const TaskId first_transfer = add_transfer(graph, "node0/gpu0", "node1/gpu0", 1e9, stream, 0);
  graph.tasks()[first_transfer].alloc_bytes = Bytes(1e9);
  double resumed_at = 0;
  const AppendOutcome outcome = run(scenario, graph, true, [&](Control& c) {
    c.iterations.wait_until_iteration_done(0);
    resumed_at = sg4::Engine::get_clock();
    sg4::this_actor::sleep_until(0.25);
    const auto first = static_cast<TaskId>(c.graph.tasks().size());
    const TaskId second = add_transfer(c.graph, "node0/gpu0", "node1/gpu0", 1e9, stream, 1, {first_transfer});
    c.graph.tasks()[second].alloc_bytes = Bytes(0.5e9);
    c.graph.tasks()[second].free_bytes = Bytes(1.5e9);
    c.executor.append(c.graph, first);
    c.executor.close();
  });
  EXPECT_NEAR(resumed_at, 0.1, kSimulationPrecision);
  ASSERT_EQ(outcome.start.size(), 2u);
  EXPECT_NEAR(outcome.start[1], 0.25, kSimulationPrecision);
  EXPECT_NEAR(outcome.end[1], 0.35, kSimulationPrecision);
  EXPECT_DOUBLE_EQ(outcome.peak_memory_bytes[0], 1.5e9);
  EXPECT_EQ(outcome.finished_tasks, 2u);
  EXPECT_FALSE(outcome.deadlock);
}

TEST(ExecutorAppend, AppendCreatesAnActorForANewStream) {
  // Iteration 0: 1 GB node0/gpu0 → node1/gpu0, 0 – 0.1 s. At 0.1 s the controller appends 1 GB
  // node0/gpu1 → node1/gpu1 on a stream no device had: a new actor (one more in the engine) runs
  // it at once, alone on the NICs: 0.1 – 0.2 s.
  const Scenario scenario = load(kTwoNodesNoLatency);
  TaskGraph graph = testing::graph_on_gpus(scenario);
  add_transfer(graph, "node0/gpu0", "node1/gpu0", 1e9, graph.add_stream("comm"), 0);
  std::size_t actors_before = 0;
  std::size_t actors_after = 0;
  const AppendOutcome outcome = run(scenario, graph, true, [&](Control& c) {
    c.iterations.wait_until_iteration_done(0);
    const auto first = static_cast<TaskId>(c.graph.tasks().size());
    add_transfer(c.graph, "node0/gpu1", "node1/gpu1", 1e9, c.graph.add_stream("side"), 1);
    actors_before = c.engine.get_actor_count();
    c.executor.append(c.graph, first);
    actors_after = c.engine.get_actor_count();
    c.executor.close();
  });
  EXPECT_EQ(actors_after, actors_before + 1);
  ASSERT_EQ(outcome.start.size(), 2u);
  EXPECT_NEAR(outcome.start[1], 0.1, kSimulationPrecision);
  EXPECT_NEAR(outcome.end[1], 0.2, kSimulationPrecision);
  EXPECT_FALSE(outcome.deadlock);
}

TEST(ExecutorAppend, CloseLetsIdleActorsExitAndTheRunEnd) {
  // Both streams are idle from 0.1 s; the controller closes at 1 s. The run ends then, cleanly: no
  // actor is left blocked (SimGrid would report a deadlock).
  const Scenario scenario = load(kTwoNodesNoLatency);
  TaskGraph graph = testing::graph_on_gpus(scenario);
  add_transfer(graph, "node0/gpu0", "node1/gpu0", 1e9, graph.add_stream("comm"), 0);
  add_transfer(graph, "node0/gpu1", "node1/gpu1", 1e9, graph.add_stream("side"), 0);
  const AppendOutcome outcome = run(scenario, graph, true, [](Control& c) {
    sg4::this_actor::sleep_until(1.0);
    c.executor.close();
  });
  EXPECT_FALSE(outcome.deadlock);
  EXPECT_NEAR(outcome.end_of_run, 1.0, kSimulationPrecision);
  EXPECT_EQ(outcome.finished_tasks, 2u);
}

TEST(ExecutorAppend, CloseLetsBusyActorsFinishTheirQueue) {
  // At 0.1 s the controller appends two 1 GB transfers on the idle stream and closes at once: the
  // actor still runs both, one after the other (0.1 – 0.2, 0.2 – 0.3 s), then exits.
  const Scenario scenario = load(kTwoNodesNoLatency);
  TaskGraph graph = testing::graph_on_gpus(scenario);
  const StreamId stream = graph.add_stream("comm");
  add_transfer(graph, "node0/gpu0", "node1/gpu0", 1e9, stream, 0);
  const AppendOutcome outcome = run(scenario, graph, true, [stream](Control& c) {
    c.iterations.wait_until_iteration_done(0);
    const auto first = static_cast<TaskId>(c.graph.tasks().size());
    add_transfer(c.graph, "node0/gpu0", "node1/gpu0", 1e9, stream, 1);
    add_transfer(c.graph, "node0/gpu0", "node1/gpu0", 1e9, stream, 1);
    c.executor.append(c.graph, first);
    c.executor.close();
  });
  ASSERT_EQ(outcome.end.size(), 3u);
  EXPECT_NEAR(outcome.end[1], 0.2, kSimulationPrecision);
  EXPECT_NEAR(outcome.end[2], 0.3, kSimulationPrecision);
  EXPECT_NEAR(outcome.end_of_run, 0.3, kSimulationPrecision);
  EXPECT_FALSE(outcome.deadlock);
}

TEST(ExecutorAppend, WithoutCloseIdleActorsNeverExit) {
  // The counterpart of the two tests above: the controller appends nothing and never closes, so
  // the stream actor waits for work forever and SimGrid ends the run as a deadlock at 0.1 s.
  const Scenario scenario = load(kTwoNodesNoLatency);
  TaskGraph graph = testing::graph_on_gpus(scenario);
  add_transfer(graph, "node0/gpu0", "node1/gpu0", 1e9, graph.add_stream("comm"), 0);
  const AppendOutcome outcome = run(scenario, graph, true);
  EXPECT_TRUE(outcome.deadlock);
  EXPECT_NEAR(outcome.end_of_run, 0.1, kSimulationPrecision);
}

TEST(ExecutorAppend, AppendedCollectiveWithoutPendingDependencyStartsAtOnce) {
  // Iteration 0 is one ring all-reduce on "comm" (ends at kRingAllReduce400MB ≈ 6 ms; the four comm
  // actors are then idle). At 0.5 s the controller appends a second one with no dependency: it
  // starts at 0.5 s and takes the same time.
  const Scenario scenario = load(kSwitch4);
  TaskGraph graph = testing::graph_on_gpus(scenario);
  const StreamId comm = graph.add_stream("comm");
  add_all_reduce(graph, comm, 0);
  const AppendOutcome outcome = run(scenario, graph, true, [comm](Control& c) {
    sg4::this_actor::sleep_until(0.5);
    const auto first = static_cast<TaskId>(c.graph.tasks().size());
    add_all_reduce(c.graph, comm, 1);
    c.executor.append(c.graph, first);
    c.executor.close();
  });
  ASSERT_EQ(outcome.start.size(), 2u);
  EXPECT_NEAR(outcome.end[0], kRingAllReduce400MB, kSimulationPrecision);
  EXPECT_NEAR(outcome.start[1], 0.5, kSimulationPrecision);
  EXPECT_NEAR(outcome.end[1], 0.5 + kRingAllReduce400MB, kSimulationPrecision);
  EXPECT_FALSE(outcome.deadlock);
}

TEST(ExecutorAppend, AppendedTasksSeeALaterBandwidthChange) {
  // node1/nic runs at 10 GB/s until 150 ms, then 2 GB/s (profile dates are absolute). 1 GB per
  // iteration, node0/gpu0 → node1/gpu0, each iteration appended when the previous one ends:
  //   iteration 0: 0 – 0.1 s at 10 GB/s;
  //   iteration 1 from 0.1 s: 0.5 GB by 0.15 s, the other 0.5 GB at 2 GB/s take 0.25 s → 0.40 s;
  //   iteration 2 from 0.40 s: 1 GB at 2 GB/s = 0.5 s → 0.90 s.
  const Scenario scenario = load(kTwoNodesNoLatency + R"(
network:
  conditions:
    - links: "node1/nic"
      schedule: [{at: "0s", bandwidth: "10GB/s"}, {at: "150ms", bandwidth: "2GB/s"}]
)");
  TaskGraph graph = testing::graph_on_gpus(scenario);
  const StreamId stream = graph.add_stream("comm");
  add_transfer(graph, "node0/gpu0", "node1/gpu0", 1e9, stream, 0);
  const AppendOutcome outcome = run(scenario, graph, true, [stream](Control& c) {
    for (std::uint32_t i = 0; i < 2; ++i) {
      c.iterations.wait_until_iteration_done(i);
      const auto first = static_cast<TaskId>(c.graph.tasks().size());
      add_transfer(c.graph, "node0/gpu0", "node1/gpu0", 1e9, stream, i + 1);
      c.executor.append(c.graph, first);
    }
    c.executor.close();
  });
  ASSERT_EQ(outcome.end.size(), 3u);
  EXPECT_NEAR(outcome.end[0], 0.1, kSimulationPrecision);
  EXPECT_NEAR(outcome.start[1], 0.1, kSimulationPrecision);
  EXPECT_NEAR(outcome.end[1], 0.40, kSimulationPrecision);
  EXPECT_NEAR(outcome.start[2], 0.40, kSimulationPrecision);
  EXPECT_NEAR(outcome.end[2], 0.90, kSimulationPrecision);
  EXPECT_FALSE(outcome.deadlock);
}

}  // namespace
}  // namespace dnnsim
