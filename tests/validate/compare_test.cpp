#include "validate/compare.hpp"

#include <gtest/gtest.h>

namespace pcieval {
namespace {

// Before and after a reseat of an H100 PCIe that had trained at Gen3 x16
// under a Gen5 root port (modelled on PCIE-FACTS section 3 figures: Gen3
// ~12 GB/s, Gen5 ~55 GB/s nvbandwidth copy engine).
PciAddress bdf(const char* text) { return *parse_pci_address(text); }

Results run(LinkState negotiated, double h2d_gbps, VerdictStatus status, ReasonCode code) {
  Results results;
  DeviceRecord gpu;
  gpu.function.bdf = bdf("0000:17:00.0");
  gpu.function.kind = DeviceKind::kGpu;
  Link link;
  link.downstream = bdf("0000:17:00.0");
  link.upstream = bdf("0000:16:01.0");
  link.downstream_end = PortLinkReading::known({PcieGen::kGen5, 16}, negotiated);
  link.upstream_end = link.downstream_end;
  gpu.path = {link};
  results.evidence.devices = {gpu};
  Measurement m;
  m.probe = "h2d_ce";
  m.subject = "0000:17:00.0";
  m.gpus = {gpu.function.bdf};
  m.trials_gbps = {h2d_gbps};
  m.stats = summarize_trials(m.trials_gbps);
  results.evidence.measurements = {m};
  results.verdicts = {Verdict{"0000:17:00.0", status, code, std::nullopt, "", ""}};
  return results;
}

TEST(Compare, AFixedLinkReadsAsATransitionAndNothingWorse) {
  const Results before =
      run({PcieGen::kGen3, 16}, 12.1, VerdictStatus::kLinkDowngraded, ReasonCode::kLinkSpeedBelowExpected);
  const Results after = run({PcieGen::kGen5, 16}, 53.8, VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState);
  const Comparison comparison = compare_results(before, after, {});
  ASSERT_EQ(comparison.subjects.size(), 1U);
  EXPECT_FALSE(comparison.any_worse);
  EXPECT_EQ(comparison.after_overall, Overall::kPass);
  EXPECT_EQ(comparison.subjects[0].line,
            "0000:17:00.0 link Gen3 x16 -> Gen5 x16, h2d_ce 12.1 -> 53.8 GB/s, link_downgraded -> pass");
}

TEST(Compare, AVerdictThatGotMoreSevereIsWorse) {
  const Results before = run({PcieGen::kGen5, 16}, 55.0, VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState);
  const Results after = run({PcieGen::kGen5, 16}, 54.0, VerdictStatus::kInconclusive, ReasonCode::kLinkStateUnknown);
  const Comparison comparison = compare_results(before, after, {});
  EXPECT_TRUE(comparison.any_worse);
  EXPECT_EQ(comparison.subjects[0].why_worse, std::vector<std::string>{"verdict pass became inconclusive"});
}

TEST(Compare, ABandwidthDropBeyondTheToleranceIsWorseEvenWhenBothPass) {
  const Results before = run({PcieGen::kGen5, 16}, 55.0, VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState);
  const Results slower = run({PcieGen::kGen5, 16}, 48.0, VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState);
  const Comparison comparison = compare_results(before, slower, {});
  EXPECT_TRUE(comparison.any_worse);
  EXPECT_EQ(comparison.subjects[0].why_worse, std::vector<std::string>{"h2d_ce fell from 55.0 to 48.0 GB/s"});
  // 52 of 55 is within 10 %.
  const Results noise = run({PcieGen::kGen5, 16}, 52.0, VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState);
  EXPECT_FALSE(compare_results(before, noise, {}).any_worse);
}

TEST(Compare, ADeviceThatDisappearedIsWorse) {
  const Results before = run({PcieGen::kGen5, 16}, 55.0, VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState);
  Results after;
  after.verdicts = {Verdict{"node", VerdictStatus::kMissing, ReasonCode::kGpusMissing, std::nullopt, "", ""}};
  const Comparison comparison = compare_results(before, after, {});
  ASSERT_EQ(comparison.subjects.size(), 2U);
  EXPECT_EQ(comparison.subjects[0].subject, "node");
  EXPECT_EQ(comparison.subjects[1].subject, "0000:17:00.0");
  EXPECT_EQ(comparison.subjects[1].why_worse, std::vector<std::string>{"absent from the after run"});
  EXPECT_NE(comparison.subjects[1].line.find("h2d_ce 55.0 -> - GB/s, pass -> absent (WORSE"), std::string::npos)
      << comparison.subjects[1].line;
  EXPECT_EQ(comparison.after_overall, Overall::kFail);
}

TEST(Compare, TheLinkIsTheStateUnderLoadWhenSampled) {
  Results before = run({PcieGen::kGen1, 16}, 55.0, VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState);
  LinkSample loaded;
  loaded.port = bdf("0000:17:00.0");
  loaded.under_load = true;
  loaded.speed = PcieGen::kGen5;
  loaded.width = 16;
  before.evidence.link_samples = {loaded};
  const Results after = run({PcieGen::kGen5, 16}, 55.0, VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState);
  EXPECT_EQ(compare_results(before, after, {}).subjects[0].link_before, "Gen5 x16");
}

}  // namespace
}  // namespace pcieval

namespace pcieval {
namespace {

TEST(Baseline, AMedianMoreThanTenPercentBelowTheBaselineIsBandwidthLow) {
  const Results baseline = run({PcieGen::kGen5, 16}, 55.0, VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState);
  const Results now = run({PcieGen::kGen5, 16}, 45.0, VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState);
  const auto verdicts = judge_against_baseline(now.evidence, baseline.evidence, {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].subject, "0000:17:00.0");
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kBandwidthLow);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kBandwidthBelowBaseline);
  EXPECT_EQ(verdicts[0].reason, "h2d_ce 45.0 GB/s is more than 10% below the baseline's 55.0 GB/s");
}

TEST(Baseline, WithinToleranceOrWithoutABaselineNumberNothingIsSaid) {
  const Results baseline = run({PcieGen::kGen5, 16}, 55.0, VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState);
  const Results now = run({PcieGen::kGen5, 16}, 50.0, VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState);
  EXPECT_TRUE(judge_against_baseline(now.evidence, baseline.evidence, {}).empty());
  EXPECT_TRUE(judge_against_baseline(now.evidence, Evidence{}, {}).empty());
}

}  // namespace
}  // namespace pcieval
