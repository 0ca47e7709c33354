// The GNN pipeline (sim/workloads/gnn) on tiny platforms whose times are derived by hand. The
// mechanism tests hand simulate_gnn_pipeline batches of known costs; the end-to-end tests run the
// kind on a small real slice of Cora (its first 60 edge lines, data/graphs/planetoid) and check what
// follows from the counts. Platform: V100 nodes (NVLink on an NVSwitch, PCIe 3: 15.75 GB/s per
// direction) with 1 GB/s NICs on a non-blocking switch, latencies 0 where a derivation needs it.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "dnnsim/source_paths.hpp"
#include "sim/platform/platform.hpp"
#include "sim/report/report.hpp"
#include "sim/run/simulation.hpp"
#include "sim/workloads/gnn/gnn_kind.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

std::string cora_slice() {
  std::ifstream in(std::string(DNNSIM_SOURCE_DIR) + "/data/graphs/planetoid/cora.edges");
  std::string text, line;
  for (int kept = 0; kept < 60 && std::getline(in, line);)
    if (!line.empty() && line[0] != '#') {
      text += line + "\n";
      ++kept;
    }
  return testing::write_file("cora-slice.edges", text);
}

std::string gnn_yaml(int nodes, int gpus, int cores, const std::string& workload_extra) {
  return "name: gnn\ncluster:\n  node_types:\n    n: {gpu: V100-32GB, gpus_per_node: " + std::to_string(gpus) +
         ", cpu_cores: " + std::to_string(cores) +
         ", nic: {bandwidth: \"1GB/s\", latency: \"0s\"}, gpu_link: {bandwidth: \"100GB/s\", latency: \"0s\"}, "
         "pcie: {bandwidth: \"10GB/s\", latency: \"0s\"}}\n"
         "  nodes:\n    - {type: n, count: " +
         std::to_string(nodes) +
         "}\n"
         "  interconnect: {kind: switch, latency: \"0s\"}\n"
         "workload:\n  kind: gnn\n  graph: {file: " +
         cora_slice() +
         "}\n  features: {dimension: 100}\n"
         "  fanouts: [2, 2]\n  batch_size: 4\n  model: {layer: sage, hidden: 16, classes: 7}\n" +
         workload_extra + "outputs: {trace: true, tasks_csv: true}\n";
}

// A batch of the given costs for server 0, GPU 0.
GnnBatchWork batch(std::uint32_t index, double sample, double gather, double gpu, double dispatch = 0) {
  GnnBatchWork w;
  w.index = index;
  w.sample_core_seconds = sample;
  w.gather_core_seconds = gather;
  w.gpu_seconds = gpu;
  w.dispatch_core_seconds = dispatch;
  return w;
}

struct Harness {
  Scenario scenario;
  std::unique_ptr<simgrid::s4u::Engine> engine;
  Platform platform;
  GnnPipelineInput input;

  // memory_bandwidth > 0: each node's CPU memory as the interference model's host of that speed.
  Harness(int nodes, int gpus, int cores, const std::string& top_level = "", double memory_bandwidth = 0)
      : scenario(testing::load(gnn_yaml(nodes, gpus, cores, "  pipeline: {cores: shared}\n") + top_level)) {
    engine = create_engine();
    PlatformOptions options;
    options.cpu_hosts.assign(static_cast<std::size_t>(nodes), {CpuHostSpec{"", cores}});
    if (memory_bandwidth > 0)
      for (auto& hosts : options.cpu_hosts) hosts.push_back(CpuHostSpec{"memory", 1, memory_bandwidth});
    platform = build_platform(scenario, options);
    for (int s = 0; s < nodes; ++s) {
      simgrid::s4u::Host* cpu = platform.cpus.at(static_cast<std::size_t>(s)).front();
      if (memory_bandwidth > 0)
        input.interference.memory.push_back(platform.cpus.at(static_cast<std::size_t>(s)).back());
      input.cpus.push_back({cpu, cpu, cpu, cpu});
      input.gpus.emplace_back();
      for (int g = 0; g < gpus; ++g)
        input.gpus.back().push_back(platform.gpus.at(static_cast<std::size_t>(s * gpus + g)));
    }
    input.batches.resize(static_cast<std::size_t>(nodes));
    input.queue_depth = 8;
  }
};

