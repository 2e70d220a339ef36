// model/text.hpp: the number and size forms that reasons, tables and pages
// print, pinned byte for byte (each was a private copy before).
#include "model/text.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace pcieval {
namespace {

TEST(TextTest, FixedAndBandwidth) {
  EXPECT_EQ(fixed_text(27.604, 2), "27.60");
  EXPECT_EQ(fixed_text(3, 0), "3");
  EXPECT_EQ(gbps_text(27.65), "27.6 GB/s");  // one decimal, as verdict reasons write it
  EXPECT_EQ(gbps_text(23.456, 2), "23.46 GB/s");
}

TEST(TextTest, PercentRoundsToWhole) {
  EXPECT_EQ(percent_text(0.85), "85%");
  EXPECT_EQ(percent_text(0.005), "1%");
  EXPECT_EQ(percent_text(0), "0%");
}

TEST(TextTest, BinarySizes) {
  EXPECT_EQ(binary_size_text(512), "512 B");
  EXPECT_EQ(binary_size_text(4096), "4 KiB");
  EXPECT_EQ(binary_size_text(256.0 * 1024 * 1024), "256 MiB");
  EXPECT_EQ(binary_size_text(1536.0 * 1024 * 1024), "1.5 GiB");
  EXPECT_EQ(binary_size_text(2048.0 * 1024 * 1024 * 1024 * 1024), "2048 TiB");  // no unit past TiB
}

TEST(TextTest, ExactSizesUseTheLargestUnitThatDivides) {
  EXPECT_EQ(exact_size_text(std::uint64_t{1} << 30), "1 GiB");
  EXPECT_EQ(exact_size_text(std::uint64_t{256} << 20), "256 MiB");
  EXPECT_EQ(exact_size_text(std::uint64_t{1536} << 20), "1536 MiB");
  EXPECT_EQ(exact_size_text(4096), "4 KiB");
  EXPECT_EQ(exact_size_text(1000), "1000 bytes");
}

TEST(TextTest, HexIsLowerCaseAndZeroPaddedAsLspciWritesIt) {
  EXPECT_EQ(hex_text(0x10de, 4), "10de");
  EXPECT_EQ(hex_text(0x0b, 2), "0b");
  EXPECT_EQ(hex_text(0x030200, 6), "030200");
  EXPECT_EQ(hex_text(0x1af4, 2), "1af4");  // never cut: a wider value keeps its digits
}

}  // namespace
}  // namespace pcieval
