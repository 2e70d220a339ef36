#include "topology/discover.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "topology/topology_test_util.hpp"

namespace pcieval {
namespace {

using testing::bdf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

Evidence discover_fixture(const std::string& machine, bool with_xml = true) {
  DiscoveryOptions options;
  options.sysfs_root = testing::fixture_sysfs(machine);
  if (with_xml) options.topology_xml = testing::fixture_xml(machine);
  auto evidence = discover(options);
  if (!evidence.ok()) throw std::runtime_error(evidence.error().message);
  return std::move(evidence).value();
}

const DeviceRecord& record(const Evidence& evidence, const std::string& address) {
  const auto it = std::find_if(evidence.devices.begin(), evidence.devices.end(),
                               [&](const DeviceRecord& r) { return r.function.bdf == bdf(address); });
  if (it == evidence.devices.end()) throw std::runtime_error("no device " + address);
  return *it;
}

TEST(Discover, HgxHealthyEvidenceFromSysfsAndXml) {
  const Evidence evidence = discover_fixture("hgx_a100_8gpu_gen4");
  EXPECT_EQ(evidence.sysfs_root, testing::fixture_sysfs("hgx_a100_8gpu_gen4").string());
  EXPECT_EQ(evidence.topology, testing::fixture_xml("hgx_a100_8gpu_gen4").string());
  EXPECT_FALSE(evidence.gpus_under_load);
  EXPECT_THAT(evidence.notes, IsEmpty());
  EXPECT_FALSE(evidence.host.kernel.empty());
  ASSERT_EQ(evidence.devices.size(), 14U) << "48 functions less 28 PCI bridges and 6 host bridges";
  EXPECT_TRUE(
      std::is_sorted(evidence.devices.begin(), evidence.devices.end(),
                     [](const DeviceRecord& a, const DeviceRecord& b) { return a.function.bdf < b.function.bdf; }));
  for (const auto& device : evidence.devices) {
    EXPECT_FALSE(device.function.is_bridge);
    EXPECT_THAT(device.notes, IsEmpty()) << to_string(device.function.bdf);
    ASSERT_TRUE(device.locality.has_value()) << to_string(device.function.bdf);
    EXPECT_EQ(device.locality->numa_node, device.function.numa_node.value()) << to_string(device.function.bdf);
  }
  const DeviceRecord& gpu = record(evidence, "0000:a4:00.0");
  EXPECT_EQ(gpu.function.kind, DeviceKind::kGpu);
  EXPECT_EQ(gpu.path.size(), 2U);
  EXPECT_EQ(gpu.locality->cpulist, "64-127");
  EXPECT_THAT(gpu.locality->ancestor_bridges,
              ElementsAre(bdf("0000:a2:08.0"), bdf("0000:a1:00.0"), bdf("0000:a0:01.1")));
  EXPECT_TRUE(std::none_of(evidence.devices.begin(), evidence.devices.end(), [](const DeviceRecord& d) {
    return to_string(d.function.bdf) == "0000:c0:00.0";
  })) << "the host bridge (root complex) is not a device";
  EXPECT_EQ(record(evidence, "0000:c1:00.0").path.size(), 1U);
}

// The generator writes sysfs and XML from one description; only the machine
// built to disagree may produce mismatch notes.
TEST(Discover, FixtureTreesAgreeWithTheirXml) {
  for (const char* machine :
       {"hgx_a100_8gpu_gen4", "hgx_a100_8gpu_gpu_x8", "hgx_a100_8gpu_uplink_gen3", "h100_pcie_gen5_in_gen4_slot",
        "esc8000a_e12_idle_gen1", "wrx90_broken_attributes", "dgx2_16gpu_plx_gen3", "small_server_no_gpu"}) {
    const Evidence evidence = discover_fixture(machine);
    EXPECT_FALSE(evidence.devices.empty()) << machine;
    for (const auto& device : evidence.devices) {
      EXPECT_TRUE(device.locality.has_value()) << machine << " " << to_string(device.function.bdf);
      for (const auto& note : device.notes) EXPECT_THAT(note, Not(HasSubstr("hwloc"))) << machine;
    }
  }
}

TEST(Discover, MismatchBetweenHwlocAndSysfsIsNoted) {
  const Evidence evidence = discover_fixture("milan_nic_x8_in_x16_slot");
  EXPECT_THAT(record(evidence, "0000:c1:00.0").notes,
              ElementsAre("hwloc places 0000:c1:00.0 under 0000:c0:03.2, sysfs under 0000:c0:03.1"));
  EXPECT_THAT(record(evidence, "0000:81:00.0").notes,
              ElementsAre("hwloc places 0000:81:00.0 on NUMA node 1, sysfs numa_node reads 0"));
  EXPECT_THAT(record(evidence, "0000:81:00.1").notes,
              ElementsAre("hwloc places 0000:81:00.1 on NUMA node 1, sysfs numa_node reads 0"));
  EXPECT_THAT(record(evidence, "0000:41:00.0").notes, IsEmpty());
  // The path still follows sysfs: it is what the kernel trained.
  EXPECT_EQ(record(evidence, "0000:c1:00.0").path.at(0).upstream, bdf("0000:c0:03.1"));
  EXPECT_EQ(record(evidence, "0000:41:00.1").path.at(0).negotiated().value(), (LinkState{PcieGen::kGen4, 8}));
}

TEST(Discover, NoAffinityInSysfsIsNotAMismatch) {
  const Evidence evidence = discover_fixture("wrx90_broken_attributes");
  const DeviceRecord& x710 = record(evidence, "0000:14:00.0");
  EXPECT_FALSE(x710.function.numa_node.ok());
  EXPECT_EQ(x710.locality->numa_node, 0);
  EXPECT_THAT(x710.notes, IsEmpty());
  EXPECT_THAT(record(evidence, "0000:16:00.5").notes, Contains(HasSubstr("class not read")));
  EXPECT_EQ(record(evidence, "0000:11:00.0").path.size(), 3U);
  EXPECT_TRUE(record(evidence, "0000:e2:00.0").path.empty());
  EXPECT_EQ(evidence.devices.size(), 14U) << "host bridges are not devices";
}

TEST(Discover, Dgx2EveryGpuAndNicCrossesThreeLinks) {
  const Evidence evidence = discover_fixture("dgx2_16gpu_plx_gen3");
  int gpus = 0;
  for (const auto& device : evidence.devices) {
    if (device.function.kind == DeviceKind::kNvme) {
      EXPECT_EQ(device.path.size(), 1U);
      continue;
    }
    gpus += device.function.kind == DeviceKind::kGpu ? 1 : 0;
    EXPECT_EQ(device.path.size(), 3U) << to_string(device.function.bdf);
    EXPECT_EQ(device.locality->ancestor_bridges.size(), 5U);
  }
  EXPECT_EQ(gpus, 16);
}

TEST(Discover, FixtureRootWithoutXmlReadsNoLocality) {
  const Evidence evidence = discover_fixture("small_server_no_gpu", /*with_xml=*/false);
  EXPECT_FALSE(evidence.topology.has_value());
  EXPECT_THAT(evidence.notes, ElementsAre(HasSubstr("locality not read")));
  EXPECT_THAT(evidence.notes[0], HasSubstr(testing::fixture_sysfs("small_server_no_gpu").string()));
  for (const auto& device : evidence.devices) EXPECT_FALSE(device.locality.has_value());
  EXPECT_EQ(evidence.devices.size(), 5U) << "host bridges are not devices";
  EXPECT_TRUE(std::none_of(evidence.devices.begin(), evidence.devices.end(),
                           [](const DeviceRecord& r) { return r.function.kind == DeviceKind::kGpu; }));
}

TEST(Discover, MalformedXmlIsAnError) {
  testing::TempDir temp;
  const auto xml = temp.path() / "broken.xml";
  testing::write_file(xml, "<topology version=\"2.0\"><object type=");
  DiscoveryOptions options;
  options.sysfs_root = testing::fixture_sysfs("small_server_no_gpu");
  options.topology_xml = xml;
  const auto evidence = discover(options);
  ASSERT_FALSE(evidence.ok());
  EXPECT_THAT(evidence.error().message, HasSubstr(xml.string()));
}

TEST(Discover, MissingSysfsRootIsAnError) {
  DiscoveryOptions options;
  options.sysfs_root = "/nonexistent/sys";
  options.topology_xml = testing::fixture_xml("small_server_no_gpu");
  const auto evidence = discover(options);
  ASSERT_FALSE(evidence.ok());
  EXPECT_EQ(evidence.error().message, "sysfs root /nonexistent/sys has no bus/pci/devices");
}

TEST(Discover, LiveSystemUsesLiveHwlocWithoutNotes) {
  if (!std::filesystem::is_directory("/sys/bus/pci/devices")) GTEST_SKIP() << "no PCI bus in sysfs here";
  const auto evidence = discover(DiscoveryOptions{});
  ASSERT_TRUE(evidence.ok()) << evidence.error().message;
  EXPECT_EQ(evidence->sysfs_root, "/sys");
  if (evidence->topology.has_value()) {
    EXPECT_EQ(*evidence->topology, "live hwloc");
    EXPECT_THAT(evidence->notes, Not(Contains(HasSubstr("locality not read"))));
  } else {
    EXPECT_THAT(evidence->notes, Contains(HasSubstr("hwloc")));
  }
}

TEST(ReadHostInfo, NamesTheKernel) {
  const HostInfo host = read_host_info();
  EXPECT_FALSE(host.hostname.empty());
  EXPECT_FALSE(host.kernel.empty());
}

}  // namespace
}  // namespace pcieval

