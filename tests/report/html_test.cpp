// The HTML report: structure and order, self-containment, escaping, the
// topology's link colours, the measurement table, the size-sweep curve and
// the evidence, on the Sapphire Rapids H100 node of sample_results.hpp, a
// document with no evidence at all, and one with no GPU.
#include "report/html.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "model/text.hpp"
#include "report/hostile_results.hpp"
#include "report/html_page.hpp"
#include "report/sample_results.hpp"
#include "report/svg.hpp"

namespace pcieval {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The text between the opening of section `id` and the next section.
std::string section(const std::string& html, const std::string& id) {
  const std::size_t begin = html.find("<section id=\"" + id + "\"");
  if (begin == std::string::npos) return "";
  const std::size_t end = html.find("</section>", begin);
  return html.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

// Every element name the page opens: a report whose text leaked into markup
// would open one that the renderer never writes.
std::set<std::string> element_names(const std::string& html) {
  std::set<std::string> names;
  static const std::regex tag("<([A-Za-z][A-Za-z0-9]*)");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), tag); it != std::sregex_iterator(); ++it) {
    names.insert((*it)[1]);
  }
  return names;
}

const std::set<std::string> kElementsWritten = {
    "html", "head", "meta", "title", "style", "body", "main",  "h1",    "h2",     "h3", "section",
    "div",  "p",    "b",    "span",  "ul",    "li",   "table", "thead", "tbody",  "tr", "th",
    "td",   "code", "br",   "svg",   "rect",  "line", "text",  "path",  "circle", "g",  "article"};

TEST(HtmlTest, SectionsInOrderVerdictFirst) {
  const std::string html = render_html(testing::hgx_spr_results_probed());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n", 0), 0u);
  EXPECT_EQ(html.substr(html.size() - 8), "</html>\n");
  std::size_t previous = 0;
  for (const char* id : {"verdict", "topology", "measurements", "curves", "samples", "evidence", "notes"}) {
    const std::size_t at = html.find(std::string("<section id=\"") + id + "\"");
    ASSERT_NE(at, std::string::npos) << id;
    EXPECT_GT(at, previous) << id;
    previous = at;
  }
  for (const std::string& name : element_names(html)) EXPECT_EQ(kElementsWritten.count(name), 1u) << name;
}

TEST(HtmlTest, VerdictSaysTheResultInWordsAndColour) {
  Results results = testing::hgx_spr_results();
  std::string verdict = section(render_html(results), "verdict");
  EXPECT_THAT(verdict, HasSubstr("<section id=\"verdict\" class=\"fail\">"));
  EXPECT_THAT(verdict, HasSubstr(">FAIL<"));
  EXPECT_THAT(verdict, HasSubstr(html::escape(results.summary)));
  EXPECT_THAT(verdict, HasSubstr("hgx-b07"));
  EXPECT_THAT(verdict, HasSubstr("5 verdicts"));
  EXPECT_THAT(verdict, HasSubstr("2 inconclusive"));

  results.verdicts = {
      {"0000:18:00.0", VerdictStatus::kInconclusive, ReasonCode::kLinkStateUnknown, std::nullopt, "?", "read sysfs"}};
  results.overall = overall_of(results.verdicts);
  verdict = section(render_html(results), "verdict");
  EXPECT_THAT(verdict, HasSubstr("class=\"inconclusive\""));
  EXPECT_THAT(verdict, HasSubstr(">INCONCLUSIVE<"));
}

TEST(HtmlTest, SelfContainedAndScriptFree) {
  const std::string html = render_html(testing::hgx_spr_results_probed());
  EXPECT_THAT(html, HasSubstr("Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\""));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("<link")));
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  EXPECT_THAT(html, Not(HasSubstr("url(")));
  EXPECT_THAT(html, Not(HasSubstr("@import")));
  // The only URL is SVG's namespace name, which is never fetched.
  std::size_t urls = 0;
  for (std::size_t at = html.find("://"); at != std::string::npos; at = html.find("://", at + 1), ++urls) {
    ASSERT_GE(at, 4u);
    EXPECT_EQ(html.compare(at - 4, 26, "http://www.w3.org/2000/svg"), 0) << html.substr(at - 4, 40);
  }
  EXPECT_GT(urls, 0u);  // the charts are there, and were looked at
}

