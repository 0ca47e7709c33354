#include "models/common/located_csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/common/input_file.hpp"
#include "models/common/parse_number.hpp"

namespace dnnsim {
namespace {

// The tokenizer of read_csv_records: one pass over the text, tracking line and column.
class CsvScanner {
 public:
  CsvScanner(std::string_view text, const std::string& file, const CsvSyntax& syntax, DiagnosticSink& sink)
      : text_(text), file_(file), syntax_(syntax), sink_(sink) {}

  std::vector<LocatedCsvRow> records() {
    if (text_.starts_with("\xEF\xBB\xBF")) i_ = 3;  // a UTF-8 byte-order mark
    std::vector<LocatedCsvRow> rows;
    while (i_ < text_.size()) {
      if (blank_line()) {
        skip_line();
        continue;
      }
      LocatedCsvRow row;
      row.line = line_;
      malformed_ = false;
      while (true) {
        row.fields.push_back(next_field());
        if (i_ < text_.size() && text_[i_] == syntax_.separator) {
          advance();
          continue;
        }
        break;
      }
      row.end_line = line_;
      row.end_column = column_;
      row.malformed = malformed_;
      skip_line_break();
      rows.push_back(std::move(row));
    }
    return rows;
  }

 private:
  [[nodiscard]] bool at_record_end() const {
    return i_ >= text_.size() || text_[i_] == '\n' || text_.substr(i_, 2) == "\r\n";
  }
  [[nodiscard]] bool blank(char c) const {
    return syntax_.trim && c != syntax_.separator && (c == ' ' || c == '\t' || c == '\r');
  }
  // An empty line, or with `trim` a line of blanks.
  [[nodiscard]] bool blank_line() const {
    std::size_t j = i_;
    while (j < text_.size() && blank(text_[j]) && text_.substr(j, 2) != "\r\n") ++j;
    return j >= text_.size() || text_[j] == '\n' || text_.substr(j, 2) == "\r\n";
  }
  void advance() {
    if (text_[i_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++i_;
  }
  void skip_blanks() {
    while (i_ < text_.size() && blank(text_[i_]) && !at_record_end()) advance();
  }
  void skip_line_break() {
    if (i_ < text_.size()) {
      i_ += text_[i_] == '\r' ? 2 : 1;
      ++line_;
      column_ = 1;
    }
  }
  // Past the end of the current (blank) line.
  void skip_line() {
    while (!at_record_end()) advance();
    skip_line_break();
  }

  void syntax_error(std::string message) {
    sink_.error({file_, line_, column_}, std::move(message));
    malformed_ = true;
  }

  // The next field. After a syntax error (reported, the record marked malformed) the rest of the field
  // up to the separator is taken as it stands, so that the record keeps its shape.
  LocatedCsvField next_field() {
    skip_blanks();
    LocatedCsvField field{std::string(), line_, column_};
    bool quoted = false;
    if (i_ < text_.size() && text_[i_] == '"') {
      quoted = true;
      advance();
      while (true) {
        if (i_ >= text_.size()) {
          sink_.error({file_, field.line, field.column}, "unterminated quoted field: the closing '\"' is missing");
          malformed_ = true;
          return field;
        }
        if (text_[i_] == '"' && i_ + 1 < text_.size() && text_[i_ + 1] == '"') {
          field.text += '"';
          advance();
          advance();
        } else if (text_[i_] == '"') {
          advance();
          break;
        } else {
          field.text += text_[i_];
          advance();
        }
      }
      skip_blanks();
      if (!at_record_end() && text_[i_] != syntax_.separator)
        syntax_error(
            fmt::format("unexpected '{}' after the closing quote of a field (a quote inside a quoted field "
                        "is written \"\")",
                        text_[i_]));
    }
    bool reported = quoted;  // one error per field
    while (!at_record_end() && text_[i_] != syntax_.separator) {
      if (text_[i_] == '"' && !reported) {
        syntax_error("quote inside an unquoted field (quote the whole field and double the quote: \"a\"\"b\")");
        reported = true;
      }
      field.text += text_[i_];
      advance();
    }
    if (!quoted)
      while (!field.text.empty() && blank(field.text.back())) field.text.pop_back();
    return field;
  }

  std::string_view text_;
  const std::string& file_;
  const CsvSyntax& syntax_;
  DiagnosticSink& sink_;
  std::size_t i_ = 0;
  int line_ = 1;
  int column_ = 1;
  bool malformed_ = false;  // the current record has a syntax error
};

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
  if (got != 7 || (sep != ' ' && sep != 'T') || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s < 0 ||
      s >= 61)
    return std::nullopt;
  return static_cast<double>(days_from_civil(y, mo, d)) * 86400.0 + h * 3600.0 + mi * 60.0 + s;
}

std::vector<LocatedCsvRow> read_csv_records(std::string_view text, const std::string& file, const CsvSyntax& syntax,
                                            DiagnosticSink& sink) {
  return CsvScanner(text, file, syntax, sink).records();
}

std::string LocatedCsv::read_file(const std::string& path) { return read_input_file(path); }

LocatedCsv LocatedCsv::parse(std::string_view text, std::string file, DiagnosticSink& sink, char separator,
                             const std::vector<std::string>& columns) {
  LocatedCsv table;
  table.file_ = std::move(file);
  std::vector<LocatedCsvRow> records = read_csv_records(text, table.file_, CsvSyntax{separator, true}, sink);
  auto first = records.begin();
  if (columns.empty() && first != records.end()) {
    table.header_line_ = first->line;
    table.header_ = first->fields;
    for (std::size_t i = 0; i < first->fields.size(); ++i) {
      const LocatedCsvField& name = first->fields[i];
      if (table.index_.count(name.text))
        sink.error({table.file_, name.line, name.column}, fmt::format("column '{}' appears twice", name.text));
      table.index_[name.text] = i;
    }
    ++first;
  } else if (!columns.empty()) {
    for (std::size_t i = 0; i < columns.size(); ++i) table.index_[columns[i]] = i;
    // A header line in a normally headerless table.
    if (first != records.end() && first->fields.size() == columns.size() && first->fields[0].text == columns[0]) {
      table.header_line_ = first->line;
      ++first;
    }
  }
  for (; first != records.end(); ++first)
    if (!first->malformed) table.rows_.push_back(std::move(*first));
  if (columns.empty() && table.header_line_ == 0) sink.error({table.file_, 1, 1}, "empty file: no header line");
  return table;
}

bool LocatedCsv::require(const std::vector<std::string>& columns, DiagnosticSink& sink) const {
  bool ok = true;
  std::vector<std::string> known;
  for (const auto& [name, index] : index_) known.push_back(name);
  std::vector<std::string> unused;  // a header name that is a required column misspells none
  for (const LocatedCsvField& name : header_)
    if (std::find(columns.begin(), columns.end(), name.text) == columns.end()) unused.push_back(name.text);
  for (const std::string& column : columns) {
    if (index_.count(column)) continue;
    ok = false;
    const std::vector<std::string> meant = meant_by(column, unused);
    SourceLocation at{file_, std::max(header_line_, 1), 1};
    if (!meant.empty()) {
      const auto cell = std::find_if(header_.begin(), header_.end(),
                                     [&](const LocatedCsvField& name) { return name.text == meant.front(); });
      at = {file_, cell->line, cell->column};
    }
    sink.error(at,
               fmt::format("missing column '{}'{}", column, suggestion_suffix(column, meant.empty() ? known : unused)));
  }
  return ok;
}

const LocatedCsvField* LocatedCsv::optional_field(const LocatedCsvRow& row, const std::string& column) const {
  auto it = index_.find(column);
  if (it == index_.end() || it->second >= row.fields.size()) return nullptr;
  return &row.fields[it->second];
}

const LocatedCsvField* LocatedCsv::field(const LocatedCsvRow& row, const std::string& column,
                                         DiagnosticSink& sink) const {
  const LocatedCsvField* field = optional_field(row, column);
  if (field == nullptr && index_.count(column)) {
    sink.error({file_, row.end_line, row.end_column}, fmt::format("missing field '{}' (expected {} fields, found {})",
                                                                  column, index_.size(), row.fields.size()));
  }
  return field;
}

std::optional<double> LocatedCsv::number(const LocatedCsvRow& row, const std::string& column, DiagnosticSink& sink,
                                         double min) const {
  const LocatedCsvField* f = field(row, column, sink);
  if (f == nullptr) return std::nullopt;
  const auto value = parse_number<double>(f->text);
  if (!value) {
    sink.error(where(row, f), fmt::format("{}: expected a number, found '{}'", column, f->text));
    return std::nullopt;
  }
  if (*value < min) {
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
  if (const auto whole = parse_number<long long>(f->text)) {
    value = *whole;
  } else {  // Philly/Helios write integers as "2.0" at times
    const auto real = parse_number<double>(f->text);
    if (!real || *real != std::floor(*real)) {
      sink.error(where(row, f), fmt::format("{}: expected an integer, found '{}'", column, f->text));
      return std::nullopt;
    }
    // Beyond ±2^63 the conversion would be undefined (the fuzzer's 2.64e+111).
    if (!(std::abs(*real) < 9.2e18)) {
      sink.error(where(row, f), fmt::format("{}: {} is out of the integer range", column, f->text));
      return std::nullopt;
    }
    value = static_cast<long long>(*real);
  }
  if (value < min) {
    sink.error(where(row, f), fmt::format("{}: {} is below the minimum {}", column, value, min));
    return std::nullopt;
  }
  // A count wider than an int would wrap when the job stores it (4294967297 GPUs read as 1).
  if (value > std::numeric_limits<int>::max()) {
    sink.error(where(row, f),
               fmt::format("{}: {} is too large (at most {})", column, value, std::numeric_limits<int>::max()));
    return std::nullopt;
  }
  return static_cast<int>(value);
}

std::optional<std::string> LocatedCsv::text(const LocatedCsvRow& row, const std::string& column,
                                            DiagnosticSink& sink) const {
  const LocatedCsvField* f = field(row, column, sink);
  if (f == nullptr) return std::nullopt;
  return f->text;
}

std::optional<std::string> LocatedCsv::name(const LocatedCsvRow& row, const std::string& column,
                                            DiagnosticSink& sink) const {
  const LocatedCsvField* f = field(row, column, sink);
  if (f == nullptr) return std::nullopt;
  if (f->text.empty()) {
    sink.error(where(row, f), fmt::format("{}: expected a name, found an empty field", column));
    return std::nullopt;
  }
  return f->text;
}

std::optional<double> LocatedCsv::date(const LocatedCsvRow& row, const std::string& column,
                                       DiagnosticSink& sink) const {
  const LocatedCsvField* f = field(row, column, sink);
  if (f == nullptr) return std::nullopt;
  if (auto seconds = parse_datetime(f->text)) return seconds;
  if (const auto seconds = parse_number<double>(f->text)) return seconds;
  sink.error(where(row, f),
             fmt::format("{}: expected a date 'YYYY-MM-DD HH:MM:SS' or seconds, found '{}'", column, f->text));
  return std::nullopt;
}

}  // namespace dnnsim
