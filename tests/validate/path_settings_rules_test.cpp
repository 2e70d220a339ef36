// The path-settings rules (issue 28) over hand-built evidence of real
// machines (tests/validate/peer_machines.hpp names each): ACS redirect on
// switch ports between GPUs, payload sizes, ASPM, IOMMU translation, and
// what unread settings prove (nothing). Assertions are on codes and on the
// words a reader greps lspci -vvv for.
#include "validate/path_settings_rules.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "peer_machines.hpp"
#include "validate/bandwidth_rules.hpp"
#include "validate/budget.hpp"
#include "validate/judge.hpp"
#include "validate/link_rules.hpp"

namespace pcieval::path_settings_test {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace peer_machines;

std::vector<Verdict> of(const std::vector<Verdict>& verdicts, const std::string& subject) {
  std::vector<Verdict> found;
  for (const Verdict& v : verdicts) {
    if (v.subject == subject) found.push_back(v);
  }
  return found;
}

std::vector<Verdict> with_code(const std::vector<Verdict>& verdicts, ReasonCode code) {
  std::vector<Verdict> found;
  for (const Verdict& v : verdicts) {
    if (v.code == code) found.push_back(v);
  }
  return found;
}

// Every end of every link of `device`'s path, for editing a fixture.
std::vector<PortLinkReading*> ends_of(DeviceRecord& device) {
  std::vector<PortLinkReading*> ends;
  for (Link& link : device.path) {
    ends.push_back(&link.downstream_end);
    ends.push_back(&link.upstream_end);
  }
  return ends;
}

PortSettings& settings(PortLinkReading& end) { return end.settings.value(); }

TEST(PathSettingsRules, AcsRedirectOnHgxSwitchPortsFailsNamingThePortsAndThePeer) {
  const Evidence evidence = hgx_a100(kAcsLinuxDefault);
  const RuleJudgement judged = judge_path_settings(evidence, ThresholdProfile{});
  const auto acs = with_code(judged.verdicts, ReasonCode::kAcsRedirectsPeerTraffic);
  ASSERT_EQ(acs.size(), 8U);  // every GPU: its pair's traffic goes up through the root complex
  const auto gpu0 = of(acs, "0000:03:00.0");
  ASSERT_EQ(gpu0.size(), 1U);
  const Verdict& v = gpu0.front();
  EXPECT_EQ(v.status, VerdictStatus::kMisconfigured);
  EXPECT_TRUE(is_failing(v.status));
  ASSERT_TRUE(v.link);
  EXPECT_EQ(to_string(v.link->downstream), "0000:03:00.0");
  EXPECT_EQ(to_string(v.link->upstream), "0000:02:00.0");
  EXPECT_THAT(v.reason, HasSubstr("0000:02:00.0 (above this GPU; ACSCtl: SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ "
                                  "UpstreamFwd+ EgressCtrl- DirectTrans-)"));
  EXPECT_THAT(v.reason, HasSubstr("0000:02:08.0 (above 0000:04:00.0;"));
  EXPECT_THAT(v.reason, HasSubstr("between 0000:03:00.0 and 0000:04:00.0"));
  EXPECT_THAT(v.reason, HasSubstr("upstream port 0000:01:00.0"));
  // GPUs of the other switches and the root ports are not this pair's route.
  EXPECT_THAT(v.reason, Not(HasSubstr("0000:23:00.0")));
  EXPECT_THAT(v.reason, Not(HasSubstr("0000:00:01.1")));
  EXPECT_THAT(v.remediation, HasSubstr("`setpci -s 0000:02:00.0 ECAP_ACS+0x6.w=0000`"));
  EXPECT_THAT(v.remediation, HasSubstr("`setpci -s 0000:02:08.0 ECAP_ACS+0x6.w=0000`"));
  EXPECT_THAT(v.remediation, HasSubstr("pci=disable_acs_redir=0000:02:00.0;0000:02:08.0"));
  // No pass beside a fault.
  EXPECT_TRUE(with_code(judged.verdicts, ReasonCode::kPathSettingsAsExpected).empty());
  EXPECT_EQ(overall_of(judged.verdicts), Overall::kFail);
}

TEST(PathSettingsRules, AcsOnAmdAndIntelRootPortsOnlyPasses) {
  // HGX: Linux's ACS on the EPYC root ports, the switch ports clear.
  const RuleJudgement hgx = judge_path_settings(hgx_a100(0, kAcsLinuxDefault), ThresholdProfile{});
  ASSERT_EQ(hgx.verdicts.size(), 8U);
  for (const Verdict& v : hgx.verdicts) {
    EXPECT_EQ(v.code, ReasonCode::kPathSettingsAsExpected) << v.reason;
    EXPECT_EQ(v.status, VerdictStatus::kPass);
  }
  EXPECT_THAT(hgx.verdicts.front().reason, HasSubstr("max payload 256 bytes"));
  EXPECT_TRUE(hgx.notes.empty());
  // Two sockets, a GPU on an Intel root port of each, ACS redirect on both
  // root ports: their pair crosses the root complex anyway, never ACS's fault.
  const RuleJudgement spr = judge_path_settings(two_socket_h100(), ThresholdProfile{});
  ASSERT_EQ(spr.verdicts.size(), 2U);
  for (const Verdict& v : spr.verdicts) EXPECT_EQ(v.code, ReasonCode::kPathSettingsAsExpected) << v.reason;
}

TEST(PathSettingsRules, SourceValidationAloneOnMicrochipSwitchPortsPasses) {
  const RuleJudgement judged = judge_path_settings(switchtec_a100(), ThresholdProfile{});
  ASSERT_EQ(judged.verdicts.size(), 2U);
  for (const Verdict& v : judged.verdicts) {
    EXPECT_EQ(v.code, ReasonCode::kPathSettingsAsExpected) << v.reason;
    EXPECT_EQ(v.status, VerdictStatus::kPass);
  }
}

TEST(PathSettingsRules, RedirectOnOnePlxPortBlamesBothGpusOfThePair) {
  Evidence evidence = plx_p100(0);
  // Only the port above 0000:05:00.0 redirects (lspci: ReqRedir+ CmpltRedir+).
  settings(evidence.devices[1].path[0].upstream_end).acs =
      std::optional<AcsRegisters>(AcsRegisters{kAcsCapability, kAcsRequestRedirect | kAcsCompletionRedirect});
  const RuleJudgement judged = judge_path_settings(evidence, ThresholdProfile{});
  const auto acs = with_code(judged.verdicts, ReasonCode::kAcsRedirectsPeerTraffic);
  ASSERT_EQ(acs.size(), 2U);
  EXPECT_EQ(acs[0].subject, "0000:04:00.0");
  EXPECT_THAT(acs[0].reason, HasSubstr("0000:03:10.0 (above 0000:05:00.0; ACSCtl: SrcValid- TransBlk- ReqRedir+ "
                                       "CmpltRedir+"));
  ASSERT_TRUE(acs[0].link);
  EXPECT_EQ(to_string(acs[0].link->upstream), "0000:03:10.0");  // the hop the port belongs to
  EXPECT_EQ(acs[1].subject, "0000:05:00.0");
  EXPECT_THAT(acs[1].reason, HasSubstr("above this GPU"));
  EXPECT_THAT(acs[1].reason, Not(HasSubstr("0000:03:08.0")));
}

TEST(PathSettingsRules, DeviceProgrammedAboveItsPortFails) {
  Evidence evidence = switchtec_a100();
  // 0000:43:00.0 programmed 512 under a downstream port programmed 256.
  PortSettings& gpu = settings(evidence.devices[0].path[0].downstream_end);
  gpu.max_payload_supported_bytes = 512;
  gpu.max_payload_bytes = 512;
  settings(evidence.devices[0].path[0].upstream_end).max_payload_bytes = 256;
  const RuleJudgement judged = judge_path_settings(evidence, ThresholdProfile{});
  const auto above = with_code(judged.verdicts, ReasonCode::kPayloadAbovePort);
  ASSERT_EQ(above.size(), 1U);
  EXPECT_EQ(above[0].subject, "0000:43:00.0");
  EXPECT_EQ(above[0].status, VerdictStatus::kMisconfigured);
  ASSERT_TRUE(above[0].link);
  EXPECT_EQ(to_string(above[0].link->upstream), "0000:42:00.0");
  EXPECT_THAT(above[0].reason, HasSubstr("(DevCtl: MaxPayload 512 bytes)"));
  EXPECT_THAT(above[0].reason, HasSubstr("0000:42:00.0 (DevCtl: MaxPayload 256 bytes)"));
  EXPECT_THAT(above[0].remediation, HasSubstr("`setpci -s 0000:43:00.0 CAP_EXP+0x8.w=0020:00e0`"));
  // The other GPU of the switch is as expected.
  EXPECT_EQ(of(judged.verdicts, "0000:44:00.0").front().code, ReasonCode::kPathSettingsAsExpected);
}

TEST(PathSettingsRules, PathProgrammedAt128WhereEveryEndSupports256Warns) {
  Evidence evidence = hgx_a100(0);
  for (DeviceRecord& device : evidence.devices) {
    for (PortLinkReading* end : ends_of(device)) settings(*end).max_payload_bytes = 128;
  }
  const RuleJudgement judged = judge_path_settings(evidence, ThresholdProfile{});
  const auto low = with_code(judged.verdicts, ReasonCode::kPayloadBelowSupported);
  ASSERT_EQ(low.size(), 8U);
  const Verdict& v = low.front();
  EXPECT_EQ(v.subject, "0000:03:00.0");
  EXPECT_EQ(v.status, VerdictStatus::kPass);  // the built-in severity: a warning
  EXPECT_THAT(v.reason, HasSubstr("0000:03:00.0 (DevCtl: MaxPayload 128 bytes)"));
  EXPECT_THAT(v.reason, HasSubstr("256 bytes is the smallest any end supports"));
  EXPECT_THAT(v.reason, HasSubstr("8% lower for writes and 7% for reads"));  // PCIE-FACTS 2.5 efficiencies
  EXPECT_THAT(v.remediation, HasSubstr("pci=pcie_bus_perf"));
  // One-off lines from the root port down, so no device is above its port.
  const auto root = v.remediation.find("setpci -s 0000:00:01.1 CAP_EXP+0x8.w=0020:00e0");
  const auto device = v.remediation.find("setpci -s 0000:03:00.0 CAP_EXP+0x8.w=0020:00e0");
  ASSERT_NE(root, std::string::npos) << v.remediation;
  ASSERT_NE(device, std::string::npos) << v.remediation;
  EXPECT_LT(root, device);
  EXPECT_EQ(overall_of(judged.verdicts), Overall::kPass);
  EXPECT_TRUE(with_code(judged.verdicts, ReasonCode::kPayloadAbovePort).empty());
}

TEST(PathSettingsRules, AnUnreadEndLeavesWhatThePathSupportsUnknown) {
  // The ports of an HGX A100 support 512 and run 256, the GPUs support 256:
  // with a GPU's own settings not read (its config read hung), 256 on the
  // ports is not "below what every end supports", it is what the GPU allows.
  Evidence evidence = hgx_a100(0);
  for (DeviceRecord& device : evidence.devices) {
    for (PortLinkReading* end : ends_of(device)) {
      if (settings(*end).max_payload_supported_bytes != 256) settings(*end).max_payload_supported_bytes = 512;
    }
    device.path.front().downstream_end.settings = make_error("config did not return within 5 s");
  }
  const RuleJudgement judged = judge_path_settings(evidence, ThresholdProfile{});
  EXPECT_TRUE(with_code(judged.verdicts, ReasonCode::kPayloadBelowSupported).empty());
  EXPECT_TRUE(with_code(judged.verdicts, ReasonCode::kPathSettingsAsExpected).empty());
}

TEST(PathSettingsRules, AspmL1OnAGpuLinkWarns) {
  Evidence evidence = two_socket_h100();
  settings(evidence.devices[0].path[0].downstream_end).aspm = AspmControl::kL1;
  settings(evidence.devices[0].path[0].upstream_end).aspm = AspmControl::kL0sL1;
  const RuleJudgement judged = judge_path_settings(evidence, ThresholdProfile{});
  const auto aspm = with_code(judged.verdicts, ReasonCode::kAspmEnabled);
  ASSERT_EQ(aspm.size(), 1U);
  EXPECT_EQ(aspm[0].subject, "0000:18:00.0");
  EXPECT_EQ(aspm[0].status, VerdictStatus::kPass);
  EXPECT_THAT(aspm[0].reason, HasSubstr("0000:18:00.0 (LnkCtl: ASPM L1 Enabled)"));
  EXPECT_THAT(aspm[0].reason, HasSubstr("0000:17:01.0 (LnkCtl: ASPM L0s L1 Enabled)"));
  EXPECT_THAT(aspm[0].remediation, HasSubstr("`setpci -s 0000:18:00.0 CAP_EXP+0x10.w=0000:0003`"));
  EXPECT_THAT(aspm[0].remediation, HasSubstr("pcie_aspm.policy=performance"));
  EXPECT_EQ(of(judged.verdicts, "0000:9a:00.0").front().code, ReasonCode::kPathSettingsAsExpected);
}

TEST(PathSettingsRules, TheProfileSeveritiesSwitchTheStatus) {
  const Evidence acs = hgx_a100(kAcsLinuxDefault);
  ThresholdProfile profile;
  profile.defaults.path_settings.acs_redirect = SettingSeverity::kWarn;
  auto verdicts = judge_path_settings(acs, profile).verdicts;
  EXPECT_EQ(verdicts.front().code, ReasonCode::kAcsRedirectsPeerTraffic);
  EXPECT_EQ(verdicts.front().status, VerdictStatus::kPass);
  EXPECT_THAT(verdicts.front().reason, HasSubstr("a warning by this profile"));
  EXPECT_EQ(overall_of(verdicts), Overall::kPass);
  profile.defaults.path_settings.acs_redirect = SettingSeverity::kInconclusive;
  verdicts = judge_path_settings(acs, profile).verdicts;
  EXPECT_EQ(verdicts.front().status, VerdictStatus::kInconclusive);
  EXPECT_EQ(overall_of(verdicts), Overall::kInconclusive);

  Evidence aspm = two_socket_h100();
  settings(aspm.devices[1].path[0].downstream_end).aspm = AspmControl::kL1;
  profile.defaults.path_settings.aspm_enabled = SettingSeverity::kFail;
  verdicts = judge_path_settings(aspm, profile).verdicts;
  const auto found = with_code(verdicts, ReasonCode::kAspmEnabled);
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0].status, VerdictStatus::kMisconfigured);
  EXPECT_EQ(overall_of(verdicts), Overall::kFail);
}

