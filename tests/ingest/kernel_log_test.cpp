// Kernel logs: "limited by" lines in every kernel's spelling, AER reports
// counted once, Xid 79 and its echo, and logs of any size and shape.
#include "ingest/kernel_log.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ingest/capture_test_util.hpp"

namespace pcieval::testing {
namespace {

std::map<KernelEventKind, int> kinds(const KernelLogCapture& capture) {
  std::map<KernelEventKind, int> count;
  for (const KernelLogEvent& event : capture.events) ++count[event.kind];
  return count;
}

TEST(KernelLog, DmesgFixture) {
  const std::string text = read_capture(kDmesgEsc);
  const auto parsed = parse_kernel_log(text, "dmesg.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  auto count = kinds(*parsed);
  EXPECT_EQ(count[KernelEventKind::kBandwidthLimited], 3);
  EXPECT_EQ(count[KernelEventKind::kAerCorrected], 5);
  EXPECT_EQ(count[KernelEventKind::kBandwidthNotification], 1);
  EXPECT_EQ(count[KernelEventKind::kGpuFellOffBus], 0) << "Xid 13 is not about the bus";
  ASSERT_EQ(parsed->notes.size(), 1U);
  EXPECT_NE(parsed->notes.front().find("Xid 13 x1"), std::string::npos) << parsed->notes.front();

  const KernelLogEvent& c1 = parsed->events[1];
  EXPECT_EQ(c1.kind, KernelEventKind::kBandwidthLimited);
  EXPECT_EQ(to_string(c1.device), "0000:c1:00.0");
  EXPECT_EQ(c1.line, line_of(text, "limited by 8.0 GT/s PCIe x16 link at 0000:c0:01.1"));
  ASSERT_TRUE(c1.limiting_port);
  EXPECT_EQ(to_string(*c1.limiting_port), "0000:c0:01.1");
  EXPECT_EQ(c1.limited_to, (LinkState{PcieGen::kGen3, 16}));
  EXPECT_EQ(c1.capable, (LinkState{PcieGen::kGen4, 16}));

  // The AER error is the "PCIe Bus Error" line of the device, counted once per
  // report; the root port's "received from" and the status dump are recognised.
  const auto aer = std::find_if(parsed->events.begin(), parsed->events.end(),
                                [](const KernelLogEvent& e) { return e.kind == KernelEventKind::kAerCorrected; });
  ASSERT_NE(aer, parsed->events.end());
  const KernelLogEvent& first_aer = *aer;
  EXPECT_EQ(first_aer.kind, KernelEventKind::kAerCorrected);
  EXPECT_EQ(to_string(first_aer.device), "0000:c1:00.0");
  EXPECT_EQ(first_aer.line, line_of(text, "severity=Corrected"));
  // Every line about PCIe errors or bandwidth is recognised; the rest (boot
  // lines, the driver's banner, the fixture's comments) is skipped.
  std::size_t about_pcie = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with('#')) continue;
    for (std::string_view marker :
         {"Gb/s available", "AER: ", "PCIe Bus Error", "error status/mask", "] RxErr", "] BadTLP", "Xid (", "bwctrl"}) {
      if (line.find(marker) != std::string::npos) {
        ++about_pcie;
        break;
      }
    }
  }
  EXPECT_EQ(about_pcie, 27U);
  EXPECT_EQ(parsed->skipped_lines, parsed->lines - about_pcie);
}

TEST(KernelLog, RunsOfStampedLinesAreCountedAsLineByLine) {
  // Between markers the reader passes stamped lines in bulk (stamped_lines.hpp):
  // whatever the line lengths (every position in a 16-byte block), the line
  // numbers of later events, the counts, and a status line in an event's
  // report after the run must come out as they do one line at a time.
  for (std::size_t pad = 0; pad < 40; ++pad) {
    std::string text = "[    1.000000] Linux version 6.8.0\n";
    std::size_t number = 1;
    const auto filler = [&](int count) {
      for (int i = 0; i < count; ++i, ++number) {
        text +=
            "[    2.0" + std::to_string(i) + "] usb 1-1: " + std::string(pad + static_cast<std::size_t>(i), 'u') + "\n";
      }
    };
    filler(7);
    text += "\n   \n";  // blank lines: not counted as lines of the log
    number += 2;
    filler(5);
    // The announcement and its report are one event, on the report's line.
    text += "[    3.000000] pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0\n";
    ++number;
    text +=
        "[    3.000001] nvidia 0000:01:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\n";
    const std::size_t first_event = ++number;
    filler(3);
    text += "[    3.000002] nvidia 0000:01:00.0:    [ 0] RxErr                  (First)\n";  // still in the report
    ++number;
    filler(9);
    text += "[    4.000000] NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=python3, GPU has fallen off the bus.";
    const std::size_t last_event = ++number;

    const auto parsed = parse_kernel_log(text, "k");
    ASSERT_TRUE(parsed) << pad << ": " << parsed.error().message;
    ASSERT_GE(parsed->events.size(), 2U) << pad;
    EXPECT_EQ(parsed->events.front().line, first_event) << pad;
    EXPECT_EQ(parsed->events.back().line, last_event) << pad;
    EXPECT_EQ(parsed->events.back().kind, KernelEventKind::kGpuFellOffBus) << pad;
    EXPECT_EQ(parsed->lines, number - 2) << pad;  // every line but the two blank ones
  }
}

TEST(KernelLog, JournalFixtureOldSpeedsFatalSurpriseDownAndXid79) {
  const std::string text = read_capture(kJournalIcelake);
  const auto parsed = parse_kernel_log(text, "journal.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->events.size(), 3U);
  const KernelLogEvent& limited = parsed->events[0];
  EXPECT_EQ(to_string(limited.device), "0000:4b:00.0");
  EXPECT_EQ(to_string(limited.limiting_port.value()), "0000:48:02.0");
  EXPECT_EQ(limited.limited_to, (LinkState{PcieGen::kGen3, 16})) << "pre-5.7 '8 GT/s'";
  // A fatal error whose status dump says SDES is one Surprise Down.
  EXPECT_EQ(parsed->events[1].kind, KernelEventKind::kSurpriseDown);
  EXPECT_EQ(to_string(parsed->events[1].device), "0000:4a:01.0");
  EXPECT_EQ(parsed->events[1].line, line_of(text, "severity=Uncorrected (Fatal)"));
  // Xid 79 and the driver's words for it on the next line: one event.
  EXPECT_EQ(parsed->events[2].kind, KernelEventKind::kGpuFellOffBus);
  EXPECT_EQ(to_string(parsed->events[2].device), "0000:4c:00.0");
  EXPECT_EQ(parsed->events[2].xid, 79);
}

TEST(KernelLog, LimitedByInEveryKernelsSpelling) {
  struct Row {
    std::string line;
    std::string device;
    std::optional<std::string> port;
    std::optional<LinkState> limited;
    std::optional<LinkState> capable;
  };
  const std::vector<Row> rows = {
      {"pci 0000:01:00.0: 63.008 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at 0000:00:01.0 "
       "(capable of 126.016 Gb/s with 8.0 GT/s PCIe x16 link)",
       "0000:01:00.0", "0000:00:01.0", LinkState{PcieGen::kGen3, 8}, LinkState{PcieGen::kGen3, 16}},
      {"[    1.5] pci 0000:41:00.0: 32.000 Gb/s available PCIe bandwidth, limited by 2.5 GT/s PCIe x16 link at "
       "0000:40:01.1 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link), in Flit mode",
       "0000:41:00.0", "0000:40:01.1", LinkState{PcieGen::kGen1, 16}, LinkState{PcieGen::kGen5, 16}},
      {"kernel: pci 0000:02:00.0: 15.752 Gb/s available PCIe bandwidth, limited by 8 GT/s x2 link at <unknown> "
       "(capable of 31.504 Gb/s with 8 GT/s x4 link)",
       "0000:02:00.0", std::nullopt, LinkState{PcieGen::kGen3, 2}, LinkState{PcieGen::kGen3, 4}},
      {"pci 0000:03:00.0: 2.000 Gb/s available PCIe bandwidth, limited by Unknown x1 link at 0000:00:1c.0 "
       "(capable of 7.876 Gb/s with 8.0 GT/s PCIe x1 link)",
       "0000:03:00.0", "0000:00:1c.0", std::nullopt, LinkState{PcieGen::kGen3, 1}},
  };
  for (const Row& row : rows) {
    const auto event = parse_bandwidth_limited(row.line);
    ASSERT_TRUE(event) << row.line;
    EXPECT_EQ(to_string(event->device), row.device) << row.line;
    EXPECT_EQ(event->limiting_port ? std::optional(to_string(*event->limiting_port)) : std::nullopt, row.port);
    EXPECT_EQ(event->limited_to, row.limited) << row.line;
    EXPECT_EQ(event->capable, row.capable) << row.line;
  }
  // The verbose healthy form has no limit.
  EXPECT_FALSE(
      parse_bandwidth_limited("pci 0000:01:00.0: 252.048 Gb/s available PCIe bandwidth (16.0 GT/s PCIe x16 link)"));
  EXPECT_FALSE(parse_bandwidth_limited("63.008 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at"));
}

TEST(KernelLog, XidSpellingsAndWhichOnesCount) {
  const auto parsed = parse_kernel_log(
      "[ 9.1] NVRM: Xid (0000:01:00): 79, GPU has fallen off the bus.\n"
      "[ 9.2] NVRM: Xid (PCI:0000:02:00): 74, pid=1, NVLink: fatal error\n"
      "[ 9.3] NVRM: Xid (PCI:0000:03:00): 119, pid=1, Timeout after 6s of waiting for RPC response from GPU0 GSP!\n"
      "[ 99.0] NVRM: GPU at 0000:05:00.0 has fallen off the bus.\n",
      "x");
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->events.size(), 2U);
  EXPECT_EQ(to_string(parsed->events[0].device), "0000:01:00.0");
  EXPECT_EQ(to_string(parsed->events[1].device), "0000:05:00.0");
  EXPECT_FALSE(parsed->events[1].xid);
  ASSERT_EQ(parsed->notes.size(), 1U);
  EXPECT_NE(parsed->notes.front().find("Xid 74 x1, Xid 119 x1"), std::string::npos) << parsed->notes.front();
}

TEST(KernelLog, AerSeverities) {
  const auto parsed = parse_kernel_log(
      "May 1 host kernel: nvidia 0000:17:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction "
      "Layer, (Requester ID)\n"
      "May 1 host kernel: pcieport 0000:16:02.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Data Link "
      "Layer, (Receiver ID)\n"
      "May 1 host kernel: PCIe Bus Error: severity=Corrected, type=Physical Layer\n",
      "aer");
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->events.size(), 2U) << "a line that names no device is skipped";
  EXPECT_EQ(parsed->events[0].kind, KernelEventKind::kAerUncorrectedNonFatal);
  EXPECT_EQ(parsed->events[1].kind, KernelEventKind::kAerUncorrectedFatal);
  EXPECT_EQ(to_string(parsed->events[1].device), "0000:16:02.0");
  EXPECT_EQ(parsed->skipped_lines, 1U);
}

