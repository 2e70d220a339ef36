#include "validate/link_rules.hpp"

#include <gtest/gtest.h>

namespace pcieval {
namespace {

// Hand-built evidence modelled on a Supermicro SYS-420GP-TNR (HGX A100 8-GPU,
// Gen4): a GPU behind a Broadcom PEX88096 switch downstream port, the switch's
// upstream port on a Xeon root port.
PciAddress bdf(const char* text) { return *parse_pci_address(text); }

PortLinkReading port(PcieGen max_gen, int max_width, PcieGen cur_gen, int cur_width) {
  return PortLinkReading::known(LinkState{max_gen, max_width}, LinkState{cur_gen, cur_width});
}

const PortLinkReading kGen4x16 = port(PcieGen::kGen4, 16, PcieGen::kGen4, 16);

DeviceRecord gpu_behind_switch(PortLinkReading gpu_end, PortLinkReading uplink_end = kGen4x16) {
  DeviceRecord gpu;
  gpu.function.bdf = bdf("0000:07:00.0");
  gpu.function.vendor_id = 0x10de;
  gpu.function.device_id = 0x20b0;
  gpu.function.class_code = 0x030200;
  gpu.function.kind = DeviceKind::kGpu;
  gpu.function.link = gpu_end;
  Link device_link;
  device_link.downstream = bdf("0000:07:00.0");
  device_link.upstream = bdf("0000:06:10.0");
  device_link.position = LinkPosition::kDeviceLink;
  device_link.downstream_end = gpu_end;
  // Both ends of one link read its one negotiated state: the port's LnkSta
  // follows the GPU's (where the GPU's reads at all).
  device_link.upstream_end = kGen4x16;
  if (gpu_end.current_speed) device_link.upstream_end.current_speed = gpu_end.current_speed;
  if (gpu_end.current_width) device_link.upstream_end.current_width = gpu_end.current_width;
  Link uplink;
  uplink.downstream = bdf("0000:05:00.0");
  uplink.upstream = bdf("0000:04:01.0");
  uplink.position = LinkPosition::kUplink;
  uplink.downstream_end = uplink_end;
  uplink.upstream_end = uplink_end;
  uplink.upstream_end.max_speed = PcieGen::kGen4;
  uplink.upstream_end.max_width = 16;
  gpu.path = {device_link, uplink};
  return gpu;
}

Evidence with_devices(std::vector<DeviceRecord> devices, bool under_load = false) {
  Evidence evidence;
  evidence.devices = std::move(devices);
  evidence.gpus_under_load = under_load;
  return evidence;
}

TEST(LinkRules, HealthyPathPasses) {
  const auto verdicts = judge_links(with_devices({gpu_behind_switch(kGen4x16)}), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kPass);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kLinkAtExpectedState);
  EXPECT_EQ(verdicts[0].subject, "0000:07:00.0");
  EXPECT_TRUE(verdicts[0].remediation.empty());
}

TEST(LinkRules, GpuAtX8IsDowngradedEvenIdle) {
  const auto verdicts = judge_links(with_devices({gpu_behind_switch(port(PcieGen::kGen4, 16, PcieGen::kGen4, 8))}), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kLinkDowngraded);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kLinkWidthBelowExpected);
  ASSERT_TRUE(verdicts[0].link.has_value());
  EXPECT_EQ(to_string(verdicts[0].link->downstream), "0000:07:00.0");
  EXPECT_EQ(to_string(verdicts[0].link->upstream), "0000:06:10.0");
  EXPECT_NE(verdicts[0].reason.find("runs Gen4 x8, expected Gen4 x16"), std::string::npos) << verdicts[0].reason;
  EXPECT_FALSE(verdicts[0].remediation.empty());
}

TEST(LinkRules, IdleGpuAtGen1IsInconclusiveNotDowngraded) {
  // ESC8000A-E12 capture: RTX 6000 Ada at 2.5 GT/s of 16 GT/s, x16, in P8.
  const auto verdicts =
      judge_links(with_devices({gpu_behind_switch(port(PcieGen::kGen4, 16, PcieGen::kGen1, 16))}), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kInconclusive);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kGpuLinkSpeedIdle);
  EXPECT_NE(verdicts[0].reason.find("idle GPUs lower their link speed; run the load probes"), std::string::npos);
}