TEST(PathSettingsRules, IommuGroupTypeDecidesAndTheCommandLineOnlyWhereTheTypeWasNotRead) {
  Evidence evidence = two_socket_h100();
  evidence.devices[0].function.iommu = IommuReading{12, "DMA-FQ"};
  evidence.devices[1].function.iommu = IommuReading{40, "identity"};
  auto judged = judge_path_settings(evidence, ThresholdProfile{});
  const auto translated = with_code(judged.verdicts, ReasonCode::kIommuTranslated);
  ASSERT_EQ(translated.size(), 1U);
  EXPECT_EQ(translated[0].subject, "0000:18:00.0");
  EXPECT_EQ(translated[0].status, VerdictStatus::kPass);  // warn by default
  EXPECT_THAT(translated[0].reason, HasSubstr("group 12 is of type DMA-FQ (/sys/kernel/iommu_groups/12/type)"));
  EXPECT_THAT(translated[0].remediation, HasSubstr("iommu=pt"));
  const auto identity = of(judged.verdicts, "0000:9a:00.0");
  ASSERT_EQ(identity.size(), 1U);
  EXPECT_EQ(identity[0].code, ReasonCode::kPathSettingsAsExpected);
  EXPECT_THAT(identity[0].reason, HasSubstr("IOMMU group 40 identity"));

  // Types not read: an explicit request for translation on the command line.
  Evidence cmdline = two_socket_h100();
  cmdline.host.kernel_command_line = "BOOT_IMAGE=/vmlinuz-6.8.0 root=/dev/sda1 intel_iommu=on iommu.passthrough=0";
  judged = judge_path_settings(cmdline, ThresholdProfile{});
  EXPECT_EQ(with_code(judged.verdicts, ReasonCode::kIommuTranslated).size(), 2U);
  // IOMMU on without iommu=pt, types unread: the kernel's default decides,
  // which the evidence does not hold: a note, no verdict.
  cmdline.host.kernel_command_line = "BOOT_IMAGE=/vmlinuz-6.8.0 root=/dev/sda1 intel_iommu=on";
  judged = judge_path_settings(cmdline, ThresholdProfile{});
  EXPECT_TRUE(with_code(judged.verdicts, ReasonCode::kIommuTranslated).empty());
  ASSERT_EQ(judged.notes.size(), 1U);
  EXPECT_THAT(judged.notes[0], HasSubstr("without iommu=pt"));
  cmdline.host.kernel_command_line = "intel_iommu=on iommu=pt";
  EXPECT_TRUE(judge_path_settings(cmdline, ThresholdProfile{}).notes.empty());
}

