// Plots: the RFC 4180 reader (quoting, and errors at their line and column), axis values with units,
// the gnuplot scripts of a sweep plot and of a Gantt chart (checked as text: series, order, skipped
// rows, ticks), and gnuplot itself (a missing program, a failing script, a PNG actually drawn; the
// last two are skipped when gnuplot is not installed).
//
// Columns in the CSV errors are 1-based byte offsets in the line, as in every dnnsim diagnostic.
#include "sim/report/plot.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "sim/report/gantt.hpp"
#include "sim/report/gnuplot.hpp"
#include "sim/run/simulation.hpp"
#include "tests/support/diagnostics.hpp"
#include "tests/support/ran_tasks.hpp"
#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

std::vector<Diagnostic> csv_errors(const std::string& text) {
  SCOPED_TRACE(text);
  return testing::diagnostics_thrown_by([&] { (void)parse_csv_table(text, "r.csv"); });
}

std::string located(const Diagnostic& d) {
  return d.location.file + ":" + std::to_string(d.location.line) + ":" + std::to_string(d.location.column);
}

// ---- CSV -------------------------------------------------------------------------------------

TEST(CsvTest, ReadsQuotedFieldsCommasQuotesAndLineBreaks) {
  const CsvTable t = parse_csv_table(
      "point,model,status,note\r\n"
      "0,\"gpt, small\",ok,\"said \"\"hi\"\"\"\r\n"
      "1,plain,ok,\"two\nlines\"\r\n"
      "\r\n"  // a blank line is skipped
      "2,,failed,\n",
      "r.csv");
  ASSERT_EQ(t.header, (std::vector<std::string>{"point", "model", "status", "note"}));
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[0][1], "gpt, small");
  EXPECT_EQ(t.rows[0][3], "said \"hi\"");
  EXPECT_EQ(t.rows[1][3], "two\nlines");
  EXPECT_EQ(t.rows[2][1], "");
  EXPECT_EQ(t.rows[2][3], "");
  // Each field where it starts, a quoted one at its opening quote: row 0 on line 2 at columns 1, 3
  // ("gpt, small" is 12 bytes with its quotes), 16 and 19; row 1's quoted field spans lines 3–4 and the
  // blank line is 5, so the last row starts on line 6.
  EXPECT_EQ(t.positions[0], (std::vector<CsvTable::Position>{{2, 1}, {2, 3}, {2, 16}, {2, 19}}));
  EXPECT_EQ(t.positions[1].front(), (CsvTable::Position{3, 1}));
  EXPECT_EQ(t.positions[2].front(), (CsvTable::Position{6, 1}));
  EXPECT_EQ(t.column("status"), 2u);
  EXPECT_FALSE(t.column("Status").has_value());
}

TEST(CsvTest, WhereKeepsTheRowsMatchingEveryCondition) {
  const CsvTable t = parse_csv_table("point,workers,policy\n0,18,bsp\n1,36,bsp\n2,18,adsp\n", "r.csv");
  const CsvTable kept = filter_rows(t, {"workers=18", "policy=adsp"});
  ASSERT_EQ(kept.rows.size(), 1u);
  EXPECT_EQ(kept.rows[0][0], "2");
  ASSERT_EQ(kept.positions.size(), 1u);
  EXPECT_EQ(kept.positions[0].front().line, 4);
  EXPECT_EQ(filter_rows(t, {}).rows.size(), 3u);
  try {
    (void)filter_rows(t, {"worker=18", "policy"});
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 2u);
    EXPECT_NE(e.diagnostics()[0].message.find("no column 'worker'"), std::string::npos);
    EXPECT_NE(e.diagnostics()[0].message.find("workers"), std::string::npos);
    EXPECT_NE(e.diagnostics()[1].message.find("expected COLUMN=VALUE"), std::string::npos);
  }
}

TEST(CsvTest, LastLineWithoutLineBreakAndByteOrderMark) {
  const CsvTable t = parse_csv_table(
      "\xEF\xBB\xBF"
      "a,b\n1,2",
      "r.csv");
  EXPECT_EQ(t.header, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"1", "2"}));
}