LinkSample sample(const char* port_bdf, double t_s, bool under_load, std::optional<PcieGen> speed,
                  std::optional<int> width, SampleSource source = SampleSource::kSysfs) {
  LinkSample s;
  s.port = bdf(port_bdf);
  s.source = source;
  s.t_s = t_s;
  s.under_load = under_load;
  s.speed = speed;
  s.width = width;
  return s;
}

TEST(LinkRules, IdleGen1GpuThatReachedGen4UnderLoadPasses) {
  // RTX 5090-like behaviour (PCIE-FACTS 6.1): Gen1 when idle, full speed once busy.
  auto evidence = with_devices({gpu_behind_switch(port(PcieGen::kGen4, 16, PcieGen::kGen1, 16))});
  evidence.link_samples = {sample("0000:07:00.0", 0.00, false, PcieGen::kGen1, 16),
                           sample("0000:07:00.0", 0.05, true, PcieGen::kGen2, 16),
                           sample("0000:07:00.0", 0.10, true, PcieGen::kGen4, 16, SampleSource::kNvml),
                           sample("0000:07:00.0", 0.15, true, std::nullopt, std::nullopt)};
  const auto verdicts = judge_links(evidence, {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kPass) << verdicts[0].reason;
  EXPECT_NE(verdicts[0].reason.find("at Gen4 x16 (read under load)"), std::string::npos) << verdicts[0].reason;
}

TEST(LinkRules, GpuStuckAtGen1UnderLoadIsDowngradedNotIdle) {
  // The RTX 5070 Ti report of PCIE-FACTS 6.1: the link stays at Gen1 while busy.
  auto evidence = with_devices({gpu_behind_switch(port(PcieGen::kGen4, 16, PcieGen::kGen1, 16))});
  evidence.link_samples = {sample("0000:07:00.0", 0.05, true, PcieGen::kGen1, 16),
                           sample("0000:07:00.0", 0.10, true, PcieGen::kGen1, 16)};
  const auto verdicts = judge_links(evidence, {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kLinkDowngraded);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kLinkSpeedBelowExpected);
  EXPECT_NE(verdicts[0].reason.find("runs Gen1 x16, expected Gen4 x16 (read under load)"), std::string::npos)
      << verdicts[0].reason;
  ASSERT_TRUE(verdicts[0].link);
  EXPECT_EQ(to_string(verdicts[0].link->downstream), "0000:07:00.0");
}

TEST(LinkRules, SamplesWithoutLoadOrOfOtherPortsChangeNothing) {
  auto evidence = with_devices({gpu_behind_switch(port(PcieGen::kGen4, 16, PcieGen::kGen1, 16))});
  evidence.link_samples = {sample("0000:07:00.0", 0.0, false, PcieGen::kGen4, 16),
                           sample("0000:06:10.0", 0.1, true, PcieGen::kGen4, 16)};
  const auto verdicts = judge_links(evidence, {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kGpuLinkSpeedIdle);
}

TEST(BestStateUnderLoad, TakesTheHighestSpeedAndWidestWidthSeparately) {
  const std::vector<LinkSample> samples{sample("0000:07:00.0", 0.0, true, PcieGen::kGen5, 8),
                                        sample("0000:07:00.0", 0.1, true, PcieGen::kGen3, 16),
                                        sample("0000:07:00.0", 0.2, false, PcieGen::kGen6, 16)};
  const auto best = best_state_under_load(samples, bdf("0000:07:00.0"));
  ASSERT_TRUE(best);
  EXPECT_EQ(*best, (LinkState{PcieGen::kGen5, 16}));
  EXPECT_FALSE(best_state_under_load(samples, bdf("0000:08:00.0")));
}

// Issue 27: the seed failure, as the simulated node showed pcieval missed
// it. A GPU that ran Gen4 x16 under load and then retrained to Gen3 x16 for
// the rest of its copies was judged by its best reading (Gen4) and passed.
// With per-GPU load readings (1.6), the state after its last best reading
// counts once it held long enough.
Evidence retrained_mid_run(bool load_per_gpu) {
  auto evidence = with_devices({gpu_behind_switch(port(PcieGen::kGen4, 16, PcieGen::kGen1, 16))});
  evidence.load_per_gpu = load_per_gpu;
  evidence.link_samples = {
      sample("0000:07:00.0", 0.00, false, PcieGen::kGen1, 16), sample("0000:07:00.0", 0.05, true, PcieGen::kGen4, 16),
      sample("0000:07:00.0", 1.20, false, PcieGen::kGen1, 16), sample("0000:07:00.0", 1.40, true, PcieGen::kGen3, 16),
      sample("0000:07:00.0", 1.90, false, PcieGen::kGen3, 16), sample("0000:07:00.0", 2.00, true, PcieGen::kGen3, 16),
      sample("0000:07:00.0", 2.30, false, PcieGen::kGen3, 16)};
  return evidence;
}

TEST(LinkRules, ALinkThatRetrainedUnderLoadIsDowngradedNamingTheRetrain) {
  const auto verdicts = judge_links(retrained_mid_run(true), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kLinkDowngraded) << verdicts[0].reason;
  EXPECT_EQ(verdicts[0].code, ReasonCode::kLinkSpeedBelowExpected);
  EXPECT_NE(verdicts[0].reason.find("runs Gen3 x16, expected Gen4 x16 (read under load); it reached Gen4 x16 under "
                                    "load, then read Gen3 x16 from t=1.4 s on, through 0.8 s of copies"),
            std::string::npos)
      << verdicts[0].reason;
}

TEST(LinkRules, SamplesMarkedByAnyGpusLoadKeepTheBestReading) {
  // Before 1.6 a GPU idling while another copied was marked under load too:
  // its lower readings prove nothing.
  const auto verdicts = judge_links(retrained_mid_run(false), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kPass) << verdicts[0].reason;
}

TEST(LinkRules, AShortLowReadingAfterTheBestIsARampNotARetrain) {
  auto evidence = with_devices({gpu_behind_switch(port(PcieGen::kGen4, 16, PcieGen::kGen1, 16))});
  evidence.load_per_gpu = true;
  // The last probe starts while the GPU is still at Gen1: one reading, 50 ms.
  evidence.link_samples = {
      sample("0000:07:00.0", 0.05, true, PcieGen::kGen4, 16), sample("0000:07:00.0", 1.00, false, PcieGen::kGen1, 16),
      sample("0000:07:00.0", 1.20, true, PcieGen::kGen1, 16), sample("0000:07:00.0", 1.25, true, PcieGen::kGen4, 16),
      sample("0000:07:00.0", 1.40, true, PcieGen::kGen2, 16), sample("0000:07:00.0", 1.45, false, PcieGen::kGen1, 16)};
  const auto verdicts = judge_links(evidence, {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kPass) << verdicts[0].reason;
}

TEST(LinkRules, SameSpeedDropUnderLoadIsADowngrade) {
  const auto verdicts =
      judge_links(with_devices({gpu_behind_switch(port(PcieGen::kGen4, 16, PcieGen::kGen1, 16))}, true), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kLinkDowngraded);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kLinkSpeedBelowExpected);
}

TEST(LinkRules, IdleGpuWithWidthLossIsStillADowngrade) {
  // L4 at P8: Gen1 of Gen4 and x8 of x16; the width is never explained by idle.
  const auto verdicts = judge_links(with_devices({gpu_behind_switch(port(PcieGen::kGen4, 16, PcieGen::kGen1, 8))}), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kLinkDowngraded);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kLinkWidthBelowExpected);
}

TEST(LinkRules, SwitchUplinkAtGen3IsJudgedAsReadEvenForAnIdleGpu) {
  const auto verdicts =
      judge_links(with_devices({gpu_behind_switch(kGen4x16, port(PcieGen::kGen4, 16, PcieGen::kGen3, 16))}), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kLinkDowngraded);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kLinkSpeedBelowExpected);
  ASSERT_TRUE(verdicts[0].link.has_value());
  EXPECT_EQ(to_string(verdicts[0].link->downstream), "0000:05:00.0");
  EXPECT_EQ(to_string(verdicts[0].link->upstream), "0000:04:01.0");
}

