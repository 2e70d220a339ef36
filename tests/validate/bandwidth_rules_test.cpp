#include "validate/bandwidth_rules.hpp"

#include <gtest/gtest.h>

#include "validate/budget.hpp"

namespace pcieval {
namespace {

// Hand-built evidence modelled on a Supermicro SYS-521GE-TNRT with an H100
// PCIe (Gen5 x16) directly under a Sapphire Rapids root port, NUMA node 0;
// figures from PCIE-FACTS section 3.
PciAddress bdf(const char* text) { return *parse_pci_address(text); }

DeviceRecord h100(LinkState negotiated) {
  DeviceRecord gpu;
  gpu.function.bdf = bdf("0000:17:00.0");
  gpu.function.vendor_id = 0x10de;
  gpu.function.kind = DeviceKind::kGpu;
  gpu.function.class_code = 0x030200;
  Link link;
  link.downstream = bdf("0000:17:00.0");
  link.upstream = bdf("0000:16:01.0");
  link.downstream_end = PortLinkReading::known({PcieGen::kGen5, 16}, negotiated);
  link.upstream_end = PortLinkReading::known({PcieGen::kGen5, 16}, negotiated);
  gpu.function.link = link.downstream_end;
  gpu.path = {link};
  return gpu;
}

Measurement copy(const char* probe, Direction direction, std::vector<double> trials,
                 Aggregation aggregation = Aggregation::kAlone, HostMemory memory = HostMemory::kPinned) {
  Measurement m;
  m.probe = probe;
  m.subject = "0000:17:00.0";
  m.gpus = {bdf("0000:17:00.0")};
  m.direction = direction;
  m.method = CopyMethod::kCopyEngine;
  m.host_memory = memory;
  m.aggregation = aggregation;
  m.size_bytes = 256u << 20;
  m.bytes_per_trial = m.size_bytes;
  m.trials_gbps = std::move(trials);
  m.stats = summarize_trials(m.trials_gbps);
  m.host_numa_node = 0;
  m.host_numa_local = true;
  m.verified = true;
  return m;
}

Evidence node(LinkState negotiated, std::vector<Measurement> measurements) {
  Evidence evidence;
  evidence.devices = {h100(negotiated)};
  evidence.measurements = std::move(measurements);
  return evidence;
}

const LinkState kGen5x16{PcieGen::kGen5, 16};

TEST(BandwidthRules, HealthyGen5GpuPasses) {
  const auto verdicts = judge_bandwidth(node(kGen5x16, {copy("h2d_ce", Direction::kHostToDevice, {55.3, 55.4, 55.3}),
                                                        copy("d2h_ce", Direction::kDeviceToHost, {55.2, 55.2, 55.3})}),
                                        {});
  ASSERT_EQ(verdicts.size(), 2U);
  for (const Verdict& v : verdicts) {
    EXPECT_EQ(v.subject, "0000:17:00.0");
    EXPECT_EQ(v.status, VerdictStatus::kPass) << v.reason;
    EXPECT_EQ(v.code, ReasonCode::kBandwidthAtBudget);
    EXPECT_NE(v.reason.find("of the Gen5 x16 budget"), std::string::npos) << v.reason;
  }
  EXPECT_NE(verdicts[0].reason.find("h2d_ce 55.3 GB/s (median of 3 trials) is 95%"), std::string::npos)
      << verdicts[0].reason;
}

TEST(BandwidthRules, SilentDowngradeIsBandwidthLowAndNamesTheLinksItFits) {
  // Registers read Gen5 x16, the copy runs at Gen4 rates.
  const auto verdicts =
      judge_bandwidth(node(kGen5x16, {copy("h2d_ce", Direction::kHostToDevice, {27.6, 27.5, 27.7})}), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kBandwidthLow);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kBandwidthBelowBudget);
  EXPECT_NE(verdicts[0].reason.find("it fits Gen4 x16 or Gen5 x8, not the expected Gen5 x16"), std::string::npos)
      << verdicts[0].reason;
  EXPECT_NE(verdicts[0].reason.find("invisible to them"), std::string::npos) << verdicts[0].reason;
  ASSERT_TRUE(verdicts[0].link);
  EXPECT_EQ(to_string(verdicts[0].link->upstream), "0000:16:01.0");
  EXPECT_FALSE(verdicts[0].remediation.empty());
  EXPECT_TRUE(is_failing(verdicts[0].status));
}

TEST(BandwidthRules, DowngradeVisibleInRegistersIsNamedAsTheCause) {
  const auto verdicts = judge_bandwidth(
      node(LinkState{PcieGen::kGen5, 8}, {copy("d2h_ce", Direction::kDeviceToHost, {28.1, 28.0, 28.2})}), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kBandwidthLow);
  EXPECT_NE(verdicts[0].reason.find("the link registers show the downgrade too (link_width_below_expected)"),
            std::string::npos)
      << verdicts[0].reason;
}

TEST(BandwidthRules, SlowHostMemoryIsNamedAsTheCause) {
  Evidence evidence = node(kGen5x16, {copy("h2d_ce", Direction::kHostToDevice, {20.1, 20.0, 20.2})});
  Measurement ceiling = copy("host_ceiling", Direction::kHostToHost, {21.0, 21.5, 20.9});
  ceiling.subject = "numa0";
  ceiling.gpus.clear();
  ceiling.method = CopyMethod::kCpuThreads;
  ceiling.aggregation = Aggregation::kTotalOverWallTime;
  evidence.measurements.push_back(ceiling);
  const auto verdicts = judge_bandwidth(evidence, {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_NE(verdicts[0].reason.find("host memory on that node feeds only 21.0 GB/s (host_ceiling)"), std::string::npos)
      << verdicts[0].reason;
}

TEST(BandwidthRules, NoisyTrialsAreInconclusive) {
  const auto verdicts =
      judge_bandwidth(node(kGen5x16, {copy("h2d_ce", Direction::kHostToDevice, {55.0, 30.0, 54.0, 41.0})}), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kInconclusive);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kBandwidthTooNoisy);
  EXPECT_NE(verdicts[0].reason.find("(CV), over the 10% allowed"), std::string::npos) << verdicts[0].reason;
}

TEST(BandwidthRules, TooFewTrialsAreInconclusive) {
  const auto verdicts = judge_bandwidth(node(kGen5x16, {copy("h2d_ce", Direction::kHostToDevice, {55.0, 55.1})}), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kBandwidthTooNoisy);
  EXPECT_NE(verdicts[0].reason.find("fewer than 3 trials"), std::string::npos);
}

TEST(BandwidthRules, OnlyCopyEngineAloneFromPinnedMemoryIsJudged) {
  Measurement sm = copy("h2d_sm", Direction::kHostToDevice, {35.0, 35.1, 35.2});
  sm.method = CopyMethod::kSmKernel;
  const auto verdicts = judge_bandwidth(
      node(kGen5x16, {sm,
                      copy("pageable_ce", Direction::kHostToDevice, {10.0, 10.1, 10.0}, Aggregation::kAlone,
                           HostMemory::kPageable),
                      copy("all_gpus_ce", Direction::kHostToDevice, {20.0, 20.1, 20.0}, Aggregation::kWithPeers),
                      copy("bidir_ce", Direction::kHostToDevice, {51.0, 51.1, 51.0}, Aggregation::kWithReverse)}),
      {});
  EXPECT_TRUE(verdicts.empty());
}

TEST(BandwidthRules, AGen5GpuInAGen4SlotIsHeldToGen4) {
  Evidence evidence =
      node(LinkState{PcieGen::kGen4, 16}, {copy("h2d_ce", Direction::kHostToDevice, {26.0, 26.1, 26.2})});
  evidence.devices[0].path[0].upstream_end = PortLinkReading::known({PcieGen::kGen4, 16}, {PcieGen::kGen4, 16});
  const auto verdicts = judge_bandwidth(evidence, {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kPass) << verdicts[0].reason;
  EXPECT_NE(verdicts[0].reason.find("of the Gen4 x16 budget"), std::string::npos);
}

TEST(LinksThatFit, P100AtGen3RatesFitsEveryGen3x16EquivalentBelowTheCeiling) {
  // bandwidthTest on a P100 at Gen3 x16: 12.15 GB/s h2d.
  const auto fits = links_that_fit(12.15, Direction::kHostToDevice, {PcieGen::kGen5, 16}, 0.75);
  ASSERT_EQ(fits.size(), 3U);
  EXPECT_EQ(fits[0], (LinkState{PcieGen::kGen3, 16}));
  EXPECT_EQ(fits[1], (LinkState{PcieGen::kGen4, 8}));
  EXPECT_EQ(fits[2], (LinkState{PcieGen::kGen5, 4}));
}

TEST(LinksThatFit, NothingFasterOrWiderThanTheCeiling) {
  const auto fits = links_that_fit(12.15, Direction::kHostToDevice, {PcieGen::kGen3, 16}, 0.75);
  ASSERT_EQ(fits.size(), 1U);
  EXPECT_EQ(fits[0], (LinkState{PcieGen::kGen3, 16}));
  EXPECT_TRUE(links_that_fit(500.0, Direction::kHostToDevice, {PcieGen::kGen5, 16}, 0.75).empty());
}

}  // namespace
}  // namespace pcieval

namespace pcieval {
namespace {

// Two A100s behind one PEX88096 switch of an HGX A100 board (Supermicro
// SYS-420GP-TNR): every link Gen4 x16, so the shared uplink carries half of
// what the two GPUs could move together.
DeviceRecord gpu_behind_switch(const char* gpu, const char* downstream_port) {
  const PortLinkReading gen4x16 = PortLinkReading::known({PcieGen::kGen4, 16}, {PcieGen::kGen4, 16});
  DeviceRecord record;
  record.function.bdf = bdf(gpu);
  record.function.kind = DeviceKind::kGpu;
  Link own{bdf(gpu), bdf(downstream_port), LinkPosition::kDeviceLink, gen4x16, gen4x16};
  Link uplink{bdf("0000:05:00.0"), bdf("0000:04:01.0"), LinkPosition::kUplink, gen4x16, gen4x16};
  record.path = {own, uplink};
  return record;
}

Evidence switch_group(double total_gbps) {
  Evidence evidence;
  evidence.devices = {gpu_behind_switch("0000:07:00.0", "0000:06:10.0"),
                      gpu_behind_switch("0000:08:00.0", "0000:06:14.0")};
  Measurement m;
  m.probe = "group_ce";
  m.subject = "port 0000:05:00.0";
  m.gpus = {bdf("0000:07:00.0"), bdf("0000:08:00.0")};
  m.direction = Direction::kHostToDevice;
  m.aggregation = Aggregation::kTotalOverWallTime;
  m.trials_gbps = {total_gbps, total_gbps, total_gbps};
  m.stats = summarize_trials(m.trials_gbps);
  m.verified = true;
  evidence.measurements = {m};
  return evidence;
}

TEST(GroupBandwidth, TheSharedUplinkIsTheBudgetWhenItIsTheNarrowerPart) {
  const auto verdicts = judge_bandwidth(switch_group(26.0), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].subject, "port 0000:05:00.0");
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kPass) << verdicts[0].reason;
  EXPECT_NE(verdicts[0].reason.find("group_ce h2d total 26.0 GB/s of 2 GPUs is 89% of the shared Gen4 x16 uplink's "
                                    "budget 29.2 GB/s"),
            std::string::npos)
      << verdicts[0].reason;
}

TEST(GroupBandwidth, ALowTotalNamesTheUplink) {
  const auto verdicts = judge_bandwidth(switch_group(14.0), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kBandwidthLow);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kBandwidthBelowBudget);
  ASSERT_TRUE(verdicts[0].link);
  EXPECT_EQ(to_string(verdicts[0].link->downstream), "0000:05:00.0");
  EXPECT_EQ(to_string(verdicts[0].link->upstream), "0000:04:01.0");
}