TEST(CsvTest, UnterminatedQuoteIsReportedWhereItOpens) {
  const auto errors = csv_errors("a,b\n1,2\n3,\"open\n4,5\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(located(errors[0]), "r.csv:3:3");
  EXPECT_NE(errors[0].message.find("unterminated quoted field"), std::string::npos) << errors[0].message;
}

TEST(CsvTest, TextAfterClosingQuote) {
  const auto errors = csv_errors("a,b\n\"x\"y,2\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(located(errors[0]), "r.csv:2:4");  // the 'y'
  EXPECT_NE(errors[0].message.find("after the closing quote"), std::string::npos) << errors[0].message;
}

TEST(CsvTest, QuoteInsideUnquotedField) {
  const auto errors = csv_errors("a,b\n1,ab\"c\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(located(errors[0]), "r.csv:2:5");
  EXPECT_NE(errors[0].message.find("quote inside an unquoted field"), std::string::npos) << errors[0].message;
}

TEST(CsvTest, WrongFieldCountsAreAllReported) {
  // Line 2 has a third field starting at column 5; line 4 stops after "1" (column 2 is its end).
  const auto errors = csv_errors("a,b\n1,2,3\n4,5\n1\n");
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(located(errors[0]), "r.csv:2:5");
  EXPECT_EQ(errors[0].message, "3 fields, but the header has 2");
  EXPECT_EQ(located(errors[1]), "r.csv:4:2");
  EXPECT_EQ(errors[1].message, "1 field, but the header has 2 (missing: b)");
}

TEST(CsvTest, EmptyAndMissingFiles) {
  const auto errors = csv_errors("");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("no header"), std::string::npos);
  EXPECT_THROW((void)read_csv("/nonexistent/results.csv"), InputError);
}

TEST(CsvTest, ReadsAFile) {
  const std::string path = testing::write_file("r.csv", "x,y\n1,2\n");
  const CsvTable t = read_csv(path);
  EXPECT_EQ(t.source, path);
  EXPECT_EQ(t.rows.size(), 1u);
}

// ---- axis values -----------------------------------------------------------------------------

TEST(PlotAxisTest, NumbersAndQuantities) {
  EXPECT_DOUBLE_EQ(parse_axis_number("0.5")->value, 0.5);
  EXPECT_FALSE(parse_axis_number("0.5")->dimension.has_value());
  EXPECT_DOUBLE_EQ(parse_axis_number("8")->value, 8.0);
  EXPECT_DOUBLE_EQ(parse_axis_number("25MB")->value, 25e6);
  EXPECT_EQ(parse_axis_number("25MB")->dimension, Dimension::bytes);
  EXPECT_DOUBLE_EQ(parse_axis_number("10Gbps")->value, 10e9 / 8);  // bits per second → bytes per second
  EXPECT_EQ(parse_axis_number("10Gbps")->dimension, Dimension::bandwidth);
  EXPECT_DOUBLE_EQ(parse_axis_number("2us")->value, 2e-6);
  EXPECT_EQ(parse_axis_number("125TFlops")->dimension, Dimension::flop_rate);
  EXPECT_FALSE(parse_axis_number("ring").has_value());
  EXPECT_FALSE(parse_axis_number("").has_value());
  EXPECT_FALSE(parse_axis_number("nan").has_value());
  EXPECT_FALSE(parse_axis_number("-1GB").has_value());  // quantities are non-negative
}

// ---- sweep plot ------------------------------------------------------------------------------

CsvTable sweep_table() {
  // Two axes (gpus, bucket) and a metric; rows deliberately out of order, one failed point.
  return parse_csv_table(
      "point,workload.bucket_size,cluster.gpus,status,error,mean.iteration_time_s\n"
      "0,100MB,16,ok,,0.30\n"
      "1,25MB,16,ok,,0.20\n"
      "2,100MB,8,ok,,0.25\n"
      "3,25MB,8,failed,\"out of memory, node0/gpu1\",\n"
      "4,50MB,8,ok,,0.22\n"
      "5,25MB,16,ok,,0.21\n",  // same (hue, x) as point 1: averaged to 0.205
      "results.csv");
}

PlotOptions sweep_options() {
  PlotOptions o;
  o.x = "workload.bucket_size";
  o.y = "mean.iteration_time_s";
  o.hue = "cluster.gpus";
  o.output = "out/fig.png";
  return o;
}

std::size_t position(const std::string& text, const std::string& what) {
  const auto p = text.find(what);
  EXPECT_NE(p, std::string::npos) << "'" << what << "' not in:\n" << text;
  return p;
}

TEST(PlotSweepTest, OneSeriesPerHueSortedNumericallyPointsSortedByX) {
  std::vector<std::string> notes;
  const std::string script = make_sweep_plot_script(sweep_table(), sweep_options(), &notes);
  // Hue "8" < "16" numerically (as text "16" < "8"): series0 is 8 GPUs. Within it x = 50 MB, 100 MB
  // (25 MB failed); series1 (16 GPUs) x = 25 MB (mean of 0.20 and 0.21), 100 MB.
  EXPECT_NE(script.find("$series0 << EOD\n50000000 0.22\n100000000 0.25\nEOD\n"), std::string::npos) << script;
  EXPECT_NE(script.find("$series1 << EOD\n25000000 0.205\n100000000 0.3\nEOD\n"), std::string::npos) << script;
  EXPECT_LT(position(script, "title \"8\""), position(script, "title \"16\""));
  EXPECT_NE(script.find("set key outside right top title \"cluster.gpus\""), std::string::npos);
  EXPECT_NE(script.find("set output \"out/fig.png\""), std::string::npos);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0], "1 row skipped: status 1 failed");
  EXPECT_EQ(notes[1], "1 point average several rows (another column varies: try it as --hue)");
  EXPECT_NE(script.find("\\n1 row skipped: status 1 failed"), std::string::npos);  // in the title
}