TEST(LinkRules, TheNarrowestDowngradedHopIsNamed) {
  // Device link at Gen4 x8 (15.75 GB/s) under an uplink at Gen3 x16 (15.75 GB/s):
  // a tie, so the hop nearest the root is named, as the kernel does.
  auto gpu =
      gpu_behind_switch(port(PcieGen::kGen4, 16, PcieGen::kGen4, 8), port(PcieGen::kGen4, 16, PcieGen::kGen3, 16));
  auto verdicts = judge_links(with_devices({gpu}), {});
  ASSERT_TRUE(verdicts[0].link.has_value());
  EXPECT_EQ(to_string(verdicts[0].link->downstream), "0000:05:00.0");
  EXPECT_NE(verdicts[0].reason.find("0000:07:00.0 <-> 0000:06:10.0"), std::string::npos) << "both hops are listed";
  // A narrower device link (Gen4 x4) is named instead.
  gpu = gpu_behind_switch(port(PcieGen::kGen4, 16, PcieGen::kGen4, 4), port(PcieGen::kGen4, 16, PcieGen::kGen3, 16));
  verdicts = judge_links(with_devices({gpu}), {});
  EXPECT_EQ(to_string(verdicts[0].link->downstream), "0000:07:00.0");
}

TEST(LinkRules, Gen5CardInGen4SlotPasses) {
  auto gpu = gpu_behind_switch(port(PcieGen::kGen5, 16, PcieGen::kGen4, 16));
  const auto verdicts = judge_links(with_devices({gpu}), {});
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kPass);
}

