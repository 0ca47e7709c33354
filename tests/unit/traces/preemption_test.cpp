#include "traces/network/preemption.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace dnnsim {
namespace {

constexpr double kNominal = 25e9;

PreemptionParams params(std::uint64_t seed, double mean_busy = 0.2, double mean_idle = 0.6,
                        double busy_fraction = 0.1) {
  return PreemptionParams{BytesPerSecond(kNominal), Seconds(mean_busy), Seconds(mean_idle), busy_fraction, seed};
}

std::vector<BandwidthPoint> generate(PreemptionProcess& process, std::size_t count) {
  std::vector<BandwidthPoint> points;
  while (points.size() < count) process.append_next(points);
  return points;
}

bool same(const std::vector<BandwidthPoint>& a, const std::vector<BandwidthPoint>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].at != b[i].at || a[i].bandwidth != b[i].bandwidth) return false;
  return true;
}

TEST(Preemption, SameSeedSameSequence) {
  PreemptionProcess a(params(derive_seed(7, 3)));
  PreemptionProcess b(params(derive_seed(7, 3)));
  EXPECT_TRUE(same(generate(a, 1000), generate(b, 1000)));  // bit for bit
}

TEST(Preemption, DifferentLinkIndexDifferentSequence) {
  EXPECT_NE(derive_seed(7, 0), derive_seed(7, 1));
  EXPECT_NE(derive_seed(7, 0), derive_seed(8, 0));
  PreemptionProcess a(params(derive_seed(7, 0)));
  PreemptionProcess b(params(derive_seed(7, 1)));
  const auto pa = generate(a, 100);
  const auto pb = generate(b, 100);
  EXPECT_NE(pa[1].at, pb[1].at);  // first flips differ (continuous durations: equal only by accident)
  EXPECT_FALSE(same(pa, pb));
}

TEST(Preemption, DeriveSeedIsSplitMix64OfSeedAndIndex) {
  // Values computed independently (Python, 64-bit wrapping arithmetic) from the formula in the
  // header: key = mix(seed + g), result = mix(key + (index + 1) * g). Pinned so that a change of
  // derivation (which would change every scenario's random streams) cannot go unnoticed.
  EXPECT_EQ(derive_seed(42, 0), 0x57e1faba65107204ULL);
  EXPECT_EQ(derive_seed(42, 1), 0xf4abd143feb24055ULL);
  EXPECT_EQ(derive_seed(0, 0), 0xa706dd2f4d197e6fULL);
}

TEST(Preemption, ChangePointsAlternateAndIncrease) {
  PreemptionProcess process(params(derive_seed(1, 0)));
  std::vector<BandwidthPoint> points;
  process.append_next(points);
  ASSERT_EQ(points.size(), 1u);  // the first call gives the state at t = 0
  EXPECT_EQ(points[0].at.value(), 0.0);
  points = generate(process, 10000);
  const double busy = kNominal * 0.1;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const double value = points[i].bandwidth.value();
    EXPECT_TRUE(value == kNominal || value == busy) << i;
    if (i > 0) {
      EXPECT_GT(points[i].at, points[i - 1].at) << i;
      EXPECT_NE(value, points[i - 1].bandwidth.value()) << i;  // every point is a state change
    }
  }
}

