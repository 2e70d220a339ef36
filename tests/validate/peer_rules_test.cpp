// The peer rules (issue 28): each GPU pair's copies against its own route's
// budget, pairs that cross the root complex by design, NVLink pairs, peer
// access, and peer access slower than the host-staged copy. Machines from
// tests/validate/peer_machines.hpp; rates from the sources each case names.
#include "validate/peer_rules.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "peer_machines.hpp"
#include "validate/judge.hpp"

namespace pcieval::peer_rules_test {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace peer_machines;

std::vector<Verdict> with_code(const std::vector<Verdict>& verdicts, ReasonCode code) {
  std::vector<Verdict> found;
  for (const Verdict& v : verdicts) {
    if (v.code == code) found.push_back(v);
  }
  return found;
}

std::string all_notes(const RuleJudgement& judged) {
  std::string text;
  for (const std::string& note : judged.notes) text += note + "\n";
  return text;
}

TEST(PeerRules, APairInsideAPlxSwitchIsHeldToItsOwnRoute) {
  // Two P100 (Gen3 x16) behind a PEX8747, ACS clear: peer writes across the
  // switch near the Gen3 x16 write budget (14.4 GB/s, PCIE-FACTS 2.6).
  Evidence evidence = plx_p100(0);
  live_p2p_run(evidence);
  evidence.measurements = {peer_copy("p2p_write_ce", "0000:04:00.0", "0000:05:00.0", {12.8, 12.9, 12.8}),
                           peer_copy("p2p_read_ce", "0000:05:00.0", "0000:04:00.0", {12.1, 12.2, 12.1})};
  const RuleJudgement judged = judge_peers(evidence, ThresholdProfile{});
  ASSERT_EQ(judged.verdicts.size(), 2U);
  const Verdict& write = judged.verdicts[0];
  EXPECT_EQ(write.subject, "0000:04:00.0->0000:05:00.0");
  EXPECT_EQ(write.code, ReasonCode::kPeerBandwidthAtBudget);
  EXPECT_EQ(write.status, VerdictStatus::kPass);
  EXPECT_THAT(write.reason, HasSubstr("89% of the Gen3 x16 write budget 14.4 GB/s of the narrowest link between "
                                      "them inside switch 0000:02:00.0 (max payload 256 bytes, as programmed"));
  EXPECT_THAT(judged.verdicts[1].reason, HasSubstr("Gen3 x16 read budget 14.6 GB/s"));
  EXPECT_EQ(judged.verdicts[1].code, ReasonCode::kPeerBandwidthAtBudget);
}

TEST(PeerRules, ALowPairBehindAcsRedirectNamesThePort) {
  Evidence evidence = plx_p100(kAcsLinuxDefault);
  live_p2p_run(evidence);
  evidence.measurements = {peer_copy("p2p_write_ce", "0000:04:00.0", "0000:05:00.0", {6.0, 5.9, 6.1})};
  const RuleJudgement judged = judge_peers(evidence, ThresholdProfile{});
  ASSERT_EQ(judged.verdicts.size(), 1U);
  const Verdict& v = judged.verdicts[0];
  EXPECT_EQ(v.code, ReasonCode::kPeerBandwidthBelowBudget);
  EXPECT_EQ(v.status, VerdictStatus::kBandwidthLow);
  ASSERT_TRUE(v.link);
  EXPECT_THAT(v.reason, HasSubstr("below the 75% floor"));
  EXPECT_THAT(v.reason, HasSubstr("ACS redirect on 0000:03:08.0 (ACSCtl: SrcValid+ TransBlk- ReqRedir+ CmpltRedir+"));
  EXPECT_THAT(v.reason, HasSubstr("0000:03:10.0 (ACSCtl:"));
  EXPECT_THAT(v.remediation, HasSubstr("setpci -s 0000:03:08.0 ECAP_ACS+0x6.w=0000"));
}

TEST(PeerRules, PerProbeFloorsForPeerKeysApply) {
  Evidence evidence = plx_p100(0);
  live_p2p_run(evidence);
  evidence.measurements = {peer_copy("p2p_write_ce", "0000:04:00.0", "0000:05:00.0", {12.8, 12.9, 12.8})};
  ThresholdProfile profile;
  profile.defaults.per_probe.push_back(ProbeThresholds{"p2p_write_ce", Direction::kDeviceToDevice, 0.95, 0.97});
  const auto verdicts = judge_peers(evidence, profile).verdicts;
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kPeerBandwidthBelowBudget);
}

