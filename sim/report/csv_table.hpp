// The tables `dnnsim plot` draws from (docs/plots.md): a sweep's results.csv and a cluster run's
// jobs.csv and utilisation.csv, read whole into strings (the scripts decide what is a number).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dnnsim {

// A CSV file read per RFC 4180: comma-separated fields, fields in double quotes may hold commas,
// line breaks and doubled quotes (""), lines end with LF or CRLF. The first record is the header.
struct CsvTable {
  std::string source;  // file name, for messages
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // each as wide as the header
  // Where each row's fields start (1-based), to locate a bad value: a quoted field may span lines.
  struct Position {
    int line = 0;
    int column = 0;
    friend bool operator==(const Position&, const Position&) = default;
  };
  std::vector<std::vector<Position>> positions;

  // Index of the column named `name`, if there is one.
  [[nodiscard]] std::optional<std::size_t> column(std::string_view name) const;
};

// Parses CSV text with read_csv_records (models/common/located_csv.hpp; fields untrimmed); `source`
// names it in messages. Strict, unlike the sweep runner's parse_csv (sim/sweep), which silently drops
// a row cut short because it recovers its own interrupted files.
// @throw InputError at source:line:col, every problem at once: an unterminated quoted field, a character
//        after a closing quote, a quote inside an unquoted field, a row wider or narrower than the
//        header, or no header.
[[nodiscard]] CsvTable parse_csv_table(std::string_view text, const std::string& source);
// @throw InputError (as parse_csv_table; also when the file cannot be read)
[[nodiscard]] CsvTable read_csv(const std::string& path);

// The rows whose columns equal the given values: each condition is "COLUMN=VALUE" (exact text), all
// must hold — `dnnsim plot --where`, to draw one slice of a sweep. @throw InputError for a condition
// without '=' or a column the table does not have (with a did-you-mean).
[[nodiscard]] CsvTable filter_rows(const CsvTable& table, const std::vector<std::string>& conditions);

}  // namespace dnnsim
