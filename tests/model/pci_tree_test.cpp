// The PCI tree's pure functions on trees built by hand: port roles, each
// device's path of physical links, the bridge chain. The same functions on
// the fixture machines' sysfs trees: tests/topology/pci_tree_machines_test.cpp.
#include "model/pci_tree.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace pcieval {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

PciAddress bdf(const std::string& text) {
  auto address = parse_pci_address(text);
  if (!address) throw std::invalid_argument(address.error().message);
  return address.value();
}

PortLinkReading healthy(PcieGen gen, int width) {
  return PortLinkReading::known(LinkState{gen, width}, LinkState{gen, width});
}

PciFunction make(const std::string& address, std::optional<std::string> parent, bool is_bridge,
                 std::optional<PortLinkReading> link) {
  PciFunction function;
  function.bdf = bdf(address);
  if (parent) function.parent = bdf(*parent);
  function.is_bridge = is_bridge;
  function.class_code = is_bridge ? 0x060400 : 0x020000;
  function.link = std::move(link);
  return function;
}

PortRole role(const std::vector<PciFunction>& functions, const std::string& address) {
  for (const PciFunction& function : functions) {
    if (function.bdf == bdf(address)) return function.role;
  }
  ADD_FAILURE() << address << " not in the tree";
  return PortRole::kEndpoint;
}

std::vector<std::string> ends(const PciPath& path) {
  std::vector<std::string> out;
  for (const auto& link : path) {
    out.push_back(to_string(link.downstream) + "-" + to_string(link.upstream) + " " +
                  std::string(to_string(link.position)));
  }
  return out;
}

// One PCIe switch of an HGX A100 baseboard, as sysfs lists it: root port
// 00:01.1 -> switch upstream port 01:00.0 -> downstream ports 02:00.0 (a GPU
// at 03:00.0) and 02:18.0 (nothing behind it), all Gen4 x16; a host bridge
// function at 00:00.0 beside them.
std::vector<PciFunction> hgx_switch() {
  PciFunction host_bridge = make("0000:00:00.0", std::nullopt, false, std::nullopt);
  host_bridge.class_code = 0x060000;
  return assign_port_roles({
      host_bridge,
      make("0000:00:01.1", std::nullopt, true, healthy(PcieGen::kGen4, 16)),
      make("0000:01:00.0", "0000:00:01.1", true, healthy(PcieGen::kGen4, 16)),
      make("0000:02:00.0", "0000:01:00.0", true, healthy(PcieGen::kGen4, 16)),
      make("0000:02:18.0", "0000:01:00.0", true, healthy(PcieGen::kGen4, 16)),
      make("0000:03:00.0", "0000:02:00.0", false, healthy(PcieGen::kGen4, 16)),
  });
}

// Two levels of switches, as on a DGX-2-like node: root port 2b:00.0 ->
// upstream 2c:00.0 -> downstream 2d:04.0 -> upstream 32:00.0 -> downstream
// 33:00.0 -> GPU 34:00.0, Gen3 x16 throughout.
std::vector<PciFunction> two_switches() {
  return assign_port_roles({
      make("0000:2b:00.0", std::nullopt, true, healthy(PcieGen::kGen3, 16)),
      make("0000:2c:00.0", "0000:2b:00.0", true, healthy(PcieGen::kGen3, 16)),
      make("0000:2d:04.0", "0000:2c:00.0", true, healthy(PcieGen::kGen3, 16)),
      make("0000:32:00.0", "0000:2d:04.0", true, healthy(PcieGen::kGen3, 16)),
      make("0000:33:00.0", "0000:32:00.0", true, healthy(PcieGen::kGen3, 16)),
      make("0000:34:00.0", "0000:33:00.0", false, healthy(PcieGen::kGen3, 16)),
  });
}

TEST(AssignPortRoles, SwitchPortsUnderARootPort) {
  const auto functions = hgx_switch();
  EXPECT_EQ(role(functions, "0000:00:01.1"), PortRole::kRootPort);
  EXPECT_EQ(role(functions, "0000:01:00.0"), PortRole::kUpstreamPort);
  EXPECT_EQ(role(functions, "0000:02:00.0"), PortRole::kDownstreamPort);
  EXPECT_EQ(role(functions, "0000:02:18.0"), PortRole::kDownstreamPort) << "an empty port is still a port";
  EXPECT_EQ(role(functions, "0000:03:00.0"), PortRole::kEndpoint);
  EXPECT_EQ(role(functions, "0000:00:00.0"), PortRole::kEndpoint) << "a host bridge function is no PCI bridge";
}

