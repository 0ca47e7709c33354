// Pipeline schedules lowered into TaskGraphs (planners/schedules) and simulated end to end, against
// the closed forms of papers-parallelism.md §9 S1–S3 and the pure estimator. Four GPUs of one node
// joined by a full mesh of per-direction links with no latency (fabric nvlink_mesh), so a transfer
// alone on its link takes exactly size / bandwidth (simulation_test.cpp) and stage s's activations
// (link s–s+1, up) never share a link direction with stage s+1's gradients (the same link, down).
// Layer times are measured on the cluster's own GPU at the micro-batch size (1 sample), so every
// compute takes exactly its measured time. Every TEST runs in its own process.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "planners/schedules/pipeline_estimator.hpp"
#include "planners/schedules/pipeline_lowering.hpp"
#include "sim/run/simulation.hpp"
#include "tests/support/collective_platforms.hpp"
#include "tests/support/planner_entries.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

using testing::kSimulationPrecision;

const std::string kFourGpus =
    "name: pipeline\n" + testing::mesh_box_cluster("V100-16GB", 4) + testing::one_layer_data_parallel(4);

// Four stages of two measured layers each: layer 2s does the work (t_f, t_b) and stashes
// `stashed` bytes per sample, layer 2s+1 takes no time and its output (`sent` bytes per sample) is
// what crosses to the next stage. Layer 2s holds 1e8 bytes of parameters (2.5e7 parameters).
PipelineWorkload four_stages(int micro_batches, double t_f, double t_b, double stashed, double sent) {
  PipelineWorkload workload;
  workload.model.name = "four-stages";
  workload.model.measured_on = "V100-16GB";
  workload.model.measured_batch = 1;
  for (int l = 0; l < 8; ++l) {
    Layer layer;
    layer.name = fmt::format("l{}", l);
    const bool working = l % 2 == 0;
    layer.forward_time = Seconds(working ? t_f : 0.0);
    layer.backward_time = Seconds(working ? t_b : 0.0);
    layer.activation_bytes = Bytes(working ? stashed : sent);
    layer.parameter_bytes = Bytes(working ? 1e8 : 0.0);
    workload.model.layers.push_back(layer);
  }
  for (std::size_t s = 0; s < 4; ++s)
    workload.plan.stages.push_back(PipelineStage{{LayerRange{2 * s, 2 * s + 2}}, {static_cast<DeviceId>(s)}});
  workload.plan.micro_batches = micro_batches;
  workload.plan.global_batch = micro_batches;  // one sample per micro-batch
  return workload;
}

using testing::make_schedule;

struct SimulatedPipeline {
  LoweredIteration lowered;
  SimulationResult result;
};

SimulatedPipeline simulate_pipeline(const PipelineWorkload& workload, const PipelineSchedule& schedule) {
  const Scenario scenario = testing::load(kFourGpus);
  TaskGraph graph = testing::graph_on_gpus(scenario);
  LoweredIteration lowered = lower_pipeline_iteration(graph, workload, schedule, 0);
  return SimulatedPipeline{std::move(lowered), simulate(scenario, std::move(graph), {})};
}

double last_backward_end(const SimulatedPipeline& run) {
  double end = 0;
  for (const auto& per_micro_batch : run.lowered.backward)
    for (const auto& replicas : per_micro_batch)
      for (TaskId id : replicas) end = std::max(end, run.result.task_end[id]);
  return end;
}

// Every compute step of the simulation starts and ends where the estimator says.
void expect_timeline_of_estimator(const SimulatedPipeline& run, const PipelineSchedule& schedule,
                                  const PipelineTimings& timings) {
  const PipelineShape shape = run.lowered.shape;
  const PipelineEstimate estimate = estimate_pipeline(schedule, shape, timings);
  const auto p = static_cast<std::size_t>(shape.stages);
  for (std::size_t s = 0; s < p; ++s) {
    const auto order = schedule.stage_order(static_cast<int>(s), shape);
    for (std::size_t i = 0; i < order.size(); ++i) {
      const std::size_t u = static_cast<std::size_t>(order[i].chunk) * p + s;
      const auto& ids = order[i].pass == PassKind::forward ? run.lowered.forward : run.lowered.backward;
      const TaskId id = ids[u][static_cast<std::size_t>(order[i].micro_batch)][0];
      EXPECT_NEAR(run.result.task_start[id], estimate.steps[s][i].start.value(), kSimulationPrecision)
          << "stage " << s << " step " << i;
      EXPECT_NEAR(run.result.task_end[id], estimate.steps[s][i].end.value(), kSimulationPrecision)
          << "stage " << s << " step " << i;
    }
  }
}

