// Checks a sweep's points against the base scenario (see sweep_validation.hpp).
#include "sim/sweep/sweep_validation.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "models/common/units.hpp"
#include "sim/report/summary_fields.hpp"
#include "sim/scenario/scenario.hpp"

namespace dnnsim {
namespace {

// Distinct point errors reported before the rest are only counted: one bad axis value usually
// breaks many points, and the same message is already deduplicated.
constexpr std::size_t kMaxPointErrors = 20;

// The diagnostic as the sweep reports it, and whether an axis value (or the base alone) is to blame;
// `assignment`: the point's assignment whose key or value the problem is at (reported once all points
// are read, at the key or at each value: validate_sweep_points).
struct Located {
  Diagnostic diagnostic;
  bool blamed = false;
  std::optional<std::size_t> assignment;
};

Located locate(const Diagnostic& d, const SweepPoint& point, const std::vector<SourceLocation>& origins,
               const SweepSpec& spec, const std::set<std::string>& base_problems, const SourceLocation& axes_where) {
  const std::string inner = format_diagnostic(d);
  if (base_problems.count(inner) > 0) return {d, true, std::nullopt};  // the base scenario's own problem
  const auto& a = point.assignments;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (d.location.file == "--set " + a[k].first + "=" + a[k].second) return {d, true, k};
  }
  // An unknown key created by an override has no line; its message quotes the key first ("unknown
  // key 'bucket_sise' in the workload; did you mean 'bucket_size'?"): the key named earliest wins.
  if (d.location.line == 0) {
    std::optional<std::size_t> named;
    std::size_t earliest = std::string::npos;
    bool tie = false;
    for (std::size_t k = 0; k < a.size(); ++k) {
      const std::string& key = a[k].first;
      const std::string last = key.substr(key.rfind('.') == std::string::npos ? 0 : key.rfind('.') + 1);
      const auto at = d.message.find("'" + last + "'");
      if (at == std::string::npos) continue;
      if (at == earliest) tie = true;
      if (at < earliest) {
        earliest = at;
        named = k;
        tie = false;
      }
    }
    if (named && !tie) return {d, true, *named};
  }
  if (a.size() == 1)
    return {Diagnostic{origins[0],
                       fmt::format("{}={} makes the base scenario invalid: {}", a[0].first, a[0].second, inner)},
            true, std::nullopt};
  std::vector<std::string> described;
  for (const auto& [key, text] : a) described.push_back(key + "=" + text);
  return {
      Diagnostic{axes_where, fmt::format("point {} ({}) makes the base scenario invalid: {}",
                                         point_id(point.index, spec.points.size()), fmt::join(described, ", "), inner)},
      false, std::nullopt};
}

// A problem at an axis key's assignments, with the values (in order met) whose points met it and those
// points: met by every value of the key alike (an unknown key), it is one mistake of the key.
struct AtAxisKey {
  std::size_t key = 0;  // in SweepSpec::axis_keys
  std::string message;
  std::vector<std::pair<std::string, SourceLocation>> values;
  std::vector<std::size_t> points;
};

}  // namespace

void validate_sweep_points(const SweepSpec& spec, const std::vector<std::vector<SourceLocation>>& origins,
                           const std::vector<SourceLocation>& key_where, const SourceLocation& axes_where,
                           DiagnosticSink& sink) {
  std::set<std::string> base_problems;
  try {
    (void)load_scenario(spec.base_path);
  } catch (const InputError& e) {
    for (const Diagnostic& d : e.diagnostics()) base_problems.insert(format_diagnostic(d));
  }
  std::set<std::tuple<std::string, int, int, std::string>> reported;
  std::size_t point_errors = 0;
  std::set<std::size_t> unreported_points;
  // Reports a problem of point `index` unless already reported, or counts the point once 20 are.
  const auto report = [&](std::size_t index, const SourceLocation& where, const std::string& message,
                          const std::string& identity) {
    if (!reported.insert(std::tuple{where.file, where.line, where.column, identity}).second) return;
    if (point_errors == kMaxPointErrors) {
      unreported_points.insert(index);
      return;
    }
    ++point_errors;
    sink.error(where, message);
  };
  std::vector<AtAxisKey> at_keys;
  std::set<std::string> kinds;  // of the points that load, for the metrics
  for (const SweepPoint& point : spec.points) {
    std::vector<std::string> overrides;
    for (const auto& [key, text] : point.assignments) overrides.push_back(key + "=" + text);
    std::vector<Diagnostic> problems;
    try {
      kinds.insert(load_scenario(spec.base_path, overrides).workload_kind);
    } catch (const InputError& e) {
      problems = e.diagnostics();
    }
    for (const Diagnostic& d : problems) {
      const auto [located, blamed, assignment] =
          locate(d, point, origins[point.index], spec, base_problems, axes_where);
      if (assignment) {
        const std::size_t k = *assignment;
        auto at = std::find_if(at_keys.begin(), at_keys.end(),
                               [&](const AtAxisKey& p) { return p.key == k && p.message == d.message; });
        if (at == at_keys.end()) at = at_keys.insert(at_keys.end(), AtAxisKey{k, d.message, {}, {}});
        // Not a structured binding: clang 14 cannot capture one in the lambda below.
        const std::string& text = point.assignments[k].second;
        if (std::none_of(at->values.begin(), at->values.end(), [&](const auto& v) { return v.first == text; }))
          at->values.emplace_back(text, origins[point.index][k]);
        at->points.push_back(point.index);
        continue;
      }
      // A problem no axis value can be blamed for is reported for the first point that has it.
      report(point.index, located.location, located.message, blamed ? located.message : format_diagnostic(d));
    }
  }
  // The values each axis key takes over all points: a problem every one of them met is the key's.
  std::vector<std::set<std::string>> values_of(spec.axis_keys.size());
  for (const SweepPoint& point : spec.points)
    for (std::size_t k = 0; k < point.assignments.size(); ++k) values_of[k].insert(point.assignments[k].second);
  for (const AtAxisKey& at : at_keys) {
    const std::string& key = spec.axis_keys[at.key];
    if (at.values.size() > 1 && at.values.size() == values_of[at.key].size()) {
      const std::string message = fmt::format("{}: {}", key, at.message);
      report(at.points.front(), key_where[at.key], message, message);
      continue;
    }
    for (const auto& [text, where] : at.values) {
      const std::string message = fmt::format("{}={}: {}", key, text, at.message);
      report(at.points.front(), where, message, message);
    }
  }
  for (std::size_t m = 0; m < spec.metrics.size(); ++m)
    for (const std::string& kind : kinds)
      if (const std::string problem = summary_path_problem(kind, spec.metrics[m], false); !problem.empty()) {
        sink.error(spec.metric_where[m], problem);
        break;
      }
  if (!unreported_points.empty())
    sink.error(axes_where, fmt::format("… and more problems in {} (first {} shown)",
                                       counted(unreported_points.size(), "other point"), kMaxPointErrors));
}

}  // namespace dnnsim
