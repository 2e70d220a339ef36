#include "validate/event_rate_rules.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pcieval {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// Hand-built evidence modelled on a Supermicro SYS-1028GR-TR (Broadwell, Gen3):
// a Tesla P100 at 02:00.0 on root port 00:02.0, its syslog's corrected errors.
PciAddress bdf(const char* text) { return *parse_pci_address(text); }

DeviceRecord p100_on_gen3_port() {
  const PortLinkReading full = PortLinkReading::known({PcieGen::kGen3, 16}, {PcieGen::kGen3, 16});
  DeviceRecord gpu;
  gpu.function.bdf = bdf("0000:02:00.0");
  gpu.function.vendor_id = 0x10de;
  gpu.function.class_code = 0x030200;
  gpu.function.kind = DeviceKind::kGpu;
  gpu.function.link = full;
  gpu.path = {Link{bdf("0000:02:00.0"), bdf("0000:00:02.0"), LinkPosition::kDeviceLink, full, full}};
  return gpu;
}

// `count` corrected errors on `device`, `step_s` apart from `start_s`, on
// lines 10, 14, 18, ... of `source`.
std::vector<CapturedEvent> corrected(const char* device, std::size_t count, double start_s, double step_s,
                                     const std::string& source = "syslog") {
  std::vector<CapturedEvent> events;
  for (std::size_t i = 0; i < count; ++i) {
    CapturedEvent event;
    event.kind = CapturedEvent::Kind::kCorrectableError;
    event.device = bdf(device);
    event.source = source;
    event.line = 10 + 4 * i;
    event.time_s = start_s + step_s * static_cast<double>(i);
    events.push_back(event);
  }
  return events;
}

std::string joined(const std::vector<std::string>& notes) {
  std::string text;
  for (const auto& note : notes) text += note + "\n";
  return text;
}

TEST(EventRateRules, BurstRateOfALinkFollowsTheSpecBitErrorRate) {
  // raw GT/s x lanes x 2 directions x 60 s x 1e-12
  EXPECT_NEAR(burst_errors_per_minute({PcieGen::kGen5, 16}, 1.0), 61.44, 1e-9);
  EXPECT_NEAR(burst_errors_per_minute({PcieGen::kGen4, 16}, 1.0), 30.72, 1e-9);
  EXPECT_NEAR(burst_errors_per_minute({PcieGen::kGen3, 16}, 1.0), 15.36, 1e-9);
  EXPECT_NEAR(burst_errors_per_minute({PcieGen::kGen1, 1}, 1.0), 0.3, 1e-9);
  // A profile that tolerates a tenth of the errors per GB flags a tenth of the rate.
  EXPECT_NEAR(burst_errors_per_minute({PcieGen::kGen4, 16}, 0.1), 3.072, 1e-9);
}

// "status code" per verdict: every device the errors name gets one (issue 30).
std::vector<std::string> rate_codes_of(const std::vector<Verdict>& verdicts) {
  std::vector<std::string> out;
  for (const Verdict& v : verdicts)
    out.push_back(std::string(to_string(v.status)) + " " + std::string(to_string(v.code)));
  return out;
}

TEST(EventRateRules, ABurstOnAPortOfAKnownLinkIsLinkErrors) {
  Evidence evidence;
  evidence.devices = {p100_on_gen3_port()};
  evidence.captured_events = corrected("0000:00:02.0", 20, 68183.6, 2.0);  // 20 in 38 s
  const CapturedRates rates = judge_captured_rates(evidence, ThresholdProfile{});
  ASSERT_THAT(rates.verdicts, SizeIs(1));
  const Verdict& verdict = rates.verdicts.front();
  EXPECT_EQ(verdict.subject, "0000:00:02.0");
  EXPECT_EQ(verdict.status, VerdictStatus::kLinkErrors);
  EXPECT_EQ(verdict.code, ReasonCode::kCorrectableErrorBurstLogged);
  EXPECT_THAT(verdict.reason,
              HasSubstr("20 correctable PCIe errors on 0000:00:02.0 within 60 s (syslog:10 .. syslog:86)"));
  EXPECT_THAT(verdict.reason, HasSubstr("15.4 per minute its Gen3 x16 link"));
  EXPECT_FALSE(verdict.remediation.empty());
  EXPECT_THAT(joined(rates.notes), HasSubstr("correctable PCIe errors on 0000:00:02.0: 20 in the log"));
}

