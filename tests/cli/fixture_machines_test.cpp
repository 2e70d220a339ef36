// `pcieval check` and `pcieval topo` on every fixture machine: the exit code,
// the table, and a schema-valid results document whose verdicts match what
// each machine's description (tests/fixtures/machines.py) says they must be.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"
#include "report/schema_validation.hpp"

namespace pcieval::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

struct Checked {
  CliRun run;
  json document;
};

Checked check_machine(const std::string& machine, const std::string& extra = "") {
  const auto output = std::filesystem::temp_directory_path() / ("pcieval-cli-" + machine + ".json");
  Checked checked;
  checked.run = run_pcieval("check " + fixture_args(machine) + " -o " + shell_quote(output) + " " + extra);
  const std::string text = slurp(output);
  std::filesystem::remove(output);
  EXPECT_THAT(schema_errors(text), IsEmpty()) << machine;
  checked.document = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return checked;
}

class FixtureMachine : public ::testing::TestWithParam<std::string> {};

TEST_P(FixtureMachine, VerdictsExitCodeAndTableMatchTheMachinesDescription) {
  const std::string machine = GetParam();
  const json expected = json::parse(slurp(fixture(machine) / "expected.json"));
  const Checked checked = check_machine(machine);
  ASSERT_FALSE(checked.document.is_discarded()) << "results document is not JSON";

  // A device may get several verdicts (its links, its path's settings, its
  // copies): the description names the one that decides it, the worst, and
  // the first of equals (the link verdict comes first).
  const auto rank = [](const json& verdict) {
    const std::string status = verdict["status"];
    return status == "pass" ? 0 : status == "inconclusive" ? 1 : 2;
  };
  std::map<std::string, json> verdicts;
  for (const json& verdict : checked.document["verdicts"]) {
    const auto [it, inserted] = verdicts.emplace(verdict["subject"], verdict);
    if (!inserted && rank(verdict) > rank(it->second)) it->second = verdict;
  }

  int want_exit = 0;
  for (const auto& [bdf, device] : expected["devices"].items()) {
    // "inconclusive (link_state_unknown)": a status, optionally with its code.
    const std::string want = device["verdict"];
    const std::string want_status = want.substr(0, want.find(" ("));
    const auto found = verdicts.find(bdf);
    const std::string got = found == verdicts.end() ? "not judged" : std::string(found->second["status"]);
    EXPECT_EQ(got, want_status) << machine << " " << bdf << ": " << device["why"];
    if (want.find(" (") != std::string::npos && found != verdicts.end()) {
      EXPECT_EQ("(" + std::string(found->second["code"]) + ")", want.substr(want.find(" (") + 1)) << bdf;
    }
    if (want_status == "link_downgraded" || want_status == "misconfigured") want_exit = 1;
    if (want_status == "inconclusive" && want_exit == 0) want_exit = 3;
    // Every judged device has a table row ending in its verdict.
    if (found != verdicts.end()) EXPECT_THAT(checked.run.out, HasSubstr(bdf)) << machine;
  }
  EXPECT_EQ(verdicts.size(), std::count_if(expected["devices"].begin(), expected["devices"].end(),
                                           [](const json& d) { return d["verdict"] != "not judged"; }))
      << machine << ": a verdict for a device the description does not judge";
  EXPECT_EQ(checked.run.exit_code, want_exit) << machine << "\n" << checked.run.out << checked.run.err;
  const std::string overall = want_exit == 0 ? "pass" : want_exit == 1 ? "fail" : "inconclusive";
  EXPECT_EQ(checked.document["overall"], overall);
  EXPECT_THAT(checked.run.out, HasSubstr(std::string(checked.document["summary"])));
  EXPECT_EQ(std::string(checked.document["summary"]).find('\n'), std::string::npos);
  EXPECT_TRUE(checked.run.err.empty()) << checked.run.err;
}

INSTANTIATE_TEST_SUITE_P(All, FixtureMachine, ::testing::ValuesIn(fixture_machines()),
                         [](const auto& info) { return info.param; });

TEST(CheckTable, DowngradedGpuRowShowsExpectedAndNegotiated) {
  const auto run = run_pcieval("check " + fixture_args("hgx_a100_8gpu_gpu_x8"));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.out, ::testing::ContainsRegex("0000:84:00.0 +gpu +0000:84:00.0 < [0-9a-f:. <]+ +Gen4 x16 +Gen4 x8 +"
                                                "link_downgraded"));
  EXPECT_THAT(run.out, HasSubstr("runs Gen4 x8, expected Gen4 x16"));
  EXPECT_THAT(run.out, HasSubstr("pcieval fail: 0000:84:00.0 link_downgraded"));
}

