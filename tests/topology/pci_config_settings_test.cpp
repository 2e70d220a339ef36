// A port's payload sizes, ASPM and ACS decoded from config-space bytes built
// by hand (topology/pci_config.hpp): each register, each shape of the
// extended capability list, and what a short read (64 or 256 bytes) yields.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "topology/pci_config.hpp"

namespace pcieval {
namespace {

using ::testing::HasSubstr;

// A function's config space laid out as an H100's or a PEX88096 port's:
// capabilities PM (0x40) -> PCI Express (0x60); extended AER at 0x100 ->
// ACS at 0x148 (when `acs_cap` is given).
class ConfigSpace {
 public:
  explicit ConfigSpace(std::size_t size = 4096) : bytes_(size, 0) {
    put16(0x00, 0x10DE);
    put16(0x06, 0x0010);  // Status: capability list
    bytes_[0x34] = 0x40;
    put16(0x40, 0x6001);  // PM, next 0x60
    put16(0x60, 0x0010);  // PCI Express, last
    put16(0x62, 0x0002);  // version 2, endpoint
  }

  ConfigSpace& devcap(std::uint32_t value) { return put32(0x60 + kDeviceCapabilitiesOffset, value); }
  ConfigSpace& devctl(std::uint16_t value) { return put16(0x60 + kDeviceControlOffset, value); }
  ConfigSpace& lnkctl(std::uint16_t value) { return put16(0x60 + kLinkControlOffset, value); }
  // An extended capability header: ID, version 1, next pointer.
  ConfigSpace& extended(std::size_t at, std::uint16_t id, std::uint32_t next) {
    return put32(at, id | 0x1U << 16 | next << 20);
  }
  ConfigSpace& with_acs(std::uint16_t cap, std::uint16_t ctl) {
    extended(0x100, 0x0001, 0x148);  // AER
    extended(0x148, kAcsExtendedCapabilityId, 0);
    put16(0x148 + kAcsCapabilityOffset, cap);
    return put16(0x148 + kAcsControlOffset, ctl);
  }
  ConfigSpace& put16(std::size_t at, std::uint16_t value) {
    bytes_[at] = static_cast<std::uint8_t>(value & 0xFF);
    bytes_[at + 1] = static_cast<std::uint8_t>(value >> 8);
    return *this;
  }
  ConfigSpace& put32(std::size_t at, std::uint32_t value) {
    put16(at, static_cast<std::uint16_t>(value & 0xFFFF));
    return put16(at + 2, static_cast<std::uint16_t>(value >> 16));
  }

