// Reading statistical-efficiency files (models/sync/statistical_efficiency.hpp): the shipped fits
// load with the values `dnnsim calibrate convergence` wrote, and bad files are located.
#include "models/sync/statistical_efficiency.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "dnnsim/source_paths.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/temp_files.hpp"

namespace dnnsim {
namespace {

TEST(StatisticalEfficiencyFile, ShippedFitsLoad) {
  // data/convergence/digits-softmax.yaml as written (docs/calibration.md, "The shipped parameters").
  const StatisticalEfficiency iid = load_statistical_efficiency(shipped_statistical_efficiency_path());
  EXPECT_DOUBLE_EQ(iid.a, 0.0235262);
  EXPECT_DOUBLE_EQ(iid.b, 0.450422);
  EXPECT_DOUBLE_EQ(iid.c, 0.0795965);
  EXPECT_DOUBLE_EQ(iid.mu, 0.0);
  EXPECT_NE(iid.source.find("UCI optical digits"), std::string::npos);
  // L(0) = 1/b + c = 1/0.450422 + 0.0795965 = 2.2997, where the proxy starts at ln 10 = 2.3026: the
  // curve, fitted over 3,000 steps, is within its rms residual (0.012) of the first point.
  EXPECT_NEAR(iid.loss(0), 2.2997, 1e-4);
  EXPECT_NEAR(iid.loss(0), std::log(10.0), 0.012);
  const StatisticalEfficiency skewed =
      load_statistical_efficiency(DNNSIM_SOURCE_DIR "/data/convergence/digits-softmax-noniid.yaml");
  EXPECT_EQ(skewed.a, iid.a);  // the sequential run does not use shards
  EXPECT_GT(skewed.mu, 0.05);
}

TEST(StatisticalEfficiencyFile, ShippedNonConvexFitsLoad) {
  // data/convergence/digits-mlp.yaml and digits-mlp-noniid.yaml (docs/calibration.md, "The
  // non-convex proxy"): one sequential run for both, so the same curve; the i.i.d. fit's local steps
  // are free (measured φ_local(2…16) = 0.996…1.000, so μ is 0 to the fit's resolution), the
  // label-skewed one's are not (φ_local(16) = 0.47).
  const StatisticalEfficiency iid = load_statistical_efficiency(DNNSIM_SOURCE_DIR "/data/convergence/digits-mlp.yaml");
  const StatisticalEfficiency skewed =
      load_statistical_efficiency(DNNSIM_SOURCE_DIR "/data/convergence/digits-mlp-noniid.yaml");
  EXPECT_NE(iid.source.find("tanh network"), std::string::npos);
  EXPECT_NE(iid.source.find("12000 sequential steps"), std::string::npos);
  EXPECT_EQ(skewed.a, iid.a);
  EXPECT_EQ(skewed.b, iid.b);
  EXPECT_LT(iid.mu, 1e-3);
  EXPECT_GT(skewed.mu, 0.05);
  // The scenarios' target 0.0222 (adsp-mlp.compare.yaml: the lowest level, 0.02217, rounded up) lies
  // on the curve: c = 0.0044 < 0.0222 < L(0) = 1/b + c = 1/0.4328 + 0.0044 = 2.315, at
  // K = (1/(0.0222 − 0.0044028) − 0.43276)/0.0086202 ≈ 6,468 sequential steps (the run measured 6,000).
  EXPECT_NEAR(iid.progress_for_loss(0.0222), (1.0 / (0.0222 - iid.c) - iid.b) / iid.a, 1e-9);
  EXPECT_NEAR(iid.progress_for_loss(0.0222), 6468.0, 2.0);
}

TEST(StatisticalEfficiencyFile, BadFilesAreLocated) {
  const std::string path = testing::write_file("bad.yaml", "a: 0\nb: 1\nc: -1\nbeta: 0\nlambda: 0\nsigma: 2\n");
  const std::vector<Diagnostic> errors =
      testing::diagnostics_thrown_by([&] { (void)load_statistical_efficiency(path); });
  testing::expect_errors(
      errors, {{1, 1, "missing key 'mu'"}, {1, 4, "a must be positive"}, {3, 4, "-1"}, {6, 1, "unknown key 'sigma'"}});
}

// A value the reader refused is one error: not judged again as "must be positive" (a typo'd `a` in the
// shipped digits-mlp.yaml gave both).
TEST(StatisticalEfficiencyFile, ARefusedValueIsOneError) {
  const std::string path = testing::write_file(
      "typo.yaml", "a: 0.00862022x\nb: \"\"\nc: 0.00440278\nbeta: 0.0354038\nmu: 0.000157755\nlambda: 0.00590525\n");
  const std::vector<Diagnostic> errors =
      testing::diagnostics_thrown_by([&] { (void)load_statistical_efficiency(path); });
  testing::expect_errors(errors, {{1, 4, "expected a number, got \"0.00862022x\""}, {2, 4, "expected a number"}});
}

// One mistake in a key is one error, at the key, naming the key meant; that key is not also missing.
// "m" is as close to the given "a" as to the absent "mu" (one edit each): the key the file lacks, and
// the one "m" begins, is what was meant. A key whose name was deleted (": 0") stands for the one absent.
TEST(StatisticalEfficiencyFile, AMistypedOrDeletedKeyIsOneError) {
  const auto errors_with_line5 = [](const std::string& line5) {
    const std::string path =
        testing::write_file("keys.yaml", "a: 0.02\nb: 0.45\nc: 0.08\nbeta: 0.03\n" + line5 + "\nlambda: 0.02\n");
    return testing::diagnostics_thrown_by([&] { (void)load_statistical_efficiency(path); });
  };
  testing::expect_errors(errors_with_line5("m: 0"),
                         {{5, 1, "unknown key 'm' in a statistical-efficiency file; did you mean 'mu'?"}});
  testing::expect_errors(
      errors_with_line5(": 0"),
      {{5, 1, "empty key in a statistical-efficiency file (nothing before the colon); did you mean 'mu'?"}});
}

}  // namespace
}  // namespace dnnsim