TEST(GroupBandwidth, GpusUnderARootPortShareNoLinkAndAreNotJudged) {
  Evidence evidence = switch_group(14.0);
  evidence.measurements[0].subject = "port 0000:04:01.0";
  EXPECT_TRUE(judge_bandwidth(evidence, {}).empty());
}

// Issue 29: a copy whose data was not checked proves no bandwidth, however
// close to the budget its number is. Live, the engine turns a copy that did
// not verify into a probe failure (probe_failed, inconclusive); a document
// that says verified: false gets the same verdict from validate.
TEST(BandwidthRules, AnUnverifiedCopyIsInconclusiveNotAPass) {
  Measurement h2d = copy("h2d_ce", Direction::kHostToDevice, {55.3, 55.4, 55.3});
  h2d.verified = false;
  const auto verdicts =
      judge_bandwidth(node(kGen5x16, {h2d, copy("d2h_ce", Direction::kDeviceToHost, {55.2, 55.2, 55.3})}), {});
  ASSERT_EQ(verdicts.size(), 2U);
  EXPECT_EQ(verdicts[0].subject, "0000:17:00.0");
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kInconclusive) << verdicts[0].reason;
  EXPECT_EQ(verdicts[0].code, ReasonCode::kProbeFailed);
  EXPECT_NE(verdicts[0].reason.find("h2d_ce"), std::string::npos) << verdicts[0].reason;
  EXPECT_NE(verdicts[0].reason.find("not verified"), std::string::npos) << verdicts[0].reason;
  EXPECT_FALSE(verdicts[0].remediation.empty());
  // The verified direction is judged as before.
  EXPECT_EQ(verdicts[1].status, VerdictStatus::kPass);
  EXPECT_EQ(verdicts[1].code, ReasonCode::kBandwidthAtBudget);
}

