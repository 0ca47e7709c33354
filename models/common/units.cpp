#include "models/common/units.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>

namespace dnnsim {
namespace {

struct Unit {
  std::string_view symbol;
  double factor;  // to the base unit of the dimension
};

// Bits count as 1/8 byte. Symbols are matched exactly (case-sensitive: "Mb" is megabit, "MB"
// megabyte); the only case-insensitive ones are the flop units, written many ways in datasheets.
constexpr std::array kByteUnits{
    Unit{"B", 1.0},
    Unit{"KB", 1e3},
    Unit{"kB", 1e3},
    Unit{"MB", 1e6},
    Unit{"GB", 1e9},
    Unit{"TB", 1e12},
    Unit{"PB", 1e15},
    Unit{"KiB", 1024.0},
    Unit{"MiB", 1048576.0},
    Unit{"GiB", 1073741824.0},
    Unit{"TiB", 1099511627776.0},
    Unit{"b", 0.125},
    Unit{"Kb", 125.0},
    Unit{"kb", 125.0},
    Unit{"Mb", 1.25e5},
    Unit{"Gb", 1.25e8},
};
constexpr std::array kSecondUnits{
    Unit{"s", 1.0},   Unit{"ms", 1e-3},  Unit{"us", 1e-6},  Unit{"µs", 1e-6},
    Unit{"ns", 1e-9}, Unit{"min", 60.0}, Unit{"h", 3600.0},
};
constexpr std::array kBandwidthUnits{
    Unit{"bps", 0.125},    Unit{"Kbps", 125.0},      Unit{"kbps", 125.0},
    Unit{"Mbps", 1.25e5},  Unit{"Gbps", 1.25e8},     Unit{"Tbps", 1.25e11},
    Unit{"B/s", 1.0},      Unit{"KB/s", 1e3},        Unit{"kB/s", 1e3},
    Unit{"MB/s", 1e6},     Unit{"GB/s", 1e9},        Unit{"TB/s", 1e12},
    Unit{"KiB/s", 1024.0}, Unit{"MiB/s", 1048576.0}, Unit{"GiB/s", 1073741824.0},
    Unit{"Bps", 1.0},      Unit{"KBps", 1e3},        Unit{"MBps", 1e6},
    Unit{"GBps", 1e9},     Unit{"TBps", 1e12},
};
// Flop units compared case-insensitively: "TFlops", "TFLOPS", "tflops" are the same thing.
constexpr std::array kFlopUnits{
    Unit{"flop", 1.0},   Unit{"kflop", 1e3},  Unit{"mflop", 1e6},  Unit{"gflop", 1e9},
    Unit{"tflop", 1e12}, Unit{"pflop", 1e15}, Unit{"eflop", 1e18},
};
constexpr std::array kFlopRateUnits{
    Unit{"flops", 1.0},   Unit{"kflops", 1e3}, Unit{"mflops", 1e6},  Unit{"gflops", 1e9},   Unit{"tflops", 1e12},
    Unit{"pflops", 1e15}, Unit{"flop/s", 1.0}, Unit{"gflop/s", 1e9}, Unit{"tflop/s", 1e12}, Unit{"pflop/s", 1e15},
};

bool case_insensitive(Dimension dimension) { return dimension == Dimension::flop || dimension == Dimension::flop_rate; }

bool same_symbol(std::string_view a, std::string_view b, bool ignore_case) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    char y = b[i];
    if (ignore_case) {
      x = static_cast<char>(std::tolower(static_cast<unsigned char>(x)));
      y = static_cast<char>(std::tolower(static_cast<unsigned char>(y)));
    }
    if (x != y) return false;
  }
  return true;
}

template <std::size_t N>
const Unit* find_unit(const std::array<Unit, N>& table, std::string_view symbol, bool ignore_case) {
  for (const Unit& unit : table)
    if (same_symbol(unit.symbol, symbol, ignore_case)) return &unit;
  return nullptr;
}

const Unit* lookup(Dimension dimension, std::string_view symbol) {
  const bool ignore_case = case_insensitive(dimension);
  switch (dimension) {
    case Dimension::bytes:
      return find_unit(kByteUnits, symbol, ignore_case);
    case Dimension::seconds:
      return find_unit(kSecondUnits, symbol, ignore_case);
    case Dimension::flop:
      return find_unit(kFlopUnits, symbol, ignore_case);
    case Dimension::bandwidth:
      return find_unit(kBandwidthUnits, symbol, ignore_case);
    case Dimension::flop_rate:
      return find_unit(kFlopRateUnits, symbol, ignore_case);
  }
  return nullptr;
}

