// The host-memory ceiling on this machine's real memory: the engine's test bed
// without a GPU. Sizes are small so the suite stays fast; the rates are only
// checked to be real numbers, never against a speed.
#include "bench/host_ceiling.hpp"

#include <gtest/gtest.h>

#include <chrono>

#include "bench/host_copy.hpp"
#include "topology/numa_memory.hpp"

namespace pcieval {
namespace {

class LiveTopology : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = HwlocTopology::load_live();
    if (!loaded) GTEST_SKIP() << "hwloc cannot load this machine: " << loaded.error().message;
    topology_.emplace(std::move(loaded).value());
    nodes_ = numa_nodes(*topology_);
    ASSERT_FALSE(nodes_.empty());
  }
  std::optional<HwlocTopology> topology_;
  std::vector<int> nodes_;
};

TEST_F(LiveTopology, ACopyVerifiesAndTakesTime) {
  // 1 MiB + 3 bytes: chunks on page boundaries and a tail shorter than a word.
  auto copier = HostCopier::create(*topology_, {.numa_node = nodes_[0], .size_bytes = (1u << 20) + 3, .threads = 3});
  ASSERT_TRUE(copier) << copier.error().message;
  EXPECT_EQ(copier->threads(), 3);
  EXPECT_EQ(copier->numa_node(), nodes_[0]);
  for (int i = 0; i < 3; ++i) {
    auto seconds = copier.value().timed_copy();
    ASSERT_TRUE(seconds) << seconds.error().message;
    EXPECT_GT(seconds.value(), 0.0);
  }
}

TEST_F(LiveTopology, AWrongByteIsCaughtAndNoTimeIsReturned) {
  auto copier = HostCopier::create(*topology_, {.numa_node = nodes_[0], .size_bytes = 1u << 20, .threads = 2});
  ASSERT_TRUE(copier) << copier.error().message;
  copier.value().corrupt_next_copy_for_test();
  auto seconds = copier.value().timed_copy();
  ASSERT_FALSE(seconds);
  EXPECT_NE(seconds.error().message.find("1 of 131072 words wrong"), std::string::npos) << seconds.error().message;
  // The next copy is clean again: the poison and the copy really ran.
  EXPECT_TRUE(copier.value().timed_copy());
}

// Issue 17: the copy is timed from the moment every worker runs to the last
// one's end, so a worker whose CPU is slow to wake (a halted vCPU on a small
// VM) is not counted as copying, as it was when the coordinator timed from
// releasing the workers. 4 MiB copy in well under 100 ms even on a loaded
// machine; the late start is 300 ms.
TEST_F(LiveTopology, AWorkerThatWakesLateIsNotTimedAsCopying) {
  auto copier = HostCopier::create(*topology_, {.numa_node = nodes_[0], .size_bytes = 4u << 20, .threads = 2});
  ASSERT_TRUE(copier) << copier.error().message;
  copier.value().delay_next_copy_start_for_test(std::chrono::milliseconds(300));
  const auto started = std::chrono::steady_clock::now();
  auto seconds = copier.value().timed_copy();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_TRUE(seconds) << seconds.error().message;
  EXPECT_GE(wall_s, 0.3) << "the late start really happened";
  EXPECT_GT(seconds.value(), 0.0);
  EXPECT_LT(seconds.value(), 0.1) << "the wait for the late worker was timed as copying";
  // The delay applies to one copy only, and the data still verifies.
  EXPECT_TRUE(copier.value().timed_copy());
}

TEST_F(LiveTopology, MoreThreadsThanPagesStillCopiesEverything) {
  auto copier = HostCopier::create(*topology_, {.numa_node = nodes_[0], .size_bytes = 8192, .threads = 4});
  ASSERT_TRUE(copier) << copier.error().message;
  EXPECT_TRUE(copier.value().timed_copy());
}

TEST_F(LiveTopology, AnUnknownNodeIsAnError) {
  auto copier = HostCopier::create(*topology_, {.numa_node = 4096, .size_bytes = 4096, .threads = 1});
  ASSERT_FALSE(copier);
  EXPECT_EQ(copier.error().message, "NUMA node 4096 does not exist");
}

