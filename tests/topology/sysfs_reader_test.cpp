#include "topology/sysfs_reader.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>

#include "common/unprivileged.hpp"
#include "topology/topology_test_util.hpp"

namespace pcieval {
namespace {

using testing::bdf;
using testing::find;
using testing::fixture_sysfs;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<PciFunction> read_fixture(const std::string& machine, SysfsNotes* notes = nullptr) {
  auto functions = read_pci_functions(fixture_sysfs(machine), notes);
  EXPECT_TRUE(functions.ok()) << (functions.ok() ? "" : functions.error().message);
  return functions.ok() ? functions.value() : std::vector<PciFunction>{};
}

std::size_t count_kind(const std::vector<PciFunction>& functions, DeviceKind kind) {
  return static_cast<std::size_t>(std::count_if(functions.begin(), functions.end(),
                                                [&](const PciFunction& f) { return !f.is_bridge && f.kind == kind; }));
}

// --- single-file parsers ---

TEST(ParseSysfsLinkWidth, AcceptsSpecWidths) {
  EXPECT_EQ(parse_sysfs_link_width("16\n", "max_link_width").value(), 16);
  EXPECT_EQ(parse_sysfs_link_width("1", "max_link_width").value(), 1);
  EXPECT_EQ(parse_sysfs_link_width(" 8 \n", "current_link_width").value(), 8);
}

TEST(ParseSysfsLinkWidth, ZeroIsLinkDown) {
  const auto width = parse_sysfs_link_width("0\n", "current_link_width");
  ASSERT_FALSE(width.ok());
  EXPECT_EQ(width.error().message, "current_link_width: link down (width 0)");
}

TEST(ParseSysfsLinkWidth, AllOnesIsADeviceThatStoppedResponding) {
  const auto width = parse_sysfs_link_width("63\n", "max_link_width");
  ASSERT_FALSE(width.ok());
  EXPECT_EQ(width.error().message, "max_link_width: device not responding (reads as 0xffff)");
}

TEST(ParseSysfsLinkWidth, GarbageIsQuotedWithTheFileName) {
  const auto width = parse_sysfs_link_width("x16\n", "current_link_width");
  ASSERT_FALSE(width.ok());
  EXPECT_EQ(width.error().message, "current_link_width: unrecognised width 'x16'");
  EXPECT_THAT(parse_sysfs_link_width("3", "max_link_width").error().message, HasSubstr("3 is not a PCIe link width"));
  EXPECT_THAT(parse_sysfs_link_width("", "max_link_width").error().message, HasSubstr("unrecognised width ''"));
  EXPECT_THAT(parse_sysfs_link_width("\x01\xff", "max_link_width").error().message, HasSubstr("'?"
                                                                                              "?'"));
}

TEST(ParseSysfsNumaNode, MinusOneMeansNoAffinity) {
  EXPECT_EQ(parse_sysfs_numa_node("1\n", "numa_node").value(), 1);
  const auto none = parse_sysfs_numa_node("-1\n", "numa_node");
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.error().message, HasSubstr("no NUMA affinity reported"));
  EXPECT_THAT(parse_sysfs_numa_node("node0", "numa_node").error().message, HasSubstr("numa_node: unrecognised"));
  EXPECT_FALSE(parse_sysfs_numa_node("-2", "numa_node").ok());
}

TEST(ParseAerCounters, ReadsCurrentKernelFormat) {
  const auto counters = parse_aer_counters("RxErr 3\nBadTLP 12\ndev_cor_errs_bit[11] 2\nTOTAL_ERR_COR 17\n");
  EXPECT_EQ(counters.counts.at("RxErr"), 3U);
  EXPECT_EQ(counters.counts.at("BadTLP"), 12U);
  EXPECT_EQ(counters.counts.at("dev_cor_errs_bit[11]"), 2U);
  EXPECT_EQ(counters.counts.count("TOTAL_ERR_COR"), 0U);
  ASSERT_TRUE(counters.total.has_value());
  EXPECT_EQ(*counters.total, 17U);
}

TEST(ParseAerCounters, KeepsOldNamesWithSpacesAndSkipsMalformedLines) {
  std::vector<std::string> skipped;
  const auto counters = parse_aer_counters(
      "Receiver Error 1\nBad TLP 18446744073709551615\nno count here\n42\n\nTOTAL_ERR_FATAL 0", &skipped);
  EXPECT_EQ(counters.counts.at("Receiver Error"), 1U);
  EXPECT_EQ(counters.counts.at("Bad TLP"), 18446744073709551615ULL);
  EXPECT_EQ(counters.counts.size(), 2U);
  EXPECT_EQ(counters.total, std::optional<std::uint64_t>(0));
  EXPECT_THAT(skipped, ::testing::ElementsAre("no count here", "42"));
}

// --- fixture machines ---

TEST(ReadPciFunctions, HgxA100HealthyCountsKindsAndLinks) {
  const auto functions = read_fixture("hgx_a100_8gpu_gen4");
  ASSERT_EQ(functions.size(), 48U);
  EXPECT_TRUE(std::is_sorted(functions.begin(), functions.end(),
                             [](const PciFunction& a, const PciFunction& b) { return a.bdf < b.bdf; }));
  EXPECT_EQ(std::count_if(functions.begin(), functions.end(), [](const PciFunction& f) { return f.is_bridge; }), 28);
  EXPECT_EQ(count_kind(functions, DeviceKind::kGpu), 8U);
  EXPECT_EQ(count_kind(functions, DeviceKind::kNic), 4U);
  EXPECT_EQ(count_kind(functions, DeviceKind::kNvme), 2U);
  EXPECT_EQ(count_kind(functions, DeviceKind::kOther), 6U);  // one root complex per host bridge

  const PciFunction* gpu = find(functions, "0000:83:00.0");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->vendor_id, 0x10de);
  EXPECT_EQ(gpu->device_id, 0x20b0);
  EXPECT_EQ(gpu->class_code, 0x030200U);
  EXPECT_EQ(gpu->parent, bdf("0000:82:00.0"));
  EXPECT_FALSE(gpu->is_virtual_function);
  EXPECT_EQ(gpu->numa_node.value(), 1);
  EXPECT_EQ(gpu->local_cpulist.value(), "64-127");
  ASSERT_TRUE(gpu->link.has_value());
  EXPECT_EQ(gpu->link->capable().value(), (LinkState{PcieGen::kGen4, 16}));
  EXPECT_EQ(gpu->link->negotiated().value(), (LinkState{PcieGen::kGen4, 16}));
  ASSERT_TRUE(gpu->aer.correctable.has_value());
  EXPECT_EQ(gpu->aer.correctable->counts.count("RxErr"), 0U) << "zero counters are not stored";
  EXPECT_EQ(gpu->aer.correctable->total, std::optional<std::uint64_t>(0));
  EXPECT_TRUE(gpu->aer.fatal.has_value());
  EXPECT_TRUE(gpu->aer.nonfatal.has_value());

