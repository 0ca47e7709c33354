#include "traces/network/bandwidth_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "models/common/diagnostics.hpp"
#include "models/common/parse_number.hpp"

namespace dnnsim {
namespace {

constexpr double kForever = std::numeric_limits<double>::infinity();

// The first broken invariant of a schedule, or an empty string.
std::string invariant_violation(const BandwidthSchedule& schedule) {
  const auto& points = schedule.points;
  if (points.empty()) return "a bandwidth schedule needs at least one point";
  if (points.front().at.value() != 0.0)
    return fmt::format("the first point of a bandwidth schedule must be at t = 0, not {:g} s",
                       points.front().at.value());
  for (std::size_t i = 0; i < points.size(); ++i) {
    const double bandwidth = points[i].bandwidth.value();
    if (!std::isfinite(bandwidth) || bandwidth < 0)
      return fmt::format("point {} has bandwidth {:g} B/s; expected a finite value >= 0", i, bandwidth);
    if (i > 0 && !(points[i].at > points[i - 1].at))
      return fmt::format("point {} at {:g} s is not after point {} at {:g} s", i, points[i].at.value(), i - 1,
                         points[i - 1].at.value());
    if (!std::isfinite(points[i].at.value())) return fmt::format("point {} has a non-finite date", i);
  }
  if (schedule.period) {
    const double period = schedule.period->value();
    if (!std::isfinite(period) || !(period > points.back().at.value()))
      return fmt::format("the period ({:g} s) must be finite and greater than the last point's date ({:g} s)", period,
                         points.back().at.value());
  }
  return {};
}

// The O(1) part of the invariants, checked by every query (the per-point part is checked once, by
// from_points; readers and generators go through it).
void check_shape(const BandwidthSchedule& schedule) {
  const auto& points = schedule.points;
  if (points.empty()) throw std::logic_error("a bandwidth schedule needs at least one point");
  if (points.front().at.value() != 0.0)
    throw std::logic_error(
        fmt::format("the first point of a bandwidth schedule must be at t = 0, not {:g} s", points.front().at.value()));
  if (schedule.period && !(std::isfinite(schedule.period->value()) && *schedule.period > points.back().at))
    throw std::logic_error(fmt::format(
        "the period ({:g} s) of a bandwidth schedule must be finite and greater than its last date ({:g} s)",
        schedule.period->value(), points.back().at.value()));
}

// Index of the point in force at date `t` of the pattern (t >= 0, so at least the first point).
std::size_t segment_index(const std::vector<BandwidthPoint>& points, double t) {
  const auto after = std::upper_bound(points.begin(), points.end(), t,
                                      [](double date, const BandwidthPoint& point) { return date < point.at.value(); });
  return static_cast<std::size_t>(after - points.begin()) - 1;
}

}  // namespace

BandwidthSchedule BandwidthSchedule::from_points(std::vector<BandwidthPoint> points, BytesPerSecond nominal,
                                                 std::optional<Seconds> period) {
  if (points.empty() || points.front().at.value() > 0.0) {
    if (!std::isfinite(nominal.value()) || nominal.value() < 0)
      throw std::invalid_argument(fmt::format("nominal bandwidth {:g} B/s must be finite and >= 0", nominal.value()));
    points.insert(points.begin(), BandwidthPoint{Seconds(0.0), nominal});
  }
  BandwidthSchedule schedule{std::move(points), period};
  if (std::string problem = invariant_violation(schedule); !problem.empty()) throw std::invalid_argument(problem);
  return schedule;
}

BytesPerSecond BandwidthSchedule::at(Seconds t) const {
  check_shape(*this);
  double date = t.value();
  if (!std::isfinite(date) || date < 0)
    throw std::invalid_argument(fmt::format("bandwidth asked at date {:g} s; expected a finite date >= 0", date));
  if (period) date = std::fmod(date, period->value());
  return points[segment_index(points, date)].bandwidth;
}

Seconds BandwidthSchedule::transfer_time(Bytes size, Seconds start) const {
  check_shape(*this);
  if (!std::isfinite(size.value()) || size.value() < 0)
    throw std::invalid_argument(fmt::format("transfer of {:g} bytes; expected a finite size >= 0", size.value()));
  if (!std::isfinite(start.value()) || start.value() < 0)
    throw std::invalid_argument(fmt::format("transfer starting at {:g} s; expected a finite date >= 0", start.value()));
  if (size.value() == 0.0) return Seconds(0.0);

  const std::size_t n = points.size();
  double remaining = size.value();

  if (!period) {
    // Walk the segments from the one containing `start`; the last one lasts forever.
    double t = start.value();
    for (std::size_t i = segment_index(points, t);; ++i) {
      const double bandwidth = points[i].bandwidth.value();
      const double end = i + 1 < n ? points[i + 1].at.value() : kForever;
      if (bandwidth > 0) {
        const double finish = t + remaining / bandwidth;
        if (finish <= end) return Seconds(finish - start.value());
        remaining -= bandwidth * (end - t);
      } else if (end == kForever) {
        throw std::domain_error(
            fmt::format("{:g} bytes never finish: the bandwidth is 0 from {:g} s on and never recovers", remaining, t));
      }
      t = end;
    }
  }

  // Repeating schedule: work in pattern-local time `local` inside the cycle that starts at `base`.
  const double cycle = period->value();
  double bytes_per_cycle = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double end = i + 1 < n ? points[i + 1].at.value() : cycle;
    bytes_per_cycle += points[i].bandwidth.value() * (end - points[i].at.value());
  }
  if (!(bytes_per_cycle > 0))
    throw std::domain_error(fmt::format(
        "{:g} bytes never finish: the repeating schedule has bandwidth 0 over its whole period", remaining));

