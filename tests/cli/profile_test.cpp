// --profile on validate and compare, run on the example document of an L40S
// (Gen4 x16) node whose h2d_ce median is 26.24 GB/s, about 90 % of its budget:
// the same evidence passes, warns or fails as the thresholds say, the
// thresholds used are written into the document, and a bad profile is exit 2
// naming the field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"
#include "report/schema_validation.hpp"

namespace pcieval::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class ProfileTest : public ScratchDirTest {
 protected:
  static std::string example() { return shell_quote((results_examples_dir() / "pass-1gpu-l40s-genoa.json").string()); }
  std::string profile(const std::string& name, const std::string& text) {
    const std::string file = path(name);
    write(file, text);
    return shell_quote(file);
  }
  static std::vector<std::string> codes_of(const json& document, const std::string& subject) {
    std::vector<std::string> codes;
    for (const json& v : document["verdicts"]) {
      if (v["subject"] == subject) codes.push_back(v["code"]);
    }
    return codes;
  }
};

TEST_F(ProfileTest, TheSameEvidencePassesWarnsOrFailsAsTheProfileSays) {
  const std::string out = path("out.json");
  const CliRun by_default = run_pcieval("validate -q " + example() + " -o " + shell_quote(out));
  EXPECT_EQ(by_default.exit_code, 0) << by_default.err;
  EXPECT_THAT(codes_of(json::parse(slurp(out)), "0000:01:00.0"), ::testing::Contains("bandwidth_at_budget"));

  const std::string warn = profile("warn.json", R"({"name": "warn", "defaults": {"warn_fraction": 0.95}})");
  const CliRun warned = run_pcieval("validate -q " + example() + " --profile " + warn + " -o " + shell_quote(out));
  EXPECT_EQ(warned.exit_code, 0) << warned.err;
  EXPECT_THAT(codes_of(json::parse(slurp(out)), "0000:01:00.0"), ::testing::Contains("bandwidth_in_warning_band"));

  const std::string strict =
      profile("strict.json", R"({"name": "strict", "defaults": {"floor_fraction": 0.95, "warn_fraction": 0.97}})");
  const CliRun failed = run_pcieval("validate -q " + example() + " --profile " + strict + " -o " + shell_quote(out));
  EXPECT_EQ(failed.exit_code, 1) << failed.err;
  const json document = json::parse(slurp(out));
  EXPECT_THAT(codes_of(document, "0000:01:00.0"), ::testing::Contains("bandwidth_below_budget"));
  EXPECT_EQ(document["thresholds"]["name"], "strict");
  EXPECT_EQ(document["thresholds"]["source"], path("strict.json"));
  EXPECT_EQ(document["thresholds"]["defaults"]["floor_fraction"], 0.95);
  EXPECT_THAT(schema_errors(slurp(out)), IsEmpty());

  // Without --profile, validate keeps the thresholds the document carries.
  const std::string again = path("again.json");
  const CliRun rejudged = run_pcieval("validate -q " + shell_quote(out) + " -o " + shell_quote(again));
  EXPECT_EQ(rejudged.exit_code, 1) << rejudged.err;
  EXPECT_EQ(json::parse(slurp(again))["thresholds"]["name"], "strict");
}

TEST_F(ProfileTest, AnOverrideAppliesOnlyToTheGpuItMatches) {
  const std::string out = path("out.json");
  const std::string other =
      profile("other.json",
              R"({"overrides": [{"match": {"device_id": "2330"}, "floor_fraction": 0.99, "warn_fraction": 0.99}]})");
  EXPECT_EQ(run_pcieval("validate -q " + example() + " --profile " + other + " -o " + shell_quote(out)).exit_code, 0);
  const std::string l40s =
      profile("l40s.json",
              R"({"overrides": [{"match": {"device_id": "26b9"}, "floor_fraction": 0.99, "warn_fraction": 0.99}]})");
  EXPECT_EQ(run_pcieval("validate -q " + example() + " --profile " + l40s + " -o " + shell_quote(out)).exit_code, 1);
}

TEST_F(ProfileTest, ABadProfileIsExit2NamingTheFieldAndWritesNothing) {
  const std::string out = path("out.json");
  const std::string typo = profile("typo.json", R"({"defaults": {"floor_fration": 0.9}})");
  const CliRun typed = run_pcieval("validate -q " + example() + " --profile " + typo + " -o " + shell_quote(out));
  EXPECT_EQ(typed.exit_code, 2);
  EXPECT_THAT(typed.err, HasSubstr("--profile"));
  EXPECT_THAT(typed.err, HasSubstr("unknown field 'floor_fration'"));
  EXPECT_FALSE(std::filesystem::exists(out));

  const std::string range = profile("range.json", R"({"defaults": {"floor_fraction": 1.5}})");
  const CliRun ranged = run_pcieval("validate -q " + example() + " --profile " + range);
  EXPECT_EQ(ranged.exit_code, 2);
  EXPECT_THAT(ranged.err, HasSubstr("floor_fraction 1.5 is not in (0, 1]"));

  const CliRun missing = run_pcieval("check -q --no-probes --profile " + shell_quote(path("none.json")));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("none.json"));
}

TEST_F(ProfileTest, CompareJudgesBothDocumentsWithOneProfile) {
  const std::string strict =
      profile("strict.json", R"({"name": "strict", "defaults": {"floor_fraction": 0.95, "warn_fraction": 0.97}})");
  const CliRun same = run_pcieval("compare " + example() + " " + example());
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  const CliRun strictly = run_pcieval("compare " + example() + " " + example() + " --profile " + strict);
  EXPECT_EQ(strictly.exit_code, 1) << strictly.out << strictly.err;
  EXPECT_THAT(strictly.out, HasSubstr("bandwidth_low"));
}

}  // namespace
}  // namespace pcieval::testing
