#include "models/common/units.hpp"

#include <gtest/gtest.h>

namespace dnnsim {
namespace {

TEST(Units, ParsesDecimalAndBinarySizes) {
  EXPECT_DOUBLE_EQ(parse_quantity("80GiB", Dimension::bytes), 80.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(parse_quantity("25 MB", Dimension::bytes), 25e6);
  EXPECT_DOUBLE_EQ(parse_quantity("1.5KB", Dimension::bytes), 1500.0);
  EXPECT_DOUBLE_EQ(parse_quantity("8b", Dimension::bytes), 1.0);  // 8 bits = 1 byte
}

TEST(Units, BandwidthInBitsAndBytes) {
  EXPECT_DOUBLE_EQ(parse_quantity("25Gbps", Dimension::bandwidth), 25e9 / 8);  // bits → bytes
  EXPECT_DOUBLE_EQ(parse_quantity("3.2GB/s", Dimension::bandwidth), 3.2e9);
  EXPECT_DOUBLE_EQ(parse_quantity("1GiB/s", Dimension::bandwidth), 1073741824.0);
}

TEST(Units, TimesAndFlops) {
  EXPECT_DOUBLE_EQ(parse_quantity("2us", Dimension::seconds), 2e-6);
  EXPECT_DOUBLE_EQ(parse_quantity("1.5ms", Dimension::seconds), 1.5e-3);
  EXPECT_DOUBLE_EQ(parse_quantity("125TFlops", Dimension::flop_rate), 125e12);
  EXPECT_DOUBLE_EQ(parse_quantity("125 TFLOPS", Dimension::flop_rate), 125e12);  // datasheet spelling
  EXPECT_DOUBLE_EQ(parse_quantity("3GFlop", Dimension::flop), 3e9);
}

TEST(Units, ZeroNeedsNoUnitButOtherNumbersDo) {
  EXPECT_DOUBLE_EQ(parse_quantity("0", Dimension::seconds), 0.0);
  try {
    (void)parse_quantity("25", Dimension::bandwidth);
    FAIL() << "a unit-less bandwidth must be rejected";
  } catch (const UnitError& e) {
    EXPECT_NE(std::string(e.what()).find("has no unit"), std::string::npos) << e.what();
    EXPECT_EQ(e.column(), 2u);  // points just after the number
  }
}

TEST(Units, WrongUnitForDimensionIsRejected) {
  EXPECT_THROW((void)parse_quantity("25Gbps", Dimension::bytes), UnitError);
  EXPECT_THROW((void)parse_quantity("10GB", Dimension::seconds), UnitError);
  EXPECT_THROW((void)parse_quantity("-1s", Dimension::seconds), UnitError);
  EXPECT_THROW((void)parse_quantity("fast", Dimension::bandwidth), UnitError);
}

TEST(Units, StrongTypesCombine) {
  const Seconds t = Bytes(1e9) / BytesPerSecond(25e9);
  EXPECT_DOUBLE_EQ(t.value(), 0.04);
  EXPECT_EQ(format_bytes(Bytes(41.2 * 1073741824.0)), "41.2 GiB");
  EXPECT_EQ(format_seconds(Seconds(0.0035)), "3.5 ms");
}

}  // namespace
}  // namespace dnnsim
