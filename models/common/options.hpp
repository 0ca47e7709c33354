// Declared, typed options of a registry entry (a schedule, a planner, a job scheduler, a sync policy…),
// after ns-3's TypeId::AddAttribute and SimGrid's config::Flag: each entry declares every option it
// reads — name, type (with its unit), default, range or choices and a line of documentation — in its
// own file, and receives them parsed and checked by one shared reader (option_reader.hpp). So adding
// an option to an entry touches that entry's file only; `dnnsim list KIND --options` and the tables of
// docs/scenarios.md are generated from the same declarations and cannot drift from them.
//
// Values are held in the SI base unit of their dimension (seconds, bytes, …) and read back as the
// strong types of units.hpp. Asking for an option the schema does not declare, or as another type,
// is a programming error (std::logic_error), not bad input.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "models/common/diagnostics.hpp"
#include "models/common/units.hpp"

namespace dnnsim {

enum class OptionType {
  boolean,       // true | false
  integer,       // a whole number
  number,        // a real number without a unit (a ratio, a weight)
  quantity,      // a number with a unit of OptionSpec::dimension ("60s", "25MB")
  choice,        // one of OptionSpec::choices
  integers,      // a list of whole numbers
  numbers,       // a list of real numbers
  quantities,    // a list of numbers with units of OptionSpec::dimension
  quantity_map,  // a mapping from names to numbers with units ({bert: "440MB"}), in the order written
  choices,       // a list of distinct OptionSpec::choices
  file,          // a path, resolved against the scenario's folder
  text,          // a string an entry parses itself (a pipeline layout), checked by the entry
};

using NamedQuantities = std::vector<std::pair<std::string, double>>;
using OptionValue = std::variant<bool, std::int64_t, double, std::string, std::vector<std::int64_t>,
                                 std::vector<double>, std::vector<std::string>, NamedQuantities>;

struct OptionSpec {
  std::string name;
  OptionType type = OptionType::number;
  Dimension dimension = Dimension::seconds;  // quantity, quantities, quantity_map
  // The value when the option is not given; none: the option is absent (Options::given is false and
  // the entry decides what that means, e.g. "as many as the micro-batches").
  std::optional<OptionValue> fallback;
  double min = -std::numeric_limits<double>::infinity();  // integer, number, quantity and their lists
  double max = std::numeric_limits<double>::infinity();   // (each element), in the base unit
  std::vector<std::string> choices;                       // choice, choices
  std::vector<std::string> keywords;  // words accepted instead of a value ("auto"): Options::keyword
  bool required = false;
  // text: why a value is refused (its syntax, which the entry parses), empty when it is accepted;
  // the reader reports it at the value. None: every string is accepted.
  std::function<std::string(const std::string&)> check;
  std::string doc;  // one line: what it is for, with its source where the entry's paper names it

  // For listings and docs: "integer", "duration", "one of A, B", "list of integers"; the default as
  // written in YAML ("60s", "none"); the range ("≥ 1", "[0, 0.99]", "" when unbounded).
  [[nodiscard]] std::string type_text() const;
  [[nodiscard]] std::string default_text() const;
  [[nodiscard]] std::string range_text() const;
};

class OptionSchema {
 public:
  // Refines the option just declared: schema.integer("group", 1, "…").at_least(1).
  class Builder {
   public:
    Builder(OptionSchema& schema, std::size_t index) : schema_(&schema), index_(index) {}
    Builder& range(double min, double max);
    Builder& at_least(double min);
    Builder& below(double max);  // max inclusive
    Builder& required();
    Builder& keywords(std::vector<std::string> words);
    Builder& check(std::function<std::string(const std::string&)> why_refused);  // text options

   private:
    OptionSpec& spec();
    OptionSchema* schema_;
    std::size_t index_;
  };

