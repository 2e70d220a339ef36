// The soak rules over hand-built rounds of one H100 SXM5 GPU behind a Gen5 x16
// root port (an HGX H100 node: 53-55 GB/s h2d copy-engine medians, PCIE-FACTS
// section 3), with the failures burn-in exists for: a round that dips, a link
// that retrains lower for a round and comes back, and runs cut short.
#include "validate/soak_rules.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "validate/link_rules.hpp"

namespace pcieval {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

PciAddress bdf(const char* text) { return *parse_pci_address(text); }

constexpr const char* kGpu = "0000:18:00.0";
constexpr const char* kRootPort = "0000:17:01.0";
constexpr LinkState kGen5x16{PcieGen::kGen5, 16};
constexpr double kRoundS = 10;

Measurement h2d(double median_gbps) {
  Measurement m;
  m.probe = "h2d_ce";
  m.subject = kGpu;
  m.gpus = {bdf(kGpu)};
  m.direction = Direction::kHostToDevice;
  m.size_bytes = 256u << 20;
  m.bytes_per_trial = m.size_bytes;
  m.trials_gbps = {median_gbps * 0.999, median_gbps, median_gbps * 1.001};
  m.stats = summarize_trials(m.trials_gbps);
  m.verified = true;
  return m;
}

Measurement host_ceiling(double median_gbps) {
  Measurement m;
  m.probe = "host_ceiling";
  m.subject = "numa0";
  m.direction = Direction::kHostToHost;
  m.method = CopyMethod::kCpuThreads;
  m.aggregation = Aggregation::kTotalOverWallTime;
  m.size_bytes = 256u << 20;
  m.bytes_per_trial = m.size_bytes;
  m.trials_gbps = {median_gbps};
  m.stats = summarize_trials(m.trials_gbps);
  return m;
}

// One GPU whose discovery reading was Gen5 x16; rounds with the given h2d
// medians and loaded link states, sampled twice per round on both ports.
Evidence soak_of(const std::vector<double>& h2d_gbps, const std::vector<LinkState>& loaded) {
  DeviceRecord gpu;
  gpu.function.bdf = bdf(kGpu);
  gpu.function.vendor_id = 0x10de;
  gpu.function.device_id = 0x2330;
  gpu.function.class_code = 0x030200;
  gpu.function.kind = DeviceKind::kGpu;
  Link link;
  link.downstream = bdf(kGpu);
  link.upstream = bdf(kRootPort);
  link.position = LinkPosition::kDeviceLink;
  link.downstream_end = PortLinkReading::known(kGen5x16, kGen5x16);
  link.upstream_end = PortLinkReading::known(kGen5x16, kGen5x16);
  gpu.function.link = link.downstream_end;
  gpu.path = {link};

  Evidence evidence;
  evidence.devices = {gpu};
  evidence.soak = SoakRecord{static_cast<int>(h2d_gbps.size()), std::nullopt, true, {}};
  for (std::size_t i = 0; i < h2d_gbps.size(); ++i) {
    const double start_s = static_cast<double>(i) * kRoundS;
    SoakRound round{static_cast<int>(i) + 1, start_s, start_s + kRoundS - 0.5, {h2d(h2d_gbps[i])}, {}};
    evidence.soak->rounds.push_back(round);
    if (i < loaded.size()) {
      for (double t_s : {start_s + 1, start_s + 5}) {
        evidence.link_samples.push_back(
            LinkSample{bdf(kGpu), SampleSource::kSysfs, t_s, true, loaded[i].gen, loaded[i].width});
      }
    }
  }
  evidence.measurements = evidence.soak->rounds.front().measurements;
  return evidence;
}

TEST(SoakRules, SteadyRoundsGiveNoVerdict) {
  const Evidence evidence = soak_of({53.9, 54.2, 53.6, 54.0}, {kGen5x16, kGen5x16, kGen5x16, kGen5x16});
  EXPECT_THAT(judge_soak(evidence, ThresholdProfile{}), IsEmpty());
}

TEST(SoakRules, ARoundFarBelowTheMedianFailsWithItsTime) {
  // Round 3 at half rate: a link that retrained to Gen4 for the round.
  const Evidence evidence = soak_of({53.9, 54.2, 27.1, 54.0}, {});
  const auto verdicts = judge_soak(evidence, ThresholdProfile{});
  ASSERT_THAT(verdicts, SizeIs(1));
  EXPECT_EQ(verdicts[0].subject, kGpu);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kBandwidthLow);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kBandwidthDipDuringSoak);
  EXPECT_THAT(verdicts[0].reason, HasSubstr("fell to 27.1 GB/s in round 3 (20-30 s into the soak)"));
  EXPECT_THAT(verdicts[0].reason, HasSubstr("rounds below: 3"));
  EXPECT_FALSE(verdicts[0].remediation.empty());
}

