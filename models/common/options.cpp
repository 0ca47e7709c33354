#include "models/common/options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dnnsim {
namespace {

// A quantity as the scenario would write it, without the space of the report formats ("60s", "25MiB").
std::string format_quantity(double value, Dimension dimension) {
  std::string text;
  switch (dimension) {
    case Dimension::bytes:
      text = format_bytes(Bytes(value));
      break;
    case Dimension::seconds:
      text = format_seconds(Seconds(value));
      break;
    case Dimension::flop:
      text = fmt::format("{:g}Flop", value);
      break;
    case Dimension::bandwidth:
      text = format_bandwidth(BytesPerSecond(value));
      break;
    case Dimension::flop_rate:
      text = format_flop_rate(FlopsPerSecond(value));
      break;
  }
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  return text;
}

std::string format_bound(double value, const OptionSpec& spec) {
  if (spec.type == OptionType::quantity || spec.type == OptionType::quantities || spec.type == OptionType::quantity_map)
    return format_quantity(value, spec.dimension);
  return fmt::format("{:g}", value);
}

bool is_bounded(double value) { return std::isfinite(value); }

bool within(double value, const OptionSpec& spec) { return value >= spec.min && value <= spec.max; }

}  // namespace

std::string OptionSpec::type_text() const {
  switch (type) {
    case OptionType::boolean:
      return "boolean";
    case OptionType::integer:
      return "integer";
    case OptionType::number:
      return "number";
    case OptionType::quantity: {
      const std::string_view name = dimension_name(dimension);  // "a duration" → "duration"
      return std::string(name.substr(name.find(' ') + 1));
    }
    case OptionType::choice:
      return fmt::format("one of {}", fmt::join(choices, ", "));
    case OptionType::integers:
      return "list of integers";
    case OptionType::numbers:
      return "list of numbers";
    case OptionType::quantities: {
      const std::string_view name = dimension_name(dimension);  // "a duration" → "durations"
      return fmt::format("list of {}s", name.substr(name.find(' ') + 1));
    }
    case OptionType::quantity_map: {
      const std::string_view name = dimension_name(dimension);
      return fmt::format("mapping of names to {}s", name.substr(name.find(' ') + 1));
    }
    case OptionType::choices:
      return fmt::format("list of {}", fmt::join(choices, ", "));
    case OptionType::file:
      return "file";
    case OptionType::text:
      return "text";
  }
  return "";
}

std::string OptionSpec::default_text() const {
  std::string text;
  if (fallback) {
    text = std::visit(
        [&](const auto& value) -> std::string {
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, bool>)
            return value ? "true" : "false";
          else if constexpr (std::is_same_v<T, double>)
            return type == OptionType::quantity ? format_quantity(value, dimension) : fmt::format("{:g}", value);
          else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::string>)
            return fmt::format("{}", value);
          else if constexpr (std::is_same_v<T, NamedQuantities>) {
            std::vector<std::string> texts;
            for (const auto& [key, v] : value)
              texts.push_back(fmt::format("{}: {}", key, format_quantity(v, dimension)));
            return fmt::format("{{{}}}", fmt::join(texts, ", "));
          } else if constexpr (std::is_same_v<T, std::vector<double>>) {
            if (type != OptionType::quantities) return fmt::format("[{}]", fmt::join(value, ", "));
            std::vector<std::string> texts;
            for (double v : value) texts.push_back(format_quantity(v, dimension));
            return fmt::format("[{}]", fmt::join(texts, ", "));
          } else
            return fmt::format("[{}]", fmt::join(value, ", "));
        },
        *fallback);
  }
  if (required) return "(required)";
  if (text.empty() || text == "[]") text = "none";
  return text;
}

std::string OptionSpec::range_text() const {
  const bool low = is_bounded(min);
  const bool high = is_bounded(max);
  std::string text;
  if (low && high)
    text = fmt::format("[{}, {}]", format_bound(min, *this), format_bound(max, *this));
  else if (low)
    text = fmt::format("≥ {}", format_bound(min, *this));
  else if (high)
    text = fmt::format("≤ {}", format_bound(max, *this));
  if (!keywords.empty()) text += fmt::format("{}or {}", text.empty() ? "" : ", ", fmt::join(keywords, ", "));
  return text;
}

