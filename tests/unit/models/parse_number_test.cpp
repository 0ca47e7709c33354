// The one reader of numbers in text (models/common/parse_number.hpp): the whole field or nothing.
#include "models/common/parse_number.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace dnnsim {
namespace {

TEST(ParseNumber, ReadsTheWholeTextOnly) {
  EXPECT_EQ(parse_number<int>("64"), 64);
  EXPECT_EQ(parse_number<int>("-3"), -3);
  EXPECT_EQ(parse_number<double>("1e-3"), 1e-3);
  EXPECT_EQ(parse_number<double>("2.5"), 2.5);
  // What std::stoi/stod accepted: a prefix, leading blanks, a sign std::from_chars does not read.
  for (const char* text : {"64x", " 64", "64 ", "+64", "", "0x10"}) EXPECT_FALSE(parse_number<int>(text)) << text;
  EXPECT_FALSE(parse_number<double>("2.5ms"));
}

TEST(ParseNumber, RangeAndSignAreTheTypes) {
  // std::stoul read "-1" as 2^64 − 1; 2^31 does not fit an int, where std::stoi threw std::out_of_range.
  EXPECT_FALSE(parse_number<std::size_t>("-1"));
  EXPECT_FALSE(parse_number<int>("2147483648"));
  EXPECT_EQ(parse_number<int>("2147483647"), 2147483647);
  EXPECT_FALSE(parse_number<long>("99999999999999999999"));  // 20 digits
}

TEST(ParseNumber, FloatsAreFinite) {
  for (const char* text : {"inf", "-inf", "nan", "1e999"}) EXPECT_FALSE(parse_number<double>(text)) << text;
  EXPECT_EQ(parse_number<double>("1e308"), 1e308);
}

}  // namespace
}  // namespace dnnsim