TEST(PathSettingsRules, UnreadSettingsAreANoteNeverOffAndInconclusiveWhenPeerRoutingWasAsked) {
  Evidence evidence = hgx_a100(kAcsLinuxDefault);
  unread_settings(evidence);
  RuleJudgement judged = judge_path_settings(evidence, ThresholdProfile{});
  EXPECT_TRUE(judged.verdicts.empty());
  ASSERT_EQ(judged.notes.size(), 1U);
  EXPECT_THAT(judged.notes[0], HasSubstr("path settings not read on 8 GPUs"));
  EXPECT_THAT(judged.notes[0], HasSubstr("needs root"));

  // A peer probe the run skipped asked nothing.
  evidence.probes.push_back(ProbeRun{"p2p_write_ce", ProbeStatus::kSkipped, "runs with --p2p only", {}, 0, {}, false});
  EXPECT_FALSE(peer_routing_asked(evidence));
  EXPECT_TRUE(judge_path_settings(evidence, ThresholdProfile{}).verdicts.empty());
  evidence.probes.clear();

  live_p2p_run(evidence);
  EXPECT_TRUE(peer_routing_asked(evidence));
  judged = judge_path_settings(evidence, ThresholdProfile{});
  ASSERT_EQ(judged.verdicts.size(), 8U);
  for (const Verdict& v : judged.verdicts) {
    EXPECT_EQ(v.code, ReasonCode::kPathSettingsNotRead);
    EXPECT_EQ(v.status, VerdictStatus::kInconclusive);
    EXPECT_THAT(v.reason, HasSubstr("needs root"));
    EXPECT_THAT(v.remediation, HasSubstr("sudo"));
  }
  EXPECT_TRUE(judged.notes.empty());
}

