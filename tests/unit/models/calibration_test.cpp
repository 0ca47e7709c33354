// Calibration: curve interpolation and the calibrated roofline derived by hand, GEMM shape grids, and
// table files (round trip, located errors). The fits, the CPU backend end to end in quick mode, the
// calibrated compute cost and the shipped tables: calibration_cost_test.cpp.
#include "models/calibration/calibration.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "models/cost/compute_cost.hpp"
#include "tests/support/calibration_tables.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/temp_files.hpp"

namespace dnnsim {
namespace {

using testing::example_table;
using testing::gemm;
using ::testing::HasSubstr;
using testing::kValidHead;
using testing::write_file;

std::vector<Diagnostic> errors_of(const std::string& name, const std::string& text) {
  SCOPED_TRACE(text);
  return testing::diagnostics_thrown_by([&] { (void)load_calibration(write_file(name, text)); });
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

// A 2 × 2 × 2 grid over {16, 256} per axis, e = 0.1 at (16, 16, 16) growing by 0.1 per large axis:
// e(m, n, k) = 0.1 + 0.1 · (m = 256) + 0.2 · (n = 256) + 0.4 · (k = 256) at the corners.
GemmEfficiencyGrid corner_grid() {
  GemmEfficiencyGrid grid{{16, 256}, {16, 256}, {16, 256}, {}};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int l = 0; l < 2; ++l) grid.efficiency.push_back(0.1 + 0.1 * i + 0.2 * j + 0.4 * l);
  return grid;
}

TEST(CalibrationGemmGrid, MultilinearInLogShapeFlatAboveAndAPowerLawBelow) {
  const GemmEfficiencyGrid grid = corner_grid();
  EXPECT_DOUBLE_EQ(grid.at(16, 16, 16), 0.1);
  EXPECT_DOUBLE_EQ(grid.at(256, 256, 256), 0.8);
  EXPECT_DOUBLE_EQ(grid.at(16, 256, 16), 0.3);
  // 64 is halfway between 16 and 256 in log scale on every axis: the corners' mean,
  // 0.1 + 0.1/2 + 0.2/2 + 0.4/2 = 0.45.
  EXPECT_NEAR(grid.at(64, 64, 64), 0.45, 1e-12);
  // Halfway on k only, m and n small: 0.1 + 0.4/2 = 0.3.
  EXPECT_NEAR(grid.at(16, 16, 64), 0.3, 1e-12);
  // Above an axis the grid is flat: (4096, 16, 256) reads (256, 16, 256) = 0.1 + 0.1 + 0.4.
  EXPECT_NEAR(grid.at(4096, 16, 256), 0.6, 1e-12);
  // Below one it follows the power law of its first cell: on n at (256, ·, 256) e goes 0.6 → 0.8 from
  // 16 to 256, so e ∝ n^α with 16^α = 4/3, and n = 1, 16 times below, reads 0.6 · 3/4 = 0.45.
  EXPECT_NEAR(grid.at(4096, 1, 256), 0.45, 1e-12);
  // On two axes at once the factors multiply: at (16, 16, 16) e = 0.1, and the first cells go to 0.2
  // on m and 0.3 on n, exponents log16(2) = 1/4 and log16(3) ≈ 0.396; at (4, 4, 16), a quarter of 16 on
  // both, 0.1 · (1/4)^(1/4) · (1/4)^log16(3) = 0.1 · 2^(−1/2) · 3^(−1/2) = 0.1 / √6.
  EXPECT_NEAR(grid.at(4, 4, 16), 0.1 / std::sqrt(6.0), 1e-12);
  EXPECT_DOUBLE_EQ(GemmEfficiencyGrid{}.at(64, 64, 64), 1.0);
}

// The exponent is clamped to [0, 1]: a smaller GEMM is never more efficient than the grid's first point
// (α ≥ 0) and never takes longer (α ≤ 1, e ∝ size: its time constant).
TEST(CalibrationGemmGrid, BelowTheGridTheExponentStaysBetweenFlatEfficiencyAndFlatTime) {
  GemmEfficiencyGrid falling{{256, 1024}, {256}, {256}, {0.5, 0.4}};  // less efficient as m grows
  EXPECT_DOUBLE_EQ(falling.at(64, 256, 256), 0.5);
  GemmEfficiencyGrid steep{{256, 1024}, {256}, {256}, {0.1, 0.9}};  // log4(9) > 1
  EXPECT_NEAR(steep.at(64, 256, 256), 0.1 / 4, 1e-15);
  GemmEfficiencyGrid single{{256}, {256}, {256}, {0.3}};  // no cell to take a slope from: flat
  EXPECT_DOUBLE_EQ(single.at(16, 16, 16), 0.3);
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
        KernelSample sample{"gemm_shape", "matmul", Dtype::fp32, flops,
                            Seconds(flops / (5e9 * (1 + i + 2 * j + 4 * l)))};
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

// The H100 table of the two tests below: cuDNN's attention at 8k tokens, causal forward and backward
// (flat curves), and one forward call of Llama 3 8B's core.
CalibrationTable h100_attention_table() {
  CalibrationTable table;
  table.device = "H100-SXM";
  table.source = "test";
  table.peak[Dtype::bf16] = FlopsPerSecond(989.5e12);
  table.memory_bandwidth = BytesPerSecond(3.35e12);
  table.compute[{"attention", Dtype::bf16}].points = {{1e9, 529.0 / 989.5}};
  table.backward_compute[{"attention", Dtype::bf16}].points = {{1e9, 518.0 / 989.5}};
  return table;
}

Compute llama3_8b_attention_call() {
  Compute core;
  core.dtype = Dtype::bf16;
  core.kernel = LayerKind::attention;
  core.flops = Flop(2.0 * 2 * 32 * 8192 * 4096 * 128);
  return core;
}

// A fused attention's backward has its own measured rate (CalibrationTable::backward_compute): H100's
// cuDNN attention at 8k tokens runs its causal forward at 529 TFLOP/s and its backward at 518
// (FlashAttention-3 paper, Fig. 5 and 6; data/gpu-perf/flash-attention), 0.5346 and 0.5235 of the
// 989.5 TFLOP/s BF16 peak. One forward call of Llama 3 8B's core (32 heads × 8,192 queries × 4,096
// keys on average × 128, two products): 2 · 2 · 32 · 8192 · 4096 · 128 = 549.8 GFLOP → 549.8e9 /
// (989.5e12 · 0.5346) = 1.039 ms; its backward, 2.5 × the forward's FLOPs, reads the backward curve
// (flat here): 1374.4e9 / (989.5e12 · 0.5235) = 2.653 ms — not the forward curve's 0.5346, nor the
// matmul curve, which a backward task of a kind without a backward curve still reads.
TEST(CalibrationCurve, ABackwardTaskReadsItsKindsBackwardCurve) {
  const GpuSpec& h100 = *HardwareCatalog::builtin().find_gpu("H100-SXM");
  CalibrationTable table = h100_attention_table();
  table.compute[{"matmul", Dtype::bf16}].points = {{1e9, 0.8}};
  Compute core = llama3_8b_attention_call();
  EXPECT_NEAR(compute_time(core, h100, table).value(), 1.039e-3, 1e-6);
  core.backward = true;
  core.flops = core.flops * 2.5;
  EXPECT_NEAR(compute_time(core, h100, table).value(), 2.653e-3, 1e-6);
  Compute gemm_backward = core;  // a matmul's backward: no backward curve for it, the matmul curve
  gemm_backward.kernel = LayerKind::matmul;
  EXPECT_NEAR(compute_time(gemm_backward, h100, table).value(), core.flops.value() / (989.5e12 * 0.8), 1e-9);
  // The file form: `pass: backward`, written back the same; a second backward curve is located.
  const std::string text = dump_calibration(table);
  EXPECT_THAT(text, HasSubstr("  - kind: attention\n    dtype: bf16\n    pass: backward\n"));
  const CalibrationTable loaded = load_calibration(write_file("backward_curve.yaml", dump_calibration(table)));
  ASSERT_TRUE(loaded.backward_compute.contains({"attention", Dtype::bf16}));
  EXPECT_EQ(dump_calibration(loaded), dump_calibration(table));
  const std::vector<Diagnostic> twice = errors_of("twice.yaml", std::string(kValidHead) + R"(compute:
  - {kind: attention, dtype: bf16, pass: backward, curve: [{size: "1GFlop", efficiency: 0.5}]}
  - {kind: attention, dtype: bf16, pass: backward, curve: [{size: "1GFlop", efficiency: 0.5}]}
  - {kind: attention, dtype: bf16, pass: sideways, curve: [{size: "1GFlop", efficiency: 0.5}]}
)");
  ASSERT_EQ(twice.size(), 2u);
  EXPECT_THAT(twice[0].message, HasSubstr("a second backward curve for kind 'attention'"));
  EXPECT_THAT(twice[1].message, HasSubstr("sideways"));
}

// A forward call without a mask reads its kind's `mask: none` curve (CalibrationTable::unmasked_compute):
// H100's cuDNN attention at 8k tokens runs 600 TFLOP/s without the causal mask (FlashAttention-3, Fig. 5;
// data/gpu-perf/flash-attention), so the call of the test above, 549.8 GFLOP, takes 549.8e9 / 600e12 =
// 0.916 ms unmasked against 1.039 ms causal; a backward task keeps its backward curve, and a table
// without an unmasked curve reads the causal one. The file form `mask: none` round-trips; a second
// unmasked curve and `mask: none` on a backward curve are located errors.
TEST(CalibrationCurve, AnUnmaskedForwardCallReadsItsKindsUnmaskedCurve) {
  const GpuSpec& h100 = *HardwareCatalog::builtin().find_gpu("H100-SXM");
  CalibrationTable table = h100_attention_table();
  Compute core = llama3_8b_attention_call();
  core.unmasked = true;
  EXPECT_NEAR(compute_time(core, h100, table).value(), 1.039e-3, 1e-6);  // no unmasked curve: the causal one
  table.unmasked_compute[{"attention", Dtype::bf16}].points = {{1e9, 600.0 / 989.5}};
  EXPECT_NEAR(compute_time(core, h100, table).value(), 0.916e-3, 1e-6);
  core.backward = true;
  core.flops = core.flops * 2.5;
  EXPECT_NEAR(compute_time(core, h100, table).value(), 2.653e-3, 1e-6);
  EXPECT_THAT(dump_calibration(table), HasSubstr("  - kind: attention\n    dtype: bf16\n    mask: none\n"));
  const CalibrationTable loaded = load_calibration(write_file("unmasked_curve.yaml", dump_calibration(table)));
  ASSERT_TRUE(loaded.unmasked_compute.contains({"attention", Dtype::bf16}));
  EXPECT_EQ(dump_calibration(loaded), dump_calibration(table));
  const std::vector<Diagnostic> wrong = errors_of("unmasked.yaml", std::string(kValidHead) + R"(compute:
  - {kind: attention, dtype: bf16, mask: none, curve: [{size: "1GFlop", efficiency: 0.5}]}
  - {kind: attention, dtype: bf16, mask: none, curve: [{size: "1GFlop", efficiency: 0.5}]}
  - {kind: attention, dtype: bf16, pass: backward, mask: none, curve: [{size: "1GFlop", efficiency: 0.5}]}
)");
  ASSERT_EQ(wrong.size(), 2u);
  EXPECT_THAT(wrong[0].message, HasSubstr("a second unmasked curve for kind 'attention'"));
  EXPECT_THAT(wrong[1].message, HasSubstr("mask: none is read by forward curves only"));
  EXPECT_EQ(wrong[1].location.line, wrong[0].location.line + 1);  // the third entry's own line
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
  EXPECT_THAT(
      text,
      HasSubstr("  - dtype: fp32\n    layout: tn\n    points:\n      - {m: 16, n: 16, k: 16, efficiency: 0.05}\n"));
  const CalibrationTable loaded = load_calibration(write_file("grid_round_trip.yaml", text));
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
  const CalibrationTable loaded = load_calibration(write_file("round_trip.yaml", text));
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
  const CalibrationTable table = load_calibration(write_file("minimal.yaml", R"(device: cpu
source: "test"
peak: {fp32: "50GFlops"}
memory_bandwidth: "10GB/s"
)"));
  EXPECT_EQ(table.device, "cpu");
  EXPECT_TRUE(table.compute.empty());
  EXPECT_TRUE(table.memory.points.empty());
  EXPECT_TRUE(table.copies.empty());
}

// The collectives section (NCCL latency per call, link efficiency, compute share): read, written
// back the same, and checked (latency is a duration, the efficiency in (0, 1], the share in [0, 0.49]).
TEST(CalibrationFile, CollectivesSectionRoundTripAndErrors) {
  const CalibrationTable table = load_calibration(write_file(
      "collectives.yaml", kValidHead +
                              "memory: [{size: \"1GiB\", efficiency: 0.88}]\n"
                              "collectives: {latency: \"41.5us\", link_efficiency: 0.69, compute_share: 0.159}\n"));
  ASSERT_TRUE(table.collectives.has_value());
  EXPECT_NEAR(table.collectives->latency.value(), 41.5e-6, 1e-15);
  EXPECT_DOUBLE_EQ(table.collectives->link_efficiency, 0.69);
  EXPECT_DOUBLE_EQ(table.collectives->compute_share, 0.159);
  const std::string text = dump_calibration(table);
  EXPECT_EQ(dump_calibration(load_calibration(write_file("collectives_again.yaml", text))), text);
  const CalibrationTable none = load_calibration(write_file("none.yaml", kValidHead));
  EXPECT_FALSE(none.collectives.has_value());
  // What a device without the section gets: no latency, nominal links, no share; with it, the section.
  for (const CalibrationTable* without : {&none, static_cast<const CalibrationTable*>(nullptr)}) {
    EXPECT_EQ(collectives_of(without).latency.value(), 0);
    EXPECT_EQ(collectives_of(without).link_efficiency, 1.0);
    EXPECT_EQ(collectives_of(without).compute_share, 0);
  }
  EXPECT_DOUBLE_EQ(collectives_of(&table).compute_share, 0.159);
  // A table without a memory curve is written without the section, and reads back.
  EXPECT_TRUE(load_calibration(write_file("none_again.yaml", dump_calibration(none))).memory.points.empty());

  const auto errors = errors_of("bad_collectives.yaml",
                                kValidHead + "collectives: {latency: 40, link_efficiency: 1.5, compute_share: 0.5}\n");
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].location.line, 5);
  EXPECT_THAT(errors[0].message, HasSubstr("unit"));
  EXPECT_EQ(errors[1].location.line, 5);
  EXPECT_EQ(errors[2].location.line, 5);
  EXPECT_THAT(errors[2].message, HasSubstr("[0, 0.49]"));
}

// The launch section (host time per kernel issued): read, written back the same, and checked (a
// positive duration; a misspelt key is located).
TEST(CalibrationFile, LaunchSectionRoundTripAndErrors) {
  const CalibrationTable table =
      load_calibration(write_file("launch.yaml", kValidHead + "launch: {host_overhead: \"95us\"}\n"));
  ASSERT_TRUE(table.launch.has_value());
  EXPECT_NEAR(table.launch->host_overhead.value(), 95e-6, 1e-15);
  const std::string text = dump_calibration(table);
  EXPECT_EQ(dump_calibration(load_calibration(write_file("launch_again.yaml", text))), text);
  EXPECT_FALSE(load_calibration(write_file("no_launch.yaml", kValidHead)).launch.has_value());

  const auto errors = errors_of("bad_launch.yaml", kValidHead +
                                                       "launch: {host_overhead: \"0us\"}\n"
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

// sustained_compute scales the math rate of every calibrated kernel and leaves memory traffic alone.
// H200's measured burst and sustained matmul rates (Bekman's MAMF / MSMF, data/gpu-perf/mamf): BF16
// 850 and 755 TFLOP/s, so a table of burst rates gets sustained_compute = 755 / 850 = 0.888235. On the
// example V100 table a 4096³ fp16 GEMM (137.4 GFLOP, above the matmul curve's last point: e = 0.8)
// takes 137.44e9 / (125e12 · 0.8) = 1.3744 ms in a burst and 1.3744 / 0.888235 = 1.5473 ms sustained;
// an elementwise task of 1 GiB moved and 524,288 FLOPs is memory-bound (1073741824 / (900e9 · 0.9) =
// 1.3256 ms against 524288 / (15.7e12 · 0.0123 · 0.888) = 3.0 µs of math) and does not change.
TEST(CalibrationFile, SustainedComputeScalesTheMathRateOnly) {
  const GpuSpec& v100 = *HardwareCatalog::builtin().find_gpu("V100-16GB");
  CalibrationTable table = example_table();
  const Compute product = gemm(4096, Dtype::fp16);
  EXPECT_NEAR(compute_time(product, v100, table).value(), 2.0 * 4096 * 4096 * 4096 / (125e12 * 0.8), 1e-12);
  table.sustained_compute = 755.0 / 850.0;
  EXPECT_NEAR(compute_time(product, v100, table).value(), 1.5473e-3, 1e-7);
  Compute norm;
  norm.flops = Flop(524288);
  norm.bytes_accessed = Bytes(1073741824);
  norm.kernel = LayerKind::elementwise;
  EXPECT_NEAR(compute_time(norm, v100, table).value(), 1073741824 / (900e9 * 0.9), 1e-12);

  // The file's key: read, written back the same, absent = 1, and outside (0, 1] a located error.
  const CalibrationTable loaded =
      load_calibration(write_file("sustained.yaml", kValidHead + "sustained_compute: 0.888\n"));
  EXPECT_DOUBLE_EQ(loaded.sustained_compute, 0.888);
  const std::string text = dump_calibration(loaded);
  EXPECT_EQ(dump_calibration(load_calibration(write_file("sustained_again.yaml", text))), text);
  EXPECT_DOUBLE_EQ(load_calibration(write_file("not_sustained.yaml", kValidHead)).sustained_compute, 1.0);
  const auto errors = errors_of("bad_sustained.yaml", kValidHead + "sustained_compute: 1.2\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].location.line, 5);
}

TEST(CalibrationFile, UnknownKeyIsLocatedWithSuggestion) {
  const auto errors = errors_of("unknown_key.yaml", R"(device: V100-16GB
source: "test"
peak: {fp16: "125TFlops"}
memory_bandwith: "900GB/s"
)");
  // The misspelt key (line 4, column 1), naming the required key it hides: one mistake, one error.
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].location.line, 4);
  EXPECT_EQ(errors[0].location.column, 1);
  EXPECT_THAT(errors[0].message, HasSubstr("unknown key 'memory_bandwith'"));
  EXPECT_THAT(errors[0].message, HasSubstr("did you mean 'memory_bandwidth'"));
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

// A misspelt pass or mask — its value or its key — is one error: the curve names no (kind, dtype, pass,
// mask) slot, so it is not also "a second curve" of the default slot the entry before it filled (the
// shipped H100 table's attention curves with `mask: none` and `pass: backward` typo'd gave two errors each).
TEST(CalibrationFile, ARefusedPassOrMaskIsOneError) {
  const auto errors = errors_of("pass_mask.yaml", std::string(kValidHead) + R"(compute:
  - {kind: attention, dtype: bf16, curve: [{size: "1GFlop", efficiency: 0.5}]}
  - {kind: attention, dtype: bf16, mask: nonex, curve: [{size: "1GFlop", efficiency: 0.6}]}
  - {kind: attention, dtype: bf16, pass: backwardx, curve: [{size: "1GFlop", efficiency: 0.4}]}
  - {kind: attention, dtype: bf16, mas: none, curve: [{size: "1GFlop", efficiency: 0.6}]}
  - {kind: attention, dtype: bf16, pas: backward, curve: [{size: "1GFlop", efficiency: 0.4}]}
)");
  ASSERT_EQ(errors.size(), 4u) << testing::dump(errors);
  EXPECT_THAT(errors[0].message, HasSubstr("unknown mask 'nonex'; did you mean 'none'?"));
  EXPECT_THAT(errors[1].message, HasSubstr("unknown pass 'backwardx'; did you mean 'backward'?"));
  EXPECT_THAT(errors[2].message, HasSubstr("unknown key 'mas' in a compute curve; did you mean 'mask'?"));
  EXPECT_THAT(errors[3].message, HasSubstr("unknown key 'pas' in a compute curve; did you mean 'pass'?"));
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

}  // namespace
}  // namespace dnnsim
