// `pcieval report RESULTS.json`: renders a document as it stands (nothing
// re-judged) as the table, HTML, Prometheus or JUnit; bad input is exit 2
// with one line. And `--html FILE` on check.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "cli/cli_runner.hpp"

namespace pcieval::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

class ReportCommand : public ScratchDirTest {
 protected:
  // The HGX A100 fixture with one GPU at x8, judged by check: exit 1.
  std::string x8_document() {
    const std::string json = path("x8.json");
    const auto run = run_pcieval("check -q " + fixture_args("hgx_a100_8gpu_gpu_x8") + " -o " + shell_quote(json));
    EXPECT_EQ(run.exit_code, 1) << run.err;
    return json;
  }
};

TEST_F(ReportCommand, PrintsTheTableOfTheDocumentByDefault) {
  const std::string json = x8_document();
  const auto run = run_pcieval("report " + shell_quote(json));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, IsEmpty());
  EXPECT_THAT(run.out, HasSubstr("0000:84:00.0  gpu"));
  EXPECT_THAT(run.out, HasSubstr("link_downgraded"));
  EXPECT_THAT(run.out, HasSubstr("pcieval fail: 0000:84:00.0 link_downgraded"));
}

TEST_F(ReportCommand, RendersTheVerdictsTheDocumentStatesWithoutJudgingAgain) {
  const std::string json = x8_document();
  nlohmann::json document = nlohmann::json::parse(slurp(json));
  for (auto& verdict : document["verdicts"]) verdict["status"] = "pass";
  document["overall"] = "pass";
  document["summary"] = "edited by hand";
  std::ofstream(path("edited.json")) << document.dump();
  const std::string html = path("edited.html");
  const auto run = run_pcieval("report " + shell_quote(path("edited.json")) + " --html " + shell_quote(html));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const std::string page = slurp(html);
  EXPECT_THAT(page, HasSubstr("<section id=\"verdict\" class=\"pass\">"));
  EXPECT_THAT(page, HasSubstr("edited by hand"));
  // The link is still drawn as read: below expected.
  EXPECT_THAT(page, HasSubstr("Gen4 x8 of Gen4 x16, below expected"));
  // validate, by contrast, judges the evidence again.
  EXPECT_EQ(run_pcieval("validate -q " + shell_quote(path("edited.json"))).exit_code, 1);
}

TEST_F(ReportCommand, WritesEveryFormatAskedForAndNoTable) {
  const std::string json = x8_document();
  const std::string html = path("r.html");
  const std::string prom = path("r.prom");
  const std::string junit = path("r.xml");
  const auto run = run_pcieval("report " + shell_quote(json) + " --html " + shell_quote(html) + " --prom " +
                               shell_quote(prom) + " --junit " + shell_quote(junit));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, IsEmpty());
  const std::string page = slurp(html);
  EXPECT_THAT(page, HasSubstr("<section id=\"verdict\" class=\"fail\">"));
  EXPECT_THAT(page, HasSubstr("0000:84:00.0"));
  const std::string metrics = slurp(prom);
  EXPECT_THAT(metrics, HasSubstr("pcieval_overall{result=\"fail\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("pcieval_device_ok{bdf=\"0000:84:00.0\",kind=\"gpu\"} 0\n"));
  // The document holds no run time: none is invented.
  EXPECT_THAT(metrics, Not(HasSubstr("pcieval_last_run_")));
  EXPECT_THAT(slurp(junit), HasSubstr("failures=\"1\""));

  const auto with_table = run_pcieval("report --table " + shell_quote(json) + " --prom " + shell_quote(prom));
  EXPECT_EQ(with_table.exit_code, 0) << with_table.err;
  EXPECT_THAT(with_table.out, HasSubstr("0000:84:00.0  gpu"));
}

