// Issue 30: kernel lines and nvidia-smi output as people paste them into
// tickets, mails and bug reports, and listings that hold no link state. Each
// fixture's header names the public example of its form.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "ingest/capture_test_util.hpp"
#include "ingest/captures.hpp"
#include "ingest/detect.hpp"
#include "ingest/kernel_log.hpp"
#include "ingest/nvidia_smi.hpp"

namespace pcieval::testing {
namespace {

constexpr const char* kFellOffThreeLines = "dmesg_l40s_b3_fell_off_bus_three_lines_no_xid.txt";
constexpr const char* kMarkdownReport = "ticket_md_egpu_rtx5090_63_00_0_uncorrectable.txt";
constexpr const char* kMailWrapped = "dmesg_mail_wrapped_matisse_gpu_0a_gen1_x16.txt";
constexpr const char* kNotebookSmi = "nvsmi_notebook_indented_colab_t4_busy.txt";
constexpr const char* kNotimeCorrectable = "dmesg_notime_correctable_two_devices.txt";
constexpr const char* kLspciTree = "lspci_tv_tree_wrx80_2gpu.txt";
constexpr const char* kLspciList = "lspci_nn_list_wrx80_2gpu.txt";

TEST(KernelLogPastes, FellOffTheBusOverThreeLinesIsOneEventAtTheLineNamingTheGpu) {
  const std::string text = read_capture(kFellOffThreeLines);
  const auto parsed = parse_kernel_log(text, "dmesg.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->events.size(), 1U);
  EXPECT_EQ(parsed->events[0].kind, KernelEventKind::kGpuFellOffBus);
  EXPECT_EQ(to_string(parsed->events[0].device), "0000:b3:00.0");
  EXPECT_EQ(parsed->events[0].line, line_of(text, "NVRM: The NVIDIA GPU 0000:b3:00.0"));
  EXPECT_DOUBLE_EQ(parsed->events[0].time_s.value(), 1611.402277);
}

TEST(KernelLogPastes, FellOffTheBusInEveryLoggersForm) {
  // journalctl stamps each of the three lines; an older driver prints one.
  for (const std::string text :
       {"Oct 25 03:14:07 gpu-b7 kernel: NVRM: The NVIDIA GPU 0000:b3:00.0\n"
        "Oct 25 03:14:07 gpu-b7 kernel: NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
        "Oct 25 03:14:07 gpu-b7 kernel: NVRM: fallen off the bus and is not responding to commands.\n",
        "[ 12.0] NVRM: The NVIDIA GPU 0000:b3:00.0 (PCI ID: 10de:26b5) installed in this system has fallen off "
        "the bus and is not responding to commands.\n"}) {
    const auto parsed = parse_kernel_log(text, "log");
    ASSERT_TRUE(parsed) << parsed.error().message;
    ASSERT_EQ(parsed->events.size(), 1U) << text;
    EXPECT_EQ(parsed->events[0].kind, KernelEventKind::kGpuFellOffBus);
    EXPECT_EQ(to_string(parsed->events[0].device), "0000:b3:00.0");
    EXPECT_EQ(parsed->events[0].line, 1U);
  }
  // The driver's other messages that begin so are no event.
  const auto unsupported = parse_kernel_log(
      "[ 3.0] NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:1b80)\n"
      "               NVRM: installed in this system is not supported by the\n"
      "               NVRM: NVIDIA 580.65 driver release.\n",
      "log");
  ASSERT_TRUE(unsupported);
  EXPECT_TRUE(unsupported->events.empty());
}

TEST(KernelLogPastes, QuotedLinesAfterProseAreAKernelLog) {
  const std::string text = read_capture(kMarkdownReport);
  const auto sections = split_capture_sections(text);
  ASSERT_TRUE(sections) << sections.error().message;
  ASSERT_EQ(sections->size(), 1U);
  EXPECT_EQ(sections->front().format, CaptureFormat::kKernelLog);
  const auto parsed = parse_kernel_log(text, "report.md");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->events.size(), 1U);
  EXPECT_EQ(parsed->events[0].kind, KernelEventKind::kAerUncorrectedNonFatal);
  EXPECT_EQ(to_string(parsed->events[0].device), "0000:63:00.0");
  EXPECT_EQ(parsed->events[0].line, line_of(text, "Uncorrectable (Non-Fatal) error received"));
}

TEST(KernelLogPastes, MailQuotedLinesAfterProseAreAKernelLog) {
  const std::string text =
      "Hi all,\n\nsince the BIOS update our node hangs under load. From the log:\n\n"
      "> pcieport 0000:00:01.2: AER: Uncorrectable (Non-Fatal) error received from 0000:63:00.0\n"
      "> nvidia 0000:63:00.0: AER: can't recover (no error_detected callback)\n"
      "> pcieport 0000:62:00.0: AER: device recovery failed\n\nAny idea?\n";
  const auto detected = detect_capture_format(text);
  ASSERT_TRUE(detected) << detected.error().message;
  EXPECT_EQ(detected.value(), CaptureFormat::kKernelLog);
  const auto parsed = parse_kernel_log(text, "mail");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->events.size(), 1U);
  EXPECT_EQ(to_string(parsed->events[0].device), "0000:63:00.0");
}

TEST(KernelLogPastes, UncorrectableAnnouncementAndItsDetailAreOneError) {
  const std::string text =
      "[ 57.01] pcieport 0000:00:1d.2: AER: Uncorrected (Non-Fatal) error received: 0000:05:00.0\n"
      "[ 57.02] rtw 0000:05:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, "
      "(Completer ID)\n"
      "[ 57.03] rtw 0000:05:00.0:    [15] CmpltAbrt              (First)\n";
  const auto parsed = parse_kernel_log(text, "log");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->events.size(), 1U);
  EXPECT_EQ(parsed->events[0].kind, KernelEventKind::kAerUncorrectedNonFatal);
  EXPECT_EQ(parsed->events[0].line, 2U);
  EXPECT_EQ(parsed->events[0].error_bits, std::vector<std::string>{"CmpltAbrt"});
}