TEST(PipelineSimulation, S1GPipeTakes33AndHoldsEveryMicroBatch) {
  // §9 S1: p = 4, M = 8, t_f = 1, t_b = 2, zero-byte transfers: (M + p − 1)(t_f + t_b) = 33.
  // Peak memory: model states 2.5e7 parameters × 16 B (fp32 Adam) = 4e8, plus M = 8 micro-batches
  // of 1e8 stashed bytes on every stage: 1.2e9.
  const auto schedule = make_schedule("gpipe");
  const SimulatedPipeline run = simulate_pipeline(four_stages(8, 1, 2, 1e8, 0), *schedule);
  EXPECT_NEAR(last_backward_end(run), 33.0, kSimulationPrecision);
  for (int d = 0; d < 4; ++d) EXPECT_NEAR(run.result.peak_memory_bytes[d], 4e8 + 8 * 1e8, 1.0) << "gpu " << d;
}

TEST(PipelineSimulation, S1OneFOneBTakes33AndHoldsPMinusIMicroBatches) {
  // Same time as GPipe; stage i holds min(p − i, M) = 4, 3, 2, 1 micro-batches: 4e8 + (4 − i)·1e8.
  const auto schedule = make_schedule("1f1b");
  const SimulatedPipeline run = simulate_pipeline(four_stages(8, 1, 2, 1e8, 0), *schedule);
  EXPECT_NEAR(last_backward_end(run), 33.0, kSimulationPrecision);
  for (int d = 0; d < 4; ++d) EXPECT_NEAR(run.result.peak_memory_bytes[d], 4e8 + (4 - d) * 1e8, 1.0) << "gpu " << d;
  expect_timeline_of_estimator(run, *schedule, PipelineTimings::uniform(4, 1, Seconds(1), Seconds(2)));
}

TEST(PipelineSimulation, S2InterleavedTakes28Point5) {
  // §9 S2: the same model as two chunks per GPU (virtual stage u = layers [u, u+1) of a chain of 8
  // with t_f = 0.5, t_b = 1 each): 8 · 3 + 3 · 3 / 2 = 28.5.
  PipelineWorkload workload = four_stages(8, 0.5, 1, 1e8, 0);
  for (Layer& layer : workload.model.layers) {
    layer.forward_time = Seconds(0.5);
    layer.backward_time = Seconds(1);
    layer.activation_bytes = Bytes(0);
  }
  for (std::size_t s = 0; s < 4; ++s) workload.plan.stages[s].chunks = {LayerRange{s, s + 1}, LayerRange{s + 4, s + 5}};
  const auto schedule = make_schedule("interleaved", {{"chunks", std::int64_t{2}}});
  const SimulatedPipeline run = simulate_pipeline(workload, *schedule);
  EXPECT_NEAR(last_backward_end(run), 28.5, kSimulationPrecision);
  expect_timeline_of_estimator(run, *schedule, PipelineTimings::uniform(4, 2, Seconds(0.5), Seconds(1)));
}

TEST(PipelineSimulation, S3KFKBWithOneHasThe1F1BTimeline) {
  // §9 S3: kFkB with k = 1 runs 1F1B's order, so its simulated timeline is the 1F1B estimate
  // (which the 1F1B test checks against the simulator) step by step, and ends at 33.
  const auto schedule = make_schedule("kfkb", {{"group", std::int64_t{1}}});
  const SimulatedPipeline run = simulate_pipeline(four_stages(8, 1, 2, 1e8, 0), *schedule);
  expect_timeline_of_estimator(run, *make_schedule("1f1b"), PipelineTimings::uniform(4, 1, Seconds(1), Seconds(2)));
  EXPECT_NEAR(last_backward_end(run), 33.0, kSimulationPrecision);
}

TEST(PipelineSimulation, RecomputationWaitsForTheIncomingGradient) {
  // GPipe with re-materialization, p = 4, M = 8, t_f = 1, t_b = 2: the recompute (a forward again, 1)
  // runs after the gradient arrives, as Megatron-LM's and DeepSpeed's checkpointed backward does, so
  // each backward step takes 1 + 2 = 3 from its start, and the timeline is the estimator's with
  // t_b = 3: (M + p − 1)(1 + 3) = 44. Recomputing while the gradient is in flight would let stages
  // 0–2 recompute during the backward wave's ramp and end earlier.
  const auto schedule = make_schedule("gpipe", {{"recompute", true}});
  const SimulatedPipeline run = simulate_pipeline(four_stages(8, 1, 2, 1e8, 0), *schedule);
  EXPECT_NEAR(last_backward_end(run), 44.0, kSimulationPrecision);
  const PipelineShape shape = run.lowered.shape;
  const PipelineEstimate estimate =
      estimate_pipeline(*schedule, shape, PipelineTimings::uniform(4, 1, Seconds(1), Seconds(3)));
  for (std::size_t s = 0; s < 4; ++s) {
    const auto order = schedule->stage_order(static_cast<int>(s), shape);
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (order[i].pass != PassKind::backward) continue;
      const auto j = static_cast<std::size_t>(order[i].micro_batch);
      EXPECT_NEAR(run.result.task_start[run.lowered.recompute[s][j][0]], estimate.steps[s][i].start.value(),
                  kSimulationPrecision)
          << "stage " << s << " step " << i;
      EXPECT_NEAR(run.result.task_end[run.lowered.backward[s][j][0]], estimate.steps[s][i].end.value(),
                  kSimulationPrecision)
          << "stage " << s << " step " << i;
    }
  }
}

