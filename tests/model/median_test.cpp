#include "model/median.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "model/measurement.hpp"

namespace pcieval {
namespace {

TEST(MedianTest, MiddleValueOrMeanOfTheMiddleTwo) {
  std::vector<double> odd = {3, 1, 2};
  std::vector<double> even = {4, 1, 3, 2};
  std::vector<double> none;
  EXPECT_DOUBLE_EQ(median_of(odd), 2);
  EXPECT_DOUBLE_EQ(median_of(even), 2.5);
  EXPECT_DOUBLE_EQ(median_of(none), 0);
}

TEST(MedianTest, TrialStatisticsUseTheSameMedian) {
  const std::vector<double> trials = {25.0, 27.5, 26.0, 27.0};
  std::vector<double> copy = trials;
  EXPECT_EQ(summarize_trials(trials).median_gbps, median_of(copy));
  EXPECT_DOUBLE_EQ(summarize_trials(trials).median_gbps, 26.5);
}

}  // namespace
}  // namespace pcieval
