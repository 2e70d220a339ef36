// One walk over a large kernel log: the reader finds where the log's section
// ends (walk_kernel_log) while it reads it, and the section split goes on
// from there (split_capture_sections with a walker), instead of the split
// walking the log once and the reader again. The sections and the captures
// must be exactly those of the split and the reader apart; the scan that
// finds a marker and counts lines at once (next_or_unstamped_line) must
// agree with the two scans it replaces.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/capture_test_util.hpp"
#include "ingest/captures.hpp"
#include "ingest/detail/marker_scanner.hpp"
#include "ingest/detect.hpp"
#include "ingest/kernel_log.hpp"

namespace pcieval::testing {
namespace {

constexpr std::array kWalkMarkers{
    ScanMarker{"bandwidth", 3},  // "dw"
    ScanMarker{"Xid (", 0},      // "Xi"
    ScanMarker{"] type 0", 2},   // "ty"
    ScanMarker{"AER: ", 2},      // "R:"
};
constexpr MarkerScanner kWalkScanner{kWalkMarkers};

// next_or_unstamped_line, one byte at a time: the first marker or the first
// line after `from`'s that does not begin with '[', the newlines before it.
std::size_t naive_next_or_unstamped(std::string_view text, std::size_t from, std::size_t& lines) {
  for (std::size_t at = from; at < text.size(); ++at) {
    if (at > from && text[at - 1] == '\n' && text[at] != '[') return at;
    for (const ScanMarker& marker : kWalkMarkers) {
      if (at >= marker.anchor && text.substr(at - marker.anchor).starts_with(marker.text)) return at;
    }
    if (text[at] == '\n') ++lines;
  }
  if (from < text.size() && text.back() != '\n') ++lines;
  return text.size();
}

TEST(KernelLogWalk, MarkerOrUnstampedLineAgreesWithABytewiseScan) {
  std::mt19937 random(20261207);
  const std::vector<std::string> pieces = {"[    1.000000] usb 1-1: new device\n",
                                           "[    2.5] pci 0000:01:00.0: [10de:2330] type 00 class\n",
                                           "[ 3.0] x\n",
                                           "plain line without a stamp\n",
                                           "Xid (PCI:0000:01:00): 79 at a line start\n",
                                           "\n",
                                           "[",
                                           "AER: ",
                                           "[ 4.0] type=1400 bandwidt\n",
                                           std::string(40, 'y') + "\n"};
  std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
  for (int round = 0; round < 3000; ++round) {
    std::string text = "[    0.000000] first\n";
    const int count = static_cast<int>(random() % 12);
    for (int i = 0; i < count; ++i) text += pieces[pick(random)];
    if (random() % 3 == 0 && text.back() == '\n') text.pop_back();
    // From every line start that is stamped, as the reader calls it.
    for (std::size_t from = 0; from < text.size(); from = text.find('\n', from) + 1) {
      if (text[from] == '[') {
        std::size_t expected_lines = 3;
        std::size_t lines = 3;
        const std::size_t expected = naive_next_or_unstamped(text, from, expected_lines);
        EXPECT_EQ(kWalkScanner.next_or_unstamped_line(text, from, lines), expected) << text << "\nfrom " << from;
        EXPECT_EQ(lines, expected_lines) << text << "\nfrom " << from;
        lines = 3;
        EXPECT_EQ(kWalkScanner.next_then_unstamped_line(text, from, lines), expected) << text << "\nfrom " << from;
        EXPECT_EQ(lines, expected_lines) << text << "\nfrom " << from;
      }
      if (text.find('\n', from) == std::string::npos) break;
    }
  }
}

TEST(KernelLogWalk, MarkerOrUnstampedLineAcrossLongRuns) {
  // Long enough for the vector loop, with the stop at each offset of a block.
  const std::string line = "[   12.345678] systemd[1]: Started session-1.scope\n";
  for (std::size_t lines_before = 0; lines_before < 4; ++lines_before) {
    for (std::size_t pad = 0; pad < 70; ++pad) {
      std::string runs;
      for (std::size_t i = 0; i < lines_before; ++i) runs += line;
      for (const std::string stop : {std::string(pad, 'a') + "Xid (PCI:0000:01:00): 79\n", std::string("unstamped\n"),
                                     "[" + std::string(pad, ' ') + "] AER: x\n"}) {
        const std::string text = runs + "[ 1.0] " + std::string(pad, '.') + "\n" + stop + line + line;
        std::size_t expected_lines = 0;
        std::size_t lines = 0;
        const std::size_t expected = naive_next_or_unstamped(text, 0, expected_lines);
        EXPECT_EQ(kWalkScanner.next_or_unstamped_line(text, 0, lines), expected) << text;
        EXPECT_EQ(lines, expected_lines) << text;
        lines = 0;
        EXPECT_EQ(kWalkScanner.next_then_unstamped_line(text, 0, lines), expected) << text;
        EXPECT_EQ(lines, expected_lines) << text;
      }
    }
  }
}

TEST(KernelLogWalk, MarkersInALineAreThoseItContains) {
  // Lines short enough for the padded vector search and longer, each marker
  // at every offset of a block and at both ends, alone and two together.
  std::mt19937 random(7);
  for (std::size_t length : {2U, 20U, 31U, 32U, 33U, 64U, 100U, 255U, 256U, 257U, 600U}) {
    for (int round = 0; round < 200; ++round) {
      std::string text(length, '.');
      for (char& c : text) c = "ab ]t[ySDXiR:kwdr="[random() % 18];
      for (int n = static_cast<int>(random() % 3); n > 0; --n) {
        const ScanMarker& marker = kWalkMarkers[random() % kWalkMarkers.size()];
        if (marker.text.size() > text.size()) continue;
        text.replace(random() % (text.size() - marker.text.size() + 1), marker.text.size(), marker.text);
      }
      std::uint64_t expected = 0;
      for (std::size_t i = 0; i < kWalkMarkers.size(); ++i) {
        if (text.find(kWalkMarkers[i].text) != std::string::npos) expected |= std::uint64_t{1} << i;
      }
      EXPECT_EQ(kWalkScanner.markers_in(text), expected) << text;
    }
  }
  EXPECT_EQ(kWalkScanner.markers_in(""), 0U);
  EXPECT_EQ(kWalkScanner.markers_in("X"), 0U);
  EXPECT_EQ(kWalkScanner.markers_in("AER: ] type 0"), 0b1100U);
}

// Everything a capture holds, for comparing two.
std::string summary(const Result<KernelLogCapture>& capture) {
  if (!capture) return "error: " + capture.error().message;
  std::string text = capture->source + " lines " + std::to_string(capture->lines) + " skipped " +
                     std::to_string(capture->skipped_lines) + "\n";
  for (const KernelLogEvent& event : capture->events) {
    text += std::string(to_string(event.kind)) + " " + to_string(event.device) + " line " + std::to_string(event.line) +
            " " + event.text + " time " + (event.time_s ? std::to_string(*event.time_s) : "-") + " xid " +
            (event.xid ? std::to_string(*event.xid) : "-") + " port " +
            (event.limiting_port ? to_string(*event.limiting_port) : "-") + " limited " +
            (event.limited_to ? to_string(*event.limited_to) : "-") + " capable " +
            (event.capable ? to_string(*event.capable) : "-");
    for (const std::string& bit : event.error_bits) text += " " + bit;
    text += "\n";
  }
  for (const EnumeratedFunction& function : capture->enumerated) {
    text += "enumerated " + to_string(function.bdf) + " " + std::to_string(function.vendor_id) + ":" +
            std::to_string(function.device_id) + " " + std::to_string(function.class_code) + " " + function.port_type +
            " line " + std::to_string(function.line) + "\n";
  }
  for (const std::string& note : capture->notes) text += "note " + note + "\n";
  return text;
}

std::string summary(const std::vector<CaptureSection>& sections) {
  std::string text;
  for (const CaptureSection& section : sections) {
    text += std::string(to_string(section.format)) + " " + std::to_string(section.offset) + "+" +
            std::to_string(section.size) + " line " + std::to_string(section.first_line) + "\n";
  }
  return text;
}

// A stamped dmesg run of about `bytes`, with a PCIe event now and then.
std::string stamped_log(std::size_t bytes, double& clock) {
  std::string text;
  std::size_t i = 0;
  while (text.size() < bytes) {
    clock += 0.001;
    std::string stamp = "[" + std::to_string(clock) + "] ";
    switch (++i % 50) {
      case 7:
        text += stamp + "pcieport 0000:97:01.0: AER: Corrected error received: 0000:9a:00.0\n";
        text += stamp + "nvidia 0000:9a:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer\n";
        text += stamp + "nvidia 0000:9a:00.0:    [ 0] RxErr                  (First)\n";
        break;
      case 19:
        text += stamp + "pci 0000:9a:00.0: [10de:2330] type 00 class 0x030200 PCIe Endpoint\n";
        break;
      case 31:
        text += stamp + "NVRM: Xid (PCI:0000:9a:00): 79, pid=1234, name=python3, GPU has fallen off the bus.\n";
        break;
      default:
        text += stamp + "systemd[1]: Started session-" + std::to_string(i) + ".scope - Session of User slurm.\n";
    }
  }
  return text;
}

// Kernel log sections as a walker that always walks reads them, beside what
// parse_kernel_log makes of the same sections.
struct Walked {
  CaptureSection section;
  std::string capture;
};

void expect_walk_matches_split(const std::string& text, const std::string& what) {
  std::vector<Walked> walked;
  const KernelLogWalker walker = [&](std::size_t offset, std::size_t first_line) -> std::optional<WalkedSection> {
    const KernelLogWalk walk =
        walk_kernel_log(std::string_view(text).substr(offset), "in", first_line, &ends_kernel_log_at);
    walked.push_back(
        Walked{CaptureSection{CaptureFormat::kKernelLog, offset, walk.bytes, first_line}, summary(walk.capture)});
    return WalkedSection{walk.bytes, walk.lines};
  };
  const auto apart = split_capture_sections(text);
  const auto together = split_capture_sections(text, walker);
  ASSERT_EQ(static_cast<bool>(apart), static_cast<bool>(together)) << what;
  if (!apart) {
    EXPECT_EQ(apart.error().message, together.error().message) << what;
    return;
  }
  EXPECT_EQ(summary(apart.value()), summary(together.value())) << what;
  // Each kernel log section the split returns was walked as it is, and read
  // the same as parse_kernel_log reads it (where that joins no wrapped line).
  for (const CaptureSection& section : apart.value()) {
    if (section.format != CaptureFormat::kKernelLog) continue;
    const std::string_view part = std::string_view(text).substr(section.offset, section.size);
    if (unwrap_kernel_log(part)) continue;
    bool found = false;
    for (const Walked& walk : walked) {
      if (walk.section.offset != section.offset || walk.section.size != section.size ||
          walk.section.first_line != section.first_line) {
        continue;
      }
      found = true;
      EXPECT_EQ(walk.capture, summary(parse_kernel_log(part, "in", section.first_line))) << what;
    }
    // A lone section may be one only after the split's last look at the text
    // as a whole (a kernel log behind a prompt that joins it is walked from 0).
    if (apart->size() > 1) EXPECT_TRUE(found) << what << "\n" << summary(apart.value());
  }
}

TEST(KernelLogWalk, SplitWithAWalkerFindsTheSameSectionsAndCaptures) {
  std::vector<std::pair<std::string, std::string>> texts;
  for (const auto& entry : std::filesystem::directory_iterator(capture_path(""))) {
    texts.emplace_back(entry.path().filename().string(), read_capture(entry.path().filename().string()));
  }
  double clock = 5.0;
  const std::string log = stamped_log(40000, clock);
  const std::string lspci = read_capture("lspci_esc8000a_e12_root_port_40_01_1.txt");
  const std::string smi = read_capture(kSmiBusy);
  const std::size_t fixtures = texts.size();
  for (std::size_t i = 0; i < fixtures; ++i) {
    const std::string name = texts[i].first;
    const std::string capture = texts[i].second;
    texts.emplace_back("log + " + name, log + capture);
    texts.emplace_back(name + " + log", capture + log);
    texts.emplace_back("log + " + name + " + log", log + capture + log);
  }
  texts.emplace_back("prompt, log", "$ sudo dmesg\n\n" + log);
  texts.emplace_back("log, lspci, log, smi, log", log + lspci + log + smi + log);
  texts.emplace_back("log without its last newline", log + "[ 99.000000] the end");
  texts.emplace_back("log, unstamped lines", log + "a note\n\n  \n" + log + "$ lspci -vv\n" + lspci);
  texts.emplace_back("smi, log", smi + log);
  for (const std::string& hostile : hostile_inputs()) texts.emplace_back("hostile", hostile);
  texts.emplace_back("hostile after a log", log + std::string(1000, '['));
  for (const auto& [what, text] : texts) expect_walk_matches_split(text, what);
}

TEST(KernelLogWalk, LargeSectionsAreReadOnceWithTheSameCaptures) {
  // Two logs too large to unwrap, an lspci -vv and nvidia-smi -q between
  // them, and a small one at the end; the text starts with a prompt.
  double clock = 5.0;
  const std::string text = "$ dmesg\n" + stamped_log(kMaxUnwrapBytes + 4096, clock) +
                           read_capture("lspci_esc8000a_e12_root_port_40_01_1.txt") +
                           stamped_log(kMaxUnwrapBytes + 100, clock) + read_capture(kSmiBusy) +
                           stamped_log(5000, clock);
  KernelLogsAhead ahead(text, "big.log");
  const auto sections = split_capture_sections(text, ahead.walker());
  ASSERT_TRUE(sections) << sections.error().message;
  const auto apart = split_capture_sections(text);
  ASSERT_TRUE(apart);
  ASSERT_EQ(summary(sections.value()), summary(apart.value()));
  ASSERT_EQ(sections->size(), 5U) << summary(sections.value());
  // The two large logs were read on the way, exactly as parse_kernel_log reads them.
  for (const std::size_t i : {0U, 2U}) {
    const CaptureSection& section = sections->at(i);
    auto read = ahead.take(section);
    ASSERT_TRUE(read.has_value()) << i;
    EXPECT_EQ(summary(*read), summary(parse_kernel_log(std::string_view(text).substr(section.offset, section.size),
                                                       "big.log", section.first_line)));
    EXPECT_FALSE(ahead.take(section).has_value()) << "taken once";
  }
  // The small one was not: it may be a wrapped paste, which only
  // parse_kernel_log joins.
  EXPECT_FALSE(ahead.take(sections->at(4)).has_value());

  // And diagnose's way through it ends with the same captures.
  KernelLogsAhead again(text, "big.log");
  const auto split = split_capture_sections(text, again.walker());
  ASSERT_TRUE(split);
  Captures with;
  Captures without;
  ASSERT_TRUE(add_capture(text, "big.log", split.value(), with, &again));
  ASSERT_TRUE(add_capture(text, "big.log", apart.value(), without));
  ASSERT_EQ(with.kernel_logs.size(), 3U);
  ASSERT_EQ(without.kernel_logs.size(), 3U);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(summary(with.kernel_logs[i]), summary(without.kernel_logs[i])) << i;
  EXPECT_EQ(with.lspci.size(), without.lspci.size());
  EXPECT_EQ(with.nvidia_smi.size(), without.nvidia_smi.size());
  EXPECT_EQ(with.notes, without.notes);
}

TEST(KernelLogWalk, AWrappedPasteBeforeALargeRestIsStillUnwrapped) {
  // The walker reads the first log (the rest of the text is large) but keeps
  // nothing for it: it is small enough to be a mail, and joined lines count.
  double clock = 5.0;
  const std::string wrapped = read_capture("dmesg_mail_wrapped_matisse_gpu_0a_gen1_x16.txt");
  const std::string text =
      wrapped + read_capture("lspci_esc8000a_e12_root_port_40_01_1.txt") + stamped_log(kMaxUnwrapBytes + 10, clock);
  KernelLogsAhead ahead(text, "mail.txt");
  const auto sections = split_capture_sections(text, ahead.walker());
  ASSERT_TRUE(sections);
  ASSERT_GE(sections->size(), 2U);
  EXPECT_FALSE(ahead.take(sections->front()).has_value());
  Captures captures;
  ASSERT_TRUE(add_capture(text, "mail.txt", sections.value(), captures, &ahead));
  ASSERT_FALSE(captures.kernel_logs.empty());
  EXPECT_EQ(summary(captures.kernel_logs.front()),
            summary(parse_kernel_log(std::string_view(text).substr(0, sections->front().size), "mail.txt", 1)));
  bool joined = false;
  for (const std::string& note : captures.kernel_logs.front().notes)
    joined = joined || note.find("joined") != std::string::npos;
  EXPECT_TRUE(joined);
}

}  // namespace
}  // namespace pcieval::testing

