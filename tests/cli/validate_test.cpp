// `pcieval validate` on every fixture machine: a document written by check is
// judged again to the same outcome, verdicts come from the evidence and never
// from the file, and a document that cannot be read is exit 2 with one line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"
#include "report/schema_validation.hpp"

namespace pcieval::testing {
namespace {

using nlohmann::json;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class ValidateTest : public ScratchDirTest {
 protected:
  // `check -o A.json` on a fixture machine.
  CliRun check(const std::string& machine, const std::string& output) {
    return run_pcieval("check -q " + fixture_args(machine) + " -o " + shell_quote(output));
  }
};

using Verdicts = std::vector<std::tuple<std::string, std::string, std::string>>;

Verdicts verdicts_of(const json& document) {
  Verdicts verdicts;
  for (const json& v : document["verdicts"]) verdicts.emplace_back(v["subject"], v["status"], v["code"]);
  return verdicts;
}

class ValidateFixture : public ValidateTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(ValidateFixture, SameOutcomeAsCheck) {
  const std::string machine = GetParam();
  const std::string a = path("A.json");
  const std::string b = path("B.json");
  const CliRun checked = check(machine, a);
  const CliRun validated = run_pcieval("validate " + shell_quote(a) + " -o " + shell_quote(b));
  EXPECT_EQ(validated.exit_code, checked.exit_code) << machine << "\n" << validated.err;
  EXPECT_TRUE(validated.err.empty()) << validated.err;

