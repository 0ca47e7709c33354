// Inputs of `dnnsim regress`: comparison files (runs, operands, tolerances, every kind of error with
// its line and column), which YAML files count, and one run per (scenario, overrides).
//
// Line numbers: every YAML text below starts right after R"( so that its first line is line 1.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sim/regress/regress_spec.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

using namespace testing;

// One node of 2 GPUs, one layer, one expectation.
const std::string kScenario = testing::kTwoGpuBase + R"(expect:
  - {metric: simulation.unfinished_tasks, value: 0}
)";

// The scenario without its expect block.
std::string scenario_without_expectations() { return kScenario.substr(0, kScenario.find("expect:")); }

std::string dir() { return testing::test_dir().string(); }

std::vector<Diagnostic> regress_errors(const std::string& comparison) {
  write_file("base.yaml", kScenario);
  const std::string path = write_file("cmp.yaml", comparison);
  return diagnostics_thrown_by([&] { (void)load_regress_plan({path}); });
}

TEST(RegressSpec, ReadsAComparisonFile) {
  write_file("base.yaml", kScenario);
  const std::string path = write_file("cmp.yaml", R"(comparison: "Table 5"
runs:
  small: {scenario: base.yaml, set: ["workload.global_batch=4"]}
  large: {scenario: base.yaml, set: ["workload.global_batch=16", "run.iterations=2"]}
expect:
  - name: "throughput large / small"
    ratio: [large:mean.throughput_samples_per_s, small:mean.throughput_samples_per_s]
    value: 1.6
    tolerance: "5%"
    compare: at_least
    source: "Fan et al., Table 5"
    known_gap: "no pipeline here"
  - {metric: "small:mean.iteration_time_s", value: 0.5, tolerance: 0.1}
)");
  const RegressPlan plan = load_regress_plan({path});
  ASSERT_EQ(plan.runs.size(), 2u);
  EXPECT_EQ(plan.runs[0].id, "cmp.small");
  EXPECT_EQ(plan.runs[0].scenario, (testing::test_dir() / "base.yaml").string());  // relative to the file
  EXPECT_EQ(plan.runs[0].overrides, std::vector<std::string>{"workload.global_batch=4"});
  EXPECT_EQ(plan.runs[1].id, "cmp.large");
  EXPECT_EQ(plan.runs[1].overrides, (std::vector<std::string>{"workload.global_batch=16", "run.iterations=2"}));

  ASSERT_EQ(plan.checks.size(), 2u);
  const RegressCheck& ratio = plan.checks[0];
  EXPECT_EQ(ratio.group, "Table 5");
  EXPECT_EQ(ratio.expectation.metric, "throughput large / small");
  EXPECT_EQ(ratio.numerator.run, 1u);
  EXPECT_EQ(ratio.numerator.path, "mean.throughput_samples_per_s");
  ASSERT_TRUE(ratio.denominator.has_value());
  EXPECT_EQ(ratio.denominator->run, 0u);
  EXPECT_DOUBLE_EQ(ratio.expectation.value, 1.6);
  EXPECT_DOUBLE_EQ(ratio.expectation.tolerance, 0.05);  // "5%" → 5 / 100, relative
  EXPECT_TRUE(ratio.expectation.relative);
  EXPECT_EQ(ratio.expectation.comparison, Comparison::at_least);
  EXPECT_EQ(ratio.expectation.source, "Fan et al., Table 5");
  EXPECT_EQ(ratio.expectation.known_gap, "no pipeline here");
  EXPECT_EQ(ratio.expectation.where.line, 6);

  const RegressCheck& metric = plan.checks[1];
  EXPECT_EQ(metric.expectation.metric, "small:mean.iteration_time_s");  // no name: the operand
  EXPECT_EQ(metric.numerator.run, 0u);
  EXPECT_FALSE(metric.denominator.has_value());
  EXPECT_DOUBLE_EQ(metric.expectation.tolerance, 0.1);
  EXPECT_FALSE(metric.expectation.relative);
  EXPECT_EQ(metric.expectation.comparison, Comparison::approx);
}