TEST(CheckTable, IdleGpusSayToRunTheLoadProbes) {
  const auto run = run_pcieval("check " + fixture_args("esc8000a_e12_idle_gen1"));
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_THAT(run.out, HasSubstr("idle GPUs lower their link speed; run the load probes"));
}

TEST(CheckExpectGpus, FewerGpusThanExpectedIsMissing) {
  const Checked nine = check_machine("hgx_a100_8gpu_gen4", "--expect-gpus 9");
  EXPECT_EQ(nine.run.exit_code, 1);
  ASSERT_FALSE(nine.document.is_discarded());
  const json& verdicts = nine.document["verdicts"];
  const auto node =
      std::find_if(verdicts.begin(), verdicts.end(), [](const json& v) { return v["subject"] == "node"; });
  ASSERT_NE(node, verdicts.end());
  EXPECT_EQ((*node)["status"], "missing");
  EXPECT_EQ((*node)["code"], "gpus_missing");
  EXPECT_THAT(std::string((*node)["reason"]), HasSubstr("found 8 GPUs, expected 9"));
  EXPECT_EQ(check_machine("hgx_a100_8gpu_gen4", "--expect-gpus 8").run.exit_code, 0);
  EXPECT_EQ(check_machine("small_server_no_gpu", "--expect-gpus 1").run.exit_code, 1);
}

TEST(CheckOutput, JsonToStdoutWithDash) {
  const auto run = run_pcieval("check " + fixture_args("small_server_no_gpu") + " -o -");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_THAT(schema_errors(run.out), IsEmpty());
  EXPECT_THAT(run.out, HasSubstr("no NVIDIA GPU found: GPU probes skipped"));
}

TEST(CheckNothingToJudge, SaysSoAndIsInconclusive) {
  // A VM with only virtio devices: no function exposes PCIe link attributes.
  const auto root = std::filesystem::temp_directory_path() / "pcieval-cli-virtio-vm";
  std::filesystem::remove_all(root);
  const auto device = root / "devices" / "pci0000:00" / "0000:00:03.0";
  std::filesystem::create_directories(device);
  std::filesystem::create_directories(root / "bus" / "pci" / "devices");
  std::ofstream(device / "vendor") << "0x1af4\n";
  std::ofstream(device / "device") << "0x1041\n";
  std::ofstream(device / "class") << "0x020000\n";
  std::filesystem::create_directory_symlink("../../../devices/pci0000:00/0000:00:03.0",
                                            root / "bus" / "pci" / "devices" / "0000:00:03.0");
  const auto run = run_pcieval("check --sysfs-root " + shell_quote(root));
  std::filesystem::remove_all(root);
  // A pass needs judged evidence: nothing judged is exit 3, saying so.
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_THAT(run.out, HasSubstr("node: inconclusive [nothing_judged]"));
  EXPECT_THAT(run.out, HasSubstr("pcieval inconclusive: node inconclusive (nothing_judged)"));
}

TEST(Topo, TreeGroupsDevicesByNumaNode) {
  const auto run = run_pcieval("topo " + fixture_args("dgx2_16gpu_plx_gen3"));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("NUMA 0"));
  EXPECT_THAT(run.out, HasSubstr("NUMA 1"));
  EXPECT_THAT(run.out, HasSubstr("16 GPUs"));
}

TEST(Topo, JsonListsEveryGpu) {
  const auto run = run_pcieval("topo --json " + fixture_args("dgx2_16gpu_plx_gen3"));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const json document = json::parse(run.out, nullptr, false);
  ASSERT_FALSE(document.is_discarded());
  const auto gpus = std::count_if(document["devices"].begin(), document["devices"].end(),
                                  [](const json& d) { return d["kind"] == "gpu"; });
  EXPECT_EQ(gpus, 16);
  for (const json& d : document["devices"]) {
    if (d["kind"] == "gpu") EXPECT_EQ(d["path"].size(), 3U) << d["bdf"];
  }
}

}  // namespace
}  // namespace pcieval::testing

namespace pcieval::testing {
namespace {

TEST(CheckTable, NotesAndSharedFunctionsAreShown) {
  // The Milan fixture's XML deliberately disagrees with its sysfs tree.
  const auto run = run_pcieval("check " + fixture_args("milan_nic_x8_in_x16_slot"));
  EXPECT_THAT(run.out, ::testing::HasSubstr("0000:c1:00.0: note: hwloc places 0000:c1:00.0 under 0000:c0:03.2, "
                                            "sysfs under 0000:c0:03.1"));
  EXPECT_THAT(run.out, ::testing::ContainsRegex("0000:41:00.1 +nic .* see 0000:41:00.0\n"));
}

}  // namespace
}  // namespace pcieval::testing