// ---- OptionSchema ----------------------------------------------------------------------------------

OptionSpec& OptionSchema::Builder::spec() { return schema_->specs_[index_]; }

OptionSchema::Builder& OptionSchema::Builder::range(double min, double max) {
  spec().min = min;
  spec().max = max;
  return *this;
}
OptionSchema::Builder& OptionSchema::Builder::at_least(double min) {
  spec().min = min;
  return *this;
}
OptionSchema::Builder& OptionSchema::Builder::below(double max) {
  spec().max = max;
  return *this;
}
OptionSchema::Builder& OptionSchema::Builder::required() {
  spec().required = true;
  return *this;
}
OptionSchema::Builder& OptionSchema::Builder::keywords(std::vector<std::string> words) {
  spec().keywords = std::move(words);
  return *this;
}

OptionSchema::Builder& OptionSchema::Builder::check(std::function<std::string(const std::string&)> why_refused) {
  spec().check = std::move(why_refused);
  return *this;
}

OptionSchema::Builder OptionSchema::add(OptionSpec spec) {
  if (find(spec.name) != nullptr) throw std::logic_error(fmt::format("option '{}' declared twice", spec.name));
  specs_.push_back(std::move(spec));
  return Builder(*this, specs_.size() - 1);
}

OptionSchema::Builder OptionSchema::boolean(std::string name, std::optional<bool> fallback, std::string doc) {
  OptionSpec spec{std::move(name), OptionType::boolean};
  if (fallback) spec.fallback = OptionValue(*fallback);
  spec.doc = std::move(doc);
  return add(std::move(spec));
}

OptionSchema::Builder OptionSchema::integer(std::string name, std::optional<std::int64_t> fallback, std::string doc) {
  OptionSpec spec{std::move(name), OptionType::integer};
  if (fallback) spec.fallback = OptionValue(*fallback);
  spec.doc = std::move(doc);
  return add(std::move(spec));
}

OptionSchema::Builder OptionSchema::number(std::string name, std::optional<double> fallback, std::string doc) {
  OptionSpec spec{std::move(name), OptionType::number};
  if (fallback) spec.fallback = OptionValue(*fallback);
  spec.doc = std::move(doc);
  return add(std::move(spec));
}

OptionSchema::Builder OptionSchema::choice(std::string name, std::optional<std::string> fallback,
                                           std::vector<std::string> choices, std::string doc) {
  OptionSpec spec{std::move(name), OptionType::choice};
  if (fallback) spec.fallback = OptionValue(*fallback);
  spec.choices = std::move(choices);
  spec.doc = std::move(doc);
  return add(std::move(spec));
}

OptionSchema::Builder OptionSchema::integers(std::string name, std::vector<std::int64_t> fallback, std::string doc) {
  OptionSpec spec{std::move(name), OptionType::integers};
  spec.fallback = OptionValue(std::move(fallback));
  spec.doc = std::move(doc);
  return add(std::move(spec));
}

OptionSchema::Builder OptionSchema::numbers(std::string name, std::vector<double> fallback, std::string doc) {
  OptionSpec spec{std::move(name), OptionType::numbers};
  spec.fallback = OptionValue(std::move(fallback));
  spec.doc = std::move(doc);
  return add(std::move(spec));
}

OptionSchema::Builder OptionSchema::choice_list(std::string name, std::vector<std::string> fallback,
                                                std::vector<std::string> choices, std::string doc) {
  OptionSpec spec{std::move(name), OptionType::choices};
  spec.fallback = OptionValue(std::move(fallback));
  spec.choices = std::move(choices);
  spec.doc = std::move(doc);
  return add(std::move(spec));
}

