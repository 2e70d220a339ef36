// The NCCL all-reduce probes without a GPU: registration, skip reasons, the
// bus-bandwidth factor, the sweep, and the environment they set and restore.
// tests/gpu/nccl_probe_on_gpu_test.cpp runs them on GPUs.
#include "bench/nccl_probe.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "bench/detail/scoped_environment.hpp"
#include "bench/nccl_part.hpp"
#include "kernels/cuda_device.hpp"

namespace pcieval {
namespace {

PciAddress bdf(const char* text) { return *parse_pci_address(text); }

// Two H100 PCIe cards of a Supermicro SYS-521GE-TNRT, as discovery records
// them (the probes read only the GPUs' addresses).
Evidence two_gpus(int count = 2) {
  Evidence evidence;
  const char* addresses[] = {"0000:17:00.0", "0000:65:00.0"};
  for (int i = 0; i < count; ++i) {
    DeviceRecord gpu;
    gpu.function.bdf = bdf(addresses[i]);
    gpu.function.kind = DeviceKind::kGpu;
    gpu.function.vendor_id = 0x10de;
    evidence.devices.push_back(gpu);
  }
  return evidence;
}

TEST(NcclProbe, RegistersTheHostPathFirst) {
  ProbeRegistry registry;
  add_nccl_probes(registry);
  ASSERT_EQ(registry.size(), 2U);
  EXPECT_EQ(registry[0]->key(), "allreduce_nccl_host");
  EXPECT_TRUE(registry[0]->in_quick());
  EXPECT_EQ(registry[1]->key(), "allreduce_nccl");
  EXPECT_FALSE(registry[1]->in_quick());
  for (const auto& probe : registry) EXPECT_NE(probe->description().find("2(n-1)/n"), std::string_view::npos);
}

// Issue 17, item 9: the host-path variables are set once, before any thread
// of the run starts (prepare_nccl_environment), never by the probe while the
// link sampler and NVML's worker read the environment. A probe run without
// them refuses, before touching CUDA or NCCL.
TEST(NcclProbe, TheHostPathNeedsItsEnvironmentSetBeforeTheRun) {
  ProbeRegistry registry;
  NcclProbeOptions options;
  options.library_name = "/nonexistent/libnccl.so.2";
  add_nccl_probes(registry, options);
  const Evidence evidence = two_gpus();
  const RunConfig config;
  const ProbeContext context{evidence, config};
  const std::string p2p_before = std::getenv("NCCL_P2P_DISABLE") != nullptr ? std::getenv("NCCL_P2P_DISABLE") : "";

  const ProbeMeasurements refused = registry[0]->run(context);
  ASSERT_EQ(refused.errors.size(), 1U);
  EXPECT_NE(refused.errors[0].find("were not set before the run's threads started"), std::string::npos)
      << refused.errors[0];
  EXPECT_TRUE(refused.gpu_faults.empty()) << "refused before any GPU was looked at";
  const std::string p2p_after = std::getenv("NCCL_P2P_DISABLE") != nullptr ? std::getenv("NCCL_P2P_DISABLE") : "";
  EXPECT_EQ(p2p_after, p2p_before) << "the probe itself sets no variable";

  prepare_nccl_environment(true);
  EXPECT_STREQ(std::getenv("NCCL_P2P_DISABLE"), "1");
  EXPECT_STREQ(std::getenv("NCCL_NVLS_ENABLE"), "0");
  EXPECT_STREQ(std::getenv("NCCL_SHM_DISABLE"), "0");
  const ProbeMeasurements ran = registry[0]->run(context);
  for (const std::string& error : ran.errors) {
    EXPECT_EQ(error.find("were not set before the run's threads started"), std::string::npos) << error;
  }
}

TEST(NcclProbe, OneGpuIsSkippedWithTheReason) {
  ProbeRegistry registry;
  add_nccl_probes(registry);
  const Evidence evidence = two_gpus(1);
  const RunConfig config;
  const ProbeContext context{evidence, config};
  for (const auto& probe : registry) {
    EXPECT_EQ(probe->skip_reason(context).value_or(""), "all-reduce needs 2 or more GPUs (found 1)");
  }
}

TEST(NcclProbe, WithoutCudaOrNcclOrDevicesTheReasonSaysWhich) {
  ProbeRegistry registry;
  NcclProbeOptions options;
  options.library_name = "/nonexistent/libnccl.so.2";
  add_nccl_probes(registry, options);
  const Evidence evidence = two_gpus();
  const RunConfig config;
  const ProbeContext context{evidence, config};
  const auto reason = registry[0]->skip_reason(context);
  ASSERT_TRUE(reason.has_value());
  if (!built_with_cuda()) {
    EXPECT_EQ(*reason, kBuiltWithoutCudaMessage);
  } else {
    EXPECT_EQ(reason->rfind("NCCL not loadable: /nonexistent/libnccl.so.2 could not be loaded: ", 0), 0U) << *reason;
  }
}

TEST(NcclProbe, WithNcclButNoGpuTheReasonIsTheDevice) {
  if (!built_with_cuda()) GTEST_SKIP() << kBuiltWithoutCudaMessage;
  if (cuda_device_count().ok()) GTEST_SKIP() << "this machine has a CUDA device";
  ProbeRegistry registry;
  add_nccl_probes(registry);
  const Evidence evidence = two_gpus();
  const RunConfig config;
  const ProbeContext context{evidence, config};
  const auto reason = registry[0]->skip_reason(context);
  ASSERT_TRUE(reason.has_value());
  // Either NCCL is missing here, or it loaded and the devices are what is missing.
  EXPECT_TRUE(reason->rfind("NCCL not loadable: ", 0) == 0 || reason->rfind("no usable CUDA device: ", 0) == 0)
      << *reason;
}

TEST(NcclFleetPart, WithoutNcclOrCudaEveryEntryPointSaysWhy) {
  NcclProbeOptions options;
  options.library_name = "/nonexistent/libnccl.so.2";
  const auto ordinals = allreduce_part_ordinals(options);
  ASSERT_FALSE(ordinals.ok());
  const auto id = make_nccl_unique_id(options);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.error().message.rfind("NCCL not loadable: /nonexistent/libnccl.so.2", 0), 0U) << id.error().message;
  if (!built_with_cuda()) {
    EXPECT_EQ(ordinals.error().message, kBuiltWithoutCudaMessage);
  } else {
    EXPECT_EQ(ordinals.error().message.rfind("NCCL not loadable: /nonexistent/libnccl.so.2", 0), 0U)
        << ordinals.error().message;
  }
}

TEST(NcclFleetPart, APartThatCannotBeRightIsRefusedBeforeAnyNcclCall) {
  NcclProbeOptions options;
  options.library_name = "/nonexistent/libnccl.so.2";
  AllReducePart part;
  part.ordinals = {0, 1};
  part.first_rank = 7;
  part.total_ranks = 8;  // ranks 7 and 8 of 8: one too many
  part.size_bytes = std::uint64_t{256} << 20;
  auto result = run_allreduce_part(part, options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, "this process's ranks 7 + 2 do not fit in 8");
  part.total_ranks = 16;
  part.size_bytes = 6;  // not whole floats
  result = run_allreduce_part(part, options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, "the all-reduce size must be a non-zero multiple of 4 bytes (floats), got 6");
  part.size_bytes = 64;
  result = run_allreduce_part(part, options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message.rfind("NCCL not loadable: ", 0), 0U) << result.error().message;
}

TEST(NcclProbe, BusBandwidthFactorIsNcclTests) {
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(1), 0.0);
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(2), 1.0);
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(4), 1.5);
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(8), 1.75);
}

