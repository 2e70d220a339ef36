// write_outputs: every requested output is attempted even when one fails,
// each failure is returned (in order), and what was not asked for is not
// written; check_output_directory names the flag and the missing folder.
#include "report/outputs.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/html.hpp"
#include "report/junit.hpp"
#include "report/prometheus.hpp"
#include "report/results_writer.hpp"
#include "report/sample_results.hpp"

namespace pcieval {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::hgx_spr_results;

class OutputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pcieval-outputs-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  [[nodiscard]] std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string get(const std::string& file) {
    std::ifstream in(file);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

  fs::path dir_;
};

TEST_F(OutputsTest, WritesEveryRequestedOutputAsItsRendererDoes) {
  const Results results = hgx_spr_results();
  ReportContext context;
  context.started_s = 1718000000;
  context.duration_s = 12.5;
  context.budgets = {BandwidthBudget{"0000:17:00.0", Direction::kHostToDevice, "Gen5 x16", 57.6}};
  OutputPaths paths{path("results.json"), path("metrics.prom"), path("junit.xml"), path("report.html")};

  EXPECT_TRUE(write_outputs(results, context, paths).empty());

  EXPECT_EQ(get(path("results.json")), results_to_json(results));
  EXPECT_EQ(get(path("metrics.prom")), render_prometheus(results, 1718000000, 12.5, context.budgets));
  EXPECT_EQ(get(path("junit.xml")), render_junit(results, "pcieval", 1718000000));
  EXPECT_EQ(get(path("report.html")), render_html(results, context.budgets, context.loaded_links));
}

TEST_F(OutputsTest, EveryOutputIsAttemptedWhenAnEarlierOneFails) {
  const Results results = hgx_spr_results();
  // The JSON and the JUnit XML go to a folder that is not there; the metrics
  // and the page between and after them are still written.
  OutputPaths paths{path("missing/results.json"), path("metrics.prom"), path("missing/junit.xml"), path("report.html")};

  const std::vector<Error> failures = write_outputs(results, ReportContext{}, paths);

  ASSERT_EQ(failures.size(), 2U);
  EXPECT_THAT(failures[0].message, HasSubstr("results.json"));
  EXPECT_THAT(failures[1].message, HasSubstr("junit.xml"));
  EXPECT_TRUE(fs::exists(path("metrics.prom")));
  EXPECT_TRUE(fs::exists(path("report.html")));
}

TEST_F(OutputsTest, WritesNothingThatWasNotAskedFor) {
  OutputPaths paths;
  paths.junit = path("junit.xml");

  EXPECT_TRUE(write_outputs(hgx_spr_results(), ReportContext{}, paths).empty());

  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
  // No run start in the context: the suite carries no timestamp.
  EXPECT_EQ(get(path("junit.xml")), render_junit(hgx_spr_results(), "pcieval"));
}

TEST_F(OutputsTest, WriteFilesRendersOnlyWhatHasAPath) {
  int rendered = 0;
  const OutputFile files[] = {
      {std::nullopt, [&] { return std::to_string(++rendered); }},
      {path("one"), [&] { return std::to_string(++rendered); }},
  };
  EXPECT_TRUE(write_files(files).empty());
  EXPECT_EQ(rendered, 1);
  EXPECT_EQ(get(path("one")), "1");
}

TEST_F(OutputsTest, AFailureNamesTheFlagOfItsOutput) {
  OutputPaths paths;
  paths.prometheus = path("missing/metrics.prom");
  const std::vector<Error> failures = write_outputs(hgx_spr_results(), ReportContext{}, paths);
  ASSERT_EQ(failures.size(), 1U);
  EXPECT_THAT(failures[0].message, ::testing::StartsWith("--prom: "));
  EXPECT_THAT(failures[0].message, HasSubstr(path("missing/metrics.prom")));
}

// Issue 29: outputs that would replace each other or an input.
TEST_F(OutputsTest, DistinctFilesRefusesOneFileNamedTwice) {
  std::ofstream(path("r.json")) << "{}";
  fs::create_directories(path("sub"));
  fs::create_symlink(path("r.json"), path("soft.json"));
  fs::create_hard_link(path("r.json"), path("hard.json"));
  const auto refused = [](std::vector<NamedFile> outputs, std::vector<NamedFile> inputs = {}) {
    return !check_distinct_files(outputs, inputs).ok();
  };
  EXPECT_FALSE(refused({{"-o", path("r.json")}, {"--prom", path("r.prom")}}));
  for (const std::string& other :
       {path("r.json"), path("sub/../r.json"), path("soft.json"), path("hard.json"), dir_.string() + "/./r.json"}) {
    EXPECT_TRUE(refused({{"-o", path("r.json")}, {"--prom", other}})) << other;
  }
  // Not there yet, and spelt two ways.
  EXPECT_TRUE(refused({{"--junit", path("new.xml")}, {"--html", path("sub/../new.xml")}}));
  // Relative to the working directory.
  EXPECT_TRUE(refused({{"-o", "plain.json"}, {"--html", "./plain.json"}}));
  EXPECT_TRUE(refused({{"-o", "-"}, {"--prom", "-"}}));
  EXPECT_FALSE(refused({{"-o", "/dev/null"}, {"--prom", "/dev/null"}, {"--html", "/dev/null"}}));
  EXPECT_FALSE(refused({{"-o", ""}, {"--prom", ""}}));

  const Status named =
      check_distinct_files(std::vector<NamedFile>{{"-o", path("r.json")}, {"--history", path("soft.json")}}, {});
  ASSERT_FALSE(named.ok());
  EXPECT_EQ(named.error().message, "-o " + path("r.json") + " and --history " + path("soft.json") +
                                       " are one file: one output would replace the other; give each its own file");
}

TEST_F(OutputsTest, DistinctFilesLetsAnInputBeRewrittenOnlyByItsOwnFlag) {
  std::ofstream(path("r.json")) << "{}";
  const std::vector<NamedFile> input{{"RESULTS", path("r.json"), "-o"}};
  EXPECT_TRUE(check_distinct_files(std::vector<NamedFile>{{"-o", path("r.json")}}, input).ok());
  const Status prom = check_distinct_files(std::vector<NamedFile>{{"--prom", path("r.json")}}, input);
  ASSERT_FALSE(prom.ok());
  EXPECT_EQ(prom.error().message, "--prom " + path("r.json") + " would replace the input RESULTS " + path("r.json") +
                                      ", which this command reads: give the output its own file");
  const std::vector<NamedFile> baseline{{"--baseline", path("r.json")}};
  EXPECT_FALSE(check_distinct_files(std::vector<NamedFile>{{"-o", path("r.json")}}, baseline).ok());
  // stdin is no file to replace.
  const std::vector<NamedFile> stdin_input{{"RESULTS", "-"}};
  EXPECT_TRUE(check_distinct_files(std::vector<NamedFile>{{"-o", "-"}}, stdin_input).ok());
}

TEST_F(OutputsTest, OutputDirectoryCheckNamesTheFlagAndTheFolder) {
  EXPECT_TRUE(check_output_directory("-o", std::nullopt));
  EXPECT_TRUE(check_output_directory("-o", std::string("-")));
  EXPECT_TRUE(check_output_directory("-o", std::string("")));
  EXPECT_TRUE(check_output_directory("-o", std::string("plain-name.json")));
  EXPECT_TRUE(check_output_directory("--prom", path("metrics.prom")));

  const Status missing = check_output_directory("--junit", path("no-such-dir/junit.xml"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "--junit: cannot write " + path("no-such-dir/junit.xml") + ": directory " +
                                         path("no-such-dir") + " does not exist");

  std::ofstream(path("a-file")) << "x";
  EXPECT_EQ(missing_directory(path("a-file/out.json")), path("a-file") + " is not a directory");
}

}  // namespace
}  // namespace pcieval
