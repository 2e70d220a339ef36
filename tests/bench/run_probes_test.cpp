// The engine's loop over the registry, with test doubles for probes: which run,
// which skip and why, and how failures are recorded.
#include <gtest/gtest.h>

#include <set>

#include "bench/detail/gpu_probe_common.hpp"
#include "bench/gpu_preconditions.hpp"
#include "bench/probe.hpp"
#include "kernels/retired_devices.hpp"

namespace pcieval {
namespace {

// A probe whose every answer is set by the test.
class FakeProbe final : public Probe {
 public:
  FakeProbe(std::string key, bool quick, std::optional<std::string> skip, ProbeMeasurements output, int* runs)
      : key_(std::move(key)), quick_(quick), skip_(std::move(skip)), output_(std::move(output)), runs_(runs) {}
  [[nodiscard]] std::string_view key() const override { return key_; }
  [[nodiscard]] std::string_view description() const override { return "a test double"; }
  [[nodiscard]] bool in_quick() const override { return quick_; }
  [[nodiscard]] std::optional<std::string> skip_reason(const ProbeContext&) const override { return skip_; }
  [[nodiscard]] ProbeMeasurements run(const ProbeContext&) const override {
    ++*runs_;
    return output_;
  }

 private:
  std::string key_;
  bool quick_;
  std::optional<std::string> skip_;
  ProbeMeasurements output_;
  int* runs_;
};

Measurement measurement(const std::string& subject) {
  Measurement m;
  m.probe = "fake";
  m.subject = subject;
  m.trials_gbps = {1.0};
  m.stats = summarize_trials(m.trials_gbps);
  m.verified = true;
  return m;
}

class RunProbesTest : public ::testing::Test {
 protected:
  ProbeRun run_one(ProbeMode mode, bool quick, std::optional<std::string> skip, ProbeMeasurements output,
                   RoundMeasurements* engine_out = nullptr) {
    ProbeRegistry registry;
    registry.push_back(std::make_unique<FakeProbe>("fake", quick, std::move(skip), std::move(output), &runs_));
    config_.mode = mode;
    RoundMeasurements out = run_probes(registry, ProbeContext{evidence_, config_});
    EXPECT_EQ(out.runs.size(), 1u);
    if (engine_out) *engine_out = out;
    return out.runs.at(0);
  }

