// `kind: pipeline` scenarios run end to end through run_scenario (sim/run/simulation.hpp) and
// make_summary: the `pipeline` section of summary.json, an infeasible plan, and Ada-Grouper's
// controller (sim/workloads/pipeline/pipeline_workload.hpp) choosing k between iterations. Every expected number
// is derived by hand below. Mirrored ranks and windows of replicas: pipeline_fidelity_run_test.cpp.
//
// Platform: one node whose GPUs are joined by a full mesh of per-direction links with no latency
// (fabric nvlink_mesh), so a transfer alone on its link takes exactly size / bandwidth
// (simulation_test.cpp), and stage s's activations (link s–s+1, one direction) never share a link
// with stage s+1's gradients (the other direction). Layer times are measured on the cluster's own GPU
// at one sample, so each compute takes exactly its measured time × samples.
//
// One SimGrid engine per process: every TEST runs in its own process (ctest), and a TEST that
// compares runs simulates each in a forked child (summary_in_child).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <string>
#include <vector>

#include "models/hardware/catalog.hpp"
#include "sim/report/report.hpp"
#include "sim/run/simulation.hpp"
#include "sim/workloads/pipeline/pipeline_workload.hpp"
#include "tests/support/collective_platforms.hpp"
#include "tests/support/scenario_files.hpp"
#include "tests/support/summary_in_child.hpp"

