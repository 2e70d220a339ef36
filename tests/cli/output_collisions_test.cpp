// Outputs that would destroy each other or an input are refused before
// anything is read or measured (issue 29, item 11): `-o h.sqlite --history
// h.sqlite` used to replace a history with JSON. Two outputs are one file
// when they name the same path however spelt, one is a symbolic link to the
// other, or they are one existing file (a hard link). An output that is a
// symbolic link has its target written; the link stays.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"

namespace pcieval::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// hgx_a100_8gpu_gen4: an HGX A100 8-GPU server, every link healthy.
const std::string kUntouchedHgx = "hgx_a100_8gpu_gen4";

class OutputCollisions : public ScratchDirTest {
 protected:
  static CliRun check(const std::string& flags) {
    return run_pcieval("check -q " + fixture_args(kUntouchedHgx) + " " + flags);
  }
  // Exit 2, one line naming both, nothing printed, and nothing in the
  // scratch folder changed.
  void expect_refused(const std::string& args, const std::string& said) {
    const std::map<std::string, std::string> before = contents();
    const CliRun run = run_pcieval(args);
    EXPECT_EQ(run.exit_code, 2) << args << ": " << run.err;
    EXPECT_THAT(run.err, StartsWith("pcieval: error: ")) << args;
    EXPECT_THAT(run.err, HasSubstr(said)) << args;
    EXPECT_EQ(line_count(run.err), 1) << args << ": " << run.err;
    EXPECT_TRUE(run.out.empty()) << args << ": " << run.out;
    EXPECT_EQ(contents(), before) << args;
  }
  // Every name in the scratch folder with what it reads as (a link loop, a
  // folder: nothing).
  [[nodiscard]] std::map<std::string, std::string> contents() const {
    std::map<std::string, std::string> files;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      std::error_code error;
      files[entry.path().filename()] = entry.is_regular_file(error) ? slurp(entry.path()) : "";
    }
    return files;
  }
};

TEST_F(OutputCollisions, ResultsOntoTheHistoryIsRefusedAndTheHistoryKept) {
  const std::string db = path("h.sqlite");
  for (int run = 0; run < 3; ++run) ASSERT_EQ(check("--history " + shell_quote(db)).exit_code, 0);
  expect_refused("check -q " + fixture_args(kUntouchedHgx) + " -o " + shell_quote(db) + " --history " + shell_quote(db),
                 "-o " + db + " and --history " + db + " are one file");
  const CliRun history = run_pcieval("history --json --db " + shell_quote(db));
  ASSERT_EQ(history.exit_code, 0) << history.err;
  EXPECT_EQ(json::parse(history.out)["runs"].size(), 3U);
}

TEST_F(OutputCollisions, AnyTwoOutputsOnOneFileAreRefused) {
  write(path("earlier"), "earlier\n");
  const std::string flags[] = {"-o", "--prom", "--junit", "--html"};
  for (const std::string& first : flags) {
    for (const std::string& second : flags) {
      if (first >= second) continue;
      expect_refused("check -q " + fixture_args(kUntouchedHgx) + " " + first + " " + shell_quote(path("earlier")) +
                         " " + second + " " + shell_quote(path("earlier")),
                     "are one file");
    }
  }
  // Spelt another way, through a link to it, or a hard link of it.
  fs::create_directories(dir_ / "sub");
  fs::create_symlink(path("earlier"), path("soft"));
  fs::create_hard_link(path("earlier"), path("hard"));
  for (const std::string& other : {path("sub/../earlier"), dir_.string() + "//./earlier", path("soft"), path("hard")}) {
    expect_refused("check -q " + fixture_args(kUntouchedHgx) + " -o " + shell_quote(path("earlier")) + " --prom " +
                       shell_quote(other),
                   "--prom " + other);
  }
  // A new file too: nothing there yet, the same path twice.
  expect_refused("check -q " + fixture_args(kUntouchedHgx) + " --junit " + shell_quote(path("new.xml")) + " --html " +
                     shell_quote(path("sub/../new.xml")),
                 "are one file");
  // Two outputs on stdout would interleave.
  expect_refused("check -q " + fixture_args(kUntouchedHgx) + " -o - --prom -", "are one file");
}

