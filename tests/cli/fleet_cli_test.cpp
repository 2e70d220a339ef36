// `pcieval fleet merge` run as an operator would: on results documents that
// `pcieval check` wrote for fixture machines, on the schema's example
// documents, and on malformed and duplicate inputs.
#include <gmock/gmock.h>
#include <sys/stat.h>
#include <utime.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_runner.hpp"
#include "report/schema_validation.hpp"

namespace pcieval::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::filesystem::path fleet_schema() {
  return std::filesystem::path(PCIEVAL_SOURCE_DIR) / "results_schema" / "pcieval-fleet.schema.json";
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

class FleetMergeCli : public ScratchDirTest {
 protected:
  // The document `pcieval check` writes for a fixture machine (no probes run).
  nlohmann::json checked(const std::string& machine) {
    const auto out = dir() / (machine + ".base.json");
    const CliRun run = run_pcieval("check " + fixture_args(machine) + " -q -o " + shell_quote(out));
    EXPECT_NE(run.exit_code, 2) << run.err;
    return nlohmann::json::parse(slurp(out));
  }

  // TEST DATA: `base` as node `host` with an h2d_ce and a d2h_ce median per
  // GPU (5 trials within +-0.02), A100 Gen4 rates as PCIE-FACTS.md cites
  // them unless `medians` says otherwise.
  std::filesystem::path node(nlohmann::json doc, const std::string& host, std::vector<double> medians = {}) {
    doc["host"]["hostname"] = host;
    doc["probe_settings"] = {{"mode", "quick"}, {"size_bytes", 268435456}, {"warmup_trials", 1}, {"trials", 5}};
    doc["measurements"] = nlohmann::json::array();
    std::size_t i = 0;
    for (const auto& device : doc["devices"]) {
      if (device["kind"] != "gpu") continue;
      const double median = i < medians.size() ? medians[i] : 25.7 + 0.03 * static_cast<double>(i % 3);
      ++i;
      for (const char* direction : {"h2d", "d2h"}) {
        doc["measurements"].push_back(
            {{"probe", std::string(direction) + "_ce"},
             {"subject", device["bdf"]},
             {"gpus", {device["bdf"]}},
             {"direction", direction},
             {"method", "ce"},
             {"host_memory", "pinned"},
             {"aggregation", "alone"},
             {"size_bytes", 268435456},
             {"bytes_per_trial", 268435456},
             {"trials_gbps", {median - 0.02, median - 0.01, median, median + 0.01, median + 0.02}},
             {"median_gbps", median},
             {"min_gbps", median - 0.02},
             {"max_gbps", median + 0.02},
             {"cv", 0.0006},
             {"host_numa_node", 0},
             {"host_numa_local", true},
             {"verified", true}});
      }
    }
    const auto path = dir() / (host + ".json");
    write_text(path, doc.dump(2));
    return path;
  }

  std::string files(const std::vector<std::filesystem::path>& paths) {
    std::string text;
    for (const auto& p : paths) text += " " + shell_quote(p.string());
    return text;
  }

