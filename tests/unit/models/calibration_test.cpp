// Calibration: curve interpolation and the calibrated roofline derived by hand, table files (round
// trip, located errors), the CPU backend end to end in quick mode, and the shipped tables.
#include "models/calibration/calibration.hpp"
#include "models/calibration/cpu_backend.hpp"
#include "models/cost/compute_cost.hpp"
#include "dnnsim/source_paths.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

namespace dnnsim {
namespace {

using ::testing::HasSubstr;

const std::string kShippedDir = std::string(DNNSIM_SOURCE_DIR) + "/data/calibration";

// Writes `text` to a fresh file under the temporary directory and returns its path.
std::string write_temp(const std::string& name, const std::string& text) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "dnnsim_calibration_test";
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

std::vector<Diagnostic> errors_of(const std::string& name, const std::string& text) {
  try {
    (void)load_calibration(write_temp(name, text));
  } catch (const InputError& e) {
    return e.diagnostics();
  }
  ADD_FAILURE() << "expected an InputError for:\n" << text;
  return {};
}

Compute gemm(double n, Dtype dtype = Dtype::fp32) {
  Compute compute;
  compute.flops = Flop(2 * n * n * n);
  compute.bytes_accessed = Bytes(3 * n * n * 4);
  compute.dtype = dtype;
  compute.kernel = LayerKind::matmul;
  return compute;
}

// ---------------------------------------------------------------------------------------------

TEST(CalibrationCurve, InterpolatesLinearlyInLogSizeAndClamps) {
  const EfficiencyCurve curve{{{1e9, 0.2}, {1e11, 0.8}}};
  // 1e10 is halfway between 1e9 and 1e11 in log scale: 0.2 + 0.5 · 0.6 = 0.5.
  EXPECT_NEAR(curve.at(1e10), 0.5, 1e-12);
  // 10^9.5 is a quarter of the way: 0.2 + 0.25 · 0.6 = 0.35.
  EXPECT_NEAR(curve.at(std::pow(10.0, 9.5)), 0.35, 1e-12);
  // Outside the measured range the curve is flat.
  EXPECT_DOUBLE_EQ(curve.at(1e3), 0.2);
  EXPECT_DOUBLE_EQ(curve.at(0), 0.2);
  EXPECT_DOUBLE_EQ(curve.at(1e15), 0.8);
  // Exactly on the points.
  EXPECT_DOUBLE_EQ(curve.at(1e9), 0.2);
  EXPECT_DOUBLE_EQ(curve.at(1e11), 0.8);
}

TEST(CalibrationCurve, ThreePointsPickTheRightSegment) {
  const EfficiencyCurve curve{{{1, 0.1}, {4, 0.5}, {16, 0.9}}};
  // 2 = halfway (log) between 1 and 4: 0.3; 8 = halfway between 4 and 16: 0.7.
  EXPECT_NEAR(curve.at(2), 0.3, 1e-12);
  EXPECT_NEAR(curve.at(8), 0.7, 1e-12);
}

TEST(CalibrationCurve, EmptyIsOneAndSinglePointIsConstant) {
  EXPECT_DOUBLE_EQ(EfficiencyCurve{}.at(123), 1.0);
  const EfficiencyCurve single{{{1e6, 0.4}}};
  EXPECT_DOUBLE_EQ(single.at(1), 0.4);
  EXPECT_DOUBLE_EQ(single.at(1e12), 0.4);
}

// ---------------------------------------------------------------------------------------------

CalibrationTable example_table() {
  CalibrationTable table;
  table.device = "V100-16GB";
  table.source = "hand-made for a test: \"quoted\"\nsecond line";
  table.peak = {{Dtype::fp32, FlopsPerSecond(15.7e12)}, {Dtype::fp16, FlopsPerSecond(125e12)}};
  table.memory_bandwidth = BytesPerSecond(900e9);
  table.compute[{"matmul", Dtype::fp16}] = EfficiencyCurve{{{1e9, 0.35}, {1e11, 0.8}}};
  table.compute[{"elementwise", Dtype::fp32}] = EfficiencyCurve{{{524288, 0.0123456789}, {3.3e7, 0.05}}};
  table.memory = EfficiencyCurve{{{1048576, 0.5}, {1073741824, 0.9}}};
  table.copies["device_to_device"] = EfficiencyCurve{{{1048576, 3.5e11}, {268435456, 7.7e11}}};
  table.copies["host_to_device"] = EfficiencyCurve{{{65536, 1.2e10}}};
  return table;
}

// A 2 × 2 × 2 grid over {16, 256} per axis, e = 0.1 at (16, 16, 16) growing by 0.1 per large axis:
// e(m, n, k) = 0.1 + 0.1 · (m = 256) + 0.2 · (n = 256) + 0.4 · (k = 256) at the corners.
GemmEfficiencyGrid corner_grid() {
  GemmEfficiencyGrid grid{{16, 256}, {16, 256}, {16, 256}, {}};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int l = 0; l < 2; ++l) grid.efficiency.push_back(0.1 + 0.1 * i + 0.2 * j + 0.4 * l);
  return grid;
}

TEST(CalibrationGemmGrid, MultilinearInLogShapeAndClamped) {
  const GemmEfficiencyGrid grid = corner_grid();
  EXPECT_DOUBLE_EQ(grid.at(16, 16, 16), 0.1);
  EXPECT_DOUBLE_EQ(grid.at(256, 256, 256), 0.8);
  EXPECT_DOUBLE_EQ(grid.at(16, 256, 16), 0.3);
  // 64 is halfway between 16 and 256 in log scale on every axis: the corners' mean,
  // 0.1 + 0.1/2 + 0.2/2 + 0.4/2 = 0.45.
  EXPECT_NEAR(grid.at(64, 64, 64), 0.45, 1e-12);
  // Halfway on k only, m and n small: 0.1 + 0.4/2 = 0.3.
  EXPECT_NEAR(grid.at(16, 16, 64), 0.3, 1e-12);
  // Beyond the axes the grid is flat: (4096, 1, 256) reads (256, 16, 256) = 0.1 + 0.1 + 0.4.
  EXPECT_NEAR(grid.at(4096, 1, 256), 0.6, 1e-12);
  EXPECT_DOUBLE_EQ(GemmEfficiencyGrid{}.at(64, 64, 64), 1.0);
}

TEST(CalibrationGemmGrid, FitBuildsTheGridAndItsRatesCountForThePeak) {
  // Eight shaped samples of 2mnk FLOPs; the (256, 256, 256) one runs at 40 GFlops, faster than the
  // square sweep's 20 GFlops: the peak is 40 GFlops, the square curve's point 0.5, and each shape's
  // efficiency its rate / 40 GFlops. Shape (m, n, k) here runs at 5 · (1 + i + 2j + 4l) GFlops.
  std::vector<KernelSample> samples{{"gemm", "matmul", Dtype::fp32, 1e9, Seconds(0.05)}};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int l = 0; l < 2; ++l) {
        const std::uint32_t m = i ? 256 : 16, n = j ? 256 : 16, k = l ? 256 : 16;
        const double flops = 2.0 * m * n * k;
        KernelSample sample{"gemm_shape", "matmul", Dtype::fp32, flops, Seconds(flops / (5e9 * (1 + i + 2 * j + 4 * l)))};
        sample.shape = GemmShape{m, n, k};
        samples.push_back(sample);
      }
  const CalibrationTable table = fit_calibration("cpu", samples, std::nullopt, std::nullopt, "unit test");
  EXPECT_DOUBLE_EQ(table.peak.at(Dtype::fp32).value(), 40e9);
  EXPECT_DOUBLE_EQ(table.compute.at({"matmul", Dtype::fp32}).points.at(0).second, 0.5);
  const GemmEfficiencyGrid& grid = table.gemm.at({Dtype::fp32, GemmOp::nn});
  EXPECT_EQ(grid.m, (std::vector<double>{16, 256}));
  EXPECT_NEAR(grid.at(16, 16, 16), 5.0 / 40, 1e-12);
  EXPECT_NEAR(grid.at(16, 256, 256), 35.0 / 40, 1e-12);  // 5 · (1 + 2 + 4) GFlops
  // A shape missing from the grid is a backend bug, not a table to guess from.
  // The same shapes timed as A·Bᵀ make a second grid, at their own rates.
  std::vector<KernelSample> with_nt = samples;
  for (std::size_t s = 1; s < samples.size(); ++s) {
    KernelSample transposed = samples[s];
    transposed.shape.op = GemmOp::nt;
    transposed.time = transposed.time * 2.0;
    with_nt.push_back(transposed);
  }
  const CalibrationTable layouts = fit_calibration("cpu", with_nt, std::nullopt, std::nullopt, "unit test");
  EXPECT_NEAR(layouts.gemm.at({Dtype::fp32, GemmOp::nn}).at(16, 256, 256), 35.0 / 40, 1e-12);
  EXPECT_NEAR(layouts.gemm.at({Dtype::fp32, GemmOp::nt}).at(16, 256, 256), 35.0 / 80, 1e-12);
  // A shape missing from the grid is a backend bug, not a table to guess from; so is a sample that
  // times a backward pair (two GEMMs).
  const KernelSample last = samples.back();
  samples.pop_back();
  EXPECT_THROW((void)fit_calibration("cpu", samples, std::nullopt, std::nullopt, "unit test"), std::invalid_argument);
  samples.push_back(last);
  KernelSample pair = last;
  pair.shape.op = GemmOp::backward;
  samples.push_back(pair);
  EXPECT_THROW((void)fit_calibration("cpu", samples, std::nullopt, std::nullopt, "unit test"), std::invalid_argument);
  samples.back().shape.op = GemmOp::backward_nt;
  EXPECT_THROW((void)fit_calibration("cpu", samples, std::nullopt, std::nullopt, "unit test"), std::invalid_argument);
}

