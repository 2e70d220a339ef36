// The fleet page (fleet/fleet_html.hpp): its sections in order, the outlier
// shown in its table and its strip plot, groups too small to judge, the empty
// fleet, and strings from documents kept as text. The documents are test data
// (fleet_test_data.hpp), not measurements.
#include "fleet/fleet_html.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fleet_test_data.hpp"

namespace pcieval {
namespace {

using testing::a100_medians;
using testing::a100_node;
using ::testing::HasSubstr;
using ::testing::Not;

Fleet fleet_of(const std::vector<Results>& documents, std::vector<std::string> problems = {}) {
  std::vector<FleetNode> nodes;
  for (const Results& r : documents) nodes.push_back(node_from_results(r, r.evidence.host.hostname + ".json"));
  return build_fleet(std::move(nodes), std::move(problems), "merge", ToolInfo{"pcieval", "test"});
}

// The text of <section id="ID"> up to its </section>; empty when absent.
std::string section(const std::string& html, const std::string& id) {
  const auto start = html.find("<section id=\"" + id + "\"");
  if (start == std::string::npos) return {};
  const auto end = html.find("</section>", start);
  return html.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

const std::vector<std::string> kSections = {"verdict", "nodes", "outliers", "small-groups", "problems", "medians"};

TEST(FleetHtml, SectionsInOrderWithTheFleetVerdictFirst) {
  const Fleet fleet =
      fleet_of({a100_node("n-pass", a100_medians()), a100_node("n-fail", a100_medians(), Overall::kFail),
                a100_node("n-inc", a100_medians(), Overall::kInconclusive)});
  const std::string html = render_fleet_html(fleet);
  std::size_t last = 0;
  for (const std::string& id : kSections) {
    const auto at = html.find("<section id=\"" + id + "\"");
    ASSERT_NE(at, std::string::npos) << id;
    EXPECT_GT(at, last) << id << " out of order";
    last = at;
  }
  const std::string verdict = section(html, "verdict");
  EXPECT_THAT(verdict, HasSubstr("class=\"fail\""));
  EXPECT_THAT(verdict, HasSubstr("<div class=\"result-word\">FAIL</div>"));
  EXPECT_THAT(verdict, HasSubstr("<b>3 nodes</b>: 1 pass, 1 fail, 1 inconclusive"));
  EXPECT_THAT(verdict, HasSubstr("exit code <b>1</b> (a node fails)"));
  // Self-contained: no script, nothing referenced by URL, a policy refusing fetches.
  EXPECT_THAT(html, HasSubstr("default-src 'none'"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  EXPECT_THAT(html, Not(HasSubstr("href=")));
}

TEST(FleetHtml, OneRowPerNodeWithItsOverallAndReason) {
  const Fleet fleet =
      fleet_of({a100_node("n-pass", a100_medians()), a100_node("n-fail", a100_medians(), Overall::kFail)});
  const std::string nodes = section(render_fleet_html(fleet), "nodes");
  EXPECT_EQ(count(nodes, "<tr><td class=\"mono\">"), 2u);
  // The summary without its "pcieval fail: " prefix, as the fleet table shows it.
  EXPECT_THAT(nodes, HasSubstr("<td class=\"mono\">n-fail</td><td><span class=\"status fail\">fail</span></td>"
                               "<td class=\"num\">1</td><td>0000:07:00.0 bandwidth_low (bandwidth_below_budget)</td>"));
  EXPECT_THAT(nodes, HasSubstr("<td class=\"mono\">n-pass</td><td><span class=\"status pass\">pass</span></td>"));
}

TEST(FleetHtml, OutlierInItsTableAndRedInTheStripPlot) {
  std::vector<double> slow = a100_medians();
  slow[3] = 21.5;
  const Fleet fleet = fleet_of({a100_node("n1", a100_medians()), a100_node("n2", a100_medians()), a100_node("n3", slow),
                                a100_node("n4", a100_medians())});
  ASSERT_EQ(fleet.outliers.size(), 2u);
  const std::string html = render_fleet_html(fleet);
  const std::string outliers = section(html, "outliers");
  EXPECT_THAT(outliers, HasSubstr("<table id=\"outlier-table\">"));
  EXPECT_THAT(outliers, HasSubstr("<td class=\"mono\">0000:37:00.0</td><td class=\"mono\">n3</td>"
                                  "<td>NVIDIA A100-SXM4-80GB</td><td>Gen4 x16</td><td>h2d_ce</td><td>h2d</td>"
                                  "<td class=\"num\"><b>21.50</b></td><td class=\"num\">25.70</td>"));
  EXPECT_THAT(outliers, HasSubstr("<td class=\"num\">32 GPUs</td>"));

  const std::string medians = section(html, "medians");
  // One plot for the one model and link, a row per probe and direction.
  EXPECT_EQ(count(medians, "<svg class=\"strip\""), 1u);
  EXPECT_THAT(medians, HasSubstr("<h3>NVIDIA A100-SXM4-80GB (10de:20b2), Gen4 x16</h3>"));
  EXPECT_EQ(count(medians, "<line class=\"median\""), 2u);
  EXPECT_EQ(count(medians, "<line class=\"threshold\""), 2u);
  EXPECT_EQ(count(medians, "<circle class=\"dot\""), 62u);
  EXPECT_EQ(count(medians, "<circle class=\"dot outlier\""), 2u);
  EXPECT_THAT(medians, HasSubstr("<title>n3 0000:37:00.0: 21.50 GB/s (outlier)</title>"));
  EXPECT_THAT(medians, HasSubstr("<title>group median 25.70 GB/s</title>"));
  EXPECT_THAT(section(html, "small-groups"), HasSubstr("Every group had enough GPUs to judge."));
}

TEST(FleetHtml, GroupsTooSmallToJudgeAreListedAndMarked) {
  const Fleet fleet = fleet_of({a100_node("solo", {25.7, 25.6})});
  const std::string html = render_fleet_html(fleet);
  const std::string small = section(html, "small-groups");
  EXPECT_THAT(small, HasSubstr("<table id=\"small-group-table\">"));
  EXPECT_EQ(count(small, "<td class=\"num\">2 GPUs</td>"), 2u);  // h2d_ce and d2h_ce
  EXPECT_THAT(section(html, "medians"), HasSubstr("2 GPUs, not judged"));
  EXPECT_EQ(count(html, "<line class=\"threshold\""), 0u);
  EXPECT_THAT(section(html, "outliers"), HasSubstr("No outlier: 0 GPU medians compared in 0 groups."));
}

TEST(FleetHtml, AnEmptyFleetSaysSoInEverySection) {
  const std::string html = render_fleet_html(build_fleet({}, {}, "merge", ToolInfo{"pcieval", "test"}));
  for (const std::string& id : kSections) EXPECT_FALSE(section(html, id).empty()) << id;
  EXPECT_THAT(section(html, "verdict"), HasSubstr("<div class=\"result-word\">INCONCLUSIVE</div>"));
  EXPECT_THAT(section(html, "verdict"), HasSubstr("<b>0 nodes</b>: 0 pass, 0 fail, 0 inconclusive"));
  EXPECT_THAT(section(html, "nodes"), HasSubstr("No node in this fleet document."));
  EXPECT_THAT(section(html, "medians"), HasSubstr("No per-GPU copy-engine median"));
  EXPECT_THAT(html, Not(HasSubstr("<svg")));
  EXPECT_THAT(html, HasSubstr("</html>\n"));
}

TEST(FleetHtml, MarkupInHostnamesModelsAndProblemsStaysText) {
  Results hostile = a100_node("<script>alert(1)</script>", a100_medians(5), Overall::kFail);
  hostile.evidence.devices[0].nvml->name = "<img src=x onerror=alert(2)>";
  hostile.summary = "pcieval fail: </td><b>bold</b> & \"quoted\" 'single'";
  const Fleet fleet = fleet_of({hostile, a100_node("ok\x01\x7f\xff", a100_medians(5))},
                               {"<style>body{display:none}</style>.json: unreadable"});
  const std::string html = render_fleet_html(fleet);
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  EXPECT_THAT(html, Not(HasSubstr("<b>bold")));
  EXPECT_EQ(count(html, "<style"), 1u);
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(section(html, "nodes"),
              HasSubstr("&lt;/td&gt;&lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot; &#39;single&#39;"));
  EXPECT_THAT(section(html, "problems"), HasSubstr("&lt;style&gt;body{display:none}&lt;/style&gt;.json: unreadable"));
  // Control bytes and ill-formed UTF-8 become U+FFFD.
  EXPECT_THAT(section(html, "nodes"), HasSubstr("ok\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"));
  // In SVG text and tooltips too: the model names a plot, the host a dot.
  const std::string medians = section(html, "medians");
  EXPECT_THAT(medians, HasSubstr("aria-label=\"&lt;img src=x onerror=alert(2)&gt; (10de:20b2), Gen4 x16\""));
  EXPECT_THAT(medians, HasSubstr("<title>&lt;script&gt;alert(1)&lt;/script&gt; 0000:07:00.0: "));
}

}  // namespace
}  // namespace pcieval
