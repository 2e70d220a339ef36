// Progress on stderr while `pcieval check` runs its probes on this machine
// (the host ceiling runs anywhere): plain lines when stderr is not a
// terminal, nothing with --quiet or when no probe runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "cli/cli_runner.hpp"

namespace pcieval::testing {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(ProgressCli, PlainLinesPerProbeWhenStderrIsNotATerminal) {
  const CliRun run = run_pcieval("check");
  ASSERT_NE(run.exit_code, 2) << run.err;
  EXPECT_THAT(run.err, ContainsRegex("pcieval: probe [0-9]+/[0-9]+ host_ceiling \\(host memory\\) started, "
                                     "elapsed [0-9]+:[0-9][0-9], left "));
  EXPECT_THAT(run.err, ContainsRegex("pcieval: probe [0-9]+/[0-9]+ host_ceiling \\(host memory\\) ran in "
                                     "[0-9.]+ s, elapsed [0-9]+:[0-9][0-9], left ~"));
  EXPECT_THAT(run.err, Not(HasSubstr("\r"))) << "no redrawing when stderr is a file";
  EXPECT_THAT(run.out, Not(HasSubstr("pcieval: probe"))) << "progress never goes to stdout";
}

// stderr on a terminal: util-linux `script` runs pcieval on a pseudo-terminal
// and copies what it printed there (stdout goes to /dev/null).
TEST(ProgressCli, OneRedrawnLineWhenStderrIsATerminal) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "util-linux script not installed";
  const std::string command =
      "script -qec " + shell_quote(std::string(PCIEVAL_BINARY) + " check >/dev/null") + " /dev/null </dev/null 2>&1";
  std::string terminal;
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buffer[4096];
  std::size_t read = 0;
  while ((read = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) terminal.append(buffer, read);
  ASSERT_NE(::pclose(pipe), -1);
  EXPECT_THAT(terminal,
              ContainsRegex("\r\\[[0-9]+/[0-9]+\\] host_ceiling host memory  elapsed [0-9]+:[0-9][0-9]  left "));
  EXPECT_THAT(terminal, Not(HasSubstr("pcieval: probe"))) << "no plain lines on a terminal";
}

TEST(ProgressCli, QuietPrintsNothingOnStderr) {
  const CliRun run = run_pcieval("check --quiet");
  ASSERT_NE(run.exit_code, 2);
  EXPECT_EQ(run.err, "");
}

TEST(ProgressCli, NoProgressWhenNoProbeRuns) {
  const CliRun run = run_pcieval("check --no-probes");
  ASSERT_NE(run.exit_code, 2) << run.err;
  EXPECT_THAT(run.err, Not(HasSubstr("pcieval: probe")));
}

}  // namespace
}  // namespace pcieval::testing
