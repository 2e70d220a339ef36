// Files that mix formats: a ticket paste of dmesg then lspci -vv, captures
// concatenated with `cat`, split into sections that each parser reads with the
// file's own line numbers.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/capture_test_util.hpp"
#include "ingest/detect.hpp"
#include "ingest/kernel_log.hpp"
#include "ingest/lspci.hpp"
#include "ingest/nvidia_smi.hpp"

namespace pcieval::testing {
namespace {

constexpr const char* kTicket = "mixed_esc8000a_e12_ticket_dmesg_lspci.txt";

std::string_view section_text(std::string_view text, const CaptureSection& section) {
  return text.substr(section.offset, section.size);
}

// What diagnose does for a section that does not start the file: blank lines
// in front, which every parser skips, keep its line numbers the file's.
std::string padded(std::string_view text, const CaptureSection& section) {
  return std::string(section.first_line - 1, '\n') + std::string(section_text(text, section));
}

TEST(MixedSections, TicketWithDmesgThenLspci) {
  const std::string text = read_capture(kTicket);
  const auto sections = split_capture_sections(text);
  ASSERT_TRUE(sections) << sections.error().message;
  ASSERT_EQ(sections->size(), 2U);
  // The comments and the prompt before the first timestamp belong to the log.
  const CaptureSection& log = sections->at(0);
  EXPECT_EQ(log.format, CaptureFormat::kKernelLog);
  EXPECT_EQ(log.offset, 0U);
  EXPECT_EQ(log.first_line, 1U);
  const CaptureSection& lspci = sections->at(1);
  EXPECT_EQ(lspci.format, CaptureFormat::kLspci);
  EXPECT_EQ(lspci.first_line, line_of(text, "40:01.1 PCI bridge"));
  EXPECT_EQ(log.size, lspci.offset);
  EXPECT_EQ(lspci.offset + lspci.size, text.size());

  const auto events = parse_kernel_log(section_text(text, log), "ticket", log.first_line);
  ASSERT_TRUE(events) << events.error().message;
  ASSERT_EQ(events->events.size(), 3U);
  EXPECT_EQ(events->events[0].kind, KernelEventKind::kBandwidthLimited);
  EXPECT_EQ(events->events[0].line, line_of(text, "limited by 2.5 GT/s PCIe x16"));
  EXPECT_EQ(events->events[2].line, line_of(text, "severity=Corrected", 1));

  const auto devices = parse_lspci(padded(text, lspci), "ticket");
  ASSERT_TRUE(devices) << devices.error().message;
  ASSERT_EQ(devices->devices.size(), 2U);
  EXPECT_EQ(devices->devices[1].line, line_of(text, "41:00.0 VGA compatible controller"));
}

TEST(MixedSections, KernelLogSectionStartingMidFile) {
  // The same log behind 40 lines of something else: its events keep the
  // file's numbers.
  const std::string log = read_capture(kJournalIcelake);
  const auto parsed = parse_kernel_log(log, "journal", 41);
  ASSERT_TRUE(parsed);
  ASSERT_FALSE(parsed->events.empty());
  EXPECT_EQ(parsed->events[0].line, 40 + line_of(log, "bandwidth, limited by 8 GT/s"));
}

TEST(MixedSections, CapturesPastedOneAfterAnother) {
  // `cat lspci.txt dmesg.txt` of the ESC8000A-E12, and the Ice Lake host's
  // nvidia-smi -q (the ESC8000A-E12's busy capture) followed by its journal.
  struct Case {
    std::vector<const char*> files;
    std::vector<CaptureFormat> formats;
    std::string_view second_head;
  };
  const std::vector<Case> cases = {
      {{kEscFull, kDmesgEsc}, {CaptureFormat::kLspci, CaptureFormat::kKernelLog}, "[    0.000000] Linux version"},
      {{kSmiBusy, kJournalIcelake},
       {CaptureFormat::kNvidiaSmi, CaptureFormat::kKernelLog},
       "Mar 14 02:11:09 gpu-a17 kernel: pci 0000:4b:00.0: [10de:20b5]"},
      {{kSmiIdleXml, kDmesgEsc}, {CaptureFormat::kNvidiaSmiXml, CaptureFormat::kKernelLog}, "[    0.000000] Linux"},
  };
  for (const Case& c : cases) {
    std::string text;
    for (const char* file : c.files) text += read_capture(file);
    const auto sections = split_capture_sections(text);
    ASSERT_TRUE(sections) << sections.error().message;
    ASSERT_EQ(sections->size(), c.formats.size()) << c.files[0];
    for (std::size_t i = 0; i < c.formats.size(); ++i) EXPECT_EQ(sections->at(i).format, c.formats[i]) << c.files[0];
    // The second capture's comment header rides with the first; its first
    // line of output starts the section.
    EXPECT_EQ(sections->at(1).first_line, line_of(text, c.second_head)) << c.files[0];
    const auto log = parse_kernel_log(section_text(text, sections->at(1)), "log", sections->at(1).first_line);
    ASSERT_TRUE(log);
    const auto alone = parse_kernel_log(read_capture(c.files[1]), "log");
    ASSERT_TRUE(alone);
    ASSERT_EQ(log->events.size(), alone->events.size()) << c.files[0];
    const std::size_t shift = line_of(text, c.second_head) - line_of(read_capture(c.files[1]), c.second_head);
    for (std::size_t i = 0; i < log->events.size(); ++i) {
      EXPECT_EQ(log->events[i].line, alone->events[i].line + shift) << c.files[0];
    }
  }
  // The nvidia-smi section, padded as diagnose does, still finds its GPUs at
  // their own lines.
  const std::string text = read_capture(kSmiBusy) + read_capture(kJournalIcelake);
  const auto sections = split_capture_sections(text);
  ASSERT_TRUE(sections);
  const auto smi = parse_nvidia_smi(padded(text, sections->at(0)), "smi");
  ASSERT_TRUE(smi) << smi.error().message;
  ASSERT_FALSE(smi->gpus.empty());
  EXPECT_EQ(smi->gpus[0].line, line_of(text, "GPU 00000000:01:00.0"));
}

TEST(MixedSections, EveryOneFormatFixtureIsOneSection) {
  // The captures of one tool each stay whole, in the format detection gives.
  for (const auto& entry : std::filesystem::directory_iterator(capture_path(""))) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("mixed_") || name == "README.md") continue;
    const std::string text = read_capture(name);
    const auto sections = split_capture_sections(text);
    const auto detected = detect_capture_format(text);
    ASSERT_EQ(sections.ok(), detected.ok()) << name;
    if (!detected) continue;
    ASSERT_EQ(sections->size(), 1U) << name;
    EXPECT_EQ(sections->front().format, detected.value()) << name;
    EXPECT_EQ(sections->front().size, text.size()) << name;
  }
}

