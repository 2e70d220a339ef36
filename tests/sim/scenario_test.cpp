// The scenario of a simulated node (sim/scenario.hpp, sim/README.md): the
// parser, the JSON Schema beside it, and every scenario in the tree checked
// by both (against the fixture machines this build made).
#include "sim/scenario.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "report/schema_validation.hpp"

namespace pcieval::sim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using Json = nlohmann::json;

const fs::path kSchema = fs::path(PCIEVAL_SOURCE_DIR) / "sim" / "scenario.schema.json";
const fs::path kScenarios = fs::path(PCIEVAL_SOURCE_DIR) / "tests" / "sim" / "scenarios";

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ScenarioLinks, ReadAsPeopleWriteThem) {
  EXPECT_EQ(parse_link_name("gen3x16").value(), (LinkState{PcieGen::kGen3, 16}));
  EXPECT_EQ(parse_link_name("Gen5 x8").value(), (LinkState{PcieGen::kGen5, 8}));
  EXPECT_EQ(parse_link_name(" gen1 X16 ").value(), (LinkState{PcieGen::kGen1, 16}));
  EXPECT_FALSE(parse_link_name("gen3").ok());
  EXPECT_FALSE(parse_link_name("gen9x16").ok());
  EXPECT_FALSE(parse_link_name("gen4x3").ok());
  EXPECT_THAT(parse_link_name("16 GT/s").error().message, HasSubstr("write gen3x16"));
}

TEST(Scenario, EveryFieldOfTheReadmeIsRead) {
  const auto scenario = parse_scenario(R"({
    "machine": "../fixtures/hgx",
    "gpus": {"0000:84:00.0": {"name": "NVIDIA A100-SXM4-80GB", "idle_link": "gen1x16", "copy_efficiency": 0.8,
                              "sm_efficiency": 0.7,
                              "faults": [{"after_load_s": 1.5, "link": "gen3x16"},
                                         {"at_round": 2, "event": "fell_off_bus"},
                                         {"event": "busy", "utilization_pct": 70}, {"event": "copy_hang"},
                                         {"event": "corrupt_copy"}, {"event": "mig"},
                                         {"event": "nccl_setup_fail"}, {"event": "nccl_allreduce_hang"},
                                         {"event": "fell_off_bus", "after_load_s": 2}]}},
    "host_numa_gbps": {"0": 120.0, "1": 110.5}})",
                                       "/tmp/scenarios/s.json");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  EXPECT_EQ(scenario->machine, fs::path("/tmp/fixtures/hgx"));
  const GpuSpec& gpu = scenario->gpus.at(parse_pci_address("0000:84:00.0").value());
  EXPECT_EQ(gpu.name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(gpu.idle_link, (LinkState{PcieGen::kGen1, 16}));
  EXPECT_DOUBLE_EQ(gpu.copy_efficiency, 0.8);
  EXPECT_DOUBLE_EQ(gpu.sm_efficiency, 0.7);
  ASSERT_EQ(gpu.faults.size(), 9U);
  EXPECT_EQ(gpu.faults[0].kind, FaultKind::kLink);
  EXPECT_DOUBLE_EQ(gpu.faults[0].after_load_s, 1.5);
  EXPECT_EQ(gpu.faults[0].link, (LinkState{PcieGen::kGen3, 16}));
  EXPECT_EQ(gpu.faults[1].kind, FaultKind::kFellOffBus);
  EXPECT_EQ(gpu.faults[1].at_round, 2);
  EXPECT_DOUBLE_EQ(gpu.faults[1].after_load_s, 0);
  EXPECT_EQ(gpu.faults[6].kind, FaultKind::kNcclSetupFail);
  EXPECT_EQ(gpu.faults[7].kind, FaultKind::kNcclAllReduceHang);
  EXPECT_FALSE(gpu.faults[8].at_round.has_value());
  EXPECT_DOUBLE_EQ(gpu.faults[8].after_load_s, 2);
  EXPECT_EQ(gpu.faults[2].utilization_pct, 70);
  EXPECT_EQ(gpu.faults[5].kind, FaultKind::kMig);
  EXPECT_DOUBLE_EQ(scenario->host_numa_gbps.at(1), 110.5);
}

// Each bad scenario is refused by the parser naming the key, and by the
// schema: the two describe the same files.
TEST(Scenario, BadScenariosAreRefusedByTheParserAndTheSchema) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"gpus": {}})", "\"machine\""},
      {R"({"machine": "m", "gpus": {"0000:84:00.0": {"speed": 1}}})", "unknown key 'speed'"},
      {R"({"machine": "m", "gpus": {"0000:84:00.0": {"faults": [{"event": "melt"}]}}})", "unknown event 'melt'"},
      {R"({"machine": "m", "gpus": {"0000:84:00.0": {"faults": [{"link": "gen3"}]}}})", "write gen3x16"},
      {R"({"machine": "m", "gpus": {"0000:84:00.0": {"faults": [{"event": "busy", "utilization_pct": 170}]}}})",
       "utilization_pct"},
      {R"({"machine": "m", "gpus": {"0000:84:00.0": {"copy_efficiency": 1.5}}})", "copy_efficiency"},
      {R"({"machine": "m", "gpus": {"84:00.0x": {}}})", "not a PCI address"},
      {R"({"machine": "m", "extra": 1})", "unknown key 'extra'"},
      {R"({"machine": "m", "gpus": {"0000:84:00.0": {"faults": [{"event": "fell_off_bus", "at_round": 0}]}}})",
       "at_round: 0 is not a soak round"},
      {R"({"machine": "m", "gpus": {"0000:84:00.0": {"faults": [{"event": "mig", "at_round": 2}]}}})",
       "unknown key 'at_round'"},
      {R"({"machine": "m", "acs_detour_peer_gbps": 0})", "acs_detour_peer_gbps: not a positive number"},
      {R"({"machine": "m", "root_complex_peer_gbps": "fast"})", "root_complex_peer_gbps: not a positive number"},
      {R"({"machine": "m", "no_peer_access": [["0000:03:00.0"]]})", "no_peer_access[0]: not a pair"},
      {R"({"machine": "m", "no_peer_access": [["0000:03:00.0", "03:00"]]})", "no_peer_access[0]: not a pair"},
  };
  for (const auto& [text, said] : bad) {
    const auto scenario = parse_scenario(text, "/tmp/s.json");
    ASSERT_FALSE(scenario.ok()) << text;
    EXPECT_THAT(scenario.error().message, HasSubstr(said)) << text;
    EXPECT_FALSE(testing::schema_errors(text, kSchema).empty()) << "the schema accepts " << text;
  }
}

