#include "validate/capture_rules.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "validate/link_rules.hpp"

namespace pcieval {
namespace {

// Hand-built evidence modelled on a Supermicro SYS-420GP-TNR (HGX A100 8-GPU,
// Gen4): GPU 07:00.0 behind switch downstream port 06:10.0, the switch's
// upstream port 05:00.0 on Xeon root port 04:01.0; events as its dmesg and
// journal would carry them.
PciAddress bdf(const char* text) { return *parse_pci_address(text); }

DeviceRecord gpu_behind_switch(DeviceKind kind = DeviceKind::kGpu) {
  const PortLinkReading full = PortLinkReading::known({PcieGen::kGen4, 16}, {PcieGen::kGen4, 16});
  DeviceRecord gpu;
  gpu.function.bdf = bdf("0000:07:00.0");
  gpu.function.vendor_id = 0x10de;
  gpu.function.class_code = 0x030200;
  gpu.function.kind = kind;
  gpu.function.link = full;
  Link device_link{bdf("0000:07:00.0"), bdf("0000:06:10.0"), LinkPosition::kDeviceLink, full, full};
  Link uplink{bdf("0000:05:00.0"), bdf("0000:04:01.0"), LinkPosition::kUplink, full, full};
  gpu.path = {device_link, uplink};
  return gpu;
}

Evidence with(std::vector<DeviceRecord> devices) {
  Evidence evidence;
  evidence.devices = std::move(devices);
  return evidence;
}

CapturedEvent limited(const char* device, const char* port, LinkState to, LinkState capable) {
  CapturedEvent event;
  event.kind = CapturedEvent::Kind::kLinkLimited;
  event.device = bdf(device);
  event.limiting_port = bdf(port);
  event.limited_to = to;
  event.capable = capable;
  event.source = "dmesg.txt";
  event.line = 7;
  return event;
}

// `origin` is "file:line".
CapturedEvent event(CapturedEvent::Kind kind, const char* device, const std::string& origin) {
  CapturedEvent out;
  out.kind = kind;
  out.device = bdf(device);
  const auto colon = origin.rfind(':');
  out.source = origin.substr(0, colon);
  out.line = static_cast<std::size_t>(std::stoul(origin.substr(colon + 1)));
  return out;
}

TEST(CaptureRules, LimitAboveTheGpuIsADowngradeAtThatLink) {
  const auto verdicts =
      judge_captured_events(with({gpu_behind_switch()}),
                            {limited("0000:07:00.0", "0000:04:01.0", {PcieGen::kGen3, 16}, {PcieGen::kGen4, 16})});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kLinkDowngraded);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kLinkSpeedBelowExpected);
  ASSERT_TRUE(verdicts[0].link);
  EXPECT_EQ(verdicts[0].link->downstream, bdf("0000:05:00.0"));
  EXPECT_EQ(verdicts[0].link->upstream, bdf("0000:04:01.0"));
  EXPECT_NE(verdicts[0].reason.find("(dmesg.txt:7)"), std::string::npos) << verdicts[0].reason;
}

TEST(CaptureRules, SpeedLimitOnAGpusOwnLinkAtBootIsIdleButWidthIsNot) {
  const Evidence evidence = with({gpu_behind_switch()});
  // The kernel names the switch downstream port above the GPU on a tie.
  const auto slow = judge_captured_events(
      evidence, {limited("0000:07:00.0", "0000:06:10.0", {PcieGen::kGen1, 16}, {PcieGen::kGen4, 16})});
  ASSERT_EQ(slow.size(), 1U);
  EXPECT_EQ(slow[0].status, VerdictStatus::kInconclusive);
  EXPECT_EQ(slow[0].code, ReasonCode::kGpuLinkSpeedIdle);
  const auto narrow = judge_captured_events(
      evidence, {limited("0000:07:00.0", "0000:07:00.0", {PcieGen::kGen4, 8}, {PcieGen::kGen4, 16})});
  ASSERT_EQ(narrow.size(), 1U);
  // With the GPU read under load, the loaded reading decides (judge_links).
  Evidence loaded = evidence;
  loaded.link_samples.push_back(LinkSample{bdf("0000:07:00.0"), SampleSource::kNvml, 0, true, PcieGen::kGen4, 16});
  EXPECT_TRUE(judge_captured_events(
                  loaded, {limited("0000:07:00.0", "0000:06:10.0", {PcieGen::kGen1, 16}, {PcieGen::kGen4, 16})})
                  .empty());
  EXPECT_EQ(narrow[0].code, ReasonCode::kLinkWidthBelowExpected);
  // A NIC does not idle its link down: the same line is a downgrade.
  const auto nic =
      judge_captured_events(with({gpu_behind_switch(DeviceKind::kNic)}),
                            {limited("0000:07:00.0", "0000:07:00.0", {PcieGen::kGen1, 16}, {PcieGen::kGen4, 16})});
  ASSERT_EQ(nic.size(), 1U);
  EXPECT_EQ(nic[0].code, ReasonCode::kLinkSpeedBelowExpected);
}