TEST(PeerRules, CrossRootPairsAreReportedNotJudgedUnlessTheProfileSetsAFloor) {
  // Two-socket Sapphire Rapids node: H100 PCIe under a root port of each
  // socket; their peer traffic crosses the inter-socket link by design.
  Evidence evidence = two_socket_h100();
  live_p2p_run(evidence);
  evidence.measurements = {peer_copy("p2p_write_ce", "0000:18:00.0", "0000:9a:00.0", {21.0, 21.2, 20.9})};
  RuleJudgement judged = judge_peers(evidence, ThresholdProfile{});
  EXPECT_THAT(judged.verdicts, IsEmpty());
  EXPECT_THAT(all_notes(judged), HasSubstr("cross the root complex by design"));
  EXPECT_THAT(all_notes(judged), HasSubstr("0000:18:00.0->0000:9a:00.0 p2p_write_ce 21.0 GB/s"));
  // Never inconclusive because of it: with the links and settings judged,
  // the node passes.
  const auto all = judge_all(evidence, ThresholdProfile{}, {});
  EXPECT_EQ(overall_of(all), Overall::kPass);

  ThresholdProfile profile;
  profile.defaults.path_settings.cross_root_peer_floor_gbps = 25.0;
  judged = judge_peers(evidence, profile);
  ASSERT_EQ(judged.verdicts.size(), 1U);
  EXPECT_EQ(judged.verdicts[0].code, ReasonCode::kPeerBandwidthBelowFloor);
  EXPECT_EQ(judged.verdicts[0].status, VerdictStatus::kBandwidthLow);
  EXPECT_THAT(judged.verdicts[0].reason, HasSubstr("0000:17:01.0, 0000:99:01.0"));
  profile.defaults.path_settings.cross_root_peer_floor_gbps = 15.0;
  judged = judge_peers(evidence, profile);
  ASSERT_EQ(judged.verdicts.size(), 1U);
  EXPECT_EQ(judged.verdicts[0].code, ReasonCode::kPeerBandwidthAtBudget);
  EXPECT_EQ(judged.verdicts[0].status, VerdictStatus::kPass);
}

TEST(PeerRules, NvlinkPairsAreNotJudgedAgainstPcie) {
  // nvbandwidth's README capture: ~276 GB/s device to device on an HGX
  // A100's NVSwitch fabric, between GPUs that also share a PEX88096.
  Evidence evidence = hgx_a100(0);
  live_p2p_run(evidence);
  evidence.measurements = {peer_copy("p2p_write_ce", "0000:03:00.0", "0000:04:00.0", {276.3, 276.1, 276.4}),
                           peer_copy("p2p_write_ce", "0000:03:00.0", "0000:23:00.0", {275.9, 276.0, 276.2})};
  const RuleJudgement judged = judge_peers(evidence, ThresholdProfile{});
  EXPECT_THAT(judged.verdicts, IsEmpty());
  EXPECT_THAT(all_notes(judged), HasSubstr("NVLink"));
  EXPECT_THAT(all_notes(judged), HasSubstr("0000:03:00.0->0000:23:00.0 p2p_write_ce 276.0 GB/s"));
  EXPECT_NE(overall_of(judge_all(evidence, ThresholdProfile{}, {})), Overall::kFail);
}

