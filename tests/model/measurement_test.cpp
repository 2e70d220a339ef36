#include "model/measurement.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace pcieval {
namespace {

TEST(SummarizeTrials, OddCountTakesTheMiddleValue) {
  const std::vector<double> trials{26.1, 25.9, 26.3, 12.0, 26.0};
  const TrialStats stats = summarize_trials(trials);
  EXPECT_DOUBLE_EQ(stats.median_gbps, 26.0);
  EXPECT_DOUBLE_EQ(stats.min_gbps, 12.0);
  EXPECT_DOUBLE_EQ(stats.max_gbps, 26.3);
}

TEST(SummarizeTrials, EvenCountAveragesTheMiddleTwo) {
  const std::vector<double> trials{4.0, 1.0, 3.0, 2.0};
  EXPECT_DOUBLE_EQ(summarize_trials(trials).median_gbps, 2.5);
}

TEST(SummarizeTrials, CoefficientOfVariationUsesTheSampleDeviation) {
  // mean 10, sample variance ((1)^2 + (1)^2) / (3 - 1) = 1, stddev 1: CV 0.1.
  const std::vector<double> trials{9.0, 10.0, 11.0};
  EXPECT_NEAR(summarize_trials(trials).cv, 0.1, 1e-12);
}

TEST(SummarizeTrials, OneTrialHasNoSpread) {
  const std::vector<double> trials{55.3};
  const TrialStats stats = summarize_trials(trials);
  EXPECT_DOUBLE_EQ(stats.median_gbps, 55.3);
  EXPECT_DOUBLE_EQ(stats.cv, 0.0);
}

TEST(SummarizeTrials, IdenticalTrialsHaveZeroCv) {
  const std::vector<double> trials{25.0, 25.0, 25.0, 25.0};
  EXPECT_DOUBLE_EQ(summarize_trials(trials).cv, 0.0);
}

TEST(GbpsOf, IsDecimalGigabytesPerSecond) {
  // 256 MiB in 5 ms: 268435456 / 0.005 / 1e9.
  EXPECT_NEAR(gbps_of(268435456, 0.005), 53.687, 0.001);
  EXPECT_DOUBLE_EQ(gbps_of(1'000'000'000, 1.0), 1.0);
}

TEST(MeasurementEnums, EveryNameReadsBack) {
  for (Direction d : {Direction::kHostToDevice, Direction::kDeviceToHost, Direction::kHostToHost}) {
    auto back = direction_from_string(to_string(d));
    ASSERT_TRUE(back) << to_string(d);
    EXPECT_EQ(back.value(), d);
  }
  for (CopyMethod m : {CopyMethod::kCopyEngine, CopyMethod::kSmKernel, CopyMethod::kCpuThreads}) {
    auto back = copy_method_from_string(to_string(m));
    ASSERT_TRUE(back);
    EXPECT_EQ(back.value(), m);
  }
  for (Aggregation a :
       {Aggregation::kAlone, Aggregation::kWithReverse, Aggregation::kWithPeers, Aggregation::kTotalOverWallTime}) {
    auto back = aggregation_from_string(to_string(a));
    ASSERT_TRUE(back);
    EXPECT_EQ(back.value(), a);
  }
  for (HostMemory h : {HostMemory::kPinned, HostMemory::kPageable}) {
    auto back = host_memory_from_string(to_string(h));
    ASSERT_TRUE(back);
    EXPECT_EQ(back.value(), h);
  }
  for (ProbeStatus s : {ProbeStatus::kRan, ProbeStatus::kSkipped, ProbeStatus::kFailed}) {
    auto back = probe_status_from_string(to_string(s));
    ASSERT_TRUE(back);
    EXPECT_EQ(back.value(), s);
  }
}

TEST(MeasurementEnums, UnknownNamesAreErrorsThatQuoteThem) {
  auto direction = direction_from_string("H2D");
  ASSERT_FALSE(direction);
  EXPECT_EQ(direction.error().message, "unknown direction 'H2D'");
  EXPECT_FALSE(aggregation_from_string("sum"));
  EXPECT_FALSE(probe_status_from_string(""));
}

}  // namespace
}  // namespace pcieval
