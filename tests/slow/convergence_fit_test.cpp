// The fitting side of the statistical-efficiency model: the loss-curve fit on points made by its own
// formula, the digits reader, and the proxy training run (models/sync/proxy_training.hpp) on a small
// configuration (a few hundred steps, two replicas: well under a second in Release).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "models/common/diagnostics.hpp"
#include "models/sync/loss_curve_fit.hpp"
#include "models/sync/proxy_training.hpp"
#include "planners/jobs/marl/torch_plugin.hpp"

namespace dnnsim {
namespace {

using ::testing::HasSubstr;

TEST(LossCurveFit, RecoversTheParametersOfExactPoints) {
  // l(x) = 1/(a·x + b) + c with a = 0.002, b = 0.5, c = 0.15: l(0) = 1/0.5 + 0.15 = 2.15 and
  // l(2000) = 1/4.5 + 0.15 ≈ 0.372. The residuals vanish at the true parameters, so a least-squares
  // fit must return them (to LM's tolerance) with an rms of ~0.
  std::vector<double> x, loss;
  for (int k = 0; k <= 2000; k += 50) {
    x.push_back(k);
    loss.push_back(1.0 / (0.002 * k + 0.5) + 0.15);
  }
  const LossCurveFit fit = fit_loss_curve(x, loss);
  ASSERT_TRUE(fit.ok);
  EXPECT_NEAR(fit.a, 0.002, 1e-8);
  EXPECT_NEAR(fit.b, 0.5, 1e-6);
  EXPECT_NEAR(fit.c, 0.15, 1e-6);
  EXPECT_LT(fit.rms, 1e-9);
}

TEST(LossCurveFit, RecoversLossAgainstTimeInSeconds) {
  // The ADSP use: loss against wall time, x up to 3.6·10⁴ s, a = 10⁻⁴ /s, b = 0.8, c = 0.3
  // (l(0) = 1.55). Same argument as above: exact points, so exact parameters.
  std::vector<double> x, loss;
  for (int k = 0; k <= 36; ++k) {
    x.push_back(1000.0 * k);
    loss.push_back(1.0 / (1e-4 * 1000.0 * k + 0.8) + 0.3);
  }
  const LossCurveFit fit = fit_loss_curve(x, loss);
  ASSERT_TRUE(fit.ok);
  EXPECT_NEAR(fit.a, 1e-4, 1e-10);
  EXPECT_NEAR(fit.b, 0.8, 1e-6);
  EXPECT_NEAR(fit.c, 0.3, 1e-6);
}

TEST(LossCurveFit, KeepsTheFloorNonNegative) {
  // Points of 1/(0.01·x + 1) − 0.05 go below zero from x ≈ 1900 on… but only up to x = 500 are
  // given (l ∈ [0.117, 0.95]): the unconstrained optimum is c = −0.05, a loss floor below zero, so
  // the fit must settle on c = 0 with a worse but small residual.
  std::vector<double> x, loss;
  for (int k = 0; k <= 500; k += 25) {
    x.push_back(k);
    loss.push_back(1.0 / (0.01 * k + 1.0) - 0.05);
  }
  const LossCurveFit fit = fit_loss_curve(x, loss);
  ASSERT_TRUE(fit.ok);
  EXPECT_EQ(fit.c, 0.0);
  EXPECT_GT(fit.rms, 0.0);
  EXPECT_LT(fit.rms, 0.05);
}

TEST(LossCurveFit, NeedsThreePointsOfEqualLength) {
  EXPECT_FALSE(fit_loss_curve({0.0, 1.0}, {2.0, 1.0}).ok);
  EXPECT_FALSE(fit_loss_curve({0.0, 1.0, 2.0}, {1.0, 1.0, 1.0}).ok);  // flat: no falling curve
  EXPECT_THROW((void)fit_loss_curve({0.0, 1.0, 2.0}, {2.0, 1.0}), std::invalid_argument);
}

TEST(Convergence, ShippedDigitsAreTheUciTestSet) {
  const DigitsData& data = shipped_digits();
  ASSERT_EQ(data.labels.size(), 1797u);
  ASSERT_EQ(data.inputs.rows(), 1797);
  ASSERT_EQ(data.inputs.cols(), 65);
  EXPECT_EQ(data.inputs.col(64).minCoeff(), 1.0);  // the bias input
  EXPECT_GE(data.inputs.leftCols(64).minCoeff(), 0.0);
  EXPECT_EQ(data.inputs.leftCols(64).maxCoeff(), 1.0);  // 16/16
  EXPECT_EQ(data.labels.front(), 0);
}

TEST(Convergence, BadDigitsFileIsLocated) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "dnnsim_convergence_bad_digits.csv";
  std::string line;
  for (int k = 0; k < 64; ++k) line += "3,";
  // Line 2 has the label 12, line 3 a 66th field; both are reported, each where it starts (after
  // 64 fields "3," of two characters: column 129; the 66th field after "7,": column 131).
  std::ofstream(path) << line << "7\n" << line << "12\n" << line << "7,1\n";
  try {
    (void)load_digits(path.string());
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 2u);
    EXPECT_EQ(e.diagnostics()[0].location.line, 2);
    EXPECT_EQ(e.diagnostics()[0].location.column, 129);
    EXPECT_THAT(e.diagnostics()[0].message, HasSubstr("label"));
    EXPECT_EQ(e.diagnostics()[1].location.line, 3);
    EXPECT_EQ(e.diagnostics()[1].location.column, 131);
    EXPECT_THAT(e.diagnostics()[1].message, HasSubstr("65 fields"));
  }
}

