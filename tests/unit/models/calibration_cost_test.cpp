// Calibration, continued (calibration_test.cpp): fitting efficiencies from samples, the CPU backend
// end to end in quick mode, the calibrated roofline of models/cost/compute_cost derived by hand, and
// the shipped tables.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "dnnsim/source_paths.hpp"
#include "models/calibration/calibration.hpp"
#include "models/calibration/cpu_backend.hpp"
#include "models/cost/compute_cost.hpp"
#include "tests/support/calibration_tables.hpp"
#include "tests/support/temp_files.hpp"

namespace dnnsim {
namespace {

using testing::example_table;
using testing::gemm;
using testing::kValidHead;
using testing::write_file;

const std::string kShippedDir = std::string(DNNSIM_SOURCE_DIR) + "/data/calibration";

// ---------------------------------------------------------------------------------------------

TEST(CalibrationFit, EfficienciesAreRatesOverThePeak) {
  // matmul fp32: 1 GFlop in 0.1 s (10 GFlops), 10 GFlop in 0.5 s (20 GFlops), and a slower repeat of
  // 1 GFlop (ignored: the best sample wins). The peak is the best rate, 20 GFlops: efficiencies 0.5, 1.
  // memory: 1 MiB in 1e-4 s, 1 GiB in 0.0625 s: 10.49 and 17.18 GB/s, peak the latter.
  const std::vector<KernelSample> samples{
      {"gemm", "matmul", Dtype::fp32, 1e9, Seconds(0.1)},
      {"gemm", "matmul", Dtype::fp32, 1e10, Seconds(0.5)},
      {"gemm", "matmul", Dtype::fp32, 1e9, Seconds(0.2)},
      {"stream_triad", "memory", Dtype::fp32, 1048576, Seconds(1e-4)},
      {"stream_triad", "memory", Dtype::fp32, 1073741824, Seconds(0.0625)},
      {"memcpy", "device_to_device", Dtype::fp32, 1048576, Seconds(1e-4)},
  };
  const CalibrationTable table = fit_calibration("cpu", samples, std::nullopt, std::nullopt, "unit test");
  EXPECT_EQ(table.device, "cpu");
  EXPECT_EQ(table.source, "unit test");
  EXPECT_DOUBLE_EQ(table.peak.at(Dtype::fp32).value(), 20e9);
  const auto& gemm_curve = table.compute.at({"matmul", Dtype::fp32}).points;
  ASSERT_EQ(gemm_curve.size(), 2u);
  EXPECT_DOUBLE_EQ(gemm_curve[0].second, 0.5);
  EXPECT_DOUBLE_EQ(gemm_curve[1].second, 1.0);
  EXPECT_DOUBLE_EQ(table.memory_bandwidth.value(), 1073741824 / 0.0625);
  EXPECT_NEAR(table.memory.points[0].second, (1048576 / 1e-4) / (1073741824 / 0.0625), 1e-12);
  EXPECT_DOUBLE_EQ(table.copies.at("device_to_device").points[0].second, 1048576 / 1e-4);
}

TEST(CalibrationFit, KnownPeaksAreUsedAndCapEfficiencyAtOne) {
  // A GPU run against its datasheet: 100 TFlops measured against a 125 TFlops peak is 0.8; a memory
  // rate above the given bandwidth (boost clocks, say) is capped at 1.
  const std::vector<KernelSample> samples{
      {"gemm", "matmul", Dtype::fp16, 1e11, Seconds(1e-3)},
      {"stream_triad", "memory", Dtype::fp32, 1e9, Seconds(1e-3)},
  };
  const CalibrationTable table = fit_calibration(
      "V100-16GB", samples,
      std::map<Dtype, FlopsPerSecond>{{Dtype::fp16, FlopsPerSecond(125e12)}, {Dtype::fp32, FlopsPerSecond(15.7e12)}},
      BytesPerSecond(900e9), "unit test");
  EXPECT_DOUBLE_EQ(table.compute.at({"matmul", Dtype::fp16}).at(1e11), 0.8);
  EXPECT_DOUBLE_EQ(table.peak.at(Dtype::fp32).value(), 15.7e12);  // recorded though not measured
  EXPECT_DOUBLE_EQ(table.memory.at(1e9), 1.0);
}

TEST(CalibrationFit, RejectsBrokenSamples) {
  EXPECT_THROW(
      (void)fit_calibration("cpu", {{"gemm", "matmul", Dtype::fp32, 1e9, Seconds(0)}}, std::nullopt, std::nullopt, ""),
      std::invalid_argument);
  EXPECT_THROW(
      (void)fit_calibration("cpu", {{"x", "warp_drive", Dtype::fp32, 1e9, Seconds(1)}}, std::nullopt, std::nullopt, ""),
      std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------

TEST(CalibrationBackends, CpuIsRegisteredAndAvailable) {
  CalibrationBackendRegistry registry("calibration backend");
  register_builtin_calibration_backends(registry);
  const auto& entry = registry.at("cpu");
  EXPECT_FALSE(entry.description.empty());
  EXPECT_FALSE(entry.source.empty());
  std::string why = "stale";
  EXPECT_TRUE(entry.value->available(why));
  EXPECT_TRUE(why.empty());
  EXPECT_EQ(entry.value->device(), "cpu");
}

// The whole chain on this machine: measure (quick) → fit → table → predicted GEMM times.
TEST(CalibrationCpu, QuickSweepFitsATableThatPredictsMonotoneGemmTimes) {
  CalibrationBackendRegistry registry("calibration backend");
  register_builtin_calibration_backends(registry);
  std::vector<std::string> stages;
  const std::vector<KernelSample> samples = registry.at("cpu").value->run(
      /*quick=*/true, registry.defaults("cpu"), [&](const std::string& stage) { stages.push_back(stage); });

  ASSERT_FALSE(samples.empty());
  // Progress: a line before each stage — the square GEMMs, each (layout, m) row of the grids (3 × 2
  // quick), bias + ReLU, the triad, memcpy: 1 + 6 + 3 lines, the grids' first after the 3 quick
  // square GEMMs (64, 128, 256).
  ASSERT_EQ(stages.size(), 10u);
  EXPECT_EQ(stages[0], "square GEMMs (0 samples so far)");
  EXPECT_EQ(stages[1], "GEMM shape grid nn, m = 16 (3 samples so far)");
  EXPECT_EQ(stages[6], "GEMM shape grid tn, m = 64 (23 samples so far)");
  EXPECT_EQ(stages[9].rfind("memcpy (", 0), 0u) << stages[9];
  std::set<std::string> kinds;
  for (const KernelSample& sample : samples) {
    EXPECT_TRUE(std::isfinite(sample.size) && sample.size > 0) << sample.kernel;
    EXPECT_TRUE(std::isfinite(sample.time.value()) && sample.time.value() > 0) << sample.kernel;
    kinds.insert(sample.kind);
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"matmul", "elementwise", "memory", "device_to_device"}));

  const CalibrationTable table = fit_calibration("cpu", samples, std::nullopt, std::nullopt, "quick CPU sweep");
  ASSERT_TRUE(table.peak.contains(Dtype::fp32));
  EXPECT_GT(table.peak.at(Dtype::fp32).value(), 0);
  EXPECT_GT(table.memory_bandwidth.value(), 0);
  ASSERT_TRUE(table.compute.contains({"matmul", Dtype::fp32}));
  ASSERT_TRUE(table.compute.contains({"elementwise", Dtype::fp32}));
  // The quick shape grids: m, n, k ∈ {16, 64}, one per layout.
  for (const GemmOp layout : {GemmOp::nn, GemmOp::nt, GemmOp::tn}) {
    ASSERT_TRUE(table.gemm.contains({Dtype::fp32, layout})) << gemm_op_name(layout);
    EXPECT_EQ(table.gemm.at({Dtype::fp32, layout}).k, (std::vector<double>{16, 64}));
  }
  EXPECT_EQ(table.gemm.size(), 3u);
  for (const auto& [key, curve] : table.compute)
    for (const auto& [size, efficiency] : curve.points) {
      EXPECT_GT(efficiency, 0) << key.first;
      EXPECT_LE(efficiency, 1) << key.first;
    }
  // The fitted table survives its own file format.
  const CalibrationTable reloaded = load_calibration(write_file("cpu_quick.yaml", dump_calibration(table)));
  EXPECT_EQ(reloaded.compute.size(), table.compute.size());

  const GpuSpec cpu = device_spec_from_calibration(reloaded);
  double previous = 0;
  for (double n : {16.0, 32.0, 64.0, 100.0, 128.0, 200.0, 256.0, 512.0, 1024.0, 4096.0}) {
    const double t = compute_time(gemm(n), cpu, reloaded).value();
    EXPECT_TRUE(std::isfinite(t) && t > 0) << n;
    EXPECT_GT(t, previous) << "GEMM of size " << n;
    previous = t;
  }
}

// ---------------------------------------------------------------------------------------------

TEST(ComputeCost, EfficiencyOverloadIsTheClassicRoofline) {
  const GpuSpec& v100 = *HardwareCatalog::builtin().find_gpu("V100-16GB");
  // 125 TFlop of fp16 at 125 TFlops · 0.5 = 2 s; memory 900 GB at 900 GB/s · 0.5 = 2 s too.
  Compute compute;
  compute.flops = Flop(125e12);
  compute.bytes_accessed = Bytes(9e11);
  compute.dtype = Dtype::fp16;
  EXPECT_DOUBLE_EQ(compute_time(compute, v100, 0.5).value(), 2.0);
  compute.bytes_accessed = Bytes(1.8e12);  // now memory-bound: 4 s
  EXPECT_DOUBLE_EQ(compute_time(compute, v100, 0.5).value(), 4.0);
}

TEST(ComputeCost, CalibratedRooflineByHand) {
  const GpuSpec& v100 = *HardwareCatalog::builtin().find_gpu("V100-16GB");
  const CalibrationTable table = example_table();
  // 10 GFlop fp16 matmul: e = 0.35 + 0.5 · (0.8 − 0.35) = 0.575; t = 1e10 / (125e12 · 0.575).
  Compute math;
  math.flops = Flop(1e10);
  math.dtype = Dtype::fp16;
  math.kernel = LayerKind::matmul;
  EXPECT_NEAR(compute_time(math, v100, table).value(), 1e10 / (125e12 * 0.575), 1e-15);
  // An attention kernel has no curve of its own: it uses matmul's.
  math.kernel = LayerKind::attention;
  EXPECT_NEAR(compute_time(math, v100, table).value(), 1e10 / (125e12 * 0.575), 1e-15);
  // bf16 does not exist on V100: it runs at the fp32 peak, and there is no fp32 matmul curve: e = 1.
  math.dtype = Dtype::bf16;
  EXPECT_NEAR(compute_time(math, v100, table).value(), 1e10 / 15.7e12, 1e-15);
  // 32 MiB moved: halfway (log) between 1 MiB and 1 GiB, e = 0.5 + 0.5 · 0.4 = 0.7.
  Compute memory;
  memory.bytes_accessed = Bytes(33554432);
  memory.kernel = LayerKind::elementwise;
  EXPECT_NEAR(compute_time(memory, v100, table).value(), 33554432 / (900e9 * 0.7), 1e-15);
}

TEST(ComputeCost, MeasuredTimeOverridesTheTable) {
  const GpuSpec& a100 = *HardwareCatalog::builtin().find_gpu("A100-40GB-SXM");
  Compute compute = gemm(4096, Dtype::fp16);
  compute.measured_time = Seconds(0.01);
  compute.measured_on = "V100-16GB";
  // Scaled by the fp16 peaks, 125 / 312, as without a table.
  EXPECT_DOUBLE_EQ(compute_time(compute, a100, example_table()).value(), 0.01 * 125.0 / 312.0);
  EXPECT_DOUBLE_EQ(compute_time(compute, a100, example_table()).value(), compute_time(compute, a100, 1.0).value());
}

TEST(ComputeCost, SmallGemmGetsLowerEfficiencyThanBigOneOnShippedTable) {
  const auto table = load_shipped_calibration(kShippedDir, "V100-16GB");
  ASSERT_TRUE(table.has_value());
  const GpuSpec& v100 = *HardwareCatalog::builtin().find_gpu("V100-16GB");
  // Achieved rate = flops / time: a 256³ GEMM must run further from the peak than an 8192³ one.
  const auto rate = [&](double n) {
    const Compute compute = gemm(n, Dtype::fp16);
    return compute.flops.value() / compute_time(compute, v100, *table).value();
  };
  EXPECT_LT(rate(256), rate(8192));
  EXPECT_LE(rate(8192), 125e12);
  // And less than with the classic single efficiency of 1.
  EXPECT_GT(compute_time(gemm(256, Dtype::fp16), v100, *table).value(),
            compute_time(gemm(256, Dtype::fp16), v100, 1.0).value());
}

TEST(ComputeCost, DeviceSpecFromTable) {
  const GpuSpec spec = device_spec_from_calibration(example_table());
  EXPECT_EQ(spec.name, "V100-16GB");
  EXPECT_DOUBLE_EQ(spec.peak_fp16->value(), 125e12);
  EXPECT_FALSE(spec.peak_bf16.has_value());
  EXPECT_DOUBLE_EQ(spec.memory_bandwidth.value(), 900e9);
}

// ---------------------------------------------------------------------------------------------

// A shipped table, loaded: it names the catalog GPU of its file name, and its efficiencies refer to
// that GPU's datasheet (its peaks and memory bandwidth are the catalog's).
CalibrationTable load_against_catalog(const std::filesystem::path& path) {
  const CalibrationTable table = load_calibration(path.string());
  EXPECT_EQ(path.stem().string(), table.device);
  const GpuSpec* gpu = HardwareCatalog::builtin().find_gpu(table.device);
  EXPECT_NE(gpu, nullptr) << table.device << " is not a catalog GPU";
  if (gpu == nullptr) return table;
  EXPECT_FALSE(table.source.empty());
  for (const auto& [dtype, rate] : table.peak) {
    const std::optional<FlopsPerSecond> datasheet = gpu->peak(dtype);
    EXPECT_TRUE(datasheet.has_value()) << dtype_name(dtype);
    if (datasheet) EXPECT_DOUBLE_EQ(rate.value(), datasheet->value()) << dtype_name(dtype);
  }
  EXPECT_DOUBLE_EQ(table.memory_bandwidth.value(), gpu->memory_bandwidth.value());
  EXPECT_FALSE(table.memory.points.empty());
  return table;
}

TEST(CalibrationShipped, EveryTableLoadsNamesACatalogGpuAndUsesItsDatasheetPeaks) {
  int tables = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kShippedDir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++tables;
    SCOPED_TRACE(entry.path().string());
    EXPECT_TRUE(load_against_catalog(entry.path()).compute.contains({"matmul", Dtype::fp16}));
  }
  EXPECT_GE(tables, 5);
}

// The LLM tables (fit_calibration.py): one per GPU type of the Megatron-Bridge tables and H200, each
// with BF16 and FP8 GEMMs and a sustained rate below the burst one (MSMF / MAMF < 1).
TEST(CalibrationShipped, EveryLlmTableUsesItsGpusDatasheetPeaks) {
  std::set<std::string> devices;
  for (const auto& entry : std::filesystem::directory_iterator(kShippedDir + "/llm")) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    const CalibrationTable table = load_against_catalog(entry.path());
    devices.insert(table.device);
    EXPECT_TRUE(table.compute.contains({"matmul", Dtype::bf16}));
    EXPECT_TRUE(table.compute.contains({"matmul", Dtype::fp8}));
    EXPECT_GT(table.sustained_compute, 0.0);
    EXPECT_LT(table.sustained_compute, 1.0);
  }
  EXPECT_EQ(devices, (std::set<std::string>{"B200", "B300", "GB200", "GB300", "H100-SXM", "H200"}));
}