  const std::filesystem::path& dir() const { return dir_; }
};

TEST_F(FleetMergeCli, FixtureNodesWithASlowGpu) {
  const nlohmann::json good = checked("hgx_a100_8gpu_gen4");
  const nlohmann::json x8 = checked("hgx_a100_8gpu_gpu_x8");
  std::vector<double> slow(8, 25.7);
  slow[6] = 21.3;  // clears an A100's usual 21 GB/s acceptance floor
  const auto fleet_path = dir() / "fleet.json";
  const CliRun run =
      run_pcieval("fleet merge" +
                  files({node(good, "hgx-01"), node(good, "hgx-02", slow), node(x8, "hgx-03"), node(good, "hgx-04")}) +
                  " -o " + shell_quote(fleet_path));
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;  // hgx-03 fails: one GPU trained at x8
  EXPECT_THAT(
      run.out,
      HasSubstr("hgx-01  pass     0     14 devices at expected link state, path settings of 8 GPUs as expected\n"));
  EXPECT_THAT(run.out, HasSubstr("hgx-03  fail     1     0000:84:00.0 link_downgraded"));
  EXPECT_THAT(run.out, HasSubstr("hgx-02  0000:a3:00.0  10de:20b0  Gen4 x16  h2d_ce  21.30        25.70"));
  EXPECT_THAT(run.out, HasSubstr("pcieval fleet fail: 4 nodes, 3 pass, 1 fail (hgx-03); 2 outlier GPUs"));
  EXPECT_TRUE(run.err.empty()) << run.err;
  const std::string document = slurp(fleet_path);
  EXPECT_THAT(schema_errors(document, fleet_schema()), IsEmpty());
  const auto fleet = nlohmann::json::parse(document);
  EXPECT_EQ(fleet["exit_code"], 1);
  EXPECT_EQ(fleet["launch"], "merge");
  EXPECT_EQ(fleet["nodes"].size(), 4u);
  EXPECT_EQ(fleet["outliers"].size(), 2u);
  EXPECT_EQ(fleet["outliers"][0]["host"], "hgx-02");
}

TEST_F(FleetMergeCli, TheSchemaExamplesMerge) {
  const auto examples = results_examples_dir();
  const CliRun run = run_pcieval(
      "fleet merge" + files({examples / "pass-1gpu-l40s-genoa.json", examples / "fail-downgraded-h100-spr.json",
                             examples / "pass-no-gpu-epyc-storage.json"}));
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.out, HasSubstr("hgx-b07"));
  EXPECT_THAT(run.out, HasSubstr("fail     1     0000:17:00.0 link_downgraded"));
  // One GPU of each model: nothing to compare, and the table says so.
  EXPECT_THAT(run.out, HasSubstr("not judged for outliers:"));
  EXPECT_THAT(run.out, HasSubstr("pcieval fleet fail: 3 nodes, 2 pass, 1 fail (hgx-b07)"));
}

TEST_F(FleetMergeCli, MalformedFilesAreReportedOneLineEachAndTheMergeGoesOn) {
  const nlohmann::json good = checked("hgx_a100_8gpu_gen4");
  const auto ok = node(good, "hgx-01");
  const auto truncated = dir() / "truncated.json";
  const std::string text = slurp(node(good, "hgx-02"));
  write_text(truncated, text.substr(0, text.size() / 3));
  const auto not_json = dir() / "notes.txt";
  write_text(not_json, "node hgx-05 was rebooted\n");
  const auto fleet_doc =
      std::filesystem::path(PCIEVAL_SOURCE_DIR) / "results_schema" / "examples" / "fleet-hgx-a100.json";
  const auto missing = dir() / "missing.json";
  const CliRun run = run_pcieval("fleet merge" + files({ok, truncated, not_json, fleet_doc, missing}) + " -o " +
                                 shell_quote(dir() / "fleet.json"));
  // Nothing failed, four inputs could not be read: 2.
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("hgx-01"));
  int problems = 0;
  for (std::size_t at = run.out.find("problem: "); at != std::string::npos; at = run.out.find("problem: ", at + 1)) {
    ++problems;
  }
  EXPECT_EQ(problems, 4);
  EXPECT_THAT(run.out, HasSubstr("problem: " + truncated.string() + ": "));
  EXPECT_THAT(run.out, HasSubstr("problem: cannot open " + missing.string()));
  EXPECT_THAT(run.out, HasSubstr("pcieval fleet inconclusive: 5 nodes, 1 pass, 4 inconclusive"));
  const auto fleet = nlohmann::json::parse(slurp(dir() / "fleet.json"));
  EXPECT_EQ(fleet["exit_code"], 2);
  EXPECT_EQ(fleet["problems"].size(), 4u);
  int readable = 0;
  for (const auto& node : fleet["nodes"]) {
    if (node["has_results"] == true) {
      ++readable;
      EXPECT_EQ(node["host"], "hgx-01");
    } else {
      EXPECT_EQ(node["exit_code"], 2);
      EXPECT_EQ(node["overall"], "inconclusive");
    }
  }
  EXPECT_EQ(readable, 1);
}