TEST(PathSettingsRules, AnUnreadAcsCapabilityOnTheRouteIsNoPass) {
  Evidence evidence = hgx_a100(0);
  // lspci without the extended config space: DevCtl read, ACS not.
  settings(evidence.devices[0].path[0].upstream_end).acs = make_error("extended config space not readable");
  const RuleJudgement judged = judge_path_settings(evidence, ThresholdProfile{});
  EXPECT_TRUE(of(judged.verdicts, "0000:03:00.0").empty());
  EXPECT_TRUE(of(judged.verdicts, "0000:04:00.0").empty());  // its peer's route crosses that port too
  EXPECT_EQ(with_code(judged.verdicts, ReasonCode::kPathSettingsAsExpected).size(), 6U);
  ASSERT_EQ(judged.notes.size(), 1U);
  EXPECT_THAT(judged.notes[0], HasSubstr("on 2 GPUs"));
  EXPECT_THAT(judged.notes[0], HasSubstr("0000:02:00.0: its ACS capability was not read"));
}

TEST(PathSettingsRules, ASmallMaxReadRequestIsReportedNotJudged) {
  Evidence evidence = two_socket_h100();
  settings(evidence.devices[0].path[0].downstream_end).max_read_request_bytes = 128;
  const RuleJudgement judged = judge_path_settings(evidence, ThresholdProfile{});
  const auto gpu = of(judged.verdicts, "0000:18:00.0");
  ASSERT_EQ(gpu.size(), 1U);
  EXPECT_EQ(gpu[0].code, ReasonCode::kPathSettingsAsExpected);
  EXPECT_THAT(gpu[0].reason, HasSubstr("(DevCtl: MaxReadReq 128 bytes)"));
  EXPECT_THAT(of(judged.verdicts, "0000:9a:00.0")[0].reason, Not(HasSubstr("MaxReadReq")));
}