TEST(AssignPortRoles, TwoLevelsOfSwitchesAlternate) {
  const auto functions = two_switches();
  EXPECT_EQ(role(functions, "0000:2b:00.0"), PortRole::kRootPort);
  EXPECT_EQ(role(functions, "0000:2c:00.0"), PortRole::kUpstreamPort);
  EXPECT_EQ(role(functions, "0000:2d:04.0"), PortRole::kDownstreamPort);
  EXPECT_EQ(role(functions, "0000:32:00.0"), PortRole::kUpstreamPort);
  EXPECT_EQ(role(functions, "0000:33:00.0"), PortRole::kDownstreamPort);
  EXPECT_EQ(role(functions, "0000:34:00.0"), PortRole::kEndpoint);
}

TEST(AssignPortRoles, ABridgeWhoseParentIsMissingIsTakenForARootPort) {
  // A partial capture: the switch upstream port's root port is not listed.
  const auto functions = assign_port_roles({
      make("0000:01:00.0", "0000:00:01.1", true, healthy(PcieGen::kGen4, 16)),
      make("0000:02:00.0", "0000:01:00.0", true, healthy(PcieGen::kGen4, 16)),
  });
  EXPECT_EQ(role(functions, "0000:01:00.0"), PortRole::kRootPort);
  EXPECT_EQ(role(functions, "0000:02:00.0"), PortRole::kUpstreamPort);
}

TEST(AssignPortRoles, LoopingParentsTerminate) {
  std::vector<PciFunction> functions = {make("0000:01:00.0", "0000:02:00.0", true, std::nullopt),
                                        make("0000:02:00.0", "0000:01:00.0", true, std::nullopt)};
  const auto roles = assign_port_roles(functions);
  EXPECT_EQ(roles.size(), 2U);
  EXPECT_TRUE(build_path(roles, bdf("0000:01:00.0")).size() <= 2U);
  EXPECT_TRUE(bridge_chain(roles, bdf("0000:01:00.0")).size() <= 2U);
}

TEST(BuildPath, TheHopInsideASwitchIsSkipped) {
  const auto functions = two_switches();
  EXPECT_THAT(ends(build_path(functions, bdf("0000:34:00.0"))),
              ElementsAre("0000:34:00.0-0000:33:00.0 device_link", "0000:32:00.0-0000:2d:04.0 uplink",
                          "0000:2c:00.0-0000:2b:00.0 uplink"));
  EXPECT_THAT(ends(build_path(hgx_switch(), bdf("0000:03:00.0"))),
              ElementsAre("0000:03:00.0-0000:02:00.0 device_link", "0000:01:00.0-0000:00:01.1 uplink"));
}

TEST(BuildPath, DeviceNotInTheTreeHasNoPath) { EXPECT_TRUE(build_path(hgx_switch(), bdf("0000:99:00.0")).empty()); }

TEST(BuildPath, BridgeWithoutLinkAttributesGivesErrorReadings) {
  const std::vector<PciFunction> functions = assign_port_roles({
      make("0000:00:01.0", std::nullopt, true, std::nullopt),
      make("0000:01:00.0", "0000:00:01.0", false, healthy(PcieGen::kGen4, 16)),
  });
  const PciPath path = build_path(functions, bdf("0000:01:00.0"));
  ASSERT_EQ(path.size(), 1U);
  EXPECT_EQ(path[0].upstream_end.max_width.error().message, "0000:00:01.0 exposes no PCIe link attributes");
  EXPECT_THAT(path[0].expected().error().message, HasSubstr("0000:00:01.0 exposes no PCIe link attributes"));
  EXPECT_EQ(path[0].negotiated().value(), (LinkState{PcieGen::kGen4, 16}));
}

TEST(BuildPath, EndpointUnderAPcieToPciBridgeKeepsTheBridgeUplink) {
  // Root port -> PCIe-to-PCI bridge (an upstream-role bridge) -> device with a
  // link of its own: both links above the device are physical.
  const std::vector<PciFunction> functions = assign_port_roles({
      make("0000:00:05.0", std::nullopt, true, healthy(PcieGen::kGen2, 1)),
      make("0000:01:00.0", "0000:00:05.0", true, healthy(PcieGen::kGen2, 1)),
      make("0000:02:00.0", "0000:01:00.0", false, healthy(PcieGen::kGen1, 1)),
  });
  EXPECT_EQ(functions[1].role, PortRole::kUpstreamPort);
  EXPECT_THAT(ends(build_path(functions, bdf("0000:02:00.0"))),
              ElementsAre("0000:02:00.0-0000:01:00.0 device_link", "0000:01:00.0-0000:00:05.0 uplink"));
}

