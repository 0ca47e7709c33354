// summary.json's declared fields: the pattern rule, the messages for a path no run writes (a scenario's
// expectation, a comparison's operand and a sweep's metric, each located and reported before a run),
// and the walk that finds a written value without its declaration.
//
// Line numbers: every YAML text below starts right after R"( so that its first line is line 1.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/regress/regress_spec.hpp"
#include "sim/report/summary_fields.hpp"
#include "sim/sweep/sweep_spec.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

using namespace testing;

TEST(SummaryFields, APatternMatchesKeysIndexesAndNames) {
  EXPECT_TRUE(field_matches("mean.iteration_time_s", "mean.iteration_time_s"));
  EXPECT_FALSE(field_matches("mean.iteration_time_s", "mean.iteration_time"));
  EXPECT_FALSE(field_matches("mean.iteration_time_s", "mean"));  // a section, not the value
  EXPECT_TRUE(field_matches("devices.*.peak_memory_bytes", "devices.node0/gpu1.peak_memory_bytes"));
  EXPECT_TRUE(field_matches("iteration_time_s.#", "iteration_time_s.12"));
  EXPECT_FALSE(field_matches("iteration_time_s.#", "iteration_time_s.first"));   // "#" is digits
  EXPECT_FALSE(field_matches("devices.*.utilization", "devices..utilization"));  // "*" is a key
}

TEST(SummaryFields, APathNoRunWritesGetsTheClosestField) {
  EXPECT_EQ(summary_path_problem("data_parallel", "mean.iteration_time_s", true), "");
  EXPECT_EQ(summary_path_problem("data_parallel", "mean.iteration_time", true),
            "'mean.iteration_time' is no field of summary.json for a data_parallel workload; did you mean "
            "'mean.iteration_time_s'?");
  // The suggestion keeps the device the path names.
  EXPECT_EQ(summary_path_problem("data_parallel", "devices.node0/gpu1.peak_memory_byte", true),
            "'devices.node0/gpu1.peak_memory_byte' is no field of summary.json for a data_parallel workload; did "
            "you mean 'devices.node0/gpu1.peak_memory_bytes'?");
  // Another kind's section is no field of this one's.
  EXPECT_NE(summary_path_problem("data_parallel", "pipeline.stage_count", true), "");
  EXPECT_EQ(summary_path_problem("pipeline", "pipeline.stage_count", true), "");
  EXPECT_EQ(summary_path_problem("cluster", "cluster.jct_s.p99", true), "");
}

TEST(SummaryFields, ASectionListsItsFieldsAndTextIsNoNumber) {
  EXPECT_EQ(summary_path_problem("cluster", "cluster.jct_s", true),
            "'cluster.jct_s' is a section of summary.json, not a value; its fields: cluster.jct_s.mean, "
            "cluster.jct_s.p50, cluster.jct_s.p95, cluster.jct_s.p99");
  EXPECT_EQ(summary_path_problem("pipeline", "pipeline.planner", true),
            "'pipeline.planner' is text in summary.json, not a number to compare");
  EXPECT_EQ(summary_path_problem("pipeline", "pipeline.planner", false), "");  // a sweep's column takes text
}

TEST(SummaryFields, AValueWrittenWithoutItsDeclarationIsFound) {
  const auto summary = nlohmann::ordered_json::parse(R"({
    "status": "ok", "iteration_time_s": [1.0, 2.0],
    "mean": {"iteration_time_s": 1.5, "throughput_tokens_per_s": null, "speedup": 2.0},
    "devices": {"node0/gpu0": {"gpu": "A100", "utilization": 0.5, "mfu": "high"}},
    "pipeline": {"stage_count": 2}})");
  // speedup: not declared; mfu: declared a number, written as text; pipeline: not a data_parallel field.
  EXPECT_EQ(undeclared_summary_fields("data_parallel", summary),
            (std::vector<std::string>{"mean.speedup (number)", "devices.node0/gpu0.mfu (text)",
                                      "pipeline.stage_count (number)"}));
  EXPECT_EQ(undeclared_summary_fields("pipeline", summary),
            (std::vector<std::string>{"mean.speedup (number)", "devices.node0/gpu0.mfu (text)"}));
}

// Every number of summary.json is a time, a size, a count, a rate or a ratio of those: a negative one
// is a bug in the code that wrote it, which debug builds find in every run.
TEST(SummaryFields, ANegativeNumberIsNoDeclaredField) {
  const auto summary = nlohmann::ordered_json::parse(
      R"({"mean": {"iteration_time_s": 1.5, "idle_s": -0.25}, "devices": {"node0/gpu0": {"idle_s": 0}}})");
  EXPECT_EQ(undeclared_summary_fields("data_parallel", summary),
            (std::vector<std::string>{"mean.idle_s (negative number)"}));
  EXPECT_TRUE(never_negative_field("data_parallel", "mean.idle_s"));
  EXPECT_FALSE(never_negative_field("pipeline", "pipeline.planner"));  // text
}

