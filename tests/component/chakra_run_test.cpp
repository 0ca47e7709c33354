// Chakra execution traces simulated end to end (workload.kind: chakra), each time derived by hand.
// Platform: one node of A100s on an NVSwitch whose ports are 100 GB/s and 1 us per direction
// (testing::nvswitch_cluster), so a step i → j costs α = 2 us + bytes / β, β = 100 GB/s (CM02
// without cross-traffic), and a ring all-reduce of S bytes on 2 GPUs is 2 (α + S / (2β))
// (collective_cost_test.cpp checks that formula against the simulator within 2%). Recorded
// durations are taken as-is on the GPU they are mapped onto. Every TEST runs in its own process.
#include <gtest/gtest.h>

#include <filesystem>

#include "sim/run/simulation.hpp"
#include "tests/support/chakra_writer.hpp"
#include "tests/support/collective_platforms.hpp"
#include "tests/support/scenario_files.hpp"
#include "tests/support/summary_in_child.hpp"

namespace dnnsim {
namespace {

using testing::EtFile;
using testing::pb::COMM_COLL_NODE;
using testing::pb::COMM_RECV_NODE;
using testing::pb::COMM_SEND_NODE;
using testing::pb::COMP_NODE;

using testing::kFormulaTolerance;
using testing::kSwitchAlpha;
using testing::kSwitchBeta;

std::string scenario(int gpus, const std::string& files) {
  return "\nname: chakra\n" + testing::nvswitch_cluster(gpus) + "workload:\n  kind: chakra\n  files: \"" + files +
         "\"\n";
}

double all_reduce_two(double bytes) { return 2 * (kSwitchAlpha + bytes / (2 * kSwitchBeta)); }

double simulate_trace(int gpus, const std::string& pattern) {
  const Scenario s = testing::load(scenario(gpus, pattern));
  return run_scenario(s, {}).makespan_s;
}

TEST(ChakraRun, TwoRanksSendReceiveThenAllReduce) {
  // rank 0: compute A (100 us), send 10 MB to rank 1 (tag 7), then the all-reduce of 20 MB;
  // rank 1: receive from rank 0, compute B (200 us), then the all-reduce.
  // A ends at 100 us; the transfer takes α + 10 MB / β = 102 us → 202 us; B ends at 402 us; the
  // all-reduce 2 (α + 10 MB / β) = 204 us → 606 us.
  const auto dir = testing::test_dir();
  EtFile r0, r1;
  r0.add("A", COMP_NODE).set_duration_micros(100);
  auto& send = r0.add("send", COMM_SEND_NODE, {0});
  EtFile::attr(send, "comm_dst", 1);
  EtFile::attr(send, "comm_size", 10'000'000);
  EtFile::attr(send, "comm_tag", 7);
  auto& ar0 = r0.add("all-reduce", COMM_COLL_NODE, {1});
  EtFile::attr(ar0, "comm_type", testing::pb::ALL_REDUCE);
  EtFile::attr(ar0, "comm_size", 20'000'000);
  auto& recv = r1.add("recv", COMM_RECV_NODE);
  EtFile::attr(recv, "comm_src", 0);
  EtFile::attr(recv, "comm_size", 10'000'000);
  EtFile::attr(recv, "comm_tag", 7);
  r1.add("B", COMP_NODE, {0}).set_duration_micros(200);
  auto& ar1 = r1.add("all-reduce", COMM_COLL_NODE, {1});
  EtFile::attr(ar1, "comm_type", testing::pb::ALL_REDUCE);
  EtFile::attr(ar1, "comm_size", 20'000'000);
  r0.save((dir / "hand.0.et").string());
  r1.save((dir / "hand.1.et").string());
  const double expected = 100e-6 + (kSwitchAlpha + 10e6 / kSwitchBeta) + 200e-6 + all_reduce_two(20e6);
  EXPECT_NEAR(simulate_trace(2, (dir / "hand.%d.et").string()), expected, kFormulaTolerance * expected);
}

// Two layers, every compute 100 us, every collective an all-reduce of 10 MB (104 us on 2 GPUs).
std::string text_workload(const std::string& parallelism) {
  return parallelism +
         "\n2\n"
         "l0 -1 100 ALLREDUCE 10000000 100 ALLREDUCE 10000000 100 ALLREDUCE 10000000 10\n"
         "l1 -1 100 ALLREDUCE 10000000 100 ALLREDUCE 10000000 100 ALLREDUCE 10000000 10\n";
}

// text_workload(parallelism) written for 2 ranks by the text converter's generator and simulated.
double simulate_text_workload(const std::string& parallelism) {
  const auto dir = testing::test_dir();
  testing::write_text_workload(text_workload(parallelism), (dir / "text").string(), 2);
  return simulate_trace(2, (dir / "text.%d.et").string());
}

TEST(ChakraRun, TextConverterDataParallel) {
  // F0 0–100, F1 –200, WG1 –300; its all-reduce 300–404 on the comm stream while IG1 300–400 and
  // WG0 400–500 compute; WG0's all-reduce 500–604.
  const double c = 100e-6, ar = all_reduce_two(10e6);
  const double expected = 5 * c + ar;
  EXPECT_NEAR(simulate_text_workload("DATA"), expected, kFormulaTolerance * expected);
}

TEST(ChakraRun, TextConverterModelParallel) {
  // F0, its all-reduce, F1, its all-reduce, IG1, IG1's all-reduce (WG1 beside it), IG0, WG0: the
  // chain 5 c + 3 ar (IG0 waits for IG1's all-reduce, which outlasts WG1): 812 us.
  const double c = 100e-6, ar = all_reduce_two(10e6);
  const double expected = 5 * c + 3 * ar;
  EXPECT_NEAR(simulate_text_workload("MODEL"), expected, kFormulaTolerance * expected);
}

TEST(ChakraRun, TextConverterHybridDataModel) {
  // As MODEL, plus each weight gradient's all-reduce on the same comm stream: WG1's waits for IG1's
  // (612–716 us) beside IG0 (612–712); WG0 712–812 and its all-reduce 812–916 end the iteration:
  // the chain F0, ar, F1, ar, IG1, ar, IG0, WG0, ar = 5 c + 4 ar.
  const double c = 100e-6, ar = all_reduce_two(10e6);
  const double expected = 5 * c + 4 * ar;
  EXPECT_NEAR(simulate_text_workload("HYBRID_DATA_MODEL"), expected, kFormulaTolerance * expected);
}

TEST(ChakraRun, AstraSimStyleDataParallelMatchesTheDataParallelScenario) {
  // ASTRA-sim's data-parallel example shape: 24 layers, an all-reduce of each layer's gradients
  // after its weight-gradient compute, 64 ranks (8 nodes × 8 GPUs, NVSwitch inside, one 25 GB/s
  // NIC per node), written by the text-converter generator. The equivalent dnnsim scenario:
  // data_parallel with the same 24 layers measured on the same GPU (forward 10 ms, backward 20 ms
  // for the local batch of 1), 25 MB of fp32 parameters each and 25 MB buckets, so each layer's
  // gradients are one all-reduce of 25 MB started when its backward ends — the ET's structure, with
  // the backward as the weight-gradient node and a zero input-gradient node. Both sides run the same
  // default all-reduce algorithm; dnnsim's scenario adds its optimizer step (plain SGD: read the
  // weights and gradients, write the weights: 150 M parameters × 12 bytes at 1.555 TB/s ≈ 1.2 ms
  // against ≈ 0.72 s of compute), so the two agree within 1%.
  const auto dir = testing::test_dir();
  std::string text = "DATA\n24\n";
  for (int l = 0; l < 24; ++l)
    text += "layer" + std::to_string(l) + " -1 10000 NONE 0 0 NONE 0 20000 ALLREDUCE 25000000 0\n";
  testing::write_text_workload(text, (dir / "dp").string(), 64);
  const std::string cluster = R"(
cluster:
  node_types:
    box:
      gpu: A100-40GB-SXM
      gpus_per_node: 8
      fabric: nvswitch
      nic: {bandwidth: "25GB/s", latency: "2us"}
  nodes: [{type: box, count: 8}]
)";
  std::string layers;
  for (int l = 0; l < 24; ++l)
    layers += R"(      - {name: layer)" + std::to_string(l) +
              R"(, forward_time: "10ms", backward_time: "20ms", parameter_bytes: "25MB"}
)";
  const std::string data_parallel = testing::write_file("dp.yaml", "name: dp\n" + cluster + R"(workload:
  kind: data_parallel
  model:
    measured_on: A100-40GB-SXM
    layers:
)" + layers + R"(  global_batch: 64
  optimizer: sgd
  bucket_size: "25MB"
)");
  const std::string chakra = testing::write_file("chakra.yaml", "name: chakra\n" + cluster + R"(workload:
  kind: chakra
  files: ")" + (dir / "dp.%d.et").string() + R"("
)");
  const auto expected = testing::summary_in_child(data_parallel);
  const auto measured = testing::summary_in_child(chakra);
  ASSERT_FALSE(expected.is_null());
  ASSERT_FALSE(measured.is_null());
  const double reference = expected["mean"]["iteration_time_s"].get<double>();
  EXPECT_NEAR(measured["mean"]["iteration_time_s"].get<double>(), reference, 0.01 * reference);
  std::cerr << "data_parallel " << reference << " s, chakra " << measured["mean"]["iteration_time_s"].get<double>()
            << " s\n";
}

}  // namespace
}  // namespace dnnsim
