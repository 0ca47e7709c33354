// Names of an enum's values as a constexpr array indexed by the value (declaration order), and the
// two lookups every `*_name` / `*_from_name` / `*_names` triple of the models is made of.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dnnsim {

template <class Enum, std::size_t N>
[[nodiscard]] std::optional<Enum> enum_from_name(const std::array<std::string_view, N>& names, std::string_view name) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == name) return static_cast<Enum>(i);
  return std::nullopt;
}

template <std::size_t N>
[[nodiscard]] std::vector<std::string> enum_names(const std::array<std::string_view, N>& names) {
  return std::vector<std::string>(names.begin(), names.end());
}

}  // namespace dnnsim