  const PciFunction* root_port = find(functions, "0000:80:01.1");
  ASSERT_NE(root_port, nullptr);
  EXPECT_TRUE(root_port->is_bridge);
  EXPECT_FALSE(root_port->parent.has_value()) << "a root port sits under the host bridge pci0000:80";

  const PciFunction* root_complex = find(functions, "0000:00:00.0");
  ASSERT_NE(root_complex, nullptr);
  EXPECT_FALSE(root_complex->link.has_value());
  EXPECT_FALSE(root_complex->aer.correctable.has_value());

  // A downstream port with nothing below it reports its link down.
  const PciFunction* empty_port = find(functions, "0000:02:18.0");
  ASSERT_NE(empty_port, nullptr);
  EXPECT_THAT(empty_port->link->current_width.error().message, HasSubstr("link down (width 0)"));
  EXPECT_EQ(empty_port->link->capable().value(), (LinkState{PcieGen::kGen4, 16}));
}

TEST(ReadPciFunctions, GpuTrainedAtX8ReadsX8AtBothEnds) {
  const auto functions = read_fixture("hgx_a100_8gpu_gpu_x8");
  EXPECT_EQ(find(functions, "0000:84:00.0")->link->current_width.value(), 8);
  EXPECT_EQ(find(functions, "0000:82:08.0")->link->current_width.value(), 8);
  EXPECT_EQ(find(functions, "0000:83:00.0")->link->current_width.value(), 16);
}

