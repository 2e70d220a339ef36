// --profile on validate and compare, run on the example document of an L40S
// (Gen4 x16) node whose h2d_ce median is 26.24 GB/s, about 90 % of its budget:
// the same evidence passes, warns or fails as the thresholds say, the
// thresholds used are written into the document, and a bad profile is exit 2
// naming the field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

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

// Issue 29: `"floor_fraction":0.8,"floor_fraction":0.01` was read as 0.01 and
// the L40S example (about 90 % of its budget) passed a floor it should fail.
// Now: exit 2 on validate, check and compare, naming the file and the key,
// and nothing written.
TEST_F(ProfileTest, AKeyGivenTwiceIsExit2NamingTheKeyAndTheFile) {
  const std::string out = path("out.json");
  const std::string twice = profile("twice.json", R"({"defaults": {"floor_fraction": 0.95, "warn_fraction": 0.97,
                                                                  "floor_fraction": 0.01}})");
  const CliRun validated = run_pcieval("validate -q " + example() + " --profile " + twice + " -o " + shell_quote(out));
  EXPECT_EQ(validated.exit_code, 2) << validated.err;
  EXPECT_THAT(validated.err, HasSubstr(path("twice.json")));
  EXPECT_THAT(validated.err, HasSubstr("/defaults/floor_fraction: duplicate key 'floor_fraction'"));
  EXPECT_EQ(line_count(validated.err), 1) << validated.err;
  EXPECT_FALSE(std::filesystem::exists(out));

  const CliRun checked =
      run_pcieval("check -q --no-probes " + fixture_args("hgx_a100_8gpu_gen4") + " --profile " + twice);
  EXPECT_EQ(checked.exit_code, 2) << checked.err;
  EXPECT_THAT(checked.err, HasSubstr("duplicate key 'floor_fraction'"));
  const CliRun compared = run_pcieval("compare " + example() + " " + example() + " --profile " + twice);
  EXPECT_EQ(compared.exit_code, 2) << compared.err;
  EXPECT_THAT(compared.err, HasSubstr("duplicate key 'floor_fraction'"));
}

// A per_probe entry for a probe that does not exist ("h2d_cee") matched no
// measurement, so the 0.99 floor it meant never applied and validate passed.
TEST_F(ProfileTest, APerProbeEntryForNoProbeIsExit2NamingTheKeyAndTheFile) {
  const std::string out = path("out.json");
  const std::string typo =
      profile("typo.json", R"({"defaults": {"per_probe": [{"probe": "h2d_cee", "floor_fraction": 0.99}]}})");
  const CliRun typed = run_pcieval("validate -q " + example() + " --profile " + typo + " -o " + shell_quote(out));
  EXPECT_EQ(typed.exit_code, 2) << typed.err;
  EXPECT_THAT(typed.err, HasSubstr(path("typo.json")));
  EXPECT_THAT(typed.err, HasSubstr("/defaults/per_probe/0/probe: unknown probe 'h2d_cee'"));
  EXPECT_EQ(line_count(typed.err), 1) << typed.err;
  EXPECT_FALSE(std::filesystem::exists(out));

  // Spelt right, the same entry fails the example: the floor is applied.
  const std::string right =
      profile("right.json", R"({"defaults": {"per_probe": [{"probe": "h2d_ce", "floor_fraction": 0.99}]}})");
  const CliRun judged = run_pcieval("validate -q " + example() + " --profile " + right + " -o " + shell_quote(out));
  EXPECT_EQ(judged.exit_code, 1) << judged.err;
  EXPECT_THAT(codes_of(json::parse(slurp(out)), "0000:01:00.0"), ::testing::Contains("bandwidth_below_budget"));

  // Every key --list-probes prints is one a profile may name.
  const CliRun listed = run_pcieval("check --list-probes");
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  std::istringstream lines(listed.out);
  int keys = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == ' ') continue;
    const std::string key = line.substr(0, line.find(' '));
    const std::string each =
        profile("each.json", R"({"defaults": {"per_probe": [{"probe": ")" + key + R"(", "floor_fraction": 0.5}]}})");
    const CliRun accepted = run_pcieval("validate -q " + example() + " --profile " + each);
    EXPECT_NE(accepted.exit_code, 2) << key << ": " << accepted.err;
    ++keys;
  }
  EXPECT_GE(keys, 10);
}

}  // namespace
}  // namespace pcieval::testing
