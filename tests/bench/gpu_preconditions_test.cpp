// The rules that skip GPU probes before any CUDA call (issue 17, items 4, 8
// and 10), on their plain inputs and through the probes' skip reasons. No GPU
// is needed: each rule is decided before the CUDA device count is read.
#include "bench/gpu_preconditions.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "bench/probe.hpp"
#include "kernels/cuda_device.hpp"
#include "topology/hwloc_locality.hpp"
#include "topology/numa_memory.hpp"

namespace pcieval {
namespace {

using ::testing::HasSubstr;

TEST(LaunchBlocking, OnlyTheValueOneTurnsItOn) {
  EXPECT_FALSE(launch_blocking_requested(nullptr));
  EXPECT_FALSE(launch_blocking_requested("0"));
  EXPECT_FALSE(launch_blocking_requested(""));
  EXPECT_TRUE(launch_blocking_requested("1"));
}

TEST(LaunchBlocking, LatchedProbesAreRefusedWithOneLine) {
  EXPECT_FALSE(launch_blocking_skip_reason(false).has_value());
  const auto reason = launch_blocking_skip_reason(true);
  ASSERT_TRUE(reason.has_value());
  EXPECT_THAT(*reason, HasSubstr("CUDA_LAUNCH_BLOCKING=1"));
  EXPECT_EQ(reason->find('\n'), std::string::npos);
}

TEST(ConfidentialComputing, OnSkipsUnknownAndOffDoNot) {
  EXPECT_FALSE(confidential_computing_skip_reason(std::nullopt).has_value());
  EXPECT_FALSE(confidential_computing_skip_reason(false).has_value());
  const auto reason = confidential_computing_skip_reason(true);
  ASSERT_TRUE(reason.has_value());
  EXPECT_THAT(*reason, HasSubstr("confidential-computing mode"));
}

// Issue 26 item 6.
TEST(MigMode, OnIsASkipNamingTheFixForThatGpuAndOffIsNot) {
  EXPECT_FALSE(mig_skip_reason(false, "0000:17:00.0").has_value());
  const auto reason = mig_skip_reason(true, "0000:17:00.0");
  ASSERT_TRUE(reason.has_value());
  EXPECT_THAT(*reason, HasSubstr("MIG mode is on"));
  EXPECT_THAT(*reason, HasSubstr("nvidia-smi -i 0000:17:00.0 -mig 0"));
}

// Issue 26 item 9: a tenant that only copies runs no kernel (SM utilisation
// 0 %) but moves GB/s over PCIe; an idle GPU's driver chatter does not count.
TEST(PcieTrafficBeforeRun, AnotherJobsCopiesMakeTheGpuUnmeasurableAndIdleChatterDoesNot) {
  EXPECT_FALSE(pcie_traffic_skip_reason(0).has_value());
  EXPECT_FALSE(pcie_traffic_skip_reason(567 + 559).has_value()) << "an idle H100 at P0";
  EXPECT_FALSE(pcie_traffic_skip_reason(kBusyPcieTrafficKbps).has_value());
  EXPECT_TRUE(pcie_traffic_skip_reason(kBusyPcieTrafficKbps + 1).has_value());
  const auto reason = pcie_traffic_skip_reason(12'500'000 + 310);  // a data loader at 12.5 GB/s H2D
  ASSERT_TRUE(reason.has_value());
  EXPECT_THAT(*reason, HasSubstr("moved 12.50 GB/s over PCIe before the probes"));
  EXPECT_THAT(*reason, HasSubstr("another job shares its link"));
}

TEST(RemoteNuma, OneNodeMachineHasNoRemoteNode) {
  const std::vector<std::optional<int>> gpus = {0};
  EXPECT_THAT(remote_numa_skip_reason(1, gpus).value_or(""), HasSubstr("one NUMA node"));
}

// A VM with two NUMA nodes whose GPU's node is unknown: skipped with that
// reason, not run and failed (which made the run inconclusive).
TEST(RemoteNuma, NoGpuWithAKnownNodeIsASkip) {
  const std::vector<std::optional<int>> gpus = {std::nullopt, std::nullopt};
  EXPECT_THAT(remote_numa_skip_reason(2, gpus).value_or(""), HasSubstr("the NUMA node of no GPU is known"));
}

TEST(RemoteNuma, OneGpuWithAKnownNodeRuns) {
  const std::vector<std::optional<int>> gpus = {std::nullopt, 1};
  EXPECT_FALSE(remote_numa_skip_reason(2, gpus).has_value());
}

DeviceRecord gpu_record(const char* address, std::optional<int> numa_node) {
  DeviceRecord device;
  device.function.bdf = *parse_pci_address(address);
  device.function.kind = DeviceKind::kGpu;
  device.function.vendor_id = 0x10de;
  if (numa_node) device.function.numa_node = *numa_node;
  return device;
}

class GpuProbeSkips : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!built_with_cuda()) GTEST_SKIP() << kBuiltWithoutCudaMessage;
    auto loaded = HwlocTopology::load_live();
    if (!loaded) GTEST_SKIP() << "hwloc cannot load this machine: " << loaded.error().message;
    topology.emplace(std::move(loaded).value());
    // A GPU address no test machine has.
    evidence.devices.push_back(gpu_record("0000:f7:00.0", std::nullopt));
    add_gpu_probes(registry);
  }

  std::optional<HwlocTopology> topology;
  Evidence evidence;
  RunConfig config;
  ProbeRegistry registry;
};

