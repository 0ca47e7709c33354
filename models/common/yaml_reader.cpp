#include "models/common/yaml_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <ios>
#include <limits>
#include <system_error>

#include "models/common/parse_number.hpp"

namespace dnnsim {

YAML::Node YamlReader::load_file() {
  // A directory opens as a stream whose first read throws std::ios_base::failure from inside
  // yaml-cpp, past its own exceptions (a fuzzing finding: a scenario's `calibration:` naming a
  // directory, tests/fuzz/crashers/regress/); every YAML file of dnnsim is read here.
  if (std::error_code ignored; std::filesystem::is_directory(file_, ignored)) {
    sink_->error(SourceLocation{file_, 0, 0}, "is a directory, not a file");
    return YAML::Node();
  }
  try {
    return YAML::LoadFile(file_);
  } catch (const YAML::BadFile&) {
    sink_->error(SourceLocation{file_, 0, 0}, "cannot open file");
  } catch (const YAML::ParserException& e) {
    sink_->error(where(e.mark), fmt::format("YAML syntax error: {}", e.msg));
  } catch (const std::ios_base::failure&) {
    sink_->error(SourceLocation{file_, 0, 0}, "cannot read the file");
  }
  return YAML::Node();
}

YAML::Node YamlReader::load_text(const std::string& text) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    sink_->error(where(e.mark), fmt::format("YAML syntax error: {}", e.msg));
  }
  return YAML::Node();
}

SourceLocation YamlReader::where(const YAML::Mark& mark) const {
  if (mark.is_null() || mark.line < 0) return SourceLocation{file_, 0, 0};
  return SourceLocation{file_, mark.line + 1, mark.column + 1};
}

SourceLocation YamlReader::where(const YAML::Node& node) const {
  if (!node.IsDefined()) return SourceLocation{file_, 0, 0};
  for (const auto& [value, origin] : overrides_)
    if (node.is(value)) return SourceLocation{origin, 0, 0};
  return where(node.Mark());
}

void YamlReader::add_override(const YAML::Node& value, std::string origin) {
  // Its keys and elements too: `--set 'workload.schedule={name: interleaved, chunks: 0}'` must
  // locate the bad `chunks` at the override, not at the override string's own line and column.
  if (value.IsMap())
    for (const auto& entry : value) {
      add_override(entry.first, origin);
      add_override(entry.second, origin);
    }
  else if (value.IsSequence())
    for (const YAML::Node& element : value) add_override(element, origin);
  overrides_.emplace_back(value, std::move(origin));
}

void YamlReader::error(const YAML::Node& node, std::string message) { sink_->error(where(node), std::move(message)); }

namespace {
// An undefined node, or one looked up in a scalar or a list (yaml-cpp's invalid node, whose type
// cannot be asked), is no scalar.
bool is_scalar(const YAML::Node& node) { return node.IsDefined() && node.IsScalar(); }

std::string describe(const YAML::Node& node) {
  if (!node.IsDefined()) return "nothing";  // also a node looked up in a scalar: asking its type throws
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Scalar:
      return fmt::format("\"{}\"", node.Scalar());
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Undefined:
      return "nothing";
  }
  return "something else";
}
}  // namespace

std::optional<std::string> YamlReader::string(const YAML::Node& node) {
  if (!is_scalar(node)) {
    error(node, fmt::format("expected a string, got {}", describe(node)));
    return std::nullopt;
  }
  return node.Scalar();
}

std::vector<YAML::Node> YamlReader::list(const YAML::Node& node, std::string_view what) {
  if (!node.IsDefined() || !node.IsSequence()) {
    error(node, fmt::format("expected a list of {}, got {}", what, describe(node)));
    return {};
  }
  return std::vector<YAML::Node>(node.begin(), node.end());
}

std::optional<bool> YamlReader::boolean(const YAML::Node& node) {
  if (is_scalar(node) && (node.Scalar() == "true" || node.Scalar() == "false")) return node.Scalar() == "true";
  error(node, fmt::format("expected true or false, got {}", describe(node)));
  return std::nullopt;
}

