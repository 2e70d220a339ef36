#include "topology/error_counters.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "topology/topology_test_util.hpp"

namespace pcieval {
namespace {

using testing::bdf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::write_file;

constexpr const char* kRootPort = "0000:00:01.0";
constexpr const char* kGpu = "0000:01:00.0";

// What a current kernel prints (PCIE-FACTS 4.2): every named bit, then the total.
std::string correctable(int bad_tlp, int total) {
  return "RxErr 0\nBadTLP " + std::to_string(bad_tlp) +
         "\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR " +
         std::to_string(total) + "\n";
}
std::string uncorrectable(const std::string& total_name, int total) {
  return "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 0\nCmpltAbrt 0\nUnxCmplt 0\nRxOF 0\nMalfTLP 0\n"
         "ECRC 0\nUnsupReq 0\nACSViol 0\nUncorrIntErr 0\nBlockedTLP 0\nAtomicOpBlocked 0\nTLPBlockedErr 0\n"
         "PoisonTLPBlocked 0\n" +
         total_name + " " + std::to_string(total) + "\n";
}

class ErrorCountersTest : public ::testing::Test {
 protected:
  ErrorCountersTest() : tree(temp_dir.path()) {
    port_dir = tree.add("pci0000:00", kRootPort, "0x8086", "0x060400");
    gpu_dir = tree.add(std::string("pci0000:00/") + kRootPort, kGpu, "0x10de", "0x030200");
    set_aer(port_dir, 0, 0, 0);
    set_aer(gpu_dir, 0, 0, 0);
  }

  static void set_aer(const std::filesystem::path& dir, int cor, int fatal, int nonfatal) {
    write_file(dir / "aer_dev_correctable", correctable(cor, cor));
    write_file(dir / "aer_dev_fatal", uncorrectable("TOTAL_ERR_FATAL", fatal));
    write_file(dir / "aer_dev_nonfatal", uncorrectable("TOTAL_ERR_NONFATAL", nonfatal));
  }