TEST(MixedSections, PromptsAndStrayLinesAreNoSection) {
  // A shell prompt in brackets is not a dmesg timestamp.
  const std::string lspci = "[root@gpu-a17 ~]# lspci -vv -s 41:00.0\n" + read_capture(kEscGpu41);
  const auto one = split_capture_sections(lspci);
  ASSERT_TRUE(one);
  ASSERT_EQ(one->size(), 1U);
  EXPECT_EQ(one->front().format, CaptureFormat::kLspci);
  // Nothing of any format: detection's error.
  EXPECT_FALSE(split_capture_sections("hello\nworld\n"));
  EXPECT_FALSE(split_capture_sections(""));
}

TEST(MixedSections, ACaptureAfterStampedLinesStartsOnItsOwnLine) {
  // The split passes stamped kernel lines 16 bytes at a time: whatever the
  // lengths of the lines before it (so every position of the head in a
  // block), the nvidia-smi banner after N log lines starts on line N + 1, and
  // a log that ends without a newline is still one section.
  for (std::size_t pad = 0; pad < 40; ++pad) {
    std::string text;
    std::size_t lines = 0;
    for (int i = 0; i < 5; ++i, ++lines) {
      text += "[ 12.000" + std::to_string(i) + "] pcieport 0000:00:01.0: " + std::string(pad + i, 'x') + "\n";
    }
    const std::size_t banner_offset = text.size();
    text += "==============NVSMI LOG==============\n\nTimestamp : Thu Dec  3 10:00:00 2026\n";
    text += "Driver Version : 550.54.15\nAttached GPUs : 1\nGPU 00000000:17:00.0\n    Product Name : NVIDIA H100\n";
    const auto sections = split_capture_sections(text);
    ASSERT_TRUE(sections) << pad << ": " << sections.error().message;
    ASSERT_EQ(sections->size(), 2U) << pad;
    EXPECT_EQ(sections->at(0).format, CaptureFormat::kKernelLog);
    EXPECT_EQ(sections->at(1).format, CaptureFormat::kNvidiaSmi);
    EXPECT_EQ(sections->at(1).offset, banner_offset) << pad;
    EXPECT_EQ(sections->at(1).first_line, lines + 1) << pad;

    const std::string unterminated = text.substr(0, banner_offset - 1);
    const auto one = split_capture_sections(unterminated);
    ASSERT_TRUE(one) << pad;
    ASSERT_EQ(one->size(), 1U);
    EXPECT_EQ(one->front().size, unterminated.size());
  }
}

TEST(MixedSections, HostileInputAndLargeLog) {
  for (const std::string& input : hostile_inputs()) (void)split_capture_sections(input);
  // A 64 MB kernel log is one section after one pass (seconds would mean
  // per-line detection).
  const std::string filler = "[ 1234.567890] usb 1-1: new high-speed USB device number 2 using xhci_hcd\n";
  std::string text;
  text.reserve(std::size_t{64} << 20);
  while (text.size() < (std::size_t{64} << 20)) text += filler;
  const auto start = std::chrono::steady_clock::now();
  const auto sections = split_capture_sections(text);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(sections);
  ASSERT_EQ(sections->size(), 1U);
  EXPECT_EQ(sections->front().format, CaptureFormat::kKernelLog);
  EXPECT_LT(seconds, 10.0);
}

}  // namespace
}  // namespace pcieval::testing