TEST(PathSettingsRules, ARedirectBelowTheMeetingSwitchIsNotOnThePairsRoute) {
  // Two levels of PLX switch (the DGX-2 class tree of the fixture machines):
  // GPU A behind a second-level switch (upstream port 0000:05:00.0 on the
  // first level's downstream port 0000:04:08.0), GPU B on the first level's
  // 0000:04:10.0. Their traffic meets in the first-level switch: only its
  // downstream ports 0000:04:08.0 and 0000:04:10.0 can redirect it. A
  // redirect on 0000:06:00.0, above A inside the second-level switch, sends
  // A's requests to its upstream port, where they go anyway.
  const LinkState gen3x16{PcieGen::kGen3, 16};
  const Port plain{256, 256, 512, AspmControl::kDisabled, 0};
  const Port redirecting{256, 256, 512, AspmControl::kDisabled, kAcsLinuxDefault};
  const Port root{256, 256, 512, AspmControl::kDisabled, kAcsLinuxDefault};
  const Port card{256, 256, 512, AspmControl::kDisabled, std::nullopt};
  Evidence evidence;
  evidence.devices.push_back(
      gpu("0000:07:00.0", 0x1db5,
          {hop("0000:07:00.0", card, "0000:06:00.0", redirecting, gen3x16, LinkPosition::kDeviceLink),
           hop("0000:05:00.0", card, "0000:04:08.0", plain, gen3x16, LinkPosition::kUplink),
           hop("0000:03:00.0", card, "0000:00:02.0", root, gen3x16, LinkPosition::kUplink)}));
  evidence.devices.push_back(gpu("0000:08:00.0", 0x1db5,
                                 {hop("0000:08:00.0", card, "0000:04:10.0", plain, gen3x16, LinkPosition::kDeviceLink),
                                  hop("0000:03:00.0", card, "0000:00:02.0", root, gen3x16, LinkPosition::kUplink)}));
  const PairRoute route = route_between(evidence.devices[0], evidence.devices[1]);
  ASSERT_EQ(route.route, PeerRoute::kInsideSwitch);
  EXPECT_EQ(to_string(*route.meeting_port), "0000:03:00.0");
  EXPECT_EQ(to_string(route.below_first.back().upstream), "0000:04:08.0");
  RuleJudgement judged = judge_path_settings(evidence, ThresholdProfile{});
  EXPECT_TRUE(with_code(judged.verdicts, ReasonCode::kAcsRedirectsPeerTraffic).empty());
  EXPECT_EQ(with_code(judged.verdicts, ReasonCode::kPathSettingsAsExpected).size(), 2U);
  // The first level's port on A's side redirects: both GPUs are told.
  settings(evidence.devices[0].path[1].upstream_end).acs =
      std::optional<AcsRegisters>(AcsRegisters{kAcsCapability, kAcsLinuxDefault});
  judged = judge_path_settings(evidence, ThresholdProfile{});
  const auto acs = with_code(judged.verdicts, ReasonCode::kAcsRedirectsPeerTraffic);
  ASSERT_EQ(acs.size(), 2U);
  ASSERT_TRUE(acs[0].link);
  EXPECT_EQ(to_string(acs[0].link->downstream), "0000:05:00.0");  // the hop whose upstream end it is
  EXPECT_THAT(acs[0].reason, HasSubstr("0000:04:08.0 (above this GPU;"));
  EXPECT_THAT(acs[0].reason, Not(HasSubstr("0000:06:00.0")));
}

