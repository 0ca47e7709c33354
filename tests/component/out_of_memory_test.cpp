// Running out of memory inside the simulation (sim/exec/executor.hpp rethrow_failure): a
// std::bad_alloc in a stream actor cannot unwind through SimGrid's engine; the actor ends every
// other actor, the engine returns, and the error reaches the caller as std::bad_alloc, which the
// CLI reports as a clean "out of memory" error (sim/cli/main.cpp) instead of std::terminate.
// Every TEST runs in its own process (one engine per process).
#include <gtest/gtest.h>

#include <new>
#include <string>
#include <vector>

#include "sim/exec/executor.hpp"
#include "sim/platform/platform.hpp"
#include "sim/run/simulation.hpp"
#include "tests/support/gpu_bindings.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

const std::string kTwoGpus = R"(
name: two-gpus
cluster:
  node_types:
    box: {gpu: A100-40GB-SXM, gpus_per_node: 2, fabric: nvswitch, nic: {link: IB-HDR}}
  nodes: [{type: box, count: 1}]
workload:
  kind: data_parallel
  model: {layers: [{forward_flops: "1GFlop", parameter_bytes: "1MiB", repeat: 4}]}
  global_batch: 2
  bucket_size: "1MiB"
)";

// Stands for an allocation that fails when the third task starts.
class FailingAllocation : public ExecutionObserver {
 public:
  void on_task_start(TaskId, double) override {
    if (++started_ == 3) throw std::bad_alloc();
  }

 private:
  int started_ = 0;
};

TEST(OutOfMemory, BadAllocInAStreamActorStopsTheRunAndReachesTheCaller) {
  const Scenario scenario = testing::load(kTwoGpus);
  const TaskGraph graph = build_workload(scenario);
  const auto engine = create_engine();
  const Platform platform = build_platform(scenario);
  Executor executor(graph, testing::gpu_bindings(platform, graph.devices().size()),
                    DeviceTopology{scenario.cluster.node_of_gpu()}, ExecutorOptions{});
  FailingAllocation failing;
  executor.add_observer(&failing);
  executor.start();
  engine->run();
  EXPECT_LT(executor.finished_task_count(), graph.tasks().size());  // stopped, not run to the end
  EXPECT_THROW(executor.rethrow_failure(), std::bad_alloc);
}

}  // namespace
}  // namespace dnnsim