TEST(GnnPipeline, ThroughputIsTheSlowestStage) {
  // One trainer, a thread per stage, four batches: sampling 1 s, gathering 0.5 s, nothing to copy,
  // 0.25 s on the GPU. Sampling bounds the pipeline: batch k leaves it at k s (k = 1…4), is gathered
  // by k + 0.5 and trained by k + 0.75, so the run ends at 4.75 s; the sampling thread is busy 4 s.
  Harness h(1, 1, 4);
  for (std::uint32_t k = 0; k < 4; ++k) h.input.batches[0].push_back(batch(k, 1.0, 0.5, 0.25));
  h.input.threads = {{1, 1, 1}};
  const GnnPipelineResult result = simulate_gnn_pipeline(h.input);
  EXPECT_NEAR(result.makespan, 4.75, 1e-9);
  EXPECT_NEAR(result.stage_busy[0][0], 4.0, 1e-9);
  EXPECT_NEAR(result.stage_busy[0][1], 2.0, 1e-9);
  EXPECT_NEAR(result.gpu_busy[0][0], 1.0, 1e-9);
}

// One core, two batches of 1 core-s sampling and 0.25 s training. Isolated (one sampling thread):
// batch 0 is sampled 0 → 1 s and trained 1 → 1.25, batch 1 sampled 1 → 2 and trained 2 → 2.25, so
// the run ends at 2.25 s. Shared (two sampling threads on the one core): both batches run at half
// speed and leave sampling together at 2 s, then train one after the other: 2.25 and 2.5 s.
double two_batches_on_one_core(std::uint32_t sampling_threads) {
  Harness h(1, 1, 1);
  h.input.batches[0] = {batch(0, 1.0, 0, 0.25), batch(1, 1.0, 0, 0.25)};
  h.input.threads = {{sampling_threads, 1, 1}};
  return simulate_gnn_pipeline(h.input).makespan;
}

TEST(GnnPipeline, OneThreadPerCoreRunsAtFullSpeed) { EXPECT_NEAR(two_batches_on_one_core(1), 2.25, 1e-9); }

TEST(GnnPipeline, SharedCoresSlowEveryRunnableThread) { EXPECT_NEAR(two_batches_on_one_core(2), 2.5, 1e-9); }

TEST(GnnPipeline, PrefetchWindowHoldsSamplingBack) {
  // One trainer with a window of one batch, two sampling threads, three batches of 1 s sampling and
  // 2 s training. Batch 0 is sampled 0 → 1 and trained 1 → 3; batch 1 may only be claimed once
  // batch 0 is trained: sampled 3 → 4, trained 4 → 6; batch 2: 6 → 7, 7 → 9. (A window of two would
  // sample batches 0 and 1 at once and end at 7 s.)
  Harness h(1, 1, 4);
  h.input.batches[0] = {batch(0, 1.0, 0, 2.0), batch(1, 1.0, 0, 2.0), batch(2, 1.0, 0, 2.0)};
  h.input.threads = {{2, 1, 1}};
  h.input.queue_depth = 1;
  EXPECT_NEAR(simulate_gnn_pipeline(h.input).makespan, 9.0, 1e-9);
}

TEST(GnnPipeline, DispatchOverlapsTheGpu) {
  // Asynchronous launch: a step takes the longer of dispatch (0.5 core-s, alone on its core) and the
  // GPU (0.25 s). One batch sampled in 1 s: trained 1 → 1.5 s; the GPU is busy 0.25 s of it.
  Harness h(1, 1, 4);
  h.input.batches[0] = {batch(0, 1.0, 0, 0.25, 0.5)};
  h.input.threads = {{1, 1, 1}};
  const GnnPipelineResult result = simulate_gnn_pipeline(h.input);
  EXPECT_NEAR(result.makespan, 1.5, 1e-9);
  EXPECT_NEAR(result.gpu_busy[0][0], 0.25, 1e-9);
  EXPECT_NEAR(result.trainer_busy[0][0], 0.5, 1e-9);
}

