// Reading user YAML (scenarios, layer lists, TaskGraph JSON — JSON is read through yaml-cpp too, so
// that its errors also carry line and column) with every problem reported at once:
// wrong types, out-of-range values, unit-less quantities and unknown keys with a suggestion.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/diagnostics.hpp"
#include "models/common/units.hpp"

namespace dnnsim {

// Reads scalars of one file and records what is wrong with them. Every reader method returns an
// empty optional after reporting a problem, so callers just skip the value and go on.
class YamlReader {
 public:
  YamlReader(std::string file, DiagnosticSink& sink) : file_(std::move(file)), sink_(&sink) {}

  // Loads a whole file; a syntax error is reported and an empty node returned.
  [[nodiscard]] YAML::Node load_file();
  // The same for text in memory (file() names it in messages).
  [[nodiscard]] YAML::Node load_text(const std::string& text);

  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] SourceLocation where(const YAML::Node& node) const;
  [[nodiscard]] SourceLocation where(const YAML::Mark& mark) const;
  void error(const YAML::Node& node, std::string message);
  // Values put into the tree by the CLI's --set (`origin` = the assignment): problems with them are
  // located at the assignment, not at a line of the file.
  void add_override(const YAML::Node& value, std::string origin);
  [[nodiscard]] DiagnosticSink& sink() { return *sink_; }

  [[nodiscard]] std::optional<std::string> string(const YAML::Node& node);
  // The elements of a list; anything else is reported as "expected a list of <what>" and gives none.
  [[nodiscard]] std::vector<YAML::Node> list(const YAML::Node& node, std::string_view what);
  [[nodiscard]] std::optional<bool> boolean(const YAML::Node& node);
  [[nodiscard]] std::optional<std::int64_t> integer(const YAML::Node& node, std::int64_t min, std::int64_t max);
  [[nodiscard]] std::optional<double> number(const YAML::Node& node, double min, double max);
  // One of `allowed`; otherwise "unknown X 'y'; did you mean 'z'?".
  [[nodiscard]] std::optional<std::string> choice(const YAML::Node& node, std::string_view what,
                                                  const std::vector<std::string>& allowed);
  // A string with a unit (see units.hpp); a non-zero bare number is an error.
  [[nodiscard]] std::optional<double> quantity(const YAML::Node& node, Dimension dimension);
  template <class Q>
  [[nodiscard]] std::optional<Q> quantity(const YAML::Node& node);

 private:
  std::string file_;
  DiagnosticSink* sink_;
  std::vector<std::pair<YAML::Node, std::string>> overrides_;
};

// A mapping whose keys are declared as they are read; `finish()` reports every key that was never
// asked for as unknown, with a did-you-mean among the declared ones.
class MapReader {
 public:
  // Reports "expected a mapping for <context>" when `node` is something else.
  MapReader(YamlReader& reader, const YAML::Node& node, std::string context);

  [[nodiscard]] bool valid() const { return valid_; }
  [[nodiscard]] const YAML::Node& node() const { return node_; }
  [[nodiscard]] YamlReader& reader() { return *reader_; }

  // The value of `key`, or an undefined node when absent. Declares the key as known.
  [[nodiscard]] YAML::Node get(std::string_view key);
  // Like get(), but reports "missing key 'x' in <context>" when absent.
  [[nodiscard]] YAML::Node require(std::string_view key);
  [[nodiscard]] bool has(std::string_view key);

  // Typed shortcuts: absent → std::nullopt (or an error when required).
  [[nodiscard]] std::optional<std::string> string(std::string_view key, bool required = false);
  [[nodiscard]] std::optional<bool> boolean(std::string_view key);
  [[nodiscard]] std::optional<std::int64_t> integer(std::string_view key, std::int64_t min, std::int64_t max,
                                                    bool required = false);
  [[nodiscard]] std::optional<double> number(std::string_view key, double min, double max, bool required = false);
  [[nodiscard]] std::optional<std::string> choice(std::string_view key, const std::vector<std::string>& allowed,
                                                  bool required = false);
  // Same, naming the value `what` in messages ("unknown GPU 'x'") instead of the key.
  [[nodiscard]] std::optional<std::string> choice(std::string_view key, std::string_view what,
                                                  const std::vector<std::string>& allowed, bool required = false);
  template <class Q>
  [[nodiscard]] std::optional<Q> quantity(std::string_view key, bool required = false);
  // Same, for a quantity that only makes sense above zero (a capacity, a rate, a period): 0 is
  // reported as "key must be positive" and `reason` appended (negative values are refused by the
  // unit parser already).
  template <class Q>
  [[nodiscard]] std::optional<Q> positive_quantity(std::string_view key, bool required = false,
                                                   std::string_view reason = {});

