#include "traces/network/bandwidth_schedule.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <source_location>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "models/common/diagnostics.hpp"
#include "tests/support/diagnostics.hpp"

namespace dnnsim {
namespace {

constexpr double kGB = 1e9;

BandwidthSchedule schedule(std::vector<std::pair<double, double>> points, std::optional<double> period = {}) {
  std::vector<BandwidthPoint> out;
  for (const auto& [at, bandwidth] : points) out.push_back(BandwidthPoint{Seconds(at), BytesPerSecond(bandwidth)});
  std::optional<Seconds> p;
  if (period) p = Seconds(*period);
  return BandwidthSchedule::from_points(std::move(out), BytesPerSecond(0.0), p);
}

double transfer(const BandwidthSchedule& s, double bytes, double start) {
  return s.transfer_time(Bytes(bytes), Seconds(start)).value();
}

// ----------------------------------------------------------------------------------------------
// Schedule maths

TEST(BandwidthSchedule, ConstantBandwidthIsSizeOverRate) {
  const BandwidthSchedule s = schedule({{0, 10 * kGB}});
  // 25 GB at 10 GB/s = 2.5 s, wherever it starts.
  EXPECT_NEAR(transfer(s, 25 * kGB, 0.0), 2.5, 1e-12);
  EXPECT_NEAR(transfer(s, 25 * kGB, 3.0), 2.5, 1e-12);
  EXPECT_DOUBLE_EQ(transfer(s, 0.0, 3.0), 0.0);
  EXPECT_DOUBLE_EQ(s.at(Seconds(1e6)).value(), 10 * kGB);
}

TEST(BandwidthSchedule, DropHalfway) {
  const BandwidthSchedule s = schedule({{0, 10 * kGB}, {1, 1 * kGB}});
  // 15 GB from 0: 10 GB in the first second at 10 GB/s, the other 5 GB at 1 GB/s: 1 + 5/1 = 6 s.
  EXPECT_NEAR(transfer(s, 15 * kGB, 0.0), 6.0, 1e-12);
  // 5 GB fit in the first segment: 5/10 = 0.5 s.
  EXPECT_NEAR(transfer(s, 5 * kGB, 0.0), 0.5, 1e-12);
  // Exactly 10 GB end exactly at the drop: 1 s.
  EXPECT_NEAR(transfer(s, 10 * kGB, 0.0), 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(s.at(Seconds(0.999)).value(), 10 * kGB);
  EXPECT_DOUBLE_EQ(s.at(Seconds(1.0)).value(), 1 * kGB);  // a point applies from its date on
}

TEST(BandwidthSchedule, StartInsideALaterSegment) {
  const BandwidthSchedule s = schedule({{0, 10 * kGB}, {1, 1 * kGB}, {3, 5 * kGB}});
  // 10 GB from 2.5 s: [2.5, 3) at 1 GB/s moves 0.5 GB; the other 9.5 GB at 5 GB/s take 1.9 s.
  // Total 0.5 + 1.9 = 2.4 s.
  EXPECT_NEAR(transfer(s, 10 * kGB, 2.5), 2.4, 1e-12);
  // From 4 s, only the last segment: 10/5 = 2 s.
  EXPECT_NEAR(transfer(s, 10 * kGB, 4.0), 2.0, 1e-12);
}

TEST(BandwidthSchedule, PeriodicSchedule) {
  // 10 GB/s on [0,1), 1 GB/s on [1,2), repeated every 2 s: 11 GB per cycle.
  const BandwidthSchedule s = schedule({{0, 10 * kGB}, {1, 1 * kGB}}, 2.0);
  EXPECT_DOUBLE_EQ(s.at(Seconds(2.5)).value(), 10 * kGB);
  EXPECT_DOUBLE_EQ(s.at(Seconds(3.5)).value(), 1 * kGB);
  EXPECT_DOUBLE_EQ(s.at(Seconds(4.0)).value(), 10 * kGB);
  // 1 GB from 1.2 s: [1.2, 2) at 1 GB/s moves 0.8 GB, the last 0.2 GB at 10 GB/s take 0.02 s: 0.82 s.
  EXPECT_NEAR(transfer(s, 1 * kGB, 1.2), 0.82, 1e-12);
  // 100 GB from 0: 9 whole cycles carry 99 GB in 18 s, the last 1 GB at 10 GB/s takes 0.1 s: 18.1 s.
  EXPECT_NEAR(transfer(s, 100 * kGB, 0.0), 18.1, 1e-9);
  // Exactly two cycles' worth (22 GB) ends exactly at the end of the second cycle: 4 s.
  EXPECT_NEAR(transfer(s, 22 * kGB, 0.0), 4.0, 1e-9);
  // The same from a late start (1000.5 s, inside the first segment of cycle 500): 0.5 s at 10 GB/s
  // moves 5 GB, then 1 s at 1 GB/s moves 1 GB; the remaining 16 GB = one cycle (11 GB) + 5 GB at
  // 10 GB/s: 0.5 + 1 + 2 + 0.5 = 4 s.
  EXPECT_NEAR(transfer(s, 22 * kGB, 1000.5), 4.0, 1e-9);
}

TEST(BandwidthSchedule, PeriodicWithIdleTailFinishesBeforeTheTail) {
  // 10 GB/s on [0,1), nothing on [1,2), every 2 s. 20 GB = two cycles of 10 GB, but the last byte
  // moves at 3 s (end of the second busy second), not at 4 s (end of the second cycle).
  const BandwidthSchedule s = schedule({{0, 10 * kGB}, {1, 0}}, 2.0);
  EXPECT_NEAR(transfer(s, 20 * kGB, 0.0), 3.0, 1e-9);
  // Starting in the gap at 1.5 s: wait 0.5 s, then 5 GB take 0.5 s: 1 s.
  EXPECT_NEAR(transfer(s, 5 * kGB, 1.5), 1.0, 1e-12);
}

TEST(BandwidthSchedule, ZeroBandwidthThenRecovery) {
  const BandwidthSchedule s = schedule({{0, 10 * kGB}, {1, 0}, {3, 10 * kGB}});
  // 15 GB from 0: 10 GB in [0,1), nothing in [1,3), 5 GB in 0.5 s: 3.5 s.
  EXPECT_NEAR(transfer(s, 15 * kGB, 0.0), 3.5, 1e-12);
  // From inside the outage (2 s): wait 1 s, then 10 GB in 1 s: 2 s.
  EXPECT_NEAR(transfer(s, 10 * kGB, 2.0), 2.0, 1e-12);
}

TEST(BandwidthSchedule, ZeroForeverNeverFinishes) {
  const BandwidthSchedule s = schedule({{0, 10 * kGB}, {1, 0}});
  EXPECT_NEAR(transfer(s, 5 * kGB, 0.0), 0.5, 1e-12);  // fits before the link dies
  EXPECT_THROW((void)transfer(s, 15 * kGB, 0.0), std::domain_error);
  EXPECT_THROW((void)transfer(schedule({{0, 0}}, 1.0), 1.0, 0.0), std::domain_error);  // zero every period
}

TEST(BandwidthSchedule, FromPointsAddsNominalBeforeTheFirstPoint) {
  const BandwidthSchedule s =
      BandwidthSchedule::from_points({{Seconds(2.0), BytesPerSecond(1 * kGB)}}, BytesPerSecond(10 * kGB));
  ASSERT_EQ(s.points.size(), 2u);
  EXPECT_EQ(s.points[0].at.value(), 0.0);
  EXPECT_EQ(s.at(Seconds(1.0)).value(), 10 * kGB);
  EXPECT_EQ(s.at(Seconds(2.0)).value(), 1 * kGB);
}

TEST(BandwidthSchedule, RejectsBrokenInvariants) {
  const BytesPerSecond nominal(kGB);
  EXPECT_THROW((void)BandwidthSchedule::from_points({{Seconds(1), nominal}, {Seconds(1), nominal}}, nominal),
               std::invalid_argument);  // dates not strictly increasing
  EXPECT_THROW((void)BandwidthSchedule::from_points({{Seconds(0), BytesPerSecond(-1)}}, nominal),
               std::invalid_argument);  // negative bandwidth
  EXPECT_THROW(
      (void)BandwidthSchedule::from_points({{Seconds(0), nominal}, {Seconds(2), nominal}}, nominal, Seconds(2.0)),
      std::invalid_argument);  // period not after the last date (SimGrid would drop that point)
  const BandwidthSchedule empty;
  EXPECT_THROW((void)empty.at(Seconds(0)), std::logic_error);
  EXPECT_THROW((void)schedule({{0, kGB}}).at(Seconds(-1)), std::invalid_argument);
}

// ----------------------------------------------------------------------------------------------
// CSV reader

BandwidthSchedule parse(std::string_view text, std::optional<double> period = {}) {
  std::optional<Seconds> p;
  if (period) p = Seconds(*period);
  return parse_bandwidth_trace(text, "trace.csv", BytesPerSecond(100 * kGB), p);
}

// Exactly the `expected` errors (tests/support/diagnostics.hpp), all located in trace.csv, from parsing
// `text`.
void expect_trace_errors(std::string_view text, const std::vector<testing::Located>& expected,
                         std::optional<double> period = {},
                         const std::source_location& caller = std::source_location::current()) {
  const std::vector<Diagnostic> diagnostics = testing::diagnostics_thrown_by([&] { (void)parse(text, period); });
  for (const Diagnostic& d : diagnostics) EXPECT_EQ(d.location.file, "trace.csv") << format_diagnostic(d);
  testing::expect_errors(diagnostics, expected, caller);
}

TEST(BandwidthTrace, HeaderWithUnitsInValues) {
  const BandwidthSchedule s = parse(
      "# link4 during the other tenant's backup\n"
      "time_s,bandwidth\n"
      "0,25Gbps\n"
      "\n"
      "0.5, 2.5GB/s\r\n"
      "  # back to normal\n"
      "1.0 , 25 Gbps\n");
  ASSERT_EQ(s.points.size(), 3u);
  EXPECT_DOUBLE_EQ(s.points[0].bandwidth.value(), 25e9 / 8);  // bits → bytes
  EXPECT_DOUBLE_EQ(s.points[1].at.value(), 0.5);
  EXPECT_DOUBLE_EQ(s.points[1].bandwidth.value(), 2.5e9);
  EXPECT_DOUBLE_EQ(s.points[2].at.value(), 1.0);
  EXPECT_DOUBLE_EQ(s.points[2].bandwidth.value(), 25e9 / 8);
  EXPECT_FALSE(s.period.has_value());
}

TEST(BandwidthTrace, HeaderWithUnitAndBareNumbers) {
  // bandwidth_Gbps: 25 → 25e9/8 B/s.
  const BandwidthSchedule gbps = parse("time_s,bandwidth_Gbps\n0,25\n0.5,2.5\n");
  EXPECT_DOUBLE_EQ(gbps.points[0].bandwidth.value(), 25e9 / 8);
  EXPECT_DOUBLE_EQ(gbps.points[1].bandwidth.value(), 2.5e9 / 8);
  // "GBps" is GB/s, "Bps" B/s, and the '/' of "GiB/s" can be written as is or as 'p'.
  EXPECT_DOUBLE_EQ(parse("time_s,bandwidth_GBps\n0,3\n").points[0].bandwidth.value(), 3e9);
  EXPECT_DOUBLE_EQ(parse("time_s,bandwidth_Bps\n0,1e9\n").points[0].bandwidth.value(), 1e9);
  EXPECT_DOUBLE_EQ(parse("time_s,bandwidth_GB/s\n0,2\n").points[0].bandwidth.value(), 2e9);
  EXPECT_DOUBLE_EQ(parse("time_s,bandwidth_GiBps\n0,1\n").points[0].bandwidth.value(), 1073741824.0);
  EXPECT_DOUBLE_EQ(parse("time_s,bandwidth_MiB/s\n0,1\n").points[0].bandwidth.value(), 1048576.0);
}

TEST(BandwidthTrace, NominalBeforeTheFirstTimeAndPeriod) {
  const BandwidthSchedule s = parse("time_s,bandwidth_GBps\n1,10\n2,1\n", 4.0);
  // Nominal (100 GB/s) on [0,1), then the trace; every 4 s again.
  ASSERT_EQ(s.points.size(), 3u);
  EXPECT_DOUBLE_EQ(s.points[0].at.value(), 0.0);
  EXPECT_DOUBLE_EQ(s.points[0].bandwidth.value(), 100 * kGB);
  ASSERT_TRUE(s.period.has_value());
  EXPECT_DOUBLE_EQ(s.period->value(), 4.0);
  EXPECT_DOUBLE_EQ(s.at(Seconds(4.5)).value(), 100 * kGB);
  EXPECT_DOUBLE_EQ(s.at(Seconds(5.5)).value(), 10 * kGB);
}

TEST(BandwidthTrace, MissingUnit) {
  // "25" under a `bandwidth` header: the field starts at column 3.
  expect_trace_errors("time_s,bandwidth\n0,25\n", {{2, 3, "has no unit"}});
  // Zero needs no unit.
  EXPECT_DOUBLE_EQ(parse("time_s,bandwidth\n0,0\n").points[0].bandwidth.value(), 0.0);
}

TEST(BandwidthTrace, UnknownUnit) {
  expect_trace_errors("time_s,bandwidth\n0,  25Gbs\n", {{2, 5, "unknown unit"}});
  expect_trace_errors("time_s,bandwidth_Gbs\n0,25\n", {{1, 8, "unknown bandwidth unit 'Gbs'"}});
  expect_trace_errors("time_s,bandwidth_GB\n0,25\n", {{1, 8, "unknown bandwidth unit 'GB'"}});  // a size, not a rate
  // With the unit in the header, values must be bare numbers.
  expect_trace_errors("time_s,bandwidth_Gbps\n0,25Gbps\n", {{2, 3, "bare number"}});
}

TEST(BandwidthTrace, NonIncreasingTime) {
  expect_trace_errors("time_s,bandwidth\n0,1GB/s\n1,1GB/s\n1,2GB/s\n",
                      {{4, 1, "not after the previous time 1 s (line 3)"}});
  // One inversion, one error: 0.5 is reported, 3 (after 0.5) is fine.
  expect_trace_errors("time_s,bandwidth\n0,1GB/s\n2,1GB/s\n0.5,1GB/s\n3,1GB/s\n", {{4, 1, "not after"}});
}

TEST(BandwidthTrace, NegativeValues) {
  expect_trace_errors("time_s,bandwidth\n-1,1GB/s\n", {{2, 1, "non-negative"}});
  expect_trace_errors("time_s,bandwidth\n0,-1GB/s\n", {{2, 3, "non-negative"}});
  expect_trace_errors("time_s,bandwidth_GBps\n0,-3\n", {{2, 3, "non-negative"}});
}

TEST(BandwidthTrace, WrongColumnCount) {
  // A third field: pointed at (column 9). A missing one: just past the end of the line (column 2).
  expect_trace_errors("time_s,bandwidth\n0,1GB/s,3\n1\n", {{2, 9, "expected 2 fields"}, {3, 2, "got 1"}});
  expect_trace_errors("time_s,bandwidth\n0,\n", {{2, 3, "missing bandwidth"}});
}

TEST(BandwidthTrace, BadHeader) {
  expect_trace_errors("time,bandwidth\n0,1GB/s\n", {{1, 1, "did you mean 'time_s'"}});
  expect_trace_errors("time_s,bw\n0,1GB/s\n", {{1, 8, "second column"}});
  expect_trace_errors("time_s,bandwith\n0,1GB/s\n", {{1, 8, "did you mean 'bandwidth'"}});
  expect_trace_errors("time_s,bandwidth,extra\n0,1GB/s\n", {{1, 18, "third column"}});
  expect_trace_errors("time_s\n0,1GB/s\n", {{1, 7, "one column"}});
  expect_trace_errors("0,25Gbps\n1,10Gbps\n", {{1, 1, "header line missing"}});
  // A bad header stops the reading: the row errors after it are not reported.
  expect_trace_errors("time_s,bw\n-1,x\n", {{1, 8, "second column"}});
}

TEST(BandwidthTrace, EmptyFileOrNoData) {
  expect_trace_errors("# nothing\n\n", {{0, 0, "empty bandwidth trace"}});
  expect_trace_errors("time_s,bandwidth\n# nothing yet\n", {{1, 1, "no data line"}});
}

TEST(BandwidthTrace, TimeNotBeforePeriod) {
  expect_trace_errors("time_s,bandwidth_GBps\n0,1\n2,3\n3,3\n", {{3, 1, "not before the repeat period 2 s"}}, 2.0);
}

TEST(BandwidthTrace, SeveralErrorsAtOnce) {
  const std::string text =
      "time_s,bandwidth\n"  // 1
      "0,25Gbps\n"          // 2 fine
      "0.5,25\n"            // 3 no unit               → 3:5
      "# comment\n"         // 4
      "0.4,1GB/s\n"         // 5 before 0.5            → 5:1
      "abc,1GB/s\n"         // 6 not a number          → 6:1
      "2,1GB/s,7\n"         // 7 three fields          → 7:9
      "3,-2Gbps\n";         // 8 negative              → 8:3
  expect_trace_errors(text, {{3, 5, "has no unit"},
                             {5, 1, "not after"},
                             {6, 1, "expected a time in seconds"},
                             {7, 9, "expected 2 fields"},
                             {8, 3, "non-negative"}});
  // The message of the exception lists them all as FILE:LINE:COL: error: ...
  try {
    (void)parse(text);
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("trace.csv:3:5: error: "), std::string::npos) << what;
    EXPECT_NE(what.find("trace.csv:8:3: error: "), std::string::npos) << what;
  }
}

TEST(BandwidthTrace, ReadsAFile) {
  const std::filesystem::path path =
      std::filesystem::path(::testing::TempDir()) / ("dnnsim_bw_trace_" + std::to_string(::getpid()) + ".csv");
  {
    std::ofstream out(path);
    out << "time_s,bandwidth_Gbps\n0,200\n0.5,20\n";
  }
  const BandwidthSchedule s = read_bandwidth_trace(path.string(), BytesPerSecond(25 * kGB), std::nullopt);
  std::filesystem::remove(path);
  ASSERT_EQ(s.points.size(), 2u);
  // 200 Gbps = 25 GB/s for 0.5 s (12.5 GB), then 20 Gbps = 2.5 GB/s: 15 GB take 0.5 + 2.5/2.5 = 1.5 s.
  EXPECT_NEAR(s.transfer_time(Bytes(15 * kGB), Seconds(0)).value(), 1.5, 1e-12);

  try {
    (void)read_bandwidth_trace("/nonexistent/trace.csv", BytesPerSecond(kGB), std::nullopt);
    FAIL() << "a missing file must be reported";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().at(0).location.file, "/nonexistent/trace.csv");
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dnnsim
