// Kernel logs as people paste them: every logger's prefix and time stamp,
// the AER messages of kernels 3.x to 6.x, and the status bit lines.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ingest/capture_test_util.hpp"
#include "ingest/kernel_log.hpp"

namespace pcieval::testing {
namespace {

constexpr const char* kSyslogBroadwell = "syslog_broadwell_p100_port_02_0_corrected_burst.txt";
constexpr const char* kJournalIsoGenoa = "journal_iso_genoa_h100_isolated_correctable.txt";
constexpr const char* kDmesgTSpr = "dmesg_T_spr_l40s_riser_16_01_0_correctable_burst.txt";

std::map<std::string, int> corrected_by_device(const KernelLogCapture& capture) {
  std::map<std::string, int> count;
  for (const KernelLogEvent& event : capture.events) {
    if (event.kind == KernelEventKind::kAerCorrected) ++count[to_string(event.device)];
  }
  return count;
}

TEST(KernelLogTime, DmesgStampIsSecondsSinceBoot) {
  EXPECT_DOUBLE_EQ(kernel_log_time("[  123.456789] pci 0000:01:00.0: x").value(), 123.456789);
  EXPECT_DOUBLE_EQ(kernel_log_time("[68183.615790] x").value(), 68183.61579);
}

TEST(KernelLogTime, SyslogPrefersTheKernelsOwnStamp) {
  EXPECT_DOUBLE_EQ(kernel_log_time("Sep 19 16:18:02 host kernel: [68183.615790] pcieport 0000:00:03.1: x").value(),
                   68183.61579);
}

TEST(KernelLogTime, SyslogAndJournalShortWithoutAYearCountWithinTheYear) {
  const auto a = kernel_log_time("Dec  3 10:00:00 gpu-a17 kernel: pci 0000:01:00.0: x");
  const auto b = kernel_log_time("Dec 04 10:00:30 gpu-a17 kernel: pci 0000:01:00.0: x");
  const auto precise = kernel_log_time("Dec 04 10:00:30.250000 gpu-a17 kernel: x");
  ASSERT_TRUE(a && b && precise);
  EXPECT_DOUBLE_EQ(*b - *a, 86400.0 + 30.0);
  EXPECT_DOUBLE_EQ(*precise - *b, 0.25);
  // Across a month's end: 31 days in January.
  EXPECT_DOUBLE_EQ(*kernel_log_time("Feb  1 00:00:00 h kernel: x") - *kernel_log_time("Jan 31 00:00:00 h kernel: x"),
                   86400.0);
}

TEST(KernelLogTime, IsoStampsApplyTheirOffset) {
  EXPECT_DOUBLE_EQ(kernel_log_time("1970-01-02T00:00:00Z host kernel: x").value(), 86400.0);
  const auto local = kernel_log_time("2026-12-03T10:00:00+0100 gpu-h17 kernel: x");
  const auto utc = kernel_log_time("2026-12-03T09:00:00+00:00 gpu-h17 kernel: x");
  const auto west = kernel_log_time("2026-12-03T04:00:00.5-05:00 gpu-h17 kernel: x");
  ASSERT_TRUE(local && utc && west);
  EXPECT_DOUBLE_EQ(*local, *utc);
  EXPECT_DOUBLE_EQ(*west - *utc, 0.5);
}

TEST(KernelLogTime, DmesgDashTIsTheWallClock) {
  const auto a = kernel_log_time("[Thu Dec  3 10:00:00 2026] pcieport 0000:00:01.0: x");
  const auto b = kernel_log_time("[Fri Dec  4 10:01:30 2026] pcieport 0000:00:01.0: x");
  ASSERT_TRUE(a && b);
  EXPECT_DOUBLE_EQ(*b - *a, 86400.0 + 90.0);
}

TEST(KernelLogTime, NoStampIsNone) {
  EXPECT_FALSE(kernel_log_time("pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0"));
  EXPECT_FALSE(kernel_log_time("[root@gpu-a17 ~]# dmesg"));
  EXPECT_FALSE(kernel_log_time("Dec 33 10:00:00 host kernel: x"));
  EXPECT_FALSE(kernel_log_time("2026-13-03T10:00:00Z host kernel: x"));
  EXPECT_FALSE(kernel_log_time(""));
}

// The paste: a syslog line whose kernel predates "AER: " before the
// message, and 6.x's "Correctable", then the status bit lines.
TEST(KernelLogForms, SyslogCorrectableWithoutAerPrefixAndItsBitLines) {
  const std::string text =
      "Sep 19 16:18:02 host kernel: [68183.615790] pcieport 0000:00:03.1: PCIe Bus Error: severity=Correctable, "
      "type=Data Link Layer, (Transmitter ID)\n"
      "Sep 19 16:18:02 host kernel: [68183.615794] pcieport 0000:00:03.1:   device [1022:1483] error "
      "status/mask=00001040/00006000\n"
      "Sep 19 16:18:02 host kernel: [68183.615795] pcieport 0000:00:03.1:    [ 6] BadTLP                 (First)\n"
      "Sep 19 16:18:02 host kernel: [68183.615797] pcieport 0000:00:03.1:    [12] Timeout\n";
  const auto parsed = parse_kernel_log(text, "syslog");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->events.size(), 1U);
  const KernelLogEvent& event = parsed->events.front();
  EXPECT_EQ(event.kind, KernelEventKind::kAerCorrected);
  EXPECT_EQ(to_string(event.device), "0000:00:03.1");
  EXPECT_EQ(event.line, 1U);
  ASSERT_TRUE(event.time_s);
  EXPECT_DOUBLE_EQ(*event.time_s, 68183.61579);
  EXPECT_EQ(event.error_bits, (std::vector<std::string>{"BadTLP", "Timeout"}));
  EXPECT_EQ(parsed->skipped_lines, 0U);
}

TEST(KernelLogForms, UncorrectableSpellingsOf6x) {
  const auto parsed = parse_kernel_log(
      "[ 10.1] pcieport 0000:03:04.0: AER: PCIe Bus Error: severity=Uncorrectable (Fatal), type=Transaction Layer, "
      "(Receiver ID)\n"
      "[ 99.1] nvidia 0000:05:00.0: AER: PCIe Bus Error: severity=Uncorrectable (Non-Fatal), type=Transaction Layer, "
      "(Requester ID)\n");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->events.size(), 2U);
  EXPECT_EQ(parsed->events[0].kind, KernelEventKind::kAerUncorrectedFatal);
  EXPECT_EQ(parsed->events[1].kind, KernelEventKind::kAerUncorrectedNonFatal);
}

