// `pcieval check --simulate SCENARIO` end to end (issue 27): the real binary
// runs every probe on the simulated node (sim/), with the verdicts each
// scenario implies. Scenarios are written here with absolute machine paths
// (the in-tree ones in tests/sim/scenarios assume the build folder build/);
// copies are 32 MiB (--copy-mib) so that a run takes seconds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/cli_runner.hpp"
#include "validate/budget.hpp"

namespace pcieval::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Json = nlohmann::json;

class Simulate : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pcieval-simulate-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes a scenario on fixture `machine` with `gpus` (a JSON object) and
  // runs check on it; the document is parsed into document_. `more`: other
  // keys of the scenario (host_numa_gbps).
  CliRun simulate(const std::string& machine, const Json& gpus = Json::object(), const std::string& flags = "",
                  const Json& more = Json::object()) {
    Json scenario{{"machine", fixture(machine).string()}, {"gpus", gpus}};
    scenario.update(more);
    const fs::path file = dir_ / "scenario.json";
    std::ofstream(file) << scenario.dump(2);
    const fs::path out = dir_ / "results.json";
    const CliRun run = run_shell(std::string(PCIEVAL_BINARY) + " check --simulate " + shell_quote(file.string()) +
                                     " --copy-mib 32 -q -o " + shell_quote(out.string()) + " " + flags,
                                 dir_);
    document_ = Json::parse(slurp(out), nullptr, false);
    return run;
  }

  // The summary and every verdict that is not a pass: what a failed
  // expectation about the exit code needs to show.
  [[nodiscard]] std::string why() const {
    if (document_.is_discarded()) return "no results document";
    std::string text = document_["summary"].get<std::string>();
    for (const Json& verdict : document_["verdicts"]) {
      if (verdict["status"] != "pass")
        text += "\n  " + verdict["subject"].get<std::string>() + ": " + verdict["reason"].get<std::string>();
    }
    return text;
  }

  [[nodiscard]] std::vector<Json> verdicts_of(const std::string& subject) const {
    std::vector<Json> found;
    if (document_.is_discarded()) return found;
    for (const Json& verdict : document_["verdicts"]) {
      if (verdict["subject"] == subject) found.push_back(verdict);
    }
    return found;
  }

  [[nodiscard]] double median(const std::string& probe, const std::string& subject,
                              const std::string& direction) const {
    for (const Json& m : document_["measurements"]) {
      if (m["probe"] == probe && m["subject"] == subject && m["direction"] == direction) return m["median_gbps"];
    }
    ADD_FAILURE() << "no " << probe << " " << direction << " of " << subject;
    return 0;
  }

  fs::path dir_;
  Json document_;
};

// The model's rate of a lone copy on a healthy Gen4 x16 link: 0.9 (the
// default copy efficiency) of the link's budget in that direction.
double model_gbps(Direction direction) {
  const auto budget = link_budget(LinkState{PcieGen::kGen4, 16});
  return 0.9 * direction_budget_gbps(budget.value(), direction).value();
}

TEST_F(Simulate, AHealthyEightGpuNodePassesAtTheModelsRatesLabelledSimulated) {
  const CliRun run = simulate("hgx_a100_8gpu_gen4");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err << why();
  ASSERT_FALSE(document_.is_discarded());
  EXPECT_EQ(document_["host"]["simulated"], true);
  EXPECT_THAT(document_["summary"].get<std::string>(), ::testing::StartsWith("pcieval pass (simulated node): "));
  int gpus = 0;
  for (const char* gpu : {"0000:03:00.0", "0000:04:00.0", "0000:23:00.0", "0000:24:00.0", "0000:83:00.0",
                          "0000:84:00.0", "0000:a3:00.0", "0000:a4:00.0"}) {
    EXPECT_NEAR(median("h2d_ce", gpu, "h2d") / model_gbps(Direction::kHostToDevice), 1.0, 0.02) << gpu;
    EXPECT_NEAR(median("d2h_ce", gpu, "d2h") / model_gbps(Direction::kDeviceToHost), 1.0, 0.02) << gpu;
    ++gpus;
  }
  EXPECT_EQ(gpus, 8);
  // Two GPUs share each switch's Gen4 x16 uplink: together they get one
  // link's rate, each half of it.
  EXPECT_NEAR(median("all_gpus_ce", "0000:03:00.0", "h2d") * 2 / model_gbps(Direction::kHostToDevice), 1.0, 0.02);
  // Nothing of this host is measured on a simulated node.
  for (const Json& probe : document_["probes"]) {
    if (probe["key"] == "host_ceiling") EXPECT_EQ(probe["status"], "skipped");
  }
}