TEST(CaptureRules, UncorrectableOnAPortFailsTheDevicesBelowIt) {
  const auto verdicts = judge_captured_events(with({gpu_behind_switch()}),
                                              {event(CapturedEvent::Kind::kFatalError, "0000:06:10.0", "j:3"),
                                               event(CapturedEvent::Kind::kSurpriseDown, "0000:06:10.0", "j:9")});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].subject, "0000:07:00.0");
  EXPECT_EQ(verdicts[0].status, VerdictStatus::kLinkErrors);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kUncorrectableErrorsLogged);
  EXPECT_NE(verdicts[0].reason.find("2 uncorrectable PCIe errors (fatal, Surprise Down)"), std::string::npos)
      << verdicts[0].reason;
  EXPECT_NE(verdicts[0].reason.find("(j:3 .. j:9)"), std::string::npos) << verdicts[0].reason;
}

TEST(CaptureRules, WithoutAPathASpeedLimitMayBeAnIdleGpusOwnLink) {
  const auto verdicts = judge_captured_events(
      Evidence{}, {limited("0000:07:00.0", "0000:04:01.0", {PcieGen::kGen3, 16}, {PcieGen::kGen4, 16}),
                   limited("0000:08:00.0", "0000:04:02.0", {PcieGen::kGen4, 8}, {PcieGen::kGen4, 16})});
  ASSERT_EQ(verdicts.size(), 2U);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kGpuLinkSpeedIdle);
  EXPECT_EQ(verdicts[1].code, ReasonCode::kLinkWidthBelowExpected);
}

TEST(CaptureRules, FellOffTheBusWithoutLspciIsJudgedOnTheAddress) {
  const auto verdicts =
      judge_captured_events(Evidence{}, {event(CapturedEvent::Kind::kFellOffBus, "0000:4c:00.0", "j:24")});
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].subject, "0000:4c:00.0");
  EXPECT_EQ(verdicts[0].code, ReasonCode::kGpuFellOffBus);
}

TEST(CaptureRules, CorrectableErrorsAreLeftToTheRateRule) {
  const std::vector<CapturedEvent> events = {event(CapturedEvent::Kind::kCorrectableError, "0000:07:00.0", "d:1"),
                                             event(CapturedEvent::Kind::kCorrectableError, "0000:07:00.0", "d:5")};
  EXPECT_TRUE(judge_captured_events(with({gpu_behind_switch()}), events).empty());
}

DeviceRecord nvml_only_gpu(int current_gen, int current_width, int pstate, int util, bool under_load) {
  DeviceRecord gpu;
  gpu.function.bdf = bdf("0000:17:00.0");
  gpu.function.kind = DeviceKind::kGpu;
  NvmlGpuLink nvml;
  nvml.max_gen = 4;
  nvml.max_width = 16;
  nvml.current_gen = current_gen;
  nvml.current_width = current_width;
  nvml.pstate = pstate;
  nvml.utilization_gpu_percent = util;
  nvml.under_load = under_load;
  gpu.nvml = nvml;
  return gpu;
}

// GPUs only nvidia-smi describes are judge_links' now (held to nvidia-smi's
// Max, validate/expectation.hpp): the codes it gives them.
std::optional<ReasonCode> nvml_only_code(DeviceRecord gpu) {
  const auto verdicts = judge_links(with({std::move(gpu)}), {});
  if (verdicts.empty()) return std::nullopt;
  return verdicts.front().code;
}

TEST(CaptureRules, NvmlOnlyGpus) {
  EXPECT_EQ(nvml_only_code(nvml_only_gpu(3, 16, 0, 95, true)), ReasonCode::kLinkSpeedBelowExpected);
  EXPECT_EQ(nvml_only_code(nvml_only_gpu(1, 16, 8, 0, false)), ReasonCode::kGpuLinkSpeedIdle);
  // Width does not drop to save power, and Max folds in the slot: an L4 at
  // P8 reading x8 of x16 is a downgrade (corpus SOURCES.md: WIDTH-DOWN).
  EXPECT_EQ(nvml_only_code(nvml_only_gpu(1, 8, 8, 0, false)), ReasonCode::kLinkWidthBelowExpected);
  EXPECT_EQ(nvml_only_code(nvml_only_gpu(4, 8, 0, 95, true)), ReasonCode::kLinkWidthBelowExpected);
  EXPECT_EQ(nvml_only_code(nvml_only_gpu(4, 8, 0, 0, false)), ReasonCode::kLinkWidthBelowExpected);
  EXPECT_EQ(nvml_only_code(nvml_only_gpu(4, 16, 0, 95, true)), ReasonCode::kLinkAtOwnCapability);
}

