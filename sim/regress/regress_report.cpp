// Verdicts of `dnnsim regress` and their table, CSV and Markdown forms (see regress_report.hpp).
#include "sim/regress/regress_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>

#include "models/common/units.hpp"
#include "sim/regress/expectations.hpp"
#include "sim/report/report.hpp"
#include "sim/sweep/sweep_runner.hpp"

namespace dnnsim {
namespace {

constexpr std::array kVerdicts{RegressVerdict::pass, RegressVerdict::miss, RegressVerdict::known_gap,
                               RegressVerdict::gap_closed, RegressVerdict::error};

RegressVerdict from_verdict(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass:
      return RegressVerdict::pass;
    case Verdict::miss:
      return RegressVerdict::miss;
    case Verdict::known_gap:
      return RegressVerdict::known_gap;
    case Verdict::gap_closed:
      return RegressVerdict::gap_closed;
    case Verdict::no_value:
      return RegressVerdict::error;
  }
  return RegressVerdict::error;
}

// The value of one run's metric, or why there is none.
std::optional<double> run_value(const RegressPlan& plan, const std::vector<RunOutcome>& outcomes, std::size_t run,
                                const std::string& path, std::string& why) {
  const RunOutcome& outcome = outcomes.at(run);
  const std::string& id = plan.runs[run].id;
  if (!outcome.summary) {
    why = fmt::format("run {}: {}", id, outcome.error);
    return std::nullopt;
  }
  const std::optional<double> value = summary_metric(*outcome.summary, path);
  if (!value) why = fmt::format("run {}: no number at '{}' in its summary.json", id, path);
  return value;
}

// A metric's value: its run's, or the mean over the members of a run with `over:` (each member's
// value in `values`); nothing when any member has none.
std::optional<double> metric_value(const RegressPlan& plan, const std::vector<RunOutcome>& outcomes,
                                   const RunMetric& metric, std::string& why, std::vector<double>* values = nullptr) {
  if (metric.members.empty()) return run_value(plan, outcomes, metric.run, metric.path, why);
  double sum = 0.0;
  for (const std::size_t member : metric.members) {
    const std::optional<double> value = run_value(plan, outcomes, member, metric.path, why);
    if (!value) return std::nullopt;
    sum += *value;
    if (values) values->push_back(*value);
  }
  return sum / static_cast<double>(metric.members.size());
}

// The groups' means of the members' values (groups in order of first appearance), each divided by
// `scale`: their mean, 95% Student-t interval, min and max. "over 5 groups (by KEY): …".
std::string describe_spread(const RunMetric& metric, const std::vector<double>& values, double scale,
                            const std::string& key) {
  std::vector<std::string> names;
  std::vector<std::pair<double, int>> sums;
  for (std::size_t m = 0; m < values.size(); ++m) {
    const auto at = std::find(names.begin(), names.end(), metric.groups[m]);
    if (at == names.end()) {
      names.push_back(metric.groups[m]);
      sums.emplace_back(values[m], 1);
    } else {
      auto& [sum, count] = sums[static_cast<std::size_t>(at - names.begin())];
      sum += values[m];
      ++count;
    }
  }
  std::vector<double> samples;
  for (const auto& [sum, count] : sums) samples.push_back(sum / count / scale);
  const double n = static_cast<double>(samples.size());
  double mean = 0.0;
  for (const double x : samples) mean += x / n;
  double variance = 0.0;
  for (const double x : samples) variance += (x - mean) * (x - mean) / std::max(1.0, n - 1.0);
  std::string text =
      fmt::format("spread over {} {}: mean {:.4g}", samples.size(), key.empty() ? "runs" : "values of " + key, mean);
  if (samples.size() > 1) {
    const double half = boost::math::quantile(boost::math::students_t(n - 1.0), 0.975) * std::sqrt(variance / n);
    text += fmt::format(", 95% CI [{:.4g}, {:.4g}]", mean - half, mean + half);
  }
  return text + fmt::format(", min {:.4g}, max {:.4g}", *std::min_element(samples.begin(), samples.end()),
                            *std::max_element(samples.begin(), samples.end()));
}

// Counts of each verdict that occurs: "4 checks: 2 pass, 1 MISS, 1 known gap".
std::string verdict_counts(const std::vector<RegressRow>& rows) {
  std::vector<std::string> parts;
  for (const RegressVerdict verdict : kVerdicts) {
    const auto count =
        std::count_if(rows.begin(), rows.end(), [&](const RegressRow& r) { return r.verdict == verdict; });
    if (count > 0) parts.push_back(fmt::format("{} {}", count, regress_verdict_name(verdict)));
  }
  return fmt::format("{}: {}", counted(rows.size(), "check"), fmt::join(parts, ", "));
}

std::string paper_cell(const Expectation& e) {
  return e.source.empty() ? describe_expected(e) : fmt::format("{} ({})", describe_expected(e), e.source);
}

// Six significant digits, except for a value outside the tolerance: every digit there (the shortest
// text that reads back as the same double), so that a miss never looks equal to the paper's number
// ("33" for 33.000000004 against 33 ± 1e-9).
std::string simulated_cell(const RegressRow& row) {
  if (!row.simulated) return "—";
  const bool outside = row.verdict == RegressVerdict::miss || row.verdict == RegressVerdict::known_gap;
  return outside ? fmt::format("{}", *row.simulated) : fmt::format("{:.6g}", *row.simulated);
}

std::string verdict_note(const RegressRow& row) {
  switch (row.verdict) {
    case RegressVerdict::known_gap:
      return "known gap: " + row.note;
    case RegressVerdict::gap_closed:
      return "within the tolerance although marked as a known gap (\"" + row.note + "\"): update the note";
    case RegressVerdict::error:
      return row.note;
    case RegressVerdict::pass:
    case RegressVerdict::miss:
      return "";
  }
  return "";
}

// The verdict's note, then the spread of a metric over several runs.
std::string note_cell(const RegressRow& row) {
  const std::string note = verdict_note(row);
  return note.empty() || row.spread.empty() ? note + row.spread : note + "; " + row.spread;
}

// Width on a terminal: UTF-8 code points ("≈", "±", "—" count one each).
std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string pad(const std::string& text, std::size_t width) {
  return text + std::string(width - std::min(width, display_width(text)), ' ');
}

std::string markdown_cell(std::string text) {
  std::string escaped;
  for (const char c : text) {
    if (c == '|') escaped += '\\';
    escaped += c == '\n' ? ' ' : c;
  }
  return escaped;
}

}  // namespace