// The failure pcieval exists for, on the two-GPU machine (each GPU alone
// runs at its x8 uplink's rate): a GPU retrains under load. Early, before its
// first timed copy, to Gen3 x8: every copy of it is low, and the link reads
// low under load.
TEST_F(Simulate, ALinkThatRetrainsUnderLoadIsDowngradedAndItsCopiesAreLow) {
  const CliRun run = simulate("two_gpus_shared_x8_uplink",
                              {{"0000:04:00.0", {{"faults", {{{"after_load_s", 0.001}, {"link", "gen3x8"}}}}}}});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err << why();
  std::set<std::string> statuses;
  for (const Json& verdict : verdicts_of("0000:04:00.0")) {
    statuses.insert(verdict["status"]);
    if (verdict["status"] == "link_downgraded") {
      EXPECT_EQ(verdict["link"]["upstream"], "0000:02:08.0");
      EXPECT_THAT(verdict["reason"].get<std::string>(), HasSubstr("runs Gen3 x8, expected Gen4 x16 (read under load)"));
    }
  }
  EXPECT_TRUE(statuses.count("link_downgraded")) << document_["verdicts"].dump();
  EXPECT_TRUE(statuses.count("bandwidth_low")) << document_["verdicts"].dump();
  EXPECT_THAT(document_["summary"].get<std::string>(), HasSubstr("pcieval fail (simulated node): 0000:04:00.0"));
  for (const Json& verdict : verdicts_of("0000:03:00.0")) EXPECT_EQ(verdict["status"], "pass") << verdict.dump();
}

// Later, after its copy-engine probes passed, to Gen3 x16 (which its x8
// uplink hides from the copy rates): only the readings under load show it,
// and the verdict says the link fell while loaded. Before per-GPU load
// readings this passed on the link's best reading (issue 27).
TEST_F(Simulate, ALinkThatRetrainsAfterItsCopiesPassedIsStillCaughtUnderLoad) {
  const CliRun run = simulate("two_gpus_shared_x8_uplink",
                              {{"0000:04:00.0", {{"faults", {{{"after_load_s", 0.02}, {"link", "gen3x16"}}}}}}});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err << why();
  bool downgraded = false;
  for (const Json& verdict : verdicts_of("0000:04:00.0")) {
    if (verdict["status"] != "link_downgraded") continue;
    downgraded = true;
    EXPECT_EQ(verdict["code"], "link_speed_below_expected");
    EXPECT_THAT(verdict["reason"].get<std::string>(), HasSubstr("it reached Gen4 x16 under load, then read Gen3 x16"));
    EXPECT_THAT(verdict["reason"].get<std::string>(), HasSubstr("it retrained while loaded"));
  }
  EXPECT_TRUE(downgraded) << document_["verdicts"].dump();
}

TEST_F(Simulate, AWidthLostAtBootIsDowngradedAndLow) {
  const CliRun run = simulate("hgx_a100_8gpu_gpu_x8");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err << why();
  std::set<std::string> codes;
  for (const Json& verdict : verdicts_of("0000:84:00.0")) codes.insert(verdict["code"]);
  EXPECT_TRUE(codes.count("link_width_below_expected")) << document_["verdicts"].dump();
  EXPECT_TRUE(codes.count("bandwidth_below_budget")) << document_["verdicts"].dump();
}

TEST_F(Simulate, TwoGpusBehindAnX8UplinkShareItAndPass) {
  const CliRun run = simulate("two_gpus_shared_x8_uplink");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err << why();
  const double x8_model =
      0.9 * direction_budget_gbps(link_budget(LinkState{PcieGen::kGen4, 8}).value(), Direction::kHostToDevice).value();
  EXPECT_NEAR(median("h2d_ce", "0000:03:00.0", "h2d") / x8_model, 1.0, 0.02);
  EXPECT_NEAR(median("all_gpus_ce", "0000:03:00.0", "h2d") * 2 / x8_model, 1.0, 0.02);
  EXPECT_NEAR(median("group_ce", "port 0000:01:00.0", "h2d") / x8_model, 1.0, 0.02);
}

