// Fidelity shortcuts of `kind: pipeline` checked against the full run they stand for, end to end through
// run_scenario: mirrored tensor-parallel ranks (tensor_parallel_fidelity: group) and symmetric windows
// of data-parallel replicas (data_parallel_fidelity: window) give the run with every rank and replica
// simulated (docs/megatron.md, docs/collectives.md).
//
// One SimGrid engine per process: each run is simulated in a forked child (summary_in_child).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "dnnsim/source_paths.hpp"
#include "tests/support/scenario_files.hpp"
#include "tests/support/summary_in_child.hpp"

namespace dnnsim {
namespace {

using nlohmann::ordered_json;
using testing::summary_in_child;
using testing::write_file;

// ---- tensor_parallel_fidelity: group ---------------------------------------------------------------

// Table 1 in miniature: 4 DGX-like nodes of 4 A100-80GB on NVSwitch, a NIC per GPU, one non-blocking
// switch; a 4-block GPT-like model at TP 4 × PP 2 × DP 2, interleaved over 2 chunks, full
// recomputation, the A100 Megatron calibration (launch queue, per-call latency, NVLink efficiency).
std::string mini_table1(const std::string& fidelity) {
  return "name: mini-table1-" + fidelity + "\n" + testing::dgx_cluster(4, 4, true) + "workload:\n  kind: pipeline\n" +
         testing::kMiniGptModel +
         fmt::format(R"(  global_batch: 16
  micro_batches: 8
  dtype: fp16
  precision: mixed
  schedule: {{name: interleaved, chunks: 2}}
  planner: {{name: uniform, stages: 2}}
  tensor_parallel: 4
  recompute: full
  overlap: false
  tensor_parallel_fidelity: {0}
calibration: {1}/data/calibration/megatron/A100-80GB-SXM.yaml
run: {{iterations: 2, collective_fidelity: flow}}
)",
                     fidelity, DNNSIM_SOURCE_DIR);
}

// `scenario` run with every tensor rank simulated and with rank 0 of each group mirrored, each in a child
// (files `name`-ranks.yaml and `name`-group.yaml); both must run, at the fidelity asked.
void run_ranks_and_group(const std::string& name, std::string (*scenario)(const std::string&), ordered_json& ranks,
                         ordered_json& group) {
  ranks = summary_in_child(write_file(name + "-ranks.yaml", scenario("ranks")));
  group = summary_in_child(write_file(name + "-group.yaml", scenario("group")));
  ASSERT_FALSE(ranks.is_null());
  ASSERT_FALSE(group.is_null());
  ASSERT_EQ(ranks["status"], "ok");
  ASSERT_EQ(group["status"], "ok");
  EXPECT_EQ(ranks["pipeline"]["tensor_parallel_fidelity"], "ranks");
  EXPECT_EQ(group["pipeline"]["tensor_parallel_fidelity"], "group");
}

// Ranks 1–3 of a group compute what rank 0 does on identical GPUs and send over NICs, NVLink ports
// and switch ports of their own (each node's port carries at most the sum of its NICs), so leaving
// them out changes no rank-0 time: the iterations agree to rounding, every device row equals the
// simulated GPU of its group, the per-GPU figures (FLOP rates, memory) are the same, and so is
// every link's traffic.
TEST(PipelineRun, MirroredTensorParallelRanksGiveTheRanksRun) {
  ordered_json ranks, group;
  ASSERT_NO_FATAL_FAILURE(run_ranks_and_group("table1", mini_table1, ranks, group));
  // Every link, NVSwitch ports and switch ports included: each rank's traffic is its group rank 0's
  // translated to its own links, and each mirrored collective's flows move the bytes the ranks run's
  // collectives do.
  testing::expect_mirrored_run_matches(
      group, ranks, 2,
      {"model_tflops_per_gpu", "hardware_tflops_per_gpu", "mfu", "model_flops_per_iteration", "utilization",
       "compute_s", "communication_s", "peak_memory_bytes"});
  const ordered_json& mirror = group["devices"]["node1/gpu3"];
  EXPECT_EQ(mirror["mirrors"], "node1/gpu0");
  EXPECT_EQ(mirror["peak_memory_bytes"], group["devices"]["node1/gpu0"]["peak_memory_bytes"]);
  EXPECT_NEAR(mirror["compute_s"].get<double>(), ranks["devices"]["node1/gpu3"]["compute_s"].get<double>(),
              1e-6 * ranks["devices"]["node1/gpu3"]["compute_s"].get<double>());
  EXPECT_FALSE(ranks["devices"]["node1/gpu3"].contains("mirrors"));
}

// Context parallelism beside tensor parallelism: Llama 3 8B at s = 4,096, TP 2 × CP 2 × DP 2 on 4 nodes of
// 2 A100s (each tensor group fills its node; a NIC per GPU). Each tensor rank runs its own CP ring over
// its own links, between the same layers' tensor-parallel collectives, so mirroring rank 1 changes no
// rank-0 time: the ranks run equals the group run. (Until 2026-12-03 the lowering added rank 1's ring
// after its group's collectives of the step, which wait for rank 0's ring: rank 1's attention then ran
// one step late and every rank idled: this run's ranks took 754.7 ms against the group's 743.5 ms, and
// TP 2 × CP 4 on one DGX-H100 idled 20% of its iteration.)
std::string tensor_and_context(const std::string& fidelity) {
  return "name: tp-cp-" + fidelity + "\n" + testing::dgx_cluster(2, 4, true) +
         fmt::format(R"(workload:
  kind: pipeline
  model: {{zoo: llama3-8b, seq: 4096}}
  global_batch: 4
  micro_batches: 2
  dtype: bf16
  precision: mixed
  schedule: {{name: 1f1b}}
  planner: {{name: uniform, stages: 1}}
  tensor_parallel: 2
  context_parallel: 2
  overlap: false
  tensor_parallel_fidelity: {0}
run: {{iterations: 1, collective_fidelity: flow}}
)",
                     fidelity);
}

