// Blind mutations of a target's seed inputs for the CI smoke of the fuzz targets (replay_main.cpp
// --mutate, docs/testing.md "Fuzz campaigns"). The kinds are libFuzzer's (its MutationDispatcher: bit
// flips, interesting bytes, insert and erase, copy a part, cross-over of two inputs, up to 5 stacked
// as its -mutate_depth), plus one aimed at our readers: a number replaced by an extreme. There is no
// coverage feedback and no growing corpus, so this finds shallow bugs only; the libFuzzer campaigns
// (scripts/fuzz) remain the real fuzzing.
//
// Input i is a pure function of (seeds, seed, i), so a failure reproduces from its index alone. The
// generator is std::mt19937_64 seeded through std::seed_seq, both fixed by the standard; ranges are
// drawn with a plain modulo, not std::uniform_int_distribution, whose algorithm differs between
// standard libraries.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnsim::fuzz {

class Mutator {
 public:
  Mutator(std::vector<std::string> seeds, std::uint64_t seed) : seeds_(std::move(seeds)), seed_(seed) {}

  std::string input(std::uint64_t index) const {
    std::seed_seq sequence{static_cast<std::uint32_t>(seed_), static_cast<std::uint32_t>(seed_ >> 32),
                           static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32)};
    Random random{std::mt19937_64(sequence)};
    if (seeds_.empty()) return {};
    std::string bytes = seeds_[random.below(seeds_.size())];
    const std::size_t depth = 1 + random.below(5);
    for (std::size_t i = 0; i < depth; ++i) {
      // A kind that cannot apply (a bit flip in an empty input, a number change without numbers) is
      // drawn again, as libFuzzer does; an insertion always applies, so this ends.
      for (const std::string before = bytes; bytes == before;) mutate_once(bytes, random);
    }
    return bytes;
  }

 private:
  struct Random {
    std::mt19937_64 engine;
    std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(engine() % n); }
    bool coin() { return (engine() & 1) != 0; }
  };

  // A range [begin, end) of `bytes`: half the time whole lines (1 to 3), since every text format we
  // read is line-based; otherwise up to 16 bytes.
  static std::pair<std::size_t, std::size_t> pick_range(std::string_view bytes, Random& random) {
    if (bytes.empty()) return {0, 0};
    std::size_t begin = random.below(bytes.size());
    std::size_t end;
    if (random.coin()) {
      const std::size_t line_start = bytes.rfind('\n', begin);
      begin = line_start == std::string_view::npos ? 0 : line_start + 1;
      end = begin;
      for (std::size_t lines = 1 + random.below(3); lines > 0 && end < bytes.size(); --lines) {
        const std::size_t newline = bytes.find('\n', end);
        end = newline == std::string_view::npos ? bytes.size() : newline + 1;
      }
    } else {
      end = begin + 1 + random.below(std::min<std::size_t>(bytes.size() - begin, 16));
    }
    return {begin, end};
  }

  // The number-looking tokens of `bytes` ([-+]digits[.digits][e[-+]digits]), as [begin, end).
  static std::vector<std::pair<std::size_t, std::size_t>> numbers(std::string_view bytes) {
    const auto digit = [&](std::size_t i) { return i < bytes.size() && bytes[i] >= '0' && bytes[i] <= '9'; };
    std::vector<std::pair<std::size_t, std::size_t>> found;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      if (!digit(i) || (i > 0 && (digit(i - 1) || bytes[i - 1] == '.'))) continue;
      const std::size_t begin = i > 0 && (bytes[i - 1] == '-' || bytes[i - 1] == '+') ? i - 1 : i;
      std::size_t end = i;
      while (digit(end)) ++end;
      if (end < bytes.size() && bytes[end] == '.' && digit(end + 1))
        for (++end; digit(end);) ++end;
      if (end < bytes.size() && (bytes[end] == 'e' || bytes[end] == 'E')) {
        const std::size_t exponent =
            end + 1 + (end + 1 < bytes.size() && (bytes[end + 1] == '-' || bytes[end + 1] == '+'));
        if (digit(exponent))
          for (end = exponent; digit(end);) ++end;
      }
      found.emplace_back(begin, end);
      i = end;
    }
    return found;
  }

  void mutate_once(std::string& bytes, Random& random) const {
    // Bytes that end or split tokens in YAML, CSV, JSON and the line formats, and digits.
    static constexpr char kInterestingBytes[] = "\x00\xff\n:-9012345678 \t,\"[{#.";
    static constexpr std::string_view kInteresting(kInterestingBytes, sizeof kInterestingBytes - 1);
    // Values at the edges of the readers' ranges and of the integer and floating-point types.
    static constexpr std::array<std::string_view, 13> kExtremes{"1e400",
                                                                "-1",
                                                                "0",
                                                                "4294967296",
                                                                "nan",
                                                                "-0",
                                                                "1e-400",
                                                                "inf",
                                                                "2147483648",
                                                                "9223372036854775808",
                                                                "18446744073709551616",
                                                                "0.000001",
                                                                "999999999999999999999"};
    const std::string& other = seeds_[random.below(seeds_.size())];
    switch (random.below(9)) {
      case 0:  // flip a bit
        if (!bytes.empty()) bytes[random.below(bytes.size())] ^= static_cast<char>(1u << random.below(8));
        break;
      case 1:  // set a byte to an interesting value
        if (!bytes.empty()) bytes[random.below(bytes.size())] = kInteresting[random.below(kInteresting.size())];
        break;
      case 2: {  // insert 1 to 8 bytes, random or one interesting byte repeated
        const std::size_t at = random.below(bytes.size() + 1), count = 1 + random.below(8);
        std::string inserted;
        const bool repeat = random.coin();
        const char repeated = kInteresting[random.below(kInteresting.size())];
        for (std::size_t i = 0; i < count; ++i) inserted += repeat ? repeated : static_cast<char>(random.below(256));
        bytes.insert(at, inserted);
        break;
      }
      case 3: {  // erase a range
        const auto [begin, end] = pick_range(bytes, random);
        bytes.erase(begin, end - begin);
        break;
      }
      case 4: {  // duplicate a range at another place
        const auto [begin, end] = pick_range(bytes, random);
        const std::string part = bytes.substr(begin, end - begin);
        bytes.insert(random.below(bytes.size() + 1), part);
        break;
      }
      case 5: {  // cross-over: this input's head, then another seed's tail
        const std::size_t head = random.below(bytes.size() + 1), tail = random.below(other.size() + 1);
        bytes = bytes.substr(0, head) + other.substr(tail);
        break;
      }
      case 6: {  // cross-over: a range of another seed inserted here
        const auto [begin, end] = pick_range(other, random);
        bytes.insert(random.below(bytes.size() + 1), other.substr(begin, end - begin));
        break;
      }
      case 7: {  // a number replaced by an extreme
        const auto found = numbers(bytes);
        if (found.empty()) break;
        const auto [begin, end] = found[random.below(found.size())];
        bytes.replace(begin, end - begin, kExtremes[random.below(kExtremes.size())]);
        break;
      }
      default:  // truncate
        bytes.resize(random.below(bytes.size() + 1));
        break;
    }
  }

  std::vector<std::string> seeds_;
  std::uint64_t seed_;
};

}  // namespace dnnsim::fuzz