// MXFP8's block-scaled GEMMs on the Blackwell tables: Transformer Engine's GEMM profiling tutorial
// (data/gpu-perf/te-gemm/) times a layer's twelve GEMMs on B300 with pre-quantized operands, FP8
// current scaling 2.158 + 2.329 + 2.325 = 6.812 ms and MXFP8 2.365 + 2.397 + 2.400 = 7.162 ms, so an
// MXFP8 GEMM takes 7.162 / 6.812 of the FP8 one of the same shape (both at the same datasheet peak).
// H100 and H200 have no MX formats: their tables have no MXFP8 entry.
TEST(CalibrationShipped, MxfpGemmsTakeTheMeasuredShareLongerThanFp8Ones) {
  for (const char* name : {"B200", "B300", "GB200", "GB300", "H100-SXM", "H200"}) {
    SCOPED_TRACE(name);
    const CalibrationTable table = load_calibration(kShippedDir + "/llm/" + name + ".yaml");
    const GpuSpec& gpu = *HardwareCatalog::builtin().find_gpu(name);
    if (!gpu.peak_mxfp8) {
      EXPECT_FALSE(table.compute.contains({"matmul", Dtype::mxfp8}));
      continue;
    }
    Compute fp8 = gemm(4096, Dtype::fp8);
    fp8.flops = Flop(2.0 * 16384 * 4096 * 4096);
    fp8.gemm = GemmShape{16384, 4096, 4096, GemmOp::nn};
    Compute mx = fp8;
    mx.dtype = Dtype::mxfp8;
    EXPECT_NEAR(compute_time(mx, gpu, table) / compute_time(fp8, gpu, table), 7.162 / 6.812, 1e-5);
    // A GEMM of unknown shape reads the FLOPs curves, scaled alike.
    EXPECT_NEAR(compute_time(gemm(4096, Dtype::mxfp8), gpu, table) / compute_time(gemm(4096, Dtype::fp8), gpu, table),
                7.162 / 6.812, 1e-5);
  }
}