TEST(CalibrationGemmGrid, ComputeTimeReadsTheGridForAGemmOfKnownShape) {
  const GpuSpec& v100 = *HardwareCatalog::builtin().find_gpu("V100-16GB");
  CalibrationTable table = example_table();
  table.gemm[{Dtype::fp16, GemmOp::nn}] = corner_grid();
  // 64 × 64 × 64 fp16: 524,288 FLOPs at 125 TFlops · 0.45 (the grid's centre, derived above).
  Compute product;
  product.flops = Flop(2.0 * 64 * 64 * 64);
  product.dtype = Dtype::fp16;
  product.kernel = LayerKind::matmul;
  product.gemm = GemmShape{64, 64, 64};
  EXPECT_NEAR(compute_time(product, v100, table).value(), 524288 / (125e12 * 0.45), 1e-18);
  // Without a shape the FLOPs curve applies: 524,288 FLOPs is below its first point, e = 0.35.
  product.gemm = {};
  EXPECT_NEAR(compute_time(product, v100, table).value(), 524288 / (125e12 * 0.35), 1e-18);
  // A shape but no grid for the dtype (fp32): its curve, none here, so e = 1.
  product.gemm = GemmShape{64, 64, 64};
  product.dtype = Dtype::fp32;
  EXPECT_NEAR(compute_time(product, v100, table).value(), 524288 / 15.7e12, 1e-18);
}