TEST(KernelLogPastes, MailWrappedLinesAreJoinedWhereTheJoinIsAMessage) {
  const std::string text = read_capture(kMailWrapped);
  const auto parsed = parse_kernel_log(text, "mail.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->events.size(), 1U);
  const KernelLogEvent& limited = parsed->events[0];
  EXPECT_EQ(limited.kind, KernelEventKind::kBandwidthLimited);
  EXPECT_EQ(to_string(limited.device), "0000:0a:00.0");
  EXPECT_EQ(to_string(limited.limiting_port.value()), "0000:00:03.1");
  EXPECT_EQ(limited.limited_to, (LinkState{PcieGen::kGen1, 16}));
  EXPECT_EQ(limited.capable, (LinkState{PcieGen::kGen3, 16}));
  EXPECT_EQ(limited.line, line_of(text, "available PCIe bandwidth, limited by"));
  // The enumeration lines say what each function is, the port type joined
  // back from its continuation ("PCIe Root" / "Port").
  const auto find = [&](const std::string& bdf) {
    return std::find_if(parsed->enumerated.begin(), parsed->enumerated.end(),
                        [&](const EnumeratedFunction& f) { return to_string(f.bdf) == bdf; });
  };
  ASSERT_NE(find("0000:00:03.1"), parsed->enumerated.end());
  EXPECT_EQ(find("0000:00:03.1")->class_code, 0x060400U);
  EXPECT_EQ(find("0000:00:03.1")->port_type, "PCIe Root Port");
  ASSERT_NE(find("0000:0a:00.0"), parsed->enumerated.end());
  EXPECT_EQ(find("0000:0a:00.0")->vendor_id, 0x10deU);
  EXPECT_EQ(find("0000:0a:00.0")->class_code, 0x030000U);
  const bool said = std::any_of(parsed->notes.begin(), parsed->notes.end(), [](const std::string& note) {
    return note.find("joined 4 lines without a time stamp") != std::string::npos;
  });
  EXPECT_TRUE(said);
}

TEST(KernelLogPastes, UnwrapLeavesLogsWithoutWrappedMessagesAlone) {
  for (const char* name : {kDmesgEsc, kJournalIcelake, kFellOffThreeLines}) {
    EXPECT_FALSE(unwrap_kernel_log(read_capture(name))) << name;
  }
  // A marker the break split in two is joined too, and the line count stays.
  const std::string split =
      "[ 0.5] pci 0000:02:00.0: 31.504 Gb/s available PCIe\n"
      "bandwidth, limited by 8.0 GT/s PCIe x4 link at 0000:00:1c.4 (capable of 126.016 Gb/s with 8.0 GT/s PCIe x16 "
      "link)\n";
  const auto unwrapped = unwrap_kernel_log(split);
  ASSERT_TRUE(unwrapped);
  EXPECT_EQ(std::count(unwrapped->begin(), unwrapped->end(), '\n'), 2);
  const auto parsed = parse_kernel_log(split, "split");
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->events.size(), 1U);
  EXPECT_EQ(parsed->events[0].limited_to, (LinkState{PcieGen::kGen3, 4}));
}

