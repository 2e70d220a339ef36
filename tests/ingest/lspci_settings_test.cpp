// The settings lspci -vvv shows on a port (issue 28): payload sizes, read
// request size, relaxed ordering, ASPM and ACS, read into
// PortLinkReading::settings; "needs root" where lspci could not read them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ingest/capture_evidence.hpp"
#include "ingest/detect.hpp"
#include "ingest/lspci.hpp"
#include "ingest/lspci_test_util.hpp"

namespace pcieval {
namespace {

using testing::find;
using testing::read_capture;

constexpr const char* kPlxRedirect = "lspci_vvv_supermicro_7048gr_plx_acs_redirect_mps128.txt";
constexpr const char* kGrepAfterFix = "lspci_grep_acsctl_supermicro_7048gr_after_setpci.txt";

const PortSettings& settings_of(const LspciCapture& capture, const std::string& address) {
  const LspciDevice* device = find(capture, address);
  if (device == nullptr || !device->function.link) throw std::runtime_error("no link for " + address);
  const auto& settings = device->function.link->settings;
  if (!settings) throw std::runtime_error(address + ": " + settings.error().message);
  return settings.value();
}

constexpr std::uint16_t kRedirectBits =
    kAcsSourceValidation | kAcsRequestRedirect | kAcsCompletionRedirect | kAcsUpstreamForwarding;

TEST(LspciSettings, PlxDownstreamPortsRedirectPeerTraffic) {
  const auto parsed = parse_lspci(read_capture(kPlxRedirect), "plx.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  for (const char* port : {"0000:04:08.0", "0000:04:10.0"}) {
    const PortSettings& settings = settings_of(parsed.value(), port);
    ASSERT_TRUE(settings.acs) << port << ": " << settings.acs.error().message;
    ASSERT_TRUE(settings.acs.value().has_value()) << port;
    const AcsRegisters& acs = *settings.acs.value();
    EXPECT_EQ(acs.control, kRedirectBits) << port;
    EXPECT_EQ(acs.capability, 0x007f) << port;  // all seven bits on the PEX 8747
    EXPECT_TRUE(acs.redirects_peer_traffic()) << port;
    EXPECT_EQ(settings.max_payload_supported_bytes, 2048) << port;
    EXPECT_EQ(settings.max_payload_bytes, 128) << port;
    EXPECT_EQ(settings.max_read_request_bytes, 128) << port;
    EXPECT_EQ(settings.relaxed_ordering, false) << port;
    EXPECT_EQ(settings.aspm, AspmControl::kDisabled) << port;
  }
  // The root port: redirect too, without EgressCtrl/DirectTrans in its capability.
  const PortSettings& root = settings_of(parsed.value(), "0000:00:02.0");
  ASSERT_TRUE(root.acs && root.acs.value());
  EXPECT_EQ(root.acs.value()->capability, 0x001f);
  EXPECT_EQ(root.max_payload_supported_bytes, 256);
  EXPECT_EQ(root.max_payload_bytes, 128);
}

TEST(LspciSettings, EveryPortOnAGpusPathCarriesItsSettingsIntoTheEvidence) {
  const auto parsed = parse_lspci(read_capture(kPlxRedirect), "plx.txt");
  ASSERT_TRUE(parsed);
  const Evidence evidence = evidence_from_lspci(parsed.value());
  const DeviceRecord* gpu = find_device(evidence, testing::bdf("0000:06:00.0"));
  ASSERT_NE(gpu, nullptr);
  ASSERT_EQ(gpu->path.size(), 2u);  // GPU to 04:10.0, 03:00.0 to 00:02.0
  const Link& own = gpu->path[0];
  EXPECT_EQ(to_string(own.upstream), "0000:04:10.0");
  ASSERT_TRUE(own.upstream_end.settings);
  ASSERT_TRUE(own.upstream_end.settings->acs && own.upstream_end.settings->acs.value());
  EXPECT_TRUE(own.upstream_end.settings->acs.value()->redirects_peer_traffic());
  ASSERT_TRUE(own.downstream_end.settings);
  EXPECT_EQ(own.downstream_end.settings->max_payload_bytes, 128);
  const Link& uplink = gpu->path[1];
  ASSERT_TRUE(uplink.upstream_end.settings);
  EXPECT_EQ(uplink.upstream_end.settings->max_payload_supported_bytes, 256);
  EXPECT_EQ(uplink.downstream_end.settings->max_payload_supported_bytes, 2048);
}

// The real captures of the shared corpus (markdown pastes of sudo lspci
// -vvv): every line that looks like a setting reads, and every port with an
// Express capability has its settings.
TEST(LspciSettings, CorpusCapturesReadWithoutUnreadableLines) {
  for (const char* name : {"lspci_esc8000a_e12_4xrtx6000ada_cx7_idle_speed_downgraded.txt",
                           "lspci_puget_wrx90_2xrtx6000ada_idle_speed_downgraded.txt"}) {
    std::ifstream in(testing::corpus_path(name));
    if (!in) GTEST_SKIP() << "the shared corpus is not on this machine";
    std::stringstream text;
    text << in.rdbuf();
    const auto parsed = parse_lspci(text.str(), name);
    ASSERT_TRUE(parsed) << name;
    std::size_t with_settings = 0;
    for (const LspciDevice& device : parsed->devices) {
      for (const auto& note : device.notes) EXPECT_FALSE(note.starts_with("unreadable ")) << name << ": " << note;
      if (device.function.link && device.function.link->settings) {
        ++with_settings;
        EXPECT_TRUE(device.function.link->settings->aspm.has_value()) << name;
      }
    }
    EXPECT_GT(with_settings, 0u) << name;
  }
}

TEST(LspciSettings, NewFormatsHaveNames) {
  for (const char* name : {"p2pbandwidthlatencytest", "nvidia-smi-topo-p2p"}) {
    const auto format = capture_format_from_name(name);
    ASSERT_TRUE(format) << name;
    EXPECT_EQ(to_string(format.value()), name);
  }
}

TEST(LspciSettings, DevicesWithoutAcsAmongExtendedCapabilitiesHaveNone) {
  const auto parsed = parse_lspci(read_capture(kPlxRedirect), "plx.txt");
  ASSERT_TRUE(parsed);
  // The GPUs and the switch's upstream port list capabilities at 0x100 and
  // above, none of them ACS: no ACS capability, which is not an error.
  for (const char* address : {"0000:05:00.0", "0000:06:00.0", "0000:03:00.0"}) {
    const PortSettings& settings = settings_of(parsed.value(), address);
    ASSERT_TRUE(settings.acs) << address << ": " << settings.acs.error().message;
    EXPECT_FALSE(settings.acs.value().has_value()) << address;
  }
  const PortSettings& gpu = settings_of(parsed.value(), "0000:05:00.0");
  EXPECT_EQ(gpu.max_payload_supported_bytes, 256);
  EXPECT_EQ(gpu.max_payload_bytes, 128);
  EXPECT_EQ(gpu.max_read_request_bytes, 512);
  EXPECT_EQ(gpu.relaxed_ordering, true);
  EXPECT_EQ(gpu.aspm, AspmControl::kDisabled);
}

TEST(LspciSettings, GrepOfAcsCtlIsReadWhereEachLineHasItsDevice) {
  const auto parsed = parse_lspci(read_capture(kGrepAfterFix), "grep.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  for (const char* port : {"0000:04:08.0", "0000:04:10.0"}) {
    const PortSettings& settings = settings_of(parsed.value(), port);
    ASSERT_TRUE(settings.acs && settings.acs.value()) << port;
    EXPECT_EQ(settings.acs.value()->control, 0) << port;
    EXPECT_FALSE(settings.acs.value()->redirects_peer_traffic()) << port;
    // Nothing else was in the grep.
    EXPECT_FALSE(settings.max_payload_bytes.has_value());
    EXPECT_FALSE(settings.aspm.has_value());
  }
  EXPECT_EQ(settings_of(parsed.value(), "0000:00:02.0").acs.value()->control, kRedirectBits);
  // The two ACSCtl lines after the second prompt name no device: they are
  // not given to 06:00.0, the last header above them.
  const LspciDevice* gpu = find(parsed.value(), "0000:06:00.0");
  EXPECT_EQ(gpu, nullptr);
  // Devices without ACS printed their header only: no block at all.
  EXPECT_EQ(find(parsed.value(), "0000:03:00.0"), nullptr);
}

TEST(LspciSettings, AccessDeniedNeedsRootNeverOff) {
  const std::string text =
      "17:00.0 3D controller: NVIDIA Corporation GH100 [H100 PCIe] (rev a1)\n"
      "\tSubsystem: NVIDIA Corporation Device 1839\n"
      "\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR- FastB2B- DisINTx+\n"
      "\tStatus: Cap+ 66MHz- UDF- FastB2B- ParErr- DEVSEL=fast >TAbort- <TAbort- <MAbort- >SERR- <PERR- INTx-\n"
      "\tCapabilities: <access denied>\n"
      "\tKernel driver in use: nvidia\n";
  const auto parsed = parse_lspci(text, "user.txt");
  ASSERT_TRUE(parsed);
  const LspciDevice* gpu = find(parsed.value(), "0000:17:00.0");
  ASSERT_NE(gpu, nullptr);
  ASSERT_TRUE(gpu->function.link);
  ASSERT_FALSE(gpu->function.link->settings);
  EXPECT_EQ(gpu->function.link->settings.error().message, kSettingsNeedRoot);
}

TEST(LspciSettings, ExtendedSpaceNotShownIsNotNoAcs) {
  // A block with its Express capability but no capability at 0x100 or above
  // (a grep, a cut paste): whether the port has ACS is not known.
  const std::string text =
      "40:01.1 PCI bridge: Advanced Micro Devices, Inc. [AMD] Starship/Matisse GPP Bridge\n"
      "\tCapabilities: [58] Express (v2) Root Port (Slot+), MSI 00\n"
      "\t\tDevCap:\tMaxPayload 512 bytes, PhantFunc 0\n"
      "\t\tDevCtl:\tCorrErr+ NonFatalErr+ FatalErr+ UnsupReq+\n"
      "\t\t\tRlxdOrd+ ExtTag+ PhantFunc- AuxPwr- NoSnoop+\n"
      "\t\t\tMaxPayload 256 bytes, MaxReadReq 512 bytes\n"
      "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM L1, Exit Latency L1 <64us\n"
      "\t\tLnkCtl:\tASPM L1 Enabled; RCB 64 bytes, Disabled- CommClk+\n"
      "\t\tLnkSta:\tSpeed 16GT/s, Width x16\n";
  const auto parsed = parse_lspci(text, "cut.txt");
  ASSERT_TRUE(parsed);
  const PortSettings& settings = settings_of(parsed.value(), "0000:40:01.1");
  EXPECT_EQ(settings.max_payload_supported_bytes, 512);
  EXPECT_EQ(settings.max_payload_bytes, 256);
  EXPECT_EQ(settings.max_read_request_bytes, 512);
  EXPECT_EQ(settings.aspm, AspmControl::kL1);
  ASSERT_FALSE(settings.acs);
  EXPECT_NE(settings.acs.error().message.find("extended capabilities"), std::string::npos);
}

TEST(LspciSettings, AspmWordsAndUnreadableLines) {
  for (const auto& [words, aspm] :
       {std::pair{"Disabled", AspmControl::kDisabled}, std::pair{"L0s Enabled", AspmControl::kL0s},
        std::pair{"L1 Enabled", AspmControl::kL1}, std::pair{"L0s L1 Enabled", AspmControl::kL0sL1}}) {
    const std::string text = std::string("01:00.0 VGA compatible controller: NVIDIA Corporation AD102\n") +
                             "\tCapabilities: [60] Express (v2) Legacy Endpoint, MSI 00\n"
                             "\t\tLnkCtl:\tASPM " +
                             words + "; RCB 64 bytes, LnkDisable- CommClk+\n\t\tLnkSta:\tSpeed 16GT/s, Width x16\n";
    const auto parsed = parse_lspci(text);
    ASSERT_TRUE(parsed);
    EXPECT_EQ(settings_of(parsed.value(), "0000:01:00.0").aspm, aspm) << words;
  }
  // A payload size that is no power of two and an ACS line cut short read
  // as nothing, with a note, never as a value.
  const std::string text =
      "01:00.0 VGA compatible controller: NVIDIA Corporation AD102\n"
      "\tCapabilities: [60] Express (v2) Legacy Endpoint, MSI 00\n"
      "\t\tDevCap:\tMaxPayload 384 bytes, PhantFunc 0\n"
      "\t\tLnkSta:\tSpeed 16GT/s, Width x16\n"
      "\tCapabilities: [2a0 v1] Access Control Services\n"
      "\t\tACSCap:\tSrcValid+ TransBlk+ ReqRedir+\n"
      "\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+\n";
  const auto parsed = parse_lspci(text);
  ASSERT_TRUE(parsed);
  const LspciDevice* device = find(parsed.value(), "0000:01:00.0");
  ASSERT_NE(device, nullptr);
  ASSERT_TRUE(device->function.link);
  // Nothing read at all: an error, not a PortSettings of nullopts.
  ASSERT_FALSE(device->function.link->settings);
  std::size_t unreadable = 0;
  for (const auto& note : device->notes) unreadable += note.starts_with("unreadable ");
  EXPECT_EQ(unreadable, 3u);
}

TEST(LspciSettings, AcsListedWithoutRegistersIsNotRead) {
  // lspci -v (one v) names the capability and prints no registers.
  const std::string text =
      "04:08.0 PCI bridge: PLX Technology, Inc. PEX 8747 48-Lane, 5-Port PCI Express Gen 3 (8.0 GT/s) Switch\n"
      "\tBus: primary=04, secondary=05, subordinate=05, sec-latency=0\n"
      "\tCapabilities: [68] Express (v2) Downstream Port (Slot+), MSI 00\n"
      "\t\tDevCtl:\tReport errors: Correctable- Non-Fatal- Fatal- Unsupported-\n"
      "\t\t\tMaxPayload 256 bytes, MaxReadReq 128 bytes\n"
      "\tCapabilities: [f24 v1] Access Control Services\n";
  const auto parsed = parse_lspci(text);
  ASSERT_TRUE(parsed);
  const PortSettings& settings = settings_of(parsed.value(), "0000:04:08.0");
  EXPECT_EQ(settings.max_payload_bytes, 256);
  ASSERT_FALSE(settings.acs);
  EXPECT_NE(settings.acs.error().message.find("ACSCtl line is not in the capture"), std::string::npos);
}

TEST(LspciSettings, MergedBlocksFillEachOther) {
  // A grep of ACSCtl, then the same bridge's full block without it: one
  // function with both.
  const std::string text =
      "04:08.0 PCI bridge: PLX Technology, Inc. PEX 8747\n"
      "\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n"
      "\n"
      "04:08.0 PCI bridge: PLX Technology, Inc. PEX 8747\n"
      "\tBus: primary=04, secondary=05, subordinate=05, sec-latency=0\n"
      "\tCapabilities: [68] Express (v2) Downstream Port (Slot+), MSI 00\n"
      "\t\tDevCap:\tMaxPayload 2048 bytes, PhantFunc 0\n"
      "\t\t\tMaxPayload 256 bytes, MaxReadReq 128 bytes\n"
      "\t\tLnkCap:\tPort #8, Speed 8GT/s, Width x16, ASPM L0s L1\n"
      "\t\tLnkSta:\tSpeed 8GT/s, Width x16\n";
  const auto parsed = parse_lspci(text);
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->devices.size(), 1u);
  const PortSettings& settings = settings_of(parsed.value(), "0000:04:08.0");
  ASSERT_TRUE(settings.acs && settings.acs.value());
  EXPECT_TRUE(settings.acs.value()->redirects_peer_traffic());
  EXPECT_EQ(settings.max_payload_supported_bytes, 2048);
  EXPECT_EQ(settings.max_payload_bytes, 256);
}

}  // namespace
}  // namespace pcieval
