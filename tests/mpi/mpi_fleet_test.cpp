// Fleet runs under a real MPI launcher: `mpirun --oversubscribe -np 4 pcieval
// check ...` on this machine, each rank judging a different fixture machine
// ("{rank}" in --sysfs-root and --topology-xml, --fleet-one-node-per-rank).
// Real ranks, a real gather on rank 0, a real hang and a real timeout; no GPU,
// so no measurements (the outlier rule is tested by tests/fleet and
// tests/cli/fleet_cli_test on generated documents).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
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

namespace fs = std::filesystem;

class MpiFleet : public ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    if (!PCIEVAL_TEST_HAVE_MPI) GTEST_SKIP() << "pcieval was built without MPI (no MPI library found at configure)";
    if (std::system("command -v mpirun >/dev/null 2>&1") != 0) GTEST_SKIP() << "mpirun is not installed";
  }

  // node<i>/sys and node<i>/topology.xml: links to the fixture machine.
  void node(int i, const std::string& machine) {
    const fs::path at = dir_ / ("node" + std::to_string(i));
    fs::create_directories(at);
    fs::create_directory_symlink(fixture(machine) / "sys", at / "sys");
    fs::create_symlink(fixture(machine) / "topology.xml", at / "topology.xml");
  }

  // A rank slower than the fleet's timeout: one of its sysfs reads stalls
  // (PCIEVAL_TEST_STALL_SYSFS_READ, app/check_command.cpp), as a config read
  // held by a wedged device would, until the sysfs deadline (5 s) gives it up.
  // (A FIFO in sysfs no longer stalls anything: sysfs reads refuse anything
  // but a regular file, issue 29 item 12.) Returns the environment to run with.
  std::string hung_node(int i, const std::string& machine) {
    const fs::path at = dir_ / ("node" + std::to_string(i));
    fs::create_directories(at);
    fs::copy(fixture(machine) / "sys", at / "sys", fs::copy_options::recursive);
    fs::copy(fixture(machine) / "topology.xml", at / "topology.xml");
    for (const auto& entry : fs::recursive_directory_iterator(at / "sys")) {
      if (entry.path().filename() == "current_link_speed") {
        return "PCIEVAL_TEST_STALL_SYSFS_READ=" + shell_quote(entry.path().string()) + " ";
      }
    }
    ADD_FAILURE() << "no current_link_speed in " << machine;
    return "";
  }

  CliRun mpirun(int ranks, const std::string& args, const std::string& environment = "") {
    const std::string command =
        environment +
        "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 mpirun --oversubscribe -np " +
        std::to_string(ranks) + " " + PCIEVAL_BINARY + " check --sysfs-root " +
        shell_quote((dir_ / "node{rank}" / "sys").string()) + " --topology-xml " +
        shell_quote((dir_ / "node{rank}" / "topology.xml").string()) + " " + args;
    return run_shell(command, dir_);
  }

  nlohmann::json fleet_document() {
    const std::string text = slurp(dir_ / "fleet.json");
    const fs::path schema = fs::path(PCIEVAL_SOURCE_DIR) / "results_schema" / "pcieval-fleet.schema.json";
    EXPECT_THAT(schema_errors(text, schema), IsEmpty());
    return nlohmann::json::parse(text);
  }

  std::string fleet_output() { return " --fleet-output " + shell_quote(dir_ / "fleet.json"); }
};

TEST_F(MpiFleet, FourRanksFourNodesGatheredOnRankZero) {
  node(0, "hgx_a100_8gpu_gen4");
  node(1, "small_server_no_gpu");
  node(2, "hgx_a100_8gpu_gpu_x8");    // one GPU trained at x8: fail
  node(3, "esc8000a_e12_idle_gen1");  // idle GPUs at Gen1: inconclusive
  const CliRun run = mpirun(4, "--fleet-one-node-per-rank" + fleet_output());
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;  // the worst node's
  // One table, from rank 0 alone.
  EXPECT_EQ(run.out.find("HOST"), run.out.rfind("HOST")) << run.out;
  EXPECT_THAT(run.out, HasSubstr("/rank2  fail          1     0000:84:00.0 link_downgraded"));
  EXPECT_THAT(run.out, HasSubstr("/rank3  inconclusive  3     0000:01:00.0 inconclusive (gpu_link_speed_idle"));
  EXPECT_THAT(run.out, HasSubstr("pcieval fleet fail: 4 nodes, 2 pass, 1 fail"));
  const nlohmann::json fleet = fleet_document();
  EXPECT_EQ(fleet["launch"], "mpi");
  EXPECT_EQ(fleet["exit_code"], 1);
  ASSERT_EQ(fleet["nodes"].size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(fleet["nodes"][i]["rank"], i);
    EXPECT_EQ(fleet["nodes"][i]["has_results"], true);
  }
  EXPECT_EQ(fleet["nodes"][0]["overall"], "pass");
  EXPECT_EQ(fleet["nodes"][1]["reason"], "pcieval pass: 2 devices at expected link state");
  EXPECT_EQ(fleet["nodes"][2]["verdicts"][0]["code"], "link_width_below_expected");
  // Fixture nodes have no GPUs of their own to reduce over: said, not run.
  EXPECT_EQ(fleet["allreduce"]["status"], "skipped");
  EXPECT_EQ(fleet["allreduce"]["reason"],
            "the nodes judged a PCI tree from --sysfs-root/--topology-xml, not their own GPUs");
  EXPECT_THAT(run.out, HasSubstr("fleet all-reduce skipped: the nodes judged a PCI tree"));
}