  double local = std::fmod(start.value(), cycle);
  double base = start.value() - local;
  std::size_t i = segment_index(points, local);
  for (;;) {
    if (i == 0 && local == 0.0 && remaining > bytes_per_cycle) {
      // Skip whole cycles at once, leaving a remainder in (0, bytes_per_cycle] to place exactly (the
      // last byte may well fall before the end of a cycle whose tail has bandwidth 0).
      double skipped = std::ceil(remaining / bytes_per_cycle) - 1;
      while (skipped > 0 && skipped * bytes_per_cycle >= remaining) skipped -= 1;  // rounding guard
      base += skipped * cycle;
      remaining -= skipped * bytes_per_cycle;
    }
    const double bandwidth = points[i].bandwidth.value();
    const double end = i + 1 < n ? points[i + 1].at.value() : cycle;
    if (bandwidth > 0) {
      const double finish = local + remaining / bandwidth;
      if (finish <= end) return Seconds((base + finish) - start.value());
      remaining -= bandwidth * (end - local);
    }
    local = end;
    if (++i == n) {
      i = 0;
      local = 0.0;
      base += cycle;
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// CSV reader

namespace {

constexpr std::string_view kHeaderForms = "'time_s,bandwidth' or 'time_s,bandwidth_<unit>' (e.g. bandwidth_Gbps)";

struct Field {
  std::string_view text;  // trimmed
  int column;             // 1-based column of the first non-blank character (or where it would be)
};

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::vector<Field> split_fields(std::string_view line) {
  std::vector<Field> fields;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t comma = line.find(',', begin);
    const std::size_t end = comma == std::string_view::npos ? line.size() : comma;
    std::size_t first = begin;
    while (first < end && is_blank(line[first])) ++first;
    std::size_t last = end;
    while (last > first && is_blank(line[last - 1])) --last;
    fields.push_back(Field{line.substr(first, last - first), static_cast<int>(first) + 1});
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  return fields;
}

// Bytes/s per unit of `unit`, written as in units.hpp ("GB/s", "Gbps") or with the '/' of "X/s"
// written 'p' ("GiBps" for "GiB/s").
std::optional<double> unit_factor(std::string_view unit) {
  if (unit.empty() ||
      std::any_of(unit.begin(), unit.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }))
    return std::nullopt;
  // "1 <unit>": the space keeps a unit like "e3Gbps" from being read as part of the number.
  auto try_unit = [](std::string_view symbol) -> std::optional<double> {
    try {
      return parse_quantity(fmt::format("1 {}", symbol), Dimension::bandwidth);
    } catch (const UnitError&) {
      return std::nullopt;
    }
  };
  if (auto factor = try_unit(unit)) return factor;
  if (unit.size() > 2 && unit.ends_with("ps")) return try_unit(fmt::format("{}/s", unit.substr(0, unit.size() - 2)));
  return std::nullopt;
}

class TraceParser {
 public:
  TraceParser(const std::string& file, std::optional<Seconds> period) : file_(file), period_(period) {}

  // Returns the points read, in order; problems go to the sink.
  std::vector<BandwidthPoint> parse(std::string_view text) {
    if (period_ && !(std::isfinite(period_->value()) && period_->value() > 0))
      sink_.error(SourceLocation{file_, 0, 0},
                  fmt::format("the repeat period of the trace must be positive, got {:g} s", period_->value()));
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // UTF-8 byte-order mark (spreadsheet exports)

    int line_number = 0;
    int header_line = 0;
    bool header_ok = false;
    bool any_data = false;
    while (!text.empty()) {
      const std::size_t newline = text.find('\n');
      std::string_view line = text.substr(0, newline);
      text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
      ++line_number;
      if (line.ends_with('\r')) line.remove_suffix(1);

      const std::size_t first = line.find_first_not_of(" \t");
      if (first == std::string_view::npos || line[first] == '#') continue;
      if (header_line == 0) {
        header_line = line_number;
        header_ok = parse_header(line, line_number);
        if (!header_ok) return {};  // the rows cannot be interpreted without a header
        continue;
      }
      any_data = true;
      parse_row(line, line_number);
    }
    if (header_line == 0)
      sink_.error(
          SourceLocation{file_, 0, 0},
          fmt::format("empty bandwidth trace; expected a header line {} then 'time,bandwidth' lines", kHeaderForms));
    else if (!any_data)
      sink_.error(SourceLocation{file_, header_line, 1}, "no data line after the header");
    return std::move(points_);
  }

  DiagnosticSink& sink() { return sink_; }

 private:
  void error(int line, int column, std::string message) {
    sink_.error(SourceLocation{file_, line, column}, std::move(message));
  }

  bool parse_header(std::string_view line, int line_number) {
    const std::vector<Field> fields = split_fields(line);
    if (parse_number<double>(
            fields[0].text)) {  // a data line where the header should be: one error, not one per column
      error(line_number, fields[0].column,
            fmt::format("expected the header {}, got the data line '{}' (is the header line missing?)", kHeaderForms,
                        line));
      return false;
    }
    const std::size_t errors_before = sink_.diagnostics().size();
    if (fields.size() > 2) {
      error(line_number, fields[2].column,
            fmt::format("unexpected third column '{}' in the header; expected {}", fields[2].text, kHeaderForms));
    }
    const Field& time = fields[0];
    if (time.text != "time_s") {
      std::string hint;
      if (!closest_match(std::string(time.text), {"time_s"}).empty()) hint = "; did you mean 'time_s'?";
      error(line_number, time.column,
            fmt::format("expected the header {}, got '{}' as the first column{}", kHeaderForms, time.text, hint));
    }
    if (fields.size() < 2) {
      error(line_number, static_cast<int>(line.size()) + 1,
            fmt::format("the header has one column; expected {}", kHeaderForms));
    } else {
      const Field& bandwidth = fields[1];
      constexpr std::string_view kPrefix = "bandwidth_";
      if (bandwidth.text == "bandwidth") {
        unit_factor_.reset();
        unit_name_.clear();
      } else if (bandwidth.text.starts_with(kPrefix)) {
        const std::string_view unit = bandwidth.text.substr(kPrefix.size());
        unit_factor_ = unit_factor(unit);
        unit_name_ = std::string(bandwidth.text);
        if (!unit_factor_)
          error(line_number, bandwidth.column,
                fmt::format("unknown bandwidth unit '{}' in the header column '{}'; expected one of {} (with '/' "
                            "written as is or as 'p': bandwidth_GB/s, bandwidth_GBps)",
                            unit, bandwidth.text, dimension_units(Dimension::bandwidth)));
      } else {
        std::string hint;
        if (!closest_match(std::string(bandwidth.text), {"bandwidth"}).empty()) hint = "; did you mean 'bandwidth'?";
        error(
            line_number, bandwidth.column,
            fmt::format("expected the header {}, got '{}' as the second column{}", kHeaderForms, bandwidth.text, hint));
      }
    }
    return sink_.diagnostics().size() == errors_before;
  }

  void parse_row(std::string_view line, int line_number) {
    const std::vector<Field> fields = split_fields(line);
    if (fields.size() != 2) {
      const int column = fields.size() > 2 ? fields[2].column : static_cast<int>(line.size()) + 1;
      error(line_number, column, fmt::format("expected 2 fields 'time,bandwidth', got {}", fields.size()));
      return;
    }
    const std::optional<double> time = parse_time(fields[0], line_number);
    const std::optional<double> bandwidth = parse_bandwidth(fields[1], line_number);
    if (time && bandwidth) points_.push_back(BandwidthPoint{Seconds(*time), BytesPerSecond(*bandwidth)});
  }

  std::optional<double> parse_time(const Field& field, int line_number) {
    if (field.text.empty()) {
      error(line_number, field.column, "missing time (seconds)");
      return std::nullopt;
    }
    const std::optional<double> time = parse_number<double>(field.text);
    if (!time || !std::isfinite(*time)) {
      error(line_number, field.column,
            fmt::format("expected a time in seconds (a bare number, the header says time_s), got '{}'", field.text));
      return std::nullopt;
    }
    if (*time < 0) {
      error(line_number, field.column, fmt::format("time must be non-negative, got {:g} s", *time));
      return std::nullopt;
    }
    bool ok = true;
    if (previous_time_ && *time <= *previous_time_) {
      error(line_number, field.column,
            fmt::format("time {:g} s is not after the previous time {:g} s (line {}); times must be strictly "
                        "increasing",
                        *time, *previous_time_, previous_line_));
      ok = false;
    }
    if (period_ && period_->value() > 0 && *time >= period_->value() && !reported_period_) {
      error(line_number, field.column,
            fmt::format("time {:g} s is not before the repeat period {:g} s; every time of a repeating trace must be "
                        "smaller than its period",
                        *time, period_->value()));
      reported_period_ = true;
      ok = false;
    }
    // Compare the next line with this one even when this one was out of order: one inversion, one error.
    previous_time_ = *time;
    previous_line_ = line_number;
    return ok ? time : std::nullopt;
  }

  std::optional<double> parse_bandwidth(const Field& field, int line_number) {
    if (field.text.empty()) {
      error(line_number, field.column, "missing bandwidth");
      return std::nullopt;
    }
    if (!unit_factor_) {
      try {
        return parse_quantity(field.text, Dimension::bandwidth);
      } catch (const UnitError& e) {
        error(line_number, field.column, e.what());
        return std::nullopt;
      }
    }
    const std::optional<double> value = parse_number<double>(field.text);
    if (!value || !std::isfinite(*value)) {
      error(line_number, field.column,
            fmt::format("expected a bare number (the header column '{}' gives the unit), got '{}'", unit_name_,
                        field.text));
      return std::nullopt;
    }
    if (*value < 0) {
      error(line_number, field.column, fmt::format("bandwidth must be non-negative, got {:g}", *value));
      return std::nullopt;
    }
    return *value * *unit_factor_;
  }

  std::string file_;
  std::optional<Seconds> period_;
  DiagnosticSink sink_;
  std::vector<BandwidthPoint> points_;
  std::optional<double> unit_factor_;  // empty: values carry their unit
  std::string unit_name_;
  std::optional<double> previous_time_;
  int previous_line_ = 0;
  bool reported_period_ = false;
};

}  // namespace

BandwidthSchedule parse_bandwidth_trace(std::string_view text, const std::string& file_name,
                                        std::optional<BytesPerSecond> nominal, std::optional<Seconds> period) {
  TraceParser parser(file_name, period);
  std::vector<BandwidthPoint> points = parser.parse(text);
  parser.sink().throw_if_any();
  if (!nominal) return BandwidthSchedule{std::move(points), period};
  return BandwidthSchedule::from_points(std::move(points), *nominal, period);
}

BandwidthSchedule read_bandwidth_trace(const std::string& path, std::optional<BytesPerSecond> nominal,
                                       std::optional<Seconds> period) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const std::error_code why(errno, std::generic_category());
    throw InputError(SourceLocation{path, 0, 0}, fmt::format("cannot open the bandwidth trace: {}", why.message()));
  }
  std::ostringstream content;
  content << in.rdbuf();
  return parse_bandwidth_trace(content.str(), path, nominal, period);
}

}  // namespace dnnsim