TEST_F(ReportCommand, BudgetMetricMatchesTheTablesBudget) {
  const std::string example =
      std::string(PCIEVAL_SOURCE_DIR) + "/results_schema/examples/fail-downgraded-h100-spr.json";
  const std::string prom = path("r.prom");
  const auto run = run_pcieval("report --table " + shell_quote(example) + " --prom " + shell_quote(prom));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // h2d_ce of 0000:17:00.0: the table's BUDGET column and the metric are
  // the same number from the same evidence.
  std::smatch table_row;
  ASSERT_TRUE(
      std::regex_search(run.out, table_row, std::regex(R"re(h2d_ce +0000:17:00\.0 .* ([0-9.]+) \((Gen\d x\d+)\))re")))
      << run.out;
  std::smatch metric;
  const std::string metrics = slurp(prom);
  const std::regex budget_series(
      R"re(pcieval_bandwidth_budget_gigabytes_per_second\{bdf="0000:17:00\.0",direction="h2d",expected_link="([^"]+)"\} ([0-9.]+))re");
  ASSERT_TRUE(std::regex_search(metrics, metric, budget_series)) << metrics;
  EXPECT_EQ(metric[1].str(), table_row[2].str());
  EXPECT_NEAR(std::stod(metric[2].str()), std::stod(table_row[1].str()), 0.05);
  EXPECT_THAT(metrics, HasSubstr("pcieval_bandwidth_gigabytes_per_second{aggregation=\"alone\",bdf=\"0000:17:00.0\","
                                 "direction=\"h2d\",host_memory=\"pinned\",probe=\"h2d_ce\",subject=\"0000:17:00.0\"} "
                                 "27.61\n"));
}

TEST_F(ReportCommand, UnreadableOrMalformedInputIsExit2WithOneLine) {
  write(path("cut.json"), "{\"schema_version\": \"1.1.0\", \"tool\": {");
  write(path("notes.txt"), "just some notes\n");
  for (const std::string& input : {path("missing.json"), path("cut.json"), path("notes.txt")}) {
    const auto run = run_pcieval("report " + shell_quote(input) + " --html " + shell_quote(path("out.html")));
    EXPECT_EQ(run.exit_code, 2) << input;
    EXPECT_EQ(line_count(run.err), 1) << run.err;
    EXPECT_EQ(run.err.rfind("pcieval: error: ", 0), 0u) << run.err;
    EXPECT_THAT(run.err, HasSubstr(input));
    EXPECT_FALSE(std::filesystem::exists(path("out.html")));
  }
  const auto no_file = run_pcieval("report");
  EXPECT_EQ(no_file.exit_code, 2);
  EXPECT_EQ(line_count(no_file.err), 1) << no_file.err;
}

TEST_F(ReportCommand, OneUnwritableOutputIsExit2AndTheOthersAreWritten) {
  const std::string json = x8_document();
  const auto run = run_pcieval("report " + shell_quote(json) + " --html " +
                               shell_quote(dir_ / "missing-dir" / "r.html") + " --junit " + shell_quote(path("r.xml")));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("missing-dir"));
  EXPECT_THAT(slurp(path("r.xml")), HasSubstr("failures=\"1\""));
}

TEST_F(ReportCommand, CheckWritesTheHtmlReportAndKeepsItsExitCode) {
  const std::string html = path("check.html");
  const auto run = run_pcieval("check -q " + fixture_args("hgx_a100_8gpu_gpu_x8") + " --html " + shell_quote(html));
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const std::string page = slurp(html);
  EXPECT_THAT(page, HasSubstr("<section id=\"verdict\" class=\"fail\">"));
  EXPECT_THAT(page, HasSubstr("link_width_below_expected"));
  // Four switches, each a switch upstream port under a root port.
  std::size_t uplinks = 0;
  for (std::size_t at = page.find("switch upstream port"); at != std::string::npos;
       at = page.find("switch upstream port", at + 1)) {
    ++uplinks;
  }
  EXPECT_EQ(uplinks, 4u);
}

}  // namespace
}  // namespace pcieval::testing
