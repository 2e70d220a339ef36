// nvbandwidth text and -j JSON: each host<->device matrix cell becomes one
// measurement with what it stands for (direction, method, aggregation).
#include "ingest/nvbandwidth.hpp"

#include <gtest/gtest.h>

#include "ingest/tool_test_util.hpp"

namespace pcieval::testing {
namespace {

constexpr const char* kH100Text = "nvbw_hgx_h100_8gpu_gen5.txt";
constexpr const char* kRtx4090Json = "nvbw_json_8x_rtx4090_gpu5_x8.json";

TEST(Nvbandwidth, TextReadsEveryHostTestPerGpuWithAddresses) {
  const auto parsed = parse_nvbandwidth(read_capture(kH100Text), "h100.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  // 8 GPUs x (h2d ce, d2h ce, h2d bidirectional ce, h2d sm), and the
  // device-to-device write test's 8 x 7 ordered pairs (issue 28).
  EXPECT_EQ(parsed->measurements.size(), 32u + 56u);
  ASSERT_EQ(parsed->gpu_addresses.size(), 8u);
  EXPECT_EQ(to_string(parsed->gpu_addresses.at(5)), "0000:ab:00.0");
  EXPECT_EQ(parsed->gpu_names.at(0), "NVIDIA H100 80GB HBM3");

  const ToolMeasurement* h2d = find_measurement(*parsed, "nvbandwidth_host_to_device_memcpy_ce", "0000:ab:00.0");
  ASSERT_NE(h2d, nullptr);
  EXPECT_DOUBLE_EQ(h2d->measurement.stats.median_gbps, 55.33);
  EXPECT_EQ(h2d->measurement.direction, Direction::kHostToDevice);
  EXPECT_EQ(h2d->measurement.method, CopyMethod::kCopyEngine);
  EXPECT_EQ(h2d->measurement.aggregation, Aggregation::kAlone);
  ASSERT_EQ(h2d->measurement.gpus.size(), 1u);
  EXPECT_EQ(h2d->gpu_index, 5);
  EXPECT_EQ(h2d->source, "h100.txt");
  EXPECT_EQ(h2d->line, 25u);  // the matrix row

  const ToolMeasurement* d2h = find_measurement(*parsed, "nvbandwidth_device_to_host_memcpy_ce", "0000:18:00.0");
  ASSERT_NE(d2h, nullptr);
  EXPECT_EQ(d2h->measurement.direction, Direction::kDeviceToHost);
  EXPECT_DOUBLE_EQ(d2h->measurement.stats.median_gbps, 55.24);

  const ToolMeasurement* bidir =
      find_measurement(*parsed, "nvbandwidth_host_to_device_bidirectional_memcpy_ce", "0000:db:00.0");
  ASSERT_NE(bidir, nullptr);
  EXPECT_EQ(bidir->measurement.aggregation, Aggregation::kWithReverse);
  const ToolMeasurement* sm = find_measurement(*parsed, "nvbandwidth_host_to_device_memcpy_sm", "0000:3a:00.0");
  ASSERT_NE(sm, nullptr);
  EXPECT_EQ(sm->measurement.method, CopyMethod::kSmKernel);
  EXPECT_DOUBLE_EQ(sm->measurement.stats.median_gbps, 35.39);

  // The device-to-device test is read now, not named among the skipped.
  for (const auto& note : parsed->notes) EXPECT_EQ(note.find("device_to_device_memcpy_write_ce"), std::string::npos);
  const ToolMeasurement* d2d = find_measurement(*parsed, "p2p_write_ce", "0000:18:00.0->0000:ab:00.0");
  ASSERT_NE(d2d, nullptr);
  EXPECT_EQ(d2d->measurement.direction, Direction::kDeviceToDevice);
  ASSERT_EQ(d2d->measurement.gpus.size(), 2u);
  EXPECT_EQ(to_string(d2d->measurement.gpus[1]), "0000:ab:00.0");
  // The four '#' comment lines and the shell prompt are not nvbandwidth's.
  EXPECT_EQ(parsed->skipped_lines, 5u);
}

TEST(Nvbandwidth, OldTextWithoutAddressesKeepsGpuIndex) {
  const std::string text =
      "nvbandwidth Version: v0.5\n\nDevice 0: NVIDIA A10\n\nRunning host_to_device_memcpy_ce.\n"
      "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n           0\n 0     25.17\n\n"
      "SUM host_to_device_memcpy_ce 25.17\n";
  const auto parsed = parse_nvbandwidth(text);
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->measurements.size(), 1u);
  EXPECT_EQ(parsed->measurements[0].measurement.subject, "GPU 0");
  EXPECT_TRUE(parsed->measurements[0].measurement.gpus.empty());
  EXPECT_TRUE(parsed->gpu_addresses.empty());
}

TEST(Nvbandwidth, NotApplicableCellsAndWaivedTests) {
  const std::string text =
      "Running host_to_device_memcpy_ce.\nmemcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
      "           0         1\n 0     N/A     12.36\n\nRunning device_to_host_memcpy_sm.\nWaived: \n";
  const auto parsed = parse_nvbandwidth(text);
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->measurements.size(), 1u);
  EXPECT_EQ(parsed->measurements[0].measurement.subject, "GPU 1");
  bool waived = false;
  for (const auto& note : parsed->notes) waived |= note.find(":7: device_to_host_memcpy_sm") != std::string::npos;
  EXPECT_TRUE(waived);
  EXPECT_EQ(parsed->measurements[0].measurement.size_bytes, 512u << 20);  // nvbandwidth's default, noted
}

TEST(Nvbandwidth, NoCopyResultIsAnError) {
  // A device-to-device run alone is read (issue 28); a latency run is not.
  const auto only_d2d = parse_nvbandwidth(
      "Running device_to_device_memcpy_read_ce.\nmemcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\n"
      "          0         1\n 0      N/A    276.07\n 1   276.19       N/A\n");
  ASSERT_TRUE(only_d2d) << only_d2d.error().message;
  EXPECT_EQ(only_d2d->measurements.size(), 2u);
  const auto latency = parse_nvbandwidth(
      "Running device_local_copy.\nmemcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\n"
      "          0\n 0   1200.00\n");
  ASSERT_FALSE(latency);
  EXPECT_NE(latency.error().message.find("no host<->device result"), std::string::npos);
  EXPECT_FALSE(parse_nvbandwidth(""));
}

TEST(Nvbandwidth, JsonReadsTheSameTests) {
  const auto parsed = parse_nvbandwidth_json(read_capture(kRtx4090Json), "4090.json");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->measurements.size(), 24u);  // h2d, d2h, h2d bidirectional x 8
  const ToolMeasurement* gpu5 = find_measurement(*parsed, "nvbandwidth_host_to_device_memcpy_ce", "GPU 5");
  ASSERT_NE(gpu5, nullptr);
  EXPECT_DOUBLE_EQ(gpu5->measurement.stats.median_gbps, 12.71);
  EXPECT_GT(gpu5->line, 1u);  // where the test's name is in the file
  bool waived = false;
  for (const auto& note : parsed->notes) waived |= note.find("device_to_device_memcpy_read_ce") != std::string::npos;
  EXPECT_TRUE(waived);
}

