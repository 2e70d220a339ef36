// The measurement engine through the command line: --list-probes, the mode
// flags, and a live check on the machine running the tests, whose host
// ceiling probe runs for real and whose GPU probes skip with their reasons
// when it has no usable GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"

namespace pcieval::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const char* const kGpuProbes[] = {"h2d_ce",      "d2h_ce",      "h2d_sm",   "d2h_sm",         "bidir_ce",
                                  "pageable_ce", "all_gpus_ce", "group_ce", "remote_numa_ce", "sweep_ce"};

TEST(ListProbes, NamesEveryProbeWithItsModesAndDescription) {
  const auto run = run_pcieval("check --list-probes");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  for (const char* key : kGpuProbes) EXPECT_THAT(run.out, HasSubstr(std::string(key) + "  (")) << key;
  EXPECT_THAT(run.out, HasSubstr("host_ceiling  (--quick and --full)\n"));
  EXPECT_THAT(run.out, HasSubstr("sweep_ce  (--full only)\n"));
  EXPECT_THAT(run.out, HasSubstr("remote_numa_ce  (--full only)\n"));
  EXPECT_THAT(run.out, HasSubstr("h2d_ce  (--quick and --full)\n    "));
}

TEST(ProbeFlags, ModesExcludeEachOther) {
  for (const char* flags : {"--quick --full", "--full --no-probes", "--quick --no-probes"}) {
    const auto run = run_pcieval(std::string("check ") + flags);
    EXPECT_EQ(run.exit_code, 2) << flags;
    EXPECT_THAT(run.err, HasSubstr("excludes")) << flags;
    EXPECT_EQ(line_count(run.err), 1) << run.err;
  }
}

TEST(ProbeFlags, FixtureTreesAreNeverMeasured) {
  const auto run = run_pcieval("check " + fixture_args("hgx_a100_8gpu_gen4") + " -o -");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  EXPECT_TRUE(doc["probes"].empty());
  EXPECT_TRUE(doc["measurements"].empty());
  EXPECT_THAT(doc["notes"].dump(), HasSubstr("probes not run: the PCI tree was read from --sysfs-root"));
}

TEST(BandwidthVerdicts, ValidateJudgesTheMeasurementsOfADocument) {
  const std::string example =
      std::string(PCIEVAL_SOURCE_DIR) + "/results_schema/examples/fail-downgraded-h100-spr.json";
  const auto run = run_pcieval("validate " + shell_quote(example) + " -o -");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  int low = 0;
  for (const auto& verdict : doc["verdicts"]) {
    if (verdict["code"] != "bandwidth_below_budget") continue;
    ++low;
    EXPECT_EQ(verdict["subject"], "0000:17:00.0");
    EXPECT_EQ(verdict["status"], "bandwidth_low");
    EXPECT_THAT(verdict["reason"].get<std::string>(), HasSubstr("it fits Gen4 x16 or Gen5 x8"));
  }
  EXPECT_EQ(low, 2);  // h2d_ce and d2h_ce
}

using BaselineFlag = ScratchDirTest;

TEST_F(BaselineFlag, AMedianWellBelowTheKnownGoodRunIsBandwidthLow) {
  const std::string example = std::string(PCIEVAL_SOURCE_DIR) + "/results_schema/examples/pass-1gpu-l40s-genoa.json";
  // The known-good run: the same node, its h2d_ce half again as fast.
  auto baseline = nlohmann::json::parse(slurp(example));
  for (auto& m : baseline["measurements"]) {
    if (m["probe"] != "h2d_ce") continue;
    for (auto& trial : m["trials_gbps"]) trial = trial.get<double>() * 1.5;
    for (const char* field : {"median_gbps", "min_gbps", "max_gbps"}) m[field] = m[field].get<double>() * 1.5;
  }
  write(path("baseline.json"), baseline.dump());

  const auto plain = run_pcieval("validate -q " + shell_quote(example));
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  const auto run =
      run_pcieval("validate " + shell_quote(example) + " --baseline " + shell_quote(path("baseline.json")) + " -o -");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  std::vector<std::string> codes;
  for (const auto& verdict : doc["verdicts"]) codes.push_back(verdict["code"]);
  EXPECT_THAT(codes, ::testing::Contains("bandwidth_below_baseline"));
  EXPECT_THAT(codes, ::testing::Not(::testing::Contains("bandwidth_below_budget")));
}

TEST_F(BaselineFlag, AnUnreadableBaselineIsExit2AndWritesNothing) {
  const std::string example = std::string(PCIEVAL_SOURCE_DIR) + "/results_schema/examples/pass-1gpu-l40s-genoa.json";
  const auto run = run_pcieval("validate " + shell_quote(example) + " --baseline " + shell_quote(path("none.json")) +
                               " -o " + shell_quote(path("out.json")));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("--baseline: "));
  EXPECT_FALSE(std::filesystem::exists(path("out.json")));
}

using LiveCheck = ScratchDirTest;

TEST_F(LiveCheck, NoProbesRecordsNothingAndSaysSo) {
  const auto run = run_pcieval("check --no-probes -o " + shell_quote(path("r.json")));
  EXPECT_NE(run.exit_code, 2) << run.err;
  const auto doc = nlohmann::json::parse(slurp(path("r.json")));
  EXPECT_TRUE(doc["probes"].empty());
  EXPECT_TRUE(doc["probe_settings"].is_null());
  EXPECT_THAT(doc["notes"].dump(), HasSubstr("probes not run (--no-probes)"));
}