TEST(PathSettingsRules, RouteBetweenGpus) {
  const Evidence hgx = hgx_a100(0);
  const PairRoute same_switch = route_between(hgx.devices[0], hgx.devices[1]);
  EXPECT_EQ(same_switch.route, PeerRoute::kInsideSwitch);
  ASSERT_TRUE(same_switch.meeting_port);
  EXPECT_EQ(to_string(*same_switch.meeting_port), "0000:01:00.0");
  ASSERT_EQ(same_switch.below_first.size(), 1U);
  EXPECT_EQ(to_string(same_switch.below_second.back().upstream), "0000:02:08.0");
  EXPECT_EQ(route_between(hgx.devices[0], hgx.devices[2]).route, PeerRoute::kAcrossRootComplex);
  EXPECT_EQ(route_between(hgx.devices[0], hgx.devices[7]).route, PeerRoute::kAcrossRootComplex);
  DeviceRecord pathless = hgx.devices[1];
  pathless.path.clear();
  EXPECT_EQ(route_between(hgx.devices[0], pathless).route, PeerRoute::kUnknown);
}

// Budgets (validate/budget.hpp) with the payload programmed on the path.

TEST(PathSettingsBudget, TheBudgetUsesTheSmallestProgrammedPayload) {
  Evidence at128 = two_socket_h100();
  settings(at128.devices[0].path[0].upstream_end).max_payload_bytes = 128;
  ASSERT_EQ(programmed_payload_bytes(at128.devices[0].path), 128);
  const auto low = gpu_path_budget(at128, bdf("0000:18:00.0"), Direction::kHostToDevice);
  ASSERT_TRUE(low.ok()) << low.error().message;
  // Gen5 x16 reads at 128 bytes: 63.015 x 128/148 (PCIE-FACTS 2.5: 0.8649).
  EXPECT_NEAR(low->budget_gbps, 54.50, 0.01);
  EXPECT_EQ(low->note, "max payload 128 bytes, as programmed on the path");
  const auto full = gpu_path_budget(at128, bdf("0000:9a:00.0"), Direction::kHostToDevice);
  ASSERT_TRUE(full.ok());
  EXPECT_NEAR(full->budget_gbps, 58.45, 0.01);

  // Not read: 256 bytes as before, and no note.
  Evidence unread = two_socket_h100();
  unread_settings(unread);
  EXPECT_FALSE(programmed_payload_bytes(unread.devices[0].path));
  const auto assumed = gpu_path_budget(unread, bdf("0000:18:00.0"), Direction::kDeviceToHost);
  ASSERT_TRUE(assumed.ok());
  EXPECT_NEAR(assumed->budget_gbps, 57.61, 0.01);
  EXPECT_EQ(assumed->note, "");
}

