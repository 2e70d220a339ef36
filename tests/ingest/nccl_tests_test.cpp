// nccl-tests all_reduce_perf: the text table (columns found from its header)
// and the -J JSON, with the bus bandwidth factor checked.
#include "ingest/nccl_tests.hpp"

#include <gtest/gtest.h>

#include "ingest/capture_test_util.hpp"
#include "ingest/tool_test_util.hpp"
#include "model/captured_event.hpp"

namespace pcieval::testing {
namespace {

constexpr const char* kPcieOnly = "nccl_allreduce_8x_rtx5090_pcie_only.txt";
constexpr const char* kNvlinkJson = "nccl_allreduce_json_2x_h100_pcie_nvlink_bridge.json";

const NcclRow* row_of(const ToolCapture& capture, std::uint64_t size, bool in_place) {
  for (const NcclRow& row : capture.nccl_rows) {
    if (row.size_bytes == size && row.in_place == in_place) return &row;
  }
  return nullptr;
}

TEST(NcclTests, TextTableBothHalvesRanksAndAddresses) {
  const auto parsed = parse_nccl_tests(read_capture(kPcieOnly), "ar.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->nccl_collective, "all_reduce");
  EXPECT_EQ(parsed->nccl_ranks, 8);
  EXPECT_EQ(parsed->nccl_rows.size(), 28u);  // 1 MiB .. 8 GiB, out of place and in place
  ASSERT_EQ(parsed->gpu_addresses.size(), 8u);
  EXPECT_EQ(to_string(parsed->gpu_addresses.at(4)), "0000:9b:00.0");
  const NcclRow* largest = row_of(*parsed, 8589934592u, false);
  ASSERT_NE(largest, nullptr);
  EXPECT_DOUBLE_EQ(largest->algbw_gbps, 15.96);
  EXPECT_DOUBLE_EQ(largest->busbw_gbps, 27.92);
  EXPECT_EQ(largest->wrong_elements, 0.0);
  EXPECT_EQ(largest->type, "float");
  const NcclRow* in_place = row_of(*parsed, 8589934592u, true);
  ASSERT_NE(in_place, nullptr);
  EXPECT_DOUBLE_EQ(in_place->busbw_gbps, 27.78);
  // The two NCCL INFO lines are skipped; '#' lines are nccl-tests' own.
  EXPECT_EQ(parsed->skipped_lines, 3u);  // and the shell prompt
}

TEST(NcclTests, SummaryChecksTheBusFactorAndWrongElements) {
  auto parsed = parse_nccl_tests(read_capture(kPcieOnly), "ar.txt");
  ASSERT_TRUE(parsed);
  const std::string summary = summarize_nccl(parsed.value());
  EXPECT_NE(summary.find("busbw 27.92 GB/s"), std::string::npos) << summary;
  EXPECT_NE(summary.find("over 8 ranks"), std::string::npos) << summary;
  EXPECT_NE(summary.find("#wrong 0"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("not algbw x 2(n-1)/n"), std::string::npos) << summary;

  // The same table claiming 4 ranks: busbw no longer matches algbw x 1.5.
  parsed.value().nccl_ranks = 4;
  EXPECT_NE(summarize_nccl(parsed.value()).find("not algbw x 2(n-1)/n"), std::string::npos);
  parsed.value().nccl_rows[3].wrong_elements = 12;
  EXPECT_NE(summarize_nccl(parsed.value()).find("wrong elements"), std::string::npos);
  EXPECT_DOUBLE_EQ(all_reduce_bus_factor(8), 1.75);
  EXPECT_DOUBLE_EQ(all_reduce_bus_factor(1), 0.0);
}

TEST(NcclTests, OldHeaderWithoutRootAndUncheckedData) {
  const std::string text =
      "#                                                       out-of-place                       in-place\n"
      "#       size         count      type   redop     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
      "#        (B)    (elements)                        (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)\n"
      "[1,0]<stdout>:    33554432       8388608     float     sum    1047.8   32.02   56.04     N/A   1015.2   33.05   "
      "57.84     N/A\n";
  const auto parsed = parse_nccl_tests(text);
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->nccl_rows.size(), 2u);
  EXPECT_DOUBLE_EQ(parsed->nccl_rows[0].busbw_gbps, 56.04);
  EXPECT_FALSE(parsed->nccl_rows[0].wrong_elements);
  EXPECT_DOUBLE_EQ(parsed->nccl_rows[1].algbw_gbps, 33.05);
  EXPECT_NE(summarize_nccl(parsed.value()).find("data not checked"), std::string::npos);
}

TEST(NcclTests, Json) {
  const auto parsed = parse_nccl_tests_json(read_capture(kNvlinkJson), "ar.json");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->nccl_collective, "all_reduce");
  EXPECT_EQ(parsed->nccl_ranks, 2);
  EXPECT_EQ(parsed->nccl_rows.size(), 12u);  // 1 MiB .. 1 GiB by 4, both halves
  EXPECT_EQ(to_string(parsed->gpu_addresses.at(1)), "0000:c1:00.0");
  const NcclRow* largest = row_of(*parsed, 1u << 30, false);
  ASSERT_NE(largest, nullptr);
  EXPECT_NEAR(largest->busbw_gbps, largest->algbw_gbps * all_reduce_bus_factor(2), 1e-9);
  EXPECT_EQ(summarize_nccl(parsed.value()).find("not algbw"), std::string::npos);
}

TEST(NcclTests, JsonNanAndNullHalvesAreSkipped) {
  const auto parsed = parse_nccl_tests_json(
      R"({"version": 2, "nccl_version": 22603, "results": [
          {"size": 1024, "count": 256, "type": "float", "redop": "sum", "out_of_place": null,
           "in_place": {"time": "nan", "alg_bw": 1.0, "bus_bw": 1.5, "nwrong": null}},
          {"size": 2048, "count": 512, "type": "float", "redop": "sum",
           "out_of_place": {"time": 10.0, "alg_bw": 0.2, "bus_bw": 0.3, "nwrong": null}}]})");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->nccl_rows.size(), 1u);
  EXPECT_EQ(parsed->nccl_rows[0].size_bytes, 2048u);
  EXPECT_FALSE(parsed->nccl_rows[0].wrong_elements);
}