TEST(PeerRules, PeerAccessUnavailableInsideASwitchIsMisconfiguredElsewhereANote) {
  Evidence evidence = plx_p100(kAcsLinuxDefault);
  evidence.peer_status = {
      PeerStatus{bdf("0000:04:00.0"), bdf("0000:05:00.0"), PeerCapability::kRead, "chipset_not_supported", "nvml"},
      PeerStatus{bdf("0000:05:00.0"), bdf("0000:04:00.0"), PeerCapability::kWrite, "chipset_not_supported", "nvml"}};
  RuleJudgement judged = judge_peers(evidence, ThresholdProfile{});
  ASSERT_EQ(judged.verdicts.size(), 1U);
  const Verdict& v = judged.verdicts[0];
  EXPECT_EQ(v.code, ReasonCode::kPeerAccessUnavailable);
  EXPECT_EQ(v.status, VerdictStatus::kMisconfigured);
  EXPECT_EQ(v.subject, "0000:04:00.0->0000:05:00.0");
  EXPECT_THAT(v.reason, HasSubstr("share switch 0000:02:00.0"));
  EXPECT_THAT(v.reason, HasSubstr("read: chipset_not_supported (nvml), write: chipset_not_supported (nvml)"));
  EXPECT_THAT(v.reason, HasSubstr("ACS redirects peer traffic on 0000:03:08.0"));

  // Measured anyway: the copies are judged, the status is not repeated.
  evidence.measurements = {peer_copy("p2p_write_ce", "0000:04:00.0", "0000:05:00.0", {12.8, 12.9, 12.8})};
  EXPECT_THAT(with_code(judge_peers(evidence, ThresholdProfile{}).verdicts, ReasonCode::kPeerAccessUnavailable),
              IsEmpty());

  Evidence sockets = two_socket_h100();
  sockets.peer_status = {
      PeerStatus{bdf("0000:18:00.0"), bdf("0000:9a:00.0"), PeerCapability::kRead, "chipset_not_supported", "nvml"}};
  judged = judge_peers(sockets, ThresholdProfile{});
  EXPECT_THAT(judged.verdicts, IsEmpty());
  EXPECT_THAT(all_notes(judged), HasSubstr("peer access unavailable between GPUs that do not share a switch"));
}

// NVIDIA/nccl#814, a 6-GPU box: p2pBandwidthLatencyTest wrote 9.64-10.23
// GB/s with peer access and 20.10-22.40 GB/s with it off. The capture has no
// lspci: the pairs have no route in the evidence.
Evidence nccl_814_capture() {
  Evidence evidence;
  const std::vector<std::string> gpus = {"0000:1b:00.0", "0000:1e:00.0", "0000:3d:00.0"};
  evidence.measurements = {
      peer_copy("p2p_write_ce", gpus[0], gpus[1], {9.90}),  peer_copy("p2p_staged_ce", gpus[0], gpus[1], {20.10}),
      peer_copy("p2p_write_ce", gpus[2], gpus[0], {10.01}), peer_copy("p2p_staged_ce", gpus[2], gpus[0], {22.18}),
      peer_copy("p2p_write_ce", gpus[1], gpus[2], {22.50}), peer_copy("p2p_staged_ce", gpus[1], gpus[2], {22.26}),
  };
  return evidence;
}

TEST(PeerRules, PeerCopiesSlowerThanTheHostStagedCopyAreMisconfiguredWithoutAnyLink) {
  const Evidence evidence = nccl_814_capture();
  const RuleJudgement judged = judge_peers(evidence, ThresholdProfile{});
  const auto slower = with_code(judged.verdicts, ReasonCode::kPeerSlowerThanHostStaged);
  ASSERT_EQ(slower.size(), 2U);
  EXPECT_EQ(slower[0].subject, "0000:1b:00.0->0000:1e:00.0");
  EXPECT_EQ(slower[0].status, VerdictStatus::kMisconfigured);
  EXPECT_THAT(slower[0].reason, HasSubstr("9.9 GB/s with peer access is slower than the same copy staged through host "
                                          "memory (p2p_staged_ce 20.1 GB/s"));
  EXPECT_THAT(slower[0].remediation, HasSubstr("ACSCtl"));
  EXPECT_EQ(slower[1].subject, "0000:3d:00.0->0000:1b:00.0");
  // Without a link, the numbers themselves are not held to a budget: one
  // inconclusive for the node, never a pass.
  const auto no_link = with_code(judged.verdicts, ReasonCode::kNoLinkToJudgeAgainst);
  ASSERT_EQ(no_link.size(), 1U);
  EXPECT_EQ(no_link[0].subject, "node");
  EXPECT_EQ(overall_of(judge_all(evidence, ThresholdProfile{}, {})), Overall::kFail);
}

