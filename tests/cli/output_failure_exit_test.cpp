// An output that cannot be written never hides a failing verdict (issue 29,
// items 3 and 4): a full disk for -o, --prom or --history, or a reader of
// stdout that went away, on a node with a downgraded link is still exit 1,
// so the Slurm health check drains it; the failure is one line on stderr
// naming the output and a note in the results document. On a node that did
// not fail it is exit 2 (1 > 2 > 3). Every output is attempted whatever
// failed before it, and SIGPIPE kills nothing before the files are written.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"

namespace pcieval::testing {
namespace {

using nlohmann::json;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// hgx_a100_8gpu_gpu_x8: an HGX A100 8-GPU server whose GPU 0000:84:00.0
// trained at x8 (fails); hgx_a100_8gpu_gen4: the same server healthy
// (passes); esc8000a_e12_idle_gen1: an ASUS ESC8000A-E12 whose idle GPUs read
// Gen1 (inconclusive without load).
const std::string kDowngradedHgx = "hgx_a100_8gpu_gpu_x8";
const std::string kHealthyHgx = "hgx_a100_8gpu_gen4";
const std::string kIdleEsc = "esc8000a_e12_idle_gen1";

class OutputFailureExit : public ScratchDirTest {
 protected:
  static CliRun check(const std::string& machine, const std::string& flags) {
    return run_pcieval("check -q " + fixture_args(machine) + " " + flags);
  }
  // `pcieval args` with stdout a pipe whose read end is already closed (a
  // `| head -1` that has exited), stderr caught.
  [[nodiscard]] CliRun run_into_closed_pipe(const std::string& args) const {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    ::close(fds[0]);
    const std::string err_path = path("closed-pipe.err");
    const std::string command = std::string(PCIEVAL_BINARY) + " " + args;
    const pid_t pid = ::fork();
    if (pid == 0) {
      // As a shell leaves it for its pipeline: SIGPIPE's default action.
      std::signal(SIGPIPE, SIG_DFL);
      const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int null = ::open("/dev/null", O_RDONLY);
      if (err < 0 || null < 0 || ::dup2(fds[1], STDOUT_FILENO) < 0 || ::dup2(err, STDERR_FILENO) < 0 ||
          ::dup2(null, STDIN_FILENO) < 0) {
        ::_exit(126);
      }
      ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(fds[1]);
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    CliRun run;
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    run.err = slurp(err_path);
    return run;
  }
};

TEST_F(OutputFailureExit, AFullDiskOnAFailingNodeIsExit1WithTheFailureNamed) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this machine";
  // The results document itself cannot be written.
  const CliRun lost = check(kDowngradedHgx, "-o /dev/full");
  EXPECT_EQ(lost.exit_code, 1) << lost.err;
  EXPECT_EQ(lost.err, "pcieval: error: -o: cannot write /dev/full: No space left on device\n");

  // The metrics cannot: the document is still written, and says so.
  const CliRun metrics = check(kDowngradedHgx, "-o " + shell_quote(path("r.json")) + " --prom /dev/full");
  EXPECT_EQ(metrics.exit_code, 1) << metrics.err;
  EXPECT_EQ(metrics.err, "pcieval: error: --prom: cannot write /dev/full: No space left on device\n");
  const json document = json::parse(slurp(path("r.json")));
  EXPECT_EQ(document["overall"], "fail");
  EXPECT_THAT(document["notes"],
              Contains("output not written: --prom: cannot write /dev/full: No space left on device"));
}

TEST_F(OutputFailureExit, AHistoryThatCannotBeWrittenOnAFailingNodeIsExit1) {
  // Not a pcieval history: refused, left untouched.
  const std::string db = path("not-a-history.sqlite");
  write(db, "my notes, not a database\n");
  const CliRun run = check(kDowngradedHgx, "--history " + shell_quote(db) + " -o " + shell_quote(path("r.json")));
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.err, StartsWith("pcieval: error: --history: "));
  EXPECT_THAT(run.err, HasSubstr(db));
  EXPECT_EQ(line_count(run.err), 1) << run.err;
  EXPECT_EQ(slurp(db), "my notes, not a database\n");
  const json document = json::parse(slurp(path("r.json")));
  bool noted = false;
  for (const json& note : document["notes"])
    noted = noted || note.get<std::string>().starts_with("output not written: --history: ");
  EXPECT_TRUE(noted) << document["notes"].dump();
}

TEST_F(OutputFailureExit, WithoutAFailAnOutputNotWrittenIsExit2) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this machine";
  // Pass + output failure: could not judge. Inconclusive + output failure:
  // 2 outranks 3.
  for (const std::string& machine : {kHealthyHgx, kIdleEsc}) {
    const CliRun run = check(machine, "--prom /dev/full");
    EXPECT_EQ(run.exit_code, 2) << machine << ": " << run.err;
    EXPECT_THAT(run.err, HasSubstr("--prom: cannot write /dev/full")) << machine;
    EXPECT_EQ(line_count(run.err), 1) << machine << ": " << run.err;
  }
  // The outcomes themselves, for comparison.
  EXPECT_EQ(check(kHealthyHgx, "").exit_code, 0);
  EXPECT_EQ(check(kIdleEsc, "").exit_code, 3);
}