  // Whether `key` was given and a typed shortcut above refused its value (and reported why), or is
  // absent while the mapping holds its misspelling (misspelt()): a check that combines it with other
  // keys skips it rather than judge the default put in its place.
  [[nodiscard]] bool refused(std::string_view key) const;
  [[nodiscard]] std::vector<std::string> refused_keys() const;

  // The keys of the mapping not declared so far, in file order, each once: what a reader of the rest
  // of a section (an entry's options, option_reader.hpp) takes over.
  [[nodiscard]] std::vector<std::string> undeclared_keys() const;

  // For a check that none of `keys` is given ("give exactly one of 'trace' and 'generator'"):
  // `message` is reported at `at` in finish(), unless an unknown key misspells one of them — that
  // key's error names it, and one mistake is one error.
  void none_given(std::vector<std::string> keys, const YAML::Node& at, std::string message);
  // For "give exactly one of …": `message` at `at` when several of `keys` are given (now) or none (as
  // none_given()); nothing when one is.
  void exactly_one_of(std::vector<std::string> keys, const YAML::Node& at, std::string message);

  // Whether the mapping holds a key never declared whose closest declared key is `key`: finish()
  // reports it as unknown and suggests `key`, so a check that `key` is absent need not say so too.
  [[nodiscard]] bool misspelt(std::string_view key) const;

  // After a misspelt `key` that decides what the other keys mean (a kind): declares every other key
  // but its misspellings, so that finish() reports the misspelling alone.
  void declare_all_but_misspellings_of(const std::string& key);

  // Reports unknown keys, and the missing required keys no unknown key is a misspelling of. Call
  // once, after every get().
  void finish();
  ~MapReader();
  MapReader(const MapReader&) = delete;
  MapReader& operator=(const MapReader&) = delete;

 private:
  [[nodiscard]] YAML::Node lookup(std::string_view key, bool required);
  // Reports the value of `key` (read) as not positive, with `reason`, and marks it refused.
  void refuse_not_positive(std::string_view key, std::string_view reason);
  template <class T>
  std::optional<T> noted(std::string_view key, std::optional<T> value) {
    if (!value) refused_.emplace_back(key);
    return value;
  }

  [[nodiscard]] std::vector<std::string> known_keys() const;
  // The declared keys the mapping does not give, sorted: what an unknown key most likely stands for.
  [[nodiscard]] std::vector<std::string> unused_keys() const;
  [[nodiscard]] bool present(std::string_view key) const;
  // Whether a key of the mapping is empty (`: 4`, a key's name deleted): it may stand for any absent key.
  [[nodiscard]] bool has_empty_key() const;
  [[nodiscard]] bool misspelt_by_name(std::string_view key) const;
  void report_missing(bool finishing);

  YamlReader* reader_;
  YAML::Node node_;
  std::string context_;
  bool valid_ = false;
  std::vector<std::string> declared_;
  std::vector<std::string> refused_;
  // Keys found absent while the mapping has a key that may be their misspelling, with what to say
  // if it is not: decided in finish(), once every key is declared ("scenrio" is one mistake, not
  // also "missing key 'scenario'").
  struct Absent {
    std::vector<std::string> keys;
    YAML::Node at;
    std::string message;
  };
  std::vector<Absent> absent_;
  // The keys of the Absent entries an empty key stands for, offered at it by finish().
  std::vector<std::string> unnamed_;
};

template <class Q>
std::optional<Q> YamlReader::quantity(const YAML::Node& node) {
  Dimension dimension{};
  if constexpr (std::is_same_v<Q, Bytes>) dimension = Dimension::bytes;
  if constexpr (std::is_same_v<Q, Seconds>) dimension = Dimension::seconds;
  if constexpr (std::is_same_v<Q, Flop>) dimension = Dimension::flop;
  if constexpr (std::is_same_v<Q, BytesPerSecond>) dimension = Dimension::bandwidth;
  if constexpr (std::is_same_v<Q, FlopsPerSecond>) dimension = Dimension::flop_rate;
  if (auto value = quantity(node, dimension)) return Q(*value);
  return std::nullopt;
}

template <class Q>
std::optional<Q> MapReader::quantity(std::string_view key, bool required) {
  YAML::Node value = lookup(key, required);
  if (!value.IsDefined()) return std::nullopt;
  return noted(key, reader_->quantity<Q>(value));
}

template <class Q>
std::optional<Q> MapReader::positive_quantity(std::string_view key, bool required, std::string_view reason) {
  std::optional<Q> q = quantity<Q>(key, required);
  if (!q || q->value() > 0) return q;
  refuse_not_positive(key, reason);
  return std::nullopt;
}

}  // namespace dnnsim