TEST(RegressSpec, ReportsEveryProblemAtItsPlace) {
  expect_errors(regress_errors(R"(comparison: "broken"
runs:
  base: {scenario: base.yaml, set: ["run.iterations=0"]}
  spare: {scenario: base.yaml, sett: []}
  gone: {scenario: nowhere.yaml}
expect:
  - {metric: "bsae:mean.iteration_time_s", value: 1}
  - {ratio: [base:mean.iteration_time_s], value: 1}
  - {metric: "base:mean.iteration_time_s", ratio: [base:x, base:y], value: 1}
  - {metric: "mean.iteration_time_s", value: 1}
  - {metric: "gone:a", value: 1, tolerence: 1}
)"),
                {{3, 37, "run.iterations=0: expected an integer in [1, 1000000], got 0"},
                 {4, 32, "unknown key 'sett' in run 'spare'; did you mean 'set'?"},
                 {5, 20, "cannot open the scenario"},
                 {7, 14, "unknown run 'bsae'; did you mean 'base'?"},
                 {8, 13, "expected a ratio as two operands"},
                 {9, 5, "give either 'metric: RUN:PATH' or 'ratio: [RUN:PATH, RUN:PATH]'"},
                 {10, 14, "expected RUN:PATH"},
                 // Line 11: `gone` is a known run (its scenario is the problem, reported at line 5). `spare` is used
                 // by no expectation, but that is not reported while an expectation is broken: it may be its user.
                 {11, 34, "unknown key 'tolerence' in a comparison expectation; did you mean 'tolerance'?"}});
}

TEST(RegressSpec, AnUnusedRunIsReported) {
  expect_errors(regress_errors(R"(comparison: "c"
runs:
  base: {scenario: base.yaml}
  spare: {scenario: base.yaml}
expect:
  - {metric: "base:makespan_s", value: 1}
)"),
                {{4, 3, "run 'spare' is not used by any expectation"}});
}

// A misspelt key is one error, its suggestion naming the key it misspells (not also "missing key
// 'value'" or "give either 'metric' or 'ratio'"); a misspelt run name is one error at its first use,
// however many expectations use it.
TEST(RegressSpec, AMisspeltKeyOrRunIsOneError) {
  expect_errors(regress_errors(R"(comparison: "c"
runs:
  base: {scenario: base.yaml}
  other: {scenario: base.yaml}
expect:
  - {metric: "base:makespan_s", valeu: 1}
  - {metrc: "base:makespan_s", value: 1}
  - {ratoi: ["base:makespan_s", "other:makespan_s"], value: 1}
  - {metric: "bsae:makespan_s", value: 1}
  - {ratio: ["bsae:makespan_s", "other:makespan_s"], value: 1}
)"),
                {{6, 33, "unknown key 'valeu' in a comparison expectation; did you mean 'value'?"},
                 {7, 6, "unknown key 'metrc' in a comparison expectation; did you mean 'metric'?"},
                 {8, 6, "unknown key 'ratoi' in a comparison expectation; did you mean 'ratio'?"},
                 {9, 14, "unknown run 'bsae'; did you mean 'base'?"}});
}

TEST(RegressSpec, MissingValueIsReported) {
  expect_errors(regress_errors(R"(comparison: "c"
runs:
  base: {scenario: base.yaml}
expect:
  - {metric: "base:makespan_s"}
)"),
                {{5, 5, "missing key 'value' in a comparison expectation"}});
}

TEST(RegressSpec, AScenarioProblemIsReportedAtTheRunThatAsksForIt) {
  write_file("bad.yaml", scenario_without_expectations() + "run: {iterations: 0}\n");
  const auto errors = regress_errors(R"(comparison: "c"
runs:
  base: {scenario: bad.yaml}
expect:
  - {metric: "base:makespan_s", value: 1}
)");
  // At `scenario:` of the comparison file, quoting the scenario's own place (line 13 of bad.yaml).
  ASSERT_NO_FATAL_FAILURE(expect_errors(errors, {{3, 20, "run 'base': "}}));
  EXPECT_NE(errors[0].message.find("bad.yaml:13:"), std::string::npos) << errors[0].message;
}

// Runs that share a scenario meet its mistakes alike (a typo in the convergence file the shipped ADSP
// comparison's runs read was four errors; an `over:` run met it once per member): one error, naming
// every run that met it, at the first one's `scenario:`; an override's problem is reported at the
// override, once for the runs that share it through a YAML alias (the ADSP EC2 comparisons' network
// conditions: three errors at one place).
TEST(RegressSpec, AProblemRunsShareIsOneErrorNamingThem) {
  write_file("bad.yaml", scenario_without_expectations() + "run: {iterations: 0}\n");
  const auto errors = regress_errors(R"(comparison: "c"
runs:
  a: {scenario: bad.yaml}
  b: {scenario: bad.yaml, set: &typo [run.iteratons=2]}
  c: {scenario: bad.yaml, set: *typo, over: {workload.global_batch: [4, 8]}}
expect:
  - {ratio: ["a:makespan_s", "b:makespan_s"], value: 1}
  - {metric: "c:makespan_s", value: 1}
)");
  ASSERT_NO_FATAL_FAILURE(
      expect_errors(errors, {{3, 17, "runs 'a', 'b', 'c': "}, {4, 39, "run.iteratons=2: unknown key 'iteratons'"}}));
  EXPECT_NE(errors[0].message.find("bad.yaml:13:"), std::string::npos) << errors[0].message;
}