TEST_F(LiveCheck, HostCeilingRunsAndGpuProbesSayWhyTheySkip) {
  const auto run = run_pcieval("check -o " + shell_quote(path("r.json")));
  // Whatever this machine's links say (exit 0, 1 or 3), the run completed.
  EXPECT_NE(run.exit_code, 2) << run.err;
  const auto doc = nlohmann::json::parse(slurp(path("r.json")));
  EXPECT_EQ(doc["probe_settings"]["mode"], "quick");
  EXPECT_EQ(doc["probe_settings"]["size_bytes"], 256u << 20);

  std::map<std::string, nlohmann::json> probes;
  for (const auto& probe : doc["probes"]) probes[probe["key"].get<std::string>()] = probe;
  ASSERT_EQ(probes.count("host_ceiling"), 1u) << doc["probes"].dump();
  EXPECT_EQ(probes["host_ceiling"]["status"], "ran") << probes["host_ceiling"].dump();
  EXPECT_EQ(probes["sweep_ce"]["status"], "skipped");
  EXPECT_EQ(probes["sweep_ce"]["reason"], "runs with --full only");
  // A GPU as the GPU probes count one (bench/gpu_groups.cpp): kind gpu, function 0.
  bool has_gpu = false;
  for (const auto& device : doc["devices"]) {
    has_gpu = has_gpu || (device["kind"] == "gpu" && device["bdf"].get<std::string>().ends_with(".0"));
  }
  for (const char* key : kGpuProbes) {
    ASSERT_EQ(probes.count(key), 1u) << key;
    const auto& probe = probes[key];
    const std::string reason = probe["reason"].get<std::string>();
    if (has_gpu) {
      // On a GPU node a probe runs, or skips saying why (a build without
      // CUDA, one NUMA node, --full only); a failure is the node's or the
      // engine's, and this test must not pass over it.
      EXPECT_NE(probe["status"], "failed") << key << ": " << reason;
      if (probe["status"] == "skipped") EXPECT_FALSE(reason.empty()) << key;
    } else {
      // No GPU: each one skips, for that reason (sweep_ce and
      // remote_numa_ce for theirs: this is a quick run).
      EXPECT_EQ(probe["status"], "skipped") << key << ": " << reason;
      EXPECT_THAT(reason, ::testing::AnyOf("no NVIDIA GPU in the evidence", "runs with --full only")) << key;
    }
  }

  int ceilings = 0;
  for (const auto& m : doc["measurements"]) {
    if (m["probe"] != "host_ceiling") continue;
    ++ceilings;
    EXPECT_EQ(m["direction"], "h2h");
    EXPECT_EQ(m["aggregation"], "total_over_wall_time");
    EXPECT_TRUE(m["verified"].get<bool>());
    EXPECT_EQ(m["trials_gbps"].size(), 5u);
    EXPECT_GT(m["median_gbps"].get<double>(), 0.0);
  }
  EXPECT_GE(ceilings, 1);
  // The human table shows the measurement and the probe tally.
  const auto table = run_pcieval("check");
  EXPECT_THAT(table.out, HasSubstr("host_ceiling"));
  EXPECT_THAT(table.out, HasSubstr("probes: "));
  EXPECT_THAT(table.out, Not(HasSubstr("no load probes in this version")));
}

}  // namespace
}  // namespace pcieval::testing

namespace pcieval::testing {
namespace {

using ::testing::HasSubstr;

// GNU timeout sends its signal to pcieval and then to pcieval's process group,
// so a run sees two SIGTERMs at once; two quick Ctrl-C are the same. A
// signal at any moment of a check (here: while the host ceiling probe runs)
// makes it interrupted, exit 3, with the document written, never a pass and
// never a kill by the second signal.
TEST_F(LiveCheck, ASignalUnderGnuTimeoutEndsInterruptedNotKilled) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::string out = path("t" + std::to_string(attempt) + ".json");
    const auto run = run_shell(
        "timeout --preserve-status -s TERM 0.5 " + std::string(PCIEVAL_BINARY) + " check -q -o " + shell_quote(out),
        dir_);
    ASSERT_EQ(run.exit_code, 3) << "attempt " << attempt << ": " << run.err;
    const auto doc = nlohmann::json::parse(slurp(out));
    EXPECT_EQ(doc["interrupted"], "SIGTERM");
    EXPECT_EQ(doc["overall"], "inconclusive");
    EXPECT_THAT(doc["verdicts"].dump(), HasSubstr("run_interrupted"));
  }
}

// --stop-grace: two SIGTERMs 0.1 s apart are one request within the default
// grace (exit 3, the document written); with --stop-grace 0 the second one
// kills, as an operator who means it expects. A soak keeps the run alive
// long enough on any machine.
TEST_F(LiveCheck, TheStopGraceDecidesWhetherASecondSignalKills) {
  const auto signalled_twice = [&](const std::string& flags, const std::string& out) {
    return run_shell(std::string(PCIEVAL_BINARY) + " check -q --rounds 1000 " + flags + " -o " + shell_quote(out) +
                         " & pid=$!; sleep 1; kill -TERM $pid; sleep 0.1; kill -TERM $pid; wait $pid",
                     dir_);
  };
  const auto graced = signalled_twice("", path("graced.json"));
  EXPECT_EQ(graced.exit_code, 3) << graced.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(path("graced.json")))["interrupted"], "SIGTERM");

  const auto killed = signalled_twice("--stop-grace 0", path("killed.json"));
  EXPECT_EQ(killed.exit_code, 128 + SIGTERM) << killed.err;
}

}  // namespace
}  // namespace pcieval::testing