TEST(BuildPath, EndpointDirectlyUnderAHostBridgeHasNoPath) {
  const std::vector<PciFunction> functions =
      assign_port_roles({make("0000:00:02.0", std::nullopt, false, healthy(PcieGen::kGen3, 16))});
  EXPECT_TRUE(build_path(functions, bdf("0000:00:02.0")).empty());
}

PortLinkReading reading(PcieGen gen, int cap_width, int sta_width) {
  return PortLinkReading::known(LinkState{gen, cap_width}, LinkState{gen, sta_width});
}

// The NVSwitch management path of an HGX H100 board: root port 80:01.0, a
// Switchtec switch whose function 0 (81:00.0, the upstream port) says LnkCap
// x2 and whose function 1 (81:00.1, its management endpoint) claims LnkCap
// x16; the link runs x2, as designed.
std::vector<PciFunction> switchtec() {
  return assign_port_roles({
      make("0000:80:01.0", std::nullopt, true, reading(PcieGen::kGen4, 16, 2)),
      make("0000:81:00.0", "0000:80:01.0", true, reading(PcieGen::kGen4, 2, 2)),
      make("0000:81:00.1", "0000:80:01.0", false, reading(PcieGen::kGen4, 16, 2)),
      make("0000:82:00.0", "0000:81:00.0", true, reading(PcieGen::kGen4, 2, 2)),
      make("0000:83:00.0", "0000:82:00.0", false, reading(PcieGen::kGen4, 2, 2)),
  });
}

TEST(BuildPath, AFunctionOtherThanZeroSharesFunctionZerosLink) {
  const auto functions = switchtec();
  const PciPath path = build_path(functions, bdf("0000:81:00.1"));
  EXPECT_THAT(ends(path), ElementsAre("0000:81:00.0-0000:80:01.0 device_link"));
  ASSERT_EQ(path.size(), 1U);
  EXPECT_EQ(path[0].expected().value(), (LinkState{PcieGen::kGen4, 2})) << "function 0's LnkCap, not x16";
  EXPECT_EQ(path[0].negotiated().value(), (LinkState{PcieGen::kGen4, 2}));
  // The switch's own uplink, seen from below it, is the same link.
  EXPECT_THAT(ends(build_path(functions, bdf("0000:83:00.0"))),
              ElementsAre("0000:83:00.0-0000:82:00.0 device_link", "0000:81:00.0-0000:80:01.0 uplink"));
}

TEST(BuildPath, AFunctionKeepsItsOwnLinkWhereFunctionZeroDoesNotShareIt) {
  // Function 0 absent, or without link registers, or an SR-IOV virtual
  // function (under ARI a VF's "function 0" is another VF).
  auto functions = switchtec();
  functions.erase(functions.begin() + 1);
  EXPECT_THAT(ends(build_path(functions, bdf("0000:81:00.1"))), ElementsAre("0000:81:00.1-0000:80:01.0 device_link"));
  functions = switchtec();
  functions[1].link.reset();
  EXPECT_THAT(ends(build_path(functions, bdf("0000:81:00.1"))), ElementsAre("0000:81:00.1-0000:80:01.0 device_link"));
  functions = switchtec();
  functions[2].is_virtual_function = true;
  EXPECT_THAT(ends(build_path(functions, bdf("0000:81:00.1"))), ElementsAre("0000:81:00.1-0000:80:01.0 device_link"));
  // A GPU's HD audio function: function 0 is an endpoint, judged itself; the
  // audio function is not judged (validate/link_rules.hpp) and keeps its path.
  const auto gpu = assign_port_roles({
      make("0000:00:01.1", std::nullopt, true, healthy(PcieGen::kGen4, 16)),
      make("0000:01:00.0", "0000:00:01.1", false, healthy(PcieGen::kGen4, 16)),
      make("0000:01:00.1", "0000:00:01.1", false, healthy(PcieGen::kGen4, 16)),
  });
  EXPECT_THAT(ends(build_path(gpu, bdf("0000:01:00.1"))), ElementsAre("0000:01:00.1-0000:00:01.1 device_link"));
}

TEST(BridgeChain, ListsEveryBridgeNearestFirst) {
  const auto functions = two_switches();
  EXPECT_THAT(bridge_chain(functions, bdf("0000:34:00.0")),
              ElementsAre(bdf("0000:33:00.0"), bdf("0000:32:00.0"), bdf("0000:2d:04.0"), bdf("0000:2c:00.0"),
                          bdf("0000:2b:00.0")));
  EXPECT_TRUE(bridge_chain(functions, bdf("0000:2b:00.0")).empty());
  EXPECT_TRUE(bridge_chain(functions, bdf("0000:99:00.0")).empty());
}

}  // namespace
}  // namespace pcieval
