// The round rules of a measure run (bench/measure_rounds.hpp): which rounds
// start, what each leaves in the evidence, how the run is closed. The same
// rules end to end, with real rounds and signals: tests/cli/soak_test.cpp.
#include "bench/measure_rounds.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace pcieval {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

PciAddress address(const std::string& text) { return parse_pci_address(text).value(); }

Measurement measured(const std::string& probe, double median_gbps) {
  Measurement measurement;
  measurement.probe = probe;
  measurement.subject = "0000:17:00.0";
  measurement.stats.median_gbps = median_gbps;
  return measurement;
}

ProbeRun ran(const std::string& key) { return ProbeRun{key, ProbeStatus::kRan, "", {}, 0.5, {}}; }

ProbeRun failed(const std::string& key, const std::string& reason) {
  ProbeRun run{key, ProbeStatus::kFailed, reason, {}, 0.5, {}};
  run.gpu_faults.push_back(GpuFault{address("0000:17:00.0"), reason, true});
  return run;
}

LinkSample sample(double t_s) {
  LinkSample s;
  s.port = address("0000:17:00.0");
  s.t_s = t_s;
  s.under_load = true;
  s.speed = PcieGen::kGen4;
  s.width = 16;
  return s;
}

// Round `index` from `start_s` to start_s + 1 that ran h2d_ce and measured it.
RoundOutcome round_of(int index, double start_s, std::vector<ProbeRun> runs, bool interrupted = false) {
  RoundOutcome round;
  round.index = index;
  round.start_s = start_s;
  round.end_s = start_s + 1;
  round.probes.runs = std::move(runs);
  round.probes.measurements = {measured("h2d_ce", 20.0 + index)};
  round.probes.interrupted = interrupted;
  round.samples = {sample(start_s + 0.5)};
  return round;
}

ProbeOptions plain() { return ProbeOptions{}; }

ProbeOptions soak_of(std::optional<int> rounds, std::optional<double> duration_s = std::nullopt) {
  ProbeOptions options;
  options.rounds = rounds;
  options.duration_s = duration_s;
  return options;
}

std::string stop_name(int signal) { return signal == 15 ? "SIGTERM" : "signal " + std::to_string(signal); }

TEST(RoundStarts, APlainCheckIsOneRound) {
  EXPECT_TRUE(round_starts(plain(), 1, 0));
  EXPECT_FALSE(round_starts(plain(), 2, 0));
}

TEST(RoundStarts, ASoakRunsItsCountOfRounds) {
  const ProbeOptions options = soak_of(3);
  EXPECT_TRUE(round_starts(options, 1, 100));
  EXPECT_TRUE(round_starts(options, 3, 100));
  EXPECT_FALSE(round_starts(options, 4, 0));
}

TEST(RoundStarts, NoRoundStartsAfterTheDeadlineButTheFirstAlwaysDoes) {
  const ProbeOptions options = soak_of(std::nullopt, 60);
  EXPECT_TRUE(round_starts(options, 1, 61)) << "round 1 is a plain check";
  EXPECT_TRUE(round_starts(options, 7, 59.9)) << "the round that crosses the deadline still finishes";
  EXPECT_FALSE(round_starts(options, 8, 60));
  // Both given: whichever comes first.
  EXPECT_FALSE(round_starts(soak_of(2, 60), 3, 10));
  EXPECT_FALSE(round_starts(soak_of(10, 60), 3, 60));
}

TEST(BeginRounds, RecordsTheSettingsAndAnUnfinishedSoak) {
  ProbeOptions options = soak_of(3, 600);
  options.config.mode = ProbeMode::kFull;
  options.config.trials = 7;
  Evidence evidence;
  begin_rounds(evidence, options);
  ASSERT_TRUE(evidence.probe_settings.has_value());
  EXPECT_EQ(evidence.probe_settings->mode, "full");
  EXPECT_EQ(evidence.probe_settings->trials, 7);
  ASSERT_TRUE(evidence.soak.has_value());
  EXPECT_EQ(evidence.soak->requested_rounds, 3);
  EXPECT_EQ(evidence.soak->requested_duration_s, 600);
  EXPECT_FALSE(evidence.soak->finished);
  EXPECT_THAT(evidence.soak->rounds, IsEmpty());

  Evidence check;
  begin_rounds(check, plain());
  EXPECT_FALSE(check.soak.has_value());
}

