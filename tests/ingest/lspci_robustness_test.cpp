// Garbage, truncated and binary input: parse_lspci never crashes, never
// hangs, and everything it says stays printable.
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "ingest/lspci.hpp"
#include "ingest/lspci_test_util.hpp"

namespace pcieval::testing {
namespace {

// What a caller would put into notes and JSON: all of it must be printable.
void expect_printable(const Result<LspciCapture>& parsed, const std::string& what) {
  if (!parsed) {
    EXPECT_TRUE(printable(parsed.error().message)) << what;
    return;
  }
  for (const auto& note : parsed->notes) EXPECT_TRUE(printable(note)) << what << ": " << note;
  for (const LspciDevice& device : parsed->devices) {
    for (const auto& note : device.notes) EXPECT_TRUE(printable(note)) << what << ": " << note;
    if (device.placement_note) EXPECT_TRUE(printable(*device.placement_note)) << what;
    const auto& link = device.function.link;
    if (!link) continue;
    for (const auto* reading : {&link->max_speed, &link->current_speed}) {
      if (!*reading) EXPECT_TRUE(printable(reading->error().message)) << what << ": " << reading->error().message;
    }
    for (const auto* reading : {&link->max_width, &link->current_width}) {
      if (!*reading) EXPECT_TRUE(printable(reading->error().message)) << what << ": " << reading->error().message;
    }
  }
}

TEST(LspciRobustness, EveryPrefixOfACapture) {
  const std::string text = read_capture(kIcelakePlx);
  std::size_t parsed_ok = 0;
  for (std::size_t size = 0; size <= text.size(); ++size) {
    const auto parsed = parse_lspci(std::string_view(text).substr(0, size), "prefix");
    if (parsed) ++parsed_ok;
    // Only failures and a sample of successes are inspected in full: the
    // parse itself is what must not crash.
    if (!parsed || size % 97 == 0) expect_printable(parsed, "prefix " + std::to_string(size));
  }
  EXPECT_GT(parsed_ok, text.size() / 2);
  EXPECT_TRUE(parse_lspci(text, "whole"));
}

TEST(LspciRobustness, ThousandRandomByteFlips) {
  const std::string original = read_capture(kEscFull);
  std::mt19937 random(20240611);  // fixed: a failure must reproduce
  std::uniform_int_distribution<std::size_t> position(0, original.size() - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  std::string text = original;
  for (int flip = 0; flip < 1000; ++flip) {
    // Flips accumulate, so later parses see heavily damaged text.
    text[position(random)] = static_cast<char>(byte(random));
    const auto parsed = parse_lspci(text, "flipped");
    expect_printable(parsed, "flip " + std::to_string(flip));
    if (parsed) {
      for (const LspciDevice& device : parsed->devices) {
        // A parent is always another function of the capture.
        if (!device.function.parent) continue;
        EXPECT_NE(find(parsed.value(), to_string(*device.function.parent)), nullptr);
        EXPECT_NE(*device.function.parent, device.function.bdf);
      }
    }
  }
}

TEST(LspciRobustness, OneMegabyteOfRandomBytesQuickly) {
  std::mt19937 random(7);
  std::uniform_int_distribution<int> byte(0, 255);
  std::string noise(std::size_t{1} << 20, '\0');
  for (char& c : noise) c = static_cast<char>(byte(random));
  const auto start = std::chrono::steady_clock::now();
  const auto parsed = parse_lspci(noise, "noise");
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(parsed.ok());
  expect_printable(parsed, "noise");
  EXPECT_FALSE(looks_like_lspci_vv(noise));
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(took).count(), 2000);
}

TEST(LspciRobustness, RandomBytesInsideValidBlocksStayPrintable) {
  // Binary junk where the parser quotes text: speeds, widths, class and vendor names, NUMA, Bus.
  const std::string junk("\x01\xff\xfe\x80\x7f\x1b[31m\xc3\x28", 12);
  BlockSpec spec;
  spec.header = "01:00.0 " + junk + " controller: " + junk + " Corp";
  spec.express = "Endpoint " + junk;
  spec.lnkcap = "Port #0, Speed " + junk + ", Width x" + junk;
  spec.lnksta = "Speed 16GT/s" + junk + ", Width " + junk;
  spec.bus = "primary=00, secondary=" + junk + ", subordinate=03";
  spec.details = {"NUMA node: " + junk};
  const auto parsed = parse_lspci(render(spec), "junk");
  ASSERT_TRUE(parsed.ok());
  expect_printable(parsed, "junk");
  EXPECT_FALSE(parsed->devices.front().function.link->current_speed.ok());
}

TEST(LspciRobustness, HugeLinesAndManyBlocks) {
  // A single 4 MB line, and 20000 blocks: linear time, no recursion.
  const std::string line(std::size_t{4} << 20, 'A');
  EXPECT_FALSE(parse_lspci(line, "line").ok());
  std::string many;
  for (int i = 0; i < 20000; ++i) {
    char slot[16];
    std::snprintf(slot, sizeof slot, "%04x:%02x:00.0", i / 256, i % 256);
    many += gpu_block(slot, "Speed 16GT/s, Width x16");
  }
  const auto start = std::chrono::steady_clock::now();
  const auto parsed = parse_lspci(many, "many");
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->devices.size(), 20000U);
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(took).count(), 5000);
}

}  // namespace
}  // namespace pcieval::testing