  testing::TempDir temp_dir;
  testing::SysfsTree tree;
  std::filesystem::path port_dir;
  std::filesystem::path gpu_dir;
};

TEST_F(ErrorCountersTest, ReadsTheThreeAerTotalsOfEachDevice) {
  set_aer(port_dir, 4, 0, 1);
  const auto snapshot = read_error_counters(tree.root(), {bdf(kGpu), bdf(kRootPort)});
  EXPECT_THAT(snapshot.notes, IsEmpty());
  ASSERT_EQ(snapshot.values.size(), 2U);
  const std::map<std::string, std::uint64_t> port = {{"aer_correctable", 4}, {"aer_fatal", 0}, {"aer_nonfatal", 1}};
  EXPECT_EQ(snapshot.values.at(bdf(kRootPort)), port);
  EXPECT_EQ(snapshot.values.at(bdf(kGpu)).at("aer_correctable"), 0U);
}

TEST_F(ErrorCountersTest, BeforeAndAfterBecomeDeltas) {
  const std::vector<PciAddress> devices = {bdf(kGpu), bdf(kRootPort)};
  const auto before = read_error_counters(tree.root(), devices);
  // The copies made the root port log replays (counted at the link partner).
  set_aer(port_dir, 12, 0, 0);
  const auto after = read_error_counters(tree.root(), devices);

  const auto deltas = counter_deltas(before, after);
  ASSERT_EQ(deltas.size(), 6U);
  // Ordered by device, then counter name.
  EXPECT_EQ(deltas[0].device, bdf(kRootPort));
  EXPECT_EQ(deltas[0].counter, "aer_correctable");
  EXPECT_EQ(deltas[0].before, 0U);
  EXPECT_EQ(deltas[0].after, 12U);
  EXPECT_EQ(deltas[1].counter, "aer_fatal");
  EXPECT_EQ(deltas[2].counter, "aer_nonfatal");
  EXPECT_EQ(deltas[3].device, bdf(kGpu));
  EXPECT_EQ(deltas[3].after, 0U);
}

TEST_F(ErrorCountersTest, AbsentAerFilesAreSilentlyAbsent) {
  // A kernel without AER, or a device without the capability: no files.
  std::filesystem::remove(gpu_dir / "aer_dev_correctable");
  std::filesystem::remove(gpu_dir / "aer_dev_fatal");
  std::filesystem::remove(gpu_dir / "aer_dev_nonfatal");
  const auto snapshot = read_error_counters(tree.root(), {bdf(kGpu), bdf(kRootPort)});
  EXPECT_THAT(snapshot.notes, IsEmpty());
  EXPECT_EQ(snapshot.values.count(bdf(kGpu)), 0U);
  EXPECT_EQ(snapshot.values.at(bdf(kRootPort)).size(), 3U);
}

TEST_F(ErrorCountersTest, UnreadableOrTotallessFilesAreNotedAndLeftOut) {
  write_file(gpu_dir / "aer_dev_fatal", "DLP 0\nSDES 0\n");  // no TOTAL_ERR_FATAL
  std::filesystem::remove(gpu_dir / "aer_dev_nonfatal");
  std::filesystem::create_directory(gpu_dir / "aer_dev_nonfatal");  // read fails with EISDIR
  const auto snapshot = read_error_counters(tree.root(), {bdf(kGpu)});
  const std::map<std::string, std::uint64_t> only_correctable = {{"aer_correctable", 0}};
  EXPECT_EQ(snapshot.values.at(bdf(kGpu)), only_correctable);
  ASSERT_EQ(snapshot.notes.size(), 2U);
  EXPECT_THAT(snapshot.notes[0], HasSubstr("0000:01:00.0: aer_dev_fatal has no TOTAL_ERR_* line"));
  EXPECT_THAT(snapshot.notes[1], HasSubstr("0000:01:00.0: aer_nonfatal not read"));
}

TEST_F(ErrorCountersTest, OldKernelNamesWithSpacesStillGiveTheTotal) {
  write_file(gpu_dir / "aer_dev_correctable",
             "Receiver Error 2\nBad TLP 5\nBad DLLP 0\nRELAY_NUM Rollover 0\nTOTAL_ERR_COR 7\n");
  const auto snapshot = read_error_counters(tree.root(), {bdf(kGpu)});
  EXPECT_EQ(snapshot.values.at(bdf(kGpu)).at("aer_correctable"), 7U);
}

TEST(CounterDeltas, CountersReadOnlyOnceAreLeftOut) {
  CounterSnapshot before;
  before.values[bdf("0000:01:00.0")] = {{"aer_correctable", 1}, {"nvml_replay", 10}};
  before.values[bdf("0000:02:00.0")] = {{"aer_correctable", 0}};
  CounterSnapshot after;
  after.values[bdf("0000:01:00.0")] = {{"aer_correctable", 3}, {"aer_fatal", 0}};  // replay not read after
  after.values[bdf("0000:03:00.0")] = {{"aer_correctable", 0}};                    // not read before

  const auto deltas = counter_deltas(before, after);
  ASSERT_EQ(deltas.size(), 1U);
  EXPECT_EQ(deltas[0].device, bdf("0000:01:00.0"));
  EXPECT_EQ(deltas[0].counter, "aer_correctable");
  EXPECT_EQ(deltas[0].before, 1U);
  EXPECT_EQ(deltas[0].after, 3U);
  EXPECT_THAT(counter_deltas(CounterSnapshot{}, after), IsEmpty());
}

TEST(CounterDeltas, AFallingCounterIsKeptAsRead) {
  // A device reset between the reads clears its counters: the validator decides.
  CounterSnapshot before;
  before.values[bdf("0000:01:00.0")] = {{"nvml_replay", 50}};
  CounterSnapshot after;
  after.values[bdf("0000:01:00.0")] = {{"nvml_replay", 2}};
  const auto deltas = counter_deltas(before, after);
  ASSERT_EQ(deltas.size(), 1U);
  EXPECT_EQ(deltas[0].before, 50U);
  EXPECT_EQ(deltas[0].after, 2U);
}

// --- the GPU's replay counter through a fake NVML ---

std::map<std::string, unsigned int>& fake_replays() {
  static std::map<std::string, unsigned int> replays;
  return replays;
}

NvmlReturn fake_init() { return kNvmlSuccess; }
NvmlReturn fake_shutdown() { return kNvmlSuccess; }
NvmlReturn fake_handle(const char* bus_id, NvmlDevice* device) {
  const auto it = fake_replays().find(bus_id);
  if (it == fake_replays().end()) return kNvmlErrorNotFound;
  *device = reinterpret_cast<NvmlDevice>(&it->second);
  return kNvmlSuccess;
}
NvmlReturn fake_replay(NvmlDevice device, unsigned int* value) {
  *value = *reinterpret_cast<unsigned int*>(device);
  return kNvmlSuccess;
}

TEST_F(ErrorCountersTest, ReadsTheNvmlReplayCounterOfGpus) {
  fake_replays().clear();
  fake_replays()["00000000:01:00.0"] = 3;
  NvmlApi api;
  api.init_v2 = fake_init;
  api.shutdown = fake_shutdown;
  api.device_get_handle_by_pci_bus_id_v2 = fake_handle;
  api.device_get_pcie_replay_counter = fake_replay;
  auto library = NvmlLibrary::from_api(api);
  ASSERT_TRUE(library.ok());
  const NvmlReader reader(library.value());

  const std::vector<PciAddress> devices = {bdf(kGpu), bdf(kRootPort)};
  const std::vector<PciAddress> gpus = {bdf(kGpu), bdf("0000:81:00.0")};
  const auto before = read_error_counters(tree.root(), devices, &reader, gpus);
  EXPECT_EQ(before.values.at(bdf(kGpu)).at("nvml_replay"), 3U);
  ASSERT_EQ(before.notes.size(), 1U);  // the GPU NVML does not know
  EXPECT_THAT(before.notes[0], HasSubstr("0000:81:00.0: nvml_replay not read: no GPU at 0000:81:00.0"));

  fake_replays()["00000000:01:00.0"] = 9;
  const auto after = read_error_counters(tree.root(), devices, &reader, gpus);
  const auto deltas = counter_deltas(before, after);
  std::vector<std::string> rising;
  for (const CounterDelta& delta : deltas) {
    if (delta.after != delta.before) rising.push_back(to_string(delta.device) + " " + delta.counter);
  }
  EXPECT_THAT(rising, ElementsAre("0000:01:00.0 nvml_replay"));
  fake_replays().clear();
}

TEST_F(ErrorCountersTest, WithoutAReaderNoReplayCounterIsRead) {
  const auto snapshot = read_error_counters(tree.root(), {bdf(kGpu)}, nullptr, {bdf(kGpu)});
  EXPECT_EQ(snapshot.values.at(bdf(kGpu)).count("nvml_replay"), 0U);
}

}  // namespace
}  // namespace pcieval
