#include "traces/network/preemption.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "models/common/random.hpp"

namespace dnnsim {
namespace {

bool positive_finite(double x) { return std::isfinite(x) && x > 0; }

PreemptionParams checked(PreemptionParams params) {
  if (!positive_finite(params.nominal.value()))
    throw std::invalid_argument(
        fmt::format("preemption: nominal bandwidth must be > 0, got {:g} B/s", params.nominal.value()));
  if (!positive_finite(params.mean_busy.value()))
    throw std::invalid_argument(
        fmt::format("preemption: mean busy period must be > 0, got {:g} s", params.mean_busy.value()));
  if (!positive_finite(params.mean_idle.value()))
    throw std::invalid_argument(
        fmt::format("preemption: mean idle period must be > 0, got {:g} s", params.mean_idle.value()));
  if (!(params.busy_fraction >= 0.0 && params.busy_fraction <= 1.0))
    throw std::invalid_argument(
        fmt::format("preemption: busy fraction must be in [0, 1], got {:g}", params.busy_fraction));
  return params;
}

}  // namespace

std::uint64_t derive_seed(std::uint64_t scenario_seed, std::uint64_t index) {
  const std::uint64_t key = splitmix64_mix(scenario_seed + kSplitMix64Increment);
  // Unsigned arithmetic wraps modulo 2^64, as SplitMix64 wants.
  return splitmix64_mix(key + (index + 1) * kSplitMix64Increment);
}

PreemptionProcess::PreemptionProcess(PreemptionParams params) : params_(checked(params)), rng_(params.seed) {}

double PreemptionProcess::uniform() { return uniform_draw(rng_); }

double PreemptionProcess::exponential(double mean) {
  // Inverse CDF of Exp(1/mean): F(x) = 1 - exp(-x/mean), so x = -mean * ln(1 - u), u in [0, 1).
  return -mean * std::log1p(-uniform());
}

BytesPerSecond PreemptionProcess::current_bandwidth() const {
  return busy_ ? params_.nominal * params_.busy_fraction : params_.nominal;
}

void PreemptionProcess::append_next(std::vector<BandwidthPoint>& out) {
  if (!started_) {
    const double busy = params_.mean_busy.value();
    const double p_busy = busy / (busy + params_.mean_idle.value());
    busy_ = uniform() < p_busy;
    started_ = true;
    since_ = 0.0;
    out.push_back(BandwidthPoint{Seconds(0.0), current_bandwidth()});
    return;
  }
  const double duration = exponential(busy_ ? params_.mean_busy.value() : params_.mean_idle.value());
  double next = since_ + duration;
  // A draw of u = 0 (or a duration below half an ulp of a late date) would not move the clock; keep
  // the dates strictly increasing by moving to the next representable date instead.
  if (!(next > since_)) next = std::nextafter(since_, std::numeric_limits<double>::infinity());
  since_ = next;
  busy_ = !busy_;
  out.push_back(BandwidthPoint{Seconds(since_), current_bandwidth()});
}

BandwidthSchedule PreemptionProcess::until(Seconds horizon) const {
  if (!std::isfinite(horizon.value()) || horizon.value() < 0)
    throw std::invalid_argument(
        fmt::format("preemption: horizon must be a finite date >= 0, got {:g} s", horizon.value()));
  PreemptionProcess replay(params_);
  std::vector<BandwidthPoint> points;
  do {
    replay.append_next(points);
  } while (points.back().at <= horizon);
  points.pop_back();  // the first change after the horizon
  return BandwidthSchedule{std::move(points), std::nullopt};
}

}  // namespace dnnsim
