// The 5D planner's prediction against the simulation of the plan it chose (planner: megatron-5d, then
// `dnnsim run`'s lowering and executor): issue 51's "a test that runs a whole plan then a simulation".
//
// Config: Llama 3 8B, s = 16,384, FP8-CS, global batch 16, on one DGX-H100 (8 GPUs) with the shipped
// H100 calibration. The search (482 layouts) chooses TP 1 × PP 1 × CP 2 × DP 4, micro-batch 1: the CP
// ring of context_ring is in both the price and the simulated graph.
//
// Tolerance 1%. With PP 1 the estimate's per-step terms are the lowering's own (step_layers_time less
// the ring's attention, context_ring's phases priced by the same collective_time, the same
// step_collectives), so what is left between them is what the estimate writes as a formula and the
// executor plays out: the data-parallel all-reduce hidden under one micro-batch's backward (Megatron's
// overlap_grad_reduce, as bucketed there), and the FSDP-free gradient accumulation's kernels. Measured:
// predicted 2.573 s, simulated 2.579 s (−0.2%).
//
// FSDP is kept off (`fsdp: "off"`) because under FSDP the two disagree by a mechanism of their own, not
// by a rounding this test could absorb: the same search with FSDP allowed picks FSDP over CP 2 × DP 4,
// predicted 2.530 s, simulated 2.576 s (−1.8%); the lowering accumulates each micro-batch's full
// gradients (pipeline_lowering.cpp, gradient_accumulation of parameter_count) where the planner
// accumulates the 1/(DP·CP) shard (llm_layout_cost.cpp); with the lowering's accumulation divided by 8
// the simulation gives 2.534 s (−0.2%) — docs/megatron-bridge.md, "Not done".
#include <gtest/gtest.h>

#include "dnnsim/source_paths.hpp"
#include "sim/report/report.hpp"
#include "sim/run/simulation.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

const std::string kScenario = std::string(R"(
name: plan-then-simulate
cluster:
  node_types:
    dgx:
      gpu: H100-SXM
      gpus_per_node: 8
      fabric: nvswitch
      nic: {link: IB-NDR, per_gpu: true}
  nodes: [{type: dgx, count: 1}]
  interconnect: {kind: switch, latency: "1us"}
workload:
  kind: pipeline
  model: {zoo: llama3-8b, seq: 16384}
  global_batch: 16
  micro_batch_size: 1
  dtype: bf16
  precision: mixed
  schedule: {name: interleaved, chunks: auto}
  planner: {name: megatron-5d, fsdp: "off"}
  distributed_optimizer: true
  precision_recipe: fp8-cs
  bucket_size: 128MiB
  overlap: true
run: {iterations: 1, collective_fidelity: flow}
outputs: {trace: false, tasks_csv: false}
calibration: )") + DNNSIM_SOURCE_DIR "/data/calibration/llm/H100-SXM.yaml\n";

TEST(PlanThenSimulate, TheFiveDPlannersChoiceRunsAsPredicted) {
  const Scenario scenario = testing::load(kScenario);
  const nlohmann::ordered_json summary = make_summary(scenario, run_scenario(scenario, {}));
  ASSERT_EQ(summary["status"], "ok") << summary.dump();
  const std::string plan = summary["pipeline"]["plan"].get<std::string>();
  // 8 GPUs = TP · PP · CP · DP: TP 1, one stage and DP 4 leave CP 2.
  EXPECT_EQ(summary["pipeline"]["stage_count"], 1) << plan;
  EXPECT_EQ(summary["pipeline"]["tensor_parallel"], 1) << plan;
  EXPECT_EQ(summary["pipeline"]["data_parallel"], 4) << plan;
  const double predicted = summary["pipeline"]["predicted_iteration_time_s"].get<double>();
  const double simulated = summary["mean"]["iteration_time_s"].get<double>();
  EXPECT_NEAR(predicted, simulated, 0.01 * simulated)
      << "predicted " << predicted << " s, simulated " << simulated << " s, plan " << plan;
}

}  // namespace
}  // namespace dnnsim