TEST(ReadPciFunctions, Dgx2OldKernelSpeedStringsAndAerNames) {
  const auto functions = read_fixture("dgx2_16gpu_plx_gen3");
  EXPECT_EQ(functions.size(), 77U);
  EXPECT_EQ(count_kind(functions, DeviceKind::kGpu), 16U);
  EXPECT_EQ(count_kind(functions, DeviceKind::kNic), 8U);
  for (const auto& function : functions) {
    if (function.kind != DeviceKind::kGpu) continue;
    EXPECT_EQ(function.device_id, 0x1db8);
    EXPECT_EQ(function.link->negotiated().value(), (LinkState{PcieGen::kGen3, 16})) << to_string(function.bdf);
    ASSERT_TRUE(function.aer.correctable.has_value());
    // Old-kernel names, all zero: only the total is kept (absent means 0).
    EXPECT_TRUE(function.aer.correctable->counts.empty());
    EXPECT_EQ(function.aer.correctable->total, std::optional<std::uint64_t>(0));
  }
  EXPECT_EQ(find(functions, "0000:b7:00.0")->numa_node.value(), 1);
  EXPECT_EQ(find(functions, "0000:34:00.0")->numa_node.value(), 0);
}

TEST(ReadPciFunctions, BrokenAttributesBecomeErrorReadingsNamingTheFile) {
  SysfsNotes notes;
  const auto functions = read_fixture("wrx90_broken_attributes", &notes);
  ASSERT_EQ(functions.size(), 36U);

  const PciFunction* gpu = find(functions, "0000:c1:00.0");
  ASSERT_TRUE(gpu->link.has_value());
  EXPECT_EQ(gpu->link->current_width.error().message, "current_link_width missing");
  EXPECT_EQ(gpu->link->current_speed.value(), PcieGen::kGen1);
  EXPECT_EQ(gpu->link->capable().value(), (LinkState{PcieGen::kGen4, 16}));
  EXPECT_EQ(gpu->aer.correctable->counts.at("RxErr"), 3U);
  EXPECT_EQ(gpu->aer.correctable->counts.at("BadTLP"), 12U);
  EXPECT_EQ(gpu->aer.correctable->counts.at("dev_cor_errs_bit[11]"), 2U);
  EXPECT_EQ(gpu->aer.correctable->total, std::optional<std::uint64_t>(20));
  EXPECT_EQ(gpu->aer.nonfatal->counts.at("CmpltTO"), 1U);
  EXPECT_EQ(gpu->aer.fatal->total, std::optional<std::uint64_t>(0));

  const PciFunction* nic = find(functions, "0000:21:00.0");
  EXPECT_THAT(nic->link->max_speed.error().message, HasSubstr("max_link_speed"));
  EXPECT_THAT(nic->link->max_speed.error().message, HasSubstr("'Unknown'"));
  EXPECT_EQ(find(functions, "0000:21:00.1")->link->max_speed.value(), PcieGen::kGen5);

  const PciFunction* nvme = find(functions, "0000:8a:00.0");
  EXPECT_THAT(nvme->link->current_speed.error().message, HasSubstr("current_link_speed"));
  EXPECT_THAT(nvme->link->current_speed.error().message, HasSubstr("'fast'"));

  const PciFunction* gone = find(functions, "0000:0f:00.0");
  EXPECT_EQ(gone->link->max_width.error().message, "max_link_width: device not responding (reads as 0xffff)");
  EXPECT_EQ(gone->link->current_width.error().message, "current_link_width: device not responding (reads as 0xffff)");
  EXPECT_EQ(gone->link->max_speed.value(), PcieGen::kGen4);

  const PciFunction* x710 = find(functions, "0000:14:00.1");
  EXPECT_THAT(x710->numa_node.error().message, HasSubstr("no NUMA affinity reported"));
  EXPECT_EQ(x710->local_cpulist.value(), "0-23");

  const PciFunction* psp = find(functions, "0000:16:00.5");
  ASSERT_NE(psp, nullptr) << "a function whose class cannot be read is kept";
  EXPECT_EQ(psp->kind, DeviceKind::kOther);
  EXPECT_EQ(psp->class_code, 0U);
  EXPECT_FALSE(psp->is_bridge);
  ASSERT_EQ(notes.by_function.count(bdf("0000:16:00.5")), 1U);
  EXPECT_THAT(notes.by_function.at(bdf("0000:16:00.5")).front(), HasSubstr("class not read"));
  EXPECT_THAT(notes.by_function.at(bdf("0000:16:00.5")).front(), HasSubstr("class missing"));

  // Conventional PCI behind the BMC's PCIe-to-PCI bridge: no link attributes at all.
  const PciFunction* vga = find(functions, "0000:e2:00.0");
  EXPECT_FALSE(vga->link.has_value());
  EXPECT_EQ(vga->parent, bdf("0000:e1:00.0"));
}