TEST(NcclProbe, SweepRunsFrom8KiBTo1GiB) {
  const auto sizes = allreduce_sweep_sizes();
  ASSERT_EQ(sizes.size(), 10U);
  EXPECT_EQ(sizes.front(), 8U << 10);
  EXPECT_EQ(sizes[1], 32U << 10);
  EXPECT_EQ(sizes[8], 512U << 20);
  EXPECT_EQ(sizes.back(), 1U << 30);
  for (std::uint64_t size : sizes) EXPECT_EQ(size % sizeof(float), 0U);
}

TEST(NcclProbe, ScopedEnvironmentRestoresValuesAndAbsence) {
  ::setenv("PCIEVAL_TEST_SET", "before", 1);
  ::unsetenv("PCIEVAL_TEST_UNSET");
  {
    ScopedEnvironment environment;
    environment.set("PCIEVAL_TEST_SET", "1");
    environment.set("PCIEVAL_TEST_UNSET", "0");
    environment.set("PCIEVAL_TEST_SET", "2");
    EXPECT_STREQ(std::getenv("PCIEVAL_TEST_SET"), "2");
    EXPECT_STREQ(std::getenv("PCIEVAL_TEST_UNSET"), "0");
  }
  EXPECT_STREQ(std::getenv("PCIEVAL_TEST_SET"), "before");
  EXPECT_EQ(std::getenv("PCIEVAL_TEST_UNSET"), nullptr);
  ::unsetenv("PCIEVAL_TEST_SET");
}

}  // namespace
}  // namespace pcieval