namespace dnnsim {
namespace {

using nlohmann::ordered_json;
using testing::load;
using testing::summary_in_child;
using testing::write_file;

using testing::kSimulationPrecision;

// ---- the summary of a planned pipeline ------------------------------------------------------------

// Four V100-32GB; four layers of t_f = 1 s, t_b = 2 s per sample that hold and send nothing and
// have no parameters (so no all-reduce, and optimizer steps of zero work); 8 samples in M = 4
// micro-batches of 2; the uniform planner with 2 stages.
const std::string kUniformTwoByTwo = "name: uniform-2x2\n" + testing::mesh_box_cluster("V100-32GB", 4) + R"(workload:
  kind: pipeline
  model:
    name: four-layers
    measured_on: V100-32GB
    measured_batch: 1
    layers: [{forward_time: "1s", backward_time: "2s", repeat: 4}]
  global_batch: 8
  micro_batches: 4
  schedule: 1f1b
  planner: {name: uniform, stages: 2}
run: {iterations: 2}
)";

TEST(PipelineRun, SummaryHasThePlanAndTheThroughput) {
  const Scenario scenario = load(kUniformTwoByTwo);
  const SimulationResult result = run_scenario(scenario, {});
  const ordered_json summary = make_summary(scenario, result);
  ASSERT_EQ(summary["status"], "ok") << summary["messages"].dump();

  const ordered_json& pipeline = summary["pipeline"];
  EXPECT_EQ(pipeline["planner"], "uniform");
  EXPECT_EQ(pipeline["schedule"], "1f1b");
  EXPECT_EQ(pipeline["feasible"], true);
  // 4 layers / 2 stages = 2 each; 4 GPUs / 2 stages = 2 replicas each, in cluster order; a
  // micro-batch is 8 / 4 = 2 samples.
  EXPECT_EQ(pipeline["stage_count"], 2);
  EXPECT_EQ(pipeline["micro_batches"], 4);
  EXPECT_EQ(pipeline["micro_batch_size"], 2);
  EXPECT_EQ(pipeline["plan"], "2 stages: [0,2)×2 @ node0/gpu0…node0/gpu1 | [2,4)×2 @ node0/gpu2…node0/gpu3, M = 4 × 2");
  for (int s = 0; s < 2; ++s) {
    SCOPED_TRACE(s);
    const ordered_json& stage = pipeline["stages"][s];
    EXPECT_EQ(stage["layers"], 2);
    EXPECT_EQ(stage["chunks"], ordered_json::parse(fmt::format("[[{}, {}]]", 2 * s, 2 * s + 2)));
    EXPECT_EQ(stage["gpus"], 2);
    EXPECT_EQ(stage["devices"],
              ordered_json::parse(fmt::format(R"(["node0/gpu{}", "node0/gpu{}"])", 2 * s, 2 * s + 1)));
  }

  // Each replica runs 1 of the micro-batch's 2 samples: a stage's forward is 2 layers × 1 s = 2 s,
  // its backward 2 × 2 s = 4 s; transfers carry 0 bytes and take no time. 1F1B then takes
  // (M + p − 1)(t_f + t_b) = (4 + 1)(2 + 4) = 30 s (Megatron-LM SC'21 §2.2), which DAPPLE's
  // Formula 2 also predicts for equal stages: Σ_s (F_s + B_s) + (M − 1)(F + B) = 2·6 + 3·6 = 30.
  // The second iteration starts when the first ends (each stage's first forward waits for its own
  // optimizer step of the previous iteration, which takes no time), so it takes 30 s too.
  EXPECT_NEAR(pipeline["predicted_iteration_time_s"].get<double>(), 30.0, kSimulationPrecision);
  ASSERT_EQ(summary["iteration_time_s"].size(), 2u);
  EXPECT_NEAR(summary["iteration_time_s"][0].get<double>(), 30.0, kSimulationPrecision);
  EXPECT_NEAR(summary["iteration_time_s"][1].get<double>(), 30.0, kSimulationPrecision);
  EXPECT_NEAR(summary["mean"]["iteration_time_s"].get<double>(), 30.0, kSimulationPrecision);
  // Throughput = global_batch / mean iteration time = 8 / 30 samples/s.
  EXPECT_NEAR(summary["mean"]["throughput_samples_per_s"].get<double>(), 8.0 / 30.0, kSimulationPrecision);
}

TEST(PipelineRun, AnInfeasiblePlanSimulatesNothingAndSaysWhy) {
  // 40 GB of fp32 parameters per layer = 1e10 parameters; fp32 Adam keeps 16 B each: 160 GB per
  // layer, far above a V100-32GB's 32 GiB however the 4 layers are split.
  std::string yaml = kUniformTwoByTwo;
  const std::string layers = R"(layers: [{forward_time: "1s", backward_time: "2s", repeat: 4}])";
  yaml.replace(yaml.find(layers), layers.size(),
               R"(layers: [{forward_time: "1s", backward_time: "2s", parameter_bytes: "40GB", repeat: 4}])");
  const Scenario scenario = load(yaml);
  const SimulationResult result = run_scenario(scenario, {});
  EXPECT_TRUE(result.graph.tasks().empty());
  const auto* report = dynamic_cast<const PipelineRunReport*>(result.workload_result.get());
  ASSERT_NE(report, nullptr);
  EXPECT_FALSE(report->plan.feasible);
  EXPECT_EQ(result.infeasible_reason, report->plan.reason);

  const ordered_json summary = make_summary(scenario, result);
  EXPECT_EQ(summary["status"], "infeasible");
  ASSERT_EQ(summary["messages"].size(), 1u);
  const std::string reason = summary["messages"][0];
  EXPECT_NE(reason.find("out of memory"), std::string::npos) << reason;
  EXPECT_EQ(summary["pipeline"]["feasible"], false);
  EXPECT_EQ(summary["pipeline"]["reason"], reason);
  EXPECT_FALSE(summary["pipeline"].contains("stages"));
  EXPECT_EQ(summary["makespan_s"], 0.0);
  // stdout says why and stops there: no iteration time, throughput or device rows of zeros.
  const std::string table = format_summary_table(summary);
  EXPECT_NE(table.find("infeasible\n  " + reason), std::string::npos) << table;
  for (const char* zero : {"mean iteration", "throughput", "device"})
    EXPECT_EQ(table.find(zero), std::string::npos) << zero << " in " << table;
}

// ---- the gradient all-reduce overlapped with the last backward -------------------------------------

// One stage replicated on two GPUs of an NVSwitch box (50 GB/s per GPU port, no latency), two
// layers of t_f = 10 ms, t_b = 20 ms per sample and 100 MB of fp32 parameters each, 100 MB buckets
// (one per layer), SGD; global batch 4 in M = 2 micro-batches of 2, so each replica runs 1 sample.
// A 100 MB ring all-reduce over 2 GPUs is 2 steps of 50 MB at 50 GB/s: 2 ms (simulation_test.cpp). The
// platform and layers: testing::kV100PairSwitch and two_bucketed_layers.
std::string overlapped_stage(bool overlap) {
  return "name: overlapped-stage\n" + testing::kV100PairSwitch + R"(workload:
  kind: pipeline
  global_batch: 4
  micro_batches: 2
  schedule: 1f1b
  stages: [{layers: 2, gpus: 2}]
)" + testing::two_bucketed_layers(overlap);
}

