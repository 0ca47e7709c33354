#include "models/common/random.hpp"

#include <gtest/gtest.h>

#include <random>

namespace dnnsim {
namespace {

// The reference outputs of Vigna's splitmix64.c (prng.di.unimi.it) started from state 0: the first
// three words every SplitMix64 implementation must give.
TEST(Random, SplitMix64MatchesTheReferenceSequence) {
  SplitMix64 rng(0);
  EXPECT_EQ(rng.next(), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(rng.next(), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(rng.next(), 0x06c45d188009454fULL);
  // The mix alone is the output for a state already advanced: mix(0 + increment) is the first word.
  EXPECT_EQ(splitmix64_mix(kSplitMix64Increment), 0xe220a8397b1dcdafULL);
}

// u = (bits >> 11)·2^-53: the 11 low bits are dropped, the smallest step is 2^-53, and all ones give
// 1 − 2^-53, the largest double below 1.
TEST(Random, UnitUniformUsesTheHigh53Bits) {
  EXPECT_EQ(unit_uniform(0), 0.0);
  EXPECT_EQ(unit_uniform(0x7ffULL), 0.0);
  EXPECT_EQ(unit_uniform(0x800ULL), 0x1.0p-53);
  EXPECT_EQ(unit_uniform(~0ULL), 1.0 - 0x1.0p-53);
  EXPECT_EQ(unit_uniform(1ULL << 63), 0.5);
}

// std::mt19937_64 is fully specified: its 10000th output from the default seed is 9981545732273789042
// (C++ standard, [rand.predef]); uniform_draw takes one word per call.
TEST(Random, UniformDrawTakesOneWordOfTheEngine) {
  std::mt19937_64 engine;
  engine.discard(9999);
  EXPECT_EQ(uniform_draw(engine), unit_uniform(9981545732273789042ULL));
  SplitMix64 a(7), b(7);
  EXPECT_EQ(uniform_draw(a), b.uniform());
}

}  // namespace
}  // namespace dnnsim