TEST_F(GpuProbeSkips, LaunchBlockingSkipsEveryLatchedProbeButNotThePageableOne) {
  config.cuda_launch_blocking = true;
  const ProbeContext context{evidence, config, &*topology};
  const bool one_node = numa_nodes(*topology).size() < 2;
  for (const auto& probe : registry) {
    if (probe->key() == "group_ce") continue;                    // needs GPUs sharing a port first
    if (probe->key() == "remote_numa_ce" && one_node) continue;  // needs two nodes first
    const auto reason = probe->skip_reason(context);
    ASSERT_TRUE(reason.has_value()) << probe->key();
    if (probe->key() == "pageable_ce") {
      EXPECT_THAT(*reason, ::testing::Not(HasSubstr("CUDA_LAUNCH_BLOCKING"))) << "no latch there";
    } else {
      EXPECT_THAT(*reason, HasSubstr("CUDA_LAUNCH_BLOCKING=1")) << probe->key();
    }
  }
}

TEST_F(GpuProbeSkips, ConfidentialComputingSkipsEveryPinnedProbe) {
  ProbeContext context{evidence, config, &*topology};
  context.confidential_computing = true;
  const bool one_node = numa_nodes(*topology).size() < 2;
  for (const auto& probe : registry) {
    if (probe->key() == "group_ce") continue;
    if (probe->key() == "remote_numa_ce" && one_node) continue;
    const auto reason = probe->skip_reason(context);
    ASSERT_TRUE(reason.has_value()) << probe->key();
    if (probe->key() == "pageable_ce") {
      EXPECT_THAT(*reason, ::testing::Not(HasSubstr("confidential"))) << "pageable copies need no registration";
    } else {
      EXPECT_THAT(*reason, HasSubstr("confidential-computing mode")) << probe->key();
    }
  }
}

TEST_F(GpuProbeSkips, RemoteNumaSaysWhyItCannotRun) {
  const ProbeContext context{evidence, config, &*topology};
  for (const auto& probe : registry) {
    if (probe->key() != "remote_numa_ce") continue;
    const auto reason = probe->skip_reason(context);
    ASSERT_TRUE(reason.has_value());
    if (numa_nodes(*topology).size() < 2) {
      EXPECT_THAT(*reason, HasSubstr("one NUMA node"));
    } else {
      EXPECT_THAT(*reason, HasSubstr("the NUMA node of no GPU is known"));
    }
  }
}

}  // namespace
}  // namespace pcieval