// A Gen5 GPU in a Gen4 host (an H100 PCIe in a Dell PowerEdge R750, Ice Lake:
// Device Max 5, Host Max 4) busy at Gen4 is where the host lets it be.
TEST(CaptureRules, HostMaxCapsTheExpectedGeneration) {
  const auto code_for = [](std::optional<int> max_gen, std::optional<int> host_max_gen) {
    DeviceRecord gpu = nvml_only_gpu(4, 16, 0, 95, true);
    gpu.nvml->max_gen = max_gen;
    gpu.nvml->gpu_max_gen = 5;
    gpu.nvml->host_max_gen = host_max_gen;
    return nvml_only_code(std::move(gpu));
  };
  // Max as NVML gives it (already the lower of the two): at its ceiling.
  EXPECT_EQ(code_for(4, 4), ReasonCode::kLinkAtOwnCapability);
  // A capture whose Max reads the GPU's own (or lacks Max): Host Max caps it.
  EXPECT_EQ(code_for(5, 4), ReasonCode::kLinkAtOwnCapability);
  EXPECT_EQ(code_for(std::nullopt, 4), ReasonCode::kLinkAtOwnCapability);
  // Without Host Max the same reading against Max 5 is a downgrade.
  EXPECT_EQ(code_for(5, std::nullopt), ReasonCode::kLinkSpeedBelowExpected);
  // An A100 SXM4 behind a switch (corpus nvsmi_a100sxm4_hostmax3_text.txt):
  // Max 4, Current 4, Host Max 3. The link runs above Host Max, so Host Max
  // describes the switch's uplink, not this link: at its Max, it passes.
  DeviceRecord behind_switch = nvml_only_gpu(4, 16, 0, 95, true);
  behind_switch.nvml->max_gen = 4;
  behind_switch.nvml->gpu_max_gen = 4;
  behind_switch.nvml->host_max_gen = 3;
  const auto healthy = judge_links(with({behind_switch}), {});
  ASSERT_EQ(healthy.size(), 1u);
  EXPECT_EQ(healthy.front().code, ReasonCode::kLinkAtOwnCapability) << healthy.front().reason;
  EXPECT_THAT(healthy.front().reason, ::testing::HasSubstr("describes a hop above the GPU"));
  // The host at Gen4 and the GPU busy at Gen3: a downgrade against the host's max.
  DeviceRecord slow = nvml_only_gpu(3, 16, 0, 95, true);
  slow.nvml->max_gen = 5;
  slow.nvml->gpu_max_gen = 5;
  slow.nvml->host_max_gen = 4;
  const auto below = judge_links(with({std::move(slow)}), {});
  ASSERT_EQ(below.size(), 1u);
  EXPECT_EQ(below.front().code, ReasonCode::kLinkSpeedBelowExpected);
  EXPECT_THAT(below.front().reason, ::testing::HasSubstr("runs Gen3 x16, expected Gen4 x16"));
}

// judge_captured judges only what captured text adds: a live run's evidence
// (no events, no tool numbers) gets no verdict from it.
TEST(CaptureRules, JudgeCapturedReadsOnlyTheEvidence) {
  Evidence live = with({nvml_only_gpu(3, 16, 0, 95, true)});
  EXPECT_TRUE(judge_captured(live, ThresholdProfile{}).empty());
  Evidence captured = live;
  captured.capture_lines.push_back(CaptureLine{bdf("0000:17:00.0"), std::nullopt, "nvsmi.txt", 42});
  captured.captured_events.push_back(event(CapturedEvent::Kind::kFellOffBus, "0000:17:00.0", "journal.txt:9"));
  const auto verdicts = judge_captured(captured, ThresholdProfile{});
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_EQ(verdicts[0].code, ReasonCode::kGpuFellOffBus);
  EXPECT_THAT(verdicts[0].reason, ::testing::HasSubstr("(journal.txt:9)"));
  // The link verdict cites its capture line.
  std::vector<Verdict> links = judge_links(captured, {});
  cite_capture_lines(links, captured);
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].code, ReasonCode::kLinkSpeedBelowExpected);
  EXPECT_THAT(links[0].reason, ::testing::EndsWith(" (nvsmi.txt:42)"));
}

}  // namespace
}  // namespace pcieval