TEST(LinkRules, NicAtX8OnX16SlotIsDowngraded) {
  DeviceRecord nic = gpu_behind_switch(port(PcieGen::kGen4, 16, PcieGen::kGen4, 8));
  nic.function.kind = DeviceKind::kNic;
  nic.function.vendor_id = 0x15b3;
  const auto verdicts = judge_links(with_devices({nic}), {});
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kLinkDowngraded);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kLinkWidthBelowExpected);
}

TEST(LinkRules, NicSpeedDropIsNotExcusedAsIdle) {
  DeviceRecord nic = gpu_behind_switch(port(PcieGen::kGen4, 16, PcieGen::kGen1, 16));
  nic.function.kind = DeviceKind::kNic;
  EXPECT_EQ(judge_links(with_devices({nic}), {})[0].status, VerdictStatus::kLinkDowngraded);
}

TEST(LinkRules, UnknownReadingIsInconclusiveNeverPass) {
  PortLinkReading gpu_end = kGen4x16;
  gpu_end.current_width = make_error("current_link_width missing");
  auto gpu = gpu_behind_switch(gpu_end);
  gpu.path[0].upstream_end.current_width = make_error("permission denied");
  const auto verdicts = judge_links(with_devices({gpu}), {});
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kInconclusive);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kLinkStateUnknown);
  EXPECT_NE(verdicts[0].reason.find("current_link_width missing"), std::string::npos) << verdicts[0].reason;
}

TEST(LinkRules, DowngradeElsewhereOutranksAnUnknownHop) {
  PortLinkReading gpu_end = kGen4x16;
  gpu_end.max_speed = make_error("kernel reports link speed 'Unknown'");
  const auto verdicts =
      judge_links(with_devices({gpu_behind_switch(gpu_end, port(PcieGen::kGen4, 16, PcieGen::kGen4, 8))}), {});
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kLinkDowngraded);
}

TEST(LinkRules, NegotiatedAboveCapabilityIsInconclusive) {
  const auto verdicts =
      judge_links(with_devices({gpu_behind_switch(port(PcieGen::kGen3, 16, PcieGen::kGen4, 16))}), {});
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kInconclusive);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kLinkAboveCapability);
}

TEST(LinkRules, OnlyFunctionZeroAndNoVirtualFunctionsAreJudged) {
  DeviceRecord gpu = gpu_behind_switch(kGen4x16);
  DeviceRecord audio = gpu_behind_switch(port(PcieGen::kGen4, 16, PcieGen::kGen4, 8));
  audio.function.bdf = bdf("0000:07:00.1");
  audio.function.kind = DeviceKind::kOther;
  DeviceRecord vf = gpu_behind_switch(port(PcieGen::kGen4, 16, PcieGen::kGen4, 8));
  vf.function.bdf = bdf("0000:07:01.2");
  vf.function.is_virtual_function = true;
  DeviceRecord integrated;  // a root-complex integrated endpoint: no path
  integrated.function.bdf = bdf("0000:00:14.0");
  const auto evidence = with_devices({gpu, audio, vf, integrated});
  const auto verdicts = judge_links(evidence, {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].subject, "0000:07:00.0");
  EXPECT_FALSE(is_judged(evidence.devices[3], evidence));
}