TEST(PipelineRun, WithoutOverlapTheAllReduceFollowsTheLastBackward) {
  // Each GPU: F(mb0) 0–20 ms, B(mb0) 20–60, F(mb1) 60–80, B(mb1) 80–120 ms; then both 2 ms
  // all-reduces one after the other, 120–124 ms, then the SGD step.
  const Scenario scenario = load(overlapped_stage(false));
  const SimulationResult result = run_scenario(scenario, {});
  EXPECT_NEAR(result.makespan_s, 0.124 + testing::v100_sgd_step_seconds(200e6), kSimulationPrecision);
}

TEST(PipelineRun, TheOverlappedAllReduceHidesBehindTheLastBackward) {
  // Gradients accumulate over the micro-batches, so only mb1's backward can hide the all-reduce. It
  // runs as one piece per bucket: "second" 80–100 ms, whose bucket is all-reduced 100–102 ms while
  // "first" runs 100–120 ms; then first's bucket 120–122 ms. The hidden part is second's 2 ms, so
  // the iteration is the time without overlap minus 2 ms: 0.124 − 0.002 = 0.122 s + the SGD step.
  const Scenario scenario = load(overlapped_stage(true));
  const SimulationResult result = run_scenario(scenario, {});
  EXPECT_NEAR(result.makespan_s, 0.124 - 0.002 + testing::v100_sgd_step_seconds(200e6), kSimulationPrecision);
  std::vector<std::string> all_reduces;
  for (const Task& task : result.graph.tasks())
    if (task.is_collective()) all_reduces.push_back(task.label);
  EXPECT_EQ(all_reduces, (std::vector<std::string>{"all-reduce s0 bucket 0", "all-reduce s0 bucket 1"}));
}

// ---- Ada-Grouper ------------------------------------------------------------------------------------

// Three stages on three GPUs, each stage two layers: `work` (t_f = 1 s, t_b = 2 s per sample,
// stashes 1 GB, 400 MB of fp32 parameters = 1e8 parameters) and `boundary` (no time, no
// parameters, its output of `sent` bytes is what crosses to the next stage, and is stashed too).
// M = 8 micro-batches of one sample; 3 iterations; links of 1 GB/s per direction.
//
// Model states per GPU (fp32 Adam: 4 + 4 + 8 = 16 B per parameter): W = 1e8 × 16 = 1.6e9 B.
// Activations per micro-batch per stage: A = 1 GB + sent.
// Every stage's optimizer step moves 1e8 × (2 × (4 + 8) + 4) = 2.8e9 B (read and write weights and
// Adam states, read gradients; planners/common/layer_cost.cpp) at the V100's 900 GB/s: the tail
// t_opt = 2.8e9 / 9e11 s (its 1e9 FLOPs take 64 µs at 15.7 TFLOP/s: memory-bound). Each stage runs
// it after its last backward; stage 0 ends last in every schedule here, so an iteration takes the
// last backward's end on stage 0 plus t_opt.
constexpr double kOptimizerTail = 2.8e9 / 9e11;

std::string three_stages(const std::string& gpu, const std::string& sent, const std::string& schedule) {
  std::string layers;
  for (int s = 0; s < 3; ++s)
    layers +=
        R"(      - {name: work, forward_time: "1s", backward_time: "2s", activation_bytes: "1GB", parameter_bytes: "400MB"}
      - {name: boundary, forward_time: "0s", backward_time: "0s", activation_bytes: ")" +
        sent + "\"}\n";
  return "name: three-stages\n" + testing::mesh_box_cluster(gpu, 3) + R"(workload:
  kind: pipeline
  model:
    name: three-stages
    measured_on: V100-32GB
    measured_batch: 1
    layers:
)" + layers +
         R"(  global_batch: 8
  micro_batches: 8
  schedule: )" +
         schedule + R"(
  stages: [{layers: 2, gpus: 1}, {layers: 2, gpus: 1}, {layers: 2, gpus: 1}]