  [[nodiscard]] std::vector<std::uint8_t> first(std::size_t size) const {
    return {bytes_.begin(), bytes_.begin() + static_cast<std::ptrdiff_t>(size)};
  }
  [[nodiscard]] const std::vector<std::uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<std::uint8_t> bytes_;
};

TEST(PciConfigSettingsDecode, ReadsEveryRegisterField) {
  // DevCap MPS 512 (code 2); DevCtl: RO (bit 4), MPS 128 (7:5 = 0), MRRS
  // 4096 (14:12 = 5), no snoop; LnkCtl ASPM L1 (1:0 = 2) with CommClk.
  const auto config = ConfigSpace().devcap(0x0002).devctl(0x5810).lnkctl(0x0042).with_acs(0x5F, 0x1D);
  const auto settings = parse_port_settings(config.bytes());
  ASSERT_TRUE(settings) << settings.error().message;
  EXPECT_EQ(settings->max_payload_supported_bytes, 512);
  EXPECT_EQ(settings->max_payload_bytes, 128);
  EXPECT_EQ(settings->max_read_request_bytes, 4096);
  EXPECT_EQ(settings->relaxed_ordering, true);
  EXPECT_EQ(settings->aspm, AspmControl::kL1);
  ASSERT_TRUE(settings->acs);
  ASSERT_TRUE(settings->acs.value().has_value());
  EXPECT_EQ(settings->acs.value()->capability, 0x5F);
  EXPECT_EQ(settings->acs.value()->control, 0x1D);
  EXPECT_TRUE(settings->acs.value()->redirects_peer_traffic());
}

TEST(PciConfigSettingsDecode, EachPayloadCodeAndEachAspmValue) {
  for (unsigned code = 0; code <= 5; ++code) {
    const auto config =
        ConfigSpace().devcap(code).devctl(static_cast<std::uint16_t>(code << 5 | code << 12)).with_acs(0, 0);
    const auto settings = parse_port_settings(config.bytes());
    ASSERT_TRUE(settings);
    const int bytes = 128 << code;
    EXPECT_EQ(settings->max_payload_supported_bytes, bytes) << code;
    EXPECT_EQ(settings->max_payload_bytes, bytes) << code;
    EXPECT_EQ(settings->max_read_request_bytes, bytes) << code;
    EXPECT_EQ(settings->relaxed_ordering, false);
  }
  const std::vector<std::pair<std::uint16_t, AspmControl>> aspm = {{0x0040, AspmControl::kDisabled},
                                                                   {0x0041, AspmControl::kL0s},
                                                                   {0x0042, AspmControl::kL1},
                                                                   {0x0043, AspmControl::kL0sL1}};
  for (const auto& [lnkctl, want] : aspm) {
    EXPECT_EQ(parse_port_settings(ConfigSpace().lnkctl(lnkctl).bytes())->aspm, want) << lnkctl;
  }
}

TEST(PciConfigSettingsDecode, ReservedPayloadCodesAreNotGuessed) {
  // DevCap 6, DevCtl MPS 7 and MRRS 6: reserved encodings.
  const auto settings = parse_port_settings(ConfigSpace().devcap(0x6).devctl(0x60E0).bytes());
  ASSERT_TRUE(settings);
  EXPECT_EQ(settings->max_payload_supported_bytes, std::nullopt);
  EXPECT_EQ(settings->max_payload_bytes, std::nullopt);
  EXPECT_EQ(settings->max_read_request_bytes, std::nullopt);
}

TEST(PciConfigSettingsDecode, AcsOffOnAndAbsent) {
  const auto off = parse_port_settings(ConfigSpace().with_acs(0x5F, 0).bytes());
  ASSERT_TRUE(off && off->acs && off->acs.value());
  EXPECT_FALSE(off->acs.value()->redirects_peer_traffic());
  // SrcValid alone redirects nothing.
  const auto source_only = parse_port_settings(ConfigSpace().with_acs(0x5F, kAcsSourceValidation).bytes());
  EXPECT_FALSE(source_only->acs.value()->redirects_peer_traffic());
  const auto completions = parse_port_settings(ConfigSpace().with_acs(0x5F, kAcsCompletionRedirect).bytes());
  EXPECT_TRUE(completions->acs.value()->redirects_peer_traffic());

  // AER only, no ACS: read, and absent (nullopt), not an error.
  auto aer_only = ConfigSpace();
  aer_only.extended(0x100, 0x0001, 0);
  const auto absent = parse_port_settings(aer_only.bytes());
  ASSERT_TRUE(absent->acs) << absent->acs.error().message;
  EXPECT_FALSE(absent->acs.value().has_value());
  // No extended capabilities at all: the header reads 0, or all ones.
  EXPECT_FALSE(parse_port_settings(ConfigSpace().bytes())->acs.value().has_value());
  const auto all_ones = parse_port_settings(ConfigSpace().put32(0x100, 0xFFFFFFFF).bytes());
  ASSERT_TRUE(all_ones->acs);
  EXPECT_FALSE(all_ones->acs.value().has_value());
}

TEST(PciConfigSettingsDecode, AcsFoundAfterOtherExtendedCapabilities) {
  auto config = ConfigSpace();
  config.extended(0x100, 0x0001, 0x150);                    // AER
  config.extended(0x150, 0x0019, 0x300);                    // Secondary PCIe
  config.extended(0x300, kAcsExtendedCapabilityId, 0x400);  // ACS
  config.extended(0x400, 0x0025, 0);                        // Data Link Feature
  config.put16(0x304, 0x007F).put16(0x306, 0x0004);
  EXPECT_EQ(find_extended_capability(config.bytes(), kAcsExtendedCapabilityId).value(), 0x300);
  const auto settings = parse_port_settings(config.bytes());
  EXPECT_EQ(settings->acs.value()->capability, 0x7F);
  EXPECT_EQ(settings->acs.value()->control, kAcsRequestRedirect);
}

TEST(PciConfigSettingsDecode, BrokenExtendedListsAreErrorsNotAbsence) {
  auto loop = ConfigSpace();
  loop.extended(0x100, 0x0001, 0x148);
  loop.extended(0x148, 0x0019, 0x100);  // back to the start
  EXPECT_THAT(find_extended_capability(loop.bytes(), kAcsExtendedCapabilityId).error().message, HasSubstr("loops"));
  const auto looping = parse_port_settings(loop.bytes());
  ASSERT_TRUE(looping) << "the DevCtl and LnkCtl fields are still read";
  EXPECT_THAT(looping->acs.error().message, HasSubstr("ACS not read: extended capability list loops"));

  auto self = ConfigSpace();
  self.extended(0x100, 0x0001, 0x100);
  EXPECT_THAT(find_extended_capability(self.bytes(), kAcsExtendedCapabilityId).error().message, HasSubstr("loops"));

  auto below = ConfigSpace();
  below.extended(0x100, 0x0001, 0x040);
  EXPECT_THAT(find_extended_capability(below.bytes(), kAcsExtendedCapabilityId).error().message,
              HasSubstr("points below 0x100"));

  // 512 bytes given (a truncated capture), the next capability at 0x300.
  auto beyond = ConfigSpace();
  beyond.extended(0x100, 0x0001, 0x300);
  EXPECT_THAT(find_extended_capability(beyond.first(512), kAcsExtendedCapabilityId).error().message,
              HasSubstr("beyond the 512 readable bytes"));

  // An ACS header whose registers are cut off by the end of the bytes.
  auto cut = ConfigSpace();
  cut.extended(0x100, kAcsExtendedCapabilityId, 0);
  EXPECT_THAT(parse_port_settings(cut.first(0x104))->acs.error().message, HasSubstr("cut off"));
}

TEST(PciConfigSettingsDecode, SixtyFourBytesNeedRootNeverOff) {
  const auto config = ConfigSpace().devctl(0x2810).lnkctl(0x0042).with_acs(0x5F, 0x1D);
  const auto settings = parse_port_settings(config.first(64));
  ASSERT_FALSE(settings);
  EXPECT_EQ(settings.error().message, kSettingsNeedRoot);
  // Fewer than 64 is no unprivileged read: a broken file, said as such.
  const auto short_read = parse_port_settings(config.first(32));
  ASSERT_FALSE(short_read);
  EXPECT_THAT(short_read.error().message, HasSubstr("too short (32 bytes)"));
  EXPECT_NE(short_read.error().message, kSettingsNeedRoot);
}

TEST(PciConfigSettingsDecode, TwoHundredFiftySixBytesReadTheCapabilityButNotAcs) {
  const auto config = ConfigSpace().devcap(0x1).devctl(0x2830).lnkctl(0x0040).with_acs(0x5F, 0x1D);
  const auto settings = parse_port_settings(config.first(256));
  ASSERT_TRUE(settings) << settings.error().message;
  EXPECT_EQ(settings->max_payload_supported_bytes, 256);
  EXPECT_EQ(settings->max_payload_bytes, 256);
  EXPECT_EQ(settings->max_read_request_bytes, 512);
  EXPECT_EQ(settings->aspm, AspmControl::kDisabled);
  ASSERT_FALSE(settings->acs);
  EXPECT_THAT(settings->acs.error().message, HasSubstr("extended config space (above 0x100) was not readable"));
}

TEST(PciConfigSettingsDecode, ADeviceThatDoesNotAnswerOrHasNoPcieCapability) {
  const std::vector<std::uint8_t> gone(4096, 0xFF);
  EXPECT_THAT(parse_port_settings(gone).error().message, HasSubstr("0xffff"));
  auto no_pcie = ConfigSpace();
  no_pcie.put16(0x40, 0x0001);  // PM, last: no PCI Express capability
  EXPECT_THAT(parse_port_settings(no_pcie.bytes()).error().message, HasSubstr("no capability with ID 0x10"));
  // The PCI Express capability at 0x60 cut off before LnkCtl (0x70).
  EXPECT_THAT(parse_port_settings(ConfigSpace().first(0x68)).error().message, HasSubstr("cut off at byte 104"));
}

}  // namespace
}  // namespace pcieval