TEST(GnnPipeline, RemoteSamplingCrossesTheNetworkAndUsesTheOwnersCores) {
  // Server 0's batch asks server 1 to sample: a 0.5 GB request over 1 GB/s NICs (0.5 s), 1 core-s on
  // server 1's CPU, a 1 GB response (1 s); its own 0.2 core-s run meanwhile. Sampling ends at
  // 2.5 s, training (0.25 s on the GPU) at 2.75 s. The network carried 1.5 GB.
  Harness h(2, 1, 4);
  GnnBatchWork w = batch(0, 0.2, 0, 0.25);
  w.remote_sample.push_back({1, 0.5e9, 1.0, 1e9});
  h.input.batches[0] = {w};
  h.input.threads = {{1, 1, 1}, {1, 1, 1}};
  const GnnPipelineResult result = simulate_gnn_pipeline(h.input);
  EXPECT_NEAR(result.makespan, 2.75, 1e-9);
  EXPECT_NEAR(result.remote_bytes, 1.5e9, 1);
}

TEST(GnnPipeline, NetworkConditionsApplyToRemoteTraffic) {
  // The case above with node1's NIC held at 0.5 GB/s (another tenant's share): the request takes
  // 0.5 GB / 0.5 GB/s = 1 s, the work 1 s, the response 1 GB / 0.5 GB/s = 2 s: sampling ends at 4 s,
  // training at 4.25 s.
  Harness h(2, 1, 4, "network:\n  conditions:\n    - {links: node1/nic, bandwidth: \"0.5GB/s\"}\n");
  GnnBatchWork w = batch(0, 0.2, 0, 0.25);
  w.remote_sample.push_back({1, 0.5e9, 1.0, 1e9});
  h.input.batches[0] = {w};
  h.input.threads = {{1, 1, 1}, {1, 1, 1}};
  EXPECT_NEAR(simulate_gnn_pipeline(h.input).makespan, 4.25, 1e-9);
}

TEST(GnnPipeline, TrainersMeetAtTheAllReduce) {
  // Two trainers on one server (NVLink 100 GB/s between them), one batch each: GPU 0's is sampled
  // in 1 s, GPU 1's in 2 s (two sampling threads, so in parallel); 0.25 s of training each. The ring
  // all-reduce of 100 GB of gradients sends 2(p − 1)/p × 100 GB = 100 GB to the neighbour at
  // 100 GB/s: 1 s once both have arrived (2.25 s), so the run ends at 3.25 s and trainer 0 waited 1 s.
  Harness h(1, 2, 8);
  GnnBatchWork first = batch(0, 1.0, 0, 0.25), second = batch(1, 2.0, 0, 0.25);
  second.gpu = 1;
  h.input.batches[0] = {first, second};
  h.input.threads = {{2, 1, 1}};
  h.input.allreduce_bytes = 100e9;
  const GnnPipelineResult result = simulate_gnn_pipeline(h.input);
  EXPECT_NEAR(result.makespan, 3.25, 1e-9);
  EXPECT_NEAR(result.sync_wait[0][0], 1.0, 1e-9);
  EXPECT_NEAR(result.allreduce_time[0][0], 1.0, 1e-9);
}

// A round's all-reduce belongs to the epoch of the batches trained before it (it was always epoch 0, so
// a run's first iteration ended with its last all-reduce and the next iterations' times were negative).
// Two trainers, one batch each per epoch, two epochs: rounds 0 and 1, one all-reduce per trainer each.
TEST(GnnPipeline, AnAllReduceBelongsToItsBatchesEpoch) {
  Harness h(1, 2, 8);
  std::vector<GnnBatchWork> batches;
  for (std::uint32_t epoch = 0; epoch < 2; ++epoch)
    for (std::uint32_t gpu = 0; gpu < 2; ++gpu) {
      GnnBatchWork w = batch(2 * epoch + gpu, 0.5, 0, 0.25);
      w.gpu = gpu;
      w.epoch = epoch;
      batches.push_back(w);
    }
  h.input.batches[0] = batches;
  h.input.threads = {{2, 1, 1}};
  h.input.allreduce_bytes = 1e9;
  std::vector<std::uint32_t> epochs_of_rounds[2];
  for (const GnnActivity& a : simulate_gnn_pipeline(h.input).activities)
    if (a.stage == GnnStage::allreduce) epochs_of_rounds[a.batch].push_back(a.epoch);
  EXPECT_EQ(epochs_of_rounds[0], (std::vector<std::uint32_t>{0, 0}));
  EXPECT_EQ(epochs_of_rounds[1], (std::vector<std::uint32_t>{1, 1}));
}

