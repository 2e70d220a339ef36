// Trends and the history listing: pure functions of what the database holds.
#include "history/history_view.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace pcieval {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

HistoryPoint point(std::int64_t run, double started_s, const std::string& subject, const std::string& direction,
                   double median_gbps) {
  return HistoryPoint{run, started_s, "gpu-node-07",
                      HistoryMeasurement{subject, "h2d_ce", direction, std::uint64_t{256} << 20, median_gbps}};
}

// Two GPUs of an HGX A100 8-GPU board (tests/fixtures/machines.py), Gen4 x16
// (about 24.5 GB/s host-to-device): one whose link degrades over five weekly
// runs, down to what an x8 link carries, beside a healthy one.
std::vector<HistoryPoint> degrading() {
  std::vector<HistoryPoint> points;
  const double week_s = 7 * 24 * 3600;
  const std::vector<double> sick = {24.6, 24.1, 22.9, 20.3, 12.2};
  for (std::size_t i = 0; i < sick.size(); ++i) {
    const auto run = static_cast<std::int64_t>(i + 1);
    points.push_back(point(run, 1.7e9 + week_s * static_cast<double>(i), "0000:17:00.0", "h2d", sick[i]));
    points.push_back(point(run, 1.7e9 + week_s * static_cast<double>(i), "0000:18:00.0", "h2d", 24.5));
  }
  return points;
}

TEST(Trends, GroupBySubjectProbeDirectionAndSizeInRunOrder) {
  std::vector<HistoryPoint> points = degrading();
  std::reverse(points.begin(), points.end());  // any order in, run order out
  const std::vector<Trend> trends = trends_of(points);
  ASSERT_EQ(trends.size(), 2U);
  EXPECT_EQ(trends[0].subject, "0000:17:00.0");
  ASSERT_EQ(trends[0].points.size(), 5U);
  EXPECT_DOUBLE_EQ(trends[0].points.front().median_gbps, 24.6);
  EXPECT_DOUBLE_EQ(trends[0].points.back().median_gbps, 12.2);
  ASSERT_TRUE(trends[0].change_percent());
  EXPECT_NEAR(*trends[0].change_percent(), (12.2 - 24.6) / 24.6 * 100, 1e-9);
  EXPECT_NEAR(*trends[1].change_percent(), 0.0, 1e-12);
}

TEST(Trends, OnePointHasNoChange) {
  const std::vector<Trend> trends = trends_of({point(1, 1.0, "0000:17:00.0", "d2h", 26.0)});
  ASSERT_EQ(trends.size(), 1U);
  EXPECT_FALSE(trends[0].change_percent());
}

TEST(HistoryTable, ShowsRunsNewestFirstAndTheDegradation) {
  const std::vector<HistoryRun> runs = {
      {2, 1.7e9 + 604800, "gpu-node-07", "fail", "pcieval fail: 0000:17:00.0 bandwidth_low"},
      {1, 1.7e9, "gpu-node-07", "pass", "pcieval pass: 8 devices at expected link state"}};
  const std::string table = render_history_table(runs, trends_of(degrading()));
  EXPECT_THAT(table, HasSubstr("pcieval fail: 0000:17:00.0 bandwidth_low"));
  EXPECT_LT(table.find("fail"), table.find("pcieval pass"));
  EXPECT_THAT(table, HasSubstr("2023-11-14T22:13:20Z"));
  // The sick GPU's row: first, last, change and every median oldest first.
  EXPECT_THAT(table, HasSubstr("24.60      12.20  -50.4%  24.60 24.10 22.90 20.30 12.20"));
  EXPECT_THAT(table, HasSubstr("256 MiB"));
}

TEST(HistoryTable, ShowsOnlyTheNewestMediansOfALongTrend) {
  std::vector<HistoryPoint> points;
  for (int i = 0; i < kShownMedians + 3; ++i) points.push_back(point(i + 1, i, "0000:17:00.0", "h2d", 10.0 + i));
  const std::string table = render_history_table({{1, 0, "n", "pass", "ok"}}, trends_of(points));
  EXPECT_THAT(table, HasSubstr("... 13.00"));
  EXPECT_THAT(table, Not(HasSubstr("12.00 13.00")));
}

TEST(HistoryTable, SaysSoWhenNothingWasRecorded) {
  EXPECT_EQ(render_history_table({}, {}), "no runs recorded\n");
  EXPECT_THAT(render_history_table({{1, 0, "n", "pass", "ok"}}, {}), HasSubstr("no measurements recorded"));
}

TEST(HistoryJson, CarriesRunsAndTrendsWithNumbers) {
  const std::vector<HistoryRun> runs = {{1, 1.7e9, "gpu-node-07", "pass", "ok"}};
  const auto document = nlohmann::json::parse(render_history_json(runs, trends_of(degrading())));
  ASSERT_EQ(document["runs"].size(), 1U);
  EXPECT_EQ(document["runs"][0]["started_utc"], "2023-11-14T22:13:20Z");
  ASSERT_EQ(document["trends"].size(), 2U);
  const auto& sick = document["trends"][0];
  EXPECT_EQ(sick["subject"], "0000:17:00.0");
  EXPECT_EQ(sick["size_bytes"], 268435456);
  EXPECT_DOUBLE_EQ(sick["last_gbps"].get<double>(), 12.2);
  EXPECT_LT(sick["change_percent"].get<double>(), -50);
  EXPECT_EQ(sick["points"].size(), 5U);
  const auto single = nlohmann::json::parse(render_history_json(runs, trends_of({point(1, 1, "x", "h2d", 1)})));
  EXPECT_TRUE(single["trends"][0]["change_percent"].is_null());
}

}  // namespace
}  // namespace pcieval