TEST(CalibrationGemmGrid, FileRoundTripAndLocatedErrors) {
  CalibrationTable table = example_table();
  table.gemm[{Dtype::fp32, GemmOp::nn}] = corner_grid();
  GemmEfficiencyGrid halved = corner_grid();
  for (double& e : halved.efficiency) e /= 2;
  table.gemm[{Dtype::fp32, GemmOp::tn}] = halved;
  const std::string text = dump_calibration(table);
  // nn, the default layout, is not written.
  EXPECT_THAT(text, HasSubstr("gemm:\n  - dtype: fp32\n    points:\n      - {m: 16, n: 16, k: 16, efficiency: 0.1}\n"));
  EXPECT_THAT(text, HasSubstr("  - dtype: fp32\n    layout: tn\n    points:\n      - {m: 16, n: 16, k: 16, efficiency: 0.05}\n"));
  const CalibrationTable loaded = load_calibration(write_temp("grid_round_trip.yaml", text));
  EXPECT_NEAR(loaded.gemm.at({Dtype::fp32, GemmOp::nn}).at(64, 64, 64), 0.45, 1e-12);
  EXPECT_NEAR(loaded.gemm.at({Dtype::fp32, GemmOp::tn}).at(64, 64, 64), 0.225, 1e-12);
  EXPECT_EQ(dump_calibration(loaded), text);

  const std::vector<Diagnostic> errors = errors_of("grid_errors.yaml", R"(device: cpu
source: test
peak: {fp32: "10GFlops"}
memory_bandwidth: "10GB/s"
gemm:
  - dtype: fp32
    points:
      - {m: 16, n: 16, k: 16, efficiency: 0.5}
      - {m: 64, n: 16, k: 16, efficiency: 0.6}
      - {m: 16, n: 32, k: 16, efficiency: 0.6}
  - dtype: fp16
    points:
      - {m: 16.5, n: 16, k: 16, efficiency: 0.5}
      - {m: 16, n: 16, k: 16, efficiency: 1.5}
  - dtype: fp32
    layout: backward
    points:
      - {m: 16, n: 16, k: 16, efficiency: 0.5}
  - dtype: fp32
    layout: nt
    points:
      - {m: 16, n: 16, k: 16, efficiency: 0.5}
  - dtype: fp32
    layout: nt
    points:
      - {m: 16, n: 16, k: 16, efficiency: 0.5}
  - dtype: fp32
    layout: backward_nt
    points:
      - {m: 16, n: 16, k: 16, efficiency: 0.5}
)");
  ASSERT_EQ(errors.size(), 6u);
  EXPECT_EQ(errors[0].location.line, 8);  // the points: 2 m × 2 n × 1 k values need 4
  EXPECT_THAT(errors[0].message, HasSubstr("not a full grid"));
  EXPECT_THAT(errors[0].message, HasSubstr("m = 64, n = 32, k = 16 is missing"));
  EXPECT_EQ(errors[1].location.line, 13);
  EXPECT_THAT(errors[1].message, HasSubstr("whole number"));
  EXPECT_EQ(errors[2].location.line, 14);  // efficiency 1.5 > 1
  EXPECT_EQ(errors[3].location.line, 16);  // a backward pair is two grids' GEMMs, not a layout
  EXPECT_THAT(errors[3].message, HasSubstr("unknown GEMM layout 'backward'"));
  EXPECT_EQ(errors[4].location.line, 23);  // the second nt grid for fp32
  EXPECT_THAT(errors[4].message, HasSubstr("a second GEMM shape grid for dtype 'fp32' and layout 'nt'"));
  EXPECT_EQ(errors[5].location.line, 28);  // nor is the pair of an nt product
  EXPECT_THAT(errors[5].message, HasSubstr("unknown GEMM layout 'backward_nt'"));
}