std::string trim(std::string_view text, std::size_t& offset) {
  std::size_t begin = 0;
  while (begin < text.size() && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  std::size_t end = text.size();
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  offset = begin;
  return std::string(text.substr(begin, end - begin));
}

}  // namespace

std::string_view dimension_name(Dimension dimension) {
  switch (dimension) {
    case Dimension::bytes:
      return "a size";
    case Dimension::seconds:
      return "a duration";
    case Dimension::flop:
      return "an amount of work";
    case Dimension::bandwidth:
      return "a bandwidth";
    case Dimension::flop_rate:
      return "a compute rate";
  }
  return "a quantity";
}

std::string_view dimension_units(Dimension dimension) {
  switch (dimension) {
    case Dimension::bytes:
      return "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB";
    case Dimension::seconds:
      return "s, ms, us, ns, min, h";
    case Dimension::flop:
      return "Flop, GFlop, TFlop, PFlop";
    case Dimension::bandwidth:
      return "bps, Mbps, Gbps, Tbps, B/s, MB/s, GB/s, GiB/s";
    case Dimension::flop_rate:
      return "Flops, GFlops, TFlops, PFlops";
  }
  return "";
}

double parse_quantity(std::string_view raw, Dimension dimension) {
  std::size_t offset = 0;
  const std::string text = trim(raw, offset);
  if (text.empty())
    throw UnitError(fmt::format("expected {} with a unit ({}), got an empty string", dimension_name(dimension),
                                dimension_units(dimension)),
                    0);
  double number = 0.0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [number_end, error] = std::from_chars(begin, end, number);
  if (error != std::errc{} || !std::isfinite(number))
    throw UnitError(fmt::format("expected {} (a number followed by a unit: {}), got \"{}\"", dimension_name(dimension),
                                dimension_units(dimension), text),
                    offset);
  if (number < 0)
    throw UnitError(fmt::format("expected a non-negative value for {}, got \"{}\"", dimension_name(dimension), text),
                    offset);
  std::string_view symbol(number_end, static_cast<std::size_t>(end - number_end));
  std::size_t symbol_offset = offset + static_cast<std::size_t>(number_end - begin);
  while (!symbol.empty() && symbol.front() == ' ') {
    symbol.remove_prefix(1);
    ++symbol_offset;
  }
  if (symbol.empty()) {
    if (number == 0.0) return 0.0;
    throw UnitError(fmt::format("\"{}\" has no unit; {} needs one of: {}", text, dimension_name(dimension),
                                dimension_units(dimension)),
                    symbol_offset);
  }
  const Unit* unit = lookup(dimension, symbol);
  if (unit == nullptr)
    throw UnitError(fmt::format("unknown unit \"{}\" for {}; expected one of: {}", symbol, dimension_name(dimension),
                                dimension_units(dimension)),
                    symbol_offset);
  return number * unit->factor;
}

namespace {
std::string scaled(double value, std::initializer_list<std::pair<double, std::string_view>> steps,
                   std::string_view base_symbol) {
  for (const auto& [factor, symbol] : steps)
    if (value >= factor) return fmt::format("{:.4g} {}", value / factor, symbol);
  return fmt::format("{:.4g} {}", value, base_symbol);
}
}  // namespace

std::string format_bytes(Bytes size) {
  return scaled(size.value(), {{1099511627776.0, "TiB"}, {1073741824.0, "GiB"}, {1048576.0, "MiB"}, {1024.0, "KiB"}},
                "B");
}

std::string format_bandwidth(BytesPerSecond rate) {
  return scaled(rate.value(), {{1e12, "TB/s"}, {1e9, "GB/s"}, {1e6, "MB/s"}, {1e3, "KB/s"}}, "B/s");
}

std::string format_seconds(Seconds time) {
  const double t = time.value();
  if (t == 0.0 || t >= 1.0) return fmt::format("{:.4g} s", t);
  if (t >= 1e-3) return fmt::format("{:.4g} ms", t * 1e3);
  if (t >= 1e-6) return fmt::format("{:.4g} us", t * 1e6);
  return fmt::format("{:.4g} ns", t * 1e9);
}

std::string counted(std::size_t count, std::string_view noun) {
  return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

std::string format_flop_rate(FlopsPerSecond rate) {
  return scaled(rate.value(), {{1e15, "PFlops"}, {1e12, "TFlops"}, {1e9, "GFlops"}}, "Flops");
}

}  // namespace dnnsim
