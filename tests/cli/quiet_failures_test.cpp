// Failures pcieval used to pass over in silence (issue 18): a --history folder
// created from a typo, a table lost to a full stdout with exit 0, documents
// of two hosts compared without a word, and the wrong kind of pcieval
// document given to validate or diagnose. Each now says so, with the exit
// code DESIGN.md documents. (history --gpu of a GPU no run measured:
// history_cli_test.cpp.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"

namespace pcieval::testing {
namespace {

using nlohmann::json;
using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// results_schema/examples: two hosts, both with measurements.
std::string example(const std::string& name) {
  return std::string(PCIEVAL_SOURCE_DIR) + "/results_schema/examples/" + name + ".json";
}
const std::string kH100 = example("fail-downgraded-h100-spr");  // host hgx-b07, fail
const std::string kL40s = example("pass-1gpu-l40s-genoa");      // host gpu-ws-017, pass, GPU 0000:01:00.0
const std::string kFleet = example("fleet-hgx-a100");

class QuietFailures : public ScratchDirTest {
 protected:
  // `args` with stdout sent to /dev/full, stderr caught.
  [[nodiscard]] CliRun run_to_full_stdout(const std::string& args) const {
    const std::string inner = std::string(PCIEVAL_BINARY) + " " + args + " >/dev/full";
    return run_shell("sh -c " + shell_quote(inner), dir_);
  }
  // A copy of `source` whose host is `hostname`.
  [[nodiscard]] std::string with_host(const std::string& source, const std::string& hostname,
                                      const std::string& name) const {
    json document = json::parse(slurp(source));
    document["host"]["hostname"] = hostname;
    write(path(name), document.dump(2));
    return path(name);
  }
};

TEST_F(QuietFailures, HistoryInAMissingFolderIsExit2BeforeAnythingIsMeasured) {
  const std::string db = path("no-such-dir/h.db");
  // Not quiet: a run that went on would print progress and the table.
  const CliRun run = run_pcieval("check --rounds 2 --history " + shell_quote(db));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "pcieval: error: --history: cannot write " + db + ": directory " + path("no-such-dir") +
                         " does not exist (pcieval creates only the default history folder)\n");
  EXPECT_TRUE(run.out.empty()) << run.out;
  EXPECT_FALSE(std::filesystem::exists(path("no-such-dir")));
  // The same for validate and diagnose, and for every other output file.
  const CliRun validated = run_pcieval("validate -q " + shell_quote(kL40s) + " --history=" + shell_quote(db));
  EXPECT_EQ(validated.exit_code, 2);
  EXPECT_THAT(validated.err, HasSubstr("--history: cannot write"));
  EXPECT_FALSE(std::filesystem::exists(path("no-such-dir")));
  for (const char* flag : {"-o", "--prom", "--junit", "--html"}) {
    const CliRun checked = run_pcieval("check --rounds 2 " + std::string(flag) + " " + shell_quote(db));
    EXPECT_EQ(checked.exit_code, 2) << flag;
    EXPECT_EQ(checked.err, "pcieval: error: " + std::string(flag) + ": cannot write " + db + ": directory " +
                               path("no-such-dir") + " does not exist\n");
    EXPECT_TRUE(checked.out.empty()) << flag << ": " << checked.out;
  }
  const CliRun diagnosed = run_pcieval("diagnose -q " + shell_quote(kL40s) + " -o " + shell_quote(db));
  EXPECT_EQ(diagnosed.exit_code, 2);
  EXPECT_THAT(diagnosed.err, HasSubstr("-o: cannot write"));
}

TEST_F(QuietFailures, HistoryInAFolderThatExistsIsCreated) {
  const CliRun run =
      run_pcieval("check " + fixture_args("small_server_no_gpu") + " -q --history " + shell_quote(path("h.db")));
  EXPECT_NE(run.exit_code, 2) << run.err;
  EXPECT_TRUE(std::filesystem::exists(path("h.db")));
}

TEST_F(QuietFailures, AFullStdoutIsExit2AndTheFilesAreStillWritten) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this machine";
  // A failing node stays 1 (1 > 2, issue 29): 2 would keep a Slurm health
  // check from draining it. The lost table is said on stderr.
  const CliRun run = run_to_full_stdout("check " + fixture_args("hgx_a100_8gpu_gpu_x8") + " -o " +
                                        shell_quote(path("r.json")) + " --prom " + shell_quote(path("r.prom")));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, StartsWith("pcieval: error: could not write to standard output"));
  EXPECT_EQ(line_count(run.err), 1) << run.err;
  EXPECT_EQ(json::parse(slurp(path("r.json")))["overall"], "fail");
  EXPECT_THAT(slurp(path("r.prom")), HasSubstr("pcieval_"));
  // Nothing for stdout, nothing lost: the outcome's own code.
  EXPECT_EQ(run_to_full_stdout("check " + fixture_args("hgx_a100_8gpu_gpu_x8") + " -q").exit_code, 1);
  // A node that did not fail: 2, the table was lost.
  EXPECT_EQ(run_to_full_stdout("check " + fixture_args("hgx_a100_8gpu_gen4")).exit_code, 2);
  // Every command that prints.
  for (const std::string& args :
       {"validate " + shell_quote(kL40s), "report " + shell_quote(kL40s),
        "compare " + shell_quote(kL40s) + " " + shell_quote(kL40s), "topo " + fixture_args("small_server_no_gpu"),
        std::string("check --list-probes"), "validate -q " + shell_quote(kL40s) + " -o -", std::string("--help"),
        std::string("check --help")}) {
    const CliRun printed = run_to_full_stdout(args);
    EXPECT_EQ(printed.exit_code, 2) << args;
    // -o - says it in the writer's words ("cannot write stdout: ...").
    EXPECT_THAT(printed.err, AnyOf(HasSubstr("could not write to standard output"), HasSubstr("cannot write stdout")))
        << args;
    EXPECT_EQ(line_count(printed.err), 1) << args << ": " << printed.err;
  }
}

