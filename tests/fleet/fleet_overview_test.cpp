// A large fleet in the table and on the page: the nodes that need a look
// first, the passing rest counted per kind of node, the page bounded.
#include "fleet/fleet_overview.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "fleet/fleet_html.hpp"
#include "fleet/fleet_table.hpp"
#include "fleet_test_data.hpp"

namespace pcieval {
namespace {

using testing::a100_medians;
using testing::a100_node;
using ::testing::HasSubstr;
using ::testing::Not;

std::string host_name(std::size_t i) {
  char name[16];
  std::snprintf(name, sizeof name, "dgx-%05zu", i);
  return name;
}

// TEST DATA: n A100 nodes. Nodes listed in `failing` fail, in `inconclusive`
// are inconclusive, in `slow` have GPU 2 at 19.9 GB/s (an outlier), and
// `unreadable` is a document that could not be read.
Fleet fleet_of(std::size_t n, const std::vector<std::size_t>& failing, const std::vector<std::size_t>& inconclusive,
               const std::vector<std::size_t>& slow, std::size_t unreadable) {
  std::vector<FleetNode> nodes;
  const auto in = [](const std::vector<std::size_t>& list, std::size_t i) {
    return std::find(list.begin(), list.end(), i) != list.end();
  };
  const FleetNode pass_node = node_from_results(a100_node("template", a100_medians()), "r.json");
  for (std::size_t i = 0; i < n; ++i) {
    const std::string host = host_name(i);
    if (i == unreadable) {
      nodes.push_back(node_without_results("r/" + host + ".json", "r/" + host + ".json", kExitUsage, "unreadable"));
      continue;
    }
    if (in(failing, i) || in(inconclusive, i) || in(slow, i)) {
      std::vector<double> medians = a100_medians();
      if (in(slow, i)) medians[2] = 19.9;
      const Overall overall = in(failing, i)        ? Overall::kFail
                              : in(inconclusive, i) ? Overall::kInconclusive
                                                    : Overall::kPass;
      nodes.push_back(node_from_results(a100_node(host, medians, overall), "r/" + host + ".json"));
      continue;
    }
    // Copies of one entry: 10,000 nodes build in milliseconds.
    FleetNode node = pass_node;
    node.host = host;
    node.source = "r/" + host + ".json";
    nodes.push_back(std::move(node));
  }
  return build_fleet(std::move(nodes), {}, "merge", ToolInfo{"pcieval", "test"});
}

TEST(FleetOverview, ASmallFleetListsEveryNodeInHostOrder) {
  const Fleet fleet = fleet_of(kListEveryNodeUpTo, {40}, {}, {7}, 99);
  const FleetOverview overview = overview_of(fleet);
  EXPECT_TRUE(overview.every_node);
  ASSERT_EQ(overview.listed.size(), kListEveryNodeUpTo);
  EXPECT_EQ(overview.listed.front()->host, "dgx-00000");
  EXPECT_TRUE(overview.passing.empty());
  const std::string table = render_fleet_table(fleet);
  EXPECT_THAT(table, HasSubstr("\ndgx-00050         pass          0     8 GPUs at expected link state"));
  EXPECT_THAT(table, Not(HasSubstr("need a look")));
}

TEST(FleetOverview, ALargeFleetListsWhatNeedsALookFailingFirst) {
  const Fleet fleet = fleet_of(150, {120, 30}, {10}, {77}, 5);
  const FleetOverview overview = overview_of(fleet);
  EXPECT_FALSE(overview.every_node);
  std::vector<std::string> listed;
  for (const FleetNode* node : overview.listed) listed.push_back(node->host);
  EXPECT_THAT(listed, ::testing::ElementsAre("dgx-00030", "dgx-00120", "dgx-00077", "r/dgx-00005.json", "dgx-00010"));
  EXPECT_EQ(overview.not_listed, 0u);
  ASSERT_EQ(overview.passing.size(), 1u);
  EXPECT_EQ(overview.passing[0].nodes, 145u);
  EXPECT_EQ(overview.passing[0].gpus, "8 x NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(overview.passing[0].link, "Gen4 x16");
  EXPECT_EQ(overview.passing[0].first_host, "dgx-00000");
  EXPECT_EQ(overview.passing[0].last_host, "dgx-00149");

  const std::string table = render_fleet_table(fleet);
  EXPECT_THAT(table, HasSubstr("5 of 150 nodes need a look (failing, an outlier GPU, unreadable, inconclusive):\n"
                               "HOST              VERDICT       EXIT  REASON\n"
                               "dgx-00030         fail          1     0000:07:00.0 bandwidth_low"));
  EXPECT_THAT(table, HasSubstr("145 passing nodes without an outlier GPU, by GPUs and expected link:\n"
                               "NODES  GPUS                       LINK      HOSTS\n"
                               "145    8 x NVIDIA A100-SXM4-80GB  Gen4 x16  dgx-00000 .. dgx-00149\n"));
  // A passing node without an outlier has no row of its own.
  EXPECT_THAT(table, Not(HasSubstr("\ndgx-00001 ")));
  EXPECT_THAT(table, HasSubstr("dgx-00077  0000:27:00.0"));  // the outlier table is still whole
}

TEST(FleetOverview, LongListsStopAtTheRowLimitAndSaySoInTheTableAndOnThePage) {
  std::vector<std::size_t> failing;
  for (std::size_t i = 0; i < 700; ++i) failing.push_back(i * 2);
  const Fleet fleet = fleet_of(2000, failing, {}, {}, 2000);
  const FleetOverview overview = overview_of(fleet);
  EXPECT_EQ(overview.listed.size(), kMaxListedRows);
  EXPECT_EQ(overview.not_listed, 200u);
  EXPECT_THAT(render_fleet_table(fleet), HasSubstr("+200 more: the fleet document (-o FILE) lists every node\n"));
  EXPECT_THAT(render_fleet_html(fleet), HasSubstr("+200 more nodes that need a look"));
}

TEST(FleetOverview, TheTenThousandNodePageIsSmallAndDrawsAHistogram) {
  const Fleet fleet = fleet_of(10'000, {17, 4242}, {999}, {1, 5000, 9999}, 7777);
  ASSERT_EQ(fleet.outliers.size(), 6u);
  const std::string html = render_fleet_html(fleet);
  // A row per node and a dot per GPU made 19 MB at 10,000 nodes.
  EXPECT_LT(html.size(), 256u * 1024u) << html.size();
  EXPECT_THAT(html, HasSubstr("<b>7 of 10,000 nodes need a look</b>"));
  EXPECT_THAT(html, HasSubstr("<table id=\"passing-kinds\">"));
  EXPECT_THAT(html, HasSubstr("<td class=\"num\"><b>9,993</b></td><td>8 x NVIDIA A100-SXM4-80GB</td>"));
  EXPECT_THAT(html, HasSubstr("<rect class=\"density\""));
  // The outliers are still drawn one by one, in red.
  std::size_t red = 0;
  for (std::size_t at = html.find("<circle class=\"dot outlier\""); at != std::string::npos;
       at = html.find("<circle class=\"dot outlier\"", at + 1)) {
    ++red;
  }
  EXPECT_EQ(red, 6u);
  EXPECT_THAT(html, Not(HasSubstr("<circle class=\"dot\"")));
  const std::string nodes = html.substr(html.find("<section id=\"nodes\""));
  EXPECT_LT(nodes.find("dgx-00017"), nodes.find("dgx-00001"));  // failing before the outlier's node
}

TEST(FleetOverview, CountsAreGroupedByThousands) {
  EXPECT_EQ(grouped_count(0), "0");
  EXPECT_EQ(grouped_count(999), "999");
  EXPECT_EQ(grouped_count(1000), "1,000");
  EXPECT_EQ(grouped_count(1234567), "1,234,567");
}

}  // namespace
}  // namespace pcieval