// The scenarios in the tree name their machine as build/fixtures/ from the
// source root (the README's build folder); here it is this build's.
TEST(Scenario, EveryScenarioInTheTreeIsValidAndItsGpusAreItsMachines) {
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(kScenarios)) {
    if (entry.path().extension() != ".json") continue;
    const std::string text = read(entry.path());
    EXPECT_THAT(testing::schema_errors(text, kSchema), IsEmpty()) << entry.path();
    Json document = Json::parse(text);
    const std::string machine = document["machine"];
    const std::string prefix = "../../../build/fixtures/";
    ASSERT_EQ(machine.rfind(prefix, 0), 0U) << entry.path() << ": machine " << machine;
    document["machine"] = (fs::path(PCIEVAL_FIXTURES_DIR) / machine.substr(prefix.size())).string();
    const fs::path copy = fs::temp_directory_path() / ("pcieval-scenario-" + entry.path().filename().string());
    std::ofstream(copy) << document.dump();
    const auto scenario = load_scenario(copy);
    fs::remove(copy);
    EXPECT_TRUE(scenario.ok()) << entry.path() << ": " << scenario.error().message;
    ++checked;
  }
  EXPECT_GE(checked, 8);
}

TEST(Scenario, PeerRatesAndPairsWithoutPeerAccessAreReadWithDefaultsFromPublishedNumbers) {
  const auto defaults = parse_scenario(R"({"machine": "m"})", "/tmp/s.json");
  ASSERT_TRUE(defaults.ok()) << defaults.error().message;
  EXPECT_DOUBLE_EQ(defaults.value().root_complex_peer_gbps, 26.3);
  EXPECT_DOUBLE_EQ(defaults.value().acs_detour_peer_gbps, 10.5);
  EXPECT_TRUE(defaults.value().no_peer_access.empty());
  const std::string text = R"({"machine": "m", "root_complex_peer_gbps": 20, "acs_detour_peer_gbps": 7.5,
                                "no_peer_access": [["0000:a4:00.0", "0000:03:00.0"]]})";
  EXPECT_THAT(testing::schema_errors(text, kSchema), IsEmpty());
  const auto set = parse_scenario(text, "/tmp/s.json");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_DOUBLE_EQ(set.value().root_complex_peer_gbps, 20);
  EXPECT_DOUBLE_EQ(set.value().acs_detour_peer_gbps, 7.5);
  // Kept with the lower address first, whichever way it was written.
  const PciAddress low = parse_pci_address("0000:03:00.0").value();
  const PciAddress high = parse_pci_address("0000:a4:00.0").value();
  EXPECT_EQ(set.value().no_peer_access, (std::set<std::pair<PciAddress, PciAddress>>{{low, high}}));
}

TEST(Scenario, APairWithoutPeerAccessMustBeGpusOfTheMachine) {
  const fs::path file = fs::temp_directory_path() / "pcieval-scenario-missing-peer.json";
  std::ofstream(file) << Json{{"machine", (fs::path(PCIEVAL_FIXTURES_DIR) / "hgx_a100_8gpu_gen4").string()},
                              {"no_peer_access", Json::parse(R"([["0000:03:00.0", "0000:05:00.0"]])")}}
                             .dump();
  const auto scenario = load_scenario(file);
  fs::remove(file);
  ASSERT_FALSE(scenario.ok());
  EXPECT_THAT(scenario.error().message, HasSubstr("no_peer_access: 0000:05:00.0 is not an NVIDIA GPU of"));
}

TEST(Scenario, AMachineWithoutTheNamedGpuIsRefused) {
  const fs::path file = fs::temp_directory_path() / "pcieval-scenario-missing-gpu.json";
  std::ofstream(file) << Json{{"machine", (fs::path(PCIEVAL_FIXTURES_DIR) / "small_server_no_gpu").string()},
                              {"gpus", {{"0000:03:00.0", Json::object()}}}}
                             .dump();
  const auto scenario = load_scenario(file);
  fs::remove(file);
  ASSERT_FALSE(scenario.ok());
  EXPECT_THAT(scenario.error().message, HasSubstr("0000:03:00.0 is not an NVIDIA GPU of"));
}

TEST(Scenario, TheGpusOfATreeAreItsNvidiaDisplayAnd3dControllersInPciOrder) {
  const auto gpus = gpus_of_tree(fs::path(PCIEVAL_FIXTURES_DIR) / "hgx_a100_8gpu_gen4" / "sys");
  ASSERT_EQ(gpus.size(), 8U);
  EXPECT_EQ(to_string(gpus.front()), "0000:03:00.0");
  EXPECT_EQ(to_string(gpus.back()), "0000:a4:00.0");
  EXPECT_TRUE(gpus_of_tree(fs::path(PCIEVAL_FIXTURES_DIR) / "small_server_no_gpu" / "sys").empty());
}

}  // namespace
}  // namespace pcieval::sim