// A small configuration: 300 sequential steps, 4 levels (the losses at 150, 75, 37.5, 18.75 steps),
// two replicas, two points per regime.
ProxyOptions small_options(std::uint64_t seed) {
  ProxyOptions options;
  options.seed = seed;
  options.sequential_steps = 300;
  options.replicas = 2;
  options.levels = 4;
  options.sync_workers = {2, 4};
  options.local_steps = {2, 4};
  options.async_workers = {2, 4};
  return options;
}

const ConvergenceCalibration& small_calibration() {
  static const ConvergenceCalibration calibration = calibrate_convergence(shipped_digits(), small_options(7));
  return calibration;
}

TEST(Convergence, SequentialLossDecreases) {
  const ConvergenceCalibration& cal = small_calibration();
  // At W = 0 every class has probability 1/10: the cross-entropy is ln 10 for every sample.
  EXPECT_NEAR(cal.initial_loss, std::log(10.0), 1e-12);
  EXPECT_LT(cal.final_loss, 0.5 * cal.initial_loss);
  ASSERT_FALSE(cal.levels.empty());
  for (std::size_t j = 1; j < cal.levels.size(); ++j) {
    EXPECT_LT(cal.levels[j], cal.levels[j - 1]);
    EXPECT_GT(cal.level_steps[j], cal.level_steps[j - 1]);
  }
  EXPECT_TRUE(cal.curve.ok);
  EXPECT_GT(cal.curve.a, 0.0);
}

TEST(Convergence, SameSeedSameNumbers) {
  const std::string first = dump_convergence_calibration(small_calibration());
  EXPECT_EQ(dump_convergence_calibration(calibrate_convergence(shipped_digits(), small_options(7))), first);
  EXPECT_NE(dump_convergence_calibration(calibrate_convergence(shipped_digits(), small_options(8))), first);
}

TEST(Convergence, AveragingFourGradientsIsWorthOneToFourSteps) {
  // A synchronous step with 4 averaged gradients moves along the same expected gradient as one
  // sequential step, with a quarter of its variance: it is worth at least one step (equal when the
  // gradient noise is negligible) and at most the four sequential steps that drew the same four
  // batches, each at fresher parameters (McCandlish et al. 2018, eq. 2.11 bounds the gain by n). The
  // measurement is noisy, hence the 5 % margin below 1.
  const ConvergenceCalibration& cal = small_calibration();
  const auto& points = cal.beta.points;
  const auto four = std::find_if(points.begin(), points.end(), [](const WorthPoint& p) { return p.x == 4; });
  ASSERT_NE(four, points.end());
  EXPECT_EQ(four->levels_reached, static_cast<int>(cal.levels.size()));
  EXPECT_GE(four->worth, 0.95);
  EXPECT_LE(four->worth, 4.0);
}

