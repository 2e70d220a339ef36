// What the command line says when it is used wrongly: a mistyped command is
// named with the nearest one, every number is checked against bounds written
// the way the flag is documented, and every error sends the operator to the
// help of the command they ran. Issue 18's examples, one by one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>

#include "app/cli_flags.hpp"
#include "cli/cli_runner.hpp"

namespace pcieval::testing {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr const char* kCommands = "Commands: check, topo, validate, diagnose, history, report, compare, retrain, fleet";

TEST(CliMessages, AMistypedCommandIsNamedWithTheNearestOne) {
  const CliRun run = run_pcieval("chek");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, std::string("pcieval: error: unknown command 'chek'; did you mean 'check'? ") + kCommands +
                         " (run 'pcieval --help')\n");
  EXPECT_TRUE(run.out.empty()) << run.out;
  // A swap of two letters, a dropped one, a prefix.
  EXPECT_THAT(run_pcieval("valdiate x.json").err, HasSubstr("unknown command 'valdiate'; did you mean 'validate'?"));
  EXPECT_THAT(run_pcieval("histroy").err, HasSubstr("did you mean 'history'?"));
  EXPECT_THAT(run_pcieval("diag x.log").err, HasSubstr("did you mean 'diagnose'?"));
}

TEST(CliMessages, ACommandFarFromEveryNameListsThemWithoutAGuess) {
  const CliRun run = run_pcieval("benchmark --quick");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, StartsWith("pcieval: error: unknown command 'benchmark' Commands: check, topo,"));
  EXPECT_THAT(run.err, Not(HasSubstr("did you mean")));
  EXPECT_EQ(line_count(run.err), 1) << run.err;
}

TEST(CliMessages, AMistypedFleetCommandIsNamedWithinFleet) {
  const CliRun run = run_pcieval("fleet mrege a.json");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "pcieval: error: unknown command 'fleet mrege'; did you mean 'fleet merge'? Commands: merge (run 'pcieval "
            "fleet --help')\n");
}

TEST(CliMessages, AMissingCommandListsTheCommands) {
  const CliRun none = run_pcieval("");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.err,
            "pcieval: error: a command is required: check, topo, validate, diagnose, history, report, "
            "compare, retrain, fleet (run 'pcieval --help')\n");
  const CliRun fleet = run_pcieval("fleet");
  EXPECT_EQ(fleet.exit_code, 2);
  EXPECT_EQ(fleet.err, "pcieval: error: a command is required: merge (run 'pcieval fleet --help')\n");
}

// Each numeric flag of each command: the bad value, and the one line it gets.
struct BadNumber {
  const char* args;
  const char* message;
};

TEST(CliMessages, EveryNumericFlagSaysItsBoundsAndWhatWasGiven) {
  const BadNumber cases[] = {
      {"check --expect-gpus -3", "--expect-gpus must be between 0 and 1024, got -3 (run 'pcieval check --help')"},
      {"check --expect-gpus eight",
       "--expect-gpus must be a whole number between 0 and 1024, got 'eight' (run 'pcieval check --help')"},
      {"check --expect-gpus 99999999999999999999",
       "--expect-gpus must be between 0 and 1024, got 99999999999999999999 (run 'pcieval check --help')"},
      {"validate r.json --expect-gpus 2000",
       "--expect-gpus must be between 0 and 1024, got 2000 (run 'pcieval validate --help')"},
      {"diagnose c.txt --expect-gpus -1",
       "--expect-gpus must be between 0 and 1024, got -1 (run 'pcieval diagnose --help')"},
      {"check --rounds 0", "--rounds must be between 1 and 1000000, got 0 (run 'pcieval check --help')"},
      {"check --rounds 2.5",
       "--rounds must be a whole number between 1 and 1000000, got '2.5' (run 'pcieval check --help')"},
      {"check --duration 0", "--duration must be between 1 s and 30 d, got 0 (run 'pcieval check --help')"},
      {"check --duration 1e19", "--duration must be between 1 s and 30 d, got 1e19 (run 'pcieval check --help')"},
      {"check --duration 31d", "--duration must be between 1 s and 30 d, got 31d (run 'pcieval check --help')"},
      {"check --duration -5m", "--duration must be between 1 s and 30 d, got -5m (run 'pcieval check --help')"},
      {"check --duration 10x",
       "--duration must be a time such as 90s, 30m, 2h or 1d (a bare number is seconds) between 1 s and 30 d, got "
       "'10x' (run 'pcieval check --help')"},
      {"check --duration nan",
       "--duration must be a time such as 90s, 30m, 2h or 1d (a bare number is seconds) between 1 s and 30 d, got "
       "'nan' (run 'pcieval check --help')"},
      {"check --fleet-timeout 0", "--fleet-timeout must be between 1 s and 30 d, got 0 (run 'pcieval check --help')"},
      {"check --fleet-timeout 1e12",
       "--fleet-timeout must be between 1 s and 30 d, got 1e12 (run 'pcieval check --help')"},
      {"history --limit 0", "--limit must be between 1 and 1000000, got 0 (run 'pcieval history --help')"},
      {"history --limit 3000000000",
       "--limit must be between 1 and 1000000, got 3000000000 (run 'pcieval history --help')"},
      {"retrain 0000:03:00.0 --timeout-s 61",
       "--timeout-s must be between 0.01 s and 60 s, got 61 (run 'pcieval retrain --help')"},
      {"retrain 0000:03:00.0 --timeout-s 0",
       "--timeout-s must be between 0.01 s and 60 s, got 0 (run 'pcieval retrain --help')"},
  };
  for (const BadNumber& bad : cases) {
    const CliRun run = run_pcieval(bad.args);
    EXPECT_EQ(run.exit_code, 2) << bad.args;
    EXPECT_EQ(run.err, std::string("pcieval: error: ") + bad.message + "\n") << bad.args;
    EXPECT_THAT(run.err, Not(HasSubstr("179769"))) << bad.args;
  }
}