run: {iterations: 3}
outputs: {trace: false, tasks_csv: false}
)";
}

// The memory cap that binds on the slow link (sent = 2 GB, A = 3e9 B). kFkB keeps
// min(k(p − i), M) micro-batches on stage i (papers-parallelism.md §3.2); stage 0 is the fullest:
//   k = 1: W + 3A = 10.6e9;  k = 2: W + 6A = 19.6e9;  k = 4 and k = 8: W + 8A = 25.6e9.
// 20 GB lets k ≤ 2 fit on every GPU and not k = 4 or 8; the V100-32GB's own 32 GiB (34.4e9) fits all.
const std::string kCappedGpu = R"({model: V100-32GB, memory: "20GB"})";
const std::string kSlowLinkAdaGrouper = "{name: ada-grouper, candidates: [1, 2, 4, 8]}";

// Iteration times on the slow link (c = 2 GB / 1 GB/s = 2 s per activation or gradient transfer),
// from hand timelines. Each stage runs its steps in its schedule's order (kFkB: min(k(p−i−1), M)
// forwards, then k forwards and k backwards in turn); a forward of stage i > 0 waits for its
// activation, a backward of stage i < 2 for its gradient; each stage sends on two FIFO streams (one
// transfer at a time each). Fj[a,b] = forward of micro-batch j from a to b.
//  k = 1 (1F1B):
//   s2: F0[6,7] B0[7,9] F1[9,10] B1[10,12] F2[16,17] B2[17,19] F3[23,24] B3[24,26] F4[26,27] B4[27,29]
//       F5[33,34] B5[34,36] F6[40,41] B6[41,43] F7[43,44] B7[44,46]
//   s1: F0[3,4] F1[5,6] B0[11,13] F2[13,14] B1[14,16] F3[20,21] B2[21,23] F4[23,24] B3[28,30] F5[30,31]
//       B4[31,33] F6[37,38] B5[38,40] F7[40,41] B6[45,47] B7[48,50]
//   s0: F0[0,1] F1[1,2] F2[2,3] B0[15,17] F3[17,18] B1[18,20] F4[20,21] B2[25,27] F5[27,28] B3[32,34]
//       F6[34,35] B4[35,37] F7[37,38] B5[42,44] B6[49,51] B7[52,54]                            → 54
//   (s1's F1 waits for activation 1, whose send [3,5] queues behind activation 0's [1,3]; s0's B0
//   waits for gradient 0: s2's B0 ends at 9, s1 sends it on at 13 + 2 = 15.)
//  k = 2:
//   s2: F0[6,7] F1[8,9] B0[9,11] B1[11,13] F2[13,14] F3[14,15] B2[15,17] B3[17,19] F4[20,21] F5[22,23]
//       B4[23,25] B5[25,27] F6[27,28] F7[29,30] B6[30,32] B7[32,34]
//   s1: F0[3,4] F1[5,6] F2[7,8] F3[9,10] B0[13,15] B1[15,17] F4[17,18] F5[18,19] B2[19,21] B3[21,23]
//       F6[24,25] F7[26,27] B4[27,29] B5[29,31] B6[34,36] B7[36,38]
//   s0: F0…F5[0,6] B0[17,19] B1[19,21] F6[21,22] F7[22,23] B2[23,25] B3[25,27] B4[31,33] B5[33,35]
//       B6[38,40] B7[40,42]                                                                      → 42
//  k = 4 (s0: F0…F7[0,8] B0[22,24] … B3[28,30] B4[33,35] … B7[39,41]) → 41; k = 8 → 45 (the same rules).
// So 1F1B stalls on every round trip, k = 2 hides most of it, k = 4 a little more, and k = 8 (GPipe)
// loses it again to the long fill and drain.
constexpr double kOneFOneBSlow = 54, kGroupOfTwoSlow = 42, kGroupOfFourSlow = 41, kGroupOfEightSlow = 45;

std::vector<double> doubles(const ordered_json& array) {
  std::vector<double> values;
  for (const ordered_json& v : array) values.push_back(v.get<double>());
  return values;
}

