// The verdicts of `dnnsim regress` and their three forms (docs/regress.md): a table on stdout,
// OUT/regress.csv (RFC 4180) and OUT/regress.md. Same rows in the same order in all three; the files
// hold nothing that depends on wall time or on the machine, so the same results give the same bytes.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/regress/regress_spec.hpp"

namespace dnnsim {

enum class RegressVerdict {
  pass,
  miss,        // fails the regression (exit 3)
  known_gap,   // missed, with the reason the expectation gives: reported, does not fail
  gap_closed,  // passes although marked as a known gap: someone should update the note
  error,       // no value to compare: the run failed, or the metric is not in its summary (exit 1)
};

struct RegressRow {
  std::string group;  // scenario name or comparison title
  Expectation expectation;
  std::optional<double> simulated;
  RegressVerdict verdict = RegressVerdict::error;
  std::string note;  // known gap / gap closed: the known_gap text; error: what went wrong
  // A numerator over several runs (`over:`): the spread of its groups' means (over the denominator
  // when a ratio) — mean, 95% Student-t interval, min and max; empty otherwise.
  std::string spread;
};

// What came of one run: its summary, or why there is none.
struct RunOutcome {
  std::optional<nlohmann::ordered_json> summary;
  std::string error;  // when there is no summary: "exceeded the time limit of 10 min", "interrupted", …
};

// One row per check, in plan order: the simulated value (a metric, or the ratio of two) judged
// against the expectation (judge_expectation in sim/report/report.hpp). `outcomes[i]` is the outcome of
// plan.runs[i].
[[nodiscard]] std::vector<RegressRow> judge_checks(const RegressPlan& plan, const std::vector<RunOutcome>& outcomes);

[[nodiscard]] std::string_view regress_verdict_name(RegressVerdict verdict);  // "pass", "MISS", "known gap", …

// Exit code of `dnnsim regress` for these rows: 1 if any error (the regression could not be checked
// whole), else 3 if any miss, else 0.
[[nodiscard]] int regress_exit_code(const std::vector<RegressRow>& rows);

// The table on stdout: scenario, metric, paper (expected value ± tolerance, source), simulated,
// verdict; a note line under each row that has one; a count of each verdict.
[[nodiscard]] std::string format_regress_table(const std::vector<RegressRow>& rows);
// Columns: scenario, metric, compare, paper_value, tolerance, source, simulated, verdict, note.
[[nodiscard]] std::string make_regress_csv(const std::vector<RegressRow>& rows);
// A Markdown table with the same rows, sources and notes, and the count of each verdict.
[[nodiscard]] std::string make_regress_markdown(const std::vector<RegressRow>& rows);

}  // namespace dnnsim
