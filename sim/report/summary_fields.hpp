// The fields of summary.json, declared so that a path an expectation, a comparison or a sweep names
// is checked when its file is read, before anything runs (a misspelt metric was a MISS after the
// whole simulation). make_summary's own fields are common_summary_fields(); each workload kind
// declares its section's beside the code that writes it (WorkloadKind::summary_fields). Debug builds
// check every summary make_summary writes against them (undeclared_summary_fields), so a field added
// without its declaration fails the first test that runs it.
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dnnsim {

// What a field holds. An expectation compares numbers; a sweep's column takes either.
enum class FieldType {
  // A number, or null where the run has none (throughput without a batch size). Never negative: every
  // field is a time, a size, a count, a rate or a ratio of those, so an expectation below zero is a
  // mistake, and debug builds check that no summary holds one.
  number,
  text,  // a string or a flag
};

// One field, as a dotted path whose segments are keys, "#" for any list index, or "*" for any key
// of a map whose keys the run names (devices, links, phases, GPUs' shares).
struct SummaryField {
  std::string_view path;
  FieldType type = FieldType::number;
};

// The fields every run's summary has (sim/report/report.cpp, make_summary).
[[nodiscard]] std::span<const SummaryField> common_summary_fields();

// Whether the concrete `path` ("devices.node0/gpu1.peak_memory_bytes") is an instance of `pattern`
// ("devices.*.peak_memory_bytes"): as many segments, each equal, "*" (any key) or "#" (digits).
[[nodiscard]] bool field_matches(std::string_view pattern, std::string_view path);

// Why `path` cannot name a value in the summary of a run of workload kind `kind` (a name of
// builtin_workload_kinds()), or empty: no declared field matches it (with the closest one, or the
// fields of the section it names), or, when `number` is asked, the field is text. Said as a message
// about the metric: "'mean.iteration_time' is no field of summary.json …".
[[nodiscard]] std::string summary_path_problem(const std::string& kind, const std::string& path, bool number);

// Whether `path` names a number (never negative) in the summary of a run of workload kind `kind` (false
// for an unknown path: summary_path_problem says what is wrong with it).
[[nodiscard]] bool never_negative_field(const std::string& kind, const std::string& path);

// The values of `summary` (a run of workload kind `kind`) that no declared field matches, or that one
// of the other type does (a negative number where the field is never negative), as "path (number)" /
// "path (negative number)" / "path (text)"; empty when all are declared. Debug
// builds check every summary they make with it (make_summary), so each test's run checks the
// declarations.
[[nodiscard]] std::vector<std::string> undeclared_summary_fields(const std::string& kind,
                                                                 const nlohmann::ordered_json& summary);

// What `summary` says of itself that cannot be, as one line each; empty when it is consistent: iteration
// times (the run's, or a job's) that do not add up to the makespan; a device whose compute, exposed
// communication and idle time do not make up the run's mean iteration, or whose utilization exceeds 1.
// They hold by construction (make_summary), so debug builds check every summary they make with it, as
// with undeclared_summary_fields: a report whose numbers contradict each other fails the first test that
// writes one (GNN runs averaged their CPU hosts into "per GPU" figures; kinds without tasks wrote an
// iteration of 0 s beside a mean iteration of the makespan).
[[nodiscard]] std::vector<std::string> summary_contradictions(const nlohmann::ordered_json& summary);

}  // namespace dnnsim
