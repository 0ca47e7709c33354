// Preemption of a link by another tenant: a seeded two-state (idle/busy) on/off Markov process.
//
// Model: the classic ON/OFF source (Anick, Mitra & Sondhi, "Stochastic theory of a data-handling
// system with multiple sources", Bell System Technical Journal 61(8), 1982), i.e. a two-state
// Markov-modulated process in the sense of Heffes & Lucantoni ("A Markov modulated characterization
// of packetized voice and data traffic and related statistical multiplexer performance", IEEE JSAC
// 4(6), 1986). The background tenant alternates between idle periods, exponential with mean
// `mean_idle`, and busy periods, exponential with mean `mean_busy`. While it is idle our link offers
// `nominal`; while it is busy, `nominal * busy_fraction`. The first state is drawn from the
// stationary distribution, P(busy) = mean_busy / (mean_busy + mean_idle), so the process is
// stationary from t = 0 and the long-run busy fraction of time is that same ratio.
//
// Determinism: the sequence depends only on the parameters, on every platform and standard library.
// Draws come from std::mt19937_64 (fully specified by the standard) seeded with `seed`, in this
// order: one uniform for the initial state, then one per period for its duration. A uniform is
// u = (rng() >> 11) * 2^-53 in [0, 1); the initial state is busy iff u < P(busy); a duration is
// -mean * log1p(-u) (inverse CDF). No std::*_distribution is used (their algorithms are
// implementation-defined). The only platform dependence left is the last bit of libm's log1p.
//
// Feeding SimGrid (done by the sim layer, not here): the output is absolute dates and absolute
// bytes/s, what ProfileBuilder::from_string takes. A non-repeating profile can instead call
// append_next lazily from ProfileBuilder::from_callback(name, cb, -1); note that in the event list a
// callback fills, SimGrid 3.32 stores each DatedValue::date_ as the delay since the previous event
// (from_string converts its absolute dates that way; Profile::next adds date_ to the current date),
// so the adapter must append {at - previous_at, bandwidth}.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "models/common/units.hpp"
#include "traces/network/bandwidth_schedule.hpp"

namespace dnnsim {

struct PreemptionParams {
  BytesPerSecond nominal;  // bandwidth when the other tenant is idle, > 0
  Seconds mean_busy;       // mean busy (preempted) period, > 0
  Seconds mean_idle;       // mean idle period, > 0
  double busy_fraction;    // share of `nominal` left to us while preempted, in [0, 1]
  std::uint64_t seed;      // e.g. derive_seed(scenario_seed, link_index)
};

class PreemptionProcess {
 public:
  // @throw std::invalid_argument if a parameter is out of its range (see PreemptionParams).
  explicit PreemptionProcess(PreemptionParams params);

  // Appends the next change point(s) — at least one — in time order. The first call appends the
  // point at t = 0 (the initial state); each later one the date at which the state flips and the
  // bandwidth from then on. Dates are strictly increasing and values alternate between `nominal`
  // and `nominal * busy_fraction`.
  void append_next(std::vector<BandwidthPoint>& out);

  // Every change point with a date <= `horizon`, from t = 0, as a non-repeating schedule (the last
  // value holds after it). Replays the process from its seed, so it neither depends on nor disturbs
  // the append_next calls made on this object. (const: stronger than the non-const signature of the
  // brief, and compatible with it.)
  // @throw std::invalid_argument if `horizon` is negative or not finite.
  [[nodiscard]] BandwidthSchedule until(Seconds horizon) const;

  [[nodiscard]] const PreemptionParams& params() const { return params_; }

 private:
  [[nodiscard]] double uniform();
  [[nodiscard]] double exponential(double mean);
  [[nodiscard]] BytesPerSecond current_bandwidth() const;

  PreemptionParams params_;
  std::mt19937_64 rng_;
  bool started_ = false;
  bool busy_ = false;
  double since_ = 0.0;  // date the current state began (already appended)
};

// Seed of link number `index` from a scenario seed, so that each link gets its own stream:
// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014).
// With mix() the SplitMix64 finalizer and g = 0x9e3779b97f4a7c15 its increment:
//   key = mix(scenario_seed + g)            (the first SplitMix64 output of scenario_seed)
//   derive_seed = mix(key + (index + 1) * g) (the index-th output of a SplitMix64 started at key)
// Hashing the scenario seed first keeps (seed, index + 1) and (seed + g, index) apart.
[[nodiscard]] std::uint64_t derive_seed(std::uint64_t scenario_seed, std::uint64_t index);

}  // namespace dnnsim