TEST_F(OutputFailureExit, ValidateAndDiagnoseRankAFailAboveAnOutputError) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this machine";
  ASSERT_EQ(check(kDowngradedHgx, "-o " + shell_quote(path("fail.json"))).exit_code, 1);
  const CliRun validated = run_pcieval("validate -q " + shell_quote(path("fail.json")) + " --junit /dev/full");
  EXPECT_EQ(validated.exit_code, 1) << validated.err;
  EXPECT_THAT(validated.err, HasSubstr("--junit: cannot write /dev/full"));
  // An ASUS ESC8000A-E12's lspci -vv with a RAID card at x1 in an x16 slot.
  const std::string capture =
      std::string(PCIEVAL_SOURCE_DIR) + "/tests/fixtures/captures/lspci_esc8000a_e12_idle_gpus_highpoint_x1.txt";
  const CliRun diagnosed = run_pcieval("diagnose -q " + shell_quote(capture) + " --html /dev/full");
  EXPECT_EQ(diagnosed.exit_code, 1) << diagnosed.err;
  EXPECT_THAT(diagnosed.err, HasSubstr("--html: cannot write /dev/full"));
}

TEST_F(OutputFailureExit, EveryOutputIsAttemptedWhenOneFails) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this machine";
  const std::string db = path("h.sqlite");
  const CliRun run = check(kDowngradedHgx, "--prom /dev/full -o " + shell_quote(path("r.json")) + " --junit " +
                                               shell_quote(path("r.xml")) + " --html " + shell_quote(path("r.html")) +
                                               " --history " + shell_quote(db));
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(json::parse(slurp(path("r.json")))["overall"], "fail");
  EXPECT_THAT(slurp(path("r.xml")), HasSubstr("link_width_below_expected"));
  EXPECT_THAT(slurp(path("r.html")), HasSubstr("<html"));
  const CliRun history = run_pcieval("history --json --db " + shell_quote(db));
  ASSERT_EQ(history.exit_code, 0) << history.err;
  EXPECT_EQ(json::parse(history.out)["runs"].size(), 1U);
}

// `pcieval check -o r.json | head -1`: the reader has gone before the table
// is written. That used to be SIGPIPE's kill (141) with no file written.
TEST_F(OutputFailureExit, AClosedPipeOnStdoutKillsNothingAndEveryFileIsWritten) {
  const std::string files = " -o " + shell_quote(path("r.json")) + " --prom " + shell_quote(path("r.prom"));
  // A failing node: the table is lost, the fault is not.
  const CliRun failing = run_into_closed_pipe("check " + fixture_args(kDowngradedHgx) + files);
  EXPECT_EQ(failing.exit_code, 1) << failing.err;
  EXPECT_EQ(failing.err, "pcieval: error: could not write to standard output: Broken pipe\n");
  EXPECT_EQ(json::parse(slurp(path("r.json")))["overall"], "fail");
  EXPECT_THAT(slurp(path("r.prom")), HasSubstr("pcieval_overall{result=\"fail\"} 1"));

  std::filesystem::remove(path("r.json"));
  std::filesystem::remove(path("r.prom"));
  const CliRun passing = run_into_closed_pipe("check " + fixture_args(kHealthyHgx) + files);
  EXPECT_EQ(passing.exit_code, 2) << passing.err;
  EXPECT_EQ(line_count(passing.err), 1) << passing.err;
  EXPECT_EQ(json::parse(slurp(path("r.json")))["overall"], "pass");
  EXPECT_THAT(slurp(path("r.prom")), HasSubstr("pcieval_overall{result=\"pass\"} 1"));

  // The document itself on stdout: the writer's words, still one line.
  const CliRun document = run_into_closed_pipe("check -q " + fixture_args(kHealthyHgx) + " -o -");
  EXPECT_EQ(document.exit_code, 2) << document.err;
  EXPECT_THAT(document.err, HasSubstr("Broken pipe"));
  EXPECT_EQ(line_count(document.err), 1) << document.err;
}

}  // namespace
}  // namespace pcieval::testing
