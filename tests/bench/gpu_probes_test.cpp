// The GPU probes' registry entries and skip reasons, on machines without a
// usable GPU (this one, and every CI runner). Their measurements are tested
// in tests/gpu/.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "bench/probe.hpp"
#include "kernels/cuda_device.hpp"
#include "topology/hwloc_locality.hpp"
#include "topology/numa_memory.hpp"

namespace pcieval {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::set<std::string> kGpuProbeKeys = {"h2d_ce",      "d2h_ce",      "h2d_sm",   "d2h_sm",         "bidir_ce",
                                             "pageable_ce", "all_gpus_ce", "group_ce", "remote_numa_ce", "sweep_ce"};

ProbeRegistry gpu_probes() {
  ProbeRegistry registry;
  add_gpu_probes(registry);
  return registry;
}

const Probe& probe(const ProbeRegistry& registry, std::string_view key) {
  for (const auto& entry : registry) {
    if (entry->key() == key) return *entry;
  }
  throw std::runtime_error("no probe " + std::string(key));
}

DeviceRecord record(const char* address, DeviceKind kind, const char* upstream) {
  DeviceRecord device;
  device.function.bdf = *parse_pci_address(address);
  device.function.kind = kind;
  device.function.vendor_id = kind == DeviceKind::kGpu ? 0x10de : 0x8086;
  Link own;
  own.downstream = device.function.bdf;
  own.upstream = *parse_pci_address(upstream);
  device.path = {own};
  return device;
}

Evidence one_gpu() {
  Evidence evidence;
  // A GPU address no test machine has, so CUDA can never match it.
  evidence.devices.push_back(record("0000:f7:00.0", DeviceKind::kGpu, "0000:f6:01.0"));
  return evidence;
}

TEST(GpuProbes, KeysAreTheDocumentedOnesAndUnique) {
  const ProbeRegistry registry = gpu_probes();
  std::set<std::string> keys;
  for (const auto& entry : registry) {
    EXPECT_TRUE(keys.insert(std::string(entry->key())).second) << "duplicate key " << entry->key();
  }
  EXPECT_EQ(keys, kGpuProbeKeys);
}

TEST(GpuProbes, DescriptionsAreParagraphsThatNameTheAggregation) {
  for (const auto& entry : gpu_probes()) {
    const std::string description(entry->description());
    EXPECT_GT(description.size(), 200U) << entry->key();
    EXPECT_THAT(description, HasSubstr("aggregation")) << entry->key();
    EXPECT_EQ(description.find('\n'), std::string::npos) << entry->key() << ": one paragraph";
  }
}

TEST(GpuProbes, SweepAndRemoteNumaRunWithFullOnly) {
  const ProbeRegistry registry = gpu_probes();
  for (const auto& entry : registry) {
    const bool full_only = entry->key() == "sweep_ce" || entry->key() == "remote_numa_ce";
    EXPECT_EQ(entry->in_quick(), !full_only) << entry->key();
  }
}

TEST(GpuProbes, EvidenceWithoutGpuSkipsEveryProbeSayingSo) {
  Evidence evidence;
  evidence.devices.push_back(record("0000:18:00.0", DeviceKind::kNic, "0000:17:01.0"));
  DeviceRecord audio = record("0000:19:00.1", DeviceKind::kGpu, "0000:17:02.0");  // not function 0
  evidence.devices.push_back(audio);
  const RunConfig config;
  for (const auto& entry : gpu_probes()) {
    const auto reason = entry->skip_reason(ProbeContext{evidence, config});
    ASSERT_TRUE(reason.has_value()) << entry->key();
    EXPECT_EQ(*reason, "no NVIDIA GPU in the evidence") << entry->key();
  }
}

TEST(GpuProbes, GroupProbeNeedsTwoGpusSharingAPort) {
  const Evidence evidence = one_gpu();
  const RunConfig config;
  const ProbeRegistry registry = gpu_probes();
  const auto reason = probe(registry, "group_ce").skip_reason(ProbeContext{evidence, config});
  ASSERT_TRUE(reason.has_value());
  EXPECT_THAT(*reason, HasSubstr("no switch or root port is shared by two or more GPUs"));
}

TEST(GpuProbes, WithoutCudaOrWithoutTopologyTheReasonSaysWhich) {
  const Evidence evidence = one_gpu();
  const RunConfig config;
  for (const auto& entry : gpu_probes()) {
    if (entry->key() == "group_ce") continue;
    const auto reason = entry->skip_reason(ProbeContext{evidence, config, nullptr});
    ASSERT_TRUE(reason.has_value()) << entry->key();
    if (built_with_cuda()) {
      EXPECT_EQ(*reason, "hwloc topology unavailable: host buffers cannot be bound to the GPUs' NUMA nodes")
          << entry->key();
    } else {
      EXPECT_EQ(*reason, kBuiltWithoutCudaMessage) << entry->key();
    }
  }
}

TEST(GpuProbes, WithTopologyButNoUsableDeviceTheCudaReasonIsGiven) {
  if (!built_with_cuda()) GTEST_SKIP() << kBuiltWithoutCudaMessage;
  if (cuda_device_count().ok()) GTEST_SKIP() << "a CUDA device is usable here; tests/gpu covers this machine";
  auto topology = HwlocTopology::load_live();
  if (!topology) GTEST_SKIP() << "hwloc cannot load this machine: " << topology.error().message;
  const Evidence evidence = one_gpu();
  const RunConfig config;
  const bool one_node = numa_nodes(topology.value()).size() < 2;
  for (const auto& entry : gpu_probes()) {
    if (entry->key() == "group_ce") continue;
    const auto reason = entry->skip_reason(ProbeContext{evidence, config, &topology.value()});
    ASSERT_TRUE(reason.has_value()) << entry->key();
    if (entry->key() == "remote_numa_ce") {
      // one_gpu()'s GPU has no known NUMA node: nothing can be called remote.
      EXPECT_THAT(*reason, HasSubstr(one_node ? "one NUMA node" : "the NUMA node of no GPU is known"));
    } else {
      EXPECT_THAT(*reason, StartsWith("no usable CUDA device: ")) << entry->key();
      EXPECT_GT(reason->size(), std::string("no usable CUDA device: ").size()) << "CUDA's own reason follows";
    }
  }
}

TEST(GpuProbes, WithoutCudaEveryKernelsCallSaysSo) {
  if (built_with_cuda()) GTEST_SKIP() << "this build has CUDA";
  const auto count = cuda_device_count();
  ASSERT_FALSE(count.ok());
  EXPECT_EQ(count.error().message, kBuiltWithoutCudaMessage);
}

}  // namespace
}  // namespace pcieval
