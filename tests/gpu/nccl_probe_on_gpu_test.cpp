// The NCCL all-reduce probes on this machine's GPUs, with small settings:
// they run, every result verifies, and busbw is algbw x 2(n-1)/n of sane
// rates. Skips, with the reason, without CUDA, with fewer than 2 GPUs, or
// without libnccl.so.2.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "bench/nccl_probe.hpp"
#include "gpu/gpu_test_util.hpp"
#include "kernels/cuda_device.hpp"
#include "kernels/retired_devices.hpp"

namespace pcieval {
namespace {

using testing::kSaneCeilingGbps;

class NcclProbeOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_GPU();
    // As app/ does before any thread starts (nccl_probe.hpp).
    prepare_nccl_environment(true);
    const int count = cuda_device_count().value();
    for (int ordinal = 0; ordinal < count; ++ordinal) {
      DeviceRecord gpu;
      gpu.function.bdf = cuda_pci_address(ordinal).value();
      gpu.function.kind = DeviceKind::kGpu;
      gpu.function.vendor_id = 0x10de;
      evidence.devices.push_back(gpu);
    }
    config.size_bytes = std::uint64_t{64} << 20;
    config.warmup_trials = 1;
    config.trials = 3;
    NcclProbeOptions options;
    options.timeout_s = 30;
    add_nccl_probes(registry, options);
  }

  // Runs the probe at `index`, expecting it to apply and to measure cleanly.
  void run_clean(std::size_t index) {
    const Probe& probe = *registry[index];
    const ProbeContext context{evidence, config, nullptr, &load};
    if (auto reason = probe.skip_reason(context)) GTEST_SKIP() << probe.key() << ": " << *reason;
    const ProbeMeasurements output = probe.run(context);
    EXPECT_TRUE(output.errors.empty()) << ::testing::PrintToString(output.errors);
    for (const GpuFault& fault : output.gpu_faults) ADD_FAILURE() << to_string(fault.gpu) << ": " << fault.error;
    ASSERT_EQ(output.measurements.size(), 1U);
    EXPECT_FALSE(output.warnings.empty()) << "the transport settings are stated";
    EXPECT_FALSE(load.active());
    const Measurement& m = output.measurements[0];
    const int n = static_cast<int>(evidence.devices.size());
    EXPECT_EQ(m.probe, probe.key());
    EXPECT_EQ(m.subject, std::to_string(n) + " GPUs");
    EXPECT_EQ(m.gpus.size(), evidence.devices.size());
    EXPECT_EQ(m.direction, Direction::kAllReduce);
    EXPECT_EQ(m.method, CopyMethod::kNccl);
    EXPECT_EQ(m.aggregation, Aggregation::kBusBandwidth);
    EXPECT_EQ(m.size_bytes, config.size_bytes);
    EXPECT_TRUE(m.verified);
    EXPECT_EQ(m.trials_gbps.size(), static_cast<std::size_t>(config.trials));
    EXPECT_GT(m.stats.min_gbps, 0);
    EXPECT_LT(m.stats.max_gbps, kSaneCeilingGbps);
    EXPECT_NEAR(static_cast<double>(m.bytes_per_trial), static_cast<double>(m.size_bytes) * allreduce_bus_factor(n),
                1.0);
  }

  Evidence evidence;
  RunConfig config;
  ProbeRegistry registry;
  LoadSignal load;
};

TEST_F(NcclProbeOnGpu, HostPathRunsAndVerifies) { run_clean(0); }

TEST_F(NcclProbeOnGpu, NormalModeRunsAndVerifies) { run_clean(1); }

// Issue 26 item 7: communicator setup that never finishes is NCCL's and the
// host's failure (bootstrap, shared memory), not the GPUs': they are not
// used again, but as for slow host work, so their verdict is inconclusive,
// never gpu_unresponsive. Needs a setup that hangs on purpose: the simulated
// node's nccl_setup_hang (ctest gpu_sim.nccl_setup_hang sets
// PCIEVAL_SIM_EXPECT_NCCL_SETUP_HANG); on hardware it skips by name.
TEST_F(NcclProbeOnGpu, ASetupThatNeverEndsRetiresTheGpusAsHostWorkNotAsHung) {
  const char* expected = std::getenv("PCIEVAL_SIM_EXPECT_NCCL_SETUP_HANG");
  if (expected == nullptr || std::string(expected) != "1") {
    GTEST_SKIP() << "needs a hanging NCCL setup: the simulated node's nccl_setup_hang";
  }
  registry.clear();
  NcclProbeOptions options;
  options.timeout_s = 1;
  add_nccl_probes(registry, options);
  const Probe& probe = *registry[0];
  const ProbeContext context{evidence, config, nullptr, &load};
  ASSERT_FALSE(probe.skip_reason(context).has_value());
  const ProbeMeasurements output = probe.run(context);
  EXPECT_TRUE(output.measurements.empty());
  ASSERT_FALSE(output.gpu_faults.empty() && output.errors.empty());
  const std::string said = ::testing::PrintToString(output.errors) + ::testing::PrintToString(output.gpu_faults.size());
  bool named = false;
  for (const std::string& error : output.errors) {
    named = named || error.find(
                         "NCCL communicator setup did not complete within 1 s (NCCL and the host's work, not "
                         "the GPUs')") != std::string::npos;
  }
  for (const GpuFault& fault : output.gpu_faults) {
    named = named || fault.error.find("NCCL communicator setup did not complete") != std::string::npos;
    EXPECT_FALSE(fault.retired) << "a setup that hangs is not a hung GPU: " << fault.error;
  }
  EXPECT_TRUE(named) << said;
  for (int ordinal = 0; ordinal < static_cast<int>(evidence.devices.size()); ++ordinal) {
    EXPECT_TRUE(cuda_device_retired(ordinal)) << "the setup thread may still hold its context";
    EXPECT_FALSE(cuda_device_hung(ordinal));
  }
}

}  // namespace
}  // namespace pcieval