TEST(HtmlTest, TextFromTheDocumentNeverBecomesMarkup) {
  Results results = testing::hostile_results();
  results.evidence.host.hostname = "<script>alert(1)</script><img src=x onerror=alert(2)>\"'&";
  results.evidence.devices[1].nvml = NvmlGpuLink{};
  results.evidence.devices[1].nvml->name = "H100 </span><style>body{display:none}</style>";
  results.evidence.notes.push_back("<iframe src=\"http://evil.example/\"></iframe>");
  const std::string html = render_html(results);
  for (const std::string& name : element_names(html)) EXPECT_EQ(kElementsWritten.count(name), 1u) << name;
  EXPECT_EQ(count(html, "<style"), 1u);
  EXPECT_THAT(html,
              HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&quot;&#39;&amp;"));
  EXPECT_THAT(html, HasSubstr("H100 &lt;/span&gt;&lt;style&gt;"));
  // The hostile reason: markup escaped, controls replaced, the overlong
  // slash repaired, the emoji kept.
  EXPECT_THAT(html, HasSubstr("&lt;b&gt;&amp;amp; &quot;double&quot; &#39;single&#39;\r\nnext\tline "
                              "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"));
  EXPECT_THAT(html, HasSubstr("\xf0\x9f\x98\x80"));
  for (const char c : html) {
    const auto byte = static_cast<unsigned char>(c);
    EXPECT_FALSE((byte < 0x20 && c != '\n' && c != '\r' && c != '\t') || byte == 0x7f) << static_cast<int>(byte);
  }
  EXPECT_EQ(html::escape("\xff"), "\xef\xbf\xbd");
}

TEST(HtmlTest, EmptyDocumentSaysWhatIsMissing) {
  const std::string html = render_html(Results{});
  EXPECT_THAT(section(html, "verdict"), HasSubstr(">PASS<"));
  EXPECT_THAT(section(html, "topology"), HasSubstr("lists no PCIe devices"));
  EXPECT_THAT(section(html, "measurements"), HasSubstr("No measurements"));
  EXPECT_THAT(section(html, "curves"), HasSubstr("No size sweep"));
  EXPECT_THAT(section(html, "samples"), HasSubstr("No link samples"));
  EXPECT_THAT(section(html, "evidence"), HasSubstr("Every verdict is a pass"));
  EXPECT_THAT(html, Not(HasSubstr("<svg")));
  EXPECT_THAT(html, Not(HasSubstr("<table")));
}

// Modelled on results_schema/examples/pass-no-gpu-epyc-storage.json: an EPYC
// storage server with NVMe drives and a NIC, no GPU, the host ceiling measured.
TEST(HtmlTest, DocumentWithoutGpus) {
  Results results;
  results.evidence.host = {"stor-03", "6.1.0-27-amd64"};
  DeviceRecord nvme = testing::make_device("0000:c1:00.0", DeviceKind::kNvme, 0x144d, 0xa80a, 0x010802, 0, "0-63");
  nvme.path = {testing::make_link("0000:c1:00.0", "0000:c0:01.1", LinkPosition::kDeviceLink,
                                  testing::port(PcieGen::kGen4, 4, PcieGen::kGen4, 4),
                                  testing::port(PcieGen::kGen5, 4, PcieGen::kGen4, 4))};
  results.evidence.devices = {nvme};
  Measurement host =
      testing::make_measurement("host_ceiling", "numa0", Direction::kHostToHost, Aggregation::kTotalOverWallTime,
                                256 * testing::kMiB, {40.5, 41.0, 40.8});
  results.evidence.measurements = {host};
  results.verdicts = {{"0000:c1:00.0", VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState, std::nullopt, "ok", ""}};
  const std::string html = render_html(results);
  const std::string topology = section(html, "topology");
  EXPECT_THAT(topology, HasSubstr("0000:c1:00.0</span> <b>nvme</b>"));
  EXPECT_THAT(topology, HasSubstr("class=\"link ok\""));
  EXPECT_THAT(topology, HasSubstr("Gen4 x4 of Gen4 x4, at expected"));
  EXPECT_THAT(topology, Not(HasSubstr("<b>gpu</b>")));
  const std::string measurements = section(html, "measurements");
  EXPECT_THAT(measurements, HasSubstr(">host_ceiling<"));
  EXPECT_THAT(measurements, HasSubstr("<b>40.80</b>"));
  EXPECT_THAT(section(html, "curves"), HasSubstr("No size sweep"));
  EXPECT_THAT(section(html, "evidence"), HasSubstr("Every verdict is a pass"));
}

TEST(HtmlTest, TopologyColoursEachLinkByItsState) {
  const std::string topology = section(render_html(testing::hgx_spr_results()), "topology");
  // The x8 GPU's link is below expected and named by its verdict.
  EXPECT_THAT(topology, HasSubstr("<span class=\"link low named\" title=\"device_link\">Gen1 x8 of Gen5 x16, below "
                                  "expected; named by a verdict: link_downgraded</span>"));
  EXPECT_THAT(topology, HasSubstr("<span class=\"link ok\" title=\"device_link\">Gen5 x16 of Gen5 x16, at expected"));
  // The NVMe root port's speed could not be read: unknown, never "ok".
  EXPECT_THAT(topology, HasSubstr("<span class=\"link unknown named\" title=\"device_link\">Gen5 x4 of unknown"));
  // The switch uplink shared by the GPU and the NIC is drawn once.
  EXPECT_EQ(count(topology, "0000:15:00.0</span> <span class=\"role\">switch upstream port"), 1u);
  EXPECT_EQ(count(topology, "title=\"uplink\""), 1u);
  EXPECT_EQ(count(topology, "root port</span>"), 3u);  // the GPU and the NIC share one
  // The BMC's VGA has no link: listed apart, not judged.
  EXPECT_THAT(topology, HasSubstr("Not behind a PCIe port"));
  EXPECT_THAT(topology, HasSubstr("0000:02:00.0</span> <b>other</b>"));
  EXPECT_THAT(topology, HasSubstr("not judged"));
}

TEST(HtmlTest, TheHeaderSaysTheLinksWereSampledUnderLoadWhenTheyWere) {
  Results results = testing::hgx_spr_results();
  results.evidence.gpus_under_load = false;  // discovery read the GPUs idle
  results.evidence.link_samples.clear();
  EXPECT_THAT(section(render_html(results), "verdict"), HasSubstr("GPUs read without load"));
  LinkSample sample;
  sample.port = *parse_pci_address("0000:17:00.0");
  sample.under_load = true;
  results.evidence.link_samples.push_back(sample);
  const std::string verdict = section(render_html(results), "verdict");
  EXPECT_THAT(verdict, HasSubstr("links sampled under load"));
  EXPECT_THAT(verdict, Not(HasSubstr("without load")));
}

TEST(HtmlTest, ALinkReadUnderLoadIsShownAsTheVerdictReadsIt) {
  const std::vector<LoadedLink> loaded{{*parse_pci_address("0000:17:00.0"), LinkState{PcieGen::kGen5, 8}}};
  const std::string html = render_html(testing::hgx_spr_results(), {}, loaded);
  EXPECT_THAT(section(html, "topology"),
              HasSubstr(">Gen5 x8 under load (Gen1 x8 at discovery) of Gen5 x16, below expected; named by a verdict"));
  EXPECT_THAT(section(html, "evidence"), HasSubstr("<td>Gen5 x8 under load (Gen1 x8 at discovery)</td>"));
}

TEST(HtmlTest, ACopyBelowItsFloorIsMarkedLow) {
  const Results results = testing::hgx_spr_results_probed();
  const double median = results.evidence.measurements[0].stats.median_gbps;
  const auto h2d_row = [](const std::string& html) {
    const std::string measurements = section(html, "measurements");
    const std::string row = measurements.substr(measurements.find("<tr><td class=\"mono\">h2d_ce"));
    return row.substr(0, row.find("</tr>"));
  };
  // A floor above the median: the median and its share of the budget marked.
  const std::vector<BandwidthBudget> above = {
      {"0000:17:00.0", Direction::kHostToDevice, "Gen5 x16", median * 2, median * 1.5}};
  EXPECT_EQ(count(h2d_row(render_html(results, above)), "class=\"num low\" title=\"below the floor of "), 2u);
  // Within its floor: nothing marked.
  const std::vector<BandwidthBudget> within = {
      {"0000:17:00.0", Direction::kHostToDevice, "Gen5 x16", median * 1.1, median * 0.8}};
  EXPECT_THAT(h2d_row(render_html(results, within)), Not(HasSubstr(" low")));
}

TEST(HtmlTest, MeasurementsBesideTheirBudgets) {
  const std::vector<BandwidthBudget> budgets = {{"0000:17:00.0", Direction::kHostToDevice, "Gen5 x16", 58.4}};
  const Results results = testing::hgx_spr_results_probed();
  const std::string measurements = section(render_html(results, budgets), "measurements");
  const std::string h2d_row = measurements.substr(measurements.find("<tr><td class=\"mono\">h2d_ce"));
  const double median = results.evidence.measurements[0].stats.median_gbps;
  char percent[16];
  std::snprintf(percent, sizeof percent, "%.0f %%", 100 * median / 58.4);
  EXPECT_THAT(h2d_row.substr(0, h2d_row.find("</tr>")),
              HasSubstr("58.4 (Gen5 x16)</td><td class=\"num\">" + std::string(percent)));
  // The host ceiling has no budget; the sweep is a curve, not rows.
  const std::string host_row = measurements.substr(measurements.find("<tr><td class=\"mono\">host_ceiling"));
  EXPECT_THAT(host_row.substr(0, host_row.find("</tr>")), HasSubstr("<td>-</td><td>-</td>"));
  EXPECT_THAT(measurements, Not(HasSubstr(">sweep_ce</td><td class=\"mono\">0000")));
  EXPECT_THAT(measurements, HasSubstr("cudaSetDevice: all CUDA-capable devices are busy"));
}

TEST(HtmlTest, SweepGivesACurvePerSubjectAndDirection) {
  const std::vector<BandwidthBudget> budgets = {{"0000:17:00.0", Direction::kHostToDevice, "Gen5 x16", 58.4}};
  const std::string curves = section(render_html(testing::hgx_spr_results_probed(), budgets), "curves");
  EXPECT_EQ(count(curves, "<svg class=\"chart\""), 1u);
  EXPECT_THAT(curves, HasSubstr("aria-label=\"0000:17:00.0 h2d (host to device)\""));
  EXPECT_THAT(curves, HasSubstr(">4 KiB</text>"));
  EXPECT_THAT(curves, HasSubstr(">1 MiB</text>"));
  EXPECT_THAT(curves, HasSubstr("budget 58.4 GB/s (Gen5 x16)"));
  // Two points, smallest size first, the larger copy faster (drawn higher).
  const std::regex point("<circle cx=\"([0-9.]+)\" cy=\"([0-9.]+)\"[^>]*><title>([^<]*)</title>");
  std::vector<std::smatch> points;
  for (auto it = std::sregex_iterator(curves.begin(), curves.end(), point); it != std::sregex_iterator(); ++it) {
    points.push_back(*it);
  }
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0][3].str(), "4 KiB: 0.62 GB/s (3 trials, 0.61-0.64)");
  EXPECT_EQ(points[1][3].str(), "1 MiB: 22.40 GB/s (3 trials, 22.38-22.45)");
  EXPECT_LT(std::stod(points[0][1]), std::stod(points[1][1]));
  EXPECT_GT(std::stod(points[0][2]), std::stod(points[1][2]));
  // Without budgets the curve is drawn without a budget line.
  EXPECT_THAT(section(render_html(testing::hgx_spr_results_probed()), "curves"), Not(HasSubstr("class=\"reference\"")));
}