// A table without MXFP8 entries (one calibrated before MX formats, or a user's) prices an MXFP8 GEMM
// as its FP8 one: the same tensor cores at the same datasheet peak.
TEST(CalibrationCost, MxfpReadsTheFp8RatesOfATableWithoutIts) {
  CalibrationTable table;
  table.device = "B200";
  table.memory_bandwidth = BytesPerSecond(7.7e12);
  table.compute[{"matmul", Dtype::fp8}] = EfficiencyCurve{{{1e9, 0.2}, {1e12, 0.7}}};
  table.memory = EfficiencyCurve{{{1e6, 0.9}}};
  const GpuSpec& b200 = *HardwareCatalog::builtin().find_gpu("B200");
  // 2 · 8192³ = 1.0995 TFLOP at 0.7 of 4.5 PFLOP/s: 0.349 ms, either dtype.
  EXPECT_DOUBLE_EQ(compute_time(gemm(8192, Dtype::mxfp8), b200, table).value(),
                   compute_time(gemm(8192, Dtype::fp8), b200, table).value());
  EXPECT_NEAR(compute_time(gemm(8192, Dtype::mxfp8), b200, table).value(), 2.0 * 8192.0 * 8192 * 8192 / (0.7 * 4.5e15),
              1e-12);
}

TEST(CalibrationShipped, RequiredGpusHaveTables) {
  for (const char* name : {"V100-16GB", "V100-32GB", "A100-40GB-SXM", "A100-80GB-SXM", "H100-SXM"})
    EXPECT_TRUE(load_shipped_calibration(kShippedDir, name).has_value()) << name;
  EXPECT_FALSE(load_shipped_calibration(kShippedDir, "no-such-gpu").has_value());
}

TEST(CalibrationShipped, TableNamingAnotherDeviceIsAnError) {
  const std::string path = write_file("A100-40GB-SXM.yaml", kValidHead);  // says V100-16GB
  EXPECT_THROW((void)load_shipped_calibration(std::filesystem::path(path).parent_path().string(), "A100-40GB-SXM"),
               InputError);
}

}  // namespace
}  // namespace dnnsim