std::optional<std::int64_t> YamlReader::integer(const YAML::Node& node, std::int64_t min, std::int64_t max) {
  if (is_scalar(node)) {
    if (const auto parsed = parse_number<std::int64_t>(node.Scalar())) {
      const std::int64_t value = *parsed;
      if (value < min || value > max) {
        error(node, max == std::numeric_limits<std::int64_t>::max()
                        ? fmt::format("expected an integer >= {}, got {}", min, value)
                        : fmt::format("expected an integer in [{}, {}], got {}", min, max, value));
        return std::nullopt;
      }
      return value;
    }
  }
  error(node, fmt::format("expected an integer, got {}", describe(node)));
  return std::nullopt;
}

std::optional<double> YamlReader::number(const YAML::Node& node, double min, double max) {
  if (is_scalar(node)) {
    const std::string& text = node.Scalar();
    if (const auto parsed = parse_number<double>(text)) {
      const double value = *parsed;
      if (value < min || value > max) {
        error(node, max == std::numeric_limits<double>::max() || max >= 1e300
                        ? fmt::format("expected a number >= {}, got {}", min, text)
                        : fmt::format("expected a number in [{}, {}], got {}", min, max, text));
        return std::nullopt;
      }
      return value;
    }
  }
  error(node, fmt::format("expected a number, got {}", describe(node)));
  return std::nullopt;
}

std::optional<std::string> YamlReader::choice(const YAML::Node& node, std::string_view what,
                                              const std::vector<std::string>& allowed) {
  auto text = string(node);
  if (!text) return std::nullopt;
  if (std::find(allowed.begin(), allowed.end(), *text) != allowed.end()) return text;
  error(node, fmt::format("unknown {} '{}'{}", what, *text, suggestion_suffix(*text, allowed)));
  return std::nullopt;
}

std::optional<double> YamlReader::quantity(const YAML::Node& node, Dimension dimension) {
  if (!is_scalar(node)) {
    error(node, fmt::format("expected {} with a unit ({}), got {}", dimension_name(dimension),
                            dimension_units(dimension), describe(node)));
    return std::nullopt;
  }
  try {
    return parse_quantity(node.Scalar(), dimension);
  } catch (const UnitError& e) {
    error(node, e.what());
    return std::nullopt;
  }
}

MapReader::MapReader(YamlReader& reader, const YAML::Node& node, std::string context)
    : reader_(&reader), node_(node), context_(std::move(context)) {
  valid_ = node.IsDefined() && node.IsMap();
  if (!valid_) reader.error(node, fmt::format("expected a mapping for {}, got {}", context_, describe(node)));
}

YAML::Node MapReader::lookup(std::string_view key, bool required) {
  declared_.emplace_back(key);
  if (!valid_) return YAML::Node(YAML::NodeType::Undefined);
  for (auto item : node_) {
    if (item.first.IsScalar() && item.first.Scalar() == key) return item.second;
  }
  if (required) none_given({std::string(key)}, node_, fmt::format("missing key '{}' in {}", key, context_));
  return YAML::Node(YAML::NodeType::Undefined);
}

void MapReader::exactly_one_of(std::vector<std::string> keys, const YAML::Node& at, std::string message) {
  const auto given = std::count_if(keys.begin(), keys.end(), [&](const std::string& key) { return present(key); });
  if (given > 1)
    reader_->error(at, std::move(message));
  else if (given == 0)
    none_given(std::move(keys), at, std::move(message));
}

void MapReader::refuse_not_positive(std::string_view key, std::string_view reason) {
  reader_->error(lookup(key, false), reason.empty() ? fmt::format("{} must be positive", key)
                                                    : fmt::format("{} must be positive: {}", key, reason));
  refused_.emplace_back(key);
}

void MapReader::none_given(std::vector<std::string> keys, const YAML::Node& at, std::string message) {
  const bool maybe_misspelt =
      valid_ && std::any_of(node_.begin(), node_.end(), [&](const auto& item) {
        return item.first.IsNull() || (item.first.IsScalar() && !meant_by(item.first.Scalar(), keys).empty());
      });
  if (maybe_misspelt)
    absent_.push_back(Absent{std::move(keys), at, std::move(message)});
  else
    reader_->error(at, std::move(message));
}