TEST(KernelLog, NoKernelLineIsAnErrorButAQuietLogIsNot) {
  EXPECT_FALSE(parse_kernel_log("hello\nworld\n"));
  const auto quiet = parse_kernel_log("[    0.000000] Linux version 6.8.0\n[    0.1] Command line: ro\n", "quiet");
  ASSERT_TRUE(quiet);
  EXPECT_TRUE(quiet->events.empty());
  EXPECT_EQ(quiet->skipped_lines, 2U);
}

TEST(KernelLog, LooksLike) {
  EXPECT_TRUE(looks_like_kernel_log(read_capture(kDmesgEsc)));
  EXPECT_TRUE(looks_like_kernel_log(read_capture(kJournalIcelake)));
  EXPECT_TRUE(looks_like_kernel_log("[Thu Dec  3 10:00:00 2026] pci 0000:01:00.0: something\n"));
  EXPECT_FALSE(looks_like_kernel_log("00:00.0 Host bridge: Intel Corporation Device 09a2\n"));
  EXPECT_FALSE(looks_like_kernel_log(""));
}

// One line per kind of marker the reader's scan looks for (kernel_log.cpp
// kMarkers), in the spellings of the fixtures above (ESC8000A-E12 dmesg,
// Ice Lake PLX journal), each with what it must yield.
struct MarkerLine {
  std::string line;
  std::optional<KernelEventKind> kind;  // nullopt: recognised, not an event
};