TEST(PlotSweepTest, UnitsBecomeNumbersWithTheOriginalTextsAsTicks) {
  const std::string script = make_sweep_plot_script(sweep_table(), sweep_options());
  EXPECT_NE(script.find("set xlabel \"workload.bucket_size\"\n"), std::string::npos) << script;  // ticks say MB
  EXPECT_NE(script.find("set xtics (\"25MB\" 25000000, \"50MB\" 50000000, \"100MB\" 100000000)"), std::string::npos)
      << script;
  EXPECT_EQ(script.find("set logscale x"), std::string::npos);  // 25 MB … 100 MB spans only 4×
}

TEST(PlotSweepTest, WideNumericRangeIsLogarithmic) {
  const CsvTable t =
      parse_csv_table("point,bw,status,error,m\n0,1Gbps,ok,,1\n1,100Gbps,ok,,2\n2,10Gbps,ok,,3\n", "r.csv");
  PlotOptions o;
  o.x = "bw";
  o.y = "m";
  const std::string script = make_sweep_plot_script(t, o);
  EXPECT_NE(script.find("set logscale x\n"), std::string::npos);
  EXPECT_NE(script.find("set xtics (\"1Gbps\" 125000000, \"10Gbps\" 1250000000, \"100Gbps\" 12500000000)"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("$series0 << EOD\n125000000 1\n1250000000 3\n12500000000 2\nEOD\n"), std::string::npos)
      << script;
  EXPECT_NE(script.find("unset key"), std::string::npos);
  EXPECT_NE(script.find("notitle"), std::string::npos);
  EXPECT_NE(script.find("set title \"m vs bw\"\n"), std::string::npos);
}

TEST(PlotSweepTest, ManyQuantitiesGetNumericTicksAndTheUnitOnTheLabel) {
  std::string csv = "point,size,status,error,m\n";
  for (int i = 1; i <= 13; ++i) csv += "p" + std::to_string(i) + "," + std::to_string(i) + "MB,ok,,1\n";
  PlotOptions o;
  o.x = "size";
  o.y = "m";
  const std::string script = make_sweep_plot_script(parse_csv_table(csv, "r.csv"), o);
  EXPECT_NE(script.find("set xlabel \"size (B)\"\n"), std::string::npos) << script;
  EXPECT_NE(script.find("set format x \"%.3s%c\"\n"), std::string::npos) << script;  // 1M … 13M
  EXPECT_EQ(script.find("set xtics ("), std::string::npos);
  EXPECT_EQ(script.find("set logscale"), std::string::npos);  // 1 MB … 13 MB: 13×, under the 100× of a log axis
}

TEST(PlotSweepTest, CategoricalXInOrderOfFirstAppearance) {
  const CsvTable t = parse_csv_table(
      "point,algo,n,status,error,m\n"
      "0,tree,2,ok,,5\n"
      "1,ring,2,ok,,4\n"
      "2,tree,4,ok,,7\n"
      "3,ring,4,ok,,6\n",
      "r.csv");
  PlotOptions o;
  o.x = "algo";
  o.y = "m";
  o.hue = "n";
  o.title = "custom";
  const std::string script = make_sweep_plot_script(t, o);
  EXPECT_NE(script.find("set xtics (\"tree\" 0, \"ring\" 1)"), std::string::npos) << script;
  EXPECT_NE(script.find("set xrange [-0.5:1.5]"), std::string::npos);
  EXPECT_NE(script.find("$series0 << EOD\n0 5\n1 4\nEOD\n"), std::string::npos) << script;
  EXPECT_NE(script.find("$series1 << EOD\n0 7\n1 6\nEOD\n"), std::string::npos) << script;
  EXPECT_NE(script.find("set title \"custom\"\n"), std::string::npos);
}

TEST(PlotSweepTest, TextHuesSortedAndQuotesEscaped) {
  const CsvTable t = parse_csv_table("x,h,m\n1,zeta,1\n1,\"al\"\"pha\",2\n", "r.csv");  // no status column: all rows
  PlotOptions o{"x", "m", "h", "f.png", ""};
  const std::string script = make_sweep_plot_script(t, o);
  EXPECT_LT(position(script, "title \"al\\\"pha\""), position(script, "title \"zeta\""));
}

TEST(PlotSweepTest, UnknownColumnsSuggestTheClosest) {
  PlotOptions o = sweep_options();
  o.y = "mean.iteration_time";
  o.hue = "nope";
  try {
    (void)make_sweep_plot_script(sweep_table(), o);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 2u);
    EXPECT_EQ(located(e.diagnostics()[0]), "results.csv:1:1");
    EXPECT_NE(e.diagnostics()[0].message.find("no column 'mean.iteration_time' for --y"), std::string::npos);
    EXPECT_NE(e.diagnostics()[0].message.find("did you mean 'mean.iteration_time_s'"), std::string::npos)
        << e.diagnostics()[0].message;
    EXPECT_NE(e.diagnostics()[1].message.find("no column 'nope' for --hue"), std::string::npos);
  }
}

