// CUDA samples bandwidthTest: new (GB/s) and old (MB/s = MiB/s) tables, shmoo
// tables, --csv lines, pasted runs of several devices.
#include "ingest/bandwidth_test.hpp"

#include <gtest/gtest.h>

#include "ingest/tool_test_util.hpp"

namespace pcieval::testing {
namespace {

constexpr const char* kQuick = "bwtest_esc8000a_e12_rtx6000ada_quick.txt";
constexpr const char* kOld = "bwtest_old_mibs_p100_pcie_gen3.txt";
constexpr const char* kShmoo = "bwtest_shmoo_dell_a100_pcie_h2d_limited.txt";

TEST(BandwidthTest, QuickRunsOfFourDevicesPastedTogether) {
  const auto parsed = parse_bandwidth_test(read_capture(kQuick), "bw.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->measurements.size(), 8u);  // h2d and d2h per device; d2d skipped
  const ToolMeasurement* h2d1 = find_measurement(*parsed, "bandwidthtest_h2d_pinned", "GPU 1");
  ASSERT_NE(h2d1, nullptr);
  EXPECT_DOUBLE_EQ(h2d1->measurement.stats.median_gbps, 26.8);
  EXPECT_EQ(h2d1->measurement.size_bytes, 32000000u);
  EXPECT_EQ(h2d1->measurement.method, CopyMethod::kCopyEngine);
  EXPECT_EQ(h2d1->measurement.host_memory, HostMemory::kPinned);
  EXPECT_EQ(h2d1->gpu_index, 1);
  const ToolMeasurement* d2h0 = find_measurement(*parsed, "bandwidthtest_d2h_pinned", "GPU 0");
  ASSERT_NE(d2h0, nullptr);
  EXPECT_DOUBLE_EQ(d2h0->measurement.stats.median_gbps, 26.2);
  EXPECT_EQ(d2h0->measurement.direction, Direction::kDeviceToHost);
  EXPECT_EQ(parsed->gpu_names.at(0), "NVIDIA RTX 6000 Ada Generation");
}

TEST(BandwidthTest, OldMegabytesAreMebibytesConvertedToGigabytes) {
  const auto parsed = parse_bandwidth_test(read_capture(kOld), "p100.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->measurements.size(), 4u);
  const ToolMeasurement* h2d = find_measurement(*parsed, "bandwidthtest_h2d_pinned", "GPU 0");
  ASSERT_NE(h2d, nullptr);
  EXPECT_NEAR(h2d->measurement.stats.median_gbps, 12150.7 * 1048576 / 1e9, 1e-9);
  EXPECT_EQ(h2d->measurement.size_bytes, 33554432u);
  const ToolMeasurement* pageable = find_measurement(*parsed, "bandwidthtest_d2h_pageable", "GPU 0");
  ASSERT_NE(pageable, nullptr);
  EXPECT_EQ(pageable->measurement.host_memory, HostMemory::kPageable);
  bool converted = false;
  for (const auto& note : parsed->notes) converted |= note.find("2^20") != std::string::npos;
  EXPECT_TRUE(converted);
}

TEST(BandwidthTest, ShmooTableGivesOneMeasurementPerSize) {
  const auto parsed = parse_bandwidth_test(read_capture(kShmoo));
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->measurements.size(), 34u);  // 17 sizes x 2 directions
  std::uint64_t largest = 0;
  double at_largest = 0;
  for (const auto& printed : parsed->measurements) {
    if (printed.measurement.direction == Direction::kHostToDevice && printed.measurement.size_bytes > largest) {
      largest = printed.measurement.size_bytes;
      at_largest = printed.measurement.stats.median_gbps;
    }
  }
  EXPECT_EQ(largest, 64000000u);
  EXPECT_DOUBLE_EQ(at_largest, 17.3);
  EXPECT_EQ(parsed->skipped_lines, 5u);  // the '#' comment lines; the dotted progress lines are bandwidthTest's
}

TEST(BandwidthTest, CsvLinesAndAllDevices) {
  const std::string text =
      "[CUDA Bandwidth Test] - Starting...\n Device 0: Tesla T4\n Device 1: Tesla T4\n"
      "bandwidthTest-H2D-Pinned, Bandwidth = 24.6 GB/s, Time = 0.00130 s, Size = 32000000 bytes, NumDevsUsed = 2\n"
      "bandwidthTest-D2H-Paged, Bandwidth = 3120.5 MB/s, Time = 0.01025 s, Size = 33554432 bytes, NumDevsUsed = 1\n"
      "bandwidthTest-D2D, Bandwidth = 239.6 GB/s, Time = 0.00013 s, Size = 32000000 bytes, NumDevsUsed = 1\n";
  const auto parsed = parse_bandwidth_test(text);
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->measurements.size(), 2u);
  EXPECT_EQ(parsed->measurements[0].measurement.subject, "sum of 2 GPUs");
  EXPECT_FALSE(parsed->measurements[0].gpu_index);
  EXPECT_EQ(parsed->measurements[1].measurement.host_memory, HostMemory::kPageable);
  EXPECT_NEAR(parsed->measurements[1].measurement.stats.median_gbps, 3120.5 * 1048576 / 1e9, 1e-9);
  EXPECT_EQ(parsed->skipped_lines, 0u);
}

TEST(BandwidthTest, RowsOutsideATableAreNotRead) {
  const auto parsed =
      parse_bandwidth_test("   32000000                     26.8\nHost to Device Bandwidth, 1 Device(s)\n");
  EXPECT_FALSE(parsed);
  const auto d2d_only = parse_bandwidth_test(
      " Device to Device Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n   Transfer Size (Bytes)\tBandwidth(GB/s)\n"
      "   32000000\t\t\t4366.8\n");
  EXPECT_FALSE(d2d_only);
}

TEST(BandwidthTest, Detection) {
  EXPECT_TRUE(looks_like_bandwidth_test(read_capture(kQuick)));
  EXPECT_TRUE(looks_like_bandwidth_test(read_capture(kOld)));
  EXPECT_FALSE(looks_like_bandwidth_test(read_capture("nvbw_hgx_h100_8gpu_gen5.txt")));
  EXPECT_FALSE(looks_like_bandwidth_test(read_capture(kEscFull)));
}

TEST(BandwidthTest, RobustToDamage) {
  expect_robust([](std::string_view text) { return parse_bandwidth_test(text); }, read_capture(kShmoo));
  expect_robust([](std::string_view text) { return parse_bandwidth_test(text); }, read_capture(kQuick));
}

}  // namespace
}  // namespace pcieval::testing
