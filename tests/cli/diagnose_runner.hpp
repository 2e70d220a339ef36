// Runs `pcieval diagnose` on capture fixtures the way the diagnose CLI tests
// share: the document checked against the schema, its verdicts as lines.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli_runner.hpp"
#include "report/schema_validation.hpp"

namespace pcieval::testing {

// A file of tests/fixtures/captures.
inline std::string capture(const std::string& name) {
  return (std::filesystem::path(PCIEVAL_SOURCE_DIR) / "tests" / "fixtures" / "captures" / name).string();
}

// "subject status code [downstream<->upstream]" per verdict.
inline std::vector<std::string> verdicts_of(const nlohmann::json& document) {
  std::vector<std::string> out;
  for (const nlohmann::json& v : document["verdicts"]) {
    std::string line =
        v["subject"].get<std::string>() + " " + v["status"].get<std::string>() + " " + v["code"].get<std::string>();
    if (!v["link"].is_null()) {
      line += " " + v["link"]["downstream"].get<std::string>() + "<->" + v["link"]["upstream"].get<std::string>();
    }
    out.push_back(line);
  }
  return out;
}

// The verdict of `subject` with reason `code`, or nullptr.
inline const nlohmann::json* verdict_for(const nlohmann::json& document, const std::string& subject,
                                         const std::string& code) {
  for (const nlohmann::json& v : document["verdicts"]) {
    if (v["subject"] == subject && v["code"] == code) return &v;
  }
  return nullptr;
}

class DiagnoseRunner : public ScratchDirTest {
 protected:
  // Runs `diagnose -q <files> -o out.json`, checks that it printed nothing and
  // that the document conforms to the schema, and returns it with the exit code.
  std::pair<int, nlohmann::json> diagnose(const std::vector<std::string>& files, const std::string& more = "") {
    std::string args = "diagnose -q";
    for (const auto& file : files) args += " " + shell_quote(file);
    const std::string out = path("out.json");
    const CliRun run = run_pcieval(args + " -o " + shell_quote(out) + " " + more);
    EXPECT_TRUE(run.out.empty()) << run.out;
    EXPECT_TRUE(run.err.empty()) << run.err;
    const std::string text = slurp(out);
    EXPECT_THAT(schema_errors(text), ::testing::IsEmpty());
    return {run.exit_code, nlohmann::json::parse(text, nullptr, false)};
  }
};

}  // namespace pcieval::testing
