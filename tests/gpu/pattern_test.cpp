// The verification pattern on the host side: runs on any machine.
#include "kernels/pattern.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace pcieval {
namespace {

std::vector<std::byte> buffer(std::size_t bytes) { return std::vector<std::byte>(bytes); }

TEST(Pattern, FilledBufferVerifies) {
  auto bytes = buffer(1 << 20);
  fill_pattern_host(bytes, 7);
  EXPECT_EQ(count_mismatches_host(bytes, 7), 0U);
}

TEST(Pattern, AnotherSeedDoesNotVerify) {
  auto bytes = buffer(4096);
  fill_pattern_host(bytes, 7);
  EXPECT_GT(count_mismatches_host(bytes, 8), 1000U) << "seeds must give unrelated words";
}

TEST(Pattern, OneCorruptedWordIsCounted) {
  auto bytes = buffer(1 << 16);
  fill_pattern_host(bytes, 3);
  bytes[12345] ^= std::byte{0x01};
  EXPECT_EQ(count_mismatches_host(bytes, 3), 1U);
}

TEST(Pattern, PoisonedBufferDoesNotVerify) {
  auto bytes = buffer(4096);
  fill_pattern_host(bytes, 3);
  poison_host(bytes);
  EXPECT_EQ(count_mismatches_host(bytes, 3), 4096U / 4);
}

TEST(Pattern, WordsDependOnIndexAndSeed) {
  EXPECT_NE(pattern_word(0, 1), pattern_word(1, 1));
  EXPECT_NE(pattern_word(0, 1), pattern_word(0, 2));
  EXPECT_NE(pattern_word(0, 1), pattern_word(std::uint64_t{1} << 32, 1)) << "the high half of the index counts";
  EXPECT_EQ(pattern_word(42, 9), pattern_word(42, 9));
}

}  // namespace
}  // namespace pcieval
