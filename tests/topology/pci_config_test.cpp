// Config-space decoding on hand-built byte arrays, and the Retrain Link write
// on copies of the fixture machines' config files (which the generator builds
// to agree with their link files).
#include "topology/pci_config.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "topology/topology_test_util.hpp"

namespace pcieval::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A 256-byte config space: vendor 10de, capability list PM (0x40) -> PCIe (0x70).
std::vector<std::uint8_t> header_with_pcie(std::uint8_t type, std::uint32_t lnkcap, std::uint16_t lnkctl,
                                           std::uint16_t lnksta) {
  std::vector<std::uint8_t> config(256, 0);
  const auto put16 = [&](std::size_t at, std::uint16_t v) {
    config[at] = static_cast<std::uint8_t>(v & 0xFF);
    config[at + 1] = static_cast<std::uint8_t>(v >> 8);
  };
  put16(0x00, 0x10DE);
  put16(0x06, 0x0010);
  config[0x34] = 0x40;
  config[0x40] = 0x01;
  config[0x41] = 0x70;
  config[0x70] = kPciExpressCapabilityId;
  put16(0x72, static_cast<std::uint16_t>(0x2 | type << 4));
  put16(0x7C, static_cast<std::uint16_t>(lnkcap & 0xFFFF));
  put16(0x7E, static_cast<std::uint16_t>(lnkcap >> 16));
  put16(0x80, lnkctl);
  put16(0x82, lnksta);
  return config;
}

TEST(PciConfigDecode, FindsThePcieCapabilityAndItsLinkRegisters) {
  // Gen4 x16 capable, negotiated Gen3 x8, DL Active.
  const auto config = header_with_pcie(0x6, 0x0104, 0x0040, 0x2083);
  auto registers = parse_pcie_link_registers(config);
  ASSERT_TRUE(registers) << registers.error().message;
  EXPECT_EQ(registers->capability_offset, 0x70);
  EXPECT_EQ(registers->type, PcieDeviceType::kDownstreamPort);
  EXPECT_EQ(registers->link_control, 0x0040);
  ASSERT_TRUE(registers->capable());
  EXPECT_EQ(to_string(registers->capable().value()), "Gen4 x16");
  ASSERT_TRUE(registers->negotiated());
  EXPECT_EQ(to_string(registers->negotiated().value()), "Gen3 x8");
  EXPECT_TRUE(registers->data_link_active());
  EXPECT_FALSE(registers->training());
}

TEST(PciConfigDecode, ReportsDeviceGoneLoopsAndShortReads) {
  const std::vector<std::uint8_t> gone(4096, 0xFF);
  EXPECT_THAT(parse_pcie_link_registers(gone).error().message, HasSubstr("0xffff"));

  auto looping = header_with_pcie(0x4, 0x0104, 0, 0x0103);
  looping[0x41] = 0x40;  // PM points at itself
  looping[0x34] = 0x40;
  EXPECT_THAT(find_capability(looping, kPciExpressCapabilityId).error().message, HasSubstr("loops"));

  // What an unprivileged reader of a live /sys gets: the first 64 bytes.
  const auto full = header_with_pcie(0x4, 0x0104, 0, 0x0103);
  const std::vector<std::uint8_t> first64(full.begin(), full.begin() + 64);
  EXPECT_THAT(parse_pcie_link_registers(first64).error().message, HasSubstr("needs root"));

  auto no_list = full;
  no_list[0x06] = 0;
  EXPECT_THAT(parse_pcie_link_registers(no_list).error().message, HasSubstr("no capability list"));
}

TEST(PciConfigDecode, LinkDownAndBadCodesAreErrorsNotStates) {
  auto down = parse_pcie_link_registers(header_with_pcie(0x4, 0x0104, 0, 0x0001));
  ASSERT_TRUE(down);
  EXPECT_THAT(down->negotiated().error().message, HasSubstr("link is down"));
  auto bad_speed = parse_pcie_link_registers(header_with_pcie(0x4, 0x010F, 0, 0x010F));
  ASSERT_TRUE(bad_speed);
  EXPECT_FALSE(bad_speed->capable());
  EXPECT_FALSE(bad_speed->negotiated());
}

TEST(PciConfigDecode, OnlyRootAndDownstreamPortsRetrain) {
  EXPECT_TRUE(can_retrain_link(PcieDeviceType::kRootPort));
  EXPECT_TRUE(can_retrain_link(PcieDeviceType::kDownstreamPort));
  EXPECT_FALSE(can_retrain_link(PcieDeviceType::kUpstreamPort));
  EXPECT_FALSE(can_retrain_link(PcieDeviceType::kEndpoint));
  EXPECT_FALSE(can_retrain_link(PcieDeviceType::kPcieToPciBridge));
}

