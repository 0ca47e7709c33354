// Measure of a union of time intervals: how long a device was busy when its tasks overlap.
#pragma once

#include <algorithm>
#include <vector>

namespace dnnsim {

struct Interval {
  double start;
  double end;
};

// Total length covered by at least one interval.
[[nodiscard]] inline double measure(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  double total = 0;
  double covered_until = -1e300;
  for (const Interval& i : intervals) {
    const double from = std::max(i.start, covered_until);
    if (i.end > from) total += i.end - from;
    covered_until = std::max(covered_until, i.end);
  }
  return total;
}

[[nodiscard]] inline std::vector<Interval> concatenate(std::vector<Interval> a, const std::vector<Interval>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace dnnsim
