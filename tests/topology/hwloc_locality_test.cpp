#include "topology/hwloc_locality.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <utility>

#include "topology/topology_test_util.hpp"

namespace pcieval {
namespace {

using testing::bdf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

HwlocTopology load(const std::string& machine) {
  auto topology = HwlocTopology::load_xml(testing::fixture_xml(machine));
  if (!topology.ok()) throw std::runtime_error(topology.error().message);
  return std::move(topology).value();
}

TEST(HwlocTopology, Dgx2GpuLocalityFromXml) {
  const HwlocTopology topology = load("dgx2_16gpu_plx_gen3");
  const auto locality = topology.locality_of(bdf("0000:34:00.0"));
  ASSERT_TRUE(locality.has_value());
  EXPECT_EQ(locality->numa_node, 0);
  EXPECT_EQ(locality->cpulist, "0-23");
  EXPECT_THAT(locality->ancestor_bridges, ElementsAre(bdf("0000:33:00.0"), bdf("0000:32:00.0"), bdf("0000:2d:04.0"),
                                                      bdf("0000:2c:00.0"), bdf("0000:2b:00.0")));

  const auto far = topology.locality_of(bdf("0000:e7:00.0"));
  ASSERT_TRUE(far.has_value());
  EXPECT_EQ(far->numa_node, 1);
  EXPECT_EQ(far->cpulist, "24-47");
  ASSERT_EQ(far->ancestor_bridges.size(), 5U);
  EXPECT_EQ(far->ancestor_bridges.back(), bdf("0000:d7:00.0"));
}

TEST(HwlocTopology, BridgesAndHostBridgeFunctionsAreListedToo) {
  const HwlocTopology topology = load("hgx_a100_8gpu_gen4");
  const auto root_port = topology.locality_of(bdf("0000:a0:01.1"));
  ASSERT_TRUE(root_port.has_value()) << "the I/O filter keeps bridges";
  EXPECT_TRUE(root_port->ancestor_bridges.empty()) << "the host bridge is not a PCI-to-PCI bridge";
  EXPECT_EQ(root_port->numa_node, 1);
  const auto root_complex = topology.locality_of(bdf("0000:40:00.0"));
  ASSERT_TRUE(root_complex.has_value());
  EXPECT_EQ(root_complex->cpulist, "0-63");
}

TEST(HwlocTopology, UnknownDeviceHasNoLocality) {
  const HwlocTopology topology = load("small_server_no_gpu");
  EXPECT_FALSE(topology.locality_of(bdf("0000:99:00.0")).has_value());
  EXPECT_FALSE(topology.locality_of(bdf("0001:02:00.0")).has_value()) << "domain is part of the address";
  EXPECT_TRUE(topology.locality_of(bdf("0000:02:00.0")).has_value());
}

TEST(HwlocTopology, MovedTopologyStaysUsableAndTheSourceIsEmpty) {
  HwlocTopology first = load("small_server_no_gpu");
  HwlocTopology second(std::move(first));
  EXPECT_TRUE(second.locality_of(bdf("0000:03:00.1")).has_value());
  // The moved-from handle is empty by contract; asking it is the point.
  // NOLINTNEXTLINE(bugprone-use-after-move,clang-analyzer-cplusplus.Move)
  EXPECT_FALSE(first.locality_of(bdf("0000:03:00.1")).has_value());
  HwlocTopology third = load("dgx2_16gpu_plx_gen3");
  third = std::move(second);
  EXPECT_TRUE(third.locality_of(bdf("0000:03:00.1")).has_value());
  EXPECT_FALSE(third.locality_of(bdf("0000:34:00.0")).has_value()) << "the old topology was released";
}

TEST(HwlocTopology, MissingXmlIsAnErrorNamingTheFile) {
  const auto topology = HwlocTopology::load_xml("/nonexistent/topology.xml");
  ASSERT_FALSE(topology.ok());
  EXPECT_EQ(topology.error().message, "topology XML /nonexistent/topology.xml does not exist");
}

TEST(HwlocTopology, MalformedXmlIsAOneLineErrorNamingTheFile) {
  testing::TempDir temp;
  const auto truncated = temp.path() / "truncated.xml";
  testing::write_file(truncated, "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n  <object type=\"Machine\"");
  const auto foreign = temp.path() / "foreign.xml";
  testing::write_file(foreign, "<?xml version=\"1.0\"?>\n<html><body>not a topology</body></html>\n");
  const auto empty = temp.path() / "empty.xml";
  testing::write_file(empty, "");
  for (const auto& path : {truncated, foreign, empty}) {
    const auto topology = HwlocTopology::load_xml(path);
    ASSERT_FALSE(topology.ok()) << path;
    EXPECT_THAT(topology.error().message, HasSubstr(path.string()));
    EXPECT_THAT(topology.error().message, HasSubstr("is not an hwloc XML topology"));
    EXPECT_THAT(topology.error().message, Not(HasSubstr("\n")));
  }
}

TEST(HwlocTopology, NewerXmlFormatSaysWhichVersion) {
  // hwloc 3 (its git master, which wrote the DGX-2 XML in hwloc's own tests)
  // exports version 3.0; Debian's hwloc 2.9 cannot import it.
  testing::TempDir temp;
  const auto newer = temp.path() / "hwloc3.xml";
  testing::write_file(newer,
                      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
                      "<topology version=\"3.0\">\n  <object type=\"Machine\" os_index=\"0\" "
                      "cpuset=\"0x00000001\" complete_cpuset=\"0x00000001\" allowed_cpuset=\"0x00000001\" "
                      "nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" allowed_nodeset=\"0x00000001\" "
                      "gp_index=\"1\"/>\n</topology>\n");
  const auto topology = HwlocTopology::load_xml(newer);
  ASSERT_FALSE(topology.ok());
  EXPECT_THAT(topology.error().message, HasSubstr("is hwloc XML version 3.0, newer than hwloc"));
  EXPECT_THAT(topology.error().message, HasSubstr(newer.string()));
}

TEST(HwlocTopology, DirectoryIsNotAnXml) {
  testing::TempDir temp;
  const auto topology = HwlocTopology::load_xml(temp.path());
  ASSERT_FALSE(topology.ok());
  EXPECT_THAT(topology.error().message, HasSubstr(temp.path().string()));
}

TEST(HwlocTopology, LiveDiscoveryLoadsOrSaysWhy) {
  const auto topology = HwlocTopology::load_live();
  if (!topology.ok()) {
    EXPECT_THAT(topology.error().message, HasSubstr("hwloc"));
    return;
  }
  EXPECT_FALSE(topology->locality_of(PciAddress{0xffff, 0xff, 0x1f, 7}).has_value());
}

}  // namespace
}  // namespace pcieval
