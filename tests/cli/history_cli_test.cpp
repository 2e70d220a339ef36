// `--history [DB]` and `pcieval history`: runs appended from check and
// validate, listed newest first with their summaries, trends from real
// measurements, the default path, and bad databases refused with exit 2 and
// left untouched.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"

namespace pcieval::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class HistoryCli : public ScratchDirTest {};

// HGX A100 fixtures (tests/fixtures/machines.py): one GPU trained at x8, and
// the same board healthy.
constexpr const char* kHistoryFailing = "hgx_a100_8gpu_gpu_x8";
constexpr const char* kHistoryPassing = "hgx_a100_8gpu_gen4";
// results_schema/examples: host gpu-ws-017, GPU 0000:01:00.0 measured.
const std::string kL40sExample = std::string(PCIEVAL_SOURCE_DIR) + "/results_schema/examples/pass-1gpu-l40s-genoa.json";

TEST_F(HistoryCli, ChecksAreAppendedAndListedNewestFirstWithTheirSummaries) {
  // The folder of a DB that is named must exist, as -o's must; only the
  // default one is created (BareHistoryUsesXdgDataHomeThenHome).
  std::filesystem::create_directories(path("runs"));
  const std::string db = path("runs/history.sqlite");
  const CliRun failing = run_pcieval("check " + fixture_args(kHistoryFailing) + " -q -o " +
                                     shell_quote(path("fail.json")) + " --history " + shell_quote(db));
  ASSERT_EQ(failing.exit_code, 1) << failing.err;
  const CliRun passing = run_pcieval("check " + fixture_args(kHistoryPassing) + " -q --history=" + shell_quote(db));
  ASSERT_EQ(passing.exit_code, 0) << passing.err;
  // validate takes it too (as --history=DB: a bare value would be its RESULTS).
  const CliRun validated =
      run_pcieval("validate " + shell_quote(path("fail.json")) + " -q --history=" + shell_quote(db));
  ASSERT_EQ(validated.exit_code, 1) << validated.err;

  const std::string failing_summary = json::parse(slurp(path("fail.json")))["summary"];
  const CliRun listed = run_pcieval("history --db " + shell_quote(db));
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_THAT(listed.out, HasSubstr(failing_summary));
  EXPECT_THAT(listed.out, HasSubstr("pcieval pass:"));
  // Newest first: the run ids, right-aligned under RUN, count down.
  const auto row = [&](int id) { return listed.out.find("\n  " + std::to_string(id) + "  "); };
  ASSERT_NE(row(1), std::string::npos) << listed.out;
  EXPECT_LT(row(3), row(2)) << listed.out;
  EXPECT_LT(row(2), row(1)) << listed.out;

  const CliRun as_json = run_pcieval("history --db " + shell_quote(db) + " --json --limit 2");
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
  const json document = json::parse(as_json.out);
  ASSERT_EQ(document["runs"].size(), 2U);
  EXPECT_EQ(document["runs"][0]["overall"], "fail");  // the validate run
  EXPECT_EQ(document["runs"][0]["summary"], failing_summary);
  EXPECT_EQ(document["runs"][1]["overall"], "pass");
  EXPECT_TRUE(document["trends"].empty()) << "fixtures run no probe";
}

TEST_F(HistoryCli, TrendsFollowTheMeasurementsOfLiveRuns) {
  // On this machine the probes run for real (the host ceiling at least).
  const std::string db = path("history.sqlite");
  for (int run = 0; run < 2; ++run) {
    const CliRun checked =
        run_pcieval("check -q -o " + shell_quote(path("live.json")) + " --history " + shell_quote(db));
    ASSERT_NE(checked.exit_code, 2) << checked.err;
  }
  const json live = json::parse(slurp(path("live.json")));
  if (live["measurements"].empty()) GTEST_SKIP() << "no probe measured anything on this machine";
  const std::string subject = live["measurements"][0]["subject"];

  const CliRun listed = run_pcieval("history --db " + shell_quote(db) + " --json --gpu " + shell_quote(subject));
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const json document = json::parse(listed.out);
  ASSERT_FALSE(document["trends"].empty());
  const json& trend = document["trends"][0];
  EXPECT_EQ(trend["subject"], subject);
  ASSERT_EQ(trend["points"].size(), 2U);
  // The newest point is the median the last run's document holds.
  bool found = false;
  for (const json& m : live["measurements"]) {
    if (m["subject"] == subject && m["probe"] == trend["probe"] && m["direction"] == trend["direction"] &&
        m["size_bytes"] == trend["size_bytes"]) {
      EXPECT_DOUBLE_EQ(trend["last_gbps"].get<double>(), m["median_gbps"].get<double>());
      found = true;
    }
  }
  EXPECT_TRUE(found) << trend.dump();
  const CliRun table = run_pcieval("history --db " + shell_quote(db));
  EXPECT_THAT(table.out, HasSubstr("MEDIANS GB/s (oldest first)"));
}

