// Delimited text tables read with the position of every field, so that readers report FILE:ROW:COL
// for each bad value and collect every problem before throwing (diagnostics.hpp). The one CSV
// reader of dnnsim: job traces and measured tables (LocatedCsv, typed fields), plots (the sweep's and
// cluster runs' results, sim/report/plot) and the sweep's own results (sim/sweep/sweep_runner).
//
// RFC 4180: fields are separated by one character; a field in double quotes may hold the separator,
// line breaks and doubled quotes (""); records end with LF or CRLF; blank lines are skipped; a UTF-8
// byte-order mark at the start (spreadsheet exports) is skipped. Syntax errors are located: an
// unterminated quoted field (where it opens), a character after a closing quote, a quote inside an
// unquoted field; reading goes on (the record marked malformed), so that every problem is reported
// at once.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/diagnostics.hpp"

namespace dnnsim {

struct LocatedCsvField {
  std::string text;  // unquoted (with `trim`, surrounding blanks removed)
  int line = 0;      // 1-based line of the field's first character
  int column = 0;    // 1-based byte column of the field's first character (its opening quote, if quoted)
};

struct LocatedCsvRow {
  int line = 0;  // of its first field
  std::vector<LocatedCsvField> fields;
  int end_line = 0;  // where the record ends: just past its last character
  int end_column = 0;
  bool malformed = false;  // it has a syntax error (reported): its fields are a best guess
};

struct CsvSyntax {
  char separator = ',';
  // Blanks (spaces and tabs, unless one is the separator) around a field are not part of it, and a
  // line of blanks is blank: what traces written by hand or by other tools need. Off: every byte
  // between separators is data (the files dnnsim writes and reads back).
  bool trim = true;
};

// The records of `text` (`file` names it in messages), with syntax errors reported to `sink`.
[[nodiscard]] std::vector<LocatedCsvRow> read_csv_records(std::string_view text, const std::string& file,
                                                          const CsvSyntax& syntax, DiagnosticSink& sink);

// A table of named columns over read_csv_records (trimmed fields), with typed access to its fields.
// Malformed records are not among its rows.
class LocatedCsv {
 public:
  // `header`: the first record names the columns; otherwise `columns` names them (headerless
  // tables such as Alibaba PAI's), and a first record equal to `columns` is skipped as a header.
  static LocatedCsv parse(std::string_view text, std::string file, DiagnosticSink& sink, char separator,
                          const std::vector<std::string>& columns = {});
  // @throw InputError when the file cannot be read.
  static std::string read_file(const std::string& path);

  [[nodiscard]] const std::vector<LocatedCsvRow>& rows() const { return rows_; }
  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] bool has(const std::string& column) const { return index_.count(column) != 0; }
  // Reports each missing column once: at the header cell that misspells it (the closest name no other
  // required column is), else at the header line; returns whether all are present.
  bool require(const std::vector<std::string>& columns, DiagnosticSink& sink) const;

  // The field of `column` in `row` (nullptr if the row is too short, reported once per row).
  const LocatedCsvField* field(const LocatedCsvRow& row, const std::string& column, DiagnosticSink& sink) const;
  [[nodiscard]] const LocatedCsvField* optional_field(const LocatedCsvRow& row, const std::string& column) const;

  [[nodiscard]] SourceLocation where(const LocatedCsvRow& row, const LocatedCsvField* field) const {
    return field ? SourceLocation{file_, field->line, field->column} : SourceLocation{file_, row.line, 1};
  }

  // Typed values; on a bad value the problem is reported at the field and nothing returned.
  std::optional<double> number(const LocatedCsvRow& row, const std::string& column, DiagnosticSink& sink,
                               double min = -1e300) const;
  // A count (GPUs, replicas, a batch): an integer in [min, INT_MAX]; "2.0" is 2, as Philly and Helios write.
  std::optional<int> integer(const LocatedCsvRow& row, const std::string& column, DiagnosticSink& sink, int min) const;
  std::optional<std::string> text(const LocatedCsvRow& row, const std::string& column, DiagnosticSink& sink) const;
  // A name (a job's id, an application, a model): text that may not be empty, as an empty one names
  // nothing and a job without one is not the user's job.
  std::optional<std::string> name(const LocatedCsvRow& row, const std::string& column, DiagnosticSink& sink) const;
  // "YYYY-MM-DD HH:MM:SS" (UTC, no zone) or a bare number of seconds → seconds since 1970-01-01.
  std::optional<double> date(const LocatedCsvRow& row, const std::string& column, DiagnosticSink& sink) const;

 private:
  std::string file_;
  int header_line_ = 0;
  std::vector<LocatedCsvField> header_;  // the header record's names, where the file has one
  std::map<std::string, std::size_t> index_;
  std::vector<LocatedCsvRow> rows_;
};

// Seconds since 1970-01-01 of a "YYYY-MM-DD HH:MM:SS" (or "YYYY-MM-DDTHH:MM:SS") date, no time zone.
[[nodiscard]] std::optional<double> parse_datetime(std::string_view text);

}  // namespace dnnsim