  Evidence evidence_;
  RunConfig config_;
  int runs_ = 0;
};

TEST_F(RunProbesTest, ARunWithMeasurementsAndNoErrorRan) {
  RoundMeasurements out;
  const ProbeRun run = run_one(ProbeMode::kQuick, true, std::nullopt, {{measurement("numa0")}, {}, {}}, &out);
  EXPECT_EQ(run.status, ProbeStatus::kRan);
  EXPECT_EQ(run.reason, "");
  EXPECT_EQ(runs_, 1);
  ASSERT_EQ(out.measurements.size(), 1u);
  EXPECT_EQ(out.measurements[0].subject, "numa0");
}

TEST_F(RunProbesTest, ASkipReasonIsRecordedAndTheProbeIsNotRun) {
  const ProbeRun run = run_one(ProbeMode::kFull, true, "no NVIDIA GPU in the PCI tree", {});
  EXPECT_EQ(run.status, ProbeStatus::kSkipped);
  EXPECT_EQ(run.reason, "no NVIDIA GPU in the PCI tree");
  EXPECT_EQ(runs_, 0);
}

TEST_F(RunProbesTest, FullOnlyProbesAreSkippedInQuickMode) {
  const ProbeRun run = run_one(ProbeMode::kQuick, false, std::nullopt, {{measurement("x")}, {}, {}});
  EXPECT_EQ(run.status, ProbeStatus::kSkipped);
  EXPECT_EQ(run.reason, "runs with --full only");
  EXPECT_EQ(runs_, 0);
}

TEST_F(RunProbesTest, FullOnlyProbesRunInFullMode) {
  const ProbeRun run = run_one(ProbeMode::kFull, false, std::nullopt, {{measurement("x")}, {}, {}});
  EXPECT_EQ(run.status, ProbeStatus::kRan);
  EXPECT_EQ(runs_, 1);
}

TEST_F(RunProbesTest, OneSubjectsErrorFailsTheProbeButKeepsTheOthersNumbers) {
  RoundMeasurements out;
  const ProbeRun run = run_one(
      ProbeMode::kQuick, true, std::nullopt,
      {{measurement("0000:17:00.0")}, {"0000:65:00.0: 12 words wrong", "0000:ca:00.0: latch timed out"}, {"a warning"}},
      &out);
  EXPECT_EQ(run.status, ProbeStatus::kFailed);
  EXPECT_EQ(run.reason, "0000:65:00.0: 12 words wrong; 0000:ca:00.0: latch timed out");
  EXPECT_EQ(run.warnings, std::vector<std::string>{"a warning"});
  EXPECT_EQ(out.measurements.size(), 1u);
}

// As the copy-engine probes record a GPU of an 8-GPU H100 node that hung in
// h2d_ce while another GPU's copy still measured.
TEST_F(RunProbesTest, GpuFaultsAreCopiedIntoTheRunAndNamedInItsReason) {
  RoundMeasurements out;
  ProbeMeasurements output;
  output.measurements = {measurement("0000:18:00.0")};
  output.gpu_faults = {{parse_pci_address("0000:2a:00.0").value(),
                        "cudaMemcpyAsync h2d did not complete within 30 s on 0000:2a:00.0", true},
                       {parse_pci_address("0000:3a:00.0").value(), "7 of 33554432 words wrong", false}};
  const ProbeRun run = run_one(ProbeMode::kQuick, true, std::nullopt, output, &out);
  EXPECT_EQ(run.status, ProbeStatus::kFailed);
  EXPECT_TRUE(run.only_gpu_faults);
  ASSERT_EQ(run.gpu_faults.size(), 2u);
  EXPECT_EQ(to_string(run.gpu_faults[0].gpu), "0000:2a:00.0");
  EXPECT_TRUE(run.gpu_faults[0].retired);
  EXPECT_EQ(run.gpu_faults[1].error, "7 of 33554432 words wrong");
  EXPECT_FALSE(run.gpu_faults[1].retired);
  EXPECT_EQ(run.reason,
            "GPU 0000:2a:00.0: cudaMemcpyAsync h2d did not complete within 30 s on 0000:2a:00.0; "
            "GPU 0000:3a:00.0: 7 of 33554432 words wrong");
  EXPECT_EQ(out.measurements.size(), 1u);
}

TEST_F(RunProbesTest, AnErrorOfNoOneGpuBesideGpuFaultsIsNotOnlyGpuFaults) {
  ProbeMeasurements output;
  output.errors = {"port 0000:17:00.0: fewer than two of its GPUs are usable by CUDA"};
  output.gpu_faults = {{parse_pci_address("0000:2a:00.0").value(), "CUDA device 1 is not used again", true}};
  const ProbeRun run = run_one(ProbeMode::kQuick, true, std::nullopt, output);
  EXPECT_EQ(run.status, ProbeStatus::kFailed);
  EXPECT_FALSE(run.only_gpu_faults);
  EXPECT_EQ(run.gpu_faults.size(), 1u);
  EXPECT_EQ(run.reason,
            "port 0000:17:00.0: fewer than two of its GPUs are usable by CUDA; GPU 0000:2a:00.0: CUDA device 1 is not "
            "used again");
}

TEST_F(RunProbesTest, AProbeWhoseOnlyGpuFailedHasFailedWithoutAnotherError) {
  ProbeMeasurements output;
  output.gpu_faults = {{parse_pci_address("0000:2a:00.0").value(), "cudaSetDevice: busy", false}};
  const ProbeRun run = run_one(ProbeMode::kQuick, true, std::nullopt, output);
  EXPECT_EQ(run.status, ProbeStatus::kFailed);
  EXPECT_TRUE(run.only_gpu_faults);
  EXPECT_EQ(run.reason, "GPU 0000:2a:00.0: cudaSetDevice: busy");
}

TEST_F(RunProbesTest, AProbeWithoutFaultsHasNone) {
  const ProbeRun run = run_one(ProbeMode::kQuick, true, std::nullopt, {{measurement("numa0")}, {}, {}});
  EXPECT_TRUE(run.gpu_faults.empty());
  EXPECT_FALSE(run.only_gpu_faults);
}

TEST_F(RunProbesTest, AProbeThatReturnsNothingHasFailed) {
  const ProbeRun run = run_one(ProbeMode::kQuick, true, std::nullopt, {});
  EXPECT_EQ(run.status, ProbeStatus::kFailed);
  EXPECT_EQ(run.reason, "the probe returned no measurement");
  EXPECT_FALSE(run.only_gpu_faults);
}

// How the GPU probes record a GPU that failed: as on an 8-GPU H100 node
// whose CUDA device 1 (0000:2a:00.0) hung under a copy. No GPU is touched:
// retirement is plain process state.
class GpuFaultRecording : public ::testing::Test {
 protected:
  void TearDown() override { forget_retired_cuda_devices_for_testing(); }