TEST(PipelineSimulation, EstimatorMatchesTheSimulatorWithTransfers) {
  // Each stage sends 5e8 bytes per micro-batch over a 1 GB/s link: 0.5 s per transfer. kFkB with
  // k = 2, t_f = 1, t_b = 2: the estimator's timeline (36 by the notes' example, §1) is the simulator's.
  const auto schedule = make_schedule("kfkb", {{"group", std::int64_t{2}}});
  const SimulatedPipeline run = simulate_pipeline(four_stages(8, 1, 2, 1e8, 5e8), *schedule);
  const auto timings = PipelineTimings::uniform(4, 1, Seconds(1), Seconds(2), Seconds(0.5));
  expect_timeline_of_estimator(run, *schedule, timings);
  EXPECT_NEAR(last_backward_end(run), 36.0, kSimulationPrecision);
  for (const auto& per_micro_batch : run.lowered.activation_transfers)
    for (const auto& transfers : per_micro_batch)
      for (TaskId id : transfers)
        EXPECT_NEAR(run.result.task_end[id] - run.result.task_start[id], 0.5, kSimulationPrecision);
}

TEST(PipelineSimulation, CriticalPathRunsTheOrderItWasBoundFor) {
  // critical-path with D = 8, ordered for the run's own times (t_f = 1, t_b = 2, 0.5 s transfers):
  // its order is no fixed pattern, and the simulator must run it step by step where the estimator,
  // which ordered it, says.
  const auto timings = PipelineTimings::uniform(4, 1, Seconds(1), Seconds(2), Seconds(0.5));
  const auto schedule = make_schedule("critical-path", {{"max_in_flight", std::int64_t{8}}})->for_timings(timings);
  const SimulatedPipeline run = simulate_pipeline(four_stages(8, 1, 2, 1e8, 5e8), *schedule);
  expect_timeline_of_estimator(run, *schedule, timings);
}

// pipedream-async over `iterations` iterations, lowered as one run and simulated.
SimulatedPipeline simulate_async_run(const PipelineWorkload& workload, int iterations) {
  const Scenario scenario = testing::load(kFourGpus);
  TaskGraph graph = testing::graph_on_gpus(scenario);
  LoweredIteration lowered = lower_pipeline_run(graph, workload, *make_schedule("pipedream-async"), iterations);
  return SimulatedPipeline{std::move(lowered), simulate(scenario, std::move(graph), {})};
}

TEST(PipelineSimulation, PipeDreamAsyncRunsAtTheSlowestStagesPeriodWithStashedWeights) {
  // Three iterations of M = 8 (t_f = 1, t_b = 2, zero-byte transfers) as one asynchronous stream of
  // 24 micro-batches. Every backward is followed by its optimizer step on the stage's compute stream,
  // of u seconds (fp32 Adam over 2.5e7 parameters, timed by the cost model; read from the run). The
  // stages are uniform, so each runs one forward, one backward and one update per micro-batch once
  // warm, period 3 + u; an iteration of 8 then takes 8(3 + u) (the schedule estimator's unit test
  // derives the same with u = 0 and with a slowest stage). The estimator, given u as every stage's
  // update, reproduces every compute step.
  const SimulatedPipeline run = simulate_async_run(four_stages(8, 1, 2, 1e8, 0), 3);
  const TaskId update_task = run.lowered.optimizer[0][0];
  const double u = run.result.task_end[update_task] - run.result.task_start[update_task];
  EXPECT_GT(u, 0.0);
  PipelineTimings timings = PipelineTimings::uniform(4, 1, Seconds(1), Seconds(2));
  timings.update.assign(4, Seconds(u));
  expect_timeline_of_estimator(run, *make_schedule("pipedream-async"), timings);
  std::vector<double> iteration_end(3, 0.0);
  for (TaskId id = 0; id < run.result.graph.tasks().size(); ++id) {
    double& end = iteration_end[run.result.graph.task(id).iteration];
    end = std::max(end, run.result.task_end[id]);
  }
  EXPECT_NEAR(iteration_end[1] - iteration_end[0], 8 * (3 + u), 1e-9);
  EXPECT_NEAR(iteration_end[2] - iteration_end[1], 8 * (3 + u), 1e-9);
  // The first iteration pays the fill once: micro-batch 0's backward ends on stage 0 at 12 as in S1
  // (the updates on its way follow the gradients the stages send, off its path), its update at
  // 12 + u, and each further micro-batch adds a period: 12 + u + 7(3 + u) = 33 + 8u.
  EXPECT_NEAR(iteration_end[0], 33 + 8 * u, 1e-9);
  // Peak memory of stage i: model states 4e8 (as S1), p − i stashed fp32 weight versions of 2.5e7 × 4 B
  // = 1e8 each, and p − i micro-batches of 1e8 activations: 4e8 + 2(4 − i)·1e8.
  for (int d = 0; d < 4; ++d) EXPECT_NEAR(run.result.peak_memory_bytes[d], 4e8 + 2 * (4 - d) * 1e8, 1.0) << "gpu " << d;
}

}  // namespace
}  // namespace dnnsim