TEST(SoakRules, TheDipLimitIsTheProfilesBaselineTolerance) {
  // 8 % below the median: inside the default 10 %, outside a 5 % profile.
  const Evidence evidence = soak_of({54.0, 54.0, 49.7, 54.0}, {});
  EXPECT_THAT(judge_soak(evidence, ThresholdProfile{}), IsEmpty());
  ThresholdProfile strict;
  strict.defaults.baseline_max_drop_fraction = 0.05;
  EXPECT_THAT(judge_soak(evidence, strict), SizeIs(1));
}

TEST(SoakRules, OneRoundHasNothingToCompare) {
  EXPECT_THAT(judge_soak(soak_of({20.0}, {}), ThresholdProfile{}), IsEmpty());
}

TEST(SoakRules, TheHostCeilingIsContextNotJudged) {
  Evidence evidence = soak_of({54.0, 54.0, 54.0}, {});
  // A shared host's memcpy rate swings; it says nothing about a PCIe link.
  const double ceilings[] = {80.0, 30.0, 81.0};
  for (std::size_t i = 0; i < 3; ++i) evidence.soak->rounds[i].measurements.push_back(host_ceiling(ceilings[i]));
  EXPECT_THAT(judge_soak(evidence, ThresholdProfile{}), IsEmpty());
}

TEST(SoakRules, PageableCopiesAreHostWorkNotJudgedForDips) {
  // The driver stages a pageable copy through its own pinned buffer with the
  // CPU: a busy host halves it with the link untouched (seen first on the
  // simulated node, whose pageable copies run in the host's time).
  Evidence evidence = soak_of({54.0, 54.0, 54.0}, {});
  const double pageable_gbps[] = {8.9, 5.3, 9.0};
  for (std::size_t i = 0; i < 3; ++i) {
    Measurement m = h2d(pageable_gbps[i]);
    m.probe = "pageable_ce";
    m.host_memory = HostMemory::kPageable;
    evidence.soak->rounds[i].measurements.push_back(m);
  }
  EXPECT_THAT(judge_soak(evidence, ThresholdProfile{}), IsEmpty());
}

TEST(SoakRules, AGroupMeasurementIsComparedOnlyAcrossRoundsWithTheSameGpus) {
  // Two GPUs under one switch share its uplink: 13 GB/s each while both copy.
  // One falls off the bus in round 2 and the other gets the uplink to
  // itself: 19.7 GB/s is not the same experiment, and round 1 did not dip.
  Evidence evidence = soak_of({54.0, 54.0, 54.0}, {});
  const auto group = [](double gbps, std::vector<PciAddress> gpus) {
    Measurement m = h2d(gbps);
    m.probe = "all_gpus_ce";
    m.subject = "0000:83:00.0";
    m.aggregation = Aggregation::kTotalOverWallTime;
    m.gpus = std::move(gpus);
    return m;
  };
  const PciAddress a = bdf("0000:84:00.0");
  const PciAddress b = bdf("0000:85:00.0");
  // The port's total lists both GPUs; each GPU's own entry (with_peers) only
  // itself.
  evidence.soak->rounds[0].measurements.push_back(group(26.4, {a, b}));
  for (std::size_t i = 0; i < 3; ++i) {
    Measurement mine = group(i == 0 ? 13.2 : 19.7, {b});
    mine.subject = "0000:85:00.0";
    mine.aggregation = Aggregation::kWithPeers;
    evidence.soak->rounds[i].measurements.push_back(mine);
  }
  EXPECT_THAT(judge_soak(evidence, ThresholdProfile{}), IsEmpty());
  // The same GPUs in every round: a dip is still a dip.
  evidence.soak->rounds[0].measurements.erase(evidence.soak->rounds[0].measurements.end() - 2);
  EXPECT_THAT(judge_soak(evidence, ThresholdProfile{}), SizeIs(1));
}

