// model/probe_keys.hpp lists the keys the tool readers give their
// measurements, so that a threshold profile's per_probe entry for a
// captured tool's number is accepted and a misspelt one refused: every key
// a reader produces must be on that list.
#include "model/probe_keys.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "ingest/captures.hpp"
#include "ingest/lspci_test_util.hpp"
#include "ingest/nvbandwidth.hpp"

namespace pcieval {
namespace {

using testing::capture_path;
using testing::read_capture;

std::set<std::string> probe_keys_of(const Captures& captures) {
  std::set<std::string> keys;
  for (const ToolCapture& tool : captures.tools) {
    for (const ToolMeasurement& printed : tool.measurements) keys.insert(printed.measurement.probe);
  }
  return keys;
}

TEST(ToolProbeKeys, EveryKeyTheReadersGiveTheCorpusIsListed) {
  std::set<std::string> produced;
  for (const auto& entry : std::filesystem::directory_iterator(capture_path(""))) {
    const std::string name = entry.path().filename().string();
    if (name == "README.md") continue;
    const std::string text = read_capture(name);
    auto sections = split_capture_sections(text);
    if (!sections) continue;
    Captures captures;
    if (!add_capture(text, name, sections.value(), captures)) continue;
    const std::set<std::string> keys = probe_keys_of(captures);
    produced.insert(keys.begin(), keys.end());
  }
  for (const std::string& key : produced) EXPECT_TRUE(is_probe_key(key)) << key << " is not in model/probe_keys.hpp";
  // The corpus holds all three tools: the check above checked something.
  EXPECT_TRUE(produced.count("nvbandwidth_host_to_device_memcpy_ce"));
  EXPECT_TRUE(produced.count("bandwidthtest_h2d_pinned"));
  EXPECT_TRUE(produced.count("nccltests_all_reduce"));
}

// Each nvbandwidth host test on the list is one the reader takes: a matrix
// of one GPU per listed key gives one measurement with that key.
TEST(ToolProbeKeys, EveryListedNvbandwidthTestIsRead) {
  for (const std::string_view key : kToolProbeKeys) {
    if (!key.starts_with("nvbandwidth_")) continue;
    const std::string test(key.substr(std::string_view("nvbandwidth_").size()));
    const std::string arrow =
        test.find("device_to_host") != std::string::npos || test.starts_with("all_to_host") ? "<-" : "->";
    const std::string text = "Running " + test + ".\nmemcpy CE CPU(row) " + arrow +
                             " GPU(column) bandwidth (GB/s)\n             0\n 0       25.10\n\nSUM " + test +
                             " 25.10\n";
    auto parsed = parse_nvbandwidth(text, "synthetic.txt");
    ASSERT_TRUE(parsed) << key << ": " << parsed.error().message;
    ASSERT_EQ(parsed->measurements.size(), 1U) << key;
    EXPECT_EQ(parsed->measurements.front().measurement.probe, key);
  }
}

}  // namespace
}  // namespace pcieval