namespace pcieval::testing {
namespace {

TEST(KernelLogWalk, AFunctionIsKnownByItsAddressTextOnlyOnceItWasRead) {
  // The first enumeration line of 0000:00:03.1 is cut (no class): the
  // function is read from the second, and the third (another boot, another
  // id) does not replace it; 0000:00:03.2 shares no text with it.
  const std::string text =
      "[    0.100000] pci 0000:00:03.1: [1022:1483] type 01 clas\n"
      "[    0.200000] pci 0000:00:03.1: [1022:1483] type 01 class 0x060400 PCIe Root Port\n"
      "[    0.300000] pci 0000:00:03.1: [10de:1111] type 00 class 0x030000 PCIe Endpoint\n"
      "[    0.400000] pci 0000:00:03.2: [1022:1483] type 01 class 0x060400 PCIe Root Port\n"
      "[    0.500000] pci 0000:00:03.1: [1022:1483] type 01 class 0x060400 PCIe Root Port\n";
  const auto parsed = parse_kernel_log(text, "boots");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->enumerated.size(), 2U);
  EXPECT_EQ(to_string(parsed->enumerated[0].bdf), "0000:00:03.1");
  EXPECT_EQ(parsed->enumerated[0].line, 2U);
  EXPECT_EQ(parsed->enumerated[0].vendor_id, 0x1022);
  EXPECT_EQ(parsed->enumerated[0].port_type, "PCIe Root Port");
  EXPECT_EQ(to_string(parsed->enumerated[1].bdf), "0000:00:03.2");
  EXPECT_EQ(parsed->enumerated[1].line, 4U);
  EXPECT_EQ(parsed->skipped_lines, 5U);
}

}  // namespace
}  // namespace pcieval::testing
