#include "models/common/diagnostics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <tuple>

#include "models/common/units.hpp"

namespace dnnsim {

std::string format_diagnostic(const Diagnostic& diagnostic) {
  const SourceLocation& where = diagnostic.location;
  if (where.line > 0)
    return fmt::format("{}:{}:{}: error: {}", where.file, where.line, where.column, diagnostic.message);
  if (!where.file.empty()) return fmt::format("{}: error: {}", where.file, diagnostic.message);
  return fmt::format("error: {}", diagnostic.message);
}

namespace {
std::string join_messages(const std::vector<Diagnostic>& diagnostics) {
  std::string text;
  for (const Diagnostic& d : diagnostics) {
    if (!text.empty()) text += '\n';
    text += format_diagnostic(d);
  }
  return text;
}
}  // namespace

InputError::InputError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join_messages(diagnostics)), diagnostics_(std::move(diagnostics)) {}

InputError::InputError(SourceLocation location, std::string message)
    : InputError(std::vector<Diagnostic>{Diagnostic{std::move(location), std::move(message)}}) {}

std::string format_input_error(const InputError& error) {
  std::string text;
  for (const Diagnostic& d : error.diagnostics()) text += format_diagnostic(d) + '\n';
  return text + fmt::format("{}; nothing was simulated\n", counted(error.diagnostics().size(), "error"));
}

void DiagnosticSink::error(SourceLocation location, std::string message) {
  diagnostics_.push_back(Diagnostic{std::move(location), std::move(message)});
}

void DiagnosticSink::append(const std::vector<Diagnostic>& diagnostics) {
  diagnostics_.insert(diagnostics_.end(), diagnostics.begin(), diagnostics.end());
}

void DiagnosticSink::prefix_from(std::size_t first, const std::string& prefix) {
  for (std::size_t i = first; i < diagnostics_.size(); ++i) diagnostics_[i].message.insert(0, prefix);
}

void DiagnosticSink::throw_if_any() const {
  if (diagnostics_.empty()) return;
  // A file two sections read (Pollux's applications.csv, by the application rule and the scheduler)
  // reports each of its problems once.
  std::vector<Diagnostic> sorted;
  std::set<std::tuple<std::string, int, int, std::string>> seen;
  for (const Diagnostic& d : diagnostics_)
    if (seen.emplace(d.location.file, d.location.line, d.location.column, d.message).second) sorted.push_back(d);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.location.file, a.location.line, a.location.column) <
           std::tie(b.location.file, b.location.line, b.location.column);
  });
  throw InputError(std::move(sorted));
}

namespace {
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}
}  // namespace

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  // Among candidates as close, the one that shares the longest beginning with the word: "m" is "mu" cut
  // short rather than "a" mistyped.
  const auto shared_beginning = [&](const std::string& candidate) {
    return static_cast<std::size_t>(
        std::mismatch(word.begin(), word.begin() + static_cast<std::ptrdiff_t>(std::min(word.size(), candidate.size())),
                      candidate.begin())
            .first -
        word.begin());
  };
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const std::string& candidate : candidates) {
    const std::size_t distance = edit_distance(word, candidate);
    if (distance < best_distance ||
        (distance == best_distance && !best.empty() && shared_beginning(candidate) > shared_beginning(best))) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::vector<std::string> meant_by(const std::string& word, const std::vector<std::string>& candidates) {
  // A name cut short ("H100" for H100-SXM and H100-PCIe) is closer by edit distance to another family's
  // full name (P100) than to its own: the names it begins are what was meant.
  std::vector<std::string> completions;
  if (word.size() >= 3)
    for (const std::string& candidate : candidates)
      if (candidate.size() > word.size() && candidate.compare(0, word.size(), word) == 0)
        completions.push_back(candidate);
  if (!completions.empty() && completions.size() <= 4) return completions;
  std::string match = closest_match(word, candidates);
  if (match.empty()) return {};
  return {std::move(match)};
}

std::string quoted_alternatives(const std::vector<std::string>& names) {
  std::vector<std::string> quoted;
  for (const std::string& name : names) quoted.push_back(fmt::format("'{}'", name));
  return fmt::format("{}", fmt::join(quoted, " or "));
}

std::string suggestion_suffix(const std::string& word, const std::vector<std::string>& candidates) {
  if (const std::vector<std::string> meant = meant_by(word, candidates); !meant.empty())
    return fmt::format("; did you mean {}?", quoted_alternatives(meant));
  if (candidates.empty()) return "";
  return fmt::format("; expected one of: {}", fmt::join(candidates, ", "));
}

}  // namespace dnnsim
