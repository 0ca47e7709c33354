// The one reader of registry entries chosen in a scenario and of their declared options
// (options.hpp): `schedule: 1f1b` or `schedule: {name: kfkb, group: 2}`, `sync: {policy: ssp,
// staleness: 8}`. Every problem is reported at once and located: an unknown entry with "did you
// mean", an option the entry does not declare (naming the entry that does, and the entry's own
// options), a wrong type, a missing or wrong unit, a value out of range, a missing required option.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/options.hpp"
#include "models/common/registry.hpp"
#include "models/common/yaml_reader.hpp"

namespace dnnsim {

// Turns a path written in the scenario into one the program can open (relative to the scenario's
// folder); identity by default.
using PathResolver = std::function<std::string(const std::string&)>;

// Reads the options of `owner` (an entry's schema) from the keys of `map` that the caller has not
// declared itself; call after the caller's own map.get/has calls and before map.finish() — which then
// finds no unknown key, since every remaining key is reported here. `catalog` is the registry's
// (Registry::catalog), so that an option of another entry given to this one says whose option it is.
[[nodiscard]] Options read_options(MapReader& map, const std::shared_ptr<const OptionSchema>& schema,
                                   const std::string& owner, const std::vector<EntryOptions>& catalog,
                                   const PathResolver& resolve = {});

struct EntrySelection {
  std::string name;
  Options options;
};

// The entry named at `node` among `entries` (a registry's catalog), `what` naming the registry in messages.
[[nodiscard]] std::optional<EntrySelection> read_entry(YamlReader& reader, const YAML::Node& node,
                                                       const std::string& what,
                                                       const std::vector<EntryOptions>& entries,
                                                       std::string_view name_key, const PathResolver& resolve);

// `key: name` or `key: {<name_key>: name, option: value, …}`: the entry of `registry` and its options.
// Empty after reporting the problem when the entry is unknown or the node is neither form.
template <class Value>
[[nodiscard]] std::optional<EntrySelection> read_entry(YamlReader& reader, const YAML::Node& node,
                                                       const Registry<Value>& registry,
                                                       std::string_view name_key = "name",
                                                       const PathResolver& resolve = {}) {
  return read_entry(reader, node, registry.what(), registry.catalog(), name_key, resolve);
}

}  // namespace dnnsim