TEST(PlotSweepTest, NothingLeftToPlot) {
  const CsvTable t = parse_csv_table("point,x,status,error,m\n0,1,failed,boom,\n1,2,ok,,\n", "r.csv");
  PlotOptions o{"x", "m", std::nullopt, "f.png", ""};
  try {
    (void)make_sweep_plot_script(t, o);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nothing to plot: 2 rows; 1 row skipped: status 1 failed; 1 row skipped: no "
                                         "number in m"),
              std::string::npos)
        << e.what();
  }
}

// ---- Gantt chart -----------------------------------------------------------------------------

// Two GPUs, two streams: forward on gpu0 [0, 1 ms], backward on gpu1 [0.5, 2 ms], an all-reduce of
// both on the comm stream [2, 3 ms], a second-iteration optimizer step on gpu0 [3, 3.5 ms], and a
// task that never ran.
SimulationResult small_result() {
  SimulationResult r = testing::two_gpu_result();
  const StreamId compute = testing::kComputeStream;
  const StreamId comm = testing::kCommStream;
  const auto add = [&](auto op, StreamId stream, Phase phase, std::uint32_t iteration, double start, double end) {
    testing::add_ran_task(r, Task{.op = op, .stream = stream, .phase = phase, .iteration = iteration}, start, end);
  };
  add(Compute{.device = 0}, compute, Phase::forward, 0, 0.0, 1e-3);
  add(Compute{.device = 1}, compute, Phase::backward, 0, 0.5e-3, 2e-3);
  add(Collective{.kind = CollectiveKind::all_reduce, .group = {0, 1}}, comm, Phase::communication, 0, 2e-3, 3e-3);
  add(Compute{.device = 0}, compute, Phase::optimizer, 1, 3e-3, 3.5e-3);
  constexpr double kNever = std::numeric_limits<double>::quiet_NaN();
  add(Compute{.device = 1}, compute, Phase::optimizer, 1, kNever, kNever);
  r.makespan_s = 3.5e-3;
  return r;
}