TEST(PipelineRun, MirroredTensorRanksWithContextParallelismGiveTheRanksRun) {
  ordered_json ranks, group;
  ASSERT_NO_FATAL_FAILURE(run_ranks_and_group("tp-cp", tensor_and_context, ranks, group));
  const double iteration = ranks["mean"]["iteration_time_s"].get<double>();
  EXPECT_NEAR(group["mean"]["iteration_time_s"].get<double>(), iteration, 1e-9 * iteration);
  EXPECT_NEAR(ranks["mean"]["idle_s"].get<double>(), 0.0, 1e-9 * iteration);
}

// ---- data_parallel_fidelity: window ---------------------------------------------------------------

// 8 nodes of 2 A100-80GB (NVSwitch) on one non-blocking switch: a 4-block GPT-like model in 2 stages
// of 4 nodes (8 replicas each, one sample per replica per micro-batch), 1F1B, bucketed all-reduces
// overlapped with the last backward. `nic`: one per GPU, or one per node that both GPUs' sends share
// (so that pipeline sends and all-reduce rings contend on it); `extra`: more workload keys.
std::string replicated_gpt(const std::string& fidelity, bool nic_per_gpu, const std::string& extra,
                           const std::string& collective_fidelity) {
  return "name: windowed-" + fidelity + "\n" + testing::dgx_cluster(2, 8, nic_per_gpu) +
         "workload:\n  kind: pipeline\n" + testing::kMiniGptModel +
         fmt::format(R"(  global_batch: 32
  micro_batches: 4
  dtype: fp16
  precision: mixed
  schedule: 1f1b
  planner: {{name: uniform, stages: 2}}
  data_parallel_fidelity: {0}
{1}run: {{iterations: 2, collective_fidelity: {2}}}
)",
                     fidelity, extra, collective_fidelity);
}

// Translating both stages' replicas by two nodes maps the platform (identical nodes on one
// non-blocking switch) and the traffic (replica r sends to replica r of the next stage; the
// all-reduce rings, whose hop out of the window's last node lands on its first as it would on the
// next window's) onto themselves, so the window's replicas see every contention the full run's do:
// the iterations agree to rounding, and each mirrored GPU (and each link of a mirrored node) reports
// the figures of its source, which equal its own in the full run. Cases: hierarchical (the default
// rule) and ring all-reduces, step and flow fidelity, a NIC per GPU and one shared per node, and
// tensor parallel 2 (one group per node, ranks mirrored too).
TEST(PipelineRun, WindowedReplicasGiveTheReplicasRun) {
  struct Case {
    bool nic_per_gpu;
    std::string extra;
    std::string collective_fidelity;
  };
  const std::vector<Case> cases{
      {true, "", "step"},
      {false, "", "step"},
      {false, "", "flow"},
      {false, "  collective_algorithm: ring\n", "step"},
      {true, "  tensor_parallel: 2\n  tensor_parallel_fidelity: group\n", "flow"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("nic per GPU {}, {}{}", c.nic_per_gpu, c.extra, c.collective_fidelity));
    const ordered_json all = summary_in_child(
        write_file("replicas.yaml", replicated_gpt("replicas", c.nic_per_gpu, c.extra, c.collective_fidelity)));
    const ordered_json window = summary_in_child(
        write_file("window.yaml", replicated_gpt("window", c.nic_per_gpu, c.extra, c.collective_fidelity)));
    ASSERT_FALSE(all.is_null());
    ASSERT_FALSE(window.is_null());
    ASSERT_EQ(all["status"], "ok") << all["messages"].dump();
    ASSERT_EQ(window["status"], "ok") << window["messages"].dump();
    EXPECT_FALSE(all["pipeline"].contains("data_parallel_fidelity"));
    EXPECT_EQ(window["pipeline"]["data_parallel_fidelity"], "window");
    // 4 nodes per stage: a window of 2 nodes, 4 GPUs, i.e. 4 replicas (2 with tensor parallel 2).
    const bool tensor_parallel = c.extra.find("tensor_parallel: 2") != std::string::npos;
    EXPECT_EQ(window["pipeline"]["data_parallel_window"], tensor_parallel ? 2 : 4);
    testing::expect_mirrored_run_matches(window, all, 2,
                                         {"model_tflops_per_gpu", "mfu", "model_flops_per_iteration", "utilization",
                                          "compute_s", "communication_s", "peak_memory_bytes"});
    // node7/gpu1 (stage 1's last replica) mirrors node5/gpu1, its translate by two nodes (with
    // tensor parallelism, that group's simulated rank 0).
    const ordered_json& mirror = window["devices"]["node7/gpu1"];
    EXPECT_EQ(mirror["mirrors"], tensor_parallel ? "node5/gpu0" : "node5/gpu1");
    EXPECT_NEAR(mirror["communication_s"].get<double>(), all["devices"]["node7/gpu1"]["communication_s"].get<double>(),
                1e-6 * all["devices"]["node7/gpu1"]["communication_s"].get<double>());
  }
}

}  // namespace
}  // namespace dnnsim