TEST(MergeRound, APlainCheckKeepsWhateverProbesFinished) {
  Evidence evidence;
  begin_rounds(evidence, plain());
  EXPECT_FALSE(merge_round(evidence, round_of(1, 0, {ran("host_ceiling"), ran("h2d_ce")}, /*interrupted=*/true)))
      << "a round cut short ends the run";
  ASSERT_EQ(evidence.probes.size(), 2U);
  EXPECT_EQ(evidence.probes[1].key, "h2d_ce");
  ASSERT_EQ(evidence.measurements.size(), 1U);
  EXPECT_EQ(evidence.measurements[0].stats.median_gbps, 21.0);
  EXPECT_EQ(evidence.link_samples.size(), 1U);
}

TEST(MergeRound, SoakRoundsAreKeptWithTheirTimesAndTheCountersThatRose) {
  Evidence evidence;
  begin_rounds(evidence, soak_of(2));
  RoundOutcome first = round_of(1, 0, {ran("h2d_ce")});
  first.counters = {CounterDelta{address("0000:17:00.0"), "aer_correctable", 4, 4},
                    CounterDelta{address("0000:16:01.0"), "aer_correctable", 1, 3}};
  ASSERT_TRUE(merge_round(evidence, std::move(first)));
  ASSERT_TRUE(merge_round(evidence, round_of(2, 1.5, {ran("h2d_ce")})));

  // The top level is round 1's: what a plain check measures.
  ASSERT_EQ(evidence.measurements.size(), 1U);
  EXPECT_EQ(evidence.measurements[0].stats.median_gbps, 21.0);
  ASSERT_EQ(evidence.soak->rounds.size(), 2U);
  const SoakRound& one = evidence.soak->rounds[0];
  EXPECT_EQ(one.index, 1);
  EXPECT_EQ(one.start_s, 0);
  EXPECT_EQ(one.end_s, 1);
  ASSERT_EQ(one.measurements.size(), 1U);
  EXPECT_EQ(one.measurements[0].stats.median_gbps, 21.0);
  ASSERT_EQ(one.counters.size(), 1U) << "a counter that did not move is left out";
  EXPECT_EQ(one.counters[0].device, address("0000:16:01.0"));
  const SoakRound& two = evidence.soak->rounds[1];
  EXPECT_EQ(two.index, 2);
  EXPECT_EQ(two.start_s, 1.5);
  EXPECT_EQ(two.measurements[0].stats.median_gbps, 22.0);
  EXPECT_THAT(two.counters, IsEmpty());
  // Every round's samples, on the run's clock.
  ASSERT_EQ(evidence.link_samples.size(), 2U);
  EXPECT_EQ(evidence.link_samples[1].t_s, 2.0);
}

TEST(MergeRound, ALaterRoundsFailureReplacesRoundOnesSuccessNamingTheRound) {
  Evidence evidence;
  begin_rounds(evidence, soak_of(4));
  ASSERT_TRUE(merge_round(evidence, round_of(1, 0, {ran("host_ceiling"), ran("h2d_ce")})));
  ASSERT_TRUE(merge_round(evidence, round_of(2, 1, {ran("host_ceiling"), failed("h2d_ce", "copy did not complete")})));
  ASSERT_EQ(evidence.probes.size(), 2U);
  EXPECT_EQ(evidence.probes[0].status, ProbeStatus::kRan);
  EXPECT_EQ(evidence.probes[1].status, ProbeStatus::kFailed);
  EXPECT_EQ(evidence.probes[1].reason, "round 2: copy did not complete");
  ASSERT_EQ(evidence.probes[1].gpu_faults.size(), 1U);
  EXPECT_EQ(evidence.probes[1].gpu_faults[0].error, "round 2: copy did not complete");

  // The first failure stays: round 3's does not replace it, nor does a later success.
  ASSERT_TRUE(merge_round(evidence, round_of(3, 2, {ran("host_ceiling"), failed("h2d_ce", "fell off the bus")})));
  ASSERT_TRUE(merge_round(evidence, round_of(4, 3, {ran("host_ceiling"), ran("h2d_ce")})));
  EXPECT_EQ(evidence.probes[1].reason, "round 2: copy did not complete");
  // The measurements stay round 1's; each round keeps its own.
  EXPECT_EQ(evidence.measurements[0].stats.median_gbps, 21.0);
  EXPECT_EQ(evidence.soak->rounds.size(), 4U);
}