  gpu_probe_common::GpuTarget hung_{parse_pci_address("0000:2a:00.0").value(), "0000:2a:00.0", 1, 0};
  gpu_probe_common::GpuTarget healthy_{parse_pci_address("0000:3a:00.0").value(), "0000:3a:00.0", 2, 0};
};

TEST_F(GpuFaultRecording, AFaultIsMarkedRetiredOnlyWhenItsDeviceWas) {
  ProbeMeasurements output;
  gpu_probe_common::add_gpu_fault(output, healthy_, "7 of 33554432 words wrong");
  retire_cuda_device(1, "cudaMemcpyAsync h2d did not complete within 30 s on 0000:2a:00.0");
  gpu_probe_common::add_gpu_fault(output, hung_, "cudaMemcpyAsync h2d did not complete within 30 s on 0000:2a:00.0");
  // A GPU CUDA does not see has no ordinal, and so no retirement.
  gpu_probe_common::GpuTarget unseen{parse_pci_address("0000:f7:1f.0").value(), "0000:f7:1f.0", -1, std::nullopt};
  gpu_probe_common::add_gpu_fault(output, unseen, "no CUDA device has PCI address 0000:f7:1f.0");
  EXPECT_TRUE(output.errors.empty());
  ASSERT_EQ(output.gpu_faults.size(), 3u);
  EXPECT_FALSE(output.gpu_faults[0].retired);
  EXPECT_EQ(to_string(output.gpu_faults[1].gpu), "0000:2a:00.0");
  EXPECT_TRUE(output.gpu_faults[1].retired);
  EXPECT_FALSE(output.gpu_faults[2].retired);
}

// Issue 17, item 5: 1 GiB of 4 KiB pages registered behind a guest's vIOMMU
// can take longer than the deadline. Pinning is host work: the device is
// retired (the registration may still be running), but the GPU did not hang,
// so its fault is not marked retired (gpu_unresponsive) and the GPU's
// verdict is inconclusive, with the message naming the host.
TEST_F(GpuFaultRecording, AGpuRetiredForSlowPinningIsNotMarkedHung) {
  ProbeMeasurements output;
  retire_cuda_device(1,
                     "cudaHostRegister of 1073741824 bytes did not complete within 30 s on 0000:2a:00.0: pinning host "
                     "memory is work of the host node7",
                     RetireCause::kHostWork);
  EXPECT_TRUE(cuda_device_retired(1)) << "still not used again: the registration may still be running";
  EXPECT_FALSE(cuda_device_hung(1));
  gpu_probe_common::add_gpu_fault(output, hung_, "cudaHostRegister of 1073741824 bytes did not complete within 30 s");
  // A later probe refuses the retired device: not a hang either.
  gpu_probe_common::add_gpu_fault(output, hung_, cuda_device_retired_reason(1).value());
  ASSERT_EQ(output.gpu_faults.size(), 2u);
  EXPECT_FALSE(output.gpu_faults[0].retired);
  EXPECT_FALSE(output.gpu_faults[1].retired);
  // The first cause is kept: a copy hanging later does not rewrite it.
  retire_cuda_device(1, "cudaMemcpyAsync h2d did not complete within 30 s");
  EXPECT_FALSE(cuda_device_hung(1));
}

// Issue 26 item 9: an illegal address or an uncorrectable ECC error ends the
// GPU's context for the run, but nothing hung: its verdict must not say so.
TEST_F(GpuFaultRecording, ADeviceRetiredForAStickyErrorIsNotUsedAgainButDidNotHang) {
  ProbeMeasurements output;
  retire_cuda_device(1, "cuStreamQuery: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)",
                     RetireCause::kContextError);
  EXPECT_TRUE(cuda_device_retired(1));
  EXPECT_FALSE(cuda_device_hung(1));
  gpu_probe_common::add_gpu_fault(output, hung_, cuda_device_retired_reason(1).value());
  ASSERT_EQ(output.gpu_faults.size(), 1u);
  EXPECT_FALSE(output.gpu_faults[0].retired);
}

// Issue 26 items 6 and 9: a GPU the measure run found unmeasurable (MIG
// mode, another job's PCIe traffic) is never copied through, and its probes
// say why; the others are resolved as usual.
TEST_F(GpuFaultRecording, AnUnmeasurableGpuIsAFaultWithItsReason) {
  Evidence evidence;
  RunConfig config;
  ProbeContext context{evidence, config};
  DeviceRecord mig;
  mig.function.bdf = parse_pci_address("0000:f7:00.0").value();
  mig.function.kind = DeviceKind::kGpu;
  context.unmeasurable_gpus.emplace(mig.function.bdf, mig_skip_reason(true, "0000:f7:00.0").value());
  ProbeMeasurements output;
  const auto targets = gpu_probe_common::resolve(context, {&mig}, output);
  EXPECT_TRUE(targets.empty());
  ASSERT_EQ(output.gpu_faults.size(), 1u);
  EXPECT_EQ(to_string(output.gpu_faults[0].gpu), "0000:f7:00.0");
  EXPECT_THAT(output.gpu_faults[0].error, ::testing::HasSubstr("MIG mode is on"));
  EXPECT_THAT(output.gpu_faults[0].error, ::testing::HasSubstr("nvidia-smi -i 0000:f7:00.0 -mig 0"));
  EXPECT_FALSE(output.gpu_faults[0].retired);
}

TEST_F(GpuFaultRecording, ADeviceRetiredForItsOwnWorkHung) {
  retire_cuda_device(2, "cudaMemcpyAsync d2h did not complete within 30 s on 0000:3a:00.0");
  EXPECT_TRUE(cuda_device_hung(2));
  EXPECT_FALSE(cuda_device_hung(1)) << "never retired";
}

TEST_F(GpuFaultRecording, AGroupFailureBecomesTheFaultOfTheGpuThatHung) {
  ProbeMeasurements output;
  retire_cuda_device(1, "cudaMemcpyAsync h2d did not complete within 30 s on 0000:2a:00.0");
  gpu_probe_common::add_group_failure(output, {hung_, healthy_}, "all GPUs h2d (0000:2a:00.0, 0000:3a:00.0)",
                                      "cudaMemcpyAsync h2d did not complete within 30 s on 0000:2a:00.0");
  EXPECT_TRUE(output.errors.empty());
  ASSERT_EQ(output.gpu_faults.size(), 1u);
  EXPECT_EQ(to_string(output.gpu_faults[0].gpu), "0000:2a:00.0");
  EXPECT_TRUE(output.gpu_faults[0].retired);
  EXPECT_EQ(output.gpu_faults[0].error,
            "all GPUs h2d (0000:2a:00.0, 0000:3a:00.0): cudaMemcpyAsync h2d did not complete within 30 s on "
            "0000:2a:00.0");
}

TEST_F(GpuFaultRecording, AGroupFailureWithNoGpuRetiredIsTheGroupsError) {
  ProbeMeasurements output;
  gpu_probe_common::add_group_failure(output, {hung_, healthy_}, "port 0000:17:00.0 h2d (0000:2a:00.0, 0000:3a:00.0)",
                                      "the latch timed out after 5 s");
  EXPECT_TRUE(output.gpu_faults.empty());
  EXPECT_EQ(output.errors, std::vector<std::string>{
                               "port 0000:17:00.0 h2d (0000:2a:00.0, 0000:3a:00.0): the latch timed out after 5 s"});
}

TEST(ProbeRegistry, KeysAreUniqueSnakeCaseWithDescriptions) {
  const ProbeRegistry registry = make_probe_registry();
  ASSERT_FALSE(registry.empty());
  std::set<std::string> keys;
  for (const auto& probe : registry) {
    const std::string key(probe->key());
    EXPECT_TRUE(keys.insert(key).second) << "duplicate key " << key;
    EXPECT_FALSE(key.empty());
    for (char c : key) EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') << key;
    EXPECT_GT(probe->description().size(), 40u) << key;
  }
  EXPECT_TRUE(keys.count("host_ceiling"));
}

TEST(LoadSignal, NestedScopesKeepItRaisedUntilTheLastEnds) {
  LoadSignal signal;
  EXPECT_FALSE(signal.active());
  {
    LoadScope outer(&signal);
    {
      LoadScope inner(&signal);
      EXPECT_TRUE(signal.active());
    }
    EXPECT_TRUE(signal.active());
  }
  EXPECT_FALSE(signal.active());
  LoadScope without_signal(nullptr);  // a context without a signal: no effect, no crash
}

}  // namespace
}  // namespace pcieval