TEST(RegressSpec, TopLevelKeysAreChecked) {
  expect_errors(regress_errors(R"(comparison: "c"
runs:
  base: {scenario: base.yaml}
expects:
  - {metric: "base:makespan_s", value: 1}
)"),
                {{4, 1, "unknown key 'expects' in the comparison file; did you mean 'expect'?"}});
  expect_errors(regress_errors(R"(comparison: "c"
runs:
  base: {scenario: base.yaml}
)"),
                {{1, 1, "missing key 'expect' in the comparison file"}});
}

TEST(RegressSpec, RunsOnceWhatIsAskedForTwice) {
  // base.yaml has expectations of its own; the comparison asks for it as it is (run `plain`, the same
  // run) and with an override (another run). A second file with the stem "base" gets id "base-2".
  write_file("base.yaml", kScenario);
  std::filesystem::create_directories(testing::test_dir() / "sub");
  write_file("sub/base.yaml", kScenario);
  write_file("cmp.yaml", R"(comparison: "c"
runs:
  plain: {scenario: ./base.yaml}
  more: {scenario: base.yaml, set: ["workload.global_batch=16"]}
expect:
  - {ratio: ["more:makespan_s", "plain:makespan_s"], value: 2}
)");
  const RegressPlan plan = load_regress_plan({dir()});
  // Sorted paths: base.yaml, cmp.yaml, sub/base.yaml.
  ASSERT_EQ(plan.runs.size(), 3u);
  EXPECT_EQ(plan.runs[0].id, "base");
  EXPECT_EQ(plan.runs[1].id, "cmp.more");
  EXPECT_EQ(plan.runs[2].id, "base-2");
  ASSERT_EQ(plan.checks.size(), 3u);
  EXPECT_EQ(plan.checks[0].group, "base");
  EXPECT_EQ(plan.checks[0].numerator.run, 0u);
  EXPECT_EQ(plan.checks[1].numerator.run, 1u);
  EXPECT_EQ(plan.checks[1].denominator->run, 0u);  // `plain` is base.yaml's own run
  EXPECT_EQ(plan.checks[2].numerator.run, 2u);
}