// Long-run statistics over 200k idle/busy cycles. With mean_busy = 0.2 s and mean_idle = 0.6 s:
//  - the busy share of time tends to 0.2 / (0.2 + 0.6) = 0.25 (renewal-reward theorem);
//  - the mean idle (busy) period tends to 0.6 s (0.2 s).
// For exponential periods the standard deviation equals the mean, so the sample mean of n = 200k
// periods has relative standard error 1/sqrt(n) ≈ 0.22%; the busy share is a ratio of such sums,
// with a relative error of the same order (< 0.4%). A 2% tolerance is > 5 standard errors.
TEST(Preemption, LongRunBusyShareAndMeanPeriods) {
  constexpr double kBusy = 0.2;
  constexpr double kIdle = 0.6;
  PreemptionProcess process(params(derive_seed(2024, 5), kBusy, kIdle, 0.0));
  const auto points = generate(process, 400001);  // 400k periods after the t = 0 point

  double busy_time = 0.0;
  double idle_time = 0.0;
  std::size_t busy_count = 0;
  std::size_t idle_count = 0;
  for (std::size_t i = 0; i + 1 < points.size(); ++i) {
    const double length = (points[i + 1].at - points[i].at).value();
    if (points[i].bandwidth.value() == 0.0) {  // busy_fraction 0: busy means 0 B/s
      busy_time += length;
      ++busy_count;
    } else {
      idle_time += length;
      ++idle_count;
    }
  }
  const double share = busy_time / (busy_time + idle_time);
  const double expected_share = kBusy / (kBusy + kIdle);
  EXPECT_NEAR(share, expected_share, 0.02 * expected_share);
  EXPECT_NEAR(idle_time / static_cast<double>(idle_count), kIdle, 0.02 * kIdle);
  EXPECT_NEAR(busy_time / static_cast<double>(busy_count), kBusy, 0.02 * kBusy);
  EXPECT_GE(busy_count, 199999u);
  EXPECT_GE(idle_count, 199999u);
}

// The first state follows the stationary law: P(busy) = 0.2 / 0.8 = 0.25. Over n = 20000
// independent links the observed share has standard deviation sqrt(0.25 * 0.75 / n) ≈ 0.0031;
// the tolerance 0.015 is about 5 of them.
TEST(Preemption, InitialStateIsStationary) {
  constexpr int kLinks = 20000;
  int busy = 0;
  for (int i = 0; i < kLinks; ++i) {
    PreemptionProcess process(params(derive_seed(99, static_cast<std::uint64_t>(i))));
    std::vector<BandwidthPoint> first;
    process.append_next(first);
    if (first[0].bandwidth.value() < kNominal) ++busy;
  }
  EXPECT_NEAR(static_cast<double>(busy) / kLinks, 0.25, 0.015);
}

TEST(Preemption, UntilReplaysFromTheSeed) {
  PreemptionProcess process(params(derive_seed(5, 2)));
  const BandwidthSchedule first = process.until(Seconds(50.0));
  const auto points = generate(process, first.points.size() + 1);
  // until() gives exactly the change points <= 50 s, the same as append_next...
  ASSERT_GE(first.points.size(), 2u);
  EXPECT_FALSE(first.period.has_value());
  for (std::size_t i = 0; i < first.points.size(); ++i) {
    EXPECT_EQ(first.points[i].at, points[i].at) << i;
    EXPECT_EQ(first.points[i].bandwidth, points[i].bandwidth) << i;
    EXPECT_LE(first.points[i].at.value(), 50.0);
  }
  EXPECT_GT(points[first.points.size()].at.value(), 50.0);
  // ...and does not depend on the append_next calls made in between.
  const BandwidthSchedule again = process.until(Seconds(50.0));
  EXPECT_TRUE(same(first.points, again.points));
  // The schedule is a valid one: its bandwidth at a date is that of the last change before it.
  EXPECT_EQ(first.at(Seconds(0.0)), points[0].bandwidth);
}

TEST(Preemption, RejectsBadParameters) {
  EXPECT_THROW(PreemptionProcess(params(1, 0.0, 1.0)), std::invalid_argument);   // mean busy 0
  EXPECT_THROW(PreemptionProcess(params(1, 1.0, -1.0)), std::invalid_argument);  // mean idle < 0
  EXPECT_THROW(PreemptionProcess(params(1, 1.0, 1.0, 1.5)), std::invalid_argument);
  EXPECT_THROW(PreemptionProcess(params(1, 1.0, 1.0, std::nan(""))), std::invalid_argument);
  PreemptionProcess ok(params(1));
  EXPECT_THROW((void)ok.until(Seconds(-1.0)), std::invalid_argument);
}

}  // namespace
}  // namespace dnnsim
