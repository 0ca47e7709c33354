// Judging `expect:` blocks (see expectations.hpp).
#include "sim/regress/expectations.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "sim/report/report.hpp"

namespace dnnsim {

ExpectationVerdict judge_expectation(const Expectation& expectation, std::optional<double> measured) {
  ExpectationVerdict verdict{expectation, measured, Verdict::no_value};
  if (!measured) return verdict;
  const Expectation& e = expectation;
  const double slack = e.relative ? e.tolerance * std::abs(e.value) : e.tolerance;
  bool within = false;
  switch (e.comparison) {
    case Comparison::approx:
      within = std::abs(*measured - e.value) <= slack;
      break;
    case Comparison::at_most:
      within = *measured <= e.value + slack;
      break;
    case Comparison::at_least:
      within = *measured >= e.value - slack;
      break;
  }
  const bool gap = !e.known_gap.empty();
  verdict.verdict = within ? (gap ? Verdict::gap_closed : Verdict::pass) : (gap ? Verdict::known_gap : Verdict::miss);
  return verdict;
}

std::vector<ExpectationVerdict> check_expectations(const std::vector<Expectation>& expectations,
                                                   const nlohmann::ordered_json& summary) {
  std::vector<ExpectationVerdict> verdicts;
  for (const Expectation& e : expectations) verdicts.push_back(judge_expectation(e, summary_metric(summary, e.metric)));
  return verdicts;
}

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass:
      return "pass";
    case Verdict::miss:
      return "MISS";
    case Verdict::known_gap:
      return "known gap";
    case Verdict::gap_closed:
      return "gap closed?";
    case Verdict::no_value:
      return "no value";
  }
  return "?";
}

std::string describe_expected(const Expectation& e) {
  const std::string tolerance = e.relative ? fmt::format("{:g}%", 100 * e.tolerance) : fmt::format("{:g}", e.tolerance);
  switch (e.comparison) {
    case Comparison::approx:
      return fmt::format("≈ {:.6g} ± {}", e.value, tolerance);
    case Comparison::at_most:
      return fmt::format("≤ {:.6g} + {}", e.value, tolerance);
    case Comparison::at_least:
      return fmt::format("≥ {:.6g} − {}", e.value, tolerance);
  }
  return "";
}

std::string format_verdicts(const std::vector<ExpectationVerdict>& verdicts, const nlohmann::ordered_json& summary) {
  std::string text = "\nexpectations:\n";
  if (summary.value("status", "") == "infeasible")
    text += "  (the run is infeasible: nothing was simulated, so its figures below are 0)\n";
  for (const ExpectationVerdict& v : verdicts) {
    const Expectation& e = v.expectation;
    if (!v.measured) {
      std::vector<std::string> top;
      for (const auto& [key, _] : summary.items()) top.push_back(key);
      text += fmt::format("  MISS         {}: no such number in summary.json (top-level keys: {}) [{}:{}]\n", e.metric,
                          fmt::join(top, ", "), e.where.file, e.where.line);
      continue;
    }
    text += fmt::format("  {:<11}  {} = {:.6g}, expected {}{}\n", verdict_name(v.verdict), e.metric, *v.measured,
                        describe_expected(e), e.source.empty() ? "" : fmt::format("  ({})", e.source));
    if (v.verdict == Verdict::known_gap) text += fmt::format("  {:<11}  known gap: {}\n", "", e.known_gap);
    if (v.verdict == Verdict::gap_closed)
      text += fmt::format("  {:<11}  marked as a known gap (\"{}\") but within the tolerance: update the note\n", "",
                          e.known_gap);
  }
  return text;
}

}  // namespace dnnsim