TEST(LinkRules, FunctionOneIsJudgedWhenFunctionZeroIsAbsent) {
  DeviceRecord second_port = gpu_behind_switch(kGen4x16);
  second_port.function.bdf = bdf("0000:07:00.1");
  EXPECT_EQ(judge_links(with_devices({second_port}), {}).size(), 1U);
}

TEST(LinkRules, MissingGpusAreANodeVerdict) {
  LinkRuleOptions options;
  options.expected_gpus = 8;
  const auto verdicts = judge_links(with_devices({gpu_behind_switch(kGen4x16)}), options);
  ASSERT_EQ(verdicts.size(), 2U);
  EXPECT_EQ(verdicts[1].subject, "node");
  EXPECT_EQ(verdicts[1].status, VerdictStatus::kMissing);
  EXPECT_EQ(verdicts[1].code, ReasonCode::kGpusMissing);
  EXPECT_NE(verdicts[1].reason.find("found 1 GPUs, expected 8 (0000:07:00.0)"), std::string::npos);
  options.expected_gpus = 1;
  EXPECT_EQ(judge_links(with_devices({gpu_behind_switch(kGen4x16)}), options).size(), 1U);
}

TEST(Summary, OneLineNamingTheFirstFailureAndTheCount) {
  auto bad = gpu_behind_switch(port(PcieGen::kGen4, 16, PcieGen::kGen4, 8));
  auto idle = gpu_behind_switch(port(PcieGen::kGen4, 16, PcieGen::kGen1, 16));
  idle.function.bdf = bdf("0000:08:00.0");
  auto bad2 = bad;
  bad2.function.bdf = bdf("0000:09:00.0");
  const auto evidence = with_devices({bad, idle, bad2});
  const auto line = summarize(judge_links(evidence, {}), evidence);
  EXPECT_EQ(line,
            "pcieval fail: 0000:07:00.0 link_downgraded (link_width_below_expected at 0000:07:00.0<->0000:06:10.0) "
            "+1 more");
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(Summary, APassCountsGpusPortsAndGroupsEachAsWhatTheyAre) {
  // Two GPUs under one switch port, both copying alone and together, and an
  // all-reduce over both: two GPUs, not four.
  const auto passing = [](const char* subject) {
    Verdict v;
    v.subject = subject;
    v.status = VerdictStatus::kPass;
    v.code = ReasonCode::kBandwidthAtBudget;
    return v;
  };
  const std::vector<Verdict> verdicts{passing("0000:03:00.0"), passing("0000:04:00.0"), passing("port 0000:01:00.0"),
                                      passing("2 GPUs")};
  EXPECT_EQ(summarize(verdicts, Evidence{}),
            "pcieval pass: copy bandwidth of 2 GPUs, 1 shared port, 1 GPU group within budget");
}

TEST(Summary, NothingToJudgeSaysSo) {
  DeviceRecord virtio;
  virtio.function.bdf = bdf("0000:00:03.0");
  const auto evidence = with_devices({virtio});
  // judge_links finds nothing; a summary of nothing is never a pass.
  EXPECT_EQ(summarize(judge_links(evidence, {}), evidence),
            "pcieval inconclusive: nothing was judged (1 devices, none with a link or a measurement to judge)");
}

}  // namespace
}  // namespace pcieval