  const std::string b_text = slurp(b);
  EXPECT_THAT(schema_errors(b_text), IsEmpty()) << machine;
  const json first = json::parse(slurp(a), nullptr, false);
  const json again = json::parse(b_text, nullptr, false);
  ASSERT_FALSE(first.is_discarded());
  ASSERT_FALSE(again.is_discarded());
  EXPECT_EQ(verdicts_of(again), verdicts_of(first)) << machine;
  EXPECT_EQ(again["overall"], first["overall"]);
  EXPECT_EQ(again["summary"], first["summary"]);
  // The evidence travels unchanged; only a note is added.
  EXPECT_EQ(again["devices"], first["devices"]) << machine;
  ASSERT_EQ(again["notes"].size(), first["notes"].size() + 1);
  EXPECT_EQ(again["notes"].back(), "re-judged from " + a + " (written by pcieval " +
                                       std::string(first["tool"]["version"]) + " on " +
                                       std::string(first["host"]["hostname"]) + ")");
  // The table is check's, summary line included.
  EXPECT_THAT(validated.out, HasSubstr("note: re-judged from " + a));
  EXPECT_THAT(validated.out, HasSubstr(std::string(first["summary"])));
}

INSTANTIATE_TEST_SUITE_P(All, ValidateFixture, ::testing::ValuesIn(fixture_machines()),
                         [](const auto& info) { return info.param; });

TEST_F(ValidateTest, VerdictsEditedToPassStillFail) {
  const std::string a = path("A.json");
  ASSERT_EQ(check("hgx_a100_8gpu_gpu_x8", a).exit_code, 1);
  json document = json::parse(slurp(a));
  for (json& verdict : document["verdicts"]) {
    verdict["status"] = "pass";
    verdict["code"] = "link_at_expected_state";
    verdict["link"] = nullptr;
  }
  document["overall"] = "pass";
  document["summary"] = "pcieval pass: all good";
  const std::string edited = path("edited.json");
  write(edited, document.dump(2));

  const std::string b = path("B.json");
  const CliRun run = run_pcieval("validate -q " + shell_quote(edited) + " -o " + shell_quote(b));
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
  const json again = json::parse(slurp(b));
  EXPECT_EQ(again["overall"], "fail");
  EXPECT_THAT(std::string(again["summary"]), HasSubstr("0000:84:00.0 link_downgraded"));
}

TEST_F(ValidateTest, TruncatedFileIsExit2WithOneLineNamingIt) {
  const std::string a = path("A.json");
  ASSERT_EQ(check("hgx_a100_8gpu_gen4", a).exit_code, 0);
  const std::string text = slurp(a);
  const std::string cut = path("cut.json");
  write(cut, text.substr(0, text.size() / 2));
  const CliRun run = run_pcieval("validate " + shell_quote(cut));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(line_count(run.err), 1) << run.err;
  // Where it breaks off depends on the host name's length; it is in a device.
  EXPECT_THAT(run.err, HasSubstr("pcieval: error: " + cut + ": "));
  EXPECT_THAT(run.err, ContainsRegex(": (after )?/devices/[0-9]+"));
  EXPECT_THAT(run.err, HasSubstr("not valid JSON"));
  EXPECT_TRUE(run.out.empty()) << run.out;
}

TEST_F(ValidateTest, MissingFileIsExit2NamingIt) {
  const std::string missing = path("no-such-results.json");
  const CliRun run = run_pcieval("validate " + shell_quote(missing));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(line_count(run.err), 1) << run.err;
  EXPECT_THAT(run.err, HasSubstr(missing + ": No such file or directory"));
}

TEST_F(ValidateTest, OtherMajorVersionIsExit2NamingIt) {
  const std::string a = path("A.json");
  ASSERT_EQ(check("small_server_no_gpu", a).exit_code, 0);
  json document = json::parse(slurp(a));
  document["schema_version"] = "2.1.0";
  write(a, document.dump());
  const CliRun run = run_pcieval("validate " + shell_quote(a));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(line_count(run.err), 1) << run.err;
  EXPECT_THAT(run.err, HasSubstr(a + ": /schema_version: schema version 2.1.0 is not supported"));
}

TEST_F(ValidateTest, ExpectGpusAppliesToTheEvidenceOfTheFile) {
  const std::string a = path("A.json");
  ASSERT_EQ(check("hgx_a100_8gpu_gen4", a).exit_code, 0);
  EXPECT_EQ(run_pcieval("validate -q " + shell_quote(a) + " --expect-gpus 8").exit_code, 0);
  const CliRun run = run_pcieval("validate " + shell_quote(a) + " --expect-gpus 9 -o -");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(schema_errors(run.out), IsEmpty());
  EXPECT_THAT(run.out, HasSubstr("found 8 GPUs, expected 9"));
}

TEST_F(ValidateTest, NoDocumentIsAUsageError) {
  const CliRun run = run_pcieval("validate");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(line_count(run.err), 1) << run.err;
}

// --- issue 29 item 10: a copy whose data was not verified proves no bandwidth ---

// The L40S example (results_schema/examples) with its h2d_ce copy edited to
// verified: false. It used to pass as "copy bandwidth within budget"; a live
// check reports such a copy as a probe failure, and validate now agrees:
// probe_failed, inconclusive, exit 3, the reason naming the copy.
TEST_F(ValidateTest, AnUnverifiedCopyIsInconclusiveNotAPass) {
  const std::string example = std::string(PCIEVAL_SOURCE_DIR) + "/results_schema/examples/pass-1gpu-l40s-genoa.json";
  json document = json::parse(slurp(example));
  bool edited = false;
  for (json& m : document["measurements"]) {
    if (m["probe"] == "h2d_ce") {
      m["verified"] = false;
      edited = true;
    }
  }
  ASSERT_TRUE(edited);
  const std::string a = path("unverified.json");
  write(a, document.dump());
  ASSERT_EQ(run_pcieval("validate -q " + shell_quote(example)).exit_code, 0) << "the unedited example passes";

  const std::string out = path("out.json");
  const CliRun run = run_pcieval("validate -q " + shell_quote(a) + " -o " + shell_quote(out));
  EXPECT_EQ(run.exit_code, 3) << run.err;
  const json judged = json::parse(slurp(out));
  EXPECT_EQ(judged["overall"], "inconclusive");
  bool found = false;
  for (const json& v : judged["verdicts"]) {
    if (v["subject"] != "0000:01:00.0" || v["code"] != "probe_failed") continue;
    found = true;
    EXPECT_EQ(v["status"], "inconclusive");
    EXPECT_THAT(v["reason"].get<std::string>(), HasSubstr("h2d_ce"));
    EXPECT_THAT(v["reason"].get<std::string>(), HasSubstr("not verified"));
  }
  EXPECT_TRUE(found) << judged["verdicts"].dump();
  EXPECT_THAT(schema_errors(slurp(out)), IsEmpty());
}

}  // namespace
}  // namespace pcieval::testing