TEST(CalibrationGemmGrid, LayoutsReadTheirGridAndABackwardPairIsTheHarmonicMeanOfItsTwo) {
  const GpuSpec& v100 = *HardwareCatalog::builtin().find_gpu("V100-16GB");
  CalibrationTable table = example_table();
  table.gemm[{Dtype::fp32, GemmOp::nn}] = corner_grid();
  GemmEfficiencyGrid halved = corner_grid();
  for (double& e : halved.efficiency) e /= 2;
  table.gemm[{Dtype::fp32, GemmOp::nt}] = halved;
  const auto efficiency = [&](GemmShape shape) {
    return calibrated_compute_efficiency(table, v100, LayerKind::matmul, Dtype::fp32, Flop(1e9), shape);
  };
  // (16, 256, 16) on the corner grid is 0.1 + 0.2 = 0.3 (corner_grid's formula); nt reads its own
  // grid (half: 0.15); tn has none and reads nn's.
  EXPECT_DOUBLE_EQ(efficiency(GemmShape{16, 256, 16, GemmOp::nn}), 0.3);
  EXPECT_DOUBLE_EQ(efficiency(GemmShape{16, 256, 16, GemmOp::nt}), 0.15);
  EXPECT_DOUBLE_EQ(efficiency(GemmShape{16, 256, 16, GemmOp::tn}), 0.3);
  // The backward pair of the product (m, n, k) = (16, 256, 256): dA is the nt GEMM of shape
  // (m, k, n) = (16, 256, 256), on the halved grid (0.1 + 0.2 + 0.4) / 2 = 0.35; dB is the tn GEMM
  // (k, n, m) = (256, 256, 16), which has no grid and reads nn's: 0.1 + 0.1 + 0.2 = 0.4. Equal FLOPs
  // at those rates take 1/0.35 + 1/0.4 units of time for 2 units of work: e = 2 / (1/0.35 + 1/0.4).
  EXPECT_NEAR(efficiency(GemmShape{16, 256, 256, GemmOp::backward}), 2.0 / (1.0 / 0.35 + 1.0 / 0.4), 1e-15);
  // The pair of an nt product (weights stored out × in): dA = dC·B is the nn GEMM (m, k, n) =
  // (16, 256, 256), 0.1 + 0.2 + 0.4 = 0.7 on the nn grid (the halved nt grid would give 0.35); dB =
  // dCᵀ·A is the tn GEMM (n, k, m) = (256, 256, 16), nn's again: 0.4.
  EXPECT_NEAR(efficiency(GemmShape{16, 256, 256, GemmOp::backward_nt}), 2.0 / (1.0 / 0.7 + 1.0 / 0.4), 1e-15);
  // Without grids the pair, as any GEMM, reads the FLOPs curve (none for fp32 matmul here: 1).
  table.gemm.clear();
  EXPECT_DOUBLE_EQ(efficiency(GemmShape{16, 256, 256, GemmOp::backward}), 1.0);
}

