#include "models/common/option_reader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace dnnsim {
namespace {

std::int64_t integer_bound(double bound) {
  constexpr auto lowest = std::numeric_limits<std::int64_t>::min();
  constexpr auto highest = std::numeric_limits<std::int64_t>::max();
  if (bound <= -9.2e18) return lowest;
  if (bound >= 9.2e18) return highest;
  return static_cast<std::int64_t>(bound);
}

std::optional<std::int64_t> read_integer(YamlReader& reader, const YAML::Node& node, const OptionSpec& spec) {
  return reader.integer(node, integer_bound(std::ceil(spec.min)), integer_bound(std::floor(spec.max)));
}

std::optional<double> read_number(YamlReader& reader, const YAML::Node& node, const OptionSpec& spec) {
  return reader.number(node, std::isfinite(spec.min) ? spec.min : -std::numeric_limits<double>::max(),
                       std::isfinite(spec.max) ? spec.max : std::numeric_limits<double>::max());
}

std::optional<double> read_quantity(YamlReader& reader, const YAML::Node& node, const OptionSpec& spec) {
  const auto value = reader.quantity(node, spec.dimension);
  if (value && (*value < spec.min || *value > spec.max)) {
    reader.error(
        node, fmt::format("expected {} {}, got {}", dimension_name(spec.dimension), spec.range_text(), node.Scalar()));
    return std::nullopt;
  }
  return value;
}

// A list of `what`, each item read by `read_item`; nothing (after every item's report) when the node is
// not a list or an item is wrong.
template <class T, class ReadItem>
std::optional<OptionValue> read_list(YamlReader& reader, const YAML::Node& node, const char* what, ReadItem read_item) {
  std::vector<T> values;
  bool ok = node.IsDefined() && node.IsSequence();
  for (const YAML::Node& item : reader.list(node, what)) {
    if (auto v = read_item(item))
      values.push_back(*v);
    else
      ok = false;
  }
  return ok ? std::optional<OptionValue>(std::move(values)) : std::nullopt;
}

// One option's value; nothing (after a report) when it is wrong.
std::optional<OptionValue> read_value(YamlReader& reader, const YAML::Node& node, const OptionSpec& spec,
                                      const PathResolver& resolve) {
  switch (spec.type) {
    case OptionType::boolean:
      if (auto v = reader.boolean(node)) return OptionValue(*v);
      return std::nullopt;
    case OptionType::integer:
      if (auto v = read_integer(reader, node, spec)) return OptionValue(*v);
      return std::nullopt;
    case OptionType::number:
      if (auto v = read_number(reader, node, spec)) return OptionValue(*v);
      return std::nullopt;
    case OptionType::quantity:
      if (auto v = read_quantity(reader, node, spec)) return OptionValue(*v);
      return std::nullopt;
    case OptionType::choice:
      if (auto v = reader.choice(node, spec.name, spec.choices)) return OptionValue(*v);
      return std::nullopt;
    case OptionType::file:
      if (auto v = reader.string(node)) return OptionValue(resolve ? resolve(*v) : *v);
      return std::nullopt;
    case OptionType::text:
      if (auto v = reader.string(node)) {
        if (std::string why = spec.check ? spec.check(*v) : std::string{}; !why.empty()) {
          reader.error(node, why);
          return std::nullopt;
        }
        return OptionValue(*v);
      }
      return std::nullopt;
    case OptionType::integers:
      return read_list<std::int64_t>(reader, node, "integers",
                                     [&](const YAML::Node& item) { return read_integer(reader, item, spec); });
    case OptionType::numbers:
      return read_list<double>(reader, node, "numbers",
                               [&](const YAML::Node& item) { return read_number(reader, item, spec); });
    case OptionType::quantities:
      return read_list<double>(reader, node, "values with units",
                               [&](const YAML::Node& item) { return read_quantity(reader, item, spec); });
    case OptionType::quantity_map: {
      if (!node.IsDefined() || !node.IsMap()) {
        reader.error(node, fmt::format("expected a mapping of names to {}", dimension_name(spec.dimension)));
        return std::nullopt;
      }
      NamedQuantities values;
      bool ok = true;
      for (const auto& item : node) {
        auto key = reader.string(item.first);
        auto value = read_quantity(reader, item.second, spec);
        if (key && value)
          values.emplace_back(*key, *value);
        else
          ok = false;
      }
      return ok ? std::optional<OptionValue>(std::move(values)) : std::nullopt;
    }
    case OptionType::choices: {
      std::vector<std::string> values;
      bool ok = node.IsDefined() && node.IsSequence();
      for (const YAML::Node& item : reader.list(node, spec.name)) {
        auto v = reader.choice(item, spec.name, spec.choices);
        if (v && std::find(values.begin(), values.end(), *v) != values.end()) {
          reader.error(item, fmt::format("'{}' is listed twice", *v));
          ok = false;
        } else if (v) {
          values.push_back(*v);
        } else {
          ok = false;
        }
      }
      return ok ? std::optional<OptionValue>(std::move(values)) : std::nullopt;
    }
  }
  return std::nullopt;
}

std::string its_options(const OptionSchema& schema) {
  return schema.empty() ? "it has no options" : fmt::format("its options: {}", fmt::join(schema.names(), ", "));
}

// The other entries of the catalog that have option `key`.
std::vector<std::string> owners_of(const std::string& key, const OptionSchema& schema,
                                   const std::vector<EntryOptions>& catalog) {
  std::vector<std::string> owners;
  for (const EntryOptions& other : catalog)
    if (other.schema.get() != &schema && other.schema->find(key) != nullptr) owners.push_back(other.name);
  return owners;
}

// The option an unknown key misspells: none when another entry has that key (it is no typo).
std::string misspelt_option(const std::string& key, const OptionSchema& schema,
                            const std::vector<EntryOptions>& catalog) {
  return owners_of(key, schema, catalog).empty() ? closest_match(key, schema.names()) : std::string();
}

// "… has no option 'policy' (an option of dapple); its options: group".
std::string unknown_option(const std::string& owner, const std::string& key, const OptionSchema& schema,
                           const std::vector<EntryOptions>& catalog) {
  if (const std::vector<std::string> owners = owners_of(key, schema, catalog); !owners.empty())
    return fmt::format("{} has no option '{}' (an option of {}); {}", owner, key, fmt::join(owners, ", "),
                       its_options(schema));
  const std::string close = misspelt_option(key, schema, catalog);
  return fmt::format("{} has no option '{}'{}; {}", owner, key,
                     close.empty() ? "" : fmt::format(" (did you mean '{}'?)", close), its_options(schema));
}

}  // namespace

