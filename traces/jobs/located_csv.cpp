#include "traces/jobs/located_csv.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "models/common/input_file.hpp"

namespace dnnsim {
namespace {

std::string trim(std::string_view text) {
  std::size_t begin = 0, end = text.size();
  while (begin < end && (text[begin] == ' ' || text[begin] == '\t' || text[begin] == '\r')) ++begin;
  while (end > begin && (text[end - 1] == ' ' || text[end - 1] == '\t' || text[end - 1] == '\r')) --end;
  return std::string(text.substr(begin, end - begin));
}

std::vector<LocatedCsvField> split(std::string_view line, char separator) {
  std::vector<LocatedCsvField> fields;
  std::size_t i = 0;
  while (true) {
    LocatedCsvField field;
    field.column = static_cast<int>(i) + 1;
    while (i < line.size() && line[i] == ' ' && separator != ' ') ++i;
    if (i < line.size() && line[i] == '"') {
      field.column = static_cast<int>(i) + 1;
      ++i;
      std::string value;
      while (i < line.size()) {
        if (line[i] == '"' && i + 1 < line.size() && line[i + 1] == '"') {
          value += '"';
          i += 2;
        } else if (line[i] == '"') {
          ++i;
          break;
        } else {
          value += line[i++];
        }
      }
      while (i < line.size() && line[i] != separator) ++i;
      field.text = value;
    } else {
      const std::size_t start = i;
      while (i < line.size() && line[i] != separator) ++i;
      field.column = static_cast<int>(start) + 1;
      field.text = trim(line.substr(start, i - start));
    }
    fields.push_back(std::move(field));
    if (i >= line.size()) break;
    ++i;  // separator
  }
  return fields;
}

long long days_from_civil(long long y, unsigned m, unsigned d) {  // Howard Hinnant's algorithm
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

}  // namespace

std::optional<double> parse_datetime(std::string_view text) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0;
  double s = 0;
  char sep = 0;
  char tail = 0;
  const std::string copy(text);
  const int got = std::sscanf(copy.c_str(), "%4d-%2d-%2d%c%2d:%2d:%lf%c", &y, &mo, &d, &sep, &h, &mi, &s, &tail);
  if (got != 7 || (sep != ' ' && sep != 'T') || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s < 0 || s >= 61)
    return std::nullopt;
  return static_cast<double>(days_from_civil(y, mo, d)) * 86400.0 + h * 3600.0 + mi * 60.0 + s;
}

std::string LocatedCsv::read_file(const std::string& path) { return read_input_file(path); }

LocatedCsv LocatedCsv::parse(std::string_view text, std::string file, DiagnosticSink& sink, char separator,
                         const std::vector<std::string>& columns) {
  LocatedCsv table;
  table.file_ = std::move(file);
  bool header_read = !columns.empty();
  for (std::size_t i = 0; i < columns.size(); ++i) table.index_[columns[i]] = i;
  int line_no = 0;
  std::size_t pos = 0;
  bool first = true;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    ++line_no;
    pos = end + 1;
    if (trim(line).empty()) {
      if (end == text.size()) break;
      continue;
    }
    std::vector<LocatedCsvField> fields = split(line, separator);
    if (!header_read) {
      header_read = true;
      table.header_line_ = line_no;
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (table.index_.count(fields[i].text))
          sink.error({table.file_, line_no, fields[i].column}, fmt::format("column '{}' appears twice", fields[i].text));
        table.index_[fields[i].text] = i;
      }
    } else if (first && !columns.empty() && fields.size() == columns.size() && fields[0].text == columns[0]) {
      table.header_line_ = line_no;  // a header line in a normally headerless table
    } else {
      table.rows_.push_back(LocatedCsvRow{line_no, std::move(fields)});
    }
    first = false;
    if (end == text.size()) break;
  }
  if (!header_read) sink.error({table.file_, 1, 1}, "empty file: expected a header line");
  return table;
}

bool LocatedCsv::require(const std::vector<std::string>& columns, DiagnosticSink& sink) const {
  bool ok = true;
  std::vector<std::string> known;
  for (const auto& [name, index] : index_) known.push_back(name);
  for (const std::string& column : columns)
    if (!index_.count(column)) {
      sink.error({file_, std::max(header_line_, 1), 1},
                 fmt::format("missing column '{}'{}", column, suggestion_suffix(column, known)));
      ok = false;
    }
  return ok;
}

