// Helpers shared by the bandwidth-tool parser tests (nvbandwidth,
// bandwidthTest, nccl-tests): finding a measurement, and the robustness sweep
// every parser must survive.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <string>

#include "ingest/lspci_test_util.hpp"
#include "ingest/tool_output.hpp"

namespace pcieval::testing {

inline const ToolMeasurement* find_measurement(const ToolCapture& capture, const std::string& probe,
                                               const std::string& subject) {
  for (const ToolMeasurement& printed : capture.measurements) {
    if (printed.measurement.probe == probe && printed.measurement.subject == subject) return &printed;
  }
  return nullptr;
}

inline bool printable_text(const std::string& text) {
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f) return false;
  }
  return true;
}

using ToolParser = std::function<Result<ToolCapture>(std::string_view)>;

// Every prefix (sampled), a thousand accumulating byte flips, binary noise
// and one 8 MB line: never a crash, every message printable, and the whole
// sweep well within a second per megabyte.
inline void expect_robust(const ToolParser& parse, const std::string& original) {
  const auto check = [](const Result<ToolCapture>& parsed, const std::string& what) {
    if (!parsed) {
      EXPECT_TRUE(printable_text(parsed.error().message)) << what;
      return;
    }
    for (const auto& note : parsed->notes) EXPECT_TRUE(printable_text(note)) << what << ": " << note;
    for (const auto& printed : parsed->measurements) {
      EXPECT_TRUE(printable_text(printed.measurement.subject)) << what;
      EXPECT_GE(printed.measurement.stats.median_gbps, 0) << what;
    }
  };
  for (std::size_t size = 0; size <= original.size(); size += 1 + original.size() / 300) {
    check(parse(std::string_view(original).substr(0, size)), "prefix " + std::to_string(size));
  }
  std::mt19937 random(5);  // fixed: a failure must reproduce
  std::uniform_int_distribution<std::size_t> position(0, original.size() - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  std::string text = original;
  for (int flip = 0; flip < 1000; ++flip) {
    text[position(random)] = static_cast<char>(byte(random));
    if (flip % 10 == 0) check(parse(text), "flip " + std::to_string(flip));
  }
  std::string noise(1 << 16, '\0');
  for (char& c : noise) c = static_cast<char>(byte(random));
  check(parse(noise), "binary noise");
  const auto started = std::chrono::steady_clock::now();
  check(parse(std::string(8 << 20, '7')), "one 8 MB line");
  check(parse(std::string(1 << 20, '\n')), "a million blank lines");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

}  // namespace pcieval::testing