TEST(HtmlTest, LinkSamplesPerPortWithIdleReadingsHollow) {
  const std::string samples = section(render_html(testing::hgx_spr_results_probed()), "samples");
  // Four ports sampled, a speed and a width chart each.
  EXPECT_EQ(count(samples, "<svg class=\"chart\""), 8u);
  EXPECT_THAT(samples, HasSubstr("aria-label=\"0000:17:00.0 speed\""));
  EXPECT_THAT(samples, HasSubstr("aria-label=\"0000:c9:01.0 width\""));
  // sysfs and NVML of the x8 GPU as two series of one chart.
  const std::string gpu_speed = samples.substr(samples.find("aria-label=\"0000:17:00.0 speed\""));
  EXPECT_THAT(gpu_speed.substr(0, gpu_speed.find("</svg>")), HasSubstr("data-series=\"nvml\""));
  EXPECT_THAT(samples, HasSubstr("fill=\"#ffffff\"><title>0.75 s, idle: Gen1 x16</title>"));
  // The failed speed reading of 0000:c9:01.0 leaves its speed chart empty.
  const std::string port_speed = samples.substr(samples.find("aria-label=\"0000:c9:01.0 speed\""));
  EXPECT_THAT(port_speed.substr(0, port_speed.find("</svg>")), HasSubstr(">no data</text>"));
}

