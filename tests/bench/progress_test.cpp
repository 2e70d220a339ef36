// Progress output: the formatting as pure functions, and the engine telling
// an observer about exactly the probes that run.
#include "bench/progress.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "bench/probe.hpp"

namespace pcieval {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(FormatDuration, MinutesAndSecondsThenHours) {
  EXPECT_EQ(format_duration(0), "0:00");
  EXPECT_EQ(format_duration(7.4), "0:07");
  EXPECT_EQ(format_duration(59.6), "1:00");
  EXPECT_EQ(format_duration(754), "12:34");
  EXPECT_EQ(format_duration(3723), "1:02:03");
  EXPECT_EQ(format_duration(-3), "0:00");
}

TEST(EstimateLeft, MeanOfFinishedTimesWhatIsLeftLessTheCurrentProbesTime) {
  EXPECT_FALSE(estimate_left_s({}, 3, 1.0));  // nothing to go on yet
  EXPECT_DOUBLE_EQ(*estimate_left_s({}, 0, 0), 0.0);
  // Two probes of 4 s and 6 s done, three to go, the current one 2 s in.
  EXPECT_DOUBLE_EQ(*estimate_left_s({4.0, 6.0}, 3, 2.0), 13.0);
  // Running past the estimate never gives a negative time.
  EXPECT_DOUBLE_EQ(*estimate_left_s({1.0}, 1, 9.0), 0.0);
}

const ProbeStep kStep{"h2d_ce", "8 GPUs", 1, 5};

TEST(ProgressLines, StatusLineNamesProbeSubjectElapsedAndLeft) {
  EXPECT_EQ(format_status_line(kStep, 12.2, 30.0), "[2/5] h2d_ce 8 GPUs  elapsed 0:12  left ~0:30");
  EXPECT_EQ(format_status_line(kStep, 1, std::nullopt), "[2/5] h2d_ce 8 GPUs  elapsed 0:01  left unknown");
}

TEST(ProgressLines, PlainLinesForStartAndEnd) {
  EXPECT_EQ(format_start_line(kStep, 12, 30), "pcieval: probe 2/5 h2d_ce (8 GPUs) started, elapsed 0:12, left ~0:30\n");
  ProbeRun run;
  run.key = "h2d_ce";
  run.duration_s = 4.24;
  EXPECT_EQ(format_end_line(kStep, run, 16, 24),
            "pcieval: probe 2/5 h2d_ce (8 GPUs) ran in 4.2 s, elapsed 0:16, left ~0:24\n");
  run.status = ProbeStatus::kFailed;
  EXPECT_THAT(format_end_line(kStep, run, 16, 24), HasSubstr(") failed in 4.2 s"));
}

TEST(ProgressReporter, LinesStyleWritesOneLinePerEvent) {
  std::ostringstream out;
  {
    ProgressReporter reporter(out, ProgressReporter::Style::kLines);
    const ProbeStep step{"host_ceiling", "host memory", 0, 1};
    reporter.probe_started(step);
    ProbeRun run;
    run.duration_s = 2.0;
    reporter.probe_finished(step, run);
  }
  EXPECT_EQ(out.str(),
            "pcieval: probe 1/1 host_ceiling (host memory) started, elapsed 0:00, left unknown\n"
            "pcieval: probe 1/1 host_ceiling (host memory) ran in 2.0 s, elapsed 0:00, left ~0:00\n");
}

TEST(ProgressReporter, TerminalStyleRedrawsOneLineAndClearsIt) {
  std::ostringstream out;
  {
    ProgressReporter reporter(out, ProgressReporter::Style::kTerminal);
    const ProbeStep step{"host_ceiling", "host memory", 0, 1};
    reporter.probe_started(step);
    ProbeRun run;
    reporter.probe_finished(step, run);
  }
  const std::string text = out.str();
  EXPECT_EQ(text.find('\n'), std::string::npos) << "a terminal line is redrawn, never scrolled";
  EXPECT_THAT(text, HasSubstr("\r[1/1] host_ceiling host memory  elapsed 0:00  left unknown"));
  // Ends blank: the table that follows starts on a clean line.
  const std::string tail = text.substr(text.rfind('\r', text.size() - 2));
  EXPECT_EQ(tail.find_first_not_of(" \r"), std::string::npos) << tail;
}

// A probe that records nothing and may be skipped.
class FakeProbe final : public Probe {
 public:
  FakeProbe(std::string key, bool applies) : key_(std::move(key)), applies_(applies) {}
  [[nodiscard]] std::string_view key() const override { return key_; }
  [[nodiscard]] std::string_view description() const override { return "fake"; }
  [[nodiscard]] std::optional<std::string> skip_reason(const ProbeContext& /*context*/) const override {
    if (applies_) return std::nullopt;
    return "does not apply";
  }
  [[nodiscard]] ProbeMeasurements run(const ProbeContext& /*context*/) const override {
    ProbeMeasurements output;
    Measurement m;
    m.probe = key_;
    m.subject = "numa0";
    output.measurements.push_back(m);
    return output;
  }

 private:
  std::string key_;
  bool applies_;
};

class RecordingObserver final : public ProbeObserver {
 public:
  void probe_started(const ProbeStep& step) override {
    events.push_back("start " + step.key + " " + std::to_string(step.index) + "/" + std::to_string(step.count) + " " +
                     step.subject);
  }
  void probe_finished(const ProbeStep& step, const ProbeRun& run) override {
    events.push_back("end " + step.key + " " + std::string(to_string(run.status)));
  }
  std::vector<std::string> events;
};

TEST(RunProbes, TellsTheObserverAboutEachProbeThatRunsAndNoOther) {
  ProbeRegistry registry;
  registry.push_back(std::make_unique<FakeProbe>("first", true));
  registry.push_back(std::make_unique<FakeProbe>("skipped", false));
  registry.push_back(std::make_unique<FakeProbe>("last", true));
  Evidence evidence;
  const RunConfig config;
  const ProbeContext context{evidence, config};
  RecordingObserver observer;
  const RoundMeasurements output = run_probes(registry, context, &observer);
  EXPECT_THAT(observer.events,
              ElementsAre("start first 0/2 0 GPUs", "end first ran", "start last 1/2 0 GPUs", "end last ran"));
  ASSERT_EQ(output.runs.size(), 3U);
  EXPECT_EQ(output.runs[1].status, ProbeStatus::kSkipped);
}

}  // namespace
}  // namespace pcieval