TEST(KernelLogForms, AnnouncementAloneIsAnErrorOfTheDeviceItNames) {
  const auto parsed = parse_kernel_log(
      "[ 5.0] pcieport 0000:00:1c.4: AER: Multiple Corrected error received: 0000:00:1c.4\n"
      "[ 6.0] pcieport 0001:00:02.0: AER: Corrected error received: id=0010\n"
      "[ 7.0] pcieport 0000:40:01.1: AER: Correctable error message received from 0000:41:00.0\n"
      "[ 8.0] pcieport 0000:40:01.1: AER: enabled with IRQ 45\n"
      "[ 9.0] pcieport 0000:4a:01.0: AER: Uncorrected (Fatal) error received: 0000:4a:01.0\n");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->events.size(), 4U);
  EXPECT_EQ(to_string(parsed->events[0].device), "0000:00:1c.4");
  // id=0010: bus 00, device 02, function 0, in the announcing port's domain.
  EXPECT_EQ(to_string(parsed->events[1].device), "0001:00:02.0");
  EXPECT_EQ(to_string(parsed->events[2].device), "0000:41:00.0");
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(parsed->events[i].kind, KernelEventKind::kAerCorrected);
  // Issue 30: an uncorrected announcement with no detail after it (a bug
  // report quotes only this line) is the error itself, like a corrected one.
  EXPECT_EQ(parsed->events[3].kind, KernelEventKind::kAerUncorrectedFatal);
  EXPECT_EQ(to_string(parsed->events[3].device), "0000:4a:01.0");
  EXPECT_EQ(parsed->skipped_lines, 0U) << "the IRQ line is recognised";
}