TEST(ReadPciFunctions, VirtualFunctionIsMarked) {
  const auto functions = read_fixture("h100_pcie_gen5_in_gen4_slot");
  const PciFunction* vf = find(functions, "0000:18:00.2");
  ASSERT_NE(vf, nullptr);
  EXPECT_TRUE(vf->is_virtual_function);
  EXPECT_FALSE(find(functions, "0000:18:00.0")->is_virtual_function);
  EXPECT_THAT(vf->link->current_width.error().message, HasSubstr("link down"));
  EXPECT_EQ(find(functions, "0000:4b:00.0")->link->max_speed.value(), PcieGen::kGen5);
  EXPECT_EQ(find(functions, "0000:4a:02.0")->link->max_speed.value(), PcieGen::kGen4);
}

TEST(ReadPciFunctions, AudioFunctionReportsTheGpuLink) {
  const auto functions = read_fixture("esc8000a_e12_idle_gen1");
  const PciFunction* audio = find(functions, "0000:c1:00.1");
  ASSERT_NE(audio, nullptr);
  EXPECT_EQ(audio->class_code, 0x040300U);
  EXPECT_EQ(audio->kind, DeviceKind::kOther);
  EXPECT_EQ(audio->link->negotiated().value(), (LinkState{PcieGen::kGen1, 16}));
  EXPECT_EQ(count_kind(functions, DeviceKind::kGpu), 4U);
}

// --- errors and hand-built trees ---

TEST(ReadPciFunctions, RootWithoutPciDevicesIsAnError) {
  const auto missing = read_pci_functions("/nonexistent/sysfs");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "sysfs root /nonexistent/sysfs has no bus/pci/devices");

  testing::TempDir temp;
  testing::write_file(temp.path() / "bus" / "pci" / "devices", "a file, not a directory");
  EXPECT_FALSE(read_pci_functions(temp.path()).ok());
}

TEST(ReadPciFunctions, EmptyDevicesDirectoryGivesNoFunctions) {
  testing::TempDir temp;
  testing::SysfsTree tree(temp.path());
  const auto functions = read_pci_functions(tree.root());
  ASSERT_TRUE(functions.ok());
  EXPECT_TRUE(functions.value().empty());
}

TEST(ReadPciFunctions, PartialLinkAttributesAreErrorsPerMissingFile) {
  testing::TempDir temp;
  testing::SysfsTree tree(temp.path());
  const auto dir = tree.add("pci0000:00", "0000:00:02.0", "0x8086", "0x010802");
  testing::write_file(dir / "max_link_speed", "8.0 GT/s PCIe\n");
  testing::write_file(dir / "max_link_width", "4\n");
  // current_link_width is a directory: refused on its type, not read.
  std::filesystem::create_directory(dir / "current_link_width");

  const auto functions = read_pci_functions(tree.root());
  ASSERT_TRUE(functions.ok());
  ASSERT_EQ(functions.value().size(), 1U);
  const auto& link = functions.value()[0].link;
  ASSERT_TRUE(link.has_value());
  EXPECT_EQ(link->capable().value(), (LinkState{PcieGen::kGen3, 4}));
  EXPECT_EQ(link->current_speed.error().message, "current_link_speed missing");
  EXPECT_EQ(link->current_width.error().message,
            (dir / "current_link_width").string() + " is a directory, not a sysfs attribute");
}

// A GPU (an A100 under a root port) whose attributes the tests below make
// hostile: the fields every function of a real tree has, and a Gen4 x16 link.
std::filesystem::path add_gpu(testing::SysfsTree& tree) {
  const auto dir = tree.add("pci0000:00", "0000:17:00.0", "0x10de", "0x030200");
  for (const char* file : {"max_link_speed", "current_link_speed"}) testing::write_file(dir / file, "16.0 GT/s PCIe\n");
  for (const char* file : {"max_link_width", "current_link_width"}) testing::write_file(dir / file, "16\n");
  return dir;
}