std::vector<int> group_sizes(const ordered_json& summary) {
  std::vector<int> sizes;
  for (const ordered_json& choice : summary["pipeline"]["group_size_per_iteration"])
    sizes.push_back(choice["group_size"].get<int>());
  return sizes;
}

void expect_iteration_times(const ordered_json& summary, const std::vector<double>& expected) {
  const std::vector<double> measured = doubles(summary["iteration_time_s"]);
  ASSERT_EQ(measured.size(), expected.size()) << summary["iteration_time_s"].dump();
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(measured[i], expected[i], kSimulationPrecision) << "iteration " << i;
}

// The predictions recorded before `iteration`: candidate k → seconds.
void expect_predictions(const ordered_json& summary, std::size_t iteration,
                        const std::vector<std::pair<int, double>>& expected) {
  const ordered_json& predicted = summary["pipeline"]["group_size_per_iteration"][iteration]["predicted_s"];
  ASSERT_EQ(predicted.size(), expected.size()) << predicted.dump();
  for (const auto& [k, seconds] : expected) {
    ASSERT_TRUE(predicted.contains(std::to_string(k))) << "k = " << k << ": " << predicted.dump();
    EXPECT_NEAR(predicted[std::to_string(k)].get<double>(), seconds, kSimulationPrecision) << "k = " << k;
  }
}

ordered_json run_summary(const std::string& yaml) {
  const Scenario scenario = load(yaml);
  return make_summary(scenario, run_scenario(scenario, {}));
}

TEST(PipelineRun, AdaGrouperWithFreeTransfersKeepsTheFirstCandidate) {
  // sent = 0: transfers carry nothing and take no time, and the stages are equal. Every kFkB then
  // takes (M + p − 1)(t_f + t_b) + t_opt = (8 + 2)·3 + t_opt = 30 + t_opt: the last stage works
  // without a gap from (p − 1)t_f = 2 to 2 + M(t_f + t_b) = 26, its last backward's gradient reaches
  // stage 0 after (p − 1)t_b = 4 more. All candidates k = 1 … M (the default) fit
  // (W + min(3k, 8)·1e9 ≤ 9.6e9 < 32 GiB); iteration 0 runs the first, k = 1, and every later
  // choice is a tie, which goes to the smaller k: k stays 1.
  const ordered_json summary = run_summary(three_stages("V100-32GB", "0B", "{name: ada-grouper}"));
  ASSERT_EQ(summary["status"], "ok") << summary["messages"].dump();
  EXPECT_EQ(summary["pipeline"]["schedule"], "ada-grouper");
  EXPECT_EQ(group_sizes(summary), (std::vector<int>{1, 1, 1}));
  const double expected = 30 + kOptimizerTail;
  expect_iteration_times(summary, {expected, expected, expected});
  // Iteration 0 is chosen before anything was measured: no predictions.
  EXPECT_TRUE(summary["pipeline"]["group_size_per_iteration"][0]["predicted_s"].empty());
  std::vector<std::pair<int, double>> all_equal;
  for (int k = 1; k <= 8; ++k) all_equal.emplace_back(k, expected);
  expect_predictions(summary, 1, all_equal);
  expect_predictions(summary, 2, all_equal);
}

TEST(PipelineRun, AdaGrouperOnASlowLinkTakesTheFastestGroupThatFits) {
  // Iteration 0 runs k = 1 (54 + t_opt). Measured: t_f = 1, t_b = 2, c = 2 per transfer, tail
  // t_opt, from which the estimator predicts the timelines above for each candidate that fits
  // (k = 1, 2 under the 20 GB cap; see kCappedGpu): k = 2 is the fastest, 42 + t_opt.
  const ordered_json summary = run_summary(three_stages(kCappedGpu, "2GB", kSlowLinkAdaGrouper));
  ASSERT_EQ(summary["status"], "ok") << summary["messages"].dump();
  EXPECT_EQ(group_sizes(summary), (std::vector<int>{1, 2, 2}));
  expect_iteration_times(
      summary, {kOneFOneBSlow + kOptimizerTail, kGroupOfTwoSlow + kOptimizerTail, kGroupOfTwoSlow + kOptimizerTail});
  const std::vector<std::pair<int, double>> fitting = {{1, kOneFOneBSlow + kOptimizerTail},
                                                       {2, kGroupOfTwoSlow + kOptimizerTail}};
  expect_predictions(summary, 1, fitting);
  expect_predictions(summary, 2, fitting);
  // The measured peaks are those of kFkB with k = 2 (iteration 0's k = 1 holds less): stage i keeps
  // min(2(3 − i), 8) micro-batches: W + 6A, W + 4A, W + 2A; all within the 20 GB cap.
  const ordered_json& devices = summary["devices"];
  EXPECT_NEAR(devices["node0/gpu0"]["peak_memory_bytes"].get<double>(), 1.6e9 + 6 * 3e9, 1.0);
  EXPECT_NEAR(devices["node0/gpu1"]["peak_memory_bytes"].get<double>(), 1.6e9 + 4 * 3e9, 1.0);
  EXPECT_NEAR(devices["node0/gpu2"]["peak_memory_bytes"].get<double>(), 1.6e9 + 2 * 3e9, 1.0);
  for (const auto& [gpu, device] : devices.items()) EXPECT_LE(device["peak_memory_bytes"].get<double>(), 20e9) << gpu;
}

