// What partial, single-device and virtual evidence can prove (DESIGN.md, "A
// verdict says exactly what its evidence proves"): each case is the shape of a
// real capture, built by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "validate/bandwidth_rules.hpp"
#include "validate/expectation.hpp"
#include "validate/judge.hpp"
#include "validate/link_rules.hpp"

namespace pcieval {
namespace {

PciAddress bdf(const char* text) { return *parse_pci_address(text); }

PortLinkReading port(int max_gen, int max_width, int cur_gen, int cur_width) {
  return PortLinkReading::known(LinkState{gen_from_number(max_gen).value(), max_width},
                                LinkState{gen_from_number(cur_gen).value(), cur_width});
}

DeviceRecord gpu_alone(const char* address, std::optional<PortLinkReading> link) {
  DeviceRecord gpu;
  gpu.function.bdf = bdf(address);
  gpu.function.vendor_id = 0x10de;
  gpu.function.device_id = 0x2335;  // H200
  gpu.function.class_code = 0x030200;
  gpu.function.kind = DeviceKind::kGpu;
  gpu.function.link = link;
  return gpu;
}

// What `nvidia-smi -q` alone says of a GPU (diagnose builds the record the
// same way: its own link from Max/Current, the NVML fields beside it).
DeviceRecord smi_gpu(int max_gen, int max_width, int cur_gen, int cur_width, int pstate, int util) {
  DeviceRecord gpu = gpu_alone("0000:01:00.0", port(max_gen, max_width, cur_gen, cur_width));
  NvmlGpuLink nvml;
  nvml.max_gen = max_gen;
  nvml.gpu_max_gen = max_gen;
  nvml.max_width = max_width;
  nvml.current_gen = cur_gen;
  nvml.current_width = cur_width;
  nvml.pstate = pstate;
  nvml.utilization_gpu_percent = util;
  gpu.nvml = nvml;
  return gpu;
}

// A GPU passed through to a QEMU/KVM guest (q35): directly under one
// emulated root port at 00:02.0, whose own link registers say `port_end`.
DeviceRecord guest_gpu(PortLinkReading gpu_end, PortLinkReading port_end, PciId port_id) {
  DeviceRecord gpu = gpu_alone("0000:01:00.0", gpu_end);
  Link link;
  link.downstream = gpu.function.bdf;
  link.upstream = bdf("0000:00:02.0");
  link.downstream_end = gpu_end;
  link.upstream_end = port_end;
  link.upstream_id = port_id;
  gpu.path = {link};
  return gpu;
}

constexpr PciId kQemuRootPort{0x1b36, 0x000c};
constexpr PciId kIoh3420{0x8086, 0x3420};

Evidence evidence_of(std::vector<DeviceRecord> devices, std::optional<bool> hypervisor = std::nullopt) {
  Evidence evidence;
  evidence.devices = std::move(devices);
  evidence.host.hypervisor = hypervisor;
  return evidence;
}

// The GPU's own port read under load, as the sampler or a busy capture gives it.
void load(Evidence& evidence, int gen, int width) {
  LinkSample sample;
  sample.port = bdf("0000:01:00.0");
  sample.under_load = true;
  sample.speed = gen_from_number(gen).value();
  sample.width = width;
  evidence.link_samples.push_back(sample);
}

Verdict only_verdict(const Evidence& evidence, ExpectationOptions options = {}) {
  LinkRuleOptions rules;
  rules.expectation = options;
  const auto verdicts = judge_links(evidence, rules);
  EXPECT_EQ(verdicts.size(), 1U);
  return verdicts.empty() ? Verdict{} : verdicts.front();
}

struct Case {
  const char* name;
  Evidence evidence;
  VerdictStatus status;
  ReasonCode code;
  const char* says;  // a phrase the reason must hold
};

class PartialEvidence : public testing::TestWithParam<Case> {};

TEST_P(PartialEvidence, VerdictSaysWhatTheEvidenceProves) {
  const Case& c = GetParam();
  const Verdict verdict = only_verdict(c.evidence);
  EXPECT_EQ(to_string(verdict.status), to_string(c.status)) << verdict.reason;
  EXPECT_EQ(to_string(verdict.code), to_string(c.code)) << verdict.reason;
  EXPECT_NE(verdict.reason.find(c.says), std::string::npos) << verdict.reason;
}

Evidence loaded(Evidence evidence, int gen, int width) {
  load(evidence, gen, width);
  return evidence;
}

std::vector<Case> captures() {
  return {
      // `lspci -vv -s 01:00.0` of a healthy GPU: its own link at its LnkCap.
      Case{"lspci_s_healthy", evidence_of({gpu_alone("0000:01:00.0", port(5, 16, 5, 16))}), VerdictStatus::kPass,
           ReasonCode::kLinkAtOwnCapability, "the ports above it are not in the evidence and were not judged"},
      // The same paste of a GPU at Gen4 x8 of Gen5 x16: a slot that allows
      // no more, or a downgrade; only the port above can tell.
      Case{"lspci_s_below_capability", loaded(evidence_of({gpu_alone("0000:01:00.0", port(5, 16, 4, 8))}), 4, 8),
           VerdictStatus::kInconclusive, ReasonCode::kLinkPathUnknown,
           "runs Gen4 x8, below the Gen5 x16 it can reach on its own"},
      // A block cut short before LnkCap/LnkSta: never "not judged".
      Case{"gpu_block_cut_short",
           evidence_of({gpu_alone("0000:01:00.0", PortLinkReading::unknown(make_error("lspci block ends early")))}),
           VerdictStatus::kInconclusive, ReasonCode::kLinkStateUnknown, "link registers are not in the evidence"},
      Case{"gpu_without_link", evidence_of({gpu_alone("0000:01:00.0", std::nullopt)}), VerdictStatus::kInconclusive,
           ReasonCode::kLinkStateUnknown, "no LnkCap/LnkSta"},
      // nvidia-smi alone, busy at its Max (an H100 SXM at P0): passes.
      Case{"smi_busy_at_max", loaded(evidence_of({smi_gpu(5, 16, 5, 16, 0, 97)}), 5, 16), VerdictStatus::kPass,
           ReasonCode::kLinkAtOwnCapability, "nvidia-smi/NVML Max, which includes the port above"},
      // Idle at Gen1 of Max Gen4 (an A40 at P8): idle downshift, not judged yet.
      Case{"smi_idle_gen1", evidence_of({smi_gpu(4, 16, 1, 16, 8, 0)}), VerdictStatus::kInconclusive,
           ReasonCode::kGpuLinkSpeedIdle, "idle GPUs lower their link speed"},
      // x8 of Max x16 at P8 (a Tesla T4 or an L4): width does not drop to
      // save power, and Max already folds in the slot: a downgrade.
      Case{"smi_x8_of_x16_idle", evidence_of({smi_gpu(3, 16, 3, 8, 8, 0)}), VerdictStatus::kLinkDowngraded,
           ReasonCode::kLinkWidthBelowExpected, "runs Gen3 x8, expected Gen3 x16"},
      // QEMU's pcie-root-port (16 GT/s x32 by default) above a Gen5 H200.
      Case{"qemu_root_port_healthy",
           evidence_of({guest_gpu(port(5, 16, 5, 16), port(4, 32, 4, 32), kQemuRootPort)}, true), VerdictStatus::kPass,
           ReasonCode::kLinkAtExpectedState,
           "the port above is virtual (QEMU pcie-root-port [1b36:000c]); judged against the device's own Gen5 x16"},
      // The same port, the GPU's own link at Gen4 x16 under load.
      Case{"qemu_root_port_gen4_loaded",
           loaded(evidence_of({guest_gpu(port(5, 16, 4, 16), port(4, 32, 4, 32), kQemuRootPort)}, true), 4, 16),
           VerdictStatus::kLinkDowngraded, ReasonCode::kLinkSpeedBelowExpected, "runs Gen4 x16, expected Gen5 x16"},
      Case{"qemu_root_port_gen4_idle",
           evidence_of({guest_gpu(port(5, 16, 4, 16), port(4, 32, 4, 32), kQemuRootPort)}, true),
           VerdictStatus::kInconclusive, ReasonCode::kGpuLinkSpeedIdle, "idle GPUs lower their link speed"},
      // An older machine type's ioh3420: 2.5 GT/s x1, in a guest.
      Case{"ioh3420_in_guest", evidence_of({guest_gpu(port(5, 16, 5, 16), port(1, 1, 1, 1), kIoh3420)}, true),
           VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState, "QEMU ioh3420 root port [8086:3420]"},
      // 8086:3420 is also a real X58 root port: on bare metal it is judged as read.
      Case{"ioh3420_on_bare_metal", evidence_of({guest_gpu(port(2, 16, 2, 16), port(1, 1, 1, 1), kIoh3420)}, false),
           VerdictStatus::kInconclusive, ReasonCode::kLinkAboveCapability, "above what both ends can do"},
      // A hypervisor whose port IDs nobody listed: in a guest, a port that
      // claims less than the link runs at is not the link's other end.
      Case{"unknown_virtual_port_in_guest",
           evidence_of({guest_gpu(port(5, 16, 5, 16), port(1, 1, 1, 1), PciId{0x1d0f, 0x0001})}, true),
           VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState, "the port above is virtual (the port 0000:00:02.0)"},
      // Issue 29: an emulated port whose link registers do not read (a width
      // of 63) is a broken reading, not an absent one: never a pass.
      Case{"qemu_root_port_reading_63",
           evidence_of({guest_gpu(
                           port(5, 16, 5, 16),
                           [] {
                             PortLinkReading broken = port(4, 32, 4, 32);
                             broken.max_width = make_error("max_link_width: device not responding");
                             return broken;
                           }(),
                           kQemuRootPort)},
                       true),
           VerdictStatus::kInconclusive, ReasonCode::kLinkStateUnknown,
           "the emulated port 0000:00:02.0 has link registers that do not read (max_link_width: device not "
           "responding)"},
      // An emulated bridge with no link registers at all (QEMU's conventional
      // pci-bridge): only the device's end describes the link, as before.
      Case{"qemu_pci_bridge_without_link_registers",
           evidence_of(
               {guest_gpu(port(5, 16, 5, 16), PortLinkReading::without_link("0000:00:02.0"), PciId{0x1b36, 0x0001})},
               true),
           VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState, "QEMU pci-bridge [1b36:0001]"},
      // Hyper-V style: a guest's GPU with no port above it at all.
      Case{"guest_no_port_healthy", evidence_of({gpu_alone("0001:00:00.0", port(5, 16, 5, 16))}, true),
           VerdictStatus::kPass, ReasonCode::kLinkAtOwnCapability, "a virtual machine's device with no port above it"},
      Case{"guest_no_port_x8", evidence_of({gpu_alone("0001:00:00.0", port(5, 16, 5, 8))}, true),
           VerdictStatus::kLinkDowngraded, ReasonCode::kLinkWidthBelowExpected, "runs Gen5 x8, expected Gen5 x16"},
  };
}

INSTANTIATE_TEST_SUITE_P(Captures, PartialEvidence, testing::ValuesIn(captures()),
                         [](const testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(PartialEvidence, TheProfileCanRefuseToAssumeAFullLinkBehindAVirtualPort) {
  const Evidence evidence = evidence_of({guest_gpu(port(5, 16, 5, 16), port(4, 32, 4, 32), kQemuRootPort)}, true);
  ExpectationOptions strict;
  strict.assume_full_link_behind_virtual_port = false;
  const Verdict at_capability = only_verdict(evidence, strict);
  // At its own capability the GPU cannot be below the link: it passes.
  EXPECT_EQ(at_capability.status, VerdictStatus::kPass) << at_capability.reason;
  const Evidence narrow = evidence_of({guest_gpu(port(5, 16, 5, 8), port(4, 32, 4, 32), kQemuRootPort)}, true);
  const Verdict below = only_verdict(narrow, strict);
  EXPECT_EQ(below.status, VerdictStatus::kInconclusive) << below.reason;
  EXPECT_EQ(below.code, ReasonCode::kLinkPathUnknown);
  EXPECT_NE(below.reason.find("assume_full_link_behind_virtual_port: false"), std::string::npos) << below.reason;
  EXPECT_EQ(below.reason.find("firmware"), std::string::npos) << below.reason;
}

TEST(PartialEvidence, VirtualPortIdsThatRealHardwareSharesNeedTheHypervisorFlag) {
  EXPECT_EQ(virtual_port_name(kQemuRootPort, std::nullopt), "QEMU pcie-root-port [1b36:000c]");
  EXPECT_EQ(virtual_port_name(PciId{0x15ad, 0x07a0}, false), "VMware PCI Express Root Port [15ad:07a0]");
  EXPECT_FALSE(virtual_port_name(kIoh3420, std::nullopt));
  EXPECT_FALSE(virtual_port_name(kIoh3420, false));
  EXPECT_EQ(virtual_port_name(kIoh3420, true), "QEMU ioh3420 root port [8086:3420]");
  EXPECT_FALSE(virtual_port_name(PciId{0x8086, 0x347a}, true));  // an Ice Lake root port
}

// --- bandwidth: every measured GPU gets a verdict ---

Measurement copy(const char* probe, Direction direction, double median_gbps) {
  Measurement m;
  m.probe = probe;
  m.subject = "0000:01:00.0";
  m.gpus = {bdf("0000:01:00.0")};
  m.direction = direction;
  m.method = CopyMethod::kCopyEngine;
  m.host_memory = HostMemory::kPinned;
  m.aggregation = Aggregation::kAlone;
  m.size_bytes = 256U << 20U;
  m.trials_gbps = {median_gbps, median_gbps, median_gbps, median_gbps, median_gbps};
  m.stats.median_gbps = median_gbps;
  m.stats.cv = 0.0;
  m.verified = true;  // as the engine writes every copy it reports
  return m;
}

std::vector<Verdict> bandwidth_of(Evidence evidence, double h2d_gbps) {
  evidence.measurements.push_back(copy("h2d_ce", Direction::kHostToDevice, h2d_gbps));
  return judge_bandwidth(evidence, ThresholdProfile{});
}

TEST(PartialEvidence, AMeasuredGpuWithoutABudgetIsInconclusiveNeverSkipped) {
  // lspci -s of one GPU: no port above it, so nothing bounds what it should carry.
  const auto verdicts = bandwidth_of(evidence_of({gpu_alone("0000:01:00.0", port(5, 16, 5, 16))}), 54.0);
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kInconclusive);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kNoLinkBudget);
  EXPECT_NE(verdicts[0].reason.find("the port above it is not in the evidence"), std::string::npos)
      << verdicts[0].reason;
}

TEST(PartialEvidence, AMedianFarAboveItsBudgetMeansTheBudgetIsWrong) {
  // A Gen5 GPU's 55 GB/s against a Gen4 x16 path (26.9 GB/s of reads): 205 %.
  DeviceRecord gpu = guest_gpu(port(4, 16, 4, 16), port(4, 16, 4, 16), PciId{0x8086, 0x347a});
  const auto verdicts = bandwidth_of(evidence_of({gpu}), 55.0);
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kInconclusive);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kBandwidthAboveBudget);
  EXPECT_NE(verdicts[0].reason.find("faster than the evidence says"), std::string::npos) << verdicts[0].reason;
}

