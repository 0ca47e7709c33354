// Judging `expect:` blocks (docs/regress.md): each expectation's metric looked up in a run's
// summary.json and compared with its target, tolerance and known gap. `dnnsim run` prints the
// verdicts of its scenario; `dnnsim regress` (regress_runner.hpp) gathers them over many.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/scenario/scenario.hpp"

namespace dnnsim {

// How an expectation came out (docs/regress.md). A target the simulator is known to miss
// (Expectation::known_gap) is still compared and shown with its measured value, but never fails.
enum class Verdict {
  pass,        // within the tolerance
  miss,        // outside it
  known_gap,   // outside it, and the expectation says why the simulator misses it
  gap_closed,  // within the tolerance although marked as a known gap: passes; the note needs updating
  no_value,    // no number to compare (the metric is not in the summary)
};

struct ExpectationVerdict {
  Expectation expectation;
  std::optional<double> measured;  // empty when the metric is not in the summary
  Verdict verdict = Verdict::no_value;
  // A miss, or nothing to compare; a known gap does not fail.
  [[nodiscard]] bool failed() const { return verdict == Verdict::miss || verdict == Verdict::no_value; }
};

// Compares a measured value with the expectation: approx |m − v| ≤ t, at_most m ≤ v + t, at_least
// m ≥ v − t, where t is the tolerance, times |v| when relative. An empty `measured` gives no_value.
[[nodiscard]] ExpectationVerdict judge_expectation(const Expectation& expectation, std::optional<double> measured);

// Looks each metric up by its dotted path in the summary ("mean.iteration_time_s",
// "devices.node0/gpu1.peak_memory_bytes") and compares.
[[nodiscard]] std::vector<ExpectationVerdict> check_expectations(const std::vector<Expectation>& expectations,
                                                                 const nlohmann::ordered_json& summary);
// "pass", "MISS", "known gap", "gap closed?", "no value".
[[nodiscard]] std::string_view verdict_name(Verdict verdict);
// The expected side of an expectation: "≈ 1.6 ± 0.1", "≤ 2 + 5%", "≥ 100 − 0".
[[nodiscard]] std::string describe_expected(const Expectation& expectation);
[[nodiscard]] std::string format_verdicts(const std::vector<ExpectationVerdict>& verdicts,
                                          const nlohmann::ordered_json& summary);

}  // namespace dnnsim