TEST(SoakRules, ALinkLowForOneRoundUnderLoadFailsNamingTheHop) {
  const LinkState gen3{PcieGen::kGen3, 16};
  const Evidence evidence = soak_of({54.0, 54.0, 54.0}, {kGen5x16, gen3, kGen5x16});
  // The link rules see the best loaded state over the whole run and pass.
  const auto links = judge_links(evidence, {});
  ASSERT_THAT(links, SizeIs(1));
  EXPECT_EQ(links[0].status, VerdictStatus::kPass);

  const auto verdicts = judge_soak(evidence, ThresholdProfile{});
  ASSERT_THAT(verdicts, SizeIs(1));
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kLinkDowngraded);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kLinkDroppedDuringSoak);
  ASSERT_TRUE(verdicts[0].link.has_value());
  EXPECT_EQ(verdicts[0].link->downstream, bdf(kGpu));
  EXPECT_EQ(verdicts[0].link->upstream, bdf(kRootPort));
  EXPECT_THAT(verdicts[0].reason, HasSubstr("at best Gen3 x16 under load in round 2"));
  EXPECT_THAT(verdicts[0].reason, HasSubstr("expected Gen5 x16, which it reached in rounds 1, 3"));
}

TEST(SoakRules, ALinkLowInEveryRoundIsLeftToTheLinkRules) {
  const LinkState gen4{PcieGen::kGen4, 16};
  const Evidence evidence = soak_of({27.0, 27.0}, {gen4, gen4});
  EXPECT_THAT(judge_soak(evidence, ThresholdProfile{}), IsEmpty());
  const auto links = judge_links(evidence, {});
  ASSERT_THAT(links, SizeIs(1));
  EXPECT_EQ(links[0].status, VerdictStatus::kLinkDowngraded);
}

TEST(SoakRules, IdleSamplesBetweenRoundsAreNotADrop) {
  Evidence evidence = soak_of({54.0, 54.0}, {kGen5x16, kGen5x16});
  // An idle GPU downshifts on purpose; only loaded readings count.
  evidence.link_samples.push_back(LinkSample{bdf(kGpu), SampleSource::kSysfs, 12, false, PcieGen::kGen1, 16});
  EXPECT_THAT(judge_soak(evidence, ThresholdProfile{}), IsEmpty());
}

TEST(SoakRules, ASignalMakesTheRunInconclusiveAndSaysWhatWasKept) {
  Evidence evidence = soak_of({54.0, 54.0}, {});
  evidence.soak->requested_rounds = 10;
  evidence.soak->finished = false;
  evidence.interrupted = "SIGTERM";
  const auto verdicts = judge_soak(evidence, ThresholdProfile{});
  ASSERT_THAT(verdicts, SizeIs(1));
  EXPECT_EQ(verdicts[0].subject, "node");
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kInconclusive);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kRunInterrupted);
  EXPECT_THAT(verdicts[0].reason, HasSubstr("SIGTERM stopped the soak after 2 complete rounds of 10"));
}

TEST(SoakRules, AnUnfinishedSoakWithoutASignalSaysItDidNotFinish) {
  Evidence evidence = soak_of({54.0}, {});
  evidence.soak->finished = false;
  const auto verdicts = judge_soak(evidence, ThresholdProfile{});
  ASSERT_THAT(verdicts, SizeIs(1));
  EXPECT_EQ(verdicts[0].code, ReasonCode::kRunInterrupted);
  EXPECT_THAT(verdicts[0].reason, HasSubstr("did not finish"));
}

TEST(SoakRules, APlainCheckCutShortIsInconclusive) {
  Evidence evidence;
  evidence.interrupted = "SIGINT";
  const auto verdicts = judge_soak(evidence, ThresholdProfile{});
  ASSERT_THAT(verdicts, SizeIs(1));
  EXPECT_THAT(verdicts[0].reason, HasSubstr("SIGINT stopped the run before every probe ran"));
}

TEST(SoakRules, AFinishedPlainCheckGivesNothing) { EXPECT_THAT(judge_soak(Evidence{}, ThresholdProfile{}), IsEmpty()); }

}  // namespace
}  // namespace pcieval