namespace pcieval {
namespace {

TEST(LinkRules, ALinkWithoutAPathIsJudgedAgainstItsOwnCapability) {
  // `lspci -vv -s 41:00.0` pasted into a ticket: the GPU's own LnkSta is
  // there, the root port above it is not. At its own LnkCap it cannot be
  // below what both ends allow: its own link passes, the hops above are not
  // judged. Below its LnkCap, the missing port could explain it: inconclusive.
  DeviceRecord lone;
  lone.function.bdf = *parse_pci_address("0000:41:00.0");
  lone.function.kind = DeviceKind::kGpu;
  lone.function.link = PortLinkReading::known(LinkState{PcieGen::kGen4, 16}, LinkState{PcieGen::kGen4, 16});
  Evidence evidence;
  evidence.devices = {lone};
  auto verdicts = judge_links(evidence, {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kPass);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kLinkAtOwnCapability);
  EXPECT_NE(verdicts[0].reason.find("at Gen4 x16"), std::string::npos) << verdicts[0].reason;
  evidence.devices[0].function.link =
      PortLinkReading::known(LinkState{PcieGen::kGen4, 16}, LinkState{PcieGen::kGen4, 8});
  verdicts = judge_links(evidence, {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kInconclusive);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kLinkPathUnknown);
  EXPECT_NE(verdicts[0].reason.find("runs Gen4 x8, below the Gen4 x16 it can reach on its own"), std::string::npos)
      << verdicts[0].reason;
}

TEST(LinkRules, IntegratedEndpointReadingUnknownIsNotJudged) {
  // Root-complex integrated endpoints (an Intel xHCI at 00:14.0) expose the
  // link files but read "Unknown" and width 0: there is no link to judge.
  DeviceRecord integrated;
  integrated.function.bdf = *parse_pci_address("0000:00:14.0");
  PortLinkReading reading = PortLinkReading::unknown(make_error("current_link_speed: kernel reports 'Unknown'"));
  integrated.function.link = reading;
  Evidence evidence;
  evidence.devices = {integrated};
  EXPECT_TRUE(judge_links(evidence, {}).empty());
}

// Issue 29, item 1: a reading that is missing or broken at either end of a
// link, or two ends that disagree, is never a pass.
class BrokenReading : public ::testing::TestWithParam<bool> {};

TEST_P(BrokenReading, AtEitherEndTheLinkIsInconclusiveNamingTheEndAndTheFile) {
  const bool at_port = GetParam();
  DeviceRecord gpu = gpu_behind_switch(kGen4x16);
  PortLinkReading& end = at_port ? gpu.path[0].upstream_end : gpu.path[0].downstream_end;
  end.current_width = make_error("current_link_width: device not responding (reads as 0xffff)");
  const auto verdicts = judge_links(with_devices({gpu}, true), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kInconclusive) << verdicts[0].reason;
  EXPECT_EQ(verdicts[0].code, ReasonCode::kLinkStateUnknown);
  const std::string end_bdf = at_port ? "0000:06:10.0" : "0000:07:00.0";
  EXPECT_NE(verdicts[0].reason.find("negotiated state of " + end_bdf +
                                    " unknown: current_link_width: device not "
                                    "responding"),
            std::string::npos)
      << verdicts[0].reason;
}

TEST_P(BrokenReading, ABrokenCapabilityAtEitherEndIsInconclusive) {
  const bool at_port = GetParam();
  DeviceRecord gpu = gpu_behind_switch(kGen4x16);
  PortLinkReading& end = at_port ? gpu.path[0].upstream_end : gpu.path[0].downstream_end;
  end.max_speed = make_error("max_link_speed: unrecognised link speed 'nan'");
  const auto verdicts = judge_links(with_devices({gpu}, true), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kInconclusive) << verdicts[0].reason;
  EXPECT_NE(verdicts[0].reason.find("'nan'"), std::string::npos) << verdicts[0].reason;
}

TEST_P(BrokenReading, LoadSamplesDoNotStandInForABrokenReading) {
  const bool at_port = GetParam();
  auto evidence = with_devices({gpu_behind_switch(kGen4x16)});
  PortLinkReading& end =
      at_port ? evidence.devices[0].path[0].upstream_end : evidence.devices[0].path[0].downstream_end;
  end.current_speed = make_error("current_link_speed: unrecognised link speed '999 GT/s'");
  evidence.link_samples = {sample("0000:07:00.0", 0.1, true, PcieGen::kGen4, 16)};
  const auto verdicts = judge_links(evidence, {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kInconclusive) << verdicts[0].reason;
  EXPECT_NE(verdicts[0].reason.find("'999 GT/s'"), std::string::npos) << verdicts[0].reason;
}

INSTANTIATE_TEST_SUITE_P(GpuEndAndPortEnd, BrokenReading, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "port_end" : "gpu_end"; });

DeviceRecord disagreeing(LinkState gpu_reads, LinkState port_reads) {
  DeviceRecord gpu = gpu_behind_switch(kGen4x16);
  gpu.path[0].downstream_end.current_speed = gpu_reads.gen;
  gpu.path[0].downstream_end.current_width = gpu_reads.width;
  gpu.path[0].upstream_end.current_speed = port_reads.gen;
  gpu.path[0].upstream_end.current_width = port_reads.width;
  return gpu;
}

TEST(LinkRules, EndsThatDisagreeAreInconclusiveNamingBoth) {
  // The GPU says x16, the port above says x8: one of them is wrong, and
  // which one decides between pass and a downgrade.
  const auto verdicts = judge_links(with_devices({disagreeing({PcieGen::kGen4, 16}, {PcieGen::kGen4, 8})}, true), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kInconclusive);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kLinkStateUnknown);
  EXPECT_NE(verdicts[0].reason.find("the two ends disagree: 0000:07:00.0 reads Gen4 x16, 0000:06:10.0 reads Gen4 x8"),
            std::string::npos)
      << verdicts[0].reason;
  // The same the other way round, and where each end is low in another way.
  EXPECT_EQ(judge_links(with_devices({disagreeing({PcieGen::kGen4, 8}, {PcieGen::kGen4, 16})}, true), {})[0].status,
            VerdictStatus::kInconclusive);
  EXPECT_EQ(judge_links(with_devices({disagreeing({PcieGen::kGen3, 16}, {PcieGen::kGen4, 8})}, true), {})[0].status,
            VerdictStatus::kInconclusive);
}

TEST(LinkRules, EndsThatDisagreeBelowTheExpectationAreADowngradeEitherWay) {
  // x8 at the GPU, x4 at the port, of x16: whichever is right, lanes are lost.
  const auto verdicts = judge_links(with_devices({disagreeing({PcieGen::kGen4, 8}, {PcieGen::kGen4, 4})}, true), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kLinkDowngraded);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kLinkWidthBelowExpected);
  EXPECT_NE(verdicts[0].reason.find("runs Gen4 x8, expected Gen4 x16 (the two ends disagree (0000:07:00.0 reads "
                                    "Gen4 x8, 0000:06:10.0 reads Gen4 x4)"),
            std::string::npos)
      << verdicts[0].reason;
}