OptionSchema::Builder OptionSchema::file(std::string name, std::string doc) {
  OptionSpec spec{std::move(name), OptionType::file};
  spec.doc = std::move(doc);
  return add(std::move(spec));
}

OptionSchema::Builder OptionSchema::text(std::string name, std::optional<std::string> fallback, std::string doc) {
  OptionSpec spec{std::move(name), OptionType::text};
  if (fallback) spec.fallback = OptionValue(std::move(*fallback));
  spec.doc = std::move(doc);
  return add(std::move(spec));
}

const OptionSpec* OptionSchema::find(std::string_view name) const {
  for (const OptionSpec& spec : specs_)
    if (spec.name == name) return &spec;
  return nullptr;
}

std::vector<std::string> OptionSchema::names() const {
  std::vector<std::string> result;
  for (const OptionSpec& spec : specs_) result.push_back(spec.name);
  return result;
}

// ---- Options ---------------------------------------------------------------------------------------

Options::Options() : Options(std::make_shared<const OptionSchema>(), "") {}

Options::Options(std::shared_ptr<const OptionSchema> schema, std::string owner)
    : schema_(std::move(schema)), owner_(std::move(owner)) {
  for (const OptionSpec& spec : schema_->specs()) values_[spec.name] = Value{spec.fallback, std::nullopt, false, {}};
}

const OptionSpec& Options::spec(std::string_view name) const {
  const OptionSpec* spec = schema_->find(name);
  if (spec == nullptr) throw std::logic_error(fmt::format("{} declares no option '{}'", owner_, name));
  return *spec;
}

const Options::Value& Options::slot(std::string_view name) const {
  (void)spec(name);
  return values_.find(name)->second;
}

template <class T>
const T& Options::get(std::string_view name, OptionType type) const {
  if (spec(name).type != type)
    throw std::logic_error(fmt::format("option '{}' of {} is a {}", name, owner_, spec(name).type_text()));
  const Value& value = slot(name);
  if (!value.value)
    throw std::logic_error(fmt::format("option '{}' of {} has no value (check has() first)", name, owner_));
  return std::get<T>(*value.value);
}

// Used by the quantity readers of the header.
template const double& Options::get<double>(std::string_view, OptionType) const;
template const std::vector<double>& Options::get<std::vector<double>>(std::string_view, OptionType) const;
template const NamedQuantities& Options::get<NamedQuantities>(std::string_view, OptionType) const;

bool Options::flag(std::string_view name) const { return get<bool>(name, OptionType::boolean); }
std::int64_t Options::integer(std::string_view name) const { return get<std::int64_t>(name, OptionType::integer); }
double Options::number(std::string_view name) const { return get<double>(name, OptionType::number); }
const std::string& Options::choice(std::string_view name) const { return get<std::string>(name, OptionType::choice); }
const std::vector<std::int64_t>& Options::integers(std::string_view name) const {
  return get<std::vector<std::int64_t>>(name, OptionType::integers);
}
const std::vector<double>& Options::numbers(std::string_view name) const {
  return get<std::vector<double>>(name, OptionType::numbers);
}
const std::vector<std::string>& Options::choice_list(std::string_view name) const {
  return get<std::vector<std::string>>(name, OptionType::choices);
}
const std::string& Options::text(std::string_view name) const { return get<std::string>(name, OptionType::text); }
std::optional<std::string> Options::file(std::string_view name) const {
  if (!has(name)) return std::nullopt;
  return get<std::string>(name, OptionType::file);
}

bool Options::has(std::string_view name) const { return slot(name).value.has_value(); }
bool Options::given(std::string_view name) const { return slot(name).given; }
std::optional<std::string> Options::keyword(std::string_view name) const { return slot(name).keyword; }
SourceLocation Options::where(std::string_view name) const {
  const Value& value = slot(name);
  return value.given ? value.where : origin_;
}

