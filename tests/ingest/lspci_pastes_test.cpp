// lspci -vv as people paste it: blocks cut by elisions and read in pieces,
// the same device twice, and lines behind a prefix (a script's "Card: ", a
// quote, pdsh's host name, line numbers).
#include <gtest/gtest.h>

#include <string>

#include "ingest/capture_test_util.hpp"
#include "ingest/detect.hpp"
#include "ingest/lspci.hpp"

namespace pcieval::testing {
namespace {

constexpr const char* kForumP100 = "lspci_forum_broadwell_p100_elided.txt";
constexpr const char* kCardGrep = "lspci_script_card_grep_2x_rtx3090.txt";
constexpr const char* kPdsh = "lspci_pdsh_icelake_a100_x8_hostname_prefix.txt";
constexpr const char* kMailQuote = "lspci_mail_quote_icelake_a100_x8.txt";
constexpr const char* kCatN = "lspci_cat_n_icelake_a100_x16_numbered.txt";

// "Gen3 x16 / Gen3 x16": capability and negotiated state, or the first error.
std::string link_text(const LspciDevice* device) {
  if (device == nullptr) return "no device";
  if (!device->function.link) return "no link";
  const auto capable = device->function.link->capable();
  const auto negotiated = device->function.link->negotiated();
  if (!capable) return "capable: " + capable.error().message;
  if (!negotiated) return "negotiated: " + negotiated.error().message;
  return to_string(capable.value()) + " / " + to_string(negotiated.value());
}

bool has_note(const LspciDevice& device, const std::string& part) {
  for (const auto& note : device.notes) {
    if (note.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST(LspciPastes, AnElisionPausesTheBlockItDoesNotEndIt) {
  const std::string text =
      "41:00.0 VGA compatible controller: NVIDIA Corporation AD102GL [RTX 6000 Ada Generation] (rev a1)\n"
      "\tControl: I/O- Mem+ BusMaster+\n"
      "\tStatus: Cap+ 66MHz- UDF-\n"
      "[ ... ]\n"
      "\tCapabilities: [60] Express (v2) Legacy Endpoint, MSI 00\n"
      "...\n"
      "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM L1\n"
      "[snip]\n"
      "\n"
      "----\n"
      "\t\tLnkSta:\tSpeed 16GT/s, Width x8 (downgraded)\n";
  const LspciCapture capture = parse_ok(text);
  ASSERT_EQ(capture.devices.size(), 1U);
  EXPECT_EQ(link_text(find(capture, "0000:41:00.0")), "Gen4 x16 / Gen4 x8");
  EXPECT_EQ(capture.skipped_lines, 4U) << "the elisions and the separator are counted, not read";
}

TEST(LspciPastes, ATreeAfterABlockDoesNotContinueIt) {
  // `lspci -tv` lines are indented too, but start with a tree glyph.
  const std::string text = gpu_block("41:00.0", "") +
                           "$ lspci -tv\n"
                           " +-[0000:40]-+-01.1-[41]----00.0  NVIDIA Corporation AD102GL\n"
                           " |           \\-07.1-[42]----00.0  AMD Device 14ac\n";
  const LspciCapture capture = parse_ok(text);
  ASSERT_EQ(capture.devices.size(), 1U);
  EXPECT_EQ(link_text(&capture.devices.front()),
            "negotiated: no LnkSta line in the lspci block (captured with -v, not -vv, or cut short)");
}

TEST(LspciPastes, TheSameDeviceTwiceFillsGapsAndNamesContradictions) {
  const std::string first = gpu_block("41:00.0", "");  // LnkCap only
  const std::string second =
      "41:00.0 VGA compatible controller: NVIDIA Corporation AD102GL [RTX 6000 Ada Generation] (rev a1)\n"
      "\t\tLnkSta:\tSpeed 16GT/s, Width x16\n";
  const std::string third =
      "41:00.0 VGA compatible controller: NVIDIA Corporation AD102GL [RTX 6000 Ada Generation] (rev a1)\n"
      "\t\tLnkSta:\tSpeed 2.5GT/s, Width x16\n";
  const std::string text = first + second + third;
  const LspciCapture capture = parse_ok(text, "paste.txt");
  ASSERT_EQ(capture.devices.size(), 1U);
  const LspciDevice& gpu = capture.devices.front();
  EXPECT_EQ(link_text(&gpu), "Gen4 x16 / Gen4 x16") << "the later excerpt fills the missing LnkSta";
  const std::size_t second_line = line_of(text, "VGA compatible controller", 1);
  const std::size_t third_line = line_of(text, "VGA compatible controller", 2);
  // The Gen1 reading contradicts the Gen4 one: the note cites the lines each
  // was read on, not the first block's header.
  const std::string expected = "LnkSta speed: paste.txt:" + std::to_string(second_line) +
                               " reads Gen4, paste.txt:" + std::to_string(third_line) + " reads Gen1";
  EXPECT_TRUE(has_note(gpu, expected)) << expected;
}

TEST(LspciPastes, ForumPostWithElisionsSeparatorsAndASecondExcerpt) {
  const std::string text = read_capture(kForumP100);
  const LspciCapture capture = parse_ok(text, "forum.txt");
  ASSERT_EQ(capture.devices.size(), 2U);
  const LspciDevice* port = find(capture, "0000:00:02.0");
  const LspciDevice* gpu = find(capture, "0000:02:00.0");
  ASSERT_NE(port, nullptr);
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(link_text(port), "Gen3 x16 / Gen3 x16");
  EXPECT_EQ(link_text(gpu), "Gen3 x16 / Gen3 x16");
  EXPECT_EQ(port->function.role, PortRole::kRootPort);
  EXPECT_EQ(gpu->function.kind, DeviceKind::kGpu);
  ASSERT_TRUE(gpu->function.parent);
  EXPECT_EQ(to_string(*gpu->function.parent), "0000:00:02.0");
  EXPECT_EQ(gpu->line, line_of(text, "02:00.0 3D controller"));
  EXPECT_FALSE(has_note(*gpu, "ends before"));
}

TEST(LspciPastes, ScriptGrepWithCardLabelsIsDetectedAndRead) {
  const std::string text = read_capture(kCardGrep);
  const auto format = detect_capture_format(text);
  ASSERT_TRUE(format) << format.error().message;
  EXPECT_EQ(format.value(), CaptureFormat::kLspci);
  const auto sections = split_capture_sections(text);
  ASSERT_TRUE(sections) << sections.error().message;
  ASSERT_EQ(sections->size(), 1U);
  EXPECT_EQ(sections->front().format, CaptureFormat::kLspci);

  const LspciCapture capture = parse_ok(text);
  ASSERT_EQ(capture.devices.size(), 2U);
  EXPECT_EQ(link_text(find(capture, "0000:01:00.0")), "Gen4 x16 / Gen4 x16");
  EXPECT_EQ(link_text(find(capture, "0000:41:00.0")), "Gen4 x16 / Gen4 x8");
  for (const LspciDevice& device : capture.devices) {
    EXPECT_EQ(device.function.kind, DeviceKind::kGpu);
    EXPECT_FALSE(device.role_known) << "no Express line named the port type";
  }
}

TEST(LspciPastes, PdshHostNamePrefix) {
  const std::string text = read_capture(kPdsh);
  EXPECT_TRUE(looks_like_lspci_vv(text));
  const LspciCapture capture = parse_ok(text, "pdsh.txt");
  ASSERT_EQ(capture.devices.size(), 2U);
  EXPECT_EQ(link_text(find(capture, "0000:16:02.0")), "Gen4 x16 / Gen4 x8");
  const LspciDevice* gpu = find(capture, "0000:17:00.0");
  EXPECT_EQ(link_text(gpu), "Gen4 x16 / Gen4 x8");
  ASSERT_TRUE(gpu->function.parent);
  EXPECT_EQ(to_string(*gpu->function.parent), "0000:16:02.0");
  EXPECT_EQ(gpu->line, line_of(text, "gpu-a23: 17:00.0 3D controller"));
}

TEST(LspciPastes, MailQuotePrefix) {
  const std::string text = read_capture(kMailQuote);
  const auto format = detect_capture_format(text);
  ASSERT_TRUE(format);
  EXPECT_EQ(format.value(), CaptureFormat::kLspci);
  const LspciCapture capture = parse_ok(text);
  ASSERT_EQ(capture.devices.size(), 2U);
  EXPECT_EQ(link_text(find(capture, "0000:17:00.0")), "Gen4 x16 / Gen4 x8");
  EXPECT_EQ(find(capture, "0000:16:02.0")->function.role, PortRole::kRootPort);
}

TEST(LspciPastes, CatDashNLineNumbers) {
  const std::string text = read_capture(kCatN);
  const LspciCapture capture = parse_ok(text);
  ASSERT_EQ(capture.devices.size(), 2U);
  EXPECT_EQ(link_text(find(capture, "0000:16:02.0")), "Gen4 x16 / Gen4 x16");
  EXPECT_EQ(link_text(find(capture, "0000:17:00.0")), "Gen4 x16 / Gen4 x16");
  EXPECT_EQ(find(capture, "0000:17:00.0")->function.role, PortRole::kEndpoint);
}

TEST(LspciPastes, APrefixIsReadOffTheHeaderNeverGuessedInsideALine) {
  // Words before a slot are no prefix unless they have a prefix's shape.
  const std::string prose =
      "see 01:00.0 VGA compatible controller: NVIDIA Corporation GA102 [GeForce RTX 3090] (rev a1)\n"
      "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM L1\n";
  EXPECT_FALSE(looks_like_lspci_vv(prose));
  EXPECT_FALSE(parse_lspci(prose));
  // A label is stripped from the lines that carry it only: "Card: " heads the
  // block, its detail lines carry none.
  const std::string labelled =
      "Card: 01:00.0 VGA compatible controller: NVIDIA Corporation GA102 [GeForce RTX 3090] (rev a1)\n"
      "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM L1\n"
      "Card: \t\tLnkSta:\tSpeed 8GT/s, Width x16\n";
  const LspciCapture capture = parse_ok(labelled);
  ASSERT_EQ(capture.devices.size(), 1U);
  EXPECT_EQ(link_text(&capture.devices.front()), "Gen4 x16 / Gen3 x16");
}

}  // namespace
}  // namespace pcieval::testing