TEST(LinkRules, EndsThatDisagreeUnderLoadAreInconclusive) {
  // The idle readings agree; under load the GPU's end reached x16 and the
  // port's stayed at x8.
  auto evidence = with_devices({gpu_behind_switch(port(PcieGen::kGen4, 16, PcieGen::kGen1, 16))});
  evidence.link_samples = {sample("0000:07:00.0", 0.1, true, PcieGen::kGen4, 16),
                           sample("0000:06:10.0", 0.1, true, PcieGen::kGen4, 8)};
  const auto verdicts = judge_links(evidence, {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kInconclusive) << verdicts[0].reason;
  EXPECT_NE(verdicts[0].reason.find("0000:06:10.0 reached Gen4 x8 under load"), std::string::npos)
      << verdicts[0].reason;
  // Both ends at full state under load: the idle reading no longer matters.
  evidence.link_samples.back().width = 16;
  EXPECT_EQ(judge_links(evidence, {})[0].status, VerdictStatus::kPass);
}

// Issue 29, item 2: the Switchtec management endpoint of an HGX H100 board
// (81:00.1) claims LnkCap x16 on the x2 link of its function 0 (81:00.0, the
// switch upstream port, a bridge and so no device of its own): model/
// build_path gives it function 0's link, and the verdict says so.
TEST(LinkRules, AFunctionJudgedByFunctionZerosLinkSaysSo) {
  DeviceRecord management;
  management.function.bdf = bdf("0000:81:00.1");
  management.function.vendor_id = 0x11f8;
  management.function.class_code = 0x058000;
  management.function.link = port(PcieGen::kGen4, 16, PcieGen::kGen4, 2);
  Link link;
  link.downstream = bdf("0000:81:00.0");
  link.upstream = bdf("0000:80:01.0");
  link.downstream_end = port(PcieGen::kGen4, 2, PcieGen::kGen4, 2);
  link.upstream_end = port(PcieGen::kGen5, 16, PcieGen::kGen4, 2);
  management.path = {link};
  const auto verdicts = judge_links(with_devices({management}), {});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kPass) << verdicts[0].reason;
  EXPECT_NE(verdicts[0].reason.find("0000:81:00.1 shares the physical link of its function 0 (0000:81:00.0) and is "
                                    "judged by that link, not by its own LnkCap (Gen4 x16)"),
            std::string::npos)
      << verdicts[0].reason;
}

}  // namespace
}  // namespace pcieval