// Memory bandwidth (models/gnn/cpu_interference.hpp): sampling draws 10 GB/s of traffic per
// core-second, gathering 8 GB/s, from a 13 GB/s memory; one thread per stage on 4 cores, batch 0
// sampled and gathered in 1 core-s each, batch 1 sampled in 1 core-s, 0.25 s on the GPU each.
// Batch 0 is sampled alone 0 → 1 s (10 GB/s fits). From 1 s batch 1's sampling (10 GB) and batch 0's
// gathering (8 GB) stream together: 18 GB/s of demand on 13 GB/s, shared in proportion to demand
// (7.22 and 5.78 GB/s), so both take 18/13 s and end at 1 + 18/13 s, their cores idle before. Then
// batch 1 is gathered alone (1 s) and trained: the run ends at 1 + 18/13 + 1 + 0.25 s. (Plain
// max-min would give each 6.5 GB/s: 1.54 s for the sampling, 1.23 s for the gathering.)
// One server, one trainer, the given batches and sampling threads (one per other stage) under an
// interference model.
GnnPipelineResult interference_case(int cores, double memory_bandwidth, std::vector<GnnBatchWork> batches,
                                    std::uint32_t sampling_threads, const GnnInterferenceInput& model) {
  Harness h(1, 1, cores, "", memory_bandwidth);
  h.input.batches[0] = std::move(batches);
  h.input.threads = {{sampling_threads, 1, 1}};
  h.input.interference.traffic = model.traffic;
  h.input.interference.time_sliced = model.time_sliced;
  return simulate_gnn_pipeline(h.input);
}

GnnPipelineResult bandwidth_case(double memory_bandwidth) {
  return interference_case(4, memory_bandwidth, {batch(0, 1.0, 1.0, 0.25), batch(1, 1.0, 1.0, 0.25)}, 1,
                           {.traffic = {10e9, 8e9, 0, 0}});
}

TEST(GnnInterference, StreamsOverTheBandwidthShareItInProportionToDemand) {
  const GnnPipelineResult result = bandwidth_case(13e9);
  EXPECT_NEAR(result.makespan, 1 + 18.0 / 13 + 1 + 0.25, 1e-6);
  EXPECT_NEAR(result.stage_busy[0][0], 1 + 18.0 / 13, 1e-6);
  EXPECT_NEAR(result.stage_busy[0][1], 18.0 / 13 + 1, 1e-6);
}

TEST(GnnInterference, StreamsWithinTheBandwidthRunAsAlone) {
  // 18 GB/s of demand on a 20 GB/s memory: nothing slows down, as with no model (batch 0 sampled
  // 0 → 1, batch 1 sampled and batch 0 gathered 1 → 2, batch 1 gathered 2 → 3, trained by 3.25 s).
  EXPECT_NEAR(bandwidth_case(20e9).makespan, 3.25, 1e-6);
}

TEST(GnnInterference, AMemoryFarAboveTheDemandRunsAsAlone) {
  // As above on a 1 PB/s memory, 10⁵ × the demand: SimGrid aborted ("The Impossible Did Happen")
  // while the streams' weights were fractions of the bandwidth, 1e-5 and below.
  EXPECT_NEAR(bandwidth_case(1e15).makespan, 3.25, 1e-6);
}

// Cache pollution: gathering runs at 0.8 of its rate time-sliced with another stage. Two sampling
// threads start batch 0 (0.5 core-s) and batch 1 (2 core-s) together at 0; batch 0 is gathered in
// 1 core-s, nothing else costs CPU, 0.25 s on the GPU each.
GnnPipelineResult pollution_case(int cores) {
  return interference_case(cores, 0, {batch(0, 0.5, 1.0, 0.25), batch(1, 2.0, 0, 0.25)}, 2,
                           {.time_sliced = {1, 0.8, 1, 1}});
}

TEST(GnnInterference, TimeSlicedStagePaysItsFactor) {
  // One core. Both samplings share it (the same stage: no factor): batch 0's ends at 1 s, batch 1
  // has 1.5 core-s left. The gathering starts at 1 s with batch 1's sampling on the one core, so it
  // takes 1 / 0.8 = 1.25 core-s; at half the core each it ends at 1 + 2.5 = 3.5 s, when batch 1's
  // sampling has 0.25 core-s left (alone: 3.75 s). Trained 3.5 → 3.75 and 3.75 → 4 s.
  const GnnPipelineResult result = pollution_case(1);
  EXPECT_NEAR(result.makespan, 4.0, 1e-6);
  EXPECT_NEAR(result.stage_busy[0][1], 2.5, 1e-6);
  EXPECT_EQ(result.cpu_works, 3);  // two samplings, one gathering (batch 1's costs no CPU)
  EXPECT_EQ(result.time_sliced_works, 1);
}