std::vector<std::uint8_t> bytes_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// A copy of a fixture's sysfs tree, which retrain may write.
class FixtureCopy : public ::testing::Test {
 protected:
  void copy(const std::string& machine) {
    fs::copy(fixture_sysfs(machine), dir_.path() / "sys",
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  [[nodiscard]] fs::path root() const { return dir_.path() / "sys"; }
  [[nodiscard]] fs::path config(const std::string& address) const {
    return root() / "bus" / "pci" / "devices" / address / "config";
  }
  TempDir dir_;
};

bool privileged() { return true; }
bool unprivileged() { return false; }

TEST_F(FixtureCopy, FixtureConfigSpaceAgreesWithTheLinkFiles) {
  // hgx_a100_8gpu_gpu_x8: the downstream port above 0000:84:00.0 trained at x8.
  auto registers = read_pcie_link_registers(fixture_sysfs("hgx_a100_8gpu_gpu_x8"), bdf("0000:82:08.0"));
  ASSERT_TRUE(registers) << registers.error().message;
  EXPECT_EQ(registers->type, PcieDeviceType::kDownstreamPort);
  EXPECT_EQ(to_string(registers->capable().value()), "Gen4 x16");
  EXPECT_EQ(to_string(registers->negotiated().value()), "Gen4 x8");
  auto root_port = read_pcie_link_registers(fixture_sysfs("hgx_a100_8gpu_gpu_x8"), bdf("0000:80:01.1"));
  ASSERT_TRUE(root_port);
  EXPECT_EQ(root_port->type, PcieDeviceType::kRootPort);
  auto usp = read_pcie_link_registers(fixture_sysfs("hgx_a100_8gpu_gpu_x8"), bdf("0000:81:00.0"));
  ASSERT_TRUE(usp);
  EXPECT_EQ(usp->type, PcieDeviceType::kUpstreamPort);
}

TEST_F(FixtureCopy, RetrainSetsBit5OfLinkControlAndNothingElse) {
  copy("hgx_a100_8gpu_gpu_x8");
  const auto before = bytes_of(config("0000:82:08.0"));
  RetrainOptions options;
  options.is_privileged = privileged;
  auto outcome = retrain_link(root(), bdf("0000:82:08.0"), options);
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_TRUE(outcome->link_came_back);
  EXPECT_EQ(outcome->control_written, 0x0060);

  auto expected = before;
  const std::size_t control = outcome->before.capability_offset + kLinkControlOffset;
  expected[control] = static_cast<std::uint8_t>(expected[control] | kRetrainLinkBit);
  EXPECT_EQ(bytes_of(config("0000:82:08.0")), expected);
  // The device below and the upstream port were not touched.
  EXPECT_EQ(bytes_of(config("0000:84:00.0")),
            bytes_of(fixture_sysfs("hgx_a100_8gpu_gpu_x8") / "bus" / "pci" / "devices" / "0000:84:00.0" / "config"));
}

TEST_F(FixtureCopy, RefusesWithoutPrivilegeAndWritesNothing) {
  copy("hgx_a100_8gpu_gen4");
  const auto before = bytes_of(config("0000:02:00.0"));
  RetrainOptions options;
  options.is_privileged = unprivileged;
  auto outcome = retrain_link(root(), bdf("0000:02:00.0"), options);
  ASSERT_FALSE(outcome);
  EXPECT_THAT(outcome.error().message, HasSubstr("run as root"));
  EXPECT_EQ(bytes_of(config("0000:02:00.0")), before);
}

TEST_F(FixtureCopy, RefusesUpstreamPortsAndEndpoints) {
  copy("hgx_a100_8gpu_gen4");
  RetrainOptions options;
  options.is_privileged = privileged;
  for (const std::string address : {"0000:01:00.0", "0000:03:00.0"}) {
    const auto before = bytes_of(config(address));
    auto outcome = retrain_link(root(), bdf(address), options);
    ASSERT_FALSE(outcome) << address;
    EXPECT_THAT(outcome.error().message, HasSubstr("is not a Root Port or Downstream Port")) << address;
    EXPECT_EQ(bytes_of(config(address)), before) << address;
  }
}

TEST_F(FixtureCopy, ALinkStillTrainingIsNotRetrainedAndTheWaitEnds) {
  copy("hgx_a100_8gpu_gen4");
  auto bytes = bytes_of(config("0000:02:00.0"));
  auto registers = parse_pcie_link_registers(bytes);
  ASSERT_TRUE(registers);
  const std::size_t status = registers->capability_offset + kLinkStatusOffset;
  bytes[status + 1] = static_cast<std::uint8_t>(bytes[status + 1] | (kLinkTrainingBit >> 8));
  write_bytes(config("0000:02:00.0"), bytes);

  RetrainOptions options;
  options.is_privileged = privileged;
  options.timeout = std::chrono::milliseconds(50);
  const auto started = std::chrono::steady_clock::now();
  auto outcome = retrain_link(root(), bdf("0000:02:00.0"), options);
  const auto waited = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(outcome);
  EXPECT_THAT(outcome.error().message, HasSubstr("still training"));
  EXPECT_GE(waited, std::chrono::milliseconds(50));
  EXPECT_LT(waited, std::chrono::seconds(5));
  EXPECT_EQ(bytes_of(config("0000:02:00.0")), bytes);
}

TEST_F(FixtureCopy, MissingAndVanishedDevicesAreErrors) {
  copy("wrx90_broken_attributes");
  RetrainOptions options;
  options.is_privileged = privileged;
  EXPECT_THAT(retrain_link(root(), bdf("0000:99:00.0"), options).error().message, HasSubstr("cannot open"));
  // 0000:0f:00.0 fell off the bus: its config space reads all ones.
  EXPECT_THAT(read_pcie_link_registers(root(), bdf("0000:0f:00.0")).error().message, HasSubstr("0xffff"));
}

}  // namespace
}  // namespace pcieval::testing