TEST(ReadPciFunctions, FifoInPlaceOfAnAttributeIsAnErrorWithoutBlocking) {
  // Opened the old way, a FIFO with no writer blocks open() for ever: this
  // test would hang (and ctest time it out) rather than fail.
  testing::TempDir temp;
  testing::SysfsTree tree(temp.path());
  const auto dir = add_gpu(tree);
  std::filesystem::remove(dir / "current_link_width");
  ASSERT_EQ(::mkfifo((dir / "current_link_width").c_str(), 0644), 0);

  const auto functions = read_pci_functions(tree.root());
  ASSERT_TRUE(functions.ok()) << functions.error().message;
  ASSERT_EQ(functions.value().size(), 1U);
  const PciFunction& gpu = functions.value()[0];
  EXPECT_EQ(gpu.kind, DeviceKind::kGpu);
  EXPECT_EQ(gpu.link->current_width.error().message,
            (dir / "current_link_width").string() + " is a FIFO, not a sysfs attribute");
  EXPECT_TRUE(gpu.link->current_speed.ok());
}

TEST(ReadPciFunctions, ReadThatHangsAfterTheIdentityKeepsTheFunctionWithItsLinkUnknown) {
  testing::TempDir temp;
  testing::SysfsTree tree(temp.path());
  const auto dir = add_gpu(tree);
  tree.add("pci0000:00", "0000:00:02.0", "0x8086", "0x010802");
  // The hook blocks the GPU's current_link_speed read until the test ends,
  // as a config read held in the kernel by a device in a bad state would.
  auto release = std::make_shared<std::promise<void>>();
  std::shared_future<void> released = release->get_future().share();
  SysfsReadOptions options;
  options.timeout = std::chrono::milliseconds(200);
  const std::string stuck = (dir / "current_link_speed").string();
  options.before_read = [stuck, released](const std::string& path) {
    if (path == stuck) released.wait();
  };
  SysfsNotes notes;
  const auto start = std::chrono::steady_clock::now();
  const auto functions = read_pci_functions(tree.root(), &notes, options);
  const auto waited = std::chrono::steady_clock::now() - start;
  release->set_value();

  ASSERT_TRUE(functions.ok()) << functions.error().message;
  EXPECT_LT(waited, std::chrono::seconds(3));
  ASSERT_EQ(functions.value().size(), 2U);
  const PciFunction& gpu = *find(functions.value(), "0000:17:00.0");
  EXPECT_EQ(gpu.kind, DeviceKind::kGpu);  // still in the tree: a GPU must not vanish
  ASSERT_TRUE(gpu.link.has_value());
  const std::string reason = stuck + " did not return within 200 ms";
  EXPECT_EQ(gpu.link->negotiated().error().message, reason);
  EXPECT_EQ(gpu.link->capable().error().message, reason);
  EXPECT_THAT(notes.by_function[bdf("0000:17:00.0")], ::testing::Contains(reason));
  // The function after it is read as usual, on a fresh thread.
  EXPECT_EQ(find(functions.value(), "0000:00:02.0")->vendor_id, 0x8086);
}

TEST(ReadPciFunctions, HangBeforeTheIdentityOrASecondHangFailsTheWholeRead) {
  SysfsReadOptions options;
  options.timeout = std::chrono::milliseconds(100);
  auto release = std::make_shared<std::promise<void>>();
  std::shared_future<void> released = release->get_future().share();
  {
    testing::TempDir temp;
    testing::SysfsTree tree(temp.path());
    const auto dir = add_gpu(tree);
    const std::string stuck = (dir / "class").string();
    options.before_read = [stuck, released](const std::string& path) {
      if (path == stuck) released.wait();
    };
    const auto functions = read_pci_functions(tree.root(), nullptr, options);
    ASSERT_FALSE(functions.ok());
    EXPECT_EQ(functions.error().message, stuck + " did not return within 100 ms: the PCI tree cannot be read");
  }
  {
    testing::TempDir temp;
    testing::SysfsTree tree(temp.path());
    add_gpu(tree);
    tree.add("pci0000:00", "0000:00:02.0", "0x8086", "0x010802");
    options.before_read = [released](const std::string& path) {
      if (path.ends_with("/numa_node")) released.wait();
    };
    const auto functions = read_pci_functions(tree.root(), nullptr, options);
    ASSERT_FALSE(functions.ok());
    EXPECT_THAT(functions.error().message, HasSubstr("sysfs reads did not return within 100 ms ("));
    EXPECT_THAT(functions.error().message, HasSubstr("0000:17:00.0/numa_node"));
    EXPECT_THAT(functions.error().message, HasSubstr("0000:00:02.0/numa_node"));
  }
  release->set_value();
}

