// Usage errors: exit 2 with one line on stderr, never a crash or a trace.
#include <gtest/gtest.h>

#include "cli/cli_runner.hpp"

namespace pcieval::testing {
namespace {

TEST(CliUsage, UnknownFlagIsExit2WithOneLine) {
  const auto run = run_pcieval("check --no-such-flag");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(line_count(run.err), 1) << run.err;
  EXPECT_NE(run.err.find("pcieval: error:"), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
}

TEST(CliUsage, NoSubcommandIsExit2) {
  const auto run = run_pcieval("");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(line_count(run.err), 1) << run.err;
}

TEST(CliUsage, MissingSysfsRootIsExit2NamingIt) {
  const auto run = run_pcieval("check --sysfs-root /nonexistent/pcieval-root");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(line_count(run.err), 1) << run.err;
  EXPECT_NE(run.err.find("/nonexistent/pcieval-root"), std::string::npos) << run.err;
}

TEST(CliUsage, BadExpectGpusIsExit2) {
  EXPECT_EQ(run_pcieval("check --expect-gpus -3").exit_code, 2);
  EXPECT_EQ(run_pcieval("check --expect-gpus eight").exit_code, 2);
}

TEST(CliUsage, MalformedTopologyXmlIsExit2NamingTheFile) {
  const auto bad = std::filesystem::temp_directory_path() / "pcieval-malformed-topology.xml";
  {
    std::ofstream out(bad);
    out << "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n  <object type=\"Machine\"\n";
  }
  const auto run = run_pcieval("topo --sysfs-root " + shell_quote(fixture("small_server_no_gpu") / "sys") +
                               " --topology-xml " + shell_quote(bad));
  std::filesystem::remove(bad);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("pcieval-malformed-topology.xml"), std::string::npos) << run.err;
  EXPECT_EQ(line_count(run.err), 1) << run.err;
}

TEST(CliUsage, HelpAndVersionExit0) {
  const auto help = run_pcieval("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("check"), std::string::npos);
  EXPECT_NE(help.out.find("topo"), std::string::npos);
  const auto version = run_pcieval("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find("pcieval "), std::string::npos);
}

TEST(CliUsage, UnwritableOutputIsExit2AndKeepsTheOldFile) {
  const auto dir = std::filesystem::temp_directory_path() / "pcieval-cli-readonly";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto target = dir / "results.json";
  {
    std::ofstream out(target);
    out << "previous run\n";
  }
  // A missing directory cannot be written even by root.
  const auto run = run_pcieval("check " + fixture_args("small_server_no_gpu") + " -o " +
                               shell_quote(dir / "no-such-dir" / "results.json"));
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("no-such-dir"), std::string::npos) << run.err;
  EXPECT_EQ(slurp(target), "previous run\n");
  std::filesystem::remove_all(dir);
}

// CLI11's "--quick Excludes: --full --no-probes" read as part of the flag's
// syntax; the help says it in words, and the parser still refuses the pair.
TEST(CliUsage, HelpStatesExclusionsInWordsAndTheyStillHold) {
  const auto help = run_pcieval("check --help");
  ASSERT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.out.find("Excludes"), std::string::npos) << help.out;
  // The help wraps long descriptions: compare with single spaces.
  std::string flat;
  for (char c : help.out) {
    if (c == '\n') c = ' ';
    if (c != ' ' || flat.empty() || flat.back() != ' ') flat += c;
  }
  EXPECT_NE(flat.find("well under 30 s) (not with --full, --no-probes)"), std::string::npos) << help.out;
  EXPECT_NE(flat.find("(not with --duration, --full, --p2p, --quick, --rounds)"), std::string::npos) << help.out;
  EXPECT_NE(flat.find("reads and SM copies too (docs/check.md) (not with --no-probes)"), std::string::npos) << help.out;
  EXPECT_NE(flat.find("whichever comes first. -o FILE is rewritten after every round (not with --no-probes)"),
            std::string::npos)
      << help.out;
  for (const char* pair :
       {"--quick --full", "--full --no-probes", "--rounds 2 --no-probes", "--duration 5 --no-probes",
        "--p2p --no-probes"}) {
    const auto refused = run_pcieval(std::string("check --sysfs-root /nonexistent ") + pair);
    EXPECT_EQ(refused.exit_code, 2) << pair;
    EXPECT_NE(refused.err.find("excludes"), std::string::npos) << pair << ": " << refused.err;
  }
  for (const char* command :
       {"", "topo", "validate", "diagnose", "history", "report", "compare", "retrain", "fleet merge"}) {
    const auto other = run_pcieval(std::string(command) + " --help");
    EXPECT_EQ(other.out.find("Excludes"), std::string::npos) << command << ":\n" << other.out;
  }
}

}  // namespace
}  // namespace pcieval::testing
