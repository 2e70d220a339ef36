// `pcieval retrain BDF` on copies of the fixture machines: the plan it shows,
// the one config-space write --apply makes (checked byte for byte in the
// copied config files), the before/after report, and every refusal.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <vector>

#include "cli/cli_runner.hpp"
#include "common/unprivileged.hpp"

namespace pcieval::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

using Bytes = std::vector<std::uint8_t>;

Bytes bytes_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// The fixture generator puts every PCI Express capability at 0x60
// (tests/fixtures/make_fixtures.py, PCIE_CAP).
constexpr std::size_t kPcieCap = 0x60;
constexpr std::size_t kLinkControl = kPcieCap + 0x10;
constexpr std::size_t kLinkStatus = kPcieCap + 0x12;

class Retrain : public ScratchDirTest {
 protected:
  // Copies a fixture machine's sysfs tree into the scratch dir; returns its root.
  fs::path copy(const std::string& machine) {
    const fs::path root = dir_ / "sys";
    fs::copy(fixture(machine) / "sys", root, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    return root;
  }
  static fs::path config(const fs::path& root, const std::string& address) {
    return root / "bus" / "pci" / "devices" / address / "config";
  }
  // Every config file of the tree, by address.
  static std::map<std::string, Bytes> all_configs(const fs::path& root) {
    std::map<std::string, Bytes> configs;
    for (const auto& entry : fs::directory_iterator(root / "bus" / "pci" / "devices")) {
      configs[entry.path().filename().string()] = bytes_of(entry.path() / "config");
    }
    return configs;
  }
  static CliRun retrain(const std::string& address, const fs::path& root, const std::string& extra = "") {
    return run_pcieval("retrain " + shell_quote(address) + " --sysfs-root " + shell_quote(root) + " " + extra);
  }
};

TEST_F(Retrain, DryRunShowsThePortItsLinkAndTheWriteAndWritesNothing) {
  const fs::path root = copy("hgx_a100_8gpu_gpu_x8");
  const auto before = all_configs(root);
  const CliRun run = retrain("0000:84:00.0", root);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_THAT(run.out, HasSubstr("port above: 0000:82:08.0 (Downstream Port)"));
  EXPECT_THAT(run.out, HasSubstr("link (sysfs):         capable Gen4 x16, negotiated Gen4 x8"));
  EXPECT_THAT(run.out, HasSubstr("link (config space):  capable Gen4 x16, negotiated Gen4 x8, Link Training 0"));
  EXPECT_THAT(run.out, HasSubstr("Link Control at config offset 0x0070 of 0000:82:08.0: 0x0040 -> 0x0060"));
  EXPECT_THAT(run.out, HasSubstr("dry run: nothing written"));
  EXPECT_EQ(all_configs(root), before);
}

TEST_F(Retrain, ApplySetsRetrainLinkOnThePortAboveAndNothingElse) {
  const fs::path root = copy("hgx_a100_8gpu_gpu_x8");
  auto expected = all_configs(root);
  expected["0000:82:08.0"][kLinkControl] |= 0x20;  // Retrain Link, bit 5 of the low byte
  const CliRun run = retrain("0000:84:00.0", root, "--apply");
  // The fixture's files do not retrain: the x8 link is still x8 afterwards.
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_EQ(all_configs(root), expected);
  EXPECT_THAT(run.out, HasSubstr("wrote Link Control 0x0060 to 0000:82:08.0"));
  EXPECT_THAT(run.out, HasSubstr("before -> after:\n  0000:84:00.0 link Gen4 x8 -> Gen4 x8, link_downgraded -> "
                                 "link_downgraded"));
  // Only the devices below the port are judged: the other GPUs are not listed.
  EXPECT_THAT(run.out, Not(HasSubstr("0000:03:00.0")));
}

TEST_F(Retrain, ApplyOnAHealthyLinkPassesAndCanRetrainASwitchUplink) {
  const fs::path root = copy("hgx_a100_8gpu_gen4");
  auto expected = all_configs(root);
  const CliRun gpu = retrain("0000:03:00.0", root, "--apply");
  EXPECT_EQ(gpu.exit_code, 0) << gpu.out << gpu.err;
  EXPECT_THAT(gpu.out, HasSubstr("0000:03:00.0 link Gen4 x16 -> Gen4 x16"));
  expected["0000:02:00.0"][kLinkControl] |= 0x20;
  // The switch's upstream port names the uplink: the root port above retrains it,
  // and every device below the switch is judged again.
  const CliRun uplink = retrain("0000:01:00.0", root, "--apply");
  EXPECT_EQ(uplink.exit_code, 0) << uplink.out << uplink.err;
  EXPECT_THAT(uplink.out, HasSubstr("port above: 0000:00:01.1 (Root Port)"));
  EXPECT_THAT(uplink.out, HasSubstr("0000:04:00.0"));
  expected["0000:00:01.1"][kLinkControl] |= 0x20;
  EXPECT_EQ(all_configs(root), expected);
}

TEST_F(Retrain, RefusesBadAddressesMissingDevicesEndpointsAndUpstreamPorts) {
  const fs::path root = copy("hgx_a100_8gpu_gen4");
  const auto before = all_configs(root);
  struct Case {
    std::string address;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"0000:03:00.0;id", "invalid PCI address"},
      {"../../../etc/passwd", "invalid PCI address"},
      {"0000:03:00.8", "invalid PCI address"},
      {"", "invalid PCI address"},
      {"0000:99:00.0", "no PCI function 0000:99:00.0"},
      // The root complex sits under the host bridge: no port above it.
      {"0000:00:00.0", "no port above it"},
      // A switch downstream port: the port above it is the switch's upstream port.
      {"0000:02:00.0", "0000:01:00.0 (Upstream Port), is not a Root Port or Downstream Port"},
  };
  for (const Case& c : cases) {
    const CliRun run = retrain(c.address, root, "--apply");
    EXPECT_EQ(run.exit_code, 2) << c.address << run.out;
    EXPECT_THAT(run.err, HasSubstr(c.message)) << c.address;
    EXPECT_EQ(line_count(run.err), 1) << run.err;
    EXPECT_EQ(run.out, "") << c.address;
  }
  EXPECT_EQ(all_configs(root), before);
}