TEST(PlotGanttTest, RowsPerDeviceStreamBoxesPerPhase) {
  const std::string script = make_gantt_script(small_result(), "out/gantt.png");
  // Rows in (device, stream) order: gpu0 compute 0, gpu0 comm 1, gpu1 compute 2, gpu1 comm 3.
  EXPECT_NE(script.find("set ytics (\"node0/gpu0 compute\" 0, \"node0/gpu0 comm\" 1, \"node0/gpu1 compute\" 2, "
                        "\"node0/gpu1 comm\" 3) nomirror"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("set yrange [3.5:-0.5]"), std::string::npos);  // first row at the top
  EXPECT_NE(script.find("$forward << EOD\n0 1 0\nEOD\n"), std::string::npos) << script;
  EXPECT_NE(script.find("$backward << EOD\n0.5 2 2\nEOD\n"), std::string::npos) << script;
  EXPECT_NE(script.find("$optimizer << EOD\n3 3.5 0\nEOD\n"), std::string::npos) << script;
  EXPECT_NE(script.find("$communication << EOD\n2 3 1\n2 3 3\nEOD\n"), std::string::npos) << script;  // both members
  EXPECT_EQ(script.find("$weight_grad"), std::string::npos);  // phases without tasks are left out of the key
  EXPECT_NE(script.find("with boxxyerror fc rgb \"#0072B2\" title \"forward\""), std::string::npos);
  EXPECT_EQ(script.find("set object"), std::string::npos);
  // Iteration 0 ends at 3 ms: one dashed boundary; the title gives makespan and the task that never ran.
  EXPECT_NE(script.find("set arrow from 3, graph 0 to 3, graph 1 nohead"), std::string::npos) << script;
  EXPECT_NE(script.find("makespan 3.5 ms, 2 iterations, 5 tasks on 2 devices\\n1 task never ran"), std::string::npos)
      << script;
  EXPECT_NE(script.find("set output \"out/gantt.png\""), std::string::npos);
}

TEST(PlotGanttTest, ManyTasksStayCompact) {
  SimulationResult r;
  r.graph.add_device("gpu0");
  r.graph.add_stream("compute");
  constexpr int kTasks = 100000;
  for (int i = 0; i < kTasks; ++i) {
    Task t;
    t.op = Compute{.device = 0};
    t.phase = i % 2 == 0 ? Phase::forward : Phase::backward;
    r.graph.add(std::move(t));
    r.task_start.push_back(i * 1e-5);
    r.task_end.push_back((i + 1) * 1e-5);
  }
  r.makespan_s = kTasks * 1e-5;
  const std::string script = make_gantt_script(r, "g.png");
  EXPECT_LT(script.size(), 40u * kTasks);  // three short numbers per box
}

// ---- gnuplot ---------------------------------------------------------------------------------

bool have_gnuplot() {
  std::string error;
  return render_with_gnuplot("exit\n", error) != 127;
}

// A cluster run's jobs.csv whose JCT cells are no numbers: std::stod threw std::invalid_argument past
// the located-error path on "n/a"; now each bad cell is reported at its row and column, all at once
// (an empty cell is a job that never finished and is skipped).
TEST(PlotClusterTest, EveryCellThatIsNoNumberIsReportedWhereItStands) {
  const CsvTable jobs = parse_csv_table("job,jct_s\n0,12.5\n1,n/a\n2,\n3,1e999\n", "jobs.csv");
  try {
    (void)make_jct_cdf_script({{"fifo", jobs}}, "out.png");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    testing::expect_errors(e.diagnostics(), {{3, 3, "jct_s: expected a number, got 'n/a'"},
                                             {5, 3, "jct_s: expected a number, got '1e999'"}});
  }
}

TEST(PlotRenderTest, MissingProgramSaysHowToInstall) {
  std::string error;
  EXPECT_EQ(render_with_gnuplot("exit\n", error, "/nonexistent/gnuplot"), 127);
  EXPECT_NE(error.find("not found"), std::string::npos) << error;
  EXPECT_NE(error.find("scripts/install-deps"), std::string::npos) << error;
}

TEST(PlotRenderTest, FailingScriptReportsGnuplotsMessage) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  std::string error;
  EXPECT_NE(render_with_gnuplot("set nonsense_option 1\n", error), 0);
  EXPECT_NE(error.find("gnuplot exited with status"), std::string::npos) << error;
  EXPECT_NE(error.find("nonsense_option"), std::string::npos) << error;
}

bool is_png(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(8, '\0');
  in.read(head.data(), 8);
  return in && head == "\x89PNG\r\n\x1a\n";
}

TEST(PlotRenderTest, DrawsASweepPlotAndAGantt) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  PlotOptions o = sweep_options();
  o.output = (testing::test_dir() / "fig.png").string();
  std::string error;
  ASSERT_EQ(render_with_gnuplot(make_sweep_plot_script(sweep_table(), o), error), 0) << error;
  EXPECT_TRUE(is_png(o.output));
  const std::string gantt = (testing::test_dir() / "gantt.png").string();
  ASSERT_EQ(render_with_gnuplot(make_gantt_script(small_result(), gantt), error), 0) << error;
  EXPECT_TRUE(is_png(gantt));
}

}  // namespace
}  // namespace dnnsim
