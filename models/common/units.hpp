// Physical quantities as strong types inside dnnsim, and the unit strings of the scenario edge.
//
// Inside the code a size is a `Bytes`, a rate a `BytesPerSecond`, and so on, so that a bandwidth can
// never be passed where a latency is expected. At the edges (YAML, CSV, JSON) numbers are either
// strings with a unit ("25Gbps", "2us", "80GiB", "125TFlops") or raw numbers whose key names the
// unit (`duration_s`, `size_bytes`). The unit grammar follows SimGrid's xbt_parse_units.cpp and
// ns-3's DataRate: decimal prefixes (k, M, G, T, P = 1e3…1e15) and binary ones (Ki, Mi, Gi, Ti).
// "b" is a bit and "B" a byte; "bps" is bits per second and "B/s" or "Bps" bytes per second.
#pragma once

#include <compare>
#include <stdexcept>
#include <string>
#include <string_view>

namespace dnnsim {

template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double value) : value_(value) {}
  // The value in the SI base unit of the dimension (bytes, seconds, flop, bytes/s, flop/s).
  [[nodiscard]] constexpr double value() const { return value_; }

  constexpr Quantity operator+(Quantity other) const { return Quantity(value_ + other.value_); }
  constexpr Quantity operator-(Quantity other) const { return Quantity(value_ - other.value_); }
  constexpr Quantity operator*(double factor) const { return Quantity(value_ * factor); }
  constexpr Quantity operator/(double divisor) const { return Quantity(value_ / divisor); }
  constexpr double operator/(Quantity other) const { return value_ / other.value_; }
  constexpr Quantity& operator+=(Quantity other) {
    value_ += other.value_;
    return *this;
  }
  constexpr auto operator<=>(const Quantity&) const = default;

 private:
  double value_ = 0.0;
};

struct BytesTag;
struct SecondsTag;
struct FlopTag;
struct BytesPerSecondTag;
struct FlopsPerSecondTag;

using Bytes = Quantity<BytesTag>;                    // size of data
using Seconds = Quantity<SecondsTag>;                // duration or simulated date
using Flop = Quantity<FlopTag>;                      // amount of floating-point work
using BytesPerSecond = Quantity<BytesPerSecondTag>;  // bandwidth
using FlopsPerSecond = Quantity<FlopsPerSecondTag>;  // compute throughput

constexpr Seconds operator/(Bytes size, BytesPerSecond rate) { return Seconds(size.value() / rate.value()); }
constexpr Seconds operator/(Flop work, FlopsPerSecond rate) { return Seconds(work.value() / rate.value()); }
constexpr Bytes operator*(BytesPerSecond rate, Seconds time) { return Bytes(rate.value() * time.value()); }

// What a quantity string measures; selects the unit table used to parse it.
enum class Dimension { bytes, seconds, flop, bandwidth, flop_rate };

[[nodiscard]] std::string_view dimension_name(Dimension dimension);
// Example units for messages: "B, KB, MB, GB, KiB, MiB, GiB, …".
[[nodiscard]] std::string_view dimension_units(Dimension dimension);

// A quantity string that could not be read. `column` is the 0-based offset of the offending
// character inside the string, so a caller can point at it in the source file.
class UnitError : public std::runtime_error {
 public:
  UnitError(std::string message, std::size_t column) : std::runtime_error(std::move(message)), column_(column) {}
  [[nodiscard]] std::size_t column() const { return column_; }

 private:
  std::size_t column_;
};

// Parses "<number><unit>" (spaces allowed between them) into the base unit of `dimension`.
// A bare number is accepted only when it is zero: "0" is unambiguous, "25" is not.
// Negative values are rejected (no quantity in a scenario is negative).
// @throw UnitError
[[nodiscard]] double parse_quantity(std::string_view text, Dimension dimension);

template <class Q>
[[nodiscard]] Q parse_as(std::string_view text);
template <>
inline Bytes parse_as<Bytes>(std::string_view text) {
  return Bytes(parse_quantity(text, Dimension::bytes));
}
template <>
inline Seconds parse_as<Seconds>(std::string_view text) {
  return Seconds(parse_quantity(text, Dimension::seconds));
}
template <>
inline Flop parse_as<Flop>(std::string_view text) {
  return Flop(parse_quantity(text, Dimension::flop));
}
template <>
inline BytesPerSecond parse_as<BytesPerSecond>(std::string_view text) {
  return BytesPerSecond(parse_quantity(text, Dimension::bandwidth));
}
template <>
inline FlopsPerSecond parse_as<FlopsPerSecond>(std::string_view text) {
  return FlopsPerSecond(parse_quantity(text, Dimension::flop_rate));
}

// Human-readable forms for tables and messages: "41.2 GiB", "25 Gbps", "3.5 ms", "125 TFlops".
[[nodiscard]] std::string format_bytes(Bytes size);
[[nodiscard]] std::string format_bandwidth(BytesPerSecond rate);
[[nodiscard]] std::string format_seconds(Seconds time);
[[nodiscard]] std::string format_flop_rate(FlopsPerSecond rate);
// A count and its noun, plural unless one: "1 iteration", "3 iterations" (nouns that take an "s").
[[nodiscard]] std::string counted(std::size_t count, std::string_view noun);

}  // namespace dnnsim
