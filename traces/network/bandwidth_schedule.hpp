// Time-varying link bandwidth: a piecewise-constant schedule of absolute bytes/s at absolute dates,
// and the reader of the "time_s,bandwidth" CSV traces users give for it.
//
// The simulator turns a schedule into a SimGrid link bandwidth profile (values in absolute B/s, not
// ratios; a repeating profile's period must exceed its last date — see
// docs/research/simgrid-recipes.md §2). This layer itself knows nothing of SimGrid.
//
// Semantics: point i says "from `points[i].at` on, the link offers `points[i].bandwidth`", up to the
// next point; the last value holds forever, or until `period` when the schedule repeats, at which
// time the pattern starts over at points[0]. So with points {0: 10 GB/s, 1: 1 GB/s} and period 2 s,
// the link offers 10 GB/s on [0,1), 1 GB/s on [1,2), 10 GB/s on [2,3), and so on.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/units.hpp"

namespace dnnsim {

struct BandwidthPoint {
  Seconds at;                // absolute simulated date, >= 0
  BytesPerSecond bandwidth;  // absolute bytes per second, >= 0 (0 = link unusable)
};

// A piecewise-constant bandwidth over time. Invariants: points non-empty, the first at t = 0, dates
// strictly increasing, bandwidths finite and non-negative; `period`, when set, greater than the last
// point's date. `from_points` establishes them; readers and generators return valid schedules.
struct BandwidthSchedule {
  std::vector<BandwidthPoint> points;
  std::optional<Seconds> period;  // repeat the whole pattern every `period`

  // Builds a valid schedule from dated values: if the first date is after 0, a point with `nominal`
  // is put at t = 0 (the nominal bandwidth applies before the source starts).
  // @throw std::invalid_argument if the points break the invariants above (negative or non-increasing
  //        dates, negative or non-finite bandwidth, period not after the last date).
  [[nodiscard]] static BandwidthSchedule from_points(std::vector<BandwidthPoint> points, BytesPerSecond nominal,
                                                     std::optional<Seconds> period = std::nullopt);

  // Bandwidth offered at date t (t >= 0). O(log n).
  // @throw std::invalid_argument if t is negative or not finite; std::logic_error if the schedule is
  //        empty, does not start at 0 or has a period not after its last date (the per-point
  //        invariants are checked by from_points only, not by every query).
  [[nodiscard]] BytesPerSecond at(Seconds t) const;

  // Time needed to move `size` bytes starting at date `start`, alone on the link: the smallest d with
  //   integral from start to start + d of bandwidth(t) dt = size
  // (piecewise integration; whole periods of a repeating schedule are skipped in one step).
  // For tests and analytical estimates — the simulator itself lets SimGrid share the link.
  // Note: SimGrid 3.32 (CM02 and the default LV08, probed) bounds a communication's rate by the route's
  // bandwidth when it starts, so a transfer in flight slows down when the bandwidth drops but does
  // not speed up when it recovers; this function gives the ideal fluid time, which is then shorter.
  // @throw std::domain_error if the data never finishes (the bandwidth stays 0 forever, or a whole
  //        period carries no byte); std::invalid_argument for a negative size or start;
  //        std::logic_error as for at().
  [[nodiscard]] Seconds transfer_time(Bytes size, Seconds start) const;
};

// Reads a bandwidth trace, CSV with a header line:
//   time_s,bandwidth          each bandwidth carries its unit:  0.5,25Gbps
//   time_s,bandwidth_<unit>   bare numbers in that unit:        0.5,25   (header bandwidth_Gbps)
// <unit> is any bandwidth unit of units.hpp, written as is (bandwidth_GB/s) or with '/' replaced by
// 'p' (bandwidth_GBps, bandwidth_GiBps); bandwidth_Bps means bytes/s, bandwidth_bps bits/s.
// Times are bare seconds. Blank lines and lines whose first non-blank character is '#' are skipped
// (also before the header). Fields may be surrounded by spaces.
// Checks: times non-negative and strictly increasing, bandwidths non-negative, two fields per line,
// at least one data line, every time before `period` when one is given. Every problem is reported as
// FILE:LINE:COL with COL the 1-based column of the offending field (for a missing field, the column
// just past the end of the line); all problems of the file are collected, then one InputError is
// thrown. A bad header stops the reading: the lines after it cannot be interpreted without it.
// If the first time is after 0, `nominal` applies from 0 to it; with no `nominal` the points are
// returned as read (a platform link keeps its own bandwidth until the first one).
// @throw InputError
[[nodiscard]] BandwidthSchedule read_bandwidth_trace(const std::string& path, std::optional<BytesPerSecond> nominal,
                                                     std::optional<Seconds> period);
// Same, on text already in memory; `file_name` is used in diagnostics only.
// @throw InputError
[[nodiscard]] BandwidthSchedule parse_bandwidth_trace(std::string_view text, const std::string& file_name,
                                                      std::optional<BytesPerSecond> nominal,
                                                      std::optional<Seconds> period);

}  // namespace dnnsim