TEST_F(OutputCollisions, DevicesMayTakeSeveralOutputs) {
  const CliRun run = check("-o /dev/null --prom /dev/null --junit /dev/null --html /dev/null");
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

TEST_F(OutputCollisions, AnOutputOntoAnInputIsRefusedButValidateMayRewriteItsDocument) {
  const std::string results = path("r.json");
  ASSERT_EQ(check("-o " + shell_quote(results)).exit_code, 0);
  // In place: the document is read whole, judged again and replaced atomically.
  const CliRun again = run_pcieval("validate -q " + shell_quote(results) + " -o " + shell_quote(results));
  EXPECT_EQ(again.exit_code, 0) << again.err;
  const json rewritten = json::parse(slurp(results));
  EXPECT_EQ(rewritten["overall"], "pass");
  EXPECT_THAT(rewritten["notes"].dump(), HasSubstr("re-judged from " + results));

  // Anything else there would replace the evidence with a rendering of it.
  for (const std::string& flag : {"--prom", "--junit", "--html"}) {
    expect_refused("validate -q " + shell_quote(results) + " " + flag + " " + shell_quote(results),
                   flag + " " + results + " would replace the input RESULTS " + results);
    expect_refused("report " + shell_quote(results) + " " + flag + " " + shell_quote(results),
                   "would replace the input RESULTS");
  }
  expect_refused("validate -q " + shell_quote(results) + " --history=" + shell_quote(results),
                 "--history " + results + " would replace the input RESULTS");
  // A known-good baseline or a profile is not overwritten by the run judged with it.
  expect_refused(
      "check -q " + fixture_args(kUntouchedHgx) + " --baseline " + shell_quote(results) + " -o " + shell_quote(results),
      "-o " + results + " would replace the input --baseline " + results);
  // A capture cannot be taken again.
  const std::string capture = path("lspci.txt");
  fs::copy_file(
      std::string(PCIEVAL_SOURCE_DIR) + "/tests/fixtures/captures/lspci_esc8000a_e12_idle_gpus_highpoint_x1.txt",
      capture);
  expect_refused("diagnose -q " + shell_quote(capture) + " -o " + shell_quote(capture),
                 "would replace the input FILE " + capture);
  // Nor a node's document by the fleet's.
  expect_refused("fleet merge -q " + shell_quote(results) + " -o " + shell_quote(results),
                 "would replace the input FILE " + results);
  expect_refused("fleet merge -q " + shell_quote(results) + " -o " + shell_quote(path("fleet.json")) + " --html " +
                     shell_quote(path("fleet.json")),
                 "are one file");
}

TEST_F(OutputCollisions, ASymlinkedOutputWritesItsTargetAndStays) {
  // An operator's link into a shared folder, relative and to a file not yet there.
  fs::create_directories(dir_ / "shared");
  fs::create_directories(dir_ / "links");
  fs::create_symlink("../shared/node.json", dir_ / "links" / "node.json");
  fs::create_symlink(dir_ / "shared" / "node.prom", dir_ / "links" / "node.prom");
  write(path("shared/node.prom"), "old metrics\n");
  const CliRun run =
      check("-o " + shell_quote(path("links/node.json")) + " --prom " + shell_quote(path("links/node.prom")));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(fs::is_symlink(dir_ / "links" / "node.json"));
  EXPECT_TRUE(fs::is_symlink(dir_ / "links" / "node.prom"));
  EXPECT_EQ(json::parse(slurp(path("shared/node.json")))["overall"], "pass");
  EXPECT_THAT(slurp(path("shared/node.prom")), HasSubstr("pcieval_overall{result=\"pass\"} 1"));
  // No temporary file left beside the links or the targets.
  for (const char* folder : {"links", "shared"}) {
    for (const auto& entry : fs::directory_iterator(dir_ / folder)) {
      EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
    }
  }
  // A loop of links is refused before anything is measured.
  fs::create_symlink(path("loop-b"), path("loop-a"));
  fs::create_symlink(path("loop-a"), path("loop-b"));
  expect_refused("check -q " + fixture_args(kUntouchedHgx) + " -o " + shell_quote(path("loop-a")),
                 "too many levels of symbolic links");
}

}  // namespace
}  // namespace pcieval::testing