  Builder boolean(std::string name, std::optional<bool> fallback, std::string doc);
  Builder integer(std::string name, std::optional<std::int64_t> fallback, std::string doc);
  Builder number(std::string name, std::optional<double> fallback, std::string doc);
  template <class Q>
  Builder quantity(std::string name, std::optional<Q> fallback, std::string doc);
  Builder choice(std::string name, std::optional<std::string> fallback, std::vector<std::string> choices,
                 std::string doc);
  Builder integers(std::string name, std::vector<std::int64_t> fallback, std::string doc);
  Builder numbers(std::string name, std::vector<double> fallback, std::string doc);
  template <class Q>
  Builder quantities(std::string name, std::vector<Q> fallback, std::string doc);
  // Names to quantities; absent unless given.
  template <class Q>
  Builder quantity_map(std::string name, std::string doc);
  Builder choice_list(std::string name, std::vector<std::string> fallback, std::vector<std::string> choices,
                      std::string doc);
  Builder file(std::string name, std::string doc);
  Builder text(std::string name, std::optional<std::string> fallback, std::string doc);

  [[nodiscard]] const OptionSpec* find(std::string_view name) const;
  [[nodiscard]] const std::vector<OptionSpec>& specs() const { return specs_; }
  [[nodiscard]] std::vector<std::string> names() const;
  [[nodiscard]] bool empty() const { return specs_.empty(); }

 private:
  Builder add(OptionSpec spec);
  std::vector<OptionSpec> specs_;  // in declaration order: listings follow it
};

// An entry's options as read: every declared option with its value (given or default).
class Options {
 public:
  Options();  // no options at all (an entry that declares none)
  // Every option at its default. `owner` names the entry in messages ("schedule 'kfkb'").
  Options(std::shared_ptr<const OptionSchema> schema, std::string owner);

  [[nodiscard]] bool flag(std::string_view name) const;
  [[nodiscard]] std::int64_t integer(std::string_view name) const;
  [[nodiscard]] double number(std::string_view name) const;
  template <class Q>
  [[nodiscard]] Q quantity(std::string_view name) const;
  [[nodiscard]] const std::string& choice(std::string_view name) const;
  [[nodiscard]] const std::vector<std::int64_t>& integers(std::string_view name) const;
  [[nodiscard]] const std::vector<double>& numbers(std::string_view name) const;
  template <class Q>
  [[nodiscard]] std::vector<Q> quantities(std::string_view name) const;
  // A quantity_map option's entries, in the order written; empty when not given.
  template <class Q>
  [[nodiscard]] std::vector<std::pair<std::string, Q>> quantity_map(std::string_view name) const;
  [[nodiscard]] const std::vector<std::string>& choice_list(std::string_view name) const;
  [[nodiscard]] const std::string& text(std::string_view name) const;
  // A file option's resolved path; none when not given.
  [[nodiscard]] std::optional<std::string> file(std::string_view name) const;

  // Whether the option has a value (given, or declared with a default).
  [[nodiscard]] bool has(std::string_view name) const;
  // Whether the scenario gave it (its defaults are not "given").
  [[nodiscard]] bool given(std::string_view name) const;
  // The keyword given instead of a value ("auto"), if one was.
  [[nodiscard]] std::optional<std::string> keyword(std::string_view name) const;
  // Where the option was given (its section when it was not), for an entry's own checks.
  [[nodiscard]] SourceLocation where(std::string_view name) const;
  [[nodiscard]] const SourceLocation& origin() const { return origin_; }
  [[nodiscard]] const std::string& owner() const { return owner_; }
  [[nodiscard]] const OptionSchema& schema() const { return *schema_; }
  // Whether the reader took every option written and found every required one: an entry built from
  // options it refused would report what follows from the defaults put in their place (an error
  // already reported, told again as another).
  [[nodiscard]] bool read_cleanly() const { return read_cleanly_; }
  void set_refused() { read_cleanly_ = false; }

