#include "sim/report/csv_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "models/common/diagnostics.hpp"
#include "models/common/input_file.hpp"
#include "models/common/located_csv.hpp"
#include "models/common/units.hpp"

namespace dnnsim {

std::optional<std::size_t> CsvTable::column(std::string_view name) const {
  const auto it = std::find(header.begin(), header.end(), name);
  if (it == header.end()) return std::nullopt;
  return static_cast<std::size_t>(it - header.begin());
}

CsvTable parse_csv_table(std::string_view text, const std::string& source) {
  CsvTable table;
  table.source = source;
  DiagnosticSink sink;
  // Every byte between separators is data: these are files dnnsim wrote (the sweep's results.csv,
  // a cluster run's jobs.csv), or exports of them.
  std::vector<LocatedCsvRow> records = read_csv_records(text, source, CsvSyntax{',', false}, sink);
  if (records.empty()) {
    if (sink.empty()) sink.error(SourceLocation{source, 1, 1}, "empty file: no header line");
    sink.throw_if_any();
  }
  for (const LocatedCsvField& name : records.front().fields) table.header.push_back(name.text);
  const std::size_t width = table.header.size();
  for (auto row = records.begin() + 1; row != records.end(); ++row) {
    const std::size_t count = row->fields.size();
    if (row->malformed) continue;  // its syntax error is reported
    if (count > width) {
      sink.error(SourceLocation{source, row->fields[width].line, row->fields[width].column},
                 fmt::format("{} fields, but the header has {}", count, width));
    } else if (count < width) {
      sink.error(
          SourceLocation{source, row->end_line, row->end_column},
          fmt::format("{}, but the header has {} (missing: {})", counted(count, "field"), width,
                      fmt::join(table.header.begin() + static_cast<std::ptrdiff_t>(count), table.header.end(), ", ")));
    } else {
      std::vector<std::string> fields;
      std::vector<CsvTable::Position> positions;
      for (LocatedCsvField& field : row->fields) {
        fields.push_back(std::move(field.text));
        positions.push_back({field.line, field.column});
      }
      table.rows.push_back(std::move(fields));
      table.positions.push_back(std::move(positions));
    }
  }
  sink.throw_if_any();
  return table;
}

CsvTable filter_rows(const CsvTable& table, const std::vector<std::string>& conditions) {
  std::vector<std::pair<std::size_t, std::string>> tests;
  DiagnosticSink sink;
  for (const std::string& condition : conditions) {
    const std::size_t eq = condition.find('=');
    if (eq == std::string::npos) {
      sink.error(SourceLocation{table.source, 0, 0}, fmt::format("--where '{}': expected COLUMN=VALUE", condition));
      continue;
    }
    const std::string name = condition.substr(0, eq);
    if (auto index = table.column(name))
      tests.emplace_back(*index, condition.substr(eq + 1));
    else
      sink.error(SourceLocation{table.source, 0, 0},
                 fmt::format("--where: no column '{}' in the results{}", name, suggestion_suffix(name, table.header)));
  }
  sink.throw_if_any();
  CsvTable kept;
  kept.source = table.source;
  kept.header = table.header;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const auto& row = table.rows[r];
    if (std::all_of(tests.begin(), tests.end(), [&](const auto& t) { return row[t.first] == t.second; })) {
      kept.rows.push_back(row);
      kept.positions.push_back(table.positions[r]);
    }
  }
  return kept;
}

CsvTable read_csv(const std::string& path) { return parse_csv_table(read_input_file(path), path); }

}  // namespace dnnsim