TEST(CalibrationFile, DumpLoadRoundTrip) {
  const CalibrationTable table = example_table();
  const std::string text = dump_calibration(table);
  const CalibrationTable loaded = load_calibration(write_temp("round_trip.yaml", text));
  EXPECT_EQ(loaded.device, table.device);
  EXPECT_EQ(loaded.source, table.source);
  ASSERT_EQ(loaded.peak.size(), 2u);
  EXPECT_DOUBLE_EQ(loaded.peak.at(Dtype::fp16).value(), 125e12);
  EXPECT_DOUBLE_EQ(loaded.peak.at(Dtype::fp32).value(), 15.7e12);
  EXPECT_DOUBLE_EQ(loaded.memory_bandwidth.value(), 900e9);
  ASSERT_EQ(loaded.compute.size(), 2u);
  for (const auto& [key, curve] : table.compute) {
    ASSERT_TRUE(loaded.compute.contains(key)) << key.first;
    const auto& points = loaded.compute.at(key).points;
    ASSERT_EQ(points.size(), curve.points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
      // Six significant digits: a relative error below 5e-6.
      EXPECT_NEAR(points[i].first, curve.points[i].first, 5e-6 * curve.points[i].first);
      EXPECT_NEAR(points[i].second, curve.points[i].second, 5e-6 * curve.points[i].second);
    }
  }
  ASSERT_EQ(loaded.memory.points.size(), 2u);
  EXPECT_DOUBLE_EQ(loaded.memory.points[1].first, 1073741824.0);
  ASSERT_EQ(loaded.copies.size(), 2u);
  EXPECT_DOUBLE_EQ(loaded.copies.at("device_to_device").points[1].second, 7.7e11);
  // Six significant digits are written, so a second trip reproduces the text exactly.
  EXPECT_EQ(dump_calibration(loaded), text);
}