TEST_F(HistoryCli, BareHistoryUsesXdgDataHomeThenHome) {
  ::setenv("XDG_DATA_HOME", path("xdg").c_str(), 1);
  CliRun checked = run_pcieval("check " + fixture_args(kHistoryPassing) + " -q --history");
  ASSERT_EQ(checked.exit_code, 0) << checked.err;
  EXPECT_TRUE(std::filesystem::exists(path("xdg/pcieval/history.sqlite")));
  const CliRun listed = run_pcieval("history");
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_THAT(listed.out, HasSubstr("pcieval pass:"));

  ::unsetenv("XDG_DATA_HOME");
  ::setenv("HOME", path("home").c_str(), 1);
  checked = run_pcieval("check " + fixture_args(kHistoryPassing) + " -q --history");
  ASSERT_EQ(checked.exit_code, 0) << checked.err;
  EXPECT_TRUE(std::filesystem::exists(path("home/.local/share/pcieval/history.sqlite")));
}

// The nightly timer (contrib/systemd/pcieval-check.sh) writes
// $STATE_DIRECTORY/history.sqlite, /var/lib/pcieval by default: a bare
// `history` finds it when the user has no history of their own, and reads
// the user's own first when both exist.
TEST_F(HistoryCli, BareHistoryFallsBackToTheNightlyTimersDatabase) {
  std::filesystem::create_directories(path("state"));
  const std::string env =
      "env -u XDG_DATA_HOME HOME=" + shell_quote(path("home")) + " STATE_DIRECTORY=" + shell_quote(path("state"));
  const CliRun checked = run_pcieval("check " + fixture_args(kHistoryFailing) + " -q --history " +
                                     shell_quote(path("state/history.sqlite")));
  ASSERT_EQ(checked.exit_code, 1) << checked.err;
  const CliRun listed = run_pcieval_with_environment(env, "history");
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_THAT(listed.out, HasSubstr("pcieval fail:"));

  const CliRun own = run_pcieval_with_environment(env, "check " + fixture_args(kHistoryPassing) + " -q --history");
  ASSERT_EQ(own.exit_code, 0) << own.err;
  const CliRun first = run_pcieval_with_environment(env, "history");
  EXPECT_EQ(first.exit_code, 0) << first.err;
  EXPECT_THAT(first.out, HasSubstr("pcieval pass:"));
  EXPECT_THAT(first.out, Not(HasSubstr("pcieval fail:")));
}

TEST_F(HistoryCli, WithNoHistoryAnywhereTheErrorNamesEveryPlaceLookedAt) {
  const CliRun listed = run_pcieval_with_environment(
      "env -u XDG_DATA_HOME HOME=" + shell_quote(path("home")) + " STATE_DIRECTORY=" + shell_quote(path("state")),
      "history");
  EXPECT_EQ(listed.exit_code, 2);
  EXPECT_THAT(listed.err, HasSubstr(path("home/.local/share/pcieval/history.sqlite")));
  EXPECT_THAT(listed.err, HasSubstr(path("state/history.sqlite")));
  EXPECT_THAT(listed.err, HasSubstr("--db"));
  EXPECT_EQ(line_count(listed.err), 1) << listed.err;
}

TEST_F(HistoryCli, ANonSqliteFileIsExit2WithOneLineAndLeftUntouched) {
  const std::string bad = path("results.json");
  const std::string contents = "{\"this is\": \"not a database\"}\n";
  write(bad, contents);
  const CliRun listed = run_pcieval("history --db " + shell_quote(bad));
  EXPECT_EQ(listed.exit_code, 2);
  EXPECT_THAT(listed.err, StartsWith("pcieval: error: "));
  EXPECT_THAT(listed.err, HasSubstr("not an SQLite database"));
  EXPECT_EQ(line_count(listed.err), 1) << listed.err;

  const CliRun checked = run_pcieval("check " + fixture_args(kHistoryPassing) + " -q --history " + shell_quote(bad));
  EXPECT_EQ(checked.exit_code, 2);
  EXPECT_EQ(line_count(checked.err), 1) << checked.err;
  EXPECT_EQ(slurp(bad), contents);
}

