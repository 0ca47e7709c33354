// summary.json's declared fields and the check of a path against them (see summary_fields.hpp).
#include "sim/report/summary_fields.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <vector>

#include "models/common/diagnostics.hpp"
#include "sim/workloads/workload_kind.hpp"

namespace dnnsim {
namespace {

constexpr FieldType kText = FieldType::text;

// make_summary's fields, in the order it writes them (docs/reports.md describes each).
constexpr std::array kCommonFields{
    SummaryField{"scenario", kText},
    SummaryField{"status", kText},
    SummaryField{"messages.#", kText},
    SummaryField{"seed"},
    SummaryField{"iterations"},
    SummaryField{"iteration_time_s.#"},
    SummaryField{"makespan_s"},
    SummaryField{"mean.iteration_time_s"},
    SummaryField{"mean.throughput_samples_per_s"},
    SummaryField{"mean.throughput_tokens_per_s"},
    SummaryField{"mean.tokens_per_s_per_gpu"},
    SummaryField{"mean.framework_model_tflops_per_gpu"},
    SummaryField{"mean.model_flops_per_iteration"},
    SummaryField{"mean.hardware_flops_per_iteration"},
    SummaryField{"mean.model_tflops_per_gpu"},
    SummaryField{"mean.hardware_tflops_per_gpu"},
    SummaryField{"mean.mfu"},
    SummaryField{"mean.hfu"},
    SummaryField{"mean.compute_s"},
    SummaryField{"mean.communication_s"},
    SummaryField{"mean.exposed_communication_s"},
    SummaryField{"mean.idle_s"},
    SummaryField{"mean.utilization"},
    SummaryField{"mean.peak_memory_bytes"},
    SummaryField{"mean.max_peak_memory_bytes"},
    SummaryField{"devices.*.gpu", kText},
    SummaryField{"devices.*.mirrors", kText},
    SummaryField{"devices.*.utilization"},
    SummaryField{"devices.*.peak_memory_bytes"},
    SummaryField{"devices.*.memory_capacity_bytes"},
    SummaryField{"devices.*.memory_at_peak.*"},
    SummaryField{"devices.*.model_tflops_per_s"},
    SummaryField{"devices.*.mfu"},
    SummaryField{"devices.*.compute_s"},
    SummaryField{"devices.*.communication_s"},
    SummaryField{"devices.*.exposed_communication_s"},
    SummaryField{"devices.*.idle_s"},
    SummaryField{"devices.*.compute_by_phase_s.*"},
    SummaryField{"links.*.bytes"},
    SummaryField{"links.*.bandwidth_bytes_per_s"},
    SummaryField{"links.*.mean_utilization"},
    SummaryField{"simulation.tasks"},
    SummaryField{"simulation.operations"},
    SummaryField{"simulation.flows"},
    SummaryField{"simulation.transfer_retries"},
    SummaryField{"simulation.unfinished_tasks"},
    SummaryField{"simulation.collective_fidelity", kText},
};

std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

bool segment_matches(std::string_view pattern, std::string_view key) {
  if (pattern == "*") return !key.empty();
  if (pattern == "#")
    return !key.empty() &&
           std::all_of(key.begin(), key.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  return pattern == key;
}

// The pattern with the path's own keys where it has "*" or "#" (as far as the path goes), so that a
// suggestion reads as the path the user meant: "devices.node0/gpu1.peak_memory_bytes".
std::string instantiate(std::string_view pattern, const std::vector<std::string_view>& path) {
  std::string text;
  const std::vector<std::string_view> parts = segments(pattern);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const bool wild = parts[i] == "*" || parts[i] == "#";
    text += i == 0 ? "" : ".";
    text += wild && i < path.size() ? path[i] : parts[i];
  }
  return text;
}

// The common fields and the kind's.
std::vector<SummaryField> fields_of(const std::string& kind) {
  std::vector<SummaryField> fields(kCommonFields.begin(), kCommonFields.end());
  const std::vector<SummaryField> own = builtin_workload_kinds().at(kind).value->summary_fields();
  fields.insert(fields.end(), own.begin(), own.end());
  return fields;
}

// The fields split into their segments, for walking a summary's tree with the fields that still
// match the path so far: a thousand devices cost a thousand short filters, not a split of every
// pattern for every value.
struct SplitField {
  std::vector<std::string_view> parts;
  FieldType type;
};

// `node` is at `path`, `depth` keys below the summary's top.
void collect_undeclared(const nlohmann::ordered_json& node, const std::string& path, std::size_t depth,
                        const std::vector<SplitField>& fields, const std::vector<std::size_t>& candidates,
                        std::vector<std::string>& undeclared) {
  constexpr std::size_t kListed = 20;
  if (node.is_object() || node.is_array()) {
    std::size_t index = 0;
    for (const auto& [key, child] : node.items()) {
      const std::string name = node.is_array() ? std::to_string(index++) : key;
      std::vector<std::size_t> next;
      for (std::size_t c : candidates)
        if (fields[c].parts.size() > depth && segment_matches(fields[c].parts[depth], name)) next.push_back(c);
      collect_undeclared(child, path.empty() ? name : path + "." + name, depth + 1, fields, next, undeclared);
    }
    return;
  }
  const bool number = node.is_number() || node.is_null();
  const bool negative = node.is_number() && node.get<double>() < 0;
  for (std::size_t c : candidates)
    if (fields[c].parts.size() == depth && (fields[c].type == FieldType::number) == number && !negative) return;
  if (undeclared.size() < kListed)
    undeclared.push_back(fmt::format("{} ({})", path, !number ? "text" : negative ? "negative number" : "number"));
}

}  // namespace

std::span<const SummaryField> common_summary_fields() { return kCommonFields; }

std::vector<std::string> undeclared_summary_fields(const std::string& kind, const nlohmann::ordered_json& summary) {
  std::vector<SplitField> fields;
  std::vector<std::size_t> all;
  for (const SummaryField& field : fields_of(kind)) {
    all.push_back(fields.size());
    fields.push_back({segments(field.path), field.type});
  }
  std::vector<std::string> undeclared;
  collect_undeclared(summary, "", 0, fields, all, undeclared);
  return undeclared;
}

std::vector<std::string> summary_contradictions(const nlohmann::ordered_json& summary) {
  // Sums of up to millions of rounded terms: equal to a relative 1e-9 (1 ns in a second).
  const auto near = [](double a, double b) {
    return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)});
  };
  std::vector<std::string> contradictions;
  const auto check_iterations = [&](const nlohmann::ordered_json& run, const std::string& what) {
    if (!run.contains("iteration_time_s") || !run["makespan_s"].is_number()) return;
    double sum = 0;
    for (const auto& time : run["iteration_time_s"]) sum += time.get<double>();
    if (!near(sum, run["makespan_s"].get<double>()))
      contradictions.push_back(fmt::format("{}iteration_time_s sums to {} s, makespan_s is {} s", what, sum,
                                           run["makespan_s"].get<double>()));
  };
  check_iterations(summary, "");
  if (summary.contains("jobs") && summary["jobs"].is_array())
    for (std::size_t j = 0; j < summary["jobs"].size(); ++j)
      check_iterations(summary["jobs"][j], fmt::format("jobs.{}.", j));
  const double iterations = summary["iterations"].get<double>();
  const double iteration = summary["makespan_s"].get<double>() / iterations;
  for (const auto& [name, device] : summary["devices"].items()) {
    const double parts = device["compute_s"].get<double>() + device["exposed_communication_s"].get<double>() +
                         device["idle_s"].get<double>();
    if (!near(parts, iteration))
      contradictions.push_back(
          fmt::format("devices.{}: compute_s + exposed_communication_s + idle_s = {} s, the mean iteration {} s", name,
                      parts, iteration));
    if (device["utilization"].get<double>() > 1 + 1e-9)
      contradictions.push_back(fmt::format("devices.{}.utilization is {}", name, device["utilization"].get<double>()));
  }
  return contradictions;
}