TEST_F(Simulate, ABusyGpuIsInconclusiveNeverPassOrFail) {
  const CliRun run = simulate("two_gpus_shared_x8_uplink",
                              {{"0000:04:00.0", {{"faults", {{{"event", "busy"}, {"utilization_pct", 70}}}}}}});
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err << why();
  bool busy = false;
  for (const Json& verdict : verdicts_of("0000:04:00.0")) busy = busy || verdict["code"] == "gpu_busy_before_run";
  EXPECT_TRUE(busy) << document_["verdicts"].dump();
}

TEST_F(Simulate, ACorruptedCopyIsCaughtAndNoNumberIsReportedForThatGpu) {
  const CliRun run =
      simulate("two_gpus_shared_x8_uplink", {{"0000:04:00.0", {{"faults", {{{"event", "corrupt_copy"}}}}}}});
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err << why();
  for (const Json& m : document_["measurements"]) {
    EXPECT_NE(m["subject"], "0000:04:00.0") << "a number on corrupted data";
  }
  EXPECT_THAT(document_["verdicts"].dump(), HasSubstr("words of the destination differ from the source"));
}

TEST_F(Simulate, AGpuInMigModeIsNotCopiedThroughAndSaysMig) {
  const CliRun run = simulate("two_gpus_shared_x8_uplink", {{"0000:04:00.0", {{"faults", {{{"event", "mig"}}}}}}});
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err << why();
  EXPECT_THAT(document_["verdicts"].dump(), HasSubstr("MIG mode is on"));
}

// Retrain and verify (issue 27): the link a fault lowered stays low until
// Retrain Link is set on the port above it, which the simulator sees in its
// scratch tree's config space and answers by training the link again; the
// probes after the retrain measure the restored link.
TEST_F(Simulate, RetrainLinkOnTheSimulatedNodeRestoresTheLinkAFaultLowered) {
  const fs::path file = dir_ / "scenario.json";
  std::ofstream(file) << Json{{"machine", fixture("two_gpus_shared_x8_uplink").string()},
                              {"gpus", {{"0000:04:00.0", {{"faults", {{{"after_load_s", 0}, {"link", "gen3x8"}}}}}}}}}
                             .dump();
  // Without --apply: the plan only, as on a real node (and no root needed).
  CliRun run = run_pcieval("retrain 0000:04:00.0 --simulate " + shell_quote(file.string()));
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("dry run: nothing written"));
  run = run_pcieval("retrain 0000:04:00.0 --apply --simulate " + shell_quote(file.string()));
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("retrain: wrote Link Control 0x0060 to 0000:02:08.0"));
  EXPECT_THAT(run.out, HasSubstr("link_downgraded -> pass"));
  EXPECT_THAT(run.out, HasSubstr("after: pass (pcieval pass (simulated node)"));
  // --simulate brings its own machine.
  run = run_pcieval("retrain 0000:04:00.0 --apply --sysfs-root " + shell_quote(dir_.string()) + " --simulate " +
                    shell_quote(file.string()));
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_THAT(run.err, HasSubstr("--simulate reads the scenario's machine: it takes no --sysfs-root"));
}

// The verdicts of status `status` (fail: every failing status).
std::vector<std::string> codes_with(const Json& document, const std::string& status) {
  std::vector<std::string> codes;
  for (const Json& verdict : document["verdicts"]) {
    const std::string is = verdict["status"];
    if (is == status || (status == "fail" && is != "pass" && is != "inconclusive"))
      codes.push_back(verdict["subject"].get<std::string>() + " " + verdict["code"].get<std::string>());
  }
  return codes;
}

// The hung-GPU scenarios wait out the copy deadline (30 s) as on a real node.
TEST_F(Simulate, AHungCopyRetiresItsGpuAsUnresponsiveAndMeasuresTheOther) {
  const CliRun run =
      simulate("two_gpus_shared_x8_uplink", {{"0000:04:00.0", {{"faults", {{{"event", "copy_hang"}}}}}}});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err << why();
  EXPECT_THAT(codes_with(document_, "fail"), ::testing::ElementsAre("0000:04:00.0 gpu_unresponsive"));
  EXPECT_GT(median("h2d_ce", "0000:03:00.0", "h2d"), 0);
}