void Options::set(std::string_view name, OptionValue value, SourceLocation where) {
  const OptionSpec& option = spec(name);
  auto wrong = [&] {
    return std::logic_error(fmt::format("option '{}' of {}: value of the wrong type", name, owner_));
  };
  auto out_of_range = [&](double v) {
    return std::logic_error(fmt::format("option '{}' of {}: {} outside {}", name, owner_, v, option.range_text()));
  };
  switch (option.type) {
    case OptionType::boolean:
      if (!std::holds_alternative<bool>(value)) throw wrong();
      break;
    case OptionType::integer:
      if (!std::holds_alternative<std::int64_t>(value)) throw wrong();
      if (!within(static_cast<double>(std::get<std::int64_t>(value)), option))
        throw out_of_range(static_cast<double>(std::get<std::int64_t>(value)));
      break;
    case OptionType::number:
    case OptionType::quantity:
      if (!std::holds_alternative<double>(value)) throw wrong();
      if (!within(std::get<double>(value), option)) throw out_of_range(std::get<double>(value));
      break;
    case OptionType::choice:
      if (!std::holds_alternative<std::string>(value)) throw wrong();
      if (std::find(option.choices.begin(), option.choices.end(), std::get<std::string>(value)) == option.choices.end())
        throw wrong();
      break;
    case OptionType::file:
    case OptionType::text:
      if (!std::holds_alternative<std::string>(value)) throw wrong();
      break;
    case OptionType::integers:
      if (!std::holds_alternative<std::vector<std::int64_t>>(value)) throw wrong();
      for (std::int64_t v : std::get<std::vector<std::int64_t>>(value))
        if (!within(static_cast<double>(v), option)) throw out_of_range(static_cast<double>(v));
      break;
    case OptionType::numbers:
    case OptionType::quantities:
      if (!std::holds_alternative<std::vector<double>>(value)) throw wrong();
      for (double v : std::get<std::vector<double>>(value))
        if (!within(v, option)) throw out_of_range(v);
      break;
    case OptionType::choices:
      if (!std::holds_alternative<std::vector<std::string>>(value)) throw wrong();
      break;
    case OptionType::quantity_map:
      if (!std::holds_alternative<NamedQuantities>(value)) throw wrong();
      for (const auto& [key, v] : std::get<NamedQuantities>(value))
        if (!within(v, option)) throw out_of_range(v);
      break;
  }
  Value& slot = values_.find(name)->second;
  slot = Value{std::move(value), std::nullopt, true, std::move(where)};
}

void Options::set_keyword(std::string_view name, std::string word, SourceLocation where) {
  const OptionSpec& option = spec(name);
  if (std::find(option.keywords.begin(), option.keywords.end(), word) == option.keywords.end())
    throw std::logic_error(fmt::format("option '{}' of {} takes no keyword '{}'", name, owner_, word));
  Value& slot = values_.find(name)->second;
  slot.keyword = std::move(word);
  slot.given = true;
  slot.where = std::move(where);
}

InputError Options::error(std::string_view name, std::string_view message) const {
  return InputError(where(name), fmt::format("{}: {}", owner_, message));
}

// ---- listings --------------------------------------------------------------------------------------

namespace {
// A table cell: '|' would end it.
std::string cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else
      out += c;
  }
  return out;
}
}  // namespace

std::string options_markdown(const OptionSchema& schema) {
  if (schema.empty()) return "No options.\n";
  std::string text = "| option | type | default | range | description |\n|---|---|---|---|---|\n";
  for (const OptionSpec& spec : schema.specs())
    text += fmt::format("| `{}` | {} | {} | {} | {} |\n", spec.name, cell(spec.type_text()), cell(spec.default_text()),
                        cell(spec.range_text()), cell(spec.doc));
  return text;
}

std::string options_text(const OptionSchema& schema, std::string_view indent) {
  std::string text;
  for (const OptionSpec& spec : schema.specs()) {
    std::string line = fmt::format("{}{}: {}, default {}", indent, spec.name, spec.type_text(), spec.default_text());
    if (const std::string range = spec.range_text(); !range.empty()) line += fmt::format(", {}", range);
    text += fmt::format("{} — {}\n", line, spec.doc);
  }
  return text;
}

}  // namespace dnnsim