Options read_options(MapReader& map, const std::shared_ptr<const OptionSchema>& schema, const std::string& owner,
                     const std::vector<EntryOptions>& catalog, const PathResolver& resolve) {
  YamlReader& reader = map.reader();
  Options options(schema, owner);
  options.set_origin(reader.where(map.node()));
  if (!map.valid()) return options;
  std::vector<std::string> misspelt;  // the options the unknown keys suggest
  for (const std::string& key : map.undeclared_keys()) {
    const YAML::Node node = map.get(key);
    const OptionSpec* spec = schema->find(key);
    if (spec == nullptr) {
      misspelt.push_back(misspelt_option(key, *schema, catalog));
      YAML::Node key_node;
      for (auto item : map.node())
        if (item.first.IsScalar() && item.first.Scalar() == key) key_node = item.first;
      reader.error(key_node, unknown_option(owner, key, *schema, catalog));
      options.set_refused();
      continue;
    }
    if (node.IsScalar() &&
        std::find(spec->keywords.begin(), spec->keywords.end(), node.Scalar()) != spec->keywords.end()) {
      options.set_keyword(key, node.Scalar(), reader.where(node));
      continue;
    }
    const std::size_t first = reader.sink().size();
    if (auto value = read_value(reader, node, *spec, resolve))
      options.set(key, std::move(*value), reader.where(node));
    else
      options.set_refused();
    reader.sink().prefix_from(first, fmt::format("option '{}' of {}: ", key, owner));
  }
  for (const OptionSpec& spec : schema->specs())
    if (spec.required && !options.given(spec.name)) {
      // "tabels" already said "did you mean 'tables'?": one mistake, one error.
      if (std::find(misspelt.begin(), misspelt.end(), spec.name) == misspelt.end())
        reader.error(map.node(), fmt::format("{} needs option '{}' ({})", owner, spec.name, spec.doc));
      options.set_refused();
    }
  return options;
}

std::optional<EntrySelection> read_entry(YamlReader& reader, const YAML::Node& node, const std::string& what,
                                         const std::vector<EntryOptions>& entries, std::string_view name_key,
                                         const PathResolver& resolve) {
  std::vector<std::string> names;
  for (const EntryOptions& entry : entries) names.push_back(entry.name);
  auto find = [&](const std::string& name) -> const EntryOptions* {
    for (const EntryOptions& entry : entries)
      if (entry.name == name) return &entry;
    return nullptr;
  };
  auto owner = [&](const std::string& name) { return fmt::format("{} '{}'", what, name); };
  if (node.IsDefined() && node.IsScalar()) {
    const auto name = reader.choice(node, what, names);
    if (!name) return std::nullopt;
    const EntryOptions* entry = find(*name);
    for (const OptionSpec& spec : entry->schema->specs())
      if (spec.required)
        reader.error(node, fmt::format("{} needs option '{}' ({}): write {{{}: {}, {}: …}}", owner(*name), spec.name,
                                       spec.doc, name_key, *name, spec.name));
    Options options(entry->schema, owner(*name));
    options.set_origin(reader.where(node));
    for (const OptionSpec& spec : entry->schema->specs())
      if (spec.required) options.set_refused();
    return EntrySelection{*name, std::move(options)};
  }
  MapReader map(reader, node, fmt::format("the {}", what));
  if (!map.valid()) return std::nullopt;
  const auto name = map.choice(name_key, what, names, true);
  if (!name) {
    // Declare the rest so that an unknown entry is one error, not one per option.
    for (const std::string& key : map.undeclared_keys()) (void)map.get(key);
    return std::nullopt;
  }
  Options options = read_options(map, find(*name)->schema, owner(*name), entries, resolve);
  map.finish();
  return EntrySelection{*name, std::move(options)};
}

}  // namespace dnnsim
