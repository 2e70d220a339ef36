// How the simulated node routes GPU-to-GPU copies (sim/peer_route.hpp): the
// ACS Control it reads from config space (the fixture machines' own, as
// tests/fixtures/make_fixtures.py writes them) and the links each route
// crosses, on hand-built devices shaped like the HGX A100 fixture.
#include "sim/peer_route.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "sim/node.hpp"

namespace pcieval::sim {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

std::vector<std::uint8_t> config_of(const std::string& machine, const std::string& bdf) {
  std::ifstream in(fs::path(PCIEVAL_FIXTURES_DIR) / machine / "sys" / "bus" / "pci" / "devices" / bdf / "config",
                   std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void put32(std::vector<std::uint8_t>& config, std::size_t offset, std::uint32_t value) {
  for (int i = 0; i < 4; ++i)
    config[offset + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(value >> (8 * i));
}

TEST(AcsControl, TheFixturesSwitchPortsRedirectOnlyOnTheAcsMachine) {
  // 0000:82:00.0 and 0000:82:08.0: the downstream ports above 0000:83:00.0
  // and 0000:84:00.0 on the third switch.
  for (const char* port : {"0000:82:00.0", "0000:82:08.0"}) {
    const auto redirected = acs_control(config_of("hgx_a100_8gpu_acs_redirect", port));
    ASSERT_TRUE(redirected.has_value()) << port;
    EXPECT_EQ(*redirected, 0x1d) << port;  // SrcValid+ ReqRedir+ CmpltRedir+ UpstreamFwd+
    const auto healthy = acs_control(config_of("hgx_a100_8gpu_gen4", port));
    ASSERT_TRUE(healthy.has_value()) << port;
    EXPECT_EQ(*healthy, 0) << port;
  }
  // Another switch of the ACS machine keeps its reset value.
  EXPECT_EQ(acs_control(config_of("hgx_a100_8gpu_acs_redirect", "0000:02:00.0")), 0);
  // A GPU has no ACS capability.
  EXPECT_FALSE(acs_control(config_of("hgx_a100_8gpu_acs_redirect", "0000:83:00.0")).has_value());
}

TEST(AcsControl, ShortConfigSpaceAndBrokenListsSayNothing) {
  EXPECT_FALSE(acs_control(std::vector<std::uint8_t>(256, 0)).has_value());
  std::vector<std::uint8_t> config(4096, 0);
  put32(config, 0x100, 0x0001U | 0x2U << 16 | 0x100U << 20);  // AER pointing at itself
  EXPECT_FALSE(acs_control(config).has_value());
  put32(config, 0x100, 0x0001U | 0x2U << 16 | 0x200U << 20);
  put32(config, 0x200, 0x000dU | 0x1U << 16);
  config[0x206] = 0x0c;  // ReqRedir+ CmpltRedir+
  EXPECT_EQ(acs_control(config), 0x0c);
}

PciAddress bdf(const char* text) { return parse_pci_address(text).value(); }

// A GPU of the HGX fixture's shape: the GPU, its downstream port, the
// switch's upstream port, the root port (chain), and two links (hops).
Device gpu(int ordinal, const char* address, const char* dsp, const char* usp, const char* root, bool redirect) {
  Device device;
  device.ordinal = ordinal;
  device.address = bdf(address);
  for (const char* up : {address, dsp, usp, root}) {
    device.chain.emplace_back(std::string("/sys/") + up);
    device.chain_addresses.push_back(bdf(up));
  }
  device.acs_redirect = {false, redirect, false, false};
  Hop own;
  own.downstream = bdf(address);
  own.link = LinkState{PcieGen::kGen4, 16};
  Hop uplink;
  uplink.downstream = bdf(usp);
  uplink.link = LinkState{PcieGen::kGen4, 16};
  device.hops = {own, uplink};
  return device;
}

std::vector<std::string> legs_of(const PeerRoute& route, const std::vector<const Device*>& devices) {
  std::vector<std::string> legs;
  for (const RouteLeg& leg : route.legs) {
    legs.push_back(to_string(devices[static_cast<std::size_t>(leg.ordinal)]->hops[leg.hop].downstream) +
                   (leg.to_device ? " down" : " up"));
  }
  return legs;
}

TEST(PeerRoute, APairBehindOneSwitchCrossesOnlyItsOwnTwoLinks) {
  const Device a = gpu(0, "0000:03:00.0", "0000:02:00.0", "0000:01:00.0", "0000:00:01.1", false);
  const Device b = gpu(1, "0000:04:00.0", "0000:02:08.0", "0000:01:00.0", "0000:00:01.1", false);
  const PeerRoute route = peer_route(a, b, true);
  EXPECT_EQ(route.kind, PeerRouteKind::kSwitch);
  EXPECT_FALSE(route.redirecting_port.has_value());
  EXPECT_THAT(legs_of(route, {&a, &b}), ElementsAre("0000:03:00.0 up", "0000:04:00.0 down"));
}

TEST(PeerRoute, AcsRedirectOnEitherDownstreamPortSendsThePairUpTheUplinkAndBackDown) {
  const Device a = gpu(0, "0000:83:00.0", "0000:82:00.0", "0000:81:00.0", "0000:80:01.1", false);
  const Device b = gpu(1, "0000:84:00.0", "0000:82:08.0", "0000:81:00.0", "0000:80:01.1", true);
  for (const auto& [from, to] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
    const PeerRoute route = peer_route(*from, *to, true);
    EXPECT_EQ(route.kind, PeerRouteKind::kAcsDetour);
    EXPECT_EQ(route.redirecting_port, bdf("0000:82:08.0"));
    // The switch's uplink (named by 0000:81:00.0) both ways.
    const std::vector<std::string> legs = legs_of(route, {&a, &b});
    EXPECT_EQ(std::count(legs.begin(), legs.end(), "0000:81:00.0 up"), 1);
    EXPECT_EQ(std::count(legs.begin(), legs.end(), "0000:81:00.0 down"), 1);
    EXPECT_EQ(legs.size(), 4U);
  }
}

TEST(PeerRoute, PairsOnDifferentRootPortsGoThroughTheRootComplexAndWithoutPeerAccessThroughTheHost) {
  const Device a = gpu(0, "0000:03:00.0", "0000:02:00.0", "0000:01:00.0", "0000:00:01.1", false);
  const Device c = gpu(2, "0000:23:00.0", "0000:22:00.0", "0000:21:00.0", "0000:20:01.1", false);
  const PeerRoute across = peer_route(a, c, true);
  EXPECT_EQ(across.kind, PeerRouteKind::kRootComplex);
  EXPECT_FALSE(across.redirecting_port.has_value());
  EXPECT_THAT(legs_of(across, {&a, nullptr, &c}),
              ElementsAre("0000:03:00.0 up", "0000:01:00.0 up", "0000:23:00.0 down", "0000:21:00.0 down"));
  const Device b = gpu(1, "0000:04:00.0", "0000:02:08.0", "0000:01:00.0", "0000:00:01.1", false);
  const PeerRoute staged = peer_route(a, b, false);
  EXPECT_EQ(staged.kind, PeerRouteKind::kStagedByHost);
  EXPECT_EQ(staged.legs.size(), 4U);
}

}  // namespace
}  // namespace pcieval::sim