TEST(PeerRules, WithAStatedLinkCapturedPeerCopiesAreHeldToIt) {
  Evidence evidence = nccl_814_capture();
  evidence.stated_link = StatedLink{LinkState{PcieGen::kGen4, 16}, "--link gen4x16"};
  const RuleJudgement judged = judge_peers(evidence, ThresholdProfile{});
  EXPECT_EQ(with_code(judged.verdicts, ReasonCode::kPeerSlowerThanHostStaged).size(), 2U);
  const auto low = with_code(judged.verdicts, ReasonCode::kPeerBandwidthBelowBudget);
  ASSERT_EQ(low.size(), 2U);
  EXPECT_THAT(low[0].reason, HasSubstr("of the stated Gen4 x16 link's write budget 28.8 GB/s (--link)"));
  // 22.5 of 28.8 is 78%: a pass in the warning band; no trial rule for a capture.
  const auto warn = with_code(judged.verdicts, ReasonCode::kBandwidthInWarningBand);
  ASSERT_EQ(warn.size(), 1U);
  EXPECT_EQ(warn[0].subject, "0000:1e:00.0->0000:3d:00.0");
  EXPECT_THAT(with_code(judged.verdicts, ReasonCode::kNoLinkToJudgeAgainst), IsEmpty());

  // The nvbandwidth README's NVLink pair with --link: noted, never failed.
  Evidence nvlink;
  nvlink.stated_link = evidence.stated_link;
  nvlink.measurements = {peer_copy("p2p_write_ce", "0000:07:00.0", "0000:0f:00.0", {276.2})};
  const RuleJudgement fast = judge_peers(nvlink, ThresholdProfile{});
  EXPECT_THAT(fast.verdicts, IsEmpty());
  EXPECT_THAT(all_notes(fast), HasSubstr("NVLink"));
}

// The shared corpus's ASUS ESC8000A-E12 with four RTX 6000 Ada on EPYC root
// ports of their own (bw_esc8000a_e12_rtx6000ada_bandwidthTest_p2p.txt):
// p2pBandwidthLatencyTest wrote 26.32-26.33 GB/s with peer access and
// 22.10-22.38 without. A healthy capture: faster than staged, and normal for
// the Gen4 x16 links stated.
TEST(PeerRules, AHealthyCaptureFasterThanStagedPassesWithItsLink) {
  Evidence evidence;
  evidence.stated_link = StatedLink{LinkState{PcieGen::kGen4, 16}, "--link gen4x16"};
  evidence.measurements = {
      peer_copy("p2p_write_ce", "0000:01:00.0", "0000:41:00.0", {26.33}),
      peer_copy("p2p_staged_ce", "0000:01:00.0", "0000:41:00.0", {22.23}),
      peer_copy("p2p_write_ce", "0000:c1:00.0", "0000:e1:00.0", {26.32}),
      peer_copy("p2p_staged_ce", "0000:c1:00.0", "0000:e1:00.0", {22.10}),
  };
  const RuleJudgement judged = judge_peers(evidence, ThresholdProfile{});
  ASSERT_EQ(judged.verdicts.size(), 2U);
  for (const Verdict& v : judged.verdicts) {
    EXPECT_EQ(v.code, ReasonCode::kPeerBandwidthAtBudget) << v.reason;
    EXPECT_THAT(v.reason, HasSubstr("is 91% of the stated Gen4 x16 link's write budget 28.8 GB/s"));
  }
  EXPECT_EQ(overall_of(judge_all(evidence, ThresholdProfile{}, {})), Overall::kPass);
}