TEST(PipelineRun, AdaGrouperWithoutTheCapTakesFour) {
  // The same on the V100-32GB's own 32 GiB: every candidate fits (25.6e9 at most), and k = 4 is the
  // fastest (41 < 42 < 45 < 54). The cap of the previous test is what kept k at 2.
  const ordered_json summary = run_summary(three_stages("V100-32GB", "2GB", kSlowLinkAdaGrouper));
  ASSERT_EQ(summary["status"], "ok") << summary["messages"].dump();
  EXPECT_EQ(group_sizes(summary), (std::vector<int>{1, 4, 4}));
  expect_iteration_times(
      summary, {kOneFOneBSlow + kOptimizerTail, kGroupOfFourSlow + kOptimizerTail, kGroupOfFourSlow + kOptimizerTail});
  expect_predictions(summary, 1,
                     {{1, kOneFOneBSlow + kOptimizerTail},
                      {2, kGroupOfTwoSlow + kOptimizerTail},
                      {4, kGroupOfFourSlow + kOptimizerTail},
                      {8, kGroupOfEightSlow + kOptimizerTail}});
  EXPECT_NEAR(summary["devices"]["node0/gpu0"]["peak_memory_bytes"].get<double>(), 1.6e9 + 8 * 3e9, 1.0);
}

TEST(PipelineRun, AdaGrouperIsFasterThanFixedOneFOneBOnASlowLink) {
  // The same capped scenario under fixed 1F1B and under Ada-Grouper, each in its own process.
  const ordered_json fixed = summary_in_child(write_file("1f1b.yaml", three_stages(kCappedGpu, "2GB", "1f1b")));
  const ordered_json adaptive =
      summary_in_child(write_file("ada.yaml", three_stages(kCappedGpu, "2GB", kSlowLinkAdaGrouper)));
  ASSERT_FALSE(fixed.is_null());
  ASSERT_FALSE(adaptive.is_null());
  // 1F1B repeats the k = 1 timeline: each iteration starts when stage 0's optimizer step of the
  // previous one ends (stage 0 ends last), 54 + t_opt each.
  const double one_f_one_b = kOneFOneBSlow + kOptimizerTail;
  expect_iteration_times(fixed, {one_f_one_b, one_f_one_b, one_f_one_b});
  EXPECT_FALSE(fixed["pipeline"].contains("group_size_per_iteration"));
  // Ada-Grouper's iteration 0 is 1F1B's; after it, every iteration is faster.
  const std::vector<double> fixed_times = doubles(fixed["iteration_time_s"]);
  const std::vector<double> adaptive_times = doubles(adaptive["iteration_time_s"]);
  ASSERT_EQ(adaptive_times.size(), 3u);
  EXPECT_NEAR(adaptive_times[0], fixed_times[0], kSimulationPrecision);
  for (std::size_t i = 1; i < adaptive_times.size(); ++i)
    EXPECT_LT(adaptive_times[i], fixed_times[i]) << "iteration " << i;
  EXPECT_LT(adaptive["mean"]["iteration_time_s"].get<double>(), fixed["mean"]["iteration_time_s"].get<double>());
}