bool field_matches(std::string_view pattern, std::string_view path) {
  const std::vector<std::string_view> want = segments(pattern);
  const std::vector<std::string_view> have = segments(path);
  if (want.size() != have.size()) return false;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (!segment_matches(want[i], have[i])) return false;
  return true;
}

bool never_negative_field(const std::string& kind, const std::string& path) {
  for (const SummaryField& field : fields_of(kind))
    if (field_matches(field.path, path)) return field.type == FieldType::number;
  return false;
}

std::string summary_path_problem(const std::string& kind, const std::string& path, bool number) {
  const std::vector<SummaryField> fields = fields_of(kind);
  for (const SummaryField& field : fields) {
    if (!field_matches(field.path, path)) continue;
    if (number && field.type == FieldType::text)
      return fmt::format("'{}' is text in summary.json, not a number to compare", path);
    return {};
  }
  // A section: the fields below it, as the path would name them.
  const std::vector<std::string_view> have = segments(path);
  std::vector<std::string> below;
  for (const SummaryField& field : fields) {
    const std::vector<std::string_view> want = segments(field.path);
    if (want.size() <= have.size()) continue;
    bool under = true;
    for (std::size_t i = 0; i < have.size() && under; ++i) under = segment_matches(want[i], have[i]);
    if (under && (!number || field.type == FieldType::number)) below.push_back(instantiate(field.path, have));
  }
  if (!below.empty()) {
    constexpr std::size_t kShown = 6;
    const std::size_t more = below.size() > kShown ? below.size() - kShown : 0;
    below.resize(std::min(below.size(), kShown));
    const bool wild = std::any_of(below.begin(), below.end(), [](const std::string& f) {
      return f.find('#') != std::string::npos || f.find('*') != std::string::npos;
    });
    return fmt::format("'{}' is a section of summary.json, not a value; its fields: {}{}{}", path,
                       fmt::join(below, ", "), more > 0 ? fmt::format(" and {} more", more) : "",
                       wild ? " (# a list index, * a name)" : "");
  }
  std::vector<std::string> candidates;
  for (const SummaryField& field : fields)
    if (!number || field.type == FieldType::number) candidates.push_back(instantiate(field.path, have));
  const std::string closest = closest_match(path, candidates);
  return fmt::format("'{}' is no field of summary.json for a {} workload{}", path, kind,
                     closest.empty() ? " (docs/reports.md lists them)" : fmt::format("; did you mean '{}'?", closest));
}

}  // namespace dnnsim