TEST_F(FleetMergeCli, QuietPrintsNothingButProblemsOnStderr) {
  const auto ok = node(checked("hgx_a100_8gpu_gen4"), "hgx-01");
  const CliRun run = run_pcieval("fleet merge -q" + files({ok, dir() / "missing.json"}));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(run.out.empty()) << run.out;
  EXPECT_THAT(run.err, HasSubstr("pcieval: cannot open " + (dir() / "missing.json").string()));
  const CliRun pass = run_pcieval("fleet merge -q" + files({ok}));
  EXPECT_EQ(pass.exit_code, 0) << pass.err;
  EXPECT_TRUE(pass.out.empty() && pass.err.empty());
}

TEST_F(FleetMergeCli, DuplicateHostsKeepTheLaterDocument) {
  const nlohmann::json good = checked("hgx_a100_8gpu_gen4");
  const nlohmann::json x8 = checked("hgx_a100_8gpu_gpu_x8");
  // The same host checked twice: before a reseat (failing) and after (passing).
  const auto before = node(x8, "hgx-07");
  const auto before_copy = dir() / "hgx-07-before.json";
  std::filesystem::rename(before, before_copy);
  const auto after = node(good, "hgx-07");
  struct utimbuf older {
    1700000000, 1700000000
  };
  struct utimbuf newer {
    1700003600, 1700003600
  };
  ASSERT_EQ(::utime(before_copy.c_str(), &older), 0);
  ASSERT_EQ(::utime(after.c_str(), &newer), 0);
  // The later document wins whatever the order on the command line; the
  // failing one it replaced is named in the table and the document, and
  // fails the fleet: a burn-in gate must not pass on a failure that a later
  // run merely covered (docs/fleet.md).
  for (const std::string& order : {files({before_copy, after}), files({after, before_copy})}) {
    const auto fleet_path = dir() / "fleet.json";
    const CliRun run = run_pcieval("fleet merge" + order + " -o " + shell_quote(fleet_path));
    EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
    EXPECT_THAT(run.out, HasSubstr("problem: duplicate host hgx-07: " + before_copy.string() + " and " +
                                   after.string() + "; kept " + after.string() + " (written later); superseded " +
                                   before_copy.string() + " failed ("));
    EXPECT_THAT(run.out, HasSubstr("(superseded " + before_copy.string() + " failed)"));
    EXPECT_THAT(run.out, HasSubstr("pcieval fleet fail: 1 node, 1 pass; 1 host with a failing document superseded "
                                   "by a newer one (hgx-07)"));
    const auto fleet = nlohmann::json::parse(slurp(fleet_path));
    EXPECT_EQ(fleet["exit_code"], 1);
    ASSERT_EQ(fleet["nodes"].size(), 1u);
    EXPECT_EQ(fleet["nodes"][0]["overall"], "pass");
    ASSERT_EQ(fleet["nodes"][0]["superseded"].size(), 1u);
    EXPECT_EQ(fleet["nodes"][0]["superseded"][0]["source"], before_copy.string());
    EXPECT_EQ(fleet["nodes"][0]["superseded"][0]["overall"], "fail");
    EXPECT_FALSE(fleet["nodes"][0]["superseded"][0]["verdicts"].empty());
  }
  // Once the fix is verified, the operator leaves the old document out.
  const CliRun fixed = run_pcieval("fleet merge" + files({after}));
  EXPECT_EQ(fixed.exit_code, 0) << fixed.out << fixed.err;
}

