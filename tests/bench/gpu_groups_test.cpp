// Which GPUs share an uplink, from hand-built evidence: no GPU needed.
#include "bench/gpu_groups.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pcieval {
namespace {

using ::testing::ElementsAre;

PciAddress bdf(const char* text) { return *parse_pci_address(text); }

Link link(const char* downstream, const char* upstream, LinkPosition position) {
  Link result;
  result.downstream = bdf(downstream);
  result.upstream = bdf(upstream);
  result.position = position;
  return result;
}

DeviceRecord device(const char* address, DeviceKind kind, PciPath path) {
  DeviceRecord record;
  record.function.bdf = bdf(address);
  record.function.kind = kind;
  record.function.vendor_id = kind == DeviceKind::kGpu ? 0x10de : 0x15b3;
  record.function.class_code = kind == DeviceKind::kGpu ? 0x030200 : 0x020700;
  record.path = std::move(path);
  return record;
}

// A GPU behind a switch: its own link to the switch downstream port, and the
// switch upstream port's link to the root port.
DeviceRecord gpu_behind_switch(const char* gpu, const char* downstream_port, const char* upstream_port,
                               const char* root_port) {
  return device(
      gpu, DeviceKind::kGpu,
      {link(gpu, downstream_port, LinkPosition::kDeviceLink), link(upstream_port, root_port, LinkPosition::kUplink)});
}

// Modelled on an HGX H100 8-GPU baseboard (four PCIe switches, two GPUs
// each, every switch on its own CPU root port) plus an L40S PCIe card directly
// under a root port, a NIC behind the first switch, and the GPU's second
// function (its audio controller, here claimed as a GPU to prove function 0
// alone counts).
Evidence hgx_like() {
  Evidence evidence;
  const char* switches[4][4] = {
      {"0000:16:00.0", "0000:15:01.0", "0000:18:00.0", "0000:19:00.0"},
      {"0000:49:00.0", "0000:48:01.0", "0000:4b:00.0", "0000:4c:00.0"},
      {"0000:98:00.0", "0000:97:01.0", "0000:9a:00.0", "0000:9b:00.0"},
      {"0000:c7:00.0", "0000:c6:01.0", "0000:c9:00.0", "0000:ca:00.0"},
  };
  for (const auto& sw : switches) {
    evidence.devices.push_back(gpu_behind_switch(sw[2], "0000:17:00.0", sw[0], sw[1]));
    evidence.devices.push_back(gpu_behind_switch(sw[3], "0000:17:01.0", sw[0], sw[1]));
  }
  evidence.devices.push_back(device("0000:1a:00.0", DeviceKind::kNic,
                                    {link("0000:1a:00.0", "0000:17:02.0", LinkPosition::kDeviceLink),
                                     link("0000:16:00.0", "0000:15:01.0", LinkPosition::kUplink)}));
  evidence.devices.push_back(gpu_behind_switch("0000:18:00.1", "0000:17:00.0", "0000:16:00.0", "0000:15:01.0"));
  evidence.devices.push_back(
      device("0000:e1:00.0", DeviceKind::kGpu, {link("0000:e1:00.0", "0000:e0:01.0", LinkPosition::kDeviceLink)}));
  return evidence;
}

TEST(GpusOf, KeepsFunctionZeroOfGpusOnly) {
  const Evidence evidence = hgx_like();
  const auto gpus = gpus_of(evidence);
  ASSERT_EQ(gpus.size(), 9U) << "8 HGX GPUs and the PCIe card; not the NIC, not function 1";
  for (const DeviceRecord* gpu : gpus) {
    EXPECT_EQ(gpu->function.kind, DeviceKind::kGpu);
    EXPECT_EQ(gpu->function.bdf.function, 0);
  }
}

TEST(GroupGpusByUplink, HgxSwitchesGroupTheirTwoGpusAndTheCardIsAlone) {
  const auto groups = group_gpus_by_uplink(hgx_like());
  ASSERT_EQ(groups.size(), 5U);
  EXPECT_EQ(groups[0].port, bdf("0000:16:00.0")) << "the switch upstream port, not the root port above it";
  EXPECT_EQ(groups[0].subject, "port 0000:16:00.0");
  EXPECT_THAT(groups[0].gpus, ElementsAre(bdf("0000:18:00.0"), bdf("0000:19:00.0")));
  EXPECT_EQ(groups[1].port, bdf("0000:49:00.0"));
  EXPECT_THAT(groups[1].gpus, ElementsAre(bdf("0000:4b:00.0"), bdf("0000:4c:00.0")));
  EXPECT_EQ(groups[3].port, bdf("0000:c7:00.0"));
  EXPECT_EQ(groups[4].port, bdf("0000:e0:01.0")) << "no uplink: the root port at the top of the path";
  EXPECT_EQ(groups[4].subject, "port 0000:e0:01.0");
  EXPECT_THAT(groups[4].gpus, ElementsAre(bdf("0000:e1:00.0")));
}

TEST(SharedUplinkGroups, OnlyGroupsOfTwoOrMore) {
  const auto groups = shared_uplink_groups(hgx_like());
  ASSERT_EQ(groups.size(), 4U);
  for (const GpuGroup& group : groups) EXPECT_EQ(group.gpus.size(), 2U) << group.subject;
}

TEST(GroupGpusByUplink, TwoCardsOnTwoRootPortsShareNothing) {
  Evidence evidence;
  evidence.devices.push_back(
      device("0000:17:00.0", DeviceKind::kGpu, {link("0000:17:00.0", "0000:16:01.0", LinkPosition::kDeviceLink)}));
  evidence.devices.push_back(
      device("0000:ca:00.0", DeviceKind::kGpu, {link("0000:ca:00.0", "0000:c9:01.0", LinkPosition::kDeviceLink)}));
  EXPECT_EQ(group_gpus_by_uplink(evidence).size(), 2U);
  EXPECT_TRUE(shared_uplink_groups(evidence).empty());
}

TEST(GroupGpusByUplink, NestedSwitchesGroupByTheInnermostUplink) {
  // Two leaf switches under one parent switch (DGX-2 style): the GPUs of each
  // leaf share the leaf's uplink first.
  auto nested = [](const char* gpu, const char* leaf_upstream) {
    return device(gpu, DeviceKind::kGpu,
                  {link(gpu, "0000:34:00.0", LinkPosition::kDeviceLink),
                   link(leaf_upstream, "0000:33:00.0", LinkPosition::kUplink),
                   link("0000:32:00.0", "0000:2d:04.0", LinkPosition::kUplink)});
  };
  Evidence evidence;
  evidence.devices.push_back(nested("0000:35:00.0", "0000:36:00.0"));
  evidence.devices.push_back(nested("0000:39:00.0", "0000:36:00.0"));
  evidence.devices.push_back(nested("0000:3e:00.0", "0000:3c:00.0"));
  const auto groups = group_gpus_by_uplink(evidence);
  ASSERT_EQ(groups.size(), 2U);
  EXPECT_EQ(groups[0].port, bdf("0000:36:00.0"));
  EXPECT_THAT(groups[0].gpus, ElementsAre(bdf("0000:35:00.0"), bdf("0000:39:00.0")));
  EXPECT_EQ(groups[1].port, bdf("0000:3c:00.0"));
}

TEST(GroupGpusByUplink, AGpuWithoutAPathBelongsToNoGroup) {
  Evidence evidence;
  evidence.devices.push_back(device("0000:17:00.0", DeviceKind::kGpu, {}));
  EXPECT_EQ(gpus_of(evidence).size(), 1U);
  EXPECT_TRUE(group_gpus_by_uplink(evidence).empty());
}

TEST(GroupGpusByUplink, NoGpuNoGroup) {
  EXPECT_TRUE(group_gpus_by_uplink(Evidence{}).empty());
  EXPECT_TRUE(gpus_of(Evidence{}).empty());
}

}  // namespace
}  // namespace pcieval