TEST(PartialEvidence, AGpuUnderAQemuPortIsBudgetedFromItsOwnLink) {
  // An H200 in a KVM guest: 55 GB/s h2d is normal for Gen5 x16, while the
  // emulated port's Gen4 x32 would have made it "above budget".
  const auto verdicts =
      bandwidth_of(evidence_of({guest_gpu(port(5, 16, 5, 16), port(4, 32, 4, 32), kQemuRootPort)}, true), 55.0);
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kPass) << verdicts[0].reason;
  EXPECT_NE(verdicts[0].reason.find("Gen5 x16 budget"), std::string::npos) << verdicts[0].reason;
  EXPECT_NE(verdicts[0].reason.find("the port above is virtual"), std::string::npos) << verdicts[0].reason;
}

// --- a pass needs judged evidence ---

TEST(PartialEvidence, NothingToJudgeIsInconclusive) {
  for (const Evidence& evidence : {Evidence{}, evidence_of({[] {
                                     DeviceRecord usb;  // an integrated controller: no link at all
                                     usb.function.bdf = *parse_pci_address("0000:00:14.0");
                                     usb.function.class_code = 0x0c0330;
                                     return usb;
                                   }()})}) {
    const auto verdicts = judge_all(evidence, ThresholdProfile{}, {});
    ASSERT_EQ(verdicts.size(), 1U);
    EXPECT_EQ(verdicts[0].code, ReasonCode::kNothingJudged);
    EXPECT_EQ(overall_of(verdicts), Overall::kInconclusive);
    EXPECT_EQ(summarize(verdicts, evidence).rfind("pcieval inconclusive: node inconclusive (nothing_judged)", 0), 0U)
        << summarize(verdicts, evidence);
  }
  EXPECT_EQ(overall_of({}), Overall::kInconclusive);
}

TEST(PartialEvidence, APassSummarySaysWhatWasJudged) {
  const Evidence evidence = evidence_of({gpu_alone("0000:01:00.0", port(5, 16, 5, 16))});
  const auto verdicts = judge_all(evidence, ThresholdProfile{}, {});
  EXPECT_EQ(summarize(verdicts, evidence),
            "pcieval pass: 1 device at their own link capability (ports above not in the evidence)");
}

}  // namespace
}  // namespace pcieval