// The RTX 5090 capture carries NCCL's "NCCL_P2P_DISABLE set by environment
// to 1": every size's out-of-place busbw becomes a host all-reduce measurement.
TEST(NcclTests, AllReduceWithP2pDisabledBecomesHostMeasurements) {
  const std::string text = read_capture(kPcieOnly);
  const auto parsed = parse_nccl_tests(text, "ar.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->measurements.size(), 14u);  // 1 MiB .. 8 GiB, out of place only
  const ToolMeasurement& largest = parsed->measurements.back();
  const Measurement& m = largest.measurement;
  EXPECT_EQ(m.probe, kNcclTestsAllReduceHostProbe);
  EXPECT_EQ(m.subject, "8 GPUs");
  ASSERT_EQ(m.gpus.size(), 8u);
  EXPECT_EQ(to_string(m.gpus[4]), "0000:9b:00.0");
  EXPECT_EQ(m.direction, Direction::kAllReduce);
  EXPECT_EQ(m.method, CopyMethod::kNccl);
  EXPECT_EQ(m.aggregation, Aggregation::kBusBandwidth);
  EXPECT_EQ(m.size_bytes, 8589934592u);
  EXPECT_EQ(m.bytes_per_trial, 15032385536u);  // x 1.75
  EXPECT_DOUBLE_EQ(m.stats.median_gbps, 27.92);
  EXPECT_TRUE(m.verified);
  EXPECT_EQ(largest.source, "ar.txt");
  const std::size_t info_line = line_of(text, "NCCL_P2P_DISABLE set by environment");
  const std::size_t row_line = line_of(text, "  8589934592 ");
  EXPECT_EQ(largest.line, row_line);
  bool noted = false;
  for (const std::string& note : parsed->notes) {
    noted = noted || note.find("peer-to-peer disabled (ar.txt:" + std::to_string(info_line) + ")") != std::string::npos;
  }
  EXPECT_TRUE(noted);
}

// The H100 pair's -J document sets only NCCL_DEBUG=WARN: NVLink may have
// carried it, and the probe says P2P was not shown disabled.
TEST(NcclTests, AllReduceWithoutP2pEvidenceIsThePlainProbe) {
  auto parsed = parse_nccl_tests_json(read_capture(kNvlinkJson), "ar.json");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->measurements.size(), 6u);
  for (const ToolMeasurement& printed : parsed->measurements) {
    EXPECT_EQ(printed.measurement.probe, kNcclTestsAllReduceProbe);
    EXPECT_EQ(printed.measurement.subject, "2 GPUs");
    EXPECT_EQ(printed.line, 0u);
  }
  // The same document with NCCL_P2P_DISABLE=1 in its env.
  std::string text = read_capture(kNvlinkJson);
  const auto env = text.find("\"NCCL_DEBUG=WARN\"");
  ASSERT_NE(env, std::string::npos);
  text.insert(env, "\"NCCL_P2P_DISABLE=1\", ");
  parsed = parse_nccl_tests_json(text, "ar.json");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_FALSE(parsed->measurements.empty());
  EXPECT_EQ(parsed->measurements.front().measurement.probe, kNcclTestsAllReduceHostProbe);
}

