// Verdicts of `dnnsim regress`: pass, miss, known gap, gap closed and error (a failed run, a missing
// metric, a zero denominator), absolute and relative tolerances, the exit code, and the CSV and
// Markdown forms of the rows.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/regress/expectations.hpp"
#include "sim/regress/regress_report.hpp"
#include "sim/report/report.hpp"

namespace dnnsim {
namespace {

Expectation expect(double value, double tolerance, Comparison comparison = Comparison::approx, bool relative = false,
                   std::string known_gap = "") {
  Expectation e;
  e.metric = "mean.iteration_time_s";
  e.value = value;
  e.tolerance = tolerance;
  e.comparison = comparison;
  e.relative = relative;
  e.known_gap = std::move(known_gap);
  return e;
}

Verdict verdict_of(const Expectation& e, double measured) { return judge_expectation(e, measured).verdict; }

TEST(RegressVerdict, AbsoluteTolerance) {
  // approx 2 ± 0.1: [1.9, 2.1].
  EXPECT_EQ(verdict_of(expect(2.0, 0.1), 2.09), Verdict::pass);
  EXPECT_EQ(verdict_of(expect(2.0, 0.1), 1.91), Verdict::pass);
  EXPECT_EQ(verdict_of(expect(2.0, 0.1), 2.11), Verdict::miss);
  // at_most 2 + 0.1: anything up to 2.1; at_least 2 − 0.1: anything from 1.9.
  EXPECT_EQ(verdict_of(expect(2.0, 0.1, Comparison::at_most), 0.0), Verdict::pass);
  EXPECT_EQ(verdict_of(expect(2.0, 0.1, Comparison::at_most), 2.11), Verdict::miss);
  EXPECT_EQ(verdict_of(expect(2.0, 0.1, Comparison::at_least), 100.0), Verdict::pass);
  EXPECT_EQ(verdict_of(expect(2.0, 0.1, Comparison::at_least), 1.89), Verdict::miss);
}

TEST(RegressVerdict, RelativeToleranceScalesWithTheValue) {
  // 10% of |−50| = 5: [−55, −45].
  EXPECT_EQ(verdict_of(expect(-50.0, 0.10, Comparison::approx, true), -54.9), Verdict::pass);
  EXPECT_EQ(verdict_of(expect(-50.0, 0.10, Comparison::approx, true), -44.9), Verdict::miss);
  // 5% of 1.6 = 0.08: at_least 1.52.
  EXPECT_EQ(verdict_of(expect(1.6, 0.05, Comparison::at_least, true), 1.53), Verdict::pass);
  EXPECT_EQ(verdict_of(expect(1.6, 0.05, Comparison::at_least, true), 1.51), Verdict::miss);
}

TEST(RegressVerdict, KnownGapNeverFailsAndAClosedGapIsFlagged) {
  const Expectation gap = expect(2.0, 0.1, Comparison::approx, false, "no overlap model");
  const ExpectationVerdict missed = judge_expectation(gap, 3.0);
  EXPECT_EQ(missed.verdict, Verdict::known_gap);
  EXPECT_FALSE(missed.failed());
  ASSERT_TRUE(missed.measured.has_value());
  EXPECT_DOUBLE_EQ(*missed.measured, 3.0);  // the measured value is kept, not hidden
  const ExpectationVerdict closed = judge_expectation(gap, 2.05);
  EXPECT_EQ(closed.verdict, Verdict::gap_closed);
  EXPECT_FALSE(closed.failed());
  EXPECT_TRUE(judge_expectation(expect(2.0, 0.1), 3.0).failed());
  EXPECT_TRUE(judge_expectation(expect(2.0, 0.1), std::nullopt).failed());  // no value: fails
}

TEST(RegressVerdict, CheckExpectationsReadsTheSummary) {
  const auto summary = nlohmann::ordered_json::parse(R"({"mean": {"iteration_time_s": 2.0}})");
  Expectation absent = expect(1.0, 0.0);
  absent.metric = "mean.nothing";
  const auto verdicts = check_expectations({expect(2.0, 0.0), absent}, summary);
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_EQ(verdicts[0].verdict, Verdict::pass);
  EXPECT_EQ(verdicts[1].verdict, Verdict::no_value);
}

// Two runs: "a" with a summary, "b" failed.
struct Fixture {
  RegressPlan plan;
  std::vector<RunOutcome> outcomes;
  Fixture() {
    plan.runs = {RegressRun{"a", "a.yaml", {}}, RegressRun{"b", "b.yaml", {}}};
    outcomes = {RunOutcome{nlohmann::ordered_json::parse(R"({"x": 3.0, "y": 2.0, "zero": 0})"), ""},
                RunOutcome{std::nullopt, "exceeded the time limit of 1 ms"}};
  }
  RegressRow judge(Expectation e, RunMetric numerator, std::optional<RunMetric> denominator = std::nullopt) {
    plan.checks = {RegressCheck{"group", std::move(e), std::move(numerator), std::move(denominator)}};
    return judge_checks(plan, outcomes).at(0);
  }
};

TEST(RegressVerdict, JudgesMetricsAndRatios) {
  Fixture f;
  // a:x / a:y = 3 / 2 = 1.5.
  const RegressRow ratio = f.judge(expect(1.5, 0.0), RunMetric{0, "x"}, RunMetric{0, "y"});
  EXPECT_EQ(ratio.verdict, RegressVerdict::pass);
  EXPECT_DOUBLE_EQ(*ratio.simulated, 1.5);
  const RegressRow miss = f.judge(expect(2.0, 0.1), RunMetric{0, "x"});
  EXPECT_EQ(miss.verdict, RegressVerdict::miss);
  EXPECT_DOUBLE_EQ(*miss.simulated, 3.0);
  const RegressRow gap = f.judge(expect(2.0, 0.1, Comparison::approx, false, "why"), RunMetric{0, "x"});
  EXPECT_EQ(gap.verdict, RegressVerdict::known_gap);
  EXPECT_EQ(gap.note, "why");
  const RegressRow closed = f.judge(expect(3.0, 0.1, Comparison::approx, false, "why"), RunMetric{0, "x"});
  EXPECT_EQ(closed.verdict, RegressVerdict::gap_closed);
}

TEST(RegressVerdict, ErrorsSayWhy) {
  Fixture f;
  const RegressRow failed = f.judge(expect(1.0, 0.0), RunMetric{0, "x"}, RunMetric{1, "x"});
  EXPECT_EQ(failed.verdict, RegressVerdict::error);
  EXPECT_FALSE(failed.simulated.has_value());
  EXPECT_EQ(failed.note, "run b: exceeded the time limit of 1 ms");
  const RegressRow missing = f.judge(expect(1.0, 0.0), RunMetric{0, "mean.nothing"});
  EXPECT_EQ(missing.verdict, RegressVerdict::error);
  EXPECT_EQ(missing.note, "run a: no number at 'mean.nothing' in its summary.json");
  const RegressRow zero = f.judge(expect(1.0, 0.0), RunMetric{0, "x"}, RunMetric{0, "zero"});
  EXPECT_EQ(zero.verdict, RegressVerdict::error);
  EXPECT_EQ(zero.note, "run a: 'zero' is 0, the ratio is undefined");
  // A known gap whose run failed is an error too: there is nothing to compare.
  EXPECT_EQ(f.judge(expect(1.0, 0.0, Comparison::approx, false, "why"), RunMetric{1, "x"}).verdict,
            RegressVerdict::error);
}

TEST(RegressVerdict, ExitCode) {
  const auto rows = [](std::vector<RegressVerdict> verdicts) {
    std::vector<RegressRow> result;
    for (const RegressVerdict v : verdicts) result.push_back(RegressRow{"g", Expectation{}, std::nullopt, v, ""});
    return result;
  };
  EXPECT_EQ(regress_exit_code(rows({RegressVerdict::pass, RegressVerdict::known_gap, RegressVerdict::gap_closed})), 0);
  EXPECT_EQ(regress_exit_code(rows({RegressVerdict::pass, RegressVerdict::miss})), 3);
  EXPECT_EQ(regress_exit_code(rows({RegressVerdict::miss, RegressVerdict::error})), 1);
}

TEST(RegressVerdict, CsvAndMarkdownQuoteTheirCells) {
  Expectation e = expect(1.6, 0.05, Comparison::at_least, true, "a \"quoted\" reason, with | a bar");
  e.metric = "throughput, ratio";
  e.source = "Fan et al., Table 5";
  const std::vector<RegressRow> rows{RegressRow{"DAPPLE", e, 1.25, RegressVerdict::known_gap, e.known_gap}};
  // RFC 4180: fields with a comma or a quote are quoted, quotes doubled; 5% as written; 1.25 exactly.
  EXPECT_EQ(make_regress_csv(rows),
            "scenario,metric,compare,paper_value,tolerance,source,simulated,verdict,note\n"
            "DAPPLE,\"throughput, ratio\",at_least,1.6,5%,\"Fan et al., Table 5\",1.25,known gap,"
            "\"known gap: a \"\"quoted\"\" reason, with | a bar\"\n");
  const std::string md = make_regress_markdown(rows);
  EXPECT_NE(md.find("| DAPPLE | throughput, ratio | ≥ 1.6 − 5% | 1.25 | known gap | Fan et al., Table 5 | "
                    "known gap: a \"quoted\" reason, with \\| a bar |\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("1 check: 1 known gap\n"), std::string::npos) << md;
}

}  // namespace
}  // namespace dnnsim