TEST(PipelineRun, AdaGrouperRunsAreDeterministic) {
  // Two runs of the same scenario, each in its own process: the same iteration times and the same
  // choices with the same predictions, to the bit.
  const std::string path = write_file("ada.yaml", three_stages("V100-32GB", "2GB", kSlowLinkAdaGrouper));
  const ordered_json first = summary_in_child(path);
  const ordered_json second = summary_in_child(path);
  ASSERT_FALSE(first.is_null());
  ASSERT_FALSE(second.is_null());
  EXPECT_EQ(first["iteration_time_s"], second["iteration_time_s"]);
  EXPECT_EQ(first["pipeline"]["group_size_per_iteration"], second["pipeline"]["group_size_per_iteration"]);
  EXPECT_EQ(first.dump(), second.dump());
}

TEST(PipelineRun, CriticalPathOnMeasuredTimesKeepsAnOrderItsMeasurementsConfirm) {
  // critical-path on the slow link, ordered for the planners' predicted times and, with `times:
  // measured`, re-ordered before iterations 1 and 2 for the mean of the times measured so far. On this
  // mesh every transfer is alone on its link direction, so the measured times are the predicted ones
  // (2 GB at 1 GB/s, the layers' own times), the re-ordering gives back the same order, and every
  // iteration takes what the fixed order's does, to the bit.
  const std::string schedule = "{name: critical-path, max_in_flight: 8";
  const ordered_json fixed = summary_in_child(write_file("cp.yaml", three_stages("V100-32GB", "2GB", schedule + "}")));
  const ordered_json measured = summary_in_child(
      write_file("cp-measured.yaml", three_stages("V100-32GB", "2GB", schedule + ", times: measured}")));
  ASSERT_FALSE(fixed.is_null());
  ASSERT_FALSE(measured.is_null());
  EXPECT_EQ(fixed["iteration_time_s"], measured["iteration_time_s"]);
  EXPECT_EQ(doubles(measured["iteration_time_s"]).size(), 3u);
}

// ---- pipedream-async's stashed weights ------------------------------------------------------------

// Four explicit single-GPU stages of one layer each on V100-16GB (16 GiB = 17.18e9 B), every layer
// 2.5e9 B of fp32 parameters (6.25e8) and nothing stashed or sent, M = 4 micro-batches of 1.
std::string four_heavy_stages(const std::string& schedule) {
  return "name: heavy-" + schedule + "\n" + testing::mesh_box_cluster("V100-16GB", 4) +
         fmt::format(R"(workload:
  kind: pipeline
  model:
    name: heavy
    measured_on: V100-16GB
    measured_batch: 1
    layers: [{{forward_time: "1ms", backward_time: "2ms", parameter_bytes: "2.5GB", repeat: 4}}]
  precision: fp32
  global_batch: 4
  micro_batches: 4
  schedule: {0}
  stages: [{{layers: 1, gpus: 1}}, {{layers: 1, gpus: 1}}, {{layers: 1, gpus: 1}}, {{layers: 1, gpus: 1}}]
run: {{iterations: 1}}
)",
                     schedule);
}

TEST(PipelineRun, StashedWeightsOfPipeDreamAsyncAreMeasuredAndCanRunOutOfMemory) {
  // fp32 Adam: 16 B per parameter, 1e10 B of model states per GPU: fits in 16 GiB under 1f1b.
  // pipedream-async adds p − i stashed fp32 weight versions of 2.5e9 B: 2e10 B on GPU 0 (18.63 GiB)
  // and 1.75e10 B on GPU 1 (16.3 GiB) do not fit; 1.5e10 and 1.25e10 B do.
  const ordered_json flushed = summary_in_child(write_file("heavy-1f1b.yaml", four_heavy_stages("1f1b")));
  EXPECT_EQ(flushed["status"], "ok");
  const ordered_json asynchronous =
      summary_in_child(write_file("heavy-async.yaml", four_heavy_stages("pipedream-async")));
  EXPECT_EQ(asynchronous["status"], "out_of_memory");
  ASSERT_EQ(asynchronous["messages"].size(), 2u);
  EXPECT_EQ(asynchronous["messages"][0], "out of memory on node0/gpu0: needs 18.63 GiB, has 16 GiB");
  const auto& devices = asynchronous["devices"];
  for (int d = 0; d < 4; ++d) {
    const auto& device = devices[fmt::format("node0/gpu{}", d)];
    EXPECT_NEAR(device["peak_memory_bytes"].get<double>(), 1e10 + (4 - d) * 2.5e9, 1.0) << "gpu " << d;
    EXPECT_NEAR(device["memory_at_peak"]["stashed_weights_bytes"].get<double>(), (4 - d) * 2.5e9, 1.0) << "gpu " << d;
    EXPECT_NEAR(device["memory_at_peak"]["activations_bytes"].get<double>(), 0.0, 1.0) << "gpu " << d;
  }
}