YAML::Node MapReader::get(std::string_view key) { return lookup(key, false); }
YAML::Node MapReader::require(std::string_view key) { return lookup(key, true); }
bool MapReader::has(std::string_view key) { return lookup(key, false).IsDefined(); }

std::optional<std::string> MapReader::string(std::string_view key, bool required) {
  YAML::Node value = lookup(key, required);
  if (!value.IsDefined()) return std::nullopt;
  return noted(key, reader_->string(value));
}

std::optional<bool> MapReader::boolean(std::string_view key) {
  YAML::Node value = lookup(key, false);
  if (!value.IsDefined()) return std::nullopt;
  return noted(key, reader_->boolean(value));
}

std::optional<std::int64_t> MapReader::integer(std::string_view key, std::int64_t min, std::int64_t max,
                                               bool required) {
  YAML::Node value = lookup(key, required);
  if (!value.IsDefined()) return std::nullopt;
  return noted(key, reader_->integer(value, min, max));
}

std::optional<double> MapReader::number(std::string_view key, double min, double max, bool required) {
  YAML::Node value = lookup(key, required);
  if (!value.IsDefined()) return std::nullopt;
  return noted(key, reader_->number(value, min, max));
}

std::optional<std::string> MapReader::choice(std::string_view key, const std::vector<std::string>& allowed,
                                             bool required) {
  return choice(key, key, allowed, required);
}

std::optional<std::string> MapReader::choice(std::string_view key, std::string_view what,
                                             const std::vector<std::string>& allowed, bool required) {
  YAML::Node value = lookup(key, required);
  if (!value.IsDefined()) return std::nullopt;
  return noted(key, reader_->choice(value, what, allowed));
}

bool MapReader::present(std::string_view key) const {
  return valid_ && std::any_of(node_.begin(), node_.end(),
                               [&](const auto& item) { return item.first.IsScalar() && item.first.Scalar() == key; });
}

bool MapReader::has_empty_key() const {
  return valid_ && std::any_of(node_.begin(), node_.end(), [](const auto& item) { return item.first.IsNull(); });
}

bool MapReader::refused(std::string_view key) const {
  if (std::find(refused_.begin(), refused_.end(), key) != refused_.end()) return true;
  return valid_ && !present(key) && misspelt(key);
}

std::vector<std::string> MapReader::refused_keys() const {
  std::vector<std::string> keys;
  for (const std::string& key : known_keys())
    if (refused(key)) keys.push_back(key);
  return keys;
}

std::vector<std::string> MapReader::undeclared_keys() const {
  std::vector<std::string> keys;
  if (!valid_) return keys;
  for (auto item : node_) {
    if (!item.first.IsScalar()) continue;
    const std::string& key = item.first.Scalar();
    if (std::find(declared_.begin(), declared_.end(), key) == declared_.end() &&
        std::find(keys.begin(), keys.end(), key) == keys.end())
      keys.push_back(key);
  }
  return keys;
}

std::vector<std::string> MapReader::known_keys() const {
  std::vector<std::string> known = declared_;
  std::sort(known.begin(), known.end());
  known.erase(std::unique(known.begin(), known.end()), known.end());
  return known;
}

std::vector<std::string> MapReader::unused_keys() const {
  std::vector<std::string> unused;
  for (const std::string& key : known_keys())
    if (!present(key)) unused.push_back(key);
  return unused;
}

namespace {
// `{mean_busy:20ms}` is one key, "mean_busy:20ms", with no value: YAML needs a space after a mapping's
// colon. The declared key it begins with, or empty.
std::string run_together_key(const std::string& key, const std::vector<std::string>& known) {
  const std::size_t colon = key.find(':');
  if (colon == std::string::npos) return {};
  const std::string head = key.substr(0, colon);
  return std::binary_search(known.begin(), known.end(), head) ? head : std::string();
}

// The declared keys an unknown one may stand for: a run-together key's head, else meant_by's.
std::vector<std::string> intended_keys(const std::string& key, const std::vector<std::string>& known) {
  if (std::string head = run_together_key(key, known); !head.empty()) return {std::move(head)};
  return meant_by(key, known);
}
}  // namespace