// `over:` is one run per combination (the last key fastest), its metric the mean over them; `spread`
// names the key whose values group the members.
TEST(RegressSpec, OverMakesOneRunPerCombination) {
  write_file("base.yaml", kScenario);
  const std::string path = write_file("cmp.yaml", R"(comparison: "c"
runs:
  many: {scenario: base.yaml, set: ["run.iterations=2"], over: {workload.global_batch: [4, 8], run.seed: [1, 2]}}
  one: {scenario: base.yaml}
expect:
  - {ratio: [many:mean.iteration_time_s, one:mean.iteration_time_s], value: 1, spread: workload.global_batch}
)");
  const RegressPlan plan = load_regress_plan({path});
  ASSERT_EQ(plan.runs.size(), 5u);
  EXPECT_EQ(plan.runs[0].id, "cmp.many.1");
  EXPECT_EQ(plan.runs[0].overrides,
            (std::vector<std::string>{"run.iterations=2", "workload.global_batch=4", "run.seed=1"}));
  EXPECT_EQ(plan.runs[1].overrides.back(), "run.seed=2");
  EXPECT_EQ(plan.runs[2].overrides[1], "workload.global_batch=8");
  const RunMetric& many = plan.checks.at(0).numerator;
  EXPECT_EQ(many.members, (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(many.groups, (std::vector<std::string>{"4", "4", "8", "8"}));
  EXPECT_TRUE(plan.checks[0].denominator->members.empty());
}

TEST(RegressSpec, OverAndSpreadProblemsAreLocated) {
  expect_errors(regress_errors(R"(comparison: "c"
runs:
  a: {scenario: base.yaml, over: {workload.global_batch: []}}
  b: {scenario: base.yaml, over: {run.seed: [1]}}
expect:
  - {metric: "a:mean.iteration_time_s", value: 1}
  - {metric: "b:mean.iteration_time_s", value: 1, spread: run.sed}
)"),
                {{3, 58, "expected at least one value"}, {7, 59, "not a key of run 'b''s `over:`"}});
}

// A mistake in an `over:` key is met by every member alike: one error at the key (a misspelt
// workload.seed in the shipped MARL comparisons was five errors, one per seed). A value only some members
// refuse is reported at each such value. A misspelt `over` or `over:` key is its own error alone, not
// also "run 'b' has no `over:` to spread over" or "'workload.global_batch' is not a key of run 'a''s
// `over:`".
TEST(RegressSpec, AnOverKeysMistakeIsOneErrorAtTheKey) {
  expect_errors(
      regress_errors(R"(comparison: "c"
runs:
  a: {scenario: base.yaml, over: {workload.global_batc: [4, 8, 16], run.iterations: [1, 0, -1]}}
  b: {scenario: base.yaml, ove: {run.seed: [1, 2]}}
expect:
  - {metric: "a:mean.iteration_time_s", value: 1, spread: workload.global_batch}
  - {metric: "b:mean.iteration_time_s", value: 1, spread: run.seed}
)"),
      {{3, 35, "workload.global_batc: unknown key 'global_batc' in the workload; did you mean 'global_batch'?"},
       {3, 89, "run.iterations=0: "},
       {3, 92, "run.iterations=-1: "},
       {4, 28, "unknown key 'ove' in run 'b'; did you mean 'over'?"}});
}

TEST(RegressSpec, SkipsSweepsAndScenariosWithoutExpectations) {
  write_file("a.yaml", scenario_without_expectations());
  write_file("b.yaml", "name: s\nbase: a.yaml\naxes: []\n");
  write_file("c.yaml", kScenario);
  write_file("notes.txt", "not YAML: ignored");
  const RegressPlan plan = load_regress_plan({dir()});
  EXPECT_EQ(plan.runs.size(), 1u);
  ASSERT_EQ(plan.skipped.size(), 2u);
  EXPECT_EQ(plan.skipped[0], (testing::test_dir() / "a.yaml").string() + ": no expectations");
  EXPECT_EQ(plan.skipped[1], (testing::test_dir() / "b.yaml").string() + ": a sweep file");
}

// A directory walk passes over hidden entries (a CI workflow, a tool's scratch copy); named, one is read.
TEST(RegressSpec, AWalkPassesOverHiddenFilesAndDirectories) {
  std::filesystem::create_directories(testing::test_dir() / ".github" / "workflows");
  write_file(".github/workflows/ci.yml", "on: push\njobs: {}\n");
  const std::string hidden = write_file(".scratch.yaml", kScenario);
  write_file("c.yaml", kScenario);
  const RegressPlan walked = load_regress_plan({dir()});
  ASSERT_EQ(walked.runs.size(), 1u);
  EXPECT_EQ(walked.runs[0].scenario, (testing::test_dir() / "c.yaml").string());
  EXPECT_TRUE(walked.skipped.empty());
  const RegressPlan named = load_regress_plan({hidden});
  ASSERT_EQ(named.runs.size(), 1u);
  EXPECT_EQ(named.runs[0].scenario, hidden);
}

TEST(RegressSpec, NothingToCheckIsAnError) {
  write_file("a.yaml", scenario_without_expectations());
  const auto errors = diagnostics_thrown_by([&] { (void)load_regress_plan({dir()}); });
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_NE(errors[0].message.find("found no scenario with expectations and no comparison file (1 YAML file skipped)"),
            std::string::npos)
      << errors[0].message;
}

TEST(RegressSpec, AMissingInputIsAnError) {
  const auto errors = diagnostics_thrown_by([&] { (void)load_regress_plan({dir() + "/nowhere"}); });
  ASSERT_GE(errors.size(), 1u);
  EXPECT_EQ(errors[0].message, "no such file or directory");
}

TEST(RegressSpec, AnInvalidScenarioWithExpectationsIsReported) {
  write_file("bad.yaml", kScenario + "run: {iterations: 0}\n");
  const auto errors = diagnostics_thrown_by([&] { (void)load_regress_plan({dir()}); });
  expect_errors(errors, {{15, 19, "expected an integer in [1, 1000000], got 0"}});
}

}  // namespace
}  // namespace dnnsim
