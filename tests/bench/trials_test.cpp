#include "bench/trials.hpp"

#include <gtest/gtest.h>

namespace pcieval {
namespace {

TEST(RunTrials, WarmupIsRunButNotKept) {
  int calls = 0;
  TrialPlan plan{.warmup_trials = 2, .trials = 3, .bytes_per_trial = 1'000'000'000};
  // Warm-ups take 10 s (slow first touch); timed trials 1, 2, 4 s.
  const double seconds[] = {10, 10, 1, 2, 4};
  auto rates = run_trials(plan, [&]() -> Result<double> { return seconds[calls++]; });
  ASSERT_TRUE(rates) << rates.error().message;
  EXPECT_EQ(calls, 5);
  ASSERT_EQ(rates->size(), 3u);
  EXPECT_DOUBLE_EQ((*rates)[0], 1.0);
  EXPECT_DOUBLE_EQ((*rates)[1], 0.5);
  EXPECT_DOUBLE_EQ((*rates)[2], 0.25);
}

TEST(RunTrials, AFailedTrialStopsTheRunAndSaysWhich) {
  int calls = 0;
  TrialPlan plan{.warmup_trials = 1, .trials = 5, .bytes_per_trial = 4096};
  auto rates = run_trials(plan, [&]() -> Result<double> {
    if (++calls == 3) return make_error("verification failed: 7 words wrong");
    return 0.001;
  });
  ASSERT_FALSE(rates);
  EXPECT_EQ(rates.error().message, "trial 2: verification failed: 7 words wrong");
  EXPECT_EQ(calls, 3);
}

TEST(RunTrials, AFailedWarmupIsAnError) {
  TrialPlan plan{.warmup_trials = 1, .trials = 1, .bytes_per_trial = 1};
  auto rates = run_trials(plan, []() -> Result<double> { return make_error("latch timed out"); });
  ASSERT_FALSE(rates);
  EXPECT_EQ(rates.error().message, "warm-up trial 1: latch timed out");
}

TEST(RunTrials, ATimerThatDidNotAdvanceIsNotInfiniteBandwidth) {
  TrialPlan plan{.warmup_trials = 0, .trials = 2, .bytes_per_trial = 1};
  auto rates = run_trials(plan, []() -> Result<double> { return 0.0; });
  ASSERT_FALSE(rates);
  EXPECT_NE(rates.error().message.find("did not advance"), std::string::npos);
}

TEST(RunTrials, RejectsPlansThatCannotMeasure) {
  const auto trial = []() -> Result<double> { return 1.0; };
  EXPECT_FALSE(run_trials({.warmup_trials = 0, .trials = 0, .bytes_per_trial = 1}, trial));
  EXPECT_FALSE(run_trials({.warmup_trials = -1, .trials = 1, .bytes_per_trial = 1}, trial));
  EXPECT_FALSE(run_trials({.warmup_trials = 0, .trials = 1, .bytes_per_trial = 0}, trial));
}

}  // namespace
}  // namespace pcieval