// Among the keys not given first: a key the mapping has is not what a typo next to it meant
// ("m" beside "a" is "mu", not a second "a").
bool MapReader::misspelt_by_name(std::string_view key) const {
  if (!valid_) return false;
  const std::vector<std::string> known = known_keys();
  const std::vector<std::string> unused = unused_keys();
  for (auto item : node_) {
    if (!item.first.IsScalar() || std::binary_search(known.begin(), known.end(), item.first.Scalar())) continue;
    const std::vector<std::string> meant = intended_keys(item.first.Scalar(), unused);
    if (std::find(meant.begin(), meant.end(), key) != meant.end()) return true;
  }
  return false;
}

bool MapReader::misspelt(std::string_view key) const {
  return misspelt_by_name(key) || (has_empty_key() && !present(key));
}

void MapReader::declare_all_but_misspellings_of(const std::string& key) {
  for (const std::string& other : undeclared_keys())
    if (intended_keys(other, {key}).empty()) declared_.push_back(other);
}

// `finishing`: finish() reports the unknown keys, so a missing key one of them misspells is said there.
void MapReader::report_missing(bool finishing) {
  for (Absent& absent : absent_) {
    if (finishing && std::any_of(absent.keys.begin(), absent.keys.end(),
                                 [&](const std::string& key) { return misspelt_by_name(key); }))
      continue;
    if (finishing && has_empty_key())
      unnamed_.insert(unnamed_.end(), absent.keys.begin(), absent.keys.end());
    else
      reader_->error(absent.at, std::move(absent.message));
  }
  absent_.clear();
}

// A reader left unfinished reports no unknown key, so its missing keys are all said here.
MapReader::~MapReader() { report_missing(false); }

void MapReader::finish() {
  report_missing(true);
  if (!valid_) return;
  const std::vector<std::string> known = known_keys();
  std::vector<std::string> seen;
  const std::vector<std::string> unused = unused_keys();
  for (auto item : node_) {
    if (item.first.IsNull()) {
      // The key's name deleted: what it was is one of the required keys missing, else one not given.
      std::vector<std::string> meant = unnamed_.empty() ? unused : unnamed_;
      std::sort(meant.begin(), meant.end());
      meant.erase(std::unique(meant.begin(), meant.end()), meant.end());
      const std::string hint = meant.empty()       ? std::string()
                               : meant.size() <= 4 ? fmt::format("; did you mean {}?", quoted_alternatives(meant))
                                                   : fmt::format("; expected one of: {}", fmt::join(meant, ", "));
      reader_->error(item.first, fmt::format("empty key in {} (nothing before the colon){}", context_, hint));
      continue;
    }
    const std::string key = item.first.IsScalar() ? item.first.Scalar() : std::string("?");
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      // yaml-cpp keeps both entries and lookups find the first: the second would be ignored silently.
      reader_->error(item.first, fmt::format("duplicate key '{}' in {}", key, context_));
      continue;
    }
    seen.push_back(key);
    // A key an override created has no place in the file: its value is located at the --set that made it.
    const YAML::Node& at = reader_->where(item.first).line > 0 ? item.first : item.second;
    if (std::binary_search(known.begin(), known.end(), key)) continue;
    if (const std::string head = run_together_key(key, known); !head.empty())
      reader_->error(at, fmt::format("unknown key '{}' in {}; did you mean '{}: {}'? (YAML needs a space after the "
                                     "colon)",
                                     key, context_, head, key.substr(head.size() + 1)));
    else
      reader_->error(at, fmt::format("unknown key '{}' in {}{}", key, context_,
                                     suggestion_suffix(key, meant_by(key, unused).empty() ? known : unused)));
  }
}

}  // namespace dnnsim
