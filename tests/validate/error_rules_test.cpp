#include "validate/error_rules.hpp"

#include <gtest/gtest.h>

namespace pcieval {
namespace {

// An H100 PCIe under a Sapphire Rapids root port (0000:16:01.0) that moved
// 10 x 1 GB in its timed trials.
PciAddress bdf(const char* text) { return *parse_pci_address(text); }

Evidence loaded_node(std::vector<CounterDelta> counters) {
  Evidence evidence;
  DeviceRecord gpu;
  gpu.function.bdf = bdf("0000:17:00.0");
  gpu.function.kind = DeviceKind::kGpu;
  Link link;
  link.downstream = bdf("0000:17:00.0");
  link.upstream = bdf("0000:16:01.0");
  gpu.path = {link};
  evidence.devices = {gpu};
  Measurement m;
  m.probe = "h2d_ce";
  m.subject = "0000:17:00.0";
  m.gpus = {gpu.function.bdf};
  m.bytes_per_trial = 1'000'000'000;
  m.trials_gbps = std::vector<double>(10, 55.0);
  evidence.measurements = {m};
  evidence.counters = std::move(counters);
  return evidence;
}

TEST(ErrorRules, AnyUncorrectableErrorIsLinkErrors) {
  const auto verdicts = judge_error_counters(loaded_node({{bdf("0000:16:01.0"), "aer_nonfatal", 0, 1}}), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].subject, "0000:16:01.0");
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kLinkErrors);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kUncorrectableErrorsUnderLoad);
  EXPECT_EQ(verdicts[0].reason, "uncorrectable PCIe errors while the probes ran: aer_nonfatal 0 -> 1");
}

TEST(ErrorRules, CorrectableErrorsAreJudgedPerGigabyteMoved) {
  // 10 GB moved: 5 replays is 0.5 per GB (tolerated), 50 is 5 per GB.
  EXPECT_TRUE(judge_error_counters(loaded_node({{bdf("0000:17:00.0"), "nvml_replay", 100, 105}}), {}).empty());
  const auto verdicts = judge_error_counters(
      loaded_node({{bdf("0000:17:00.0"), "nvml_replay", 100, 130}, {bdf("0000:17:00.0"), "aer_correctable", 2, 22}}),
      {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kCorrectableErrorsUnderLoad);
  EXPECT_NE(verdicts[0].reason.find("5.00 per GB over 10.0 GB, tolerated 1 per GB"), std::string::npos)
      << verdicts[0].reason;
}

TEST(ErrorRules, TheRootPortCountsTheBytesOfTheGpusBelowIt) {
  const auto verdicts = judge_error_counters(loaded_node({{bdf("0000:16:01.0"), "aer_correctable", 0, 40}}), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].subject, "0000:16:01.0");
  EXPECT_NE(verdicts[0].reason.find("4.00 per GB over 10.0 GB"), std::string::npos) << verdicts[0].reason;
}

TEST(ErrorRules, CountersThatDidNotGrowOrFellSayNothing) {
  EXPECT_TRUE(judge_error_counters(loaded_node({{bdf("0000:17:00.0"), "aer_correctable", 7, 7},
                                                {bdf("0000:17:00.0"), "nvml_replay", 90, 3}}),
                                   {})
                  .empty());
  // Correctable errors on a port no copy crossed: no rate, no verdict.
  EXPECT_TRUE(judge_error_counters(loaded_node({{bdf("0000:65:00.0"), "aer_correctable", 0, 3}}), {}).empty());
}

}  // namespace
}  // namespace pcieval
