// A delimited text table read with the position of every field, so that readers can report
// FILE:ROW:COL for each bad value and collect every problem before throwing (diagnostics.hpp).
// RFC 4180 subset: fields may be double-quoted (a quoted field may contain the separator and ""),
// CRLF line ends are accepted; blank lines are skipped. No field spans lines.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/diagnostics.hpp"

namespace dnnsim {

struct LocatedCsvField {
  std::string text;  // unquoted, surrounding spaces removed
  int column = 0;    // 1-based column of the field's first character
};

struct LocatedCsvRow {
  int line = 0;
  std::vector<LocatedCsvField> fields;
};

class LocatedCsv {
 public:
  // `header`: the first non-blank line names the columns; otherwise `columns` names them (headerless
  // tables such as Alibaba PAI's), and a first line equal to `columns` is skipped as a header.
  static LocatedCsv parse(std::string_view text, std::string file, DiagnosticSink& sink, char separator,
                        const std::vector<std::string>& columns = {});
  // @throw InputError when the file cannot be read.
  static std::string read_file(const std::string& path);

  [[nodiscard]] const std::vector<LocatedCsvRow>& rows() const { return rows_; }
  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] bool has(const std::string& column) const { return index_.count(column) != 0; }
  // Reports a missing column at the header line once; returns whether all are present.
  bool require(const std::vector<std::string>& columns, DiagnosticSink& sink) const;

  // The field of `column` in `row` (nullptr if the row is too short, reported once per row).
  const LocatedCsvField* field(const LocatedCsvRow& row, const std::string& column, DiagnosticSink& sink) const;
  [[nodiscard]] const LocatedCsvField* optional_field(const LocatedCsvRow& row, const std::string& column) const;

  [[nodiscard]] SourceLocation where(const LocatedCsvRow& row, const LocatedCsvField* field) const {
    return {file_, row.line, field ? field->column : 1};
  }

  // Typed values; on a bad value the problem is reported at the field and nothing returned.
  std::optional<double> number(const LocatedCsvRow& row, const std::string& column, DiagnosticSink& sink, double min = -1e300) const;
  // A count (GPUs, replicas, a batch): an integer in [min, INT_MAX]; "2.0" is 2, as Philly and Helios write.
  std::optional<int> integer(const LocatedCsvRow& row, const std::string& column, DiagnosticSink& sink, int min) const;
  std::optional<std::string> text(const LocatedCsvRow& row, const std::string& column, DiagnosticSink& sink) const;
  // "YYYY-MM-DD HH:MM:SS" (UTC, no zone) or a bare number of seconds → seconds since 1970-01-01.
  std::optional<double> date(const LocatedCsvRow& row, const std::string& column, DiagnosticSink& sink) const;

 private:
  std::string file_;
  int header_line_ = 0;
  std::map<std::string, std::size_t> index_;
  std::vector<LocatedCsvRow> rows_;
};

// Seconds since 1970-01-01 of a "YYYY-MM-DD HH:MM:SS" (or "YYYY-MM-DDTHH:MM:SS") date, no time zone.
[[nodiscard]] std::optional<double> parse_datetime(std::string_view text);

}  // namespace dnnsim