// ---- a profile's saved_bytes ----------------------------------------------------------------------

// A profile (pbs 2) of two parameter-free layers that output 8e6 B but keep saved_bytes = 3e8 B per
// micro-batch of 2 for their backward, one per GPU (explicit stages), GPipe with M micro-batches of 2.
std::string saved_bytes_pipeline(int micro_batches) {
  write_file("blocks-pbs-2.txt",
             "n1 -- Block0 -- forward_compute_time=1, backward_compute_time=2, activation_size=8e6, parameter_size=0, "
             "saved_bytes=3e8\n"
             "n2 -- Block1 -- forward_compute_time=1, backward_compute_time=2, activation_size=8e6, parameter_size=0, "
             "saved_bytes=3e8\n"
             "\tn1 -- n2\n");
  return "name: saved-bytes\n" + testing::mesh_box_cluster("V100-32GB", 2) +
         fmt::format(R"(workload:
  kind: pipeline
  model: {{profile: blocks-pbs-2.txt, measured_on: V100-32GB}}
  global_batch: {}
  micro_batch_size: 2
  schedule: gpipe
  stages: [{{layers: 1, gpus: 1}}, {{layers: 1, gpus: 1}}]
run: {{iterations: 1}}
)",
                     2 * micro_batches);
}

TEST(PipelineRun, AStagesPeakGrowsBySavedBytesPerMicroBatchInFlight) {
  // GPipe runs every forward before any backward, so stage 0 holds all M micro-batches at its peak;
  // nothing else is allocated (no parameters, transfers allocate nothing). Its peak is M × 3e8 B:
  // 3e8 for M = 1, 9e8 for M = 3, which grow by saved_bytes × (3 − 1) = 6e8. The output alone
  // (8e6 B per micro-batch) would give 2.4e7 B for M = 3.
  const std::string one = write_file("m1.yaml", saved_bytes_pipeline(1));
  const std::string three = write_file("m3.yaml", saved_bytes_pipeline(3));
  const ordered_json m1 = summary_in_child(one);
  const ordered_json m3 = summary_in_child(three);
  ASSERT_EQ(m1["status"], "ok");
  ASSERT_EQ(m3["status"], "ok");
  const auto peak = [](const ordered_json& summary) {
    return summary["devices"]["node0/gpu0"]["peak_memory_bytes"].get<double>();
  };
  EXPECT_NEAR(peak(m1), 3e8, 1.0);
  EXPECT_NEAR(peak(m3), 9e8, 1.0);
  EXPECT_NEAR(peak(m3) - peak(m1), 3e8 * 2, 1.0);
  EXPECT_NEAR(m3["devices"]["node0/gpu0"]["memory_at_peak"]["activations_bytes"].get<double>(), 9e8, 1.0);
  EXPECT_EQ(m3["pipeline"]["activation_memory"], "profile saved_bytes: 2 layers");

  // The planners' memory check (training_memory of the stage's layers, micro-batch 2, 3 in flight)
  // counts the same 2 · 3 · 3e8 / 2 = 9e8 B.
  const Scenario scenario = load_scenario(three);
  const auto* spec = scenario.workload_as<PipelineWorkloadSpec>();
  ASSERT_NE(spec, nullptr);
  TrainingMemoryConfig config;
  config.micro_batch = 2;
  config.micro_batches_in_flight = 3;
  const std::vector<Layer> stage0(spec->model.layers.begin(), spec->model.layers.begin() + 1);
  EXPECT_NEAR(training_memory(stage0, config).activations.value(), 9e8, 1.0);
}

}  // namespace
}  // namespace dnnsim