TEST(GroupBandwidth, AnUnverifiedTotalIsInconclusiveNotAPass) {
  Evidence evidence = switch_group(26.0);
  evidence.measurements[0].verified = false;
  const auto verdicts = judge_bandwidth(evidence, {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].subject, "port 0000:05:00.0");
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kInconclusive) << verdicts[0].reason;
  EXPECT_EQ(verdicts[0].code, ReasonCode::kProbeFailed);
  EXPECT_NE(verdicts[0].reason.find("not verified"), std::string::npos) << verdicts[0].reason;
}

// A host ceiling on unchecked data is no evidence of a cause either.
TEST(BandwidthRules, AnUnverifiedHostCeilingIsNotNamedAsTheCause) {
  Evidence evidence = node(kGen5x16, {copy("h2d_ce", Direction::kHostToDevice, {20.1, 20.0, 20.2})});
  Measurement ceiling = copy("host_ceiling", Direction::kHostToHost, {21.0, 21.5, 20.9});
  ceiling.subject = "numa0";
  ceiling.gpus.clear();
  ceiling.method = CopyMethod::kCpuThreads;
  ceiling.aggregation = Aggregation::kTotalOverWallTime;
  ceiling.verified = false;
  evidence.measurements.push_back(ceiling);
  const auto verdicts = judge_bandwidth(evidence, {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kBandwidthLow);
  EXPECT_EQ(verdicts[0].reason.find("host_ceiling"), std::string::npos) << verdicts[0].reason;
}

}  // namespace
}  // namespace pcieval