std::vector<MarkerLine> marker_lines() {
  return {
      {"pci 0000:c1:00.0: 126.016 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x16 link at 0000:c0:01.1 "
       "(capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)",
       KernelEventKind::kBandwidthLimited},
      {"nvidia 0000:c1:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
       KernelEventKind::kAerCorrected},
      {"pcieport 0000:4a:01.0: Surprise Down error detected", KernelEventKind::kSurpriseDown},
      {"pcieport 0000:4a:01.0:    [ 5] SDES                   (First)", KernelEventKind::kSurpriseDown},
      {"NVRM: Xid (PCI:0000:4c:00): 79, pid=0, GPU has fallen off the bus.", KernelEventKind::kGpuFellOffBus},
      {"NVRM: GPU at PCI:0000:4c:00: GPU has fallen off the bus.", KernelEventKind::kGpuFellOffBus},
      {"pcieport 0000:c0:01.1: bwctrl: 16.0 GT/s PCIe x16 link", KernelEventKind::kBandwidthNotification},
      {"pcieport 0000:c0:01.1: Link Bandwidth Notification", KernelEventKind::kBandwidthNotification},
      {"pcieport 0000:c0:01.1: bw_notification: link changed", KernelEventKind::kBandwidthNotification},
      // A root port's announcement with no detail line after it is the
      // error itself (the detail is rate-limited, or the kernel predates it).
      {"pcieport 0000:c0:01.1: AER: Corrected error received: 0000:c1:00.0", KernelEventKind::kAerCorrected},
      {"nvidia 0000:c1:00.0:   device [10de:26b1] error status/mask=00000001/0000e000", std::nullopt},
  };
}