// Relations that hold by construction, which debug builds check in every summary they write. The first
// summary is consistent: 2 iterations of 1 + 3 s, makespan 4 s, a mean iteration of 2 s made of 1.5 s of
// compute, 0.25 s of exposed communication and 0.25 s idle; a job's iterations add up to its makespan.
TEST(SummaryFields, ASummaryThatContradictsItselfIsFound) {
  auto summary = nlohmann::ordered_json::parse(R"({
    "iterations": 2, "iteration_time_s": [1.0, 3.0], "makespan_s": 4.0,
    "devices": {"node0/gpu0": {"utilization": 0.75, "compute_s": 1.5, "exposed_communication_s": 0.25,
                               "idle_s": 0.25}},
    "jobs": [{"iteration_time_s": [2.0, 2.5], "makespan_s": 4.5}]})");
  EXPECT_TRUE(summary_contradictions(summary).empty());
  summary["iteration_time_s"] = {0.0, 0.0};  // a kind without tasks wrote this beside a makespan of 4 s
  summary["devices"]["node0/gpu0"]["idle_s"] = 0.5;
  summary["devices"]["node0/gpu0"]["utilization"] = 1.25;
  summary["jobs"][0]["makespan_s"] = 5.0;
  EXPECT_EQ(
      summary_contradictions(summary),
      (std::vector<std::string>{
          "iteration_time_s sums to 0 s, makespan_s is 4 s", "jobs.0.iteration_time_s sums to 4.5 s, makespan_s is 5 s",
          "devices.node0/gpu0: compute_s + exposed_communication_s + idle_s = 2.25 s, the mean iteration 2 s",
          "devices.node0/gpu0.utilization is 1.25"}));
}

// An expected value below zero for such a field is a mistake, located at the value: `at_most` could
// never pass and `at_least` always would.
TEST(SummaryFields, AnExpectedValueBelowZeroIsAMistake) {
  const std::vector<Diagnostic> errors = errors_of(kTwoGpuBase + R"(expect:
  - {metric: mean.iteration_time_s, value: -1, compare: at_most}
)");
  expect_errors(errors, {{14, 44, "expected value -1 for 'mean.iteration_time_s', which is never negative"}});
  write_file("base.yaml", kTwoGpuBase);
  const std::string path = write_file("cmp.yaml", R"(comparison: fields
runs:
  a: {scenario: base.yaml}
expect:
  - {ratio: ["a:mean.compute_s", "a:mean.iteration_time_s"], value: -0.5, tolerance: 1}
)");
  expect_errors(
      diagnostics_thrown_by([&] { (void)load_regress_plan({path}); }),
      {{5, 69, "expected value -0.5 for 'a:mean.compute_s / a:mean.iteration_time_s', which is never negative"}});
}

TEST(SummaryFields, AScenarioExpectationIsCheckedWhenRead) {
  const std::vector<Diagnostic> errors = errors_of(kTwoGpuBase + R"(expect:
  - {metric: mean.iteration_time_s, value: 1}
  - {metric: mean.iteration_time, value: 1}
)");
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 15, 14, "did you mean 'mean.iteration_time_s'?");
}

TEST(SummaryFields, AComparisonOperandIsCheckedAgainstItsRunsKind) {
  write_file("base.yaml", kTwoGpuBase);
  const std::string path = write_file("cmp.yaml", R"(comparison: fields
runs:
  a: {scenario: base.yaml}
expect:
  - {metric: "a:mean.iteration_time_s", value: 1}
  - {metric: "a:pipeline.stage_count", value: 1}
)");
  const std::vector<Diagnostic> errors = diagnostics_thrown_by([&] { (void)load_regress_plan({path}); });
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 6, 14,
               "run 'a': 'pipeline.stage_count' is no field of summary.json for a data_parallel workload");
}

TEST(SummaryFields, ASweepMetricIsCheckedAgainstThePointsKind) {
  write_file("base.yaml", kTwoGpuBase);
  const std::string path = write_file("sweep.yaml", R"(name: fields
base: base.yaml
metrics: [status, mean.utilisation]
axes:
  - grid: {workload.global_batch: [4, 8]}
)");
  const std::vector<Diagnostic> errors = diagnostics_thrown_by([&] { (void)load_sweep(path); });
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  expect_error(errors[0], 3, 19, "did you mean 'mean.utilization'?");
}

}  // namespace
}  // namespace dnnsim
