// check --reference (app/reference_copy.hpp): pcieval-copy-reference's JSON
// read, and set beside this run's h2d_ce/d2h_ce of the same GPU.
#include "app/reference_copy.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pcieval::app {
namespace {

using ::testing::HasSubstr;

// What the reference prints on a GPU at 0000:17:00.0 (CUDA writes an
// eight-digit domain).
constexpr const char* kReference = R"({
  "tool": "pcieval-copy-reference",
  "device": 0,
  "pci_bus_id": "00000000:17:00.0",
  "name": "NVIDIA H200",
  "size_bytes": 268435456,
  "copies_per_trial": 4,
  "h2d_trials_gbps": [55.1, 55.3],
  "d2h_trials_gbps": [56.0, 56.2],
  "h2d_median_gbps": 55.2,
  "d2h_median_gbps": 56.1
})";

Measurement measured(const char* probe, const char* gpu, double median_gbps) {
  Measurement m;
  m.probe = probe;
  m.subject = gpu;
  m.gpus = {*parse_pci_address(gpu)};
  m.trials_gbps = {median_gbps};
  m.stats.median_gbps = median_gbps;
  m.verified = true;
  return m;
}

TEST(ReferenceCopy, ParsesTheReferencesOutput) {
  const auto run = parse_reference_run(kReference);
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->tool, "pcieval-copy-reference");
  EXPECT_EQ(to_string(run->gpu), "0000:17:00.0");
  EXPECT_EQ(run->size_bytes, 268435456u);
  EXPECT_DOUBLE_EQ(run->h2d_median_gbps, 55.2);
  EXPECT_DOUBLE_EQ(run->d2h_median_gbps, 56.1);
}

TEST(ReferenceCopy, BadOutputIsAnErrorNamingTheField) {
  EXPECT_THAT(parse_reference_run("not json").error().message, HasSubstr("not a JSON object"));
  EXPECT_THAT(parse_reference_run(R"({"tool": "x", "pci_bus_id": "00000000:17:00.0", "size_bytes": 1,
                                       "h2d_median_gbps": 1})")
                  .error()
                  .message,
              HasSubstr("d2h_median_gbps"));
  EXPECT_THAT(parse_reference_run(R"({"tool": "x", "pci_bus_id": "00000000:17:00.0", "size_bytes": 1,
                                       "h2d_median_gbps": 0, "d2h_median_gbps": 1})")
                  .error()
                  .message,
              HasSubstr("not a positive rate"));
}

TEST(ReferenceCopy, EachDirectionGetsPciEvalsMedianAndTheRatio) {
  const ReferenceRun run = parse_reference_run(kReference).value();
  const std::vector<Measurement> measurements = {
      measured("h2d_ce", "0000:65:00.0", 20.0),  // another GPU: not compared
      measured("h2d_ce", "0000:17:00.0", 52.0),
      measured("bidir_ce", "0000:17:00.0", 40.0),  // another probe: not compared
  };
  const std::vector<ReferenceCopy> copies = compare_with_reference(run, measurements);
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_EQ(copies[0].direction, Direction::kHostToDevice);
  EXPECT_DOUBLE_EQ(copies[0].pcieval_median_gbps.value(), 52.0);
  EXPECT_DOUBLE_EQ(copies[0].ratio.value(), 52.0 / 55.2);
  EXPECT_LT(copies[0].ratio.value(), kReferenceRatioFloor);
  // No d2h_ce of that GPU in this run: the reference alone, no ratio.
  EXPECT_EQ(copies[1].direction, Direction::kDeviceToHost);
  EXPECT_DOUBLE_EQ(copies[1].reference_median_gbps, 56.1);
  EXPECT_FALSE(copies[1].pcieval_median_gbps.has_value());
  EXPECT_FALSE(copies[1].ratio.has_value());
}

}  // namespace
}  // namespace pcieval::app