TEST(EventRateRules, TheSameBurstWithTheLinkUnknownIsHeldToGen5x16) {
  Evidence evidence;
  evidence.captured_events = corrected("0000:00:02.0", 20, 68183.6, 2.0);
  const CapturedRates rates = judge_captured_rates(evidence, ThresholdProfile{});
  // Issue 30: the port still gets a verdict of its own, on the rate only.
  EXPECT_THAT(rate_codes_of(rates.verdicts), ElementsAre("pass correctable_errors_within_spec_rate"));
  EXPECT_THAT(joined(rates.notes), HasSubstr("at most 20 within 60 s: below the 61.4 per minute a Gen5 x16 link"));

  // 70 within 40 s is beyond even that.
  evidence.captured_events = corrected("0000:16:01.0", 70, 0.0, 0.55);
  const CapturedRates burst = judge_captured_rates(evidence, ThresholdProfile{});
  ASSERT_THAT(burst.verdicts, SizeIs(1));
  EXPECT_EQ(burst.verdicts.front().subject, "0000:16:01.0");
}

TEST(EventRateRules, TheProfilesToleranceScalesTheBurstRate) {
  Evidence evidence;
  evidence.devices = {p100_on_gen3_port()};
  evidence.captured_events = corrected("0000:02:00.0", 8, 100.0, 5.0);  // 8 in 35 s on a Gen3 x16 link
  EXPECT_THAT(rate_codes_of(judge_captured_rates(evidence, ThresholdProfile{}).verdicts),
              ElementsAre("pass correctable_errors_within_spec_rate"));
  ThresholdProfile strict;
  strict.defaults.correctable_errors_per_gb = 0.25;  // bound 3.84 per minute
  EXPECT_THAT(judge_captured_rates(evidence, strict).verdicts, SizeIs(1));
}

TEST(EventRateRules, IsolatedErrorsAreANoteWithPortAndCount) {
  Evidence evidence;
  evidence.devices = {p100_on_gen3_port()};
  evidence.captured_events = corrected("0000:02:00.0", 3, 1000.0, 3600.0);
  const CapturedRates rates = judge_captured_rates(evidence, ThresholdProfile{});
  ASSERT_THAT(rate_codes_of(rates.verdicts), ElementsAre("pass correctable_errors_within_spec_rate"));
  EXPECT_THAT(rates.verdicts.front().reason, HasSubstr("only the error rate was judged, not the link"));
  ASSERT_THAT(rates.notes, SizeIs(1));
  EXPECT_THAT(rates.notes.front(),
              HasSubstr("0000:02:00.0: 3 in the log (syslog:10 .. syslog:18), at most 1 within 60 s"));
}

TEST(EventRateRules, TwoErrorsNeverMakeABurstEvenOnAGen1x1Link) {
  Evidence evidence;
  DeviceRecord slow = p100_on_gen3_port();
  slow.function.link = PortLinkReading::known({PcieGen::kGen1, 1}, {PcieGen::kGen1, 1});
  evidence.devices = {slow};
  evidence.captured_events = corrected("0000:02:00.0", 2, 5.0, 0.001);
  EXPECT_THAT(rate_codes_of(judge_captured_rates(evidence, ThresholdProfile{}).verdicts),
              ElementsAre("pass correctable_errors_within_spec_rate"));
  evidence.captured_events = corrected("0000:02:00.0", 3, 5.0, 0.001);
  EXPECT_THAT(judge_captured_rates(evidence, ThresholdProfile{}).verdicts, SizeIs(1));
}