TEST_F(LiveTopology, TheProbeMeasuresEveryNodeWhenThereIsNoGpu) {
  Evidence evidence;
  RunConfig config;
  config.size_bytes = 1u << 20;
  config.warmup_trials = 1;
  config.trials = 4;
  LoadSignal load;
  const ProbeContext context{evidence, config, &*topology_, &load};
  auto probe = make_host_ceiling_probe();
  ASSERT_EQ(probe->skip_reason(context), std::nullopt);
  const ProbeMeasurements output = probe->run(context);
  ASSERT_TRUE(output.errors.empty()) << output.errors[0];
  ASSERT_EQ(output.measurements.size(), nodes_.size());
  const Measurement& m = output.measurements[0];
  EXPECT_EQ(m.probe, "host_ceiling");
  EXPECT_EQ(m.subject, "numa" + std::to_string(nodes_[0]));
  EXPECT_EQ(m.direction, Direction::kHostToHost);
  EXPECT_EQ(m.method, CopyMethod::kCpuThreads);
  EXPECT_EQ(m.aggregation, Aggregation::kTotalOverWallTime);
  EXPECT_EQ(m.size_bytes, 1u << 20);
  EXPECT_EQ(m.trials_gbps.size(), 4u);
  EXPECT_EQ(m.host_numa_node, nodes_[0]);
  EXPECT_TRUE(m.verified);
  EXPECT_GT(m.stats.min_gbps, 0.0);
  EXPECT_LE(m.stats.min_gbps, m.stats.median_gbps);
  EXPECT_LE(m.stats.median_gbps, m.stats.max_gbps);
  EXPECT_FALSE(load.active());
}

TEST(HostCeilingProbe, SkipsWithAReasonWithoutATopology) {
  Evidence evidence;
  RunConfig config;
  auto probe = make_host_ceiling_probe();
  const auto reason = probe->skip_reason(ProbeContext{evidence, config, nullptr, nullptr});
  ASSERT_TRUE(reason);
  EXPECT_EQ(*reason, "the hwloc topology of this machine could not be loaded");
}

DeviceRecord gpu_on_node(const char* address, std::optional<int> locality_node, int sysfs_node) {
  DeviceRecord record;
  record.function.bdf = parse_pci_address(address).value();
  record.function.kind = DeviceKind::kGpu;
  record.function.numa_node = sysfs_node;
  if (locality_node) record.locality = Locality{locality_node, std::nullopt, {}};
  return record;
}

TEST(HostCeilingNodes, NodesNearestAGpuPreferringHwloc) {
  Evidence evidence;
  evidence.devices.push_back(gpu_on_node("0000:17:00.0", 0, 0));
  evidence.devices.push_back(gpu_on_node("0000:65:00.0", 0, 0));
  evidence.devices.push_back(gpu_on_node("0000:ca:00.0", 1, 3));  // hwloc says 1, sysfs 3: hwloc wins
  const std::vector<int> machine{0, 1, 2, 3};
  EXPECT_EQ(host_ceiling_nodes(evidence, machine), (std::vector<int>{0, 1}));
}

TEST(HostCeilingNodes, EveryNodeWhenNoGpuNodeIsKnown) {
  Evidence evidence;
  DeviceRecord nic;
  nic.function.kind = DeviceKind::kNic;
  nic.function.numa_node = 1;
  evidence.devices.push_back(nic);
  const std::vector<int> machine{0, 1};
  EXPECT_EQ(host_ceiling_nodes(evidence, machine), (std::vector<int>{0, 1}));
}

TEST(HostCeilingNodes, AGpuNodeThisMachineDoesNotHaveIsIgnored) {
  Evidence evidence;
  evidence.devices.push_back(gpu_on_node("0000:17:00.0", std::nullopt, 7));
  const std::vector<int> machine{0};
  EXPECT_EQ(host_ceiling_nodes(evidence, machine), (std::vector<int>{0}));
}

TEST(HostPattern, NeighbouringWordsAndSeedsDiffer) {
  EXPECT_NE(host_pattern_word(0, 1), host_pattern_word(1, 1));
  EXPECT_NE(host_pattern_word(5, 1), host_pattern_word(5, 2));
  EXPECT_NE(host_pattern_word(0, 0), 0u);
}

}  // namespace
}  // namespace pcieval
