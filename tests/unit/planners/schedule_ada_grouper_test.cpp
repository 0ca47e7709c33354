// Ada-Grouper-like group-size choice (planners/schedules/ada_grouper.hpp): observation of measured
// times, prediction with the estimator, the memory side, and the choice itself.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "planners/schedules/ada_grouper.hpp"
#include "tests/support/planner_entries.hpp"

namespace dnnsim {
namespace {

using testing::kExact;

// p = 2 stages of one layer each, one device per stage, measured layers.
PipelineWorkload two_stages(int micro_batches) {
  PipelineWorkload workload;
  workload.model.name = "two";
  workload.model.measured_on = "V100-16GB";
  for (int l = 0; l < 2; ++l) {
    Layer layer;
    layer.name = fmt::format("l{}", l);
    layer.forward_time = Seconds(1);
    layer.backward_time = Seconds(2);
    layer.parameter_bytes = Bytes(1e6);
    layer.activation_bytes = Bytes(1e6);
    workload.model.layers.push_back(layer);
  }
  workload.plan.stages = {PipelineStage{{LayerRange{0, 1}}, {0}}, PipelineStage{{LayerRange{1, 2}}, {1}}};
  workload.plan.micro_batches = micro_batches;
  workload.plan.global_batch = micro_batches;
  return workload;
}

TEST(AdaGrouper, ObserveAveragesTheMeasuredTimesOfEachKind) {
  // Fake measurements: every task starts at 0; forwards of stage 0 take 1 + 0.1·j (mean over
  // j = 0..3: 1.15), of stage 1 take 2; backwards 3 and 4; activation transfers 0.5, gradient
  // transfers 0.25; the optimizer steps 0.125 (one replica per stage: no all-reduce).
  TaskGraph graph;
  graph.add_device("a");
  graph.add_device("b");
  const LoweredIteration lowered = lower_pipeline_iteration(graph, two_stages(4), *make_group_schedule(1), 0);
  std::vector<double> start(graph.tasks().size(), 0.0), end(graph.tasks().size(), 0.0);
  for (std::size_t j = 0; j < 4; ++j) {
    end[lowered.forward[0][j][0]] = 1 + 0.1 * static_cast<double>(j);
    end[lowered.forward[1][j][0]] = 2;
    end[lowered.backward[0][j][0]] = 3;
    end[lowered.backward[1][j][0]] = 4;
    for (TaskId id : lowered.activation_transfers[0][j]) end[id] = 0.5;
    for (TaskId id : lowered.gradient_transfers[0][j]) end[id] = 0.25;
  }
  for (const auto& stage : lowered.optimizer)
    for (TaskId id : stage) end[id] = 0.125;
  const PipelineTimings timings = observe_iteration(lowered, start, end);
  EXPECT_EQ(timings.stages, 2);
  EXPECT_NEAR(timings.forward[0].value(), 1.15, kExact);
  EXPECT_NEAR(timings.forward[1].value(), 2.0, kExact);
  EXPECT_NEAR(timings.backward[1].value(), 4.0, kExact);
  EXPECT_NEAR(timings.activation_transfer[0].value(), 0.5, kExact);
  EXPECT_NEAR(timings.gradient_transfer[0].value(), 0.25, kExact);
  EXPECT_NEAR(timings.tail[1].value(), 0.125, kExact);
}

const auto kAlwaysFits = [](int) { return true; };

TEST(AdaGrouper, ChoosesOneWithoutCommunication) {
  // p = 4, M = 8, t_f = 1, t_b = 2, no transfers: every k takes (M + p − 1)(t_f + t_b) = 33
  // (papers-parallelism.md §1, correction to the kFkB row), so the tie goes to the smallest k.
  const auto timings = PipelineTimings::uniform(4, 1, Seconds(1), Seconds(2));
  const GroupChoice choice = choose_group_size(timings, PipelineShape{4, 8, 1}, {}, kAlwaysFits);
  EXPECT_EQ(choice.group, 1);
  EXPECT_TRUE(choice.any_fits);
  ASSERT_EQ(choice.predictions.size(), 8u);  // candidates 1..M
  for (const GroupPrediction& prediction : choice.predictions) EXPECT_NEAR(prediction.iteration.value(), 33.0, kExact);
}

TEST(AdaGrouper, ChoosesALargerGroupWhenTransfersAreExposed) {
  // The notes' example: c = 0.5 per transfer: 1F1B 41, kFkB(2) 36 (schedule_estimator_test derives
  // both with an independent longest path), so k = 1 is not the choice; the chosen k is the
  // candidate of least predicted time.
  const auto timings = PipelineTimings::uniform(4, 1, Seconds(1), Seconds(2), Seconds(0.5));
  const GroupChoice choice = choose_group_size(timings, PipelineShape{4, 8, 1}, {1, 2}, kAlwaysFits);
  EXPECT_EQ(choice.group, 2);
  EXPECT_NEAR(choice.predictions[0].iteration.value(), 41.0, kExact);
  EXPECT_NEAR(choice.predictions[1].iteration.value(), 36.0, kExact);
  const GroupChoice all = choose_group_size(timings, PipelineShape{4, 8, 1}, {}, kAlwaysFits);
  EXPECT_GT(all.group, 1);
  for (const GroupPrediction& prediction : all.predictions)
    EXPECT_LE(all.predictions[all.group - 1].iteration.value(), prediction.iteration.value());
}

TEST(AdaGrouper, NeverChoosesAGroupThatDoesNotFit) {
  const auto timings = PipelineTimings::uniform(4, 1, Seconds(1), Seconds(2), Seconds(0.5));
  const GroupChoice only_one = choose_group_size(timings, PipelineShape{4, 8, 1}, {}, [](int k) { return k == 1; });
  EXPECT_EQ(only_one.group, 1);
  for (const GroupPrediction& prediction : only_one.predictions) EXPECT_EQ(prediction.fits, prediction.group == 1);
  const GroupChoice none = choose_group_size(timings, PipelineShape{4, 8, 1}, {3, 2}, [](int) { return false; });
  EXPECT_FALSE(none.any_fits);
  EXPECT_EQ(none.group, 2);  // the smallest candidate, reported as not fitting
}

TEST(AdaGrouper, PeakMemoryOfKFKBPerDevice) {
  // p = 2, M = 4, one sample per micro-batch; each stage holds 1 MB of parameters, fp32 Adam 16 bytes
  // a parameter = 4 MB of model states, and 1 MB of activations per micro-batch. Stage i holds
  // min(k(p − i), M) micro-batches: k = 1: 2 and 1; k = 2: 4 and 2; k = 3: 4 (capped) and 3.
  const PipelineWorkload workload = two_stages(4);
  const auto demand = pipeline_memory_demand(workload, 3);  // device 2 is outside the plan
  EXPECT_EQ(demand[2].stage, -1);
  const PipelineShape shape = workload.shape();
  EXPECT_EQ(kfkb_peak_memory(demand, shape, 1), (std::vector<Bytes>{Bytes(6e6), Bytes(5e6), Bytes(0)}));
  EXPECT_EQ(kfkb_peak_memory(demand, shape, 2), (std::vector<Bytes>{Bytes(8e6), Bytes(6e6), Bytes(0)}));
  EXPECT_EQ(kfkb_peak_memory(demand, shape, 3), (std::vector<Bytes>{Bytes(8e6), Bytes(7e6), Bytes(0)}));
  const std::vector<Bytes> capacity{Bytes(7e6), Bytes(7e6), Bytes(1e9)};
  EXPECT_TRUE(fits_capacity(kfkb_peak_memory(demand, shape, 1), capacity));
  EXPECT_FALSE(fits_capacity(kfkb_peak_memory(demand, shape, 2), capacity));
  EXPECT_THROW((void)fits_capacity({Bytes(0)}, capacity), std::invalid_argument);
}

// The peak of each device when its compute stream runs in order (only compute tasks allocate, and
// they run one at a time on it): the running sum of alloc at start and free at end.
std::vector<Bytes> sequential_peaks(const TaskGraph& graph) {
  std::vector<double> held(graph.devices().size(), 0.0), peak(graph.devices().size(), 0.0);
  for (const Task& task : graph.tasks()) {
    if (!task.is_compute()) continue;
    const DeviceId d = std::get<Compute>(task.op).device;
    held[d] += task.alloc_bytes.value();
    peak[d] = std::max(peak[d], held[d]);
    held[d] -= task.free_bytes.value();
  }
  std::vector<Bytes> result;
  for (double p : peak) result.emplace_back(p);
  return result;
}

TEST(AdaGrouper, MemoryModelMatchesTheLoweredGraph) {
  // What kfkb_peak_memory predicts is what the lowering allocates, for p = 2 and M = 4, 5, every k.
  for (int m : {4, 5})
    for (int k = 1; k <= m; ++k) {
      const PipelineWorkload workload = two_stages(m);
      const TaskGraph graph = build_pipeline(workload, *make_group_schedule(k), {"a", "b"}, 1);
      EXPECT_EQ(sequential_peaks(graph), kfkb_peak_memory(pipeline_memory_demand(workload, 2), workload.shape(), k))
          << "M = " << m << ", k = " << k;
    }
}

}  // namespace
}  // namespace dnnsim