TEST(KernelLog, EveryMarkerAnywhere) {
  // Ordinary lines of the ESC8000A-E12 boot around each marker line, with
  // the marker's line shifted one byte at a time so that it starts, and its
  // anchor falls, at every offset of a 16-byte block; then the marker line
  // first in the text and last without a line break, and after CRLF lines.
  const std::string filler = "[    6.402218] nvidia: loading out-of-tree module taints kernel.\n";
  for (const MarkerLine& marker : marker_lines()) {
    for (std::size_t shift = 0; shift < 33; ++shift) {
      const std::string text = filler + std::string(shift, 'x') + "\n" + filler + "[    9.1] " + marker.line + "\n" +
                               filler + filler + filler + filler + filler + filler + filler + filler + filler;
      const auto parsed = parse_kernel_log(text, "markers");
      ASSERT_TRUE(parsed) << marker.line;
      EXPECT_EQ(parsed->lines, shift == 0 ? 12U : 13U) << marker.line;
      EXPECT_EQ(parsed->skipped_lines, parsed->lines - 1) << marker.line << " shift " << shift;
      if (marker.kind) {
        ASSERT_EQ(parsed->events.size(), 1U) << marker.line << " shift " << shift;
        EXPECT_EQ(parsed->events[0].kind, *marker.kind) << marker.line;
        EXPECT_EQ(parsed->events[0].line, 4U) << marker.line;
      } else {
        EXPECT_TRUE(parsed->events.empty()) << marker.line;
      }
    }
    for (const std::string& text : {marker.line, filler + "\n \t\r\n" + filler + marker.line,
                                    "[ 1.0] a\r\n[ 2.0] b\r\n" + marker.line + "\r\n"}) {
      const auto parsed = parse_kernel_log(text, "edges");
      if (!parsed) {
        // A lone AER summary line has no kernel log's shape and no event.
        EXPECT_FALSE(marker.kind) << text;
        continue;
      }
      EXPECT_EQ(parsed->skipped_lines, parsed->lines - 1) << "blank lines are not counted: " << text;
      EXPECT_EQ(parsed->events.size(), marker.kind ? 1U : 0U) << text;
      if (marker.kind) EXPECT_EQ(parsed->events[0].line, line_of(text, marker.line)) << text;
    }
  }
}