TEST(ReadPciFunctions, UnreadableFileSaysPermissionDenied) {
  testing::TempDir temp;
  testing::SysfsTree tree(temp.path());
  const auto dir = tree.add("pci0000:00", "0000:00:02.0", "0x8086", "0x010802");
  for (const char* file : {"max_link_speed", "current_link_speed"}) testing::write_file(dir / file, "8.0 GT/s PCIe\n");
  for (const char* file : {"max_link_width", "current_link_width"}) testing::write_file(dir / file, "4\n");
  std::filesystem::permissions(dir / "max_link_width", std::filesystem::perms::none);
  // The tree must stay walkable for the unprivileged reader; only one file is closed to it.
  for (auto p = dir; p != temp.path().parent_path(); p = p.parent_path()) {
    std::filesystem::permissions(p, std::filesystem::perms::others_read | std::filesystem::perms::others_exec,
                                 std::filesystem::perm_options::add);
  }
  const std::string message = testing::run_unprivileged([&] {
    const auto functions = read_pci_functions(tree.root());
    if (!functions.ok()) return "read failed: " + functions.error().message;
    const auto& width = functions.value()[0].link->max_width;
    return width.ok() ? std::string("max_link_width was read") : width.error().message;
  });
  EXPECT_EQ(message, "permission denied reading " + (dir / "max_link_width").string());
}

TEST(ReadPciFunctions, GarbageIdentityKeepsTheFunctionAsOther) {
  testing::TempDir temp;
  testing::SysfsTree tree(temp.path());
  tree.add("pci0000:00", "0000:00:03.0", "0xzzzz", "0x030200");
  SysfsNotes notes;
  const auto functions = read_pci_functions(tree.root(), &notes);
  ASSERT_TRUE(functions.ok());
  ASSERT_EQ(functions.value().size(), 1U);
  EXPECT_EQ(functions.value()[0].kind, DeviceKind::kOther) << "an unknown vendor is not classified as a GPU";
  EXPECT_EQ(functions.value()[0].class_code, 0x030200U);
  ASSERT_EQ(notes.by_function.size(), 1U);
  EXPECT_THAT(notes.by_function.begin()->second.front(), HasSubstr("vendor: unrecognised value '0xzzzz'"));
}

TEST(ReadPciFunctions, StrayEntriesAreNotedAndSkipped) {
  testing::TempDir temp;
  testing::SysfsTree tree(temp.path());
  tree.add("pci0000:00", "0000:00:04.0", "0x8086", "0x020000");
  const auto devices = tree.root() / "bus" / "pci" / "devices";
  std::filesystem::create_directory_symlink("../../../devices/pci0000:00/gone", devices / "0000:00:05.0");
  testing::write_file(devices / "not-a-function", "");
  SysfsNotes notes;
  const auto functions = read_pci_functions(tree.root(), &notes);
  ASSERT_TRUE(functions.ok());
  EXPECT_EQ(functions.value().size(), 1U);
  EXPECT_EQ(notes.general.size(), 2U);
  EXPECT_THAT(notes.general, ::testing::Contains(HasSubstr("not-a-function: not a PCI address")));
  EXPECT_THAT(notes.general, ::testing::Contains(HasSubstr("0000:00:05.0")));
}

TEST(ReadPciFunctions, ParentIsTheEnclosingFunctionDirectory) {
  testing::TempDir temp;
  testing::SysfsTree tree(temp.path());
  tree.add("pci0000:00", "0000:00:01.0", "0x8086", "0x060400");
  tree.add("pci0000:00/0000:00:01.0", "0000:01:00.0", "0x10de", "0x030200");
  const auto functions = read_pci_functions(tree.root());
  ASSERT_TRUE(functions.ok());
  ASSERT_EQ(functions.value().size(), 2U);
  EXPECT_FALSE(functions.value()[0].parent.has_value());
  EXPECT_EQ(functions.value()[1].parent, bdf("0000:00:01.0"));
  EXPECT_TRUE(functions.value()[0].is_bridge);
  EXPECT_EQ(functions.value()[1].kind, DeviceKind::kGpu);
  EXPECT_FALSE(functions.value()[1].link.has_value()) << "no link file at all: no PCIe link";
  EXPECT_THAT(functions.value()[1].local_cpulist.value(), Not(HasSubstr("\n")));
}

}  // namespace
}  // namespace pcieval