TEST(MergeRound, AFailureOfAProbeRoundOneDidNotRunIsNotAdded) {
  Evidence evidence;
  begin_rounds(evidence, soak_of(2));
  ASSERT_TRUE(merge_round(evidence, round_of(1, 0, {ran("host_ceiling")})));
  ASSERT_TRUE(merge_round(evidence, round_of(2, 1, {ran("host_ceiling"), failed("d2h_ce", "refused")})));
  ASSERT_EQ(evidence.probes.size(), 1U);
  EXPECT_EQ(evidence.probes[0].key, "host_ceiling");
}

TEST(MergeRound, ASoakRoundCutShortLeavesNothing) {
  Evidence evidence;
  begin_rounds(evidence, soak_of(std::nullopt, 600));
  ASSERT_TRUE(merge_round(evidence, round_of(1, 0, {ran("h2d_ce")})));
  EXPECT_FALSE(merge_round(evidence, round_of(2, 1, {failed("h2d_ce", "stopped")}, /*interrupted=*/true)));
  EXPECT_EQ(evidence.probes[0].status, ProbeStatus::kRan) << "an incomplete round's failure is not kept";
  EXPECT_EQ(evidence.soak->rounds.size(), 1U);
  EXPECT_EQ(evidence.link_samples.size(), 1U) << "only the complete round's samples";

  Evidence first_cut;
  begin_rounds(first_cut, soak_of(3));
  EXPECT_FALSE(merge_round(first_cut, round_of(1, 0, {ran("h2d_ce")}, /*interrupted=*/true)));
  EXPECT_THAT(first_cut.probes, IsEmpty());
  EXPECT_THAT(first_cut.measurements, IsEmpty());
  EXPECT_THAT(first_cut.soak->rounds, IsEmpty());
  EXPECT_THAT(first_cut.link_samples, IsEmpty());
}

TEST(FinishRounds, AStoppedSoakIsUnfinishedAndSaysWhatStoppedIt) {
  Evidence evidence;
  begin_rounds(evidence, soak_of(std::nullopt, 600));
  ASSERT_TRUE(merge_round(evidence, round_of(1, 0, {ran("h2d_ce")})));
  finish_rounds(evidence, /*stopped_early=*/true, 15, stop_name, 12.7);
  EXPECT_EQ(evidence.interrupted, "SIGTERM");
  EXPECT_FALSE(evidence.soak->finished);
  EXPECT_THAT(evidence.notes, ElementsAre("soak: 1 complete round in 12 s, stopped by SIGTERM"));
}

TEST(FinishRounds, ACompleteSoakIsFinished) {
  Evidence evidence;
  begin_rounds(evidence, soak_of(2));
  ASSERT_TRUE(merge_round(evidence, round_of(1, 0, {ran("h2d_ce")})));
  ASSERT_TRUE(merge_round(evidence, round_of(2, 1, {ran("h2d_ce")})));
  finish_rounds(evidence, false, 0, stop_name, 2.2);
  EXPECT_FALSE(evidence.interrupted.has_value());
  EXPECT_TRUE(evidence.soak->finished);
  EXPECT_THAT(evidence.notes, ElementsAre("soak: 2 complete rounds in 2 s"));
}

TEST(FinishRounds, ASignalDuringTheLastProbeStillMarksThePlainCheckInterrupted) {
  // Nothing was cut short, but the operator asked the run to stop: a burn-in
  // gate must not read that as a pass.
  Evidence evidence;
  begin_rounds(evidence, plain());
  ASSERT_TRUE(merge_round(evidence, round_of(1, 0, {ran("h2d_ce")})));
  finish_rounds(evidence, false, 2, stop_name, 1);
  EXPECT_EQ(evidence.interrupted, "signal 2");
  EXPECT_THAT(evidence.notes, IsEmpty()) << "a plain check has no soak note";

  Evidence quiet;
  begin_rounds(quiet, plain());
  finish_rounds(quiet, false, 0, stop_name, 1);
  EXPECT_FALSE(quiet.interrupted.has_value());
}

}  // namespace
}  // namespace pcieval
