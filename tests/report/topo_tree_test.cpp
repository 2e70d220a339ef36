// The topology tree on the hand-built Sapphire Rapids H100 node.
#include "report/topo_tree.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/sample_results.hpp"

namespace pcieval {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class TopoTreeTest : public ::testing::Test {
 protected:
  Evidence evidence_ = testing::hgx_spr_results().evidence;
};

TEST_F(TopoTreeTest, GroupsByNumaNodeUnderRootAndSwitchPorts) {
  // The GPU and the NIC share the switch: its ports are printed once, and the
  // NVMe drive (NUMA from hwloc) joins NUMA 0.
  EXPECT_EQ(render_topology_tree(evidence_),
            "NUMA 0\n"
            "  0000:14:01.0 root port\n"
            "    0000:15:00.0 switch upstream port, uplink Gen5 x16 (capable Gen5 x16)\n"
            "      0000:16:10.0 switch downstream port\n"
            "        0000:17:00.0 gpu 10de:2331 Gen1 x8 (capable Gen5 x16)\n"
            "      0000:16:14.0 switch downstream port\n"
            "        0000:18:00.0 nic 15b3:1021 Gen5 x16 (capable Gen5 x16)\n"
            "  0000:3a:01.0 root port\n"
            "    0000:3b:00.0 nvme 144d:a826 Gen5 x4 (capable Gen5 x4)\n"
            "NUMA 1\n"
            "  0000:c9:01.0 root port\n"
            "    0000:ca:00.0 gpu 10de:2331 Gen1 x16 (capable Gen5 x16)\n"
            "note: GPU links were read idle; an idle NVIDIA GPU lowers its link speed on purpose\n"
            "2 GPUs, 1 NIC, 1 NVMe drive\n");
}

TEST_F(TopoTreeTest, OtherDevicesAreLeftOut) {
  EXPECT_THAT(render_topology_tree(evidence_), Not(HasSubstr("0000:02:00.0")));
}

TEST_F(TopoTreeTest, UnknownNumaGoesLastAndNoPathIsListedApart) {
  DeviceRecord& nvme = evidence_.devices[3];
  nvme.locality.reset();  // neither sysfs nor hwloc knows its node
  DeviceRecord virtio = testing::make_device("0000:00:05.0", DeviceKind::kNic, 0x1af4, 0x1041, 0x020000, 0, "0-7");
  evidence_.devices.push_back(virtio);  // a VM's virtio NIC: no PCIe port above it

  const std::string tree = render_topology_tree(evidence_);
  const auto numa1 = tree.find("NUMA 1\n");
  const auto unknown = tree.find("NUMA unknown\n  0000:3a:01.0 root port\n    0000:3b:00.0 nvme");
  const auto apart = tree.find("not behind a PCIe port\n  0000:00:05.0 nic 1af4:1041 no link\n");
  ASSERT_NE(numa1, std::string::npos);
  ASSERT_NE(unknown, std::string::npos) << tree;
  ASSERT_NE(apart, std::string::npos) << tree;
  EXPECT_LT(numa1, unknown);
  EXPECT_LT(unknown, apart);
  EXPECT_THAT(tree, HasSubstr("2 GPUs, 2 NICs, 1 NVMe drive\n"));
}

TEST_F(TopoTreeTest, PartlyUnknownLinkKeepsTheKnownHalf) {
  evidence_.devices[4].function.link->current_speed = make_error("kernel reports link speed 'Unknown'");
  EXPECT_THAT(render_topology_tree(evidence_), HasSubstr("0000:ca:00.0 gpu 10de:2331 Gen? x16 (capable Gen5 x16)\n"));
}

TEST_F(TopoTreeTest, NoIdleNoteUnderLoad) {
  evidence_.gpus_under_load = true;
  EXPECT_THAT(render_topology_tree(evidence_), Not(HasSubstr("note:")));
}

TEST(TopoTreeEmptyTest, CountsZero) { EXPECT_EQ(render_topology_tree(Evidence{}), "0 GPUs, 0 NICs, 0 NVMe drives\n"); }

}  // namespace
}  // namespace pcieval