TEST_F(QuietFailures, CompareOfTwoHostsSaysSoAndKeepsItsExitCode) {
  const std::string other = with_host(kL40s, "gpu-ws-099", "other.json");
  const CliRun same = run_pcieval("compare " + shell_quote(kL40s) + " " + shell_quote(kL40s));
  const CliRun two = run_pcieval("compare " + shell_quote(other) + " " + shell_quote(kL40s));
  EXPECT_THAT(same.out, Not(HasSubstr("two machines")));
  EXPECT_THAT(two.out, StartsWith("compare: BEFORE is of host 'gpu-ws-099', AFTER of host 'gpu-ws-017': two "
                                  "machines, compared by PCI address, not one node before and after a fix\n"));
  EXPECT_EQ(two.exit_code, same.exit_code);
  EXPECT_EQ(two.exit_code, 0);
  // A failing AFTER still fails.
  EXPECT_EQ(run_pcieval("compare " + shell_quote(kL40s) + " " + shell_quote(kH100)).exit_code, 1);
}

TEST_F(QuietFailures, ABaselineFromAnotherHostIsNamedInTheOutputAndTheDocument) {
  const std::string other = with_host(kL40s, "gpu-ws-099", "baseline.json");
  const std::string expected = "--baseline " + other +
                               " was measured on host 'gpu-ws-099', this run is of host 'gpu-ws-017': medians are "
                               "compared by PCI address across two machines";
  const CliRun same = run_pcieval("validate " + shell_quote(kL40s) + " --baseline " + shell_quote(kL40s));
  const CliRun table = run_pcieval("validate " + shell_quote(kL40s) + " --baseline " + shell_quote(other) + " -o " +
                                   shell_quote(path("judged.json")));
  EXPECT_THAT(same.out, Not(HasSubstr("two machines")));
  EXPECT_THAT(table.out, HasSubstr("note: " + expected + "\n"));
  EXPECT_EQ(table.exit_code, same.exit_code);
  EXPECT_TRUE(table.err.empty()) << table.err;
  const json judged = json::parse(slurp(path("judged.json")));
  EXPECT_THAT(judged["notes"].dump(), HasSubstr("was measured on host 'gpu-ws-099'"));
  // Without the table, stderr says it.
  const CliRun quiet = run_pcieval("validate -q " + shell_quote(kL40s) + " --baseline " + shell_quote(other));
  EXPECT_EQ(quiet.err, "pcieval: warning: " + expected + "\n");
  EXPECT_EQ(quiet.exit_code, same.exit_code);
}

TEST_F(QuietFailures, AFleetDocumentIsRecognisedWhereOneNodesResultsAreExpected) {
  const std::string says =
      kFleet + " is a fleet document (pcieval fleet merge, --fleet-output), not one node's results";
  for (const std::string& args : {"validate " + shell_quote(kFleet), "report " + shell_quote(kFleet),
                                  "compare " + shell_quote(kL40s) + " " + shell_quote(kFleet),
                                  "validate " + shell_quote(kL40s) + " --baseline " + shell_quote(kFleet)}) {
    const CliRun run = run_pcieval(args);
    EXPECT_EQ(run.exit_code, 2) << args;
    EXPECT_THAT(run.err, AllOf(HasSubstr(says), HasSubstr("run 'pcieval fleet merge' on the nodes' results documents")))
        << args;
    EXPECT_THAT(run.err, Not(HasSubstr("/host: missing"))) << args;
    EXPECT_EQ(line_count(run.err), 1) << run.err;
  }
  // From stdin too.
  const std::string inner = std::string(PCIEVAL_BINARY) + " validate - <" + shell_quote(kFleet);
  const CliRun piped = run_shell("sh -c " + shell_quote(inner), dir_);
  EXPECT_EQ(piped.exit_code, 2);
  EXPECT_THAT(piped.err, StartsWith("pcieval: error: stdin is a fleet document"));
}

TEST_F(QuietFailures, DiagnoseOfAResultsDocumentPointsToValidate) {
  const CliRun run = run_pcieval("diagnose " + shell_quote(kH100));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "pcieval: error: " + kH100 + " is a pcieval results document, not captured text: judge it again " +
                         "with 'pcieval validate " + kH100 + "'\n");
  const CliRun fleet = run_pcieval("diagnose " + shell_quote(kFleet));
  EXPECT_EQ(fleet.exit_code, 2);
  EXPECT_THAT(fleet.err, HasSubstr("is a pcieval fleet document, not captured text"));
  // Other JSON is still "not a recognised capture".
  write(path("other.json"), "{\"hello\": 1}\n");
  EXPECT_THAT(run_pcieval("diagnose " + shell_quote(path("other.json"))).err, HasSubstr("not a recognised capture"));
}

}  // namespace
}  // namespace pcieval::testing