TEST(CalibrationFile, DumpIsReadableYaml) {
  const std::string text = dump_calibration(example_table());
  EXPECT_THAT(text, HasSubstr("peak: {fp32: \"15.7TFlops\", fp16: \"125TFlops\"}\n"));
  EXPECT_THAT(text, HasSubstr("memory_bandwidth: \"900GB/s\"\n"));
  EXPECT_THAT(text, HasSubstr("      - {size: \"1GFlop\", efficiency: 0.35}\n"));
  EXPECT_THAT(text, HasSubstr("  - {size: \"1GiB\", efficiency: 0.9}\n"));
  EXPECT_THAT(text, HasSubstr("    - {size: \"256MiB\", bandwidth: \"770GB/s\"}\n"));
}

TEST(CalibrationFile, MinimalTableLoads) {
  const CalibrationTable table = load_calibration(write_temp("minimal.yaml", R"(device: cpu
source: "test"
peak: {fp32: "50GFlops"}
memory_bandwidth: "10GB/s"
)"));
  EXPECT_EQ(table.device, "cpu");
  EXPECT_TRUE(table.compute.empty());
  EXPECT_TRUE(table.memory.points.empty());
  EXPECT_TRUE(table.copies.empty());
}

const std::string kValidHead = R"(device: V100-16GB
source: "test"
peak: {fp16: "125TFlops"}
memory_bandwidth: "900GB/s"
)";

// The collectives section (NCCL latency per call, link efficiency): read, written back the same,
// and checked (latency is a duration, the efficiency in (0, 1]).
TEST(CalibrationFile, CollectivesSectionRoundTripAndErrors) {
  const CalibrationTable table = load_calibration(write_temp(
      "collectives.yaml", kValidHead + "memory: [{size: \"1GiB\", efficiency: 0.88}]\n"
                                       "collectives: {latency: \"41.5us\", link_efficiency: 0.69}\n"));
  ASSERT_TRUE(table.collectives.has_value());
  EXPECT_NEAR(table.collectives->latency.value(), 41.5e-6, 1e-15);
  EXPECT_DOUBLE_EQ(table.collectives->link_efficiency, 0.69);
  const std::string text = dump_calibration(table);
  EXPECT_EQ(dump_calibration(load_calibration(write_temp("collectives_again.yaml", text))), text);
  const CalibrationTable none = load_calibration(write_temp("none.yaml", kValidHead));
  EXPECT_FALSE(none.collectives.has_value());
  // A table without a memory curve is written without the section, and reads back.
  EXPECT_TRUE(load_calibration(write_temp("none_again.yaml", dump_calibration(none))).memory.points.empty());

  const auto errors = errors_of("bad_collectives.yaml", kValidHead + "collectives: {latency: 40, link_efficiency: 1.5}\n");
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].location.line, 5);
  EXPECT_THAT(errors[0].message, HasSubstr("unit"));
  EXPECT_EQ(errors[1].location.line, 5);
}

// The launch section (host time per kernel issued): read, written back the same, and checked (a
// positive duration; a misspelt key is located).
TEST(CalibrationFile, LaunchSectionRoundTripAndErrors) {
  const CalibrationTable table =
      load_calibration(write_temp("launch.yaml", kValidHead + "launch: {host_overhead: \"95us\"}\n"));
  ASSERT_TRUE(table.launch.has_value());
  EXPECT_NEAR(table.launch->host_overhead.value(), 95e-6, 1e-15);
  const std::string text = dump_calibration(table);
  EXPECT_EQ(dump_calibration(load_calibration(write_temp("launch_again.yaml", text))), text);
  EXPECT_FALSE(load_calibration(write_temp("no_launch.yaml", kValidHead)).launch.has_value());

  const auto errors = errors_of("bad_launch.yaml", kValidHead + "launch: {host_overhead: \"0us\"}\n"
                                                                "# two lines down\n"
                                                                "launch2: 1\n");
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].location.line, 5);
  EXPECT_THAT(errors[0].message, HasSubstr("positive"));
  EXPECT_EQ(errors[1].location.line, 7);
  const auto missing = errors_of("launch_missing.yaml", kValidHead + "launch: {host_overhaed: \"9us\"}\n");
  ASSERT_FALSE(missing.empty());
  EXPECT_EQ(missing[0].location.line, 5);
}