TEST(HtmlTest, EvidenceForEveryVerdictThatIsNotAPassFailingFirst) {
  const std::string evidence = section(render_html(testing::hgx_spr_results_probed()), "evidence");
  EXPECT_EQ(count(evidence, "<article class=\"finding"), 4u);
  const std::size_t x8 = evidence.find("id=\"finding-0\"");
  const std::size_t node = evidence.find("id=\"finding-1\"");
  ASSERT_NE(x8, std::string::npos);
  ASSERT_NE(node, std::string::npos);
  EXPECT_THAT(evidence.substr(x8, node - x8),
              HasSubstr("0000:17:00.0</span> <span class=\"status fail\">link_downgraded"));
  EXPECT_THAT(evidence.substr(node), HasSubstr("node</span> <span class=\"status fail\">missing"));
  EXPECT_THAT(evidence.substr(evidence.find("id=\"finding-2\"")), HasSubstr("class=\"status inconclusive\""));
  // The x8 GPU's finding: link, reason, remediation, path, measurement and counters.
  const std::string finding = evidence.substr(x8, node - x8);
  EXPECT_THAT(finding, HasSubstr("0000:17:00.0 &harr; 0000:16:10.0"));
  EXPECT_THAT(finding, HasSubstr("runs Gen1 x8, expected Gen5 x16"));
  EXPECT_THAT(finding, HasSubstr("<b>Next step</b> Lanes are missing: reseat 0000:17:00.0"));
  EXPECT_THAT(finding, HasSubstr("<td>uplink</td>"));
  EXPECT_THAT(finding, HasSubstr("<code>h2d_ce</code> h2d 27.61 GB/s median of 5 trials"));
  EXPECT_THAT(finding, HasSubstr("<code>aer_correctable</code> 56 &rarr; 58"));
  EXPECT_THAT(evidence, Not(HasSubstr("0000:18:00.0")));  // the NIC passed
}

TEST(SvgTest, BinarySizesAndEmptyCharts) {
  EXPECT_EQ(binary_size_text(4096), "4 KiB");
  EXPECT_EQ(binary_size_text(256.0 * 1024 * 1024), "256 MiB");
  EXPECT_EQ(binary_size_text(1536.0 * 1024 * 1024), "1.5 GiB");
  EXPECT_EQ(binary_size_text(512), "512 B");
  svg::Chart chart;
  chart.title = "a <b>";
  chart.x_log2 = true;
  chart.series = {{"s", {{0, 1, std::nullopt, std::nullopt, true, ""}, {-4, 2, std::nullopt, std::nullopt, true, ""}}}};
  const std::string text = svg::render_chart(chart);
  EXPECT_THAT(text, HasSubstr("aria-label=\"a &lt;b&gt;\""));
  EXPECT_THAT(text, HasSubstr(">no data</text>"));  // x <= 0 cannot sit on a log axis
  EXPECT_THAT(text, Not(HasSubstr("<circle")));
  EXPECT_THAT(text, Not(HasSubstr("nan")));
  EXPECT_THAT(text, Not(HasSubstr("inf")));
}

}  // namespace
}  // namespace pcieval