TEST_F(FleetMergeCli, UsageErrors) {
  for (const std::string& args : {"fleet merge", "fleet", "fleet merge --bogus x.json"}) {
    const CliRun run = run_pcieval(args);
    EXPECT_EQ(run.exit_code, 2) << args;
    EXPECT_THAT(run.err, HasSubstr("pcieval: error: ")) << args;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
  // An unwritable -o: the table still prints, and the exit is 2.
  const auto ok = node(checked("hgx_a100_8gpu_gen4"), "hgx-01");
  const CliRun run = run_pcieval("fleet merge" + files({ok}) + " -o " + shell_quote(dir() / "no" / "such" / "f.json"));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.out, HasSubstr("hgx-01"));
  EXPECT_THAT(run.err, HasSubstr("pcieval: error: "));
}

TEST_F(FleetMergeCli, HtmlWritesTheFleetPage) {
  const nlohmann::json good = checked("hgx_a100_8gpu_gen4");
  const nlohmann::json x8 = checked("hgx_a100_8gpu_gpu_x8");
  std::vector<double> slow(8, 25.7);
  slow[6] = 21.3;
  const auto page = dir() / "fleet.html";
  const auto fleet_path = dir() / "fleet.json";
  // A hostname with markup (no slash: it names the node's file too).
  const CliRun run = run_pcieval(
      "fleet merge" +
      files({node(good, "hgx-01"), node(good, "hgx-02", slow), node(x8, "hgx-03"), node(good, "<b>hgx-04")}) +
      " -q -o " + shell_quote(fleet_path) + " --html " + shell_quote(page));
  EXPECT_EQ(run.exit_code, 1) << run.err;  // the page changes nothing about the exit code
  EXPECT_TRUE(run.out.empty()) << run.out;
  EXPECT_TRUE(std::filesystem::exists(fleet_path));
  const std::string html = slurp(page);
  ASSERT_THAT(html, HasSubstr("<!DOCTYPE html>"));
  EXPECT_THAT(html, HasSubstr("<div class=\"result-word\">FAIL</div>"));
  EXPECT_THAT(html, HasSubstr("<b>4 nodes</b>: 3 pass, 1 fail, 0 inconclusive"));
  EXPECT_THAT(html, HasSubstr("<td class=\"mono\">hgx-03</td><td><span class=\"status fail\">fail</span>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"mono\">0000:a3:00.0</td><td class=\"mono\">hgx-02</td>"));
  EXPECT_THAT(html, HasSubstr("<svg class=\"strip\""));
  EXPECT_THAT(html, HasSubstr("<td class=\"mono\">&lt;b&gt;hgx-04</td>"));
  EXPECT_THAT(html, Not(HasSubstr("<b>hgx-04")));
  // Written atomically: no fleet.html.tmp.* left beside it.
  std::size_t entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir())) {
    entries += entry.path().filename().string().starts_with("fleet.html") ? 1 : 0;
  }
  EXPECT_EQ(entries, 1u);

  // An unwritable --html: the document is still written, and the exit is 2.
  const auto other = dir() / "fleet2.json";
  const CliRun bad = run_pcieval("fleet merge" + files({node(good, "hgx-01")}) + " -q -o " + shell_quote(other) +
                                 " --html " + shell_quote(dir() / "no" / "such" / "f.html"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("pcieval: error: "));
  EXPECT_TRUE(std::filesystem::exists(other));
}

TEST_F(FleetMergeCli, FleetFlagsOfCheckNeedAnMpiLaunch) {
  const CliRun run =
      run_pcieval("check " + fixture_args("small_server_no_gpu") + " --fleet-output " + shell_quote(dir() / "f.json"));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("pcieval: error: "));
  EXPECT_THAT(run.err, HasSubstr("fleet merge"));
  EXPECT_FALSE(std::filesystem::exists(dir() / "f.json"));
  const CliRun no_allreduce = run_pcieval("check " + fixture_args("small_server_no_gpu") + " --no-fleet-allreduce");
  EXPECT_EQ(no_allreduce.exit_code, 2);
  EXPECT_THAT(no_allreduce.err, HasSubstr("--no-fleet-allreduce need an MPI launch"));
  // Without the flags, check is the check it always was.
  const CliRun plain = run_pcieval("check " + fixture_args("small_server_no_gpu") + " -q");
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
}

}  // namespace
}  // namespace pcieval::testing