TEST(CliMessages, DurationsTakeUnitsUpToThirtyDays) {
  // --list-probes ends the run right after the flags are read.
  for (const char* duration : {"1", "90s", "30m", "1.5h", "1d", "30d", "2592000"}) {
    const CliRun run = run_pcieval(std::string("check --list-probes --duration ") + duration);
    EXPECT_EQ(run.exit_code, 0) << duration << ": " << run.err;
  }
  EXPECT_EQ(run_pcieval("check --list-probes --fleet-timeout 10m").exit_code, 0);
  EXPECT_EQ(run_pcieval("check --list-probes --expect-gpus 0 --rounds 1000000").exit_code, 0);
}

TEST(CliMessages, TheLongestDurationFitsTheNanosecondCounters) {
  // steady_clock's int64 nanoseconds, where a soak's and a wait's deadlines live.
  const auto longest = std::chrono::duration<double>(app::kMaxDurationS);
  EXPECT_LT(longest.count() * 1e9, static_cast<double>(std::numeric_limits<std::int64_t>::max()) / 1000);
  EXPECT_EQ(app::parse_duration_s("30d"), app::kMaxDurationS);
}

TEST(CliMessages, DurationTextIsParsedWithItsUnit) {
  EXPECT_EQ(app::parse_duration_s("90"), 90.0);
  EXPECT_EQ(app::parse_duration_s("90s"), 90.0);
  EXPECT_EQ(app::parse_duration_s("2 m"), 120.0);
  EXPECT_EQ(app::parse_duration_s("1.5h"), 5400.0);
  EXPECT_EQ(app::parse_duration_s("1d"), 86400.0);
  for (const char* bad : {"", "s", "10x", "1M", "nan", "inf", "1e400", "1e308d", "--5"}) {
    EXPECT_FALSE(app::parse_duration_s(bad).has_value()) << bad;
  }
  EXPECT_EQ(app::duration_text(app::kMaxDurationS), "30 d");
  EXPECT_EQ(app::duration_text(0.01), "0.01 s");
}

TEST(CliMessages, TheNearestNameIsCloseOrNone) {
  const std::vector<std::string> names = {"check", "topo", "validate", "diagnose", "history", "report"};
  EXPECT_EQ(app::nearest_name("chek", names), "check");
  EXPECT_EQ(app::nearest_name("CHECK", names), "check");
  EXPECT_EQ(app::nearest_name("chekc", names), "check");
  EXPECT_EQ(app::nearest_name("tpoo", names), "topo");
  EXPECT_EQ(app::nearest_name("diag", names), "diagnose");
  EXPECT_FALSE(app::nearest_name("xyz", names).has_value());
  EXPECT_FALSE(app::nearest_name("help", names).has_value());
  EXPECT_EQ(app::edit_distance("check", "chekc"), 1U);
  EXPECT_EQ(app::edit_distance("", "topo"), 4U);
}

TEST(CliMessages, UsageErrorsPointAtTheHelpOfTheCommandRun) {
  const struct {
    const char* args;
    const char* hint;
  } cases[] = {
      {"check --no-such-flag", "(run 'pcieval check --help')"},
      {"check --quick --full", "(run 'pcieval check --help')"},
      {"topo --json extra", "(run 'pcieval topo --help')"},
      {"validate", "(run 'pcieval validate --help')"},
      {"history --gpu", "(run 'pcieval history --help')"},
      {"fleet merge", "(run 'pcieval fleet merge --help')"},
      {"compare a.json", "(run 'pcieval compare --help')"},
  };
  for (const auto& usage : cases) {
    const CliRun run = run_pcieval(usage.args);
    EXPECT_EQ(run.exit_code, 2) << usage.args;
    EXPECT_THAT(run.err, StartsWith("pcieval: error: ")) << usage.args;
    EXPECT_THAT(run.err, EndsWith(std::string(usage.hint) + "\n")) << usage.args;
    EXPECT_EQ(line_count(run.err), 1) << run.err;
  }
}

TEST(CliMessages, HelpShowsTypeNamesWithoutValidatorText) {
  for (const char* command :
       {"check", "topo", "validate", "diagnose", "history", "report", "compare", "retrain", "fleet", "fleet merge"}) {
    const CliRun run = run_pcieval(std::string(command) + " --help");
    ASSERT_EQ(run.exit_code, 0) << command;
    // CLI11's own texts: a negated flag's default, and validator names.
    for (const char* noise : {"{false}", "{true}", ":POSITIVE", ":NONNEGATIVE", "FLOAT [UNIT]", ":INT in", "[Range"}) {
      EXPECT_THAT(run.out, Not(HasSubstr(noise))) << command << " --help shows " << noise << ":\n" << run.out;
    }
  }
  const CliRun check = run_pcieval("check --help");
  EXPECT_THAT(check.out, HasSubstr("--no-fleet-allreduce "));
  EXPECT_THAT(check.out, HasSubstr("--duration TIME "));
  EXPECT_THAT(check.out, HasSubstr("1 s to 30 d"));
  EXPECT_THAT(check.out, HasSubstr("--expect-gpus N "));
}

TEST(CliMessages, NoFleetAllreduceKeepsItsMeaningOutsideMpi) {
  const CliRun run = run_pcieval("check " + fixture_args("small_server_no_gpu") + " --no-fleet-allreduce");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("need an MPI launch"));
}

}  // namespace
}  // namespace pcieval::testing