TEST(CalibrationFile, UnknownKeyIsLocatedWithSuggestion) {
  const auto errors = errors_of("unknown_key.yaml", R"(device: V100-16GB
source: "test"
peak: {fp16: "125TFlops"}
memory_bandwith: "900GB/s"
)");
  // The misspelt key (line 4, column 1) and, since it hides the real one, the missing key.
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_THAT(errors[0].message, HasSubstr("missing key 'memory_bandwidth'"));
  EXPECT_EQ(errors[1].location.line, 4);
  EXPECT_EQ(errors[1].location.column, 1);
  EXPECT_THAT(errors[1].message, HasSubstr("unknown key 'memory_bandwith'"));
  EXPECT_THAT(errors[1].message, HasSubstr("did you mean 'memory_bandwidth'"));
}

TEST(CalibrationFile, CurveErrorsAreAllReportedWithTheirPositions) {
  const auto errors = errors_of("bad_curves.yaml", kValidHead + R"(compute:
  - {kind: matmull, dtype: fp16, curve: [{size: "1GFlop", efficiency: 0.3}]}
  - {kind: matmul, dtype: fp16, curve: [{size: 1000, efficiency: 0.3}, {size: "2GFlop", efficiency: 1.5}]}
memory: [{size: "1GiB", efficiency: 0.9}, {size: "1MiB", efficiency: 0.5}]
copies:
  peer: [{size: "1MiB", efficiency: 0.5}]
)");
  ASSERT_EQ(errors.size(), 6u);
  // Line 6: the layer kind, at its value ("  - {kind: " is 11 characters).
  EXPECT_EQ(errors[0].location.line, 6);
  EXPECT_EQ(errors[0].location.column, 12);
  EXPECT_THAT(errors[0].message, HasSubstr("unknown layer kind 'matmull'; did you mean 'matmul'?"));
  // Line 7: a size without a unit, then an efficiency above 1.
  EXPECT_EQ(errors[1].location.line, 7);
  EXPECT_EQ(errors[1].location.column, 48);
  EXPECT_THAT(errors[1].message, HasSubstr("has no unit"));
  EXPECT_EQ(errors[2].location.line, 7);
  EXPECT_THAT(errors[2].message, HasSubstr("expected a number in [0, 1], got 1.5"));
  // Line 8: sizes going down.
  EXPECT_EQ(errors[3].location.line, 8);
  EXPECT_EQ(errors[3].location.column, 50);
  EXPECT_THAT(errors[3].message, HasSubstr("strictly increasing"));
  // Line 10: a copy point holds a bandwidth, not an efficiency.
  EXPECT_EQ(errors[4].location.line, 10);
  EXPECT_THAT(errors[4].message, HasSubstr("missing key 'bandwidth'"));
  EXPECT_EQ(errors[5].location.line, 10);
  EXPECT_THAT(errors[5].message, HasSubstr("unknown key 'efficiency'"));
}

TEST(CalibrationFile, DuplicateCurveUnknownCopyAndBadPeak) {
  const auto errors = errors_of("duplicates.yaml", R"(device: V100-16GB
source: "test"
peak: {fp16: "125TFlops", fp64: "7TFlops"}
memory_bandwidth: "900GB/s"
compute:
  - {kind: matmul, dtype: fp16, curve: [{size: "1GFlop", efficiency: 0.3}]}
  - {kind: matmul, dtype: fp16, curve: [{size: "1GFlop", efficiency: 0.4}]}
copies:
  host_to_devise: [{size: "1MiB", bandwidth: "10GB/s"}]
)");
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].location.line, 3);
  EXPECT_THAT(errors[0].message, HasSubstr("unknown key 'fp64' in peak"));
  EXPECT_EQ(errors[1].location.line, 7);
  EXPECT_THAT(errors[1].message, HasSubstr("a second curve for kind 'matmul' and dtype 'fp16'"));
  EXPECT_EQ(errors[2].location.line, 9);
  EXPECT_THAT(errors[2].message, HasSubstr("did you mean 'host_to_device'"));
}