Measurement h2d(const std::string& gpu, std::vector<double> trials) {
  Measurement m;
  m.probe = "h2d_ce";
  m.subject = gpu;
  m.gpus = {bdf(gpu)};
  m.direction = Direction::kHostToDevice;
  m.trials_gbps = std::move(trials);
  m.stats = summarize_trials(m.trials_gbps);
  m.size_bytes = m.bytes_per_trial = 256u << 20;
  m.host_numa_node = 0;
  m.host_numa_local = true;
  m.verified = true;
  return m;
}

TEST(PathSettingsBudget, ACopyJudgedAgainstTheProgrammedPayloadSaysSo) {
  // 46 GB/s h2d on Gen5 x16: 79% of the 256-byte budget (the warning band),
  // 84% of the 128-byte one the path is programmed with.
  Evidence evidence = two_socket_h100();
  for (PortLinkReading* end : ends_of(evidence.devices[0])) settings(*end).max_payload_bytes = 128;
  evidence.measurements = {h2d("0000:18:00.0", {46.0, 46.1, 45.9})};
  const auto verdicts = judge_bandwidth(evidence, ThresholdProfile{});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kBandwidthAtBudget) << verdicts[0].reason;
  EXPECT_THAT(verdicts[0].reason, HasSubstr("the Gen5 x16 budget 54.5 GB/s (max payload 128 bytes, as programmed on "
                                            "the path)"));
  unread_settings(evidence);
  const auto before = judge_bandwidth(evidence, ThresholdProfile{});
  ASSERT_EQ(before.size(), 1U);
  EXPECT_EQ(before[0].code, ReasonCode::kBandwidthInWarningBand);
  EXPECT_THAT(before[0].reason, HasSubstr("the Gen5 x16 budget 58.4 GB/s, in the warning band"));
}

