// Random draws that are the same on every platform and standard library (the <random> distributions
// are not: their algorithms are unspecified), so that a scenario and its seed give byte-identical
// outputs everywhere.
//
// SplitMix64: Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014,
// with the output function of Stafford's "variant 13" (the constants of java.util.SplittableRandom).
#pragma once

#include <cmath>
#include <cstdint>

namespace dnnsim {

// The golden-ratio increment of SplitMix64 (⌊2^64/φ⌋, odd): its state advances by this per draw.
inline constexpr std::uint64_t kSplitMix64Increment = 0x9e3779b97f4a7c15ULL;

// SplitMix64's output function: a bijection of 64-bit words that mixes every input bit into every
// output bit (also a cheap well-mixed hash of a key).
[[nodiscard]] constexpr std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// One SplitMix64 step on `state`: advance by the increment, return the mix of the new state.
[[nodiscard]] constexpr std::uint64_t splitmix64_next(std::uint64_t& state) {
  return splitmix64_mix(state += kSplitMix64Increment);
}

// A uniform double in [0, 1) from the 53 high bits of one 64-bit draw: u = (bits >> 11) · 2^-53.
// Every value is exact in a double and equally likely; 1 is never returned.
[[nodiscard]] constexpr double unit_uniform(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// unit_uniform of one draw of `engine` (a 64-bit engine such as std::mt19937_64, fully specified by
// the standard, or SplitMix64).
template <class Engine>
[[nodiscard]] double uniform_draw(Engine& engine) {
  return unit_uniform(engine());
}

// A SplitMix64 generator: deterministic 64-bit words and uniform doubles in [0, 1) from a seed.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() { return splitmix64_next(state_); }
  std::uint64_t operator()() { return next(); }
  double uniform() { return unit_uniform(next()); }
  // Exp(rate) by the inverse CDF: x = −ln(1 − u)/rate, u in [0, 1).
  double exponential(double rate) { return -std::log1p(-uniform()) / rate; }

 private:
  std::uint64_t state_;
};

}  // namespace dnnsim