TEST(NcclTests, CorruptedSizesAndOtherCollectivesAreNotMeasurements) {
  std::string text = read_capture(kPcieOnly);
  // The 1 MiB row's out-of-place #wrong becomes 3.
  const auto row = text.find("-1   1565.5    0.67    1.17       0");
  ASSERT_NE(row, std::string::npos);
  text.replace(row, std::string("-1   1565.5    0.67    1.17       0").size(), "-1   1565.5    0.67    1.17       3");
  auto parsed = parse_nccl_tests(text, "ar.txt");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->measurements.size(), 13u);
  // A table whose collective is not named is read, not measured.
  const auto old = parse_nccl_tests(
      "#       size         count      type   redop     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
      "    33554432       8388608     float     sum    1047.8   32.02   56.04       0   1015.2   33.05   57.84       "
      "0\n");
  ASSERT_TRUE(old);
  EXPECT_TRUE(old->measurements.empty());
}

TEST(NcclTests, AHeaderThatNamesTimeLastNeedsRowsThatReachIt) {
  // Found by the fuzz harness: a mangled header whose "time" comes after
  // "busbw". A row as long as the busbw column but not the time column was
  // read one cell past its end. Now a row must reach every column.
  const auto parsed = parse_nccl_tests(
      "#       size         count      type   redop    root   algbw   busbw     time\n"
      "    33554432       8388608     float     sum      -1   32.02   56.04\n"
      "    67108864      16777216     float     sum      -1   33.10   57.93   2027.4\n");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->nccl_rows.size(), 1U);
  EXPECT_EQ(parsed->nccl_rows[0].size_bytes, 67108864U);
  EXPECT_DOUBLE_EQ(parsed->nccl_rows[0].time_us, 2027.4);
}

TEST(NcclTests, NothingToReadIsAnError) {
  EXPECT_FALSE(parse_nccl_tests("# nThread 1 nGpus 8\n#\n"));
  EXPECT_FALSE(parse_nccl_tests_json(R"({"results": []})"));
  EXPECT_FALSE(parse_nccl_tests_json("not json"));
}

TEST(NcclTests, Detection) {
  EXPECT_TRUE(looks_like_nccl_tests(read_capture(kPcieOnly)));
  EXPECT_TRUE(looks_like_nccl_tests_json(read_capture(kNvlinkJson)));
  EXPECT_FALSE(looks_like_nccl_tests_json(read_capture("nvbw_json_8x_rtx4090_gpu5_x8.json")));
  EXPECT_FALSE(looks_like_nccl_tests(read_capture(kEscFull)));
}

TEST(NcclTests, RobustToDamage) {
  expect_robust([](std::string_view text) { return parse_nccl_tests(text); }, read_capture(kPcieOnly));
  expect_robust([](std::string_view text) { return parse_nccl_tests_json(text); }, read_capture(kNvlinkJson));
}

}  // namespace
}  // namespace pcieval::testing
