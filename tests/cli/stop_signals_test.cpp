// SIGHUP (the ssh session of a burn-in dropped), SIGUSR1 and SIGALRM (a
// harness or Slurm's --signal saying time is up) stop a check as SIGTERM
// does (issue 29, item 5): run_interrupted, exit 3, and every output written.
// Their default action used to end the process with nothing written but the
// last soak round's -o. Runs a soak on the machine running the tests, as
// soak_test.cpp does: with no GPU the host ceiling is the probe that runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"

namespace pcieval::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class StopSignals : public ScratchDirTest {
 protected:
  // Starts `pcieval check -q FLAGS -o OUT`, waits for its first soak round
  // on disk, sends `signal_name` ("HUP"), and returns the exit code. `prefix`
  // runs in the same shell first (a trap).
  int signalled(const std::string& signal_name, const std::string& flags, const std::string& out,
                const std::string& prefix = "") {
    const std::string rc = path("rc");
    const std::string script = prefix + std::string(PCIEVAL_BINARY) + " check -q " + flags + " -o " + shell_quote(out) +
                               " 2>" + shell_quote(path("err")) + " & pid=$!; i=0; while [ ! -s " + shell_quote(out) +
                               " ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; kill -" + signal_name +
                               " $pid; wait $pid; echo $? > " + shell_quote(rc);
    EXPECT_EQ(std::system(("sh -c " + shell_quote(script)).c_str()), 0);
    return std::atoi(slurp(rc).c_str());
  }
};

TEST_F(StopSignals, HangupUser1AndAlarmStopTheRunWithEveryOutputWritten) {
  for (const std::string name : {"HUP", "USR1", "ALRM"}) {
    const std::string out = path(name + ".json");
    const std::string prom = path(name + ".prom");
    const std::string junit = path(name + ".xml");
    const std::string html = path(name + ".html");
    const std::string db = path(name + ".sqlite");
    const int code = signalled(name,
                               "--duration 10m --prom " + shell_quote(prom) + " --junit " + shell_quote(junit) +
                                   " --html " + shell_quote(html) + " --history " + shell_quote(db),
                               out);
    EXPECT_EQ(code, 3) << name << ": " << slurp(path("err"));
    const json document = json::parse(slurp(out));
    EXPECT_EQ(document["interrupted"], "SIG" + name);
    EXPECT_EQ(document["soak"]["finished"], false) << name;
    EXPECT_EQ(document["overall"], "inconclusive") << name;
    EXPECT_THAT(document["verdicts"].dump(), HasSubstr("run_interrupted")) << name;
    EXPECT_THAT(slurp(prom), HasSubstr("pcieval_overall{result=\"inconclusive\"} 1")) << name;
    EXPECT_THAT(slurp(junit), HasSubstr("run_interrupted")) << name;
    EXPECT_THAT(slurp(html), HasSubstr("<html")) << name;
    const CliRun history = run_pcieval("history --json --db " + shell_quote(db));
    ASSERT_EQ(history.exit_code, 0) << name << ": " << history.err;
    EXPECT_EQ(json::parse(history.out)["runs"].size(), 1U) << name;
  }
}

// nohup pcieval check ...: a hang-up that was ignored when pcieval started
// stays ignored, and the run ends as it would have.
TEST_F(StopSignals, AHangupIgnoredAtStartStaysIgnored) {
  const std::string out = path("nohup.json");
  const int code = signalled("HUP", "--duration 2s", out, "trap '' HUP; ");
  EXPECT_NE(code, 128 + SIGHUP);
  EXPECT_NE(code, 2) << slurp(path("err"));
  const json document = json::parse(slurp(out));
  EXPECT_TRUE(document["interrupted"].is_null()) << document["interrupted"];
  EXPECT_EQ(document["soak"]["finished"], true);
}

}  // namespace
}  // namespace pcieval::testing
