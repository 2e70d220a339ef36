// The format table: every fixture is told apart by content, --format names
// round-trip, and what is no capture says which formats are read.
#include "ingest/detect.hpp"

#include <gtest/gtest.h>

#include <set>

#include "ingest/capture_test_util.hpp"

namespace pcieval::testing {
namespace {

TEST(Detect, EveryFixtureByContent) {
  const std::vector<std::pair<std::string, CaptureFormat>> fixtures = {
      {kEscFull, CaptureFormat::kLspci},
      {kIcelakePlx, CaptureFormat::kLspci},
      {kSmiBusy, CaptureFormat::kNvidiaSmi},
      {kSmiIdleXml, CaptureFormat::kNvidiaSmiXml},
      {kDmesgEsc, CaptureFormat::kKernelLog},
      {kJournalIcelake, CaptureFormat::kKernelLog},
      // Issue 28's peer-to-peer and path-settings captures.
      {"lspci_vvv_supermicro_7048gr_plx_acs_redirect_mps128.txt", CaptureFormat::kLspci},
      {"lspci_grep_acsctl_supermicro_7048gr_after_setpci.txt", CaptureFormat::kLspci},
      {"p2pbw_nccl814_6gpu_p2p_enabled_slower.txt", CaptureFormat::kP2pBandwidthLatencyTest},
      {"p2pbw_nccl257_4x1080ti_cannot_across_sockets.txt", CaptureFormat::kP2pBandwidthLatencyTest},
      {"topo_p2p_r_genoa_8gpu_all_ok.txt", CaptureFormat::kNvidiaSmiTopoP2p},
      {"topo_p2p_rw_2gpu_blackwell_phb_cns.txt", CaptureFormat::kNvidiaSmiTopoP2p},
  };
  for (const auto& [name, format] : fixtures) {
    const auto detected = detect_capture_format(read_capture(name));
    ASSERT_TRUE(detected) << name << ": " << detected.error().message;
    EXPECT_EQ(detected.value(), format) << name;
  }
}

TEST(Detect, NamesRoundTripAndAreUnique) {
  std::set<std::string_view> names;
  for (const CaptureFormatInfo& info : capture_formats()) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_EQ(capture_format_from_name(info.name).value(), info.format);
    EXPECT_EQ(to_string(info.format), info.name);
  }
  for (std::string_view name : {"lspci", "nvidia-smi", "nvidia-smi-xml", "kernel-log"}) {
    EXPECT_TRUE(names.contains(name)) << name;
  }
  const auto unknown = capture_format_from_name("dmesg");
  ASSERT_FALSE(unknown);
  for (const CaptureFormatInfo& info : capture_formats()) {
    EXPECT_NE(unknown.error().message.find(std::string(info.name)), std::string::npos) << unknown.error().message;
  }
}

TEST(Detect, NoCaptureNamesTheSupportedFormats) {
  for (const std::string& input : hostile_inputs()) {
    const auto detected = detect_capture_format(input);
    if (detected) continue;  // random bytes may hold a '[..]' that reads as a dmesg timestamp
    EXPECT_NE(detected.error().message.find("lspci -vv"), std::string::npos);
    EXPECT_NE(detected.error().message.find("nvidia-smi -q -x"), std::string::npos);
  }
  EXPECT_FALSE(detect_capture_format("{\"schema_version\": \"1.0.0\"}\n"));
  EXPECT_FALSE(detect_capture_format("00:00.0 Host bridge: Intel Corporation Device 09a2 (rev 04)\n"));
}

TEST(Detect, MixedPasteTakesTheMoreSpecificFormat) {
  // A ticket with nvidia-smi -q followed by a few dmesg lines: nvidia-smi's
  // banner is the more specific marker; kernel lines inside it are skipped.
  const std::string mixed = read_capture(kSmiBusy) + read_capture(kDmesgEsc);
  EXPECT_EQ(detect_capture_format(mixed).value(), CaptureFormat::kNvidiaSmi);
  const std::string lspci_then_dmesg = read_capture(kIcelakePlx) + read_capture(kJournalIcelake);
  EXPECT_EQ(detect_capture_format(lspci_then_dmesg).value(), CaptureFormat::kLspci);
}

TEST(Detect, OnlyThePrefixIsRead) {
  // A marker beyond kDetectPrefixBytes is not looked for: detection stays
  // cheap on a 100 MB log.
  std::string text(kDetectPrefixBytes, 'x');
  text += "\n[    1.0] pci 0000:01:00.0: PCIe Bus Error: severity=Corrected\n";
  EXPECT_FALSE(detect_capture_format(text));
}

}  // namespace
}  // namespace pcieval::testing