TEST(EventRateRules, StampsOfTwoFilesAreNotOneClock) {
  Evidence evidence;
  evidence.devices = {p100_on_gen3_port()};
  // Ten each in two files at the same seconds: neither file has a burst.
  evidence.captured_events = corrected("0000:00:02.0", 10, 0.0, 1.0, "a.log");
  for (CapturedEvent& event : corrected("0000:00:02.0", 10, 0.0, 1.0, "b.log")) {
    evidence.captured_events.push_back(event);
  }
  const CapturedRates rates = judge_captured_rates(evidence, ThresholdProfile{});
  EXPECT_THAT(rate_codes_of(rates.verdicts), ElementsAre("pass correctable_errors_within_spec_rate"));
  EXPECT_THAT(joined(rates.notes), HasSubstr("20 in the log (a.log:10 .. b.log:46), at most 10 within 60 s"));
}

TEST(EventRateRules, ErrorsWithoutStampsHaveNoRate) {
  Evidence evidence;
  evidence.captured_events = corrected("0000:00:02.0", 40, 0.0, 0.1);
  for (CapturedEvent& event : evidence.captured_events) event.time_s.reset();
  const CapturedRates rates = judge_captured_rates(evidence, ThresholdProfile{});
  EXPECT_THAT(rate_codes_of(rates.verdicts), ElementsAre("inconclusive correctable_error_rate_unknown"));
  EXPECT_THAT(joined(rates.notes), HasSubstr("0000:00:02.0: 40 in the log"));
  EXPECT_THAT(joined(rates.notes), HasSubstr("no time stamps"));
}

TEST(EventRateRules, ReplayCountersOfCapturedGpusAreNamed) {
  Evidence evidence;
  for (const char* address : {"0000:00:1b.0", "0000:00:1c.0", "0000:00:1d.0"}) {
    DeviceRecord gpu;
    gpu.function.bdf = bdf(address);
    gpu.function.kind = DeviceKind::kGpu;
    gpu.nvml = NvmlGpuLink{};
    gpu.nvml->name = "NVIDIA A10G";
    evidence.devices.push_back(gpu);
    evidence.capture_lines.push_back(CaptureLine{bdf(address), std::nullopt, "g5.txt", 40});
  }
  evidence.devices[0].nvml->replay_counter = 0;
  evidence.devices[1].nvml->replay_counter = 12;
  // 1d.0 printed N/A: nothing to name.
  DeviceRecord live = evidence.devices[1];  // a live run's reading has no capture line
  live.function.bdf = bdf("0000:00:1e.0");
  evidence.devices.push_back(live);

  const CapturedRates rates = judge_captured_rates(evidence, ThresholdProfile{});
  EXPECT_THAT(rates.verdicts, IsEmpty()) << "nvidia-smi does not say since when it counted";
  EXPECT_THAT(rates.notes, Contains(HasSubstr("0000:00:1c.0 (NVIDIA A10G): nvidia-smi counts 12 PCIe replays")));
  EXPECT_THAT(rates.notes, Contains("1 GPU captured by nvidia-smi count 0 PCIe replays since reset"));
  EXPECT_THAT(joined(rates.notes), ::testing::Not(HasSubstr("0000:00:1e.0")));
  EXPECT_THAT(joined(rates.notes), ::testing::Not(HasSubstr("0000:00:1d.0")));
}

TEST(EventRateRules, NothingCapturedNothingSaid) {
  const CapturedRates rates = judge_captured_rates(Evidence{}, ThresholdProfile{});
  EXPECT_THAT(rates.verdicts, IsEmpty());
  EXPECT_THAT(rates.notes, IsEmpty());
}

}  // namespace
}  // namespace pcieval