TEST(CalibrationFile, MissingFileAndSyntaxError) {
  try {
    (void)load_calibration("/nonexistent/table.yaml");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.diagnostics().at(0).message, HasSubstr("cannot open file"));
  }
  const auto errors = errors_of("syntax.yaml", "device: [cpu\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0].message, HasSubstr("YAML syntax error"));
}

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
  const CalibrationTable table = fit_calibration("V100-16GB", samples, std::map<Dtype, FlopsPerSecond>{
                                                                           {Dtype::fp16, FlopsPerSecond(125e12)},
                                                                           {Dtype::fp32, FlopsPerSecond(15.7e12)}},
                                                 BytesPerSecond(900e9), "unit test");
  EXPECT_DOUBLE_EQ(table.compute.at({"matmul", Dtype::fp16}).at(1e11), 0.8);
  EXPECT_DOUBLE_EQ(table.peak.at(Dtype::fp32).value(), 15.7e12);  // recorded though not measured
  EXPECT_DOUBLE_EQ(table.memory.at(1e9), 1.0);
}

TEST(CalibrationFit, RejectsBrokenSamples) {
  EXPECT_THROW((void)fit_calibration("cpu", {{"gemm", "matmul", Dtype::fp32, 1e9, Seconds(0)}}, std::nullopt,
                                     std::nullopt, ""),
               std::invalid_argument);
  EXPECT_THROW((void)fit_calibration("cpu", {{"x", "warp_drive", Dtype::fp32, 1e9, Seconds(1)}}, std::nullopt,
                                     std::nullopt, ""),
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
  std::vector<std::string> stages;
  const std::vector<KernelSample> samples =
      CpuCalibrationBackend().run(/*quick=*/true, [&](const std::string& stage) { stages.push_back(stage); });

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
  const CalibrationTable reloaded = load_calibration(write_temp("cpu_quick.yaml", dump_calibration(table)));
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

TEST(CalibrationShipped, EveryTableLoadsNamesACatalogGpuAndUsesItsDatasheetPeaks) {
  const HardwareCatalog& catalog = HardwareCatalog::builtin();
  int tables = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kShippedDir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++tables;
    SCOPED_TRACE(entry.path().string());
    const CalibrationTable table = load_calibration(entry.path().string());
    EXPECT_EQ(entry.path().stem().string(), table.device);
    const GpuSpec* gpu = catalog.find_gpu(table.device);
    ASSERT_NE(gpu, nullptr) << table.device << " is not a catalog GPU";
    EXPECT_FALSE(table.source.empty());
    // The efficiencies refer to the datasheet: the table's peaks are the catalog's.
    for (const auto& [dtype, rate] : table.peak) {
      ASSERT_TRUE(gpu->peak(dtype).has_value()) << dtype_name(dtype);
      EXPECT_DOUBLE_EQ(rate.value(), gpu->peak(dtype)->value()) << dtype_name(dtype);
    }
    EXPECT_DOUBLE_EQ(table.memory_bandwidth.value(), gpu->memory_bandwidth.value());
    EXPECT_TRUE(table.compute.contains({"matmul", Dtype::fp16}));
    EXPECT_FALSE(table.memory.points.empty());
  }
  EXPECT_GE(tables, 5);
}

TEST(CalibrationShipped, RequiredGpusHaveTables) {
  for (const char* name : {"V100-16GB", "V100-32GB", "A100-40GB-SXM", "A100-80GB-SXM", "H100-SXM"})
    EXPECT_TRUE(load_shipped_calibration(kShippedDir, name).has_value()) << name;
  EXPECT_FALSE(load_shipped_calibration(kShippedDir, "no-such-gpu").has_value());
}

TEST(CalibrationShipped, TableNamingAnotherDeviceIsAnError) {
  const std::string path = write_temp("A100-40GB-SXM.yaml", kValidHead);  // says V100-16GB
  EXPECT_THROW((void)load_shipped_calibration(std::filesystem::path(path).parent_path().string(), "A100-40GB-SXM"),
               InputError);
}

}  // namespace
}  // namespace dnnsim