TEST(PeerRules, ALiveRunNamesTheAcsPortBehindASlowerThanStagedPair) {
  Evidence evidence = plx_p100(kAcsLinuxDefault);
  live_p2p_run(evidence);
  evidence.measurements = {
      peer_copy("p2p_write_ce", "0000:04:00.0", "0000:05:00.0", {6.0, 6.1, 5.9}),
      peer_copy("p2p_staged_ce", "0000:04:00.0", "0000:05:00.0", {10.4, 10.5, 10.6}),
  };
  const auto slower =
      with_code(judge_peers(evidence, ThresholdProfile{}).verdicts, ReasonCode::kPeerSlowerThanHostStaged);
  ASSERT_EQ(slower.size(), 1U);
  EXPECT_THAT(slower[0].reason, HasSubstr("ACS redirects it on 0000:03:08.0"));
}

TEST(PeerRules, TheStagedComparisonIsOfTheSameAggregation) {
  Evidence evidence = nccl_814_capture();
  evidence.measurements = {
      peer_copy("p2p_write_ce", "0000:1b:00.0", "0000:1e:00.0", {9.0}, Aggregation::kWithReverse),
      peer_copy("p2p_staged_ce", "0000:1b:00.0", "0000:1e:00.0", {8.5}),
  };
  EXPECT_THAT(with_code(judge_peers(evidence, ThresholdProfile{}).verdicts, ReasonCode::kPeerSlowerThanHostStaged),
              IsEmpty());
  evidence.measurements.push_back(
      peer_copy("p2p_staged_ce", "0000:1e:00.0", "0000:1b:00.0", {12.0}, Aggregation::kWithReverse));
  const auto slower =
      with_code(judge_peers(evidence, ThresholdProfile{}).verdicts, ReasonCode::kPeerSlowerThanHostStaged);
  ASSERT_EQ(slower.size(), 1U);
  EXPECT_THAT(slower[0].reason, HasSubstr("both with the reverse copy running"));
}

TEST(PeerRules, NoisyUnverifiedAndSmCopies) {
  Evidence evidence = plx_p100(0);
  live_p2p_run(evidence);
  Measurement unverified = peer_copy("p2p_read_ce", "0000:05:00.0", "0000:04:00.0", {12.0, 12.1, 12.0});
  unverified.verified = false;
  evidence.measurements = {
      peer_copy("p2p_write_ce", "0000:04:00.0", "0000:05:00.0", {12.8, 12.9}),
      unverified,
      peer_copy("p2p_write_sm", "0000:04:00.0", "0000:05:00.0", {3.0, 3.1, 3.0}),
  };
  const RuleJudgement judged = judge_peers(evidence, ThresholdProfile{});
  ASSERT_EQ(judged.verdicts.size(), 2U);
  EXPECT_EQ(judged.verdicts[0].code, ReasonCode::kBandwidthTooNoisy);
  EXPECT_EQ(judged.verdicts[0].status, VerdictStatus::kInconclusive);
  EXPECT_EQ(judged.verdicts[1].code, ReasonCode::kProbeFailed);
  EXPECT_THAT(all_notes(judged), HasSubstr("SM-kernel peer copies recorded, not judged"));
}

TEST(PeerRules, AnUnknownRouteInALiveRunIsANote) {
  Evidence evidence = plx_p100(0);
  live_p2p_run(evidence);
  evidence.devices[1].path.clear();
  evidence.measurements = {peer_copy("p2p_write_ce", "0000:04:00.0", "0000:05:00.0", {12.8, 12.9, 12.8})};
  const RuleJudgement judged = judge_peers(evidence, ThresholdProfile{});
  EXPECT_THAT(judged.verdicts, IsEmpty());
  EXPECT_THAT(all_notes(judged), HasSubstr("route the evidence does not give"));
}

}  // namespace pcieval::peer_rules_test