TEST(KernelLog, StatusDumpBelongsToItsReportOnly) {
  // The journal fixture's fatal error on 4a:01.0 with its "[ 5] SDES" dump
  // line as many lines below as a report spans, and one line further: the
  // second dump is an ordinary line (a status dump of no report).
  const std::string error =
      "Mar 14 06:40:52 gpu-a17 kernel: pcieport 0000:4a:01.0: PCIe Bus Error: severity=Uncorrected (Fatal), "
      "type=Transaction Layer, (Receiver ID)\n";
  const std::string dump = "Mar 14 06:40:52 gpu-a17 kernel: pcieport 0000:4a:01.0:    [ 0] RxErr\n";
  const std::string other = "Mar 14 06:40:52 gpu-a17 kernel: nvidia-nvlink: Nvlink Core is being initialized\n";
  std::string within = error;
  for (int i = 0; i < 7; ++i) within += other;
  within += dump;
  std::string beyond = within;
  beyond.insert(beyond.size() - dump.size(), other);
  const auto near = parse_kernel_log(within, "near");
  const auto far = parse_kernel_log(beyond, "far");
  ASSERT_TRUE(near);
  ASSERT_TRUE(far);
  EXPECT_EQ(near->skipped_lines, 7U) << "line 9, eight below the error: part of its report";
  EXPECT_EQ(far->skipped_lines, 9U) << "line 10: no report's";
  EXPECT_EQ(near->events.size(), 1U);
  EXPECT_EQ(far->events.size(), 1U);
}

TEST(KernelLog, FallenOffTheBusNeedsTheDriversWords) {
  // The driver's own line names the GPU; a line that only quotes the phrase
  // (a user's note pasted into the log) names none and is skipped.
  const auto parsed = parse_kernel_log(
      "[ 99.0] NVRM: GPU at 0000:05:00.0 has fallen off the bus.\n"
      "[ 99.1] slurmd[812]: node drained: GPU fallen off the bus again\n",
      "fallen");
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->events.size(), 1U);
  EXPECT_EQ(parsed->events[0].kind, KernelEventKind::kGpuFellOffBus);
  EXPECT_EQ(parsed->skipped_lines, 1U);
}

TEST(KernelLogRobustness, HostileInputAndEveryPrefix) {
  for (const std::string& input : hostile_inputs()) {
    const auto parsed = parse_kernel_log(input, "hostile");
    if (!parsed) {
      EXPECT_TRUE(printable(parsed.error().message));
      continue;
    }
    for (const auto& event : parsed->events) EXPECT_TRUE(printable(event.text));
  }
  const std::string text = read_capture(kJournalIcelake);
  for (std::size_t size = 0; size <= text.size(); size += 5) {
    const auto parsed = parse_kernel_log(std::string_view(text).substr(0, size), "prefix");
    if (parsed) EXPECT_LE(parsed->events.size(), 3U);
  }
}

TEST(KernelLogRobustness, LargeLogInOnePass) {
  // 64 MB of ordinary kernel lines with one event at the end: read in one pass
  // (seconds would mean a quadratic scan somewhere).
  const std::string filler = "[ 1234.567890] usb 1-1: new high-speed USB device number 2 using xhci_hcd\n";
  std::string text;
  text.reserve(64 << 20);
  while (text.size() < (std::size_t{64} << 20)) text += filler;
  text += "[ 9999.0] nvidia 0000:17:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer\n";
  const auto start = std::chrono::steady_clock::now();
  const auto parsed = parse_kernel_log(text, "big");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->events.size(), 1U);
  EXPECT_LT(seconds, 10.0);
}

}  // namespace
}  // namespace pcieval::testing
