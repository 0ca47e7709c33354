// One strict reader of numbers written in text: the whole field or nothing. std::stoi/stoul/stod read
// a prefix ("64x" as 64), skip leading blanks, read "-1" as 2^64 − 1 for unsigned types, and throw
// std::invalid_argument / std::out_of_range, which are no InputError and so escape the located-error
// path (docs/testing.md, the fuzz campaigns). Every reader of numbers in files, names and command
// lines goes through this one: std::from_chars over the whole text, and floats must be finite
// ("inf", "nan" and "1e999" are no numbers of a scenario or a measurement).
#pragma once

#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace dnnsim {

template <typename T>
[[nodiscard]] std::optional<T> parse_number(std::string_view text) {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
  T value{};
  const char* end = text.data() + text.size();
  const auto [stop, status] = std::from_chars(text.data(), end, value);
  if (text.empty() || status != std::errc{} || stop != end) return std::nullopt;
  if constexpr (std::is_floating_point_v<T>)
    if (!std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace dnnsim
