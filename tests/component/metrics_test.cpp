// Megatron-style metrics of summary.json (sim/report/metrics.hpp) on runs small enough to check by
// hand. Every TEST runs in its own process (one SimGrid engine per process).
#include "sim/report/metrics.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "models/hardware/catalog.hpp"
#include "sim/report/report.hpp"
#include "sim/run/simulation.hpp"
#include "sim/workloads/pipeline/pipeline_workload.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

using testing::dgx_cluster;
using testing::load;

// One V100 at half its fp32 peak; one layer of 1 TFLOP forward (backward 2 TFLOP by default) whose
// memory traffic is nil, so the roofline is compute-bound; 4 MB of parameters (Ψ = 1e6) and 1 MB of
// activations per sample, 2 samples.
const std::string kComputeBoundGpu = R"(
name: one-gpu
cluster:
  node_types:
    box: {gpu: V100-16GB, gpus_per_node: 1, compute_efficiency: 0.5, nic: {link: Ethernet-25G}}
  nodes: [{type: box, count: 1}]
workload:
  kind: data_parallel
  model: {layers: [{forward_flops: "0.5TFlop", parameter_bytes: "4MB", activation_bytes: "1MB"}]}
  global_batch: 2
)";

TEST(Metrics, MfuOfOneFlopCostedLayerIsItsEfficiency) {
  // Model FLOPs: (0.5 + 1) TFLOP × 2 samples = 3 TFLOP per iteration. The layer runs at 0.5 × peak,
  // so t = 3e12 / (0.5 · peak) plus the optimizer step (Ψ = 1e6 parameters: a few µs of memory
  // traffic, not a model FLOP). MFU = 3e12 / (t · peak) = 0.5 / (1 + t_opt / t_layer), i.e. 0.5
  // minus a few millionths; HFU = MFU (no recomputation); TFLOP/s per GPU = MFU × peak / 1e12.
  const Scenario scenario = load(kComputeBoundGpu);
  const SimulationResult result = run_scenario(scenario, {});
  const auto summary = make_summary(scenario, result);
  const double peak = HardwareCatalog::builtin().find_gpu("V100-16GB")->peak_fp32->value();
  const auto& mean = summary["mean"];
  EXPECT_DOUBLE_EQ(mean["model_flops_per_iteration"].get<double>(), 3e12);
  EXPECT_NEAR(mean["mfu"].get<double>(), 0.5, 1e-4);
  EXPECT_LE(mean["mfu"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(mean["hfu"].get<double>(), mean["mfu"].get<double>());
  EXPECT_NEAR(mean["model_tflops_per_gpu"].get<double>(), mean["mfu"].get<double>() * peak / 1e12, 1e-9);
  // Exactly: MFU · makespan · peak = model FLOPs.
  EXPECT_NEAR(mean["mfu"].get<double>() * result.makespan_s * peak, 3e12, 1e-3);
  EXPECT_TRUE(mean["throughput_tokens_per_s"].is_null());  // a layer list is not a token model
}

TEST(Metrics, MfuOfAnMxfp8RunIsAgainstTheMxPeak) {
  // The same layer in MXFP8 on one B200 at half its peak (4.5 PFLOP/s dense, FP8 and MXFP8 alike):
  // its FLOPs are MXFP8's, so the MFU is against that peak and is the efficiency again, 0.5 minus the
  // optimizer step's share: the layer takes 3e12 / (0.5 · 4.5e15) = 1.33 ms, the optimizer's few MB of
  // memory traffic a few µs at half of 7.7 TB/s (0.3%). Against the FP32 peak (75 TFLOP/s) the MFU
  // would be 30. (Regression: the per-dtype FLOP counts were an array one dtype short.)
  std::string text = kComputeBoundGpu;
  text.replace(text.find("V100-16GB"), 9, "B200");
  text += "  dtype: mxfp8\n";
  const Scenario scenario = load(text);
  const SimulationResult result = run_scenario(scenario, {});
  const auto summary = make_summary(scenario, result);
  const double peak = HardwareCatalog::builtin().find_gpu("B200")->peak_mxfp8->value();
  const auto& mean = summary["mean"];
  EXPECT_NEAR(mean["mfu"].get<double>(), 0.5, 5e-3);
  EXPECT_LE(mean["mfu"].get<double>(), 0.5);
  EXPECT_NEAR(mean["mfu"].get<double>() * result.makespan_s * peak, 3e12, 1e-3);
}

TEST(Metrics, MemoryAtPeakSplitsModelStatesAndActivations) {
  // fp32 Adam (the data-parallel default) keeps 4 + 4 + 8 bytes per parameter: Ψ = 1e6 → weights
  // 4 MB, gradients 4 MB, optimizer state 8 MB; the forward of 2 samples holds 2 MB of activations
  // until the backward frees them, so the peak is 18 MB.
  const Scenario scenario = load(kComputeBoundGpu);
  const auto summary = make_summary(scenario, run_scenario(scenario, {}));
  const auto& device = summary["devices"]["node0/gpu0"];
  const auto& memory = device["memory_at_peak"];
  EXPECT_DOUBLE_EQ(device["peak_memory_bytes"].get<double>(), 18e6);
  EXPECT_DOUBLE_EQ(memory["weights_bytes"].get<double>(), 4e6);
  EXPECT_DOUBLE_EQ(memory["gradients_bytes"].get<double>(), 4e6);
  EXPECT_DOUBLE_EQ(memory["optimizer_state_bytes"].get<double>(), 8e6);
  EXPECT_DOUBLE_EQ(memory["activations_bytes"].get<double>(), 2e6);
  EXPECT_DOUBLE_EQ(memory["other_bytes"].get<double>(), 0.0);
}

TEST(Metrics, RecomputationCountsInHfuNotMfu) {
  // GPipe with re-materialization runs every forward twice: with F and B the model's forward and
  // backward FLOPs per sample, hardware / model FLOPs = (2F + B) / (F + B), whatever the timing. A
  // zoo language model gives tokens per second = samples per second × its sequence length
  // (gpt2-small at seq 128).
  const Scenario scenario = load(R"(
name: recompute
cluster:
  node_types:
    box: {gpu: A100-80GB-SXM, gpus_per_node: 2, nic: {link: Ethernet-25G}}
  nodes: [{type: box, count: 1}]
workload:
  kind: pipeline
  model: {zoo: gpt2-small, seq: 128}
  global_batch: 4
  micro_batches: 2
  schedule: {name: gpipe, recompute: true}
  planner: {name: uniform, stages: 2}
)");
  double forward = 0, backward = 0;
  for (const Layer& layer : scenario.workload_as<PipelineWorkloadSpec>()->model.layers) {
    forward += layer.forward_flops.value();
    backward += layer.backward_flops.value();
  }
  const auto summary = make_summary(scenario, run_scenario(scenario, {}));
  const auto& mean = summary["mean"];
  EXPECT_NEAR(mean["hardware_flops_per_iteration"].get<double>() / mean["model_flops_per_iteration"].get<double>(),
              (2 * forward + backward) / (forward + backward), 1e-9);
  EXPECT_GT(mean["hfu"].get<double>(), mean["mfu"].get<double>());
  EXPECT_DOUBLE_EQ(mean["throughput_tokens_per_s"].get<double>(), mean["throughput_samples_per_s"].get<double>() * 128);
}

TEST(Metrics, IdenticalDevicesShareARowAndTheBreakdownHasARowPerLayer) {
  // Four single-GPU nodes with the same share of the batch (2 samples each) have the same figures:
  // one row "node0–3/gpu0 × 4", every device with all_devices. The breakdown has a row for the layer
  // (its forward and backward), the gradient all-reduce, the optimizer step and the total.
  std::string yaml = kComputeBoundGpu;
  yaml.replace(yaml.find("count: 1"), 8, "count: 4");
  yaml.replace(yaml.find("global_batch: 2"), 15, "global_batch: 8");
  const Scenario scenario = load(yaml);
  const SimulationResult result = run_scenario(scenario, {});
  const auto summary = make_summary(scenario, result);
  const std::string table = format_summary_table(summary);
  EXPECT_NE(table.find("node0–3/gpu0 × 4"), std::string::npos) << table;
  EXPECT_EQ(table.find("node2/gpu0"), std::string::npos) << table;
  EXPECT_NE(format_summary_table(summary, true).find("node2/gpu0"), std::string::npos);
  const std::string breakdown = format_time_breakdown(result);
  for (const char* row : {"\nlayer0 ", "\nall-reduce bucket 0 ", "\noptimizer step ", "\ntotal "})
    EXPECT_NE(breakdown.find(row), std::string::npos) << row << " not in" << breakdown;
}

TEST(Metrics, EachMembersOwnCollectiveCountsItsShareOfTheRingsTraffic) {
  // FSDP over 2 nodes of 8 GPUs with a NIC each, TP 2: two sharding groups of 8 (the even GPUs and
  // the odd ones), 4 members a node. Each GPU issues its own part of every gather and reduce-scatter
  // (Collective::alone), its group rotated so that it leads; the group's ring is one channel per
  // member across the nodes (docs/collectives.md, "Channels"), so every member sends 1/4 of its
  // group's traffic between the nodes through its own NIC and receives 1/4: all 16 NICs carry the
  // same bytes, and the two switch ports the sum of their node's. (Planned from each member's own
  // rotation, every member's share went to the same GPU of the other node: node0/gpu2 and gpu3 5×
  // the others.)
  const Scenario scenario = load("name: fsdp-nics\n" + dgx_cluster(8, 2, true) + R"(workload:
  kind: pipeline
  model: {name: llm-mini, llm: {layers: 2, hidden: 1024, heads: 16, kv_heads: 16, vocab: 8192, seq: 512, ffn: 4096}}
  global_batch: 16
  micro_batch_size: 8
  schedule: 1f1b
  planner: {name: uniform, stages: 1}
  tensor_parallel: 2
  fsdp: true
)");
  const auto summary = make_summary(scenario, run_scenario(scenario, {}));
  const auto& links = summary["links"];
  const double first = links["node0/gpu0/nic"]["bytes"].get<double>();
  ASSERT_GT(first, 0);
  for (int node = 0; node < 2; ++node) {
    for (int gpu = 0; gpu < 8; ++gpu)
      EXPECT_EQ(links[fmt::format("node{}/gpu{}/nic", node, gpu)]["bytes"].get<double>(), first)
          << "node" << node << "/gpu" << gpu;
    EXPECT_DOUBLE_EQ(links[fmt::format("switch/node{}", node)]["bytes"].get<double>(), 8 * first);
  }
}

TEST(Metrics, DeviceNamesCompressToRanges) {
  std::vector<std::string> names;
  for (int node = 0; node < 1024; ++node) names.push_back("node" + std::to_string(node) + "/gpu0");
  EXPECT_EQ(compress_device_names(names), "node0–1023/gpu0");
  EXPECT_EQ(compress_device_names({"node0/gpu0", "node0/gpu1", "node2/gpu0", "node2/gpu1"}), "node0,2/gpu0–1");
  EXPECT_EQ(compress_device_names({"node0/gpu0", "node1/gpu1"}), "node0/gpu0, …");  // not a full product
  EXPECT_EQ(compress_device_names({"a", "b"}), "a, …");
  // A node number beyond long (user-named nodes, 20 digits) made std::stol throw std::out_of_range;
  // such names are listed, not compressed.
  EXPECT_EQ(compress_device_names({"node99999999999999999999/gpu0", "node0/gpu0"}), "node99999999999999999999/gpu0, …");
}

}  // namespace
}  // namespace dnnsim