TEST_F(Retrain, RefusesAPortWhoseCapabilitySaysEndpoint) {
  // The tree says downstream port; the port's own PCIe capability says
  // Endpoint, and the capability decides.
  const fs::path root = copy("hgx_a100_8gpu_gen4");
  Bytes port = bytes_of(config(root, "0000:02:00.0"));
  port[kPcieCap + 2] = static_cast<std::uint8_t>(port[kPcieCap + 2] & 0x0F);  // Device/Port Type 0
  write_bytes(config(root, "0000:02:00.0"), port);
  const auto before = all_configs(root);
  const CliRun run = retrain("0000:03:00.0", root, "--apply");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("(Endpoint), is not a Root Port or Downstream Port"));
  EXPECT_EQ(all_configs(root), before);
}

TEST_F(Retrain, APortThatFellOffTheBusIsRefused) {
  // wrx90_broken_attributes: switch upstream port 0000:0f:00.0 reads all ones;
  // the downstream port 0000:10:14.0 below it names that link.
  const fs::path root = copy("wrx90_broken_attributes");
  const CliRun run = retrain("0000:10:14.0", root, "--apply");
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_THAT(run.err, HasSubstr("0xffff"));
  EXPECT_EQ(line_count(run.err), 1);
}

TEST_F(Retrain, ALinkThatStaysInTrainingIsInconclusive) {
  const fs::path root = copy("hgx_a100_8gpu_gen4");
  Bytes port = bytes_of(config(root, "0000:02:00.0"));
  port[kLinkStatus + 1] = static_cast<std::uint8_t>(port[kLinkStatus + 1] | 0x08);  // Link Training, bit 11
  write_bytes(config(root, "0000:02:00.0"), port);
  const auto before = all_configs(root);
  const CliRun run = retrain("0000:03:00.0", root, "--apply --timeout-s 0.05");
  EXPECT_EQ(run.exit_code, 3) << run.out;
  EXPECT_THAT(run.err, HasSubstr("still training"));
  EXPECT_EQ(all_configs(root), before);
}

TEST_F(Retrain, BadTimeoutsAreUsageErrors) {
  const fs::path root = copy("hgx_a100_8gpu_gen4");
  for (const std::string timeout : {"0", "-1", "nan", "1e9", "soon"}) {
    const CliRun run = retrain("0000:03:00.0", root, "--apply --timeout-s " + timeout);
    EXPECT_EQ(run.exit_code, 2) << timeout;
    EXPECT_EQ(line_count(run.err), 1) << run.err;
  }
}

TEST_F(Retrain, ApplyWithoutRootIsRefusedBeforeAnythingIsRead) {
  const fs::path root = copy("hgx_a100_8gpu_gpu_x8");
  const auto before = all_configs(root);
  const std::string result = run_unprivileged([&] {
    const CliRun run = retrain("0000:84:00.0", root, "--apply");
    return std::to_string(run.exit_code) + "|" + run.err;
  });
  ASSERT_THAT(result, Not(HasSubstr("child failed"))) << result;
  EXPECT_THAT(result, HasSubstr("2|pcieval: error: retrain --apply writes PCI config space: run it as root"));
  EXPECT_EQ(all_configs(root), before);
  // Without --apply an unprivileged user still sees the plan.
  const std::string dry = run_unprivileged([&] {
    const CliRun run = retrain("0000:84:00.0", root);
    return std::to_string(run.exit_code) + "|" + run.out;
  });
  EXPECT_THAT(dry, HasSubstr("0|device 0000:84:00.0"));
}

}  // namespace
}  // namespace pcieval::testing