TEST(KernelLogForms, AnnouncementAndItsDetailAreOneErrorAtTheDetailLine) {
  const auto parsed = parse_kernel_log(
      "[ 5.000001] pcieport 0000:c0:01.1: AER: Corrected error received: 0000:c1:00.0\n"
      "[ 5.000002] nvidia 0000:c1:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\n"
      "[ 6.000001] pcieport 0000:c0:01.1: AER: Corrected error received: 0000:c1:00.0\n"
      "[ 6.000002] pcieport 0000:c0:01.1: some other line\n"
      "[ 6.000003] nvidia 0000:c1:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\n"
      "[ 7.000003] nvidia 0000:c1:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\n");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->events.size(), 3U);
  EXPECT_EQ(parsed->events[0].line, 2U);
  EXPECT_DOUBLE_EQ(parsed->events[0].time_s.value(), 5.000002);
  EXPECT_EQ(parsed->events[1].line, 5U);
  EXPECT_EQ(parsed->events[2].line, 6U) << "a detail with no announcement before it is an error of its own";
}

TEST(KernelLogForms, SyslogFixtureOfKernel44) {
  const std::string text = read_capture(kSyslogBroadwell);
  const auto parsed = parse_kernel_log(text, "syslog");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(corrected_by_device(*parsed), (std::map<std::string, int>{{"0000:00:02.0", 24}, {"0000:02:00.0", 2}}));
  EXPECT_EQ(parsed->events.size(), 26U);
  const auto first_burst = std::find_if(parsed->events.begin(), parsed->events.end(),
                                        [](const KernelLogEvent& e) { return to_string(e.device) == "0000:00:02.0"; });
  ASSERT_NE(first_burst, parsed->events.end());
  EXPECT_EQ(first_burst->line, line_of(text, "severity=Corrected, type=Data Link Layer"));
  EXPECT_DOUBLE_EQ(first_burst->time_s.value(), 68183.61579);
  EXPECT_EQ(first_burst->error_bits, std::vector<std::string>{"Replay Timer Timeout"});
  // Every event line carries the kernel's stamp; the burst spans under a minute.
  double low = 1e18;
  double high = 0;
  for (const KernelLogEvent& event : parsed->events) {
    ASSERT_TRUE(event.time_s) << event.text;
    if (to_string(event.device) != "0000:00:02.0") continue;
    low = std::min(low, *event.time_s);
    high = std::max(high, *event.time_s);
  }
  EXPECT_LT(high - low, 60.0);
  EXPECT_GT(high - low, 30.0);
}

TEST(KernelLogForms, JournalShortIsoFixtureOf6x) {
  const std::string text = read_capture(kJournalIsoGenoa);
  const auto parsed = parse_kernel_log(text, "journal");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->events.size(), 3U);
  EXPECT_EQ(corrected_by_device(*parsed), (std::map<std::string, int>{{"0000:41:00.0", 3}}));
  EXPECT_EQ(parsed->events[0].line, line_of(text, "nvidia 0000:41:00.0: AER: PCIe Bus Error"));
  EXPECT_EQ(parsed->events[1].error_bits, (std::vector<std::string>{"BadTLP", "Timeout"}));
  // 03:12:44 to 14:27:19 the same day.
  EXPECT_DOUBLE_EQ(*parsed->events[1].time_s - *parsed->events[0].time_s, 11 * 3600.0 + 14 * 60.0 + 35.0);
}

TEST(KernelLogForms, DmesgDashTFixture) {
  const std::string text = read_capture(kDmesgTSpr);
  const auto parsed = parse_kernel_log(text, "dmesg-T");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(corrected_by_device(*parsed), (std::map<std::string, int>{{"0000:16:01.0", 70}}));
  const double span = *parsed->events.back().time_s - *parsed->events.front().time_s;
  EXPECT_GE(span, 30.0);
  EXPECT_LT(span, 60.0);
}

}  // namespace
}  // namespace pcieval::testing
