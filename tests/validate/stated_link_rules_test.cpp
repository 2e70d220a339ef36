// Tool numbers (nvbandwidth, bandwidthTest) against a stated or captured link.
#include "validate/stated_link_rules.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "validate/budget.hpp"

namespace pcieval {
namespace {

PciAddress bdf(const char* text) { return *parse_pci_address(text); }

// A tool's number as the ingest parsers produce it: one value, no spread.
Measurement tool(const char* probe, const char* subject, Direction direction, double gbps,
                 std::uint64_t size_bytes = std::uint64_t{512} << 20) {
  Measurement m;
  m.probe = probe;
  m.subject = subject;
  if (auto address = parse_pci_address(subject)) m.gpus = {address.value()};
  m.direction = direction;
  m.method = CopyMethod::kCopyEngine;
  m.host_memory = HostMemory::kPinned;
  m.aggregation = Aggregation::kAlone;
  m.size_bytes = size_bytes;
  m.trials_gbps = {gbps};
  m.stats = TrialStats{gbps, gbps, gbps, 0};
  return m;
}

// An RTX 4090 at 0000:41:00.0 under root port 0000:40:01.1 (modelled on the
// ASUS ESC8000A-E12's GPU slots), both ends capable of `capable`.
DeviceRecord gpu_41(LinkState capable, LinkState negotiated) {
  DeviceRecord gpu;
  gpu.function.bdf = bdf("0000:41:00.0");
  gpu.function.vendor_id = 0x10de;
  gpu.function.kind = DeviceKind::kGpu;
  gpu.function.class_code = 0x030000;
  Link link;
  link.downstream = bdf("0000:41:00.0");
  link.upstream = bdf("0000:40:01.1");
  link.downstream_end = PortLinkReading::known(capable, negotiated);
  link.upstream_end = PortLinkReading::known(capable, negotiated);
  gpu.function.link = link.downstream_end;
  gpu.path = {link};
  return gpu;
}

const LinkState kGen4x16{PcieGen::kGen4, 16};

ToolJudgement judge(const std::vector<Measurement>& measurements, std::optional<LinkState> stated,
                    std::vector<DeviceRecord> devices = {}) {
  Evidence evidence;
  evidence.devices = std::move(devices);
  evidence.measurements = measurements;
  ToolJudgeOptions options;
  options.stated_link = stated;
  options.origins[0] = "nvbw.txt:25";
  return judge_tool_bandwidth(evidence, ThresholdProfile{}, options);
}

TEST(StatedLink, ParsesTheSpellingsPeopleUse) {
  const std::pair<const char*, LinkState> cases[] = {
      {"gen4x16", kGen4x16},
      {"Gen5 x8", {PcieGen::kGen5, 8}},
      {"GEN3X4", {PcieGen::kGen3, 4}},
      {"16GT/s x16", kGen4x16},
      {"16 GT/s x16", kGen4x16},
      {"16.0 GT/s PCIe x16", kGen4x16},
      {"2.5GT/s x1", {PcieGen::kGen1, 1}},
      {"gen6 x16", {PcieGen::kGen6, 16}},
  };
  for (const auto& [text, expected] : cases) {
    const auto parsed = parse_stated_link(text);
    ASSERT_TRUE(parsed) << text << ": " << parsed.error().message;
    EXPECT_EQ(parsed.value(), expected) << text;
  }
}

TEST(StatedLink, RejectsWhatIsNotALink) {
  for (const char* text : {"", "gen4", "x16", "gen4x3", "gen9x16", "gen7x16", "17GT/s x16", "gen4x16x", "fast",
                           "gen4 x 16 lanes", "16GT/sx", "genx16"}) {
    const auto parsed = parse_stated_link(text);
    ASSERT_FALSE(parsed) << text;
    EXPECT_EQ(parsed.error().message.rfind("--link '", 0), 0u) << parsed.error().message;
  }
  EXPECT_FALSE(parse_stated_link(std::string(1000, 'x')));
}

TEST(StatedLink, HealthyNumberIsNormalForTheStatedLink) {
  const auto judged =
      judge({tool("nvbandwidth_host_to_device_memcpy_ce", "GPU 0", Direction::kHostToDevice, 26.0)}, kGen4x16);
  ASSERT_EQ(judged.verdicts.size(), 1u);
  const Verdict& v = judged.verdicts[0];
  EXPECT_EQ(v.subject, "GPU 0");
  EXPECT_EQ(v.status, VerdictStatus::kPass);
  EXPECT_EQ(v.code, ReasonCode::kBandwidthAtBudget);
  const double budget = *direction_budget_gbps(*link_budget(kGen4x16), Direction::kHostToDevice);
  EXPECT_NE(v.reason.find(std::to_string(static_cast<int>(std::lround(26.0 / budget * 100))) + "%"), std::string::npos)
      << v.reason;
  EXPECT_NE(v.reason.find("normal for Gen4 x16"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("fits Gen4 x16"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("(nvbw.txt:25)"), std::string::npos) << v.reason;
}

TEST(StatedLink, HalfRateIsBelowBudgetAndNamesTheLinksItFits) {
  const auto judged =
      judge({tool("nvbandwidth_host_to_device_memcpy_ce", "GPU 5", Direction::kHostToDevice, 12.71)}, kGen4x16);
  ASSERT_EQ(judged.verdicts.size(), 1u);
  const Verdict& v = judged.verdicts[0];
  EXPECT_EQ(v.status, VerdictStatus::kBandwidthLow);
  EXPECT_EQ(v.code, ReasonCode::kBandwidthBelowBudget);
  EXPECT_NE(v.reason.find("not normal for Gen4 x16"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("Gen4 x8"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("Gen3 x16"), std::string::npos) << v.reason;
  EXPECT_FALSE(v.remediation.empty());
}

TEST(StatedLink, BetweenFloorAndWarningLineIsAPassWithWarning) {
  // 23.9 GB/s h2d on Gen4 x16 (an RTX 4090 of NVIDIA/nvbandwidth#15): 82 %,
  // under a warning line of 85 %.
  ThresholdProfile profile;
  profile.defaults.bandwidth.floor_fraction = 0.75;
  profile.defaults.bandwidth.warn_fraction = 0.85;
  Evidence evidence;
  evidence.measurements = {tool("nvbandwidth_host_to_device_memcpy_ce", "GPU 2", Direction::kHostToDevice, 23.9)};
  ToolJudgeOptions options;
  options.stated_link = kGen4x16;
  const auto judged = judge_tool_bandwidth(evidence, profile, options);
  ASSERT_EQ(judged.verdicts.size(), 1u);
  EXPECT_EQ(judged.verdicts[0].status, VerdictStatus::kPass);
  EXPECT_EQ(judged.verdicts[0].code, ReasonCode::kBandwidthInWarningBand);
}

TEST(StatedLink, MoreThanTheLinkCarriesIsInconclusive) {
  // A Gen5 x16 H100's 55.3 GB/s cannot have crossed a Gen4 x16 link.
  const auto judged =
      judge({tool("nvbandwidth_host_to_device_memcpy_ce", "GPU 0", Direction::kHostToDevice, 55.3)}, kGen4x16);
  ASSERT_EQ(judged.verdicts.size(), 1u);
  EXPECT_EQ(judged.verdicts[0].status, VerdictStatus::kInconclusive);
  EXPECT_EQ(judged.verdicts[0].code, ReasonCode::kBandwidthAboveBudget);
  EXPECT_NE(judged.verdicts[0].reason.find("Gen5 x16"), std::string::npos) << judged.verdicts[0].reason;
}

TEST(StatedLink, CapturedPathIsTheBudgetWithoutLink) {
  // An x8 slot (both ends capable of Gen4 x8): 12.9 GB/s is normal for it.
  // In an x16 slot the same number is low, whatever the link trained to.
  const std::vector<Measurement> ms{
      tool("bandwidthtest_h2d_pinned", "0000:41:00.0", Direction::kHostToDevice, 12.9, 32000000)};
  const LinkState gen4x8{PcieGen::kGen4, 8};
  const auto captured = judge(ms, std::nullopt, {gpu_41(gen4x8, gen4x8)});
  ASSERT_EQ(captured.verdicts.size(), 1u);
  EXPECT_EQ(captured.verdicts[0].status, VerdictStatus::kPass) << captured.verdicts[0].reason;
  EXPECT_NE(captured.verdicts[0].reason.find("captured path"), std::string::npos);
  const auto full_path = judge(ms, std::nullopt, {gpu_41(kGen4x16, gen4x8)});
  ASSERT_EQ(full_path.verdicts.size(), 1u);
  EXPECT_EQ(full_path.verdicts[0].status, VerdictStatus::kBandwidthLow);
  ASSERT_TRUE(full_path.verdicts[0].link);
  EXPECT_EQ(to_string(full_path.verdicts[0].link->upstream), "0000:40:01.1");
  EXPECT_NE(full_path.verdicts[0].reason.find("it fits Gen3 x16 or Gen4 x8 ("), std::string::npos)
      << full_path.verdicts[0].reason;
}

TEST(StatedLink, NoLinkKnownIsInconclusiveNeverSilent) {
  const auto judged =
      judge({tool("bandwidthtest_h2d_pinned", "GPU 0", Direction::kHostToDevice, 26.8, 32000000)}, std::nullopt);
  ASSERT_EQ(judged.verdicts.size(), 1u);
  EXPECT_EQ(judged.verdicts[0].subject, "GPU 0");
  EXPECT_EQ(judged.verdicts[0].status, VerdictStatus::kInconclusive);
  EXPECT_EQ(judged.verdicts[0].code, ReasonCode::kNoLinkToJudgeAgainst);
  EXPECT_NE(judged.verdicts[0].remediation.find("--link"), std::string::npos);
}

TEST(StatedLink, EveryRunOfAFileIsJudgedAndALowOneBlamesItsConditions) {
  // bandwidthTest run twice in one capture: under `numactl -m0` (the GPU's
  // node) and `-m1`, the second at a quarter of the Gen4 x16 budget.
  const auto judged = judge({tool("bandwidthtest_h2d_pinned", "GPU 0", Direction::kHostToDevice, 26.8, 32000000),
                             tool("bandwidthtest_h2d_pinned", "GPU 0", Direction::kHostToDevice, 6.6, 32000000)},
                            kGen4x16);
  ASSERT_EQ(judged.verdicts.size(), 2u);
  EXPECT_EQ(judged.verdicts[0].status, VerdictStatus::kPass);
  EXPECT_EQ(judged.verdicts[1].status, VerdictStatus::kBandwidthLow);
  EXPECT_NE(judged.verdicts[1].reason.find("another run of the same copy in the same output reached 26.8 GB/s"),
            std::string::npos)
      << judged.verdicts[1].reason;
}

TEST(StatedLink, OnlyTheLargestLinkBudgetCopyIsJudged) {
  Measurement sm = tool("nvbandwidth_host_to_device_memcpy_sm", "GPU 0", Direction::kHostToDevice, 35.2);
  sm.method = CopyMethod::kSmKernel;
  Measurement bidir = tool("nvbandwidth_host_to_device_bidirectional_memcpy_ce", "GPU 0", Direction::kHostToDevice, 18);
  bidir.aggregation = Aggregation::kWithReverse;
  Measurement pageable = tool("bandwidthtest_h2d_pageable", "GPU 0", Direction::kHostToDevice, 6.6, 32000000);
  pageable.host_memory = HostMemory::kPageable;
  Measurement lspci_probe = tool("h2d_ce", "GPU 0", Direction::kHostToDevice, 3.0);
  const auto judged = judge({tool("bandwidthtest_h2d_pinned", "GPU 0", Direction::kHostToDevice, 0.2, 1000),
                             tool("bandwidthtest_h2d_pinned", "GPU 0", Direction::kHostToDevice, 26.5, 64000000), sm,
                             bidir, pageable, lspci_probe},
                            kGen4x16);
  ASSERT_EQ(judged.verdicts.size(), 1u);
  EXPECT_EQ(judged.verdicts[0].status, VerdictStatus::kPass);
  EXPECT_NE(judged.verdicts[0].reason.find("26.5 GB/s"), std::string::npos);
  EXPECT_EQ(judged.notes.size(), 3u);  // SM, bidirectional, pageable kinds
  const auto small_only =
      judge({tool("bandwidthtest_h2d_pinned", "GPU 0", Direction::kHostToDevice, 0.2, 1000)}, kGen4x16);
  EXPECT_TRUE(small_only.verdicts.empty());
  ASSERT_EQ(small_only.notes.size(), 1u);
  EXPECT_NE(small_only.notes[0].find("latency-bound"), std::string::npos);
}

TEST(StatedLink, ProfileFloorApplies) {
  ThresholdProfile strict;
  strict.defaults.bandwidth.floor_fraction = 0.95;
  strict.defaults.bandwidth.warn_fraction = 0.97;
  Evidence evidence;
  evidence.measurements = {tool("nvbandwidth_device_to_host_memcpy_ce", "GPU 0", Direction::kDeviceToHost, 26.0)};
  ToolJudgeOptions options;
  options.stated_link = kGen4x16;
  const auto judged = judge_tool_bandwidth(evidence, strict, options);
  ASSERT_EQ(judged.verdicts.size(), 1u);
  EXPECT_EQ(judged.verdicts[0].status, VerdictStatus::kBandwidthLow);
  EXPECT_NE(judged.verdicts[0].reason.find("95% floor"), std::string::npos) << judged.verdicts[0].reason;
}

// nccl-tests all-reduce busbw (modelled on an 8x RTX 5090 Gen5 server, as
// tests/fixtures/captures/nccl_allreduce_8x_rtx5090_pcie_only.txt).
Measurement all_reduce(std::string_view probe, double busbw_gbps, std::uint64_t size_bytes = std::uint64_t{1} << 30) {
  Measurement m = tool("x", "8 GPUs", Direction::kAllReduce, busbw_gbps, size_bytes);
  m.probe = std::string(probe);
  m.method = CopyMethod::kNccl;
  m.aggregation = Aggregation::kBusBandwidth;
  return m;
}

ToolJudgement judge_nccl(const std::vector<Measurement>& measurements, std::optional<LinkState> stated) {
  Evidence evidence;
  evidence.measurements = measurements;
  ToolJudgeOptions options;
  options.stated_link = stated;
  options.origins[measurements.size() - 1] = "ar.txt:38";
  return judge_nccl_tests_bandwidth(evidence, ThresholdProfile{}, options);
}

TEST(StatedLink, NcclAllReduceIsJudgedOnlyWithP2pDisabledAndAStatedLink) {
  const LinkState gen5x16{PcieGen::kGen5, 16};
  const auto budget = link_budget(gen5x16);
  ASSERT_TRUE(budget);
  const double all_reduce_gbps = std::min(budget->read_gbps, budget->write_gbps);

  // P2P disabled, link stated: judged against the all-reduce budget.
  const auto healthy = judge_nccl({all_reduce(kNcclTestsAllReduceHostProbe, 0.5, 1 << 20),
                                   all_reduce(kNcclTestsAllReduceHostProbe, 0.9 * all_reduce_gbps)},
                                  gen5x16);
  ASSERT_EQ(healthy.verdicts.size(), 1u);  // the largest size only
  EXPECT_EQ(healthy.verdicts[0].subject, "8 GPUs");
  EXPECT_EQ(healthy.verdicts[0].code, ReasonCode::kBandwidthAtBudget);
  EXPECT_NE(healthy.verdicts[0].reason.find("(ar.txt:38)"), std::string::npos) << healthy.verdicts[0].reason;
  // The host path's own floor (25 %, validate/collective_rules.hpp), not 75 %:
  // 48 % (8x RTX 5090) passes, 20 % (a collapsed link) does not.
  const auto typical = judge_nccl({all_reduce(kNcclTestsAllReduceHostProbe, 0.48 * all_reduce_gbps)}, gen5x16);
  ASSERT_EQ(typical.verdicts.size(), 1u);
  EXPECT_EQ(typical.verdicts[0].status, VerdictStatus::kPass);
  const auto low = judge_nccl({all_reduce(kNcclTestsAllReduceHostProbe, 0.2 * all_reduce_gbps)}, gen5x16);
  ASSERT_EQ(low.verdicts.size(), 1u);
  EXPECT_EQ(low.verdicts[0].status, VerdictStatus::kBandwidthLow);
  EXPECT_EQ(low.verdicts[0].code, ReasonCode::kBandwidthBelowBudget);

  // No stated link: inconclusive, saying why it was not judged.
  const auto unstated = judge_nccl({all_reduce(kNcclTestsAllReduceHostProbe, 27.92)}, std::nullopt);
  ASSERT_EQ(unstated.verdicts.size(), 1u);
  EXPECT_EQ(unstated.verdicts[0].code, ReasonCode::kNoLinkToJudgeAgainst);
  EXPECT_NE(unstated.verdicts[0].reason.find("no link was stated"), std::string::npos);

  // P2P not shown disabled: never judged, even with a stated link.
  const auto nvlink = judge_nccl({all_reduce(kNcclTestsAllReduceProbe, 116.0)}, gen5x16);
  EXPECT_TRUE(nvlink.verdicts.empty());
  ASSERT_EQ(nvlink.notes.size(), 1u);
  EXPECT_NE(nvlink.notes[0].find("does not show peer-to-peer disabled"), std::string::npos);

  // Tool numbers of other kinds are not this rule's.
  EXPECT_TRUE(judge_nccl({tool("nvbandwidth_host_to_device_memcpy_ce", "GPU 0", Direction::kHostToDevice, 20)}, gen5x16)
                  .notes.empty());
}

}  // namespace
}  // namespace pcieval
