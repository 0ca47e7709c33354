// The fuzz smoke's mutator (mutator.hpp): a failure in CI reproduces from its index only if input i is
// a pure function of (seeds, seed, i).
#include "tests/fuzz/mutator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace dnnsim::fuzz {
namespace {

const std::vector<std::string> kSeeds{"bandwidth: 25Gbps\nlatency: 2us\n", "time_s,gbps\n0,10\n1.5,2e3\n", ""};

TEST(FuzzMutator, InputIDependsOnlyOnSeedsSeedAndI) {
  const Mutator first(kSeeds, 7), second(kSeeds, 7);
  std::vector<std::string> forward;
  for (std::uint64_t i = 0; i < 500; ++i) forward.push_back(first.input(i));
  // Asked again, in reverse order and from another mutator: the same bytes.
  for (std::uint64_t i = 500; i-- > 0;) ASSERT_EQ(second.input(i), forward[i]) << "input " << i;
  for (std::uint64_t i = 0; i < 500; ++i) ASSERT_EQ(first.input(i), forward[i]) << "input " << i;
}

TEST(FuzzMutator, AnotherSeedIsAnotherSequence) {
  const Mutator one(kSeeds, 1), two(kSeeds, 2);
  int same = 0;
  for (std::uint64_t i = 0; i < 200; ++i) same += one.input(i) == two.input(i);
  // Equal only when both draws picked the same seed and mutations that happen to agree (the empty
  // seed truncated, say): rare, far from all 200.
  EXPECT_LT(same, 100);
}

TEST(FuzzMutator, InputsDifferFromTheSeedsAndNumbersGetExtremes) {
  const Mutator mutator(kSeeds, 3);
  int unchanged = 0, extreme = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const std::string input = mutator.input(i);
    unchanged += input == kSeeds[0] || input == kSeeds[1];
    extreme += input.find("1e400") != std::string::npos;
  }
  // Every step changes its input (a kind that cannot apply is drawn again), so a non-empty seed comes
  // back only when a later step undoes an earlier one, or when a cross-over onto the empty seed takes
  // a whole other seed (1/3 × 1/9 × ~1/30 a step): a few in 1000.
  EXPECT_LT(unchanged, 20);
  // A number replaced by "1e400" is about 1/9 × 1/13 of the ~3,000 steps on inputs that mostly hold
  // numbers: about 20 expected.
  EXPECT_GT(extreme, 0);
}

TEST(FuzzMutator, NoSeedsOrEmptySeedsGiveInputsWithoutFailing) {
  EXPECT_EQ(Mutator({}, 1).input(0), "");
  const Mutator empty({""}, 1);
  for (std::uint64_t i = 0; i < 200; ++i) (void)empty.input(i);  // under ASan: no out-of-range access
}

}  // namespace
}  // namespace dnnsim::fuzz