TEST_F(HistoryCli, BadArgumentsAreUsageErrors) {
  const CliRun missing = run_pcieval("history --db " + shell_quote(path("none.sqlite")));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("no history database at"));
  EXPECT_FALSE(std::filesystem::exists(path("none.sqlite")));

  ASSERT_EQ(run_pcieval("check " + fixture_args(kHistoryPassing) + " -q --history " + shell_quote(path("h.sqlite")))
                .exit_code,
            0);
  const CliRun bad_gpu = run_pcieval("history --db " + shell_quote(path("h.sqlite")) + " --gpu not-an-address");
  EXPECT_EQ(bad_gpu.exit_code, 2);
  EXPECT_EQ(line_count(bad_gpu.err), 1) << bad_gpu.err;
  EXPECT_EQ(run_pcieval("history --db " + shell_quote(path("h.sqlite")) + " --limit 0").exit_code, 2);
}

// A GPU no run measured, in a database that holds runs: "no runs recorded"
// would be untrue, so the answer says what is there.
TEST_F(HistoryCli, AGpuNoRunMeasuredIsAnsweredWithWhatWasMeasured) {
  const std::string db = path("h.sqlite");
  ASSERT_EQ(run_pcieval("validate -q " + shell_quote(kL40sExample) + " --history=" + shell_quote(db)).exit_code, 0);
  ASSERT_EQ(run_pcieval("check -q " + fixture_args("small_server_no_gpu") + " --history " + shell_quote(db)).exit_code,
            0);
  const CliRun run = run_pcieval("history --db " + shell_quote(db) + " --gpu 0000:17:00.0");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out,
              StartsWith("2 runs recorded, none measured 0000:17:00.0; GPUs that were measured: 0000:01:00.0"));
  EXPECT_THAT(run.out, Not(HasSubstr("no runs recorded")));
  // --json keeps stdout a document; the words go to stderr.
  const CliRun as_json = run_pcieval("history --db " + shell_quote(db) + " --json --gpu 17:00.0");
  EXPECT_EQ(as_json.exit_code, 0);
  EXPECT_TRUE(json::parse(as_json.out)["runs"].empty());
  EXPECT_THAT(as_json.err, StartsWith("pcieval: 2 runs recorded, none measured 0000:17:00.0;"));
  // The GPU that was measured is listed as before.
  EXPECT_THAT(run_pcieval("history --db " + shell_quote(db) + " --gpu 0000:01:00.0").out, HasSubstr("gpu-ws-017"));
}

TEST_F(HistoryCli, RunsThatMeasuredNoGpuAreSaidToBeSo) {
  const std::string db = path("h.sqlite");
  ASSERT_EQ(run_pcieval("check -q " + fixture_args(kHistoryPassing) + " --history " + shell_quote(db)).exit_code, 0);
  const CliRun run = run_pcieval("history --db " + shell_quote(db) + " --gpu 0000:84:00.0");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out,
            "1 run recorded, none measured 0000:84:00.0; no run measured a GPU (runs with --no-probes, of a "
            "--sysfs-root tree, or on a node without GPUs)\n");
}

// Issue 29: several runs on a node creating one new history at once (a burn-in
// that starts a check per GPU, a prolog and a cron job). Each round four
// `check --history` processes start together on a database none of them
// finds; every one exits 0 and the database holds four runs. 20 rounds here
// (a few seconds on a busy two-core CI machine); the unit test
// ConcurrentCreatorsOfANewDatabaseLoseNoRun runs the 50 rounds in
// under a second, and more with PCIEVAL_HISTORY_STRESS_ROUNDS.
TEST_F(HistoryCli, ConcurrentChecksCreatingOneHistoryLoseNoRun) {
  constexpr int kRounds = 20;
  for (int round = 0; round < kRounds; ++round) {
    const std::string db = path("round" + std::to_string(round) + ".sqlite");
    std::string script;
    for (int i = 0; i < 4; ++i) {
      script += "(" + std::string(PCIEVAL_BINARY) + " check " + fixture_args(kHistoryPassing) + " -q --history " +
                shell_quote(db) + "; echo $? >" + shell_quote(path("rc" + std::to_string(i))) + ") & ";
    }
    script += "wait";
    const CliRun runs = run_shell(script, dir_);
    for (int i = 0; i < 4; ++i) {
      ASSERT_EQ(slurp(path("rc" + std::to_string(i))), "0\n") << "round " << round << ": " << runs.err;
    }
    const CliRun listed = run_pcieval("history --json --db " + shell_quote(db));
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    ASSERT_EQ(json::parse(listed.out)["runs"].size(), 4U) << "round " << round;
  }
}