  // Sets a value: by the reader (with where it was written) or by code that makes an entry itself
  // (Ada-Grouper's kfkb of group k). @throw std::logic_error when the type or range is wrong.
  void set(std::string_view name, OptionValue value, SourceLocation where = {});
  void set_keyword(std::string_view name, std::string word, SourceLocation where = {});
  void set_origin(SourceLocation where) { origin_ = std::move(where); }

  // An entry's own check of its options (a cross-option constraint) failed: an InputError at the
  // option, naming the entry ("schedule 'kfkb': group 9 is larger than the 8 micro-batches").
  [[nodiscard]] InputError error(std::string_view name, std::string_view message) const;

 private:
  struct Value {
    std::optional<OptionValue> value;
    std::optional<std::string> keyword;
    bool given = false;
    SourceLocation where;
  };
  [[nodiscard]] const OptionSpec& spec(std::string_view name) const;
  [[nodiscard]] const Value& slot(std::string_view name) const;
  template <class T>
  [[nodiscard]] const T& get(std::string_view name, OptionType type) const;

  std::shared_ptr<const OptionSchema> schema_;
  std::string owner_;
  SourceLocation origin_;
  std::map<std::string, Value, std::less<>> values_;
  bool read_cleanly_ = true;
};

// The schema as a Markdown table (| option | type | default | range | description |), for
// docs/scenarios.md; and as indented text lines for `dnnsim list KIND --options`.
[[nodiscard]] std::string options_markdown(const OptionSchema& schema);
[[nodiscard]] std::string options_text(const OptionSchema& schema, std::string_view indent);

template <class Q>
constexpr Dimension dimension_of() {
  if constexpr (std::is_same_v<Q, Bytes>) return Dimension::bytes;
  if constexpr (std::is_same_v<Q, Seconds>) return Dimension::seconds;
  if constexpr (std::is_same_v<Q, Flop>) return Dimension::flop;
  if constexpr (std::is_same_v<Q, BytesPerSecond>) return Dimension::bandwidth;
  if constexpr (std::is_same_v<Q, FlopsPerSecond>) return Dimension::flop_rate;
}

template <class Q>
OptionSchema::Builder OptionSchema::quantity(std::string name, std::optional<Q> fallback, std::string doc) {
  OptionSpec spec{std::move(name), OptionType::quantity, dimension_of<Q>()};
  if (fallback) spec.fallback = OptionValue(fallback->value());
  spec.doc = std::move(doc);
  return add(std::move(spec));
}

template <class Q>
OptionSchema::Builder OptionSchema::quantities(std::string name, std::vector<Q> fallback, std::string doc) {
  OptionSpec spec{std::move(name), OptionType::quantities, dimension_of<Q>()};
  std::vector<double> values;
  for (Q q : fallback) values.push_back(q.value());
  spec.fallback = OptionValue(std::move(values));
  spec.doc = std::move(doc);
  return add(std::move(spec));
}

template <class Q>
OptionSchema::Builder OptionSchema::quantity_map(std::string name, std::string doc) {
  OptionSpec spec{std::move(name), OptionType::quantity_map, dimension_of<Q>()};
  spec.doc = std::move(doc);
  return add(std::move(spec));
}

template <class Q>
std::vector<std::pair<std::string, Q>> Options::quantity_map(std::string_view name) const {
  std::vector<std::pair<std::string, Q>> result;
  if (!has(name)) return result;
  for (const auto& [key, value] : get<NamedQuantities>(name, OptionType::quantity_map))
    result.emplace_back(key, Q(value));
  return result;
}

template <class Q>
Q Options::quantity(std::string_view name) const {
  return Q(get<double>(name, OptionType::quantity));
}

template <class Q>
std::vector<Q> Options::quantities(std::string_view name) const {
  std::vector<Q> result;
  for (double value : get<std::vector<double>>(name, OptionType::quantities)) result.push_back(Q(value));
  return result;
}

}  // namespace dnnsim
