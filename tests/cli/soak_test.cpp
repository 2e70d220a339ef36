// `check --rounds/--duration` on the machine running the tests: with no GPU
// the host ceiling is the one probe that runs, which is enough to run real
// rounds, flush them, stop on SIGTERM and judge what was kept.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"
#include "report/schema_validation.hpp"

namespace pcieval::testing {
namespace {

using nlohmann::json;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

class SoakTest : public ScratchDirTest {
 protected:
  static std::vector<std::string> codes_of(const json& document) {
    std::vector<std::string> codes;
    for (const json& v : document["verdicts"]) codes.push_back(v["code"]);
    return codes;
  }
};

TEST_F(SoakTest, RoundsRunBackToBackAndAreKeptWithTheirTimes) {
  const std::string out = path("soak.json");
  const CliRun run = run_pcieval("check -q --rounds 3 -o " + shell_quote(out));
  ASSERT_NE(run.exit_code, 2) << run.err;
  const std::string text = slurp(out);
  EXPECT_THAT(schema_errors(text), IsEmpty());
  const json document = json::parse(text);
  ASSERT_TRUE(document["soak"].is_object()) << text.substr(0, 2000);
  const json& soak = document["soak"];
  EXPECT_EQ(soak["requested_rounds"], 3);
  EXPECT_TRUE(soak["requested_duration_s"].is_null());
  EXPECT_EQ(soak["finished"], true);
  EXPECT_TRUE(document["interrupted"].is_null());
  ASSERT_EQ(soak["rounds"].size(), 3u);
  double previous_end_s = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    const json& round = soak["rounds"][i];
    EXPECT_EQ(round["index"], static_cast<int>(i) + 1);
    EXPECT_GE(round["start_s"].get<double>(), previous_end_s);
    EXPECT_GT(round["end_s"].get<double>(), round["start_s"].get<double>());
    previous_end_s = round["end_s"];
    // The host ceiling ran in every round, with real trials.
    ASSERT_FALSE(round["measurements"].empty());
    EXPECT_EQ(round["measurements"][0]["probe"], "host_ceiling");
    EXPECT_GT(round["measurements"][0]["median_gbps"].get<double>(), 0);
  }
  // The top-level measurements are the first round's: what a plain check measures.
  EXPECT_EQ(document["measurements"], soak["rounds"][0]["measurements"]);
  EXPECT_THAT(codes_of(document), Not(Contains("run_interrupted")));
}

TEST_F(SoakTest, DurationStopsAfterTheRoundThatCrossesIt) {
  const std::string out = path("soak.json");
  const CliRun run = run_pcieval("check -q --duration 1s -o " + shell_quote(out));
  ASSERT_NE(run.exit_code, 2) << run.err;
  const json document = json::parse(slurp(out));
  EXPECT_EQ(document["soak"]["requested_duration_s"], 1.0);
  EXPECT_EQ(document["soak"]["finished"], true);
  ASSERT_GE(document["soak"]["rounds"].size(), 1u);
  // No round starts after the deadline.
  for (const json& round : document["soak"]["rounds"]) EXPECT_LT(round["start_s"].get<double>(), 1.0);
}

TEST_F(SoakTest, SigtermMidSoakKeepsTheCompleteRoundsAndExitsInconclusive) {
  const std::string out = path("soak.json");
  const std::string rc = path("rc");
  // Start a 10-minute soak, wait for its first round on disk (the per-round
  // flush), then stop it as scancel or systemd would.
  const std::string script = std::string(PCIEVAL_BINARY) + " check -q --duration 10m -o " + shell_quote(out) +
                             " 2>/dev/null & pid=$!; i=0; while [ ! -s " + shell_quote(out) +
                             " ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; kill -TERM $pid; wait $pid; "
                             "echo $? > " +
                             shell_quote(rc);
  ASSERT_EQ(std::system(("sh -c " + shell_quote(script)).c_str()), 0);
  EXPECT_EQ(slurp(rc), "3\n");
  const std::string text = slurp(out);
  EXPECT_THAT(schema_errors(text), IsEmpty());
  const json document = json::parse(text);
  EXPECT_EQ(document["interrupted"], "SIGTERM");
  EXPECT_EQ(document["soak"]["finished"], false);
  EXPECT_GE(document["soak"]["rounds"].size(), 1u);
  EXPECT_EQ(document["overall"], "inconclusive");
  bool said = false;
  for (const json& v : document["verdicts"]) {
    if (v["code"] != "run_interrupted") continue;
    said = true;
    EXPECT_EQ(v["status"], "inconclusive");
    EXPECT_THAT(v["reason"].get<std::string>(), HasSubstr("SIGTERM stopped the soak after"));
  }
  EXPECT_TRUE(said) << text.substr(0, 2000);
}

TEST_F(SoakTest, BadSoakFlagsAreUsageErrors) {
  for (const std::string& flags : {"--rounds 0", "--duration 0", "--duration 10x", "--rounds 2 --no-probes"}) {
    const CliRun run = run_pcieval("check -q " + flags);
    EXPECT_EQ(run.exit_code, 2) << flags << ": " << run.err;
    EXPECT_THAT(run.err, HasSubstr("pcieval: error:")) << flags;
    EXPECT_EQ(line_count(run.err), 1) << flags << ": " << run.err;
  }
}

TEST_F(SoakTest, AFlushedDocumentWithoutItsEndSaysTheSoakDidNotFinish) {
  // What a power cut leaves: the document of round 1, never finished.
  const std::string out = path("soak.json");
  const CliRun run = run_pcieval("check -q --rounds 1 -o " + shell_quote(out));
  ASSERT_NE(run.exit_code, 2) << run.err;
  json document = json::parse(slurp(out));
  document["soak"]["finished"] = false;
  const std::string cut = path("cut.json");
  write(cut, document.dump());
  const CliRun judged = run_pcieval("validate -q " + shell_quote(cut) + " -o " + shell_quote(out));
  EXPECT_EQ(judged.exit_code, 3) << judged.err;
  const json again = json::parse(slurp(out));
  EXPECT_THAT(codes_of(again), Contains("run_interrupted"));
}

}  // namespace
}  // namespace pcieval::testing