TEST_F(MpiFleet, AllNodesPassExitsZero) {
  node(0, "hgx_a100_8gpu_gen4");
  node(1, "small_server_no_gpu");
  node(2, "h100_pcie_gen5_in_gen4_slot");
  node(3, "dgx2_16gpu_plx_gen3");
  const CliRun run =
      mpirun(4, "--fleet-one-node-per-rank -q" + fleet_output() + " --fleet-html " + shell_quote(dir_ / "fleet.html"));
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;  // -q: no table
  EXPECT_EQ(fleet_document()["nodes"].size(), 4u);
  // Rank 0 writes the fleet page beside the document.
  const std::string page = slurp(dir_ / "fleet.html");
  EXPECT_THAT(page, HasSubstr("<div class=\"result-word\">PASS</div>"));
  EXPECT_THAT(page, HasSubstr("<b>4 nodes</b>: 4 pass, 0 fail, 0 inconclusive"));
}

TEST_F(MpiFleet, ANodeWhoseCheckErrorsIsInconclusiveWithExitTwo) {
  node(0, "hgx_a100_8gpu_gen4");
  node(1, "small_server_no_gpu");
  node(2, "h100_pcie_gen5_in_gen4_slot");
  fs::create_directories(dir_ / "node3");  // no sysfs tree at all
  const CliRun run = mpirun(4, "--fleet-one-node-per-rank" + fleet_output());
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_THAT(run.err, HasSubstr("pcieval: error: "));  // rank 3's own reason
  EXPECT_THAT(run.out, HasSubstr("/rank3  inconclusive  2     the check on "));
  const nlohmann::json fleet = fleet_document();
  EXPECT_EQ(fleet["nodes"][3]["has_results"], false);
  EXPECT_EQ(fleet["nodes"][3]["exit_code"], 2);
}

TEST_F(MpiFleet, AHungRankTimesOutAsInconclusiveAndTheRunCompletes) {
  node(0, "hgx_a100_8gpu_gen4");
  node(1, "small_server_no_gpu");
  node(2, "h100_pcie_gen5_in_gen4_slot");
  const std::string stall = hung_node(3, "small_server_no_gpu");
  const auto started = std::chrono::steady_clock::now();
  const CliRun run = mpirun(4, "--fleet-one-node-per-rank --fleet-timeout 3" + fleet_output(), stall);
  const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // Rank 0 ends the job with MPI_Abort(fleet's code): the hung rank never
  // reaches MPI_Finalize. Open MPI's mpirun exits with that code.
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  EXPECT_LT(took_s, 60);
  EXPECT_THAT(run.out, HasSubstr("/rank3  inconclusive  3     no results from rank 3 within 3 s"));
  const nlohmann::json fleet = fleet_document();
  EXPECT_EQ(fleet["exit_code"], 3);
  EXPECT_EQ(fleet["nodes"][3]["has_results"], false);
  EXPECT_EQ(fleet["nodes"][0]["has_results"], true);
}

TEST_F(MpiFleet, RanksOfOneHostAreOneNode) {
  // Without --fleet-one-node-per-rank the 4 ranks share this host's memory:
  // one node, checked once (by rank 0, node index 0); the others wait.
  node(0, "hgx_a100_8gpu_gpu_x8");
  const CliRun run = mpirun(4, fleet_output());
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const nlohmann::json fleet = fleet_document();
  ASSERT_EQ(fleet["nodes"].size(), 1u);
  EXPECT_EQ(fleet["nodes"][0]["rank"], 0);
  EXPECT_THAT(run.out, HasSubstr("pcieval fleet fail: 1 node, 0 pass, 1 fail"));
}

// Issue 27: four simulated nodes (two A100s behind one switch each) under
// mpirun, '{rank}' naming each rank's scenario; node 2's second GPU copies at
// 0.75 of its link where the others get 0.9. The fleet names it an outlier.
TEST_F(MpiFleet, FourSimulatedNodesNameTheSlowGpuAsTheFleetsOutlier) {
  for (int i = 0; i < 4; ++i) {
    nlohmann::json scenario{{"machine", fixture("two_gpus_shared_x8_uplink").string()}};
    if (i == 2) scenario["gpus"]["0000:04:00.0"]["copy_efficiency"] = 0.75;
    std::ofstream(dir_ / ("scenario" + std::to_string(i) + ".json")) << scenario.dump();
  }
  const CliRun run = run_shell(
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 mpirun --oversubscribe -np 4 " +
          std::string(PCIEVAL_BINARY) + " check --simulate " + shell_quote((dir_ / "scenario{rank}.json").string()) +
          " --fleet-one-node-per-rank --copy-mib 32" + fleet_output(),
      dir_);
  // Each node passes alone (0.75 of the link is within its budget): only
  // the fleet sees the GPU is slower than its 7 twins. An outlier is
  // reported, not failed (fleet/fleet.hpp).
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("fleet all-reduce skipped: the nodes are simulated"));
  EXPECT_THAT(run.out, HasSubstr("; 2 outlier GPUs ("));
  EXPECT_THAT(run.out, HasSubstr("/rank2 0000:04:00.0 d2h_ce"));
  const nlohmann::json fleet = fleet_document();
  ASSERT_EQ(fleet["nodes"].size(), 4u);
  for (const auto& node : fleet["nodes"]) {
    EXPECT_THAT(node["reason"].get<std::string>(), HasSubstr("(simulated node)"));
  }
  ASSERT_FALSE(fleet["outliers"].empty()) << fleet.dump(2);
  for (const auto& outlier : fleet["outliers"]) {
    EXPECT_EQ(outlier["gpu"], "0000:04:00.0") << outlier.dump();
    EXPECT_THAT(outlier["host"].get<std::string>(), ::testing::EndsWith("/rank2")) << outlier.dump();
  }
}

}  // namespace
}  // namespace pcieval::testing