TEST(GnnInterference, StageOnACoreOfItsOwnPaysNothing) {
  // Two cores: the samplings run a core each (batch 0's ends at 0.5 s), and the gathering starts on
  // the free core: 1 core-s, 0.5 → 1.5 s. Batch 1 is sampled by 2 s; trained 1.5 → 1.75 and 2 → 2.25.
  const GnnPipelineResult result = pollution_case(2);
  EXPECT_NEAR(result.makespan, 2.25, 1e-6);
  EXPECT_NEAR(result.stage_busy[0][1], 1.0, 1e-6);
  EXPECT_EQ(result.time_sliced_works, 0);
}

TEST(GnnKind, EpochOnCoraSliceCountsEveryBatch) {
  // The 60-edge slice has node ids up to 2,581 (most isolated); every node trains, in batches of 4,
  // split over 2 servers × 2 GPUs: the batches are ⌈seeds of server s / 4⌉ summed over s. No cache:
  // every feature comes from the host or a remote server.
  const Scenario scenario = testing::load(gnn_yaml(2, 2, 8, "  cache: {policy: none}\n"));
  const SimulationResult result = run_scenario(scenario, {});
  const auto& report = dynamic_cast<const GnnReport&>(*result.workload_result);
  std::size_t expected = 0, all_seeds = 0;
  for (std::uint32_t s = 0; s < 2; ++s) {
    std::size_t seeds = 0;
    for (const gnn::BatchCounts& b : report.epoch.batches)
      if (b.server == s) seeds += b.layers.front().num_dst;
    expected += (seeds + 3) / 4;
    all_seeds += seeds;
  }
  EXPECT_EQ(all_seeds, report.spec->node_count);  // every node is a seed once
  EXPECT_EQ(report.epoch.batches.size(), expected);
  EXPECT_EQ(report.training_nodes, report.spec->node_count);
  EXPECT_EQ(report.epoch.features.gpu_hit_ratio(), 0.0);
  EXPECT_GT(result.makespan_s, 0.0);
  // The summary's gnn section and the trace's tracks come from the same run.
  const auto summary = make_summary(scenario, result);
  EXPECT_EQ(summary["gnn"]["mini_batches"].get<std::size_t>(), expected);
  EXPECT_EQ(summary["gnn"]["hit_ratio"]["gpu"].get<double>(), 0.0);
}

TEST(GnnKind, MeansAreOverTheGpusNotTheCpuHosts) {
  // 2 servers × 2 GPUs: the summary has 4 GPU rows and 2 CPU-host rows (`nodeN/cpu`, the sampling and
  // gathering pools). "Per GPU" divides by the 4 GPUs, and the means average the 4 GPU rows: before,
  // they averaged all 6 rows, so the FLOP rate per GPU was 4/6 of its value and the mean utilization
  // mixed in the hosts' (near 1).
  const Scenario scenario = testing::load(gnn_yaml(2, 2, 8, "  cache: {policy: none}\n"));
  const SimulationResult result = run_scenario(scenario, {});
  const auto summary = make_summary(scenario, result);
  const auto& mean = summary["mean"];
  double utilization = 0, peak = 0;
  int gpus = 0, hosts = 0;
  for (const auto& [name, device] : summary["devices"].items()) {
    if (name.ends_with("/cpu")) {
      ++hosts;
      continue;
    }
    ++gpus;
    utilization += device["utilization"].get<double>();
    peak += device["peak_memory_bytes"].get<double>();
  }
  ASSERT_EQ(gpus, 4);
  ASSERT_EQ(hosts, 2);
  EXPECT_DOUBLE_EQ(mean["utilization"].get<double>(), utilization / 4);
  EXPECT_DOUBLE_EQ(mean["peak_memory_bytes"].get<double>(), peak / 4);
  const double iterations = summary["iterations"].get<double>();
  EXPECT_DOUBLE_EQ(mean["model_tflops_per_gpu"].get<double>(),
                   mean["model_flops_per_iteration"].get<double>() * iterations / (result.makespan_s * 4) / 1e12);
}

}  // namespace
}  // namespace dnnsim
