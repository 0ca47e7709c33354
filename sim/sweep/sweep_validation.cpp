// Checks a sweep's points against the base scenario (see sweep_validation.hpp).
#include "sim/sweep/sweep_validation.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "sim/report/summary_fields.hpp"
#include "sim/scenario/scenario.hpp"

namespace dnnsim {
namespace {

// Distinct point errors reported before the rest are only counted: one bad axis value usually
// breaks many points, and the same message is already deduplicated.
constexpr std::size_t kMaxPointErrors = 20;

// The diagnostic as the sweep reports it, and whether an axis value (or the base alone) is to blame.
std::pair<Diagnostic, bool> locate(const Diagnostic& d, const SweepPoint& point,
                                   const std::vector<SourceLocation>& origins, const SweepSpec& spec,
                                   const std::set<std::string>& base_problems, const SourceLocation& axes_where) {
  const std::string inner = format_diagnostic(d);
  if (base_problems.count(inner) > 0) return {d, true};  // the base scenario's own problem
  const auto& a = point.assignments;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (d.location.file == "--set " + a[k].first + "=" + a[k].second)
      return {Diagnostic{origins[k], fmt::format("{}={}: {}", a[k].first, a[k].second, d.message)}, true};
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
    if (named && !tie)
      return {Diagnostic{origins[*named], fmt::format("{}={}: {}", a[*named].first, a[*named].second, d.message)},
              true};
  }
  if (a.size() == 1)
    return {Diagnostic{origins[0],
                       fmt::format("{}={} makes the base scenario invalid: {}", a[0].first, a[0].second, inner)},
            true};
  std::vector<std::string> described;
  for (const auto& [key, text] : a) described.push_back(key + "=" + text);
  return {
      Diagnostic{axes_where, fmt::format("point {} ({}) makes the base scenario invalid: {}",
                                         point_id(point.index, spec.points.size()), fmt::join(described, ", "), inner)},
      false};
}

}  // namespace

void validate_sweep_points(const SweepSpec& spec, const std::vector<std::vector<SourceLocation>>& origins,
                           const SourceLocation& axes_where, DiagnosticSink& sink) {
  std::set<std::string> base_problems;
  try {
    (void)load_scenario(spec.base_path);
  } catch (const InputError& e) {
    for (const Diagnostic& d : e.diagnostics()) base_problems.insert(format_diagnostic(d));
  }
  std::set<std::tuple<std::string, int, int, std::string>> reported;
  std::size_t point_errors = 0;
  std::size_t unreported_points = 0;
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
    bool counted = false;
    for (const Diagnostic& d : problems) {
      const auto [located, blamed] = locate(d, point, origins[point.index], spec, base_problems, axes_where);
      // A problem no axis value can be blamed for is reported for the first point that has it.
      const auto identity = std::tuple{located.location.file, located.location.line, located.location.column,
                                       blamed ? located.message : format_diagnostic(d)};
      if (!reported.insert(identity).second) continue;
      if (point_errors == kMaxPointErrors) {
        if (!counted) ++unreported_points;
        counted = true;
        continue;
      }
      ++point_errors;
      sink.error(located.location, located.message);
    }
  }
  for (std::size_t m = 0; m < spec.metrics.size(); ++m)
    for (const std::string& kind : kinds)
      if (const std::string problem = summary_path_problem(kind, spec.metrics[m], false); !problem.empty()) {
        sink.error(spec.metric_where[m], problem);
        break;
      }
  if (unreported_points > 0)
    sink.error(axes_where, fmt::format("… and more problems in {} other point{} (first {} shown)", unreported_points,
                                       unreported_points == 1 ? "" : "s", kMaxPointErrors));
}

}  // namespace dnnsim