namespace pcieval {
namespace {

TEST(Discover, TheHypervisorFlagBesideTheSysfsRootMarksAGuest) {
  const Evidence guest = discover_fixture("kvm_q35_3xh100_qemu_root_ports");
  EXPECT_EQ(guest.host.hypervisor, true);
  // Every link records its upstream port's IDs: QEMU's root port here.
  const DeviceRecord& gpu = record(guest, "0000:02:00.0");
  ASSERT_EQ(gpu.path.size(), 1U);
  ASSERT_TRUE(gpu.path[0].upstream_id.has_value());
  EXPECT_EQ(to_string(*gpu.path[0].upstream_id), "1b36:000c");
  // Bare-metal fixtures carry no proc/cpuinfo: unknown, not "bare metal".
  EXPECT_FALSE(discover_fixture("hgx_a100_8gpu_gen4").host.hypervisor.has_value());
}

TEST(Discover, CpuinfoHypervisorFlag) {
  EXPECT_EQ(cpuinfo_hypervisor_flag("processor\t: 0\nflags\t\t: fpu vme hypervisor lahf_lm\n"), true);
  EXPECT_EQ(cpuinfo_hypervisor_flag("processor\t: 0\nflags\t\t: fpu vme lahf_lm\n"), false);
  // A word that only contains the flag's name is not the flag.
  EXPECT_EQ(cpuinfo_hypervisor_flag("flags\t\t: fpu xhypervisor hypervisorx\n"), false);
  // arm64 cpuinfo has "Features", no flags line: unknown.
  EXPECT_EQ(cpuinfo_hypervisor_flag("processor\t: 0\nFeatures\t: fp asimd evtstrm\n"), std::nullopt);
  EXPECT_EQ(cpuinfo_hypervisor_flag(""), std::nullopt);
  // "flags" must be the field name, not a prefix of another one.
  EXPECT_EQ(cpuinfo_hypervisor_flag("flagsx\t: hypervisor\n"), std::nullopt);
}

}  // namespace
}  // namespace pcieval