const LocatedCsvField* LocatedCsv::optional_field(const LocatedCsvRow& row, const std::string& column) const {
  auto it = index_.find(column);
  if (it == index_.end() || it->second >= row.fields.size()) return nullptr;
  return &row.fields[it->second];
}

const LocatedCsvField* LocatedCsv::field(const LocatedCsvRow& row, const std::string& column, DiagnosticSink& sink) const {
  const LocatedCsvField* field = optional_field(row, column);
  if (field == nullptr && index_.count(column)) {
    const int past_end = row.fields.empty() ? 1 : row.fields.back().column + static_cast<int>(row.fields.back().text.size());
    sink.error({file_, row.line, past_end},
               fmt::format("missing field '{}' (expected {} fields, found {})", column, index_.size(), row.fields.size()));
  }
  return field;
}

std::optional<double> LocatedCsv::number(const LocatedCsvRow& row, const std::string& column, DiagnosticSink& sink, double min) const {
  const LocatedCsvField* f = field(row, column, sink);
  if (f == nullptr) return std::nullopt;
  double value = 0;
  const char* begin = f->text.data();
  const char* end = begin + f->text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (f->text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) {
    sink.error(where(row, f), fmt::format("{}: expected a number, found '{}'", column, f->text));
    return std::nullopt;
  }
  if (value < min) {
    sink.error(where(row, f), fmt::format("{}: {} is below the minimum {}", column, f->text, min));
    return std::nullopt;
  }
  return value;
}

std::optional<int> LocatedCsv::integer(const LocatedCsvRow& row, const std::string& column, DiagnosticSink& sink,
                                      int min) const {
  const LocatedCsvField* f = field(row, column, sink);
  if (f == nullptr) return std::nullopt;
  long long value = 0;
  const char* begin = f->text.data();
  const char* end = begin + f->text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end) {  // Philly/Helios write integers as "2.0" at times
    double real = 0;
    auto [p2, e2] = std::from_chars(begin, end, real);
    if (f->text.empty() || e2 != std::errc() || p2 != end || real != std::floor(real)) {
      sink.error(where(row, f), fmt::format("{}: expected an integer, found '{}'", column, f->text));
      return std::nullopt;
    }
    // Beyond ±2^63 the conversion would be undefined (the fuzzer's 2.64e+111).
    if (!(std::abs(real) < 9.2e18)) {
      sink.error(where(row, f), fmt::format("{}: {} is out of the integer range", column, f->text));
      return std::nullopt;
    }
    value = static_cast<long long>(real);
  }
  if (value < min) {
    sink.error(where(row, f), fmt::format("{}: {} is below the minimum {}", column, value, min));
    return std::nullopt;
  }
  // A count wider than an int would wrap when the job stores it (4294967297 GPUs read as 1).
  if (value > std::numeric_limits<int>::max()) {
    sink.error(where(row, f), fmt::format("{}: {} is too large (at most {})", column, value, std::numeric_limits<int>::max()));
    return std::nullopt;
  }
  return static_cast<int>(value);
}

std::optional<std::string> LocatedCsv::text(const LocatedCsvRow& row, const std::string& column, DiagnosticSink& sink) const {
  const LocatedCsvField* f = field(row, column, sink);
  if (f == nullptr) return std::nullopt;
  return f->text;
}

std::optional<double> LocatedCsv::date(const LocatedCsvRow& row, const std::string& column, DiagnosticSink& sink) const {
  const LocatedCsvField* f = field(row, column, sink);
  if (f == nullptr) return std::nullopt;
  if (auto seconds = parse_datetime(f->text)) return seconds;
  double value = 0;
  const char* begin = f->text.data();
  auto [ptr, ec] = std::from_chars(begin, begin + f->text.size(), value);
  if (!f->text.empty() && ec == std::errc() && ptr == begin + f->text.size() && std::isfinite(value)) return value;
  sink.error(where(row, f), fmt::format("{}: expected a date 'YYYY-MM-DD HH:MM:SS' or seconds, found '{}'", column, f->text));
  return std::nullopt;
}

}  // namespace dnnsim