std::vector<RegressRow> judge_checks(const RegressPlan& plan, const std::vector<RunOutcome>& outcomes) {
  std::vector<RegressRow> rows;
  for (const RegressCheck& check : plan.checks) {
    RegressRow row{check.group, check.expectation, std::nullopt, RegressVerdict::error, "", ""};
    std::string why;
    std::vector<double> members;
    std::optional<double> simulated = metric_value(plan, outcomes, check.numerator, why, &members);
    double scale = 1.0;
    if (simulated && check.denominator) {
      const std::optional<double> denominator = metric_value(plan, outcomes, *check.denominator, why);
      if (denominator && *denominator == 0.0)
        why = fmt::format("run {}: '{}' is 0, the ratio is undefined", plan.runs[check.denominator->run].id,
                          check.denominator->path);
      simulated = denominator && *denominator != 0.0 ? std::optional(*simulated / *denominator) : std::nullopt;
      if (denominator) scale = *denominator;
    }
    if (simulated && !check.numerator.members.empty())
      row.spread = describe_spread(check.numerator, members, scale, check.spread);
    if (simulated) {
      row.simulated = simulated;
      row.verdict = from_verdict(judge_expectation(check.expectation, simulated).verdict);
      if (row.verdict == RegressVerdict::known_gap || row.verdict == RegressVerdict::gap_closed)
        row.note = check.expectation.known_gap;
    } else {
      row.note = why;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string_view regress_verdict_name(RegressVerdict verdict) {
  switch (verdict) {
    case RegressVerdict::pass:
      return "pass";
    case RegressVerdict::miss:
      return "MISS";
    case RegressVerdict::known_gap:
      return "known gap";
    case RegressVerdict::gap_closed:
      return "gap closed?";
    case RegressVerdict::error:
      return "error";
  }
  return "?";
}

int regress_exit_code(const std::vector<RegressRow>& rows) {
  constexpr int kExitError = 1;
  constexpr int kExitMiss = 3;
  const auto any = [&](RegressVerdict verdict) {
    return std::any_of(rows.begin(), rows.end(), [&](const RegressRow& r) { return r.verdict == verdict; });
  };
  if (any(RegressVerdict::error)) return kExitError;
  if (any(RegressVerdict::miss)) return kExitMiss;
  return 0;
}

std::string format_regress_table(const std::vector<RegressRow>& rows) {
  const std::array<std::string, 5> header{"scenario", "metric", "paper", "simulated", "verdict"};
  std::vector<std::array<std::string, 5>> cells;
  for (const RegressRow& row : rows)
    cells.push_back({row.group, row.expectation.metric, paper_cell(row.expectation), simulated_cell(row),
                     std::string(regress_verdict_name(row.verdict))});
  std::array<std::size_t, 5> width{};
  for (std::size_t c = 0; c < width.size(); ++c) {
    width[c] = display_width(header[c]);
    for (const auto& line : cells) width[c] = std::max(width[c], display_width(line[c]));
  }
  const auto format_line = [&](const std::array<std::string, 5>& line) {
    std::string text;
    for (std::size_t c = 0; c < line.size(); ++c) text += c + 1 < line.size() ? pad(line[c], width[c]) + "  " : line[c];
    return text + "\n";
  };
  std::string text = format_line(header);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    text += format_line(cells[r]);
    if (const std::string note = verdict_note(rows[r]); !note.empty()) text += fmt::format("    ↳ {}\n", note);
    if (!rows[r].spread.empty()) text += fmt::format("    ↳ {}\n", rows[r].spread);
  }
  return text + "\n" + verdict_counts(rows) + "\n";
}

std::string make_regress_csv(const std::vector<RegressRow>& rows) {
  const auto line = [](const std::vector<std::string>& fields) {
    std::string text;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) text += ',';
      text += csv_field(fields[i]);
    }
    return text + "\n";
  };
  std::string csv =
      line({"scenario", "metric", "compare", "paper_value", "tolerance", "source", "simulated", "verdict", "note"});
  for (const RegressRow& row : rows) {
    const Expectation& e = row.expectation;
    const char* compare = e.comparison == Comparison::approx    ? "approx"
                          : e.comparison == Comparison::at_most ? "at_most"
                                                                : "at_least";
    // Numbers as the shortest text that reads back as the same double.
    csv += line({row.group, e.metric, compare, fmt::format("{}", e.value),
                 e.relative ? fmt::format("{:g}%", 100 * e.tolerance) : fmt::format("{}", e.tolerance), e.source,
                 row.simulated ? fmt::format("{}", *row.simulated) : "", std::string(regress_verdict_name(row.verdict)),
                 note_cell(row)});
  }
  return csv;
}

std::string make_regress_markdown(const std::vector<RegressRow>& rows) {
  std::string md = "# dnnsim regress: simulated against published numbers\n\n" + verdict_counts(rows) + "\n\n";
  md += "| scenario | metric | paper | simulated | verdict | source | note |\n";
  md += "|---|---|---|---:|---|---|---|\n";
  for (const RegressRow& row : rows)
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", markdown_cell(row.group),
                      markdown_cell(row.expectation.metric), markdown_cell(describe_expected(row.expectation)),
                      simulated_cell(row), regress_verdict_name(row.verdict), markdown_cell(row.expectation.source),
                      markdown_cell(note_cell(row)));
  return md;
}

}  // namespace dnnsim