TEST(Convergence, LabelSkewedWorkersDriftBetweenAveragings) {
  // With every worker seeing only its own digits (label skew 1; 4 workers: {0,4,8}, {1,5,9}, {2,6},
  // {3,7}), m local steps descend towards four different optima, so their average is worth less than
  // m i.i.d. steps: φ_local(4) < 1 and μ > 0, where i.i.d. workers measure φ_local ≈ 1 (μ ≈ 0). The
  // sequential run does not use shards: its curve is the same.
  ProxyOptions skewed = small_options(7);
  skewed.label_skew = 1.0;
  const ConvergenceCalibration cal = calibrate_convergence(shipped_digits(), skewed);
  EXPECT_GT(cal.mu.value, 0.02);
  EXPECT_GT(cal.mu.value, small_calibration().mu.value);
  const auto& points = cal.mu.points;
  const auto four = std::find_if(points.begin(), points.end(), [](const WorthPoint& p) { return p.x == 4; });
  ASSERT_NE(four, points.end());
  EXPECT_LT(four->factor, 0.95);
  EXPECT_EQ(cal.curve.a, small_calibration().curve.a);
  EXPECT_THAT(cal.source, HasSubstr("label skew 1"));
}

TEST(Convergence, FittedParametersAreFiniteAndNonNegative) {
  const ConvergenceCalibration& cal = small_calibration();
  for (double v : {cal.curve.a, cal.curve.b, cal.curve.c, cal.beta.value, cal.mu.value, cal.lambda.value, cal.beta.rms,
                   cal.mu.rms, cal.lambda.rms}) {
    EXPECT_TRUE(std::isfinite(v)) << v;
    EXPECT_GE(v, 0.0);
  }
  const std::string yaml = dump_convergence_calibration(cal);
  for (const char* key : {"\na: ", "\nb: ", "\nc: ", "\nbeta: ", "\nmu: ", "\nlambda: ", "\nsource: ", "\nfit:\n"})
    EXPECT_THAT(yaml, HasSubstr(key));
}

// The non-convex proxy (planners/torch/digits_mlp.hpp), through the libtorch plugin.
TEST(MlpProxy, GradientOverAllSamplesIsTheLossDerivative) {
  // The loss is the mean cross-entropy over every sample, so the gradient taken on the sample list
  // 0 … n − 1 is ∇L itself. A central difference (L(θ + h·e_i) − L(θ − h·e_i))/2h differs from
  // ∂L/∂θ_i by h²/6·∂³L/∂θ_i³ — about 10⁻¹¹ at h = 10⁻⁵ for third derivatives of order one — plus the
  // rounding of two losses of ~2.3 divided by 2h, ~10⁻¹¹: 10⁻⁷ is a wide margin. Coordinates from
  // both layers (the first weights, a bias row, the output layer).
  const DigitsData& data = shipped_digits();
  const auto model = torch_plugin().digits_mlp(data, 8, 3);
  const Eigen::VectorXd theta = model->initial_parameters();
  ASSERT_EQ(theta.size(), 65 * 8 + 9 * 10);
  std::vector<std::size_t> all(model->sample_count());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  Eigen::VectorXd gradient;
  model->gradient(theta, all, gradient);
  const double h = 1e-5;
  for (Eigen::Index i : {Eigen::Index{0}, Eigen::Index{100}, Eigen::Index{64 * 8 + 3}, Eigen::Index{65 * 8 + 17}}) {
    Eigen::VectorXd up = theta, down = theta;
    up[i] += h;
    down[i] -= h;
    EXPECT_NEAR(gradient[i], (model->loss(up) - model->loss(down)) / (2 * h), 1e-7) << "coordinate " << i;
  }
}

TEST(MlpProxy, TheSeedFixesTheInitialWeights) {
  // Weights drawn after torch::manual_seed(seed) on one thread: the same seed gives the same bits,
  // another seed other weights; the input bias row (inputs 65 × 8 hidden, the last input) starts at 0.
  const DigitsData& data = shipped_digits();
  const Eigen::VectorXd first = torch_plugin().digits_mlp(data, 8, 3)->initial_parameters();
  EXPECT_EQ(torch_plugin().digits_mlp(data, 8, 3)->initial_parameters(), first);
  EXPECT_NE(torch_plugin().digits_mlp(data, 8, 4)->initial_parameters(), first);
  EXPECT_EQ(first.segment(64 * 8, 8), Eigen::VectorXd::Zero(8));
}

TEST(MlpProxy, CalibrationIsDeterministic) {
  // The whole calibration on the tanh network twice from one seed: byte-identical files.
  ProxyOptions options = small_options(7);
  options.model = [](const DigitsData& data) { return torch_plugin().digits_mlp(data, 8, 7); };
  const std::string first = dump_convergence_calibration(calibrate_convergence(shipped_digits(), options));
  EXPECT_EQ(dump_convergence_calibration(calibrate_convergence(shipped_digits(), options)), first);
  EXPECT_THAT(first, HasSubstr("one-hidden-layer tanh network"));
}

}  // namespace
}  // namespace dnnsim
