// The engine's loop over the registry, with test doubles for probes: which run,
// which skip and why, and how failures are recorded.
#include <gtest/gtest.h>

#include <set>

#include "bench/probe.hpp"

namespace pcieval {
namespace {

// A probe whose every answer is set by the test.
class FakeProbe final : public Probe {
 public:
  FakeProbe(std::string key, bool quick, std::optional<std::string> skip, ProbeOutput output, int* runs)
      : key_(std::move(key)), quick_(quick), skip_(std::move(skip)), output_(std::move(output)), runs_(runs) {}
  [[nodiscard]] std::string_view key() const override { return key_; }
  [[nodiscard]] std::string_view description() const override { return "a test double"; }
  [[nodiscard]] bool in_quick() const override { return quick_; }
  [[nodiscard]] std::optional<std::string> skip_reason(const ProbeContext&) const override { return skip_; }
  [[nodiscard]] ProbeOutput run(const ProbeContext&) const override {
    ++*runs_;
    return output_;
  }

 private:
  std::string key_;
  bool quick_;
  std::optional<std::string> skip_;
  ProbeOutput output_;
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
  ProbeRun run_one(ProbeMode mode, bool quick, std::optional<std::string> skip, ProbeOutput output,
                   EngineOutput* engine_out = nullptr) {
    ProbeRegistry registry;
    registry.push_back(std::make_unique<FakeProbe>("fake", quick, std::move(skip), std::move(output), &runs_));
    config_.mode = mode;
    EngineOutput out = run_probes(registry, ProbeContext{evidence_, config_});
    EXPECT_EQ(out.runs.size(), 1u);
    if (engine_out) *engine_out = out;
    return out.runs.at(0);
  }

  Evidence evidence_;
  RunConfig config_;
  int runs_ = 0;
};

TEST_F(RunProbesTest, ARunWithMeasurementsAndNoErrorRan) {
  EngineOutput out;
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
  EngineOutput out;
  const ProbeRun run = run_one(
      ProbeMode::kQuick, true, std::nullopt,
      {{measurement("0000:17:00.0")}, {"0000:65:00.0: 12 words wrong", "0000:ca:00.0: latch timed out"}, {"a warning"}},
      &out);
  EXPECT_EQ(run.status, ProbeStatus::kFailed);
  EXPECT_EQ(run.reason, "0000:65:00.0: 12 words wrong; 0000:ca:00.0: latch timed out");
  EXPECT_EQ(run.warnings, std::vector<std::string>{"a warning"});
  EXPECT_EQ(out.measurements.size(), 1u);
}

TEST_F(RunProbesTest, AProbeThatReturnsNothingHasFailed) {
  const ProbeRun run = run_one(ProbeMode::kQuick, true, std::nullopt, {});
  EXPECT_EQ(run.status, ProbeStatus::kFailed);
  EXPECT_EQ(run.reason, "the probe returned no measurement");
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
