// A property of every input pcieval is tested on: a `pass` (exit 0) always
// rests on at least one judged subject, a verdict of status pass, and the
// summary never claims a pass with nothing judged. It runs over every capture
// fixture (the fuzz harnesses' seeds, tests/fuzz) alone and all together, each
// fixture machine, and the inputs that judged nothing before (an empty tree,
// tool output without --link).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"

namespace pcieval::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const fs::path kCaptures = fs::path(PCIEVAL_SOURCE_DIR) / "tests" / "fixtures" / "captures";

class PassNeedsEvidence : public ScratchDirTest {
 protected:
  // Runs pcieval with `args` and `-o`, and checks the property on what it wrote.
  void check_property(const std::string& args, const std::string& what) {
    const std::string out = path("out.json");
    fs::remove(out);
    const CliRun run = run_pcieval(args + " -q -o " + shell_quote(out));
    ASSERT_NE(run.exit_code, 2) << what << ": " << run.err;
    const json document = json::parse(slurp(out), nullptr, false);
    ASSERT_FALSE(document.is_discarded()) << what;
    ASSERT_FALSE(document["verdicts"].empty()) << what << ": a document with no verdict at all";
    std::size_t judged = 0;
    for (const json& v : document["verdicts"]) judged += v["status"] == "pass" ? 1 : 0;
    if (run.exit_code == 0) {
      EXPECT_EQ(document["overall"], "pass") << what;
      EXPECT_GT(judged, 0U) << what << ": pass with nothing judged";
    }
    const std::string summary = document["summary"];
    if (judged == 0) EXPECT_EQ(summary.find("pass"), std::string::npos) << what << ": " << summary;
    ++inputs_;
  }

  std::size_t inputs_ = 0;
};

TEST_F(PassNeedsEvidence, EveryCaptureAloneAndAllTogether) {
  std::string all;
  for (const auto& entry : fs::directory_iterator(kCaptures)) {
    if (entry.path().filename() == "README.md") continue;
    check_property("diagnose " + shell_quote(entry.path().string()), entry.path().filename().string());
    all += " " + shell_quote(entry.path().string());
  }
  check_property("diagnose" + all, "every capture together");
  EXPECT_GE(inputs_, 10U);
}

TEST_F(PassNeedsEvidence, EveryFixtureMachine) {
  for (const auto& entry : fs::directory_iterator(PCIEVAL_FIXTURES_DIR)) {
    if (!entry.is_directory()) continue;
    const std::string machine = entry.path().filename().string();
    check_property("check --no-probes " + fixture_args(machine), machine);
  }
  EXPECT_GE(inputs_, 9U);
}

TEST_F(PassNeedsEvidence, AnEmptyPciTreeIsInconclusive) {
  fs::create_directories(path("sys/bus/pci/devices"));
  const std::string out = path("empty.json");
  const CliRun run =
      run_pcieval("check --no-probes --sysfs-root " + shell_quote(path("sys")) + " -q -o " + shell_quote(out));
  EXPECT_EQ(run.exit_code, 3) << run.err;
  const json document = json::parse(slurp(out), nullptr, false);
  ASSERT_EQ(document["verdicts"].size(), 1U);
  EXPECT_EQ(document["verdicts"][0]["code"], "nothing_judged");
  EXPECT_THAT(std::string(document["summary"]), ::testing::StartsWith("pcieval inconclusive"));
}

TEST_F(PassNeedsEvidence, ToolOutputWithoutALinkIsInconclusive) {
  const std::string out = path("tool.json");
  const CliRun run =
      run_pcieval("diagnose " + shell_quote((kCaptures / "bwtest_esc8000a_e12_rtx6000ada_quick.txt").string()) +
                  " -q -o " + shell_quote(out));
  EXPECT_EQ(run.exit_code, 3) << run.err;
  const json document = json::parse(slurp(out), nullptr, false);
  std::size_t no_link = 0;
  for (const json& v : document["verdicts"]) no_link += v["code"] == "no_link_to_judge_against" ? 1 : 0;
  EXPECT_GT(no_link, 0U) << document["verdicts"].dump(1);
}

}  // namespace
}  // namespace pcieval::testing
