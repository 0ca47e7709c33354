// The one CSV reader (models/common/located_csv.hpp): fields with their line and column, both
// syntaxes (trimmed for traces, every byte for files dnnsim writes), and every syntax error at once.
#include "models/common/located_csv.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dnnsim {
namespace {

std::vector<std::string> texts(const LocatedCsvRow& row) {
  std::vector<std::string> out;
  for (const LocatedCsvField& field : row.fields) out.push_back(field.text);
  return out;
}

std::string located(const Diagnostic& d) {
  return d.location.file + ":" + std::to_string(d.location.line) + ":" + std::to_string(d.location.column);
}

TEST(LocatedCsv, QuotedFieldsSpanLinesAndKeepTheirPositions) {
  // Line 2: `1,"a` opens a field at column 3 that ends on line 3 with `b""c"`; its next field `2`
  // starts on line 3 at column 7 (after `b""c",`). Line 4 is blank, line 5 ends with CRLF.
  DiagnosticSink sink;
  const auto rows = read_csv_records("x,y,z\n1,\"a\nb\"\"c\",2\n\nq,r,s\r\n", "t.csv", CsvSyntax{',', false}, sink);
  EXPECT_TRUE(sink.empty());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(texts(rows[1]), (std::vector<std::string>{"1", "a\nb\"c", "2"}));
  EXPECT_EQ(rows[1].line, 2);
  EXPECT_EQ(rows[1].fields[1].line, 2);
  EXPECT_EQ(rows[1].fields[1].column, 3);
  EXPECT_EQ(rows[1].fields[2].line, 3);
  EXPECT_EQ(rows[1].fields[2].column, 7);
  EXPECT_EQ(rows[1].end_line, 3);
  EXPECT_EQ(rows[1].end_column, 8);
  EXPECT_EQ(texts(rows[2]), (std::vector<std::string>{"q", "r", "s"}));
  EXPECT_EQ(rows[2].line, 5);
}

TEST(LocatedCsv, TrimmingIsTheTracesSyntaxOnly) {
  // Trimmed: blanks around fields go, a field's column is its first non-blank character, blanks
  // before an opening quote and after a closing one are allowed, and a line of blanks is blank.
  const std::string text =
      "\xEF\xBB\xBF"
      "a, b\n 1 ,  \"two \" \n   \n";
  DiagnosticSink sink;
  const auto trimmed = read_csv_records(text, "t.csv", CsvSyntax{',', true}, sink);
  EXPECT_TRUE(sink.empty());
  ASSERT_EQ(trimmed.size(), 2u);
  EXPECT_EQ(texts(trimmed[0]), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(texts(trimmed[1]), (std::vector<std::string>{"1", "two "}));
  EXPECT_EQ(trimmed[1].fields[0].column, 2);
  EXPECT_EQ(trimmed[1].fields[1].column, 7);
  // Untrimmed, the same bytes are data: ` 1 ` stays, and `  "two "` is a quote inside an unquoted field
  // (at column 7 of line 2); the line of blanks is a record of one field.
  const auto raw = read_csv_records(text, "t.csv", CsvSyntax{',', false}, sink);
  ASSERT_EQ(sink.diagnostics().size(), 1u);
  EXPECT_EQ(located(sink.diagnostics()[0]), "t.csv:2:7");
  ASSERT_EQ(raw.size(), 3u);
  EXPECT_EQ(texts(raw[0]), (std::vector<std::string>{"a", " b"}));
  EXPECT_EQ(raw[1].fields[0].text, " 1 ");
  EXPECT_TRUE(raw[1].malformed);
  EXPECT_EQ(texts(raw[2]), (std::vector<std::string>{"   "}));
}

TEST(LocatedCsv, EverySyntaxErrorIsReportedAndTheRecordsKeepTheirShape) {
  // Line 2: 'y' after the closing quote at column 4; line 3: a quote inside `ab"c` at column 5;
  // line 4 is fine; line 5 opens a quote at column 3 that never closes.
  DiagnosticSink sink;
  const auto rows =
      read_csv_records("a,b\n\"x\"y,2\n1,ab\"c\n3,4\n5,\"open\n6,7\n", "t.csv", CsvSyntax{',', false}, sink);
  ASSERT_EQ(sink.diagnostics().size(), 3u);
  EXPECT_EQ(located(sink.diagnostics()[0]), "t.csv:2:4");
  EXPECT_EQ(located(sink.diagnostics()[1]), "t.csv:3:5");
  EXPECT_EQ(located(sink.diagnostics()[2]), "t.csv:5:3");
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_TRUE(rows[1].malformed);
  EXPECT_EQ(rows[1].fields.size(), 2u);  // still two fields: `2` was read after the error
  EXPECT_TRUE(rows[2].malformed);
  EXPECT_FALSE(rows[3].malformed);
  EXPECT_TRUE(rows[4].malformed);
}

TEST(LocatedCsv, TableOfNamedColumnsLeavesMalformedRowsOut) {
  // Tab-separated with a header; line 3 is malformed (quote inside a field) and not a row.
  DiagnosticSink sink;
  const LocatedCsv table = LocatedCsv::parse("id\tgpus\nj1\t 4\nj\"2\t8\nj3\t2.0\n", "t.tsv", sink, '\t');
  ASSERT_EQ(sink.diagnostics().size(), 1u);
  EXPECT_EQ(located(sink.diagnostics()[0]), "t.tsv:3:2");
  ASSERT_EQ(table.rows().size(), 2u);
  EXPECT_EQ(table.integer(table.rows()[0], "gpus", sink, 1), 4);
  EXPECT_EQ(table.integer(table.rows()[1], "gpus", sink, 1), 2);
  EXPECT_EQ(table.rows()[1].line, 4);
}

TEST(LocatedCsv, EmptyFileAndDuplicateColumn) {
  DiagnosticSink empty;
  (void)LocatedCsv::parse(" \n\n", "e.csv", empty, ',');
  ASSERT_EQ(empty.diagnostics().size(), 1u);
  EXPECT_EQ(empty.diagnostics()[0].message, "empty file: no header line");
  DiagnosticSink twice;
  (void)LocatedCsv::parse("a,b,a\n1,2,3\n", "d.csv", twice, ',');
  ASSERT_EQ(twice.diagnostics().size(), 1u);
  EXPECT_EQ(located(twice.diagnostics()[0]), "d.csv:1:5");
}

TEST(LocatedCsv, MissingFieldIsReportedWhereTheRecordEnds) {
  // `j1,"4"` ends at column 7 (past the closing quote); the third column is missing there.
  DiagnosticSink sink;
  const LocatedCsv table = LocatedCsv::parse("id,gpus,start\nj1,\"4\"\n", "m.csv", sink, ',');
  ASSERT_EQ(table.rows().size(), 1u);
  EXPECT_EQ(table.field(table.rows()[0], "start", sink), nullptr);
  ASSERT_EQ(sink.diagnostics().size(), 1u);
  EXPECT_EQ(located(sink.diagnostics()[0]), "m.csv:2:7");
}

}  // namespace
}  // namespace dnnsim
