// A registry entry's options for a test: its declared defaults with some values set, as a scenario's
// section would give them (models/common/options.hpp). Pure: usable from every layer's tests.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

#include "models/common/options.hpp"

namespace dnnsim::testing {

using OptionValues = std::initializer_list<std::pair<const char*, OptionValue>>;

template <class Registry>
Options options_of(const Registry& registry, const std::string& name, OptionValues values = {}) {
  Options options = registry.defaults(name);
  for (const auto& [key, value] : values) options.set(key, value);
  return options;
}

}  // namespace dnnsim::testing