TEST(Nvbandwidth, JsonNumbersAndBadCells) {
  const auto parsed = parse_nvbandwidth_json(
      R"json({"nvbandwidth": {"testcases": [{"name": "device_to_host_memcpy_ce", "status": "Passed",
          "bandwidth_description": "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)",
          "bandwidth_matrix": [[26.5, "N/A", "foo", -3, null, "1e300"]]}]}})json");
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->measurements.size(), 1u);
  EXPECT_EQ(parsed->measurements[0].measurement.direction, Direction::kDeviceToHost);
  ASSERT_FALSE(parsed->notes.empty());
  EXPECT_NE(parsed->notes[0].find("3 matrix cells"), std::string::npos);
}

TEST(Nvbandwidth, JsonErrors) {
  EXPECT_FALSE(parse_nvbandwidth_json("{"));
  EXPECT_FALSE(parse_nvbandwidth_json("[]"));
  EXPECT_FALSE(parse_nvbandwidth_json(R"({"results": []})"));
  EXPECT_FALSE(parse_nvbandwidth_json(R"({"nvbandwidth": {"testcases": 3}})"));
  EXPECT_FALSE(parse_nvbandwidth_json(std::string(100000, '[')));
}

TEST(Nvbandwidth, Detection) {
  EXPECT_TRUE(looks_like_nvbandwidth(read_capture(kH100Text)));
  EXPECT_TRUE(looks_like_nvbandwidth_json(read_capture(kRtx4090Json)));
  EXPECT_FALSE(looks_like_nvbandwidth_json(read_capture(kH100Text)));
  EXPECT_FALSE(looks_like_nvbandwidth(read_capture(kEscFull)));
  EXPECT_FALSE(looks_like_nvbandwidth(read_capture("bwtest_esc8000a_e12_rtx6000ada_quick.txt")));
}

TEST(Nvbandwidth, RobustToDamage) {
  expect_robust([](std::string_view text) { return parse_nvbandwidth(text); }, read_capture(kH100Text));
  expect_robust([](std::string_view text) { return parse_nvbandwidth_json(text); }, read_capture(kRtx4090Json));
}

}  // namespace
}  // namespace pcieval::testing