TEST(KernelLogPastes, CorrectableErrorsWithoutTimeStampsAreRead) {
  const auto parsed = parse_kernel_log(read_capture(kNotimeCorrectable), "notime.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->events.size(), 3U);
  for (const KernelLogEvent& event : parsed->events) {
    EXPECT_EQ(event.kind, KernelEventKind::kAerCorrected);
    EXPECT_FALSE(event.time_s);
  }
  EXPECT_EQ(to_string(parsed->events[1].device), "0000:c2:00.0");
}

TEST(NvidiaSmiPastes, NotebookIndentedOutputIsRead) {
  const std::string text = read_capture(kNotebookSmi);
  EXPECT_EQ(detect_capture_format(text).value(), CaptureFormat::kNvidiaSmi);
  const auto parsed = parse_nvidia_smi(text, "notebook.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->gpus.size(), 1U);
  const NvidiaSmiGpu& gpu = parsed->gpus[0];
  EXPECT_EQ(to_string(gpu.bdf), "0000:00:04.0");
  EXPECT_EQ(gpu.nvml.current_gen, 3);
  EXPECT_EQ(gpu.nvml.max_width, 16);
  EXPECT_EQ(gpu.nvml.pstate, 0);
  EXPECT_EQ(gpu.line, line_of(text, "GPU 00000000:00:04.0"));
  // Without the banner, the indented block is still nvidia-smi -q.
  const std::string bare = text.substr(text.find("    GPU 0000"));
  EXPECT_EQ(detect_capture_format(bare).value(), CaptureFormat::kNvidiaSmi);
}

TEST(Listings, TreesAndListsAreToldApartFromCapturesWithLinks) {
  EXPECT_EQ(detect_capture_format(read_capture(kLspciTree)).value(), CaptureFormat::kLspciTree);
  EXPECT_EQ(detect_capture_format(read_capture(kLspciList)).value(), CaptureFormat::kLspciList);
  // lspci -vv, which holds a tree's and a list's lines too, stays lspci.
  EXPECT_EQ(detect_capture_format(read_capture(kEscFull)).value(), CaptureFormat::kLspci);
  EXPECT_EQ(detect_capture_format(read_capture(kDmesgEsc)).value(), CaptureFormat::kKernelLog);
  Captures captures;
  const std::string tree = read_capture(kLspciTree);
  ASSERT_TRUE(add_capture(tree, "tree.txt", split_capture_sections(tree).value(), captures));
  ASSERT_EQ(captures.listings.size(), 1U);
  const std::string line = linkless_listing_text(captures.listings[0]);
  EXPECT_NE(line.find("no link state"), std::string::npos) << line;
  EXPECT_NE(line.find("lspci -vv"), std::string::npos) << line;
}

}  // namespace
}  // namespace pcieval::testing