TEST(PathSettingsBudget, ASharedUplinkIsHeldToTheProgrammedPayloadToo) {
  // group_ce of the two A100s behind one PEX88096 of the HGX: 21 GB/s d2h
  // in all is 79% of the Gen4 x16 uplink's write budget at 128 bytes (26.5
  // GB/s), 73% of it at 256 (28.8 GB/s).
  Evidence evidence = hgx_a100(0);
  for (int i : {0, 1}) {
    for (PortLinkReading* end : ends_of(evidence.devices[i])) settings(*end).max_payload_bytes = 128;
  }
  Measurement group;
  group.probe = "group_ce";
  group.subject = "port 0000:01:00.0";
  group.gpus = {bdf("0000:03:00.0"), bdf("0000:04:00.0")};
  group.direction = Direction::kDeviceToHost;
  group.aggregation = Aggregation::kTotalOverWallTime;
  group.trials_gbps = {21.0, 21.1, 20.9};
  group.stats = summarize_trials(group.trials_gbps);
  group.verified = true;
  evidence.measurements = {group};
  auto verdicts = judge_bandwidth(evidence, ThresholdProfile{});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kBandwidthInWarningBand) << verdicts[0].reason;
  EXPECT_THAT(verdicts[0].reason, HasSubstr("uplink's budget 26.5 GB/s"));
  unread_settings(evidence);
  verdicts = judge_bandwidth(evidence, ThresholdProfile{});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kBandwidthBelowBudget) << verdicts[0].reason;
}

TEST(PathSettingsJudgeAll, EvidenceWithoutSettingsKeepsItsVerdicts) {
  Evidence evidence = hgx_a100(kAcsLinuxDefault);
  unread_settings(evidence);
  const auto verdicts = judge_all(evidence, ThresholdProfile{}, {});
  ASSERT_EQ(verdicts.size(), 8U);
  for (const Verdict& v : verdicts) EXPECT_EQ(v.code, ReasonCode::kLinkAtExpectedState) << v.reason;
  const auto notes = unjudged_notes(evidence, ThresholdProfile{});
  ASSERT_EQ(notes.size(), 1U);
  EXPECT_THAT(notes[0], HasSubstr("needs root"));
  // Read: the same links, and the ACS finding on top.
  const auto read = judge_all(hgx_a100(kAcsLinuxDefault), ThresholdProfile{}, {});
  EXPECT_EQ(read.size(), 16U);
  EXPECT_EQ(overall_of(read), Overall::kFail);
  EXPECT_THAT(summarize(read, evidence), HasSubstr("misconfigured (acs_redirects_peer_traffic"));
}

}  // namespace pcieval::path_settings_test