TEST_F(Simulate, AGpuThatFallsOffTheBusInSoakRoundTwoIsRetiredNamingTheRound) {
  const CliRun run =
      simulate("two_gpus_shared_x8_uplink",
               {{"0000:04:00.0", {{"faults", {{{"at_round", 2}, {"event", "fell_off_bus"}}}}}}}, "--rounds 2");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err << why();
  // Only the lost GPU fails: the other's group copies, alone in round 2,
  // are not held against round 1's shared ones as a dip.
  EXPECT_THAT(codes_with(document_, "fail"), ::testing::ElementsAre("0000:04:00.0 gpu_unresponsive"));
  for (const Json& verdict : verdicts_of("0000:04:00.0")) {
    if (verdict["code"] == "gpu_unresponsive") EXPECT_THAT(verdict["reason"].get<std::string>(), HasSubstr("round 2"));
  }
  // Round 1 measured it.
  ASSERT_EQ(document_["soak"]["rounds"].size(), 2U);
  EXPECT_THAT(document_["soak"]["rounds"][0]["measurements"].dump(), HasSubstr("0000:04:00.0"));
}

TEST_F(Simulate, AnAllReduceThatHangsIsAbortedAndOnlyItIsInconclusive) {
  const CliRun run =
      simulate("two_gpus_shared_x8_uplink", {{"0000:03:00.0", {{"faults", {{{"event", "nccl_allreduce_hang"}}}}}}});
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err << why();
  // The GPUs ran NCCL's kernels the whole time: their links stayed trained,
  // and no link is blamed for the stall.
  EXPECT_THAT(codes_with(document_, "fail"), ::testing::IsEmpty());
  EXPECT_THAT(codes_with(document_, "inconclusive"), ::testing::ElementsAre("probe allreduce_nccl_host probe_failed"));
  EXPECT_THAT(document_["verdicts"].dump(), HasSubstr("communicators aborted"));
}

TEST_F(Simulate, ANcclSetupThatFailsIsInconclusiveNamingNccl) {
  const CliRun run =
      simulate("two_gpus_shared_x8_uplink", {{"0000:04:00.0", {{"faults", {{{"event", "nccl_setup_fail"}}}}}}});
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err << why();
  EXPECT_THAT(codes_with(document_, "inconclusive"), ::testing::ElementsAre("probe allreduce_nccl_host probe_failed"));
  EXPECT_THAT(document_["verdicts"].dump(), HasSubstr("ncclCommInitRank"));
}

TEST_F(Simulate, TheGpusOfANumaNodeShareItsHostMemoryBandwidth) {
  // Both GPUs of the machine are on NUMA node 0, each alone 13.2 GB/s (its
  // x8 uplink); the node's memory gives 10 GB/s to all copies together.
  simulate("two_gpus_shared_x8_uplink", Json::object(), "", {{"host_numa_gbps", {{"0", 10.0}}}});
  ASSERT_FALSE(document_.is_discarded());
  EXPECT_NEAR(median("h2d_ce", "0000:03:00.0", "h2d"), 10.0, 0.2);
  EXPECT_NEAR(median("all_gpus_ce", "0000:03:00.0", "h2d"), 5.0, 0.1);
}

TEST_F(Simulate, BadScenariosAreUsageErrorsInOneLine) {
  // A GPU the machine does not have.
  CliRun run = simulate("two_gpus_shared_x8_uplink", {{"0000:99:00.0", Json::object()}});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("0000:99:00.0 is not an NVIDIA GPU of"));
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  // A fault nobody knows.
  run = simulate("two_gpus_shared_x8_uplink", {{"0000:03:00.0", {{"faults", {{{"event", "melt"}}}}}}});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("unknown event 'melt'"));
  // Another tree as well.
  run = simulate("two_gpus_shared_x8_uplink", Json::object(), "--sysfs-root /nonexistent");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("--simulate reads the scenario's machine"));
}

TEST_F(Simulate, WithoutTheSimulatorBesideItTheErrorSaysWhereToFindIt) {
  const fs::path file = dir_ / "scenario.json";
  std::ofstream(file) << Json{{"machine", fixture("two_gpus_shared_x8_uplink").string()}}.dump();
  const CliRun run = run_pcieval_with_environment("PCIEVAL_SIM_DIR=/nonexistent",
                                                  "check --simulate " + shell_quote(file.string()) + " -q");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("the simulator's libraries are not beside this pcieval"));
}

}  // namespace
}  // namespace pcieval::testing