// The page size of an SQLite file, from its header.
std::size_t page_size_of(const std::string& bytes) {
  const std::size_t size = (static_cast<unsigned char>(bytes[16]) << 8) | static_cast<unsigned char>(bytes[17]);
  return size == 1 ? 65536 : size;
}

// A history with a damaged page far from the newest runs: an append would
// never read it, and used to write over a database reports.md says is
// refused. Now `check --history` and `history` both refuse it and the file
// keeps every byte.
TEST_F(HistoryCli, ADamagedHistoryIsRefusedAndLeftUntouched) {
  const std::string db = path("h.sqlite");
  for (int run = 0; run < 20; ++run) {
    ASSERT_EQ(run_pcieval("check " + fixture_args(kHistoryPassing) + " -q --history " + shell_quote(db)).exit_code, 0);
  }
  std::string bytes = slurp(db);
  const std::size_t page_size = page_size_of(bytes);
  const std::size_t pages = bytes.size() / page_size;
  ASSERT_GT(pages, 30U);
  // A page a third of the way in, an early run's document: its first bytes
  // (overflow chain pointer, or b-tree page type) become junk.
  const std::size_t damaged = pages / 3;
  for (std::size_t i = 0; i < 16; ++i) bytes[(damaged - 1) * page_size + i] = static_cast<char>(0xA5);
  std::ofstream(db, std::ios::binary | std::ios::trunc) << bytes;

  const CliRun checked = run_pcieval("check " + fixture_args(kHistoryPassing) + " -q --history " + shell_quote(db));
  EXPECT_EQ(checked.exit_code, 2);
  EXPECT_THAT(checked.err, HasSubstr("is corrupt"));
  EXPECT_EQ(line_count(checked.err), 1) << checked.err;
  const CliRun listed = run_pcieval("history --db " + shell_quote(db));
  EXPECT_EQ(listed.exit_code, 2);
  EXPECT_THAT(listed.err, HasSubstr("is corrupt"));
  EXPECT_EQ(slurp(db), bytes);
  EXPECT_FALSE(std::filesystem::exists(db + "-journal"));
}

// A writer SIGKILLed in the middle of its transaction, with pages of it
// already spilled into the file: the rollback journal it leaves is hot.
// `history` used to fail with "attempt to write a readonly database" until
// the next write; now it rolls the journal back and lists the committed runs.
TEST_F(HistoryCli, HistoryReadsAfterAWriterKilledMidTransaction) {
  const std::string db = path("h.sqlite");
  ASSERT_EQ(run_pcieval("check " + fixture_args(kHistoryPassing) + " -q --history " + shell_quote(db)).exit_code, 0);
  // Python's sqlite3 (python3 builds the fixtures), so this suite needs no
  // SQLite of its own.
  const std::string writer =
      "import os, signal, sqlite3, sys\n"
      "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
      "c.execute('PRAGMA cache_size = 10')\n"
      "c.execute('BEGIN IMMEDIATE')\n"
      "c.execute(\"INSERT INTO runs (started_s, started_utc, host, overall, summary, document) "
      "VALUES (5000, 'x', 'crashed', 'pass', 'never committed', zeroblob(2000000))\")\n"
      "os.kill(os.getpid(), signal.SIGKILL)\n";
  write(path("writer.py"), writer);
  const CliRun killed = run_shell("python3 " + shell_quote(path("writer.py")) + " " + shell_quote(db), dir_);
  ASSERT_EQ(killed.exit_code, 128 + 9) << killed.err;
  ASSERT_TRUE(std::filesystem::exists(db + "-journal")) << "no hot journal: the test reproduces nothing";

  const CliRun listed = run_pcieval("history --json --db " + shell_quote(db));
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const json document = json::parse(listed.out);
  ASSERT_EQ(document["runs"].size(), 1U);
  EXPECT_EQ(document["runs"][0]["overall"], "pass");
  EXPECT_FALSE(std::filesystem::exists(db + "-journal"));
}

}  // namespace
}  // namespace pcieval::testing
