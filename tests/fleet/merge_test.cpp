// The merge's own reading of node documents (fleet/node_document.hpp) against
// the full results reader, and the thread pool (fleet/merge.hpp) against one
// thread.
#include "fleet/merge.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fleet/fleet_json.hpp"
#include "fleet/node_document.hpp"
#include "fleet_test_data.hpp"
#include "report/results_reader.hpp"
#include "report/results_writer.hpp"

namespace pcieval {
namespace {

using testing::a100_medians;
using testing::a100_node;

class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("pcieval-fleet-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "-" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  // TEST DATA: n A100 nodes; every fifth fails, every seventh is
  // inconclusive, node 3's GPU 2 is slow (an outlier).
  std::vector<std::string> fleet_documents(std::size_t n) const {
    std::vector<std::string> paths;
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<double> medians = a100_medians();
      if (i == 3) medians[2] = 19.9;
      const Overall overall = i % 5 == 4 ? Overall::kFail : i % 7 == 6 ? Overall::kInconclusive : Overall::kPass;
      const std::string host = "dgx-" + std::to_string(100 + i);
      paths.push_back(write(host + ".json", results_to_json(a100_node(host, medians, overall))));
    }
    return paths;
  }

  std::filesystem::path dir_;
};

// The entry as the merge made it before (the full reader, then
// node_from_results), as fleet JSON so that a difference shows in full.
std::string entry_json(const FleetNode& node) {
  return fleet_to_json(build_fleet({node}, {}, "merge", ToolInfo{"pcieval", "test"}));
}

std::vector<std::string> example_documents() {
  const auto examples = std::filesystem::path(PCIEVAL_SOURCE_DIR) / "results_schema" / "examples";
  return {(examples / "pass-1gpu-l40s-genoa.json").string(), (examples / "fail-downgraded-h100-spr.json").string(),
          (examples / "pass-no-gpu-epyc-storage.json").string()};
}

TEST_F(MergeTest, EachEntryIsTheFullReadersEntry) {
  std::vector<std::string> paths = fleet_documents(8);
  for (const std::string& example : example_documents()) paths.push_back(example);
  NodeDocumentReader reader;
  for (const std::string& path : paths) {
    auto full = read_results_file(path);
    ASSERT_TRUE(full) << full.error().message;
    auto fast = reader.read_file(path);
    ASSERT_TRUE(fast) << fast.error().message;
    EXPECT_EQ(entry_json(fast.value()), entry_json(node_from_results(full.value(), path))) << path;
  }
  // Read by the fast path itself, not handed over to the full reader.
  EXPECT_EQ(reader.full_reads(), 0u);
}

// Each damage is one the full reader refuses; the merge must refuse it too,
// with the full reader's line: the file, the JSON pointer, the problem.
TEST_F(MergeTest, RefusedDocumentsGetTheFullReadersErrorLine) {
  const nlohmann::json good =
      nlohmann::json::parse(results_to_json(a100_node("dgx-01", a100_medians(), Overall::kFail)));
  std::vector<std::pair<std::string, nlohmann::json>> damaged;
  const auto damage = [&](const std::string& what, const auto& edit) {
    nlohmann::json doc = good;
    edit(doc);
    damaged.emplace_back(what, doc);
  };
  damage("median as text", [](auto& d) { d["measurements"][3]["median_gbps"] = "fast"; });
  damage("median above max", [](auto& d) { d["measurements"][1]["median_gbps"] = 99.0; });
  damage("no hostname", [](auto& d) { d["host"].erase("hostname"); });
  damage("unknown reason code", [](auto& d) { d["verdicts"][0]["code"] = "gremlins"; });
  damage("schema 2", [](auto& d) { d["schema_version"] = "2.0.0"; });
  damage("generation 9", [](auto& d) { d["devices"][2]["path"][1]["upstream_max"]["generation"] = 9; });
  damage("rate of another generation",
         [](auto& d) { d["devices"][0]["path"][0]["downstream_max"]["speed_gts"] = 8.0; });
  damage("bad address", [](auto& d) { d["measurements"][0]["gpus"][0] = "17:00"; });
  damage("width as float", [](auto& d) { d["devices"][1]["path"][0]["upstream_max"]["width"] = 16.0; });
  damage("negative count", [](auto& d) { d["measurements"][5]["size_bytes"] = -1; });
  damage("no probes", [](auto& d) { d.erase("probes"); });
  damage("notes not strings", [](auto& d) { d["notes"] = {1}; });
  std::vector<std::pair<std::string, std::string>> texts;
  for (const auto& [what, doc] : damaged) texts.emplace_back(what, doc.dump(2));
  const std::string whole = good.dump(2);
  texts.emplace_back("truncated", whole.substr(0, whole.size() / 2));
  texts.emplace_back("trailing garbage", whole + "x");
  texts.emplace_back("not JSON", "node dgx-01 was rebooted\n");

  NodeDocumentReader reader;
  for (const auto& [what, text] : texts) {
    const auto full = results_from_json(text, "dgx-01.json");
    ASSERT_FALSE(full) << what << ": the full reader accepts it";
    const auto fast = reader.read(text, "dgx-01.json", "dgx-01.json");
    ASSERT_FALSE(fast) << what;
    EXPECT_EQ(fast.error().message, full.error().message) << what;
  }
  EXPECT_EQ(reader.full_reads(), texts.size());
  // Still the same reader: a good document after the bad ones reads.
  EXPECT_TRUE(reader.read(whole, "dgx-01.json", "dgx-01.json"));
}

TEST_F(MergeTest, ARepeatedKeyReadsAsTheFullReaderReadsIt) {
  std::string text = results_to_json(a100_node("dgx-01", a100_medians()));
  const std::string key = "\"hostname\": \"dgx-01\"";
  text.replace(text.find(key), key.size(), key + ", \"hostname\": \"dgx-02\"");
  const auto full = results_from_json(text, "x.json");
  ASSERT_TRUE(full) << full.error().message;
  NodeDocumentReader reader;
  const auto fast = reader.read(text, "x.json", "x.json");
  ASSERT_TRUE(fast) << fast.error().message;
  EXPECT_EQ(fast.value().host, full.value().evidence.host.hostname);
}

TEST_F(MergeTest, AnyJobCountGivesTheOneJobFleet) {
  std::vector<std::string> paths = fleet_documents(30);
  for (const std::string& example : example_documents()) paths.push_back(example);
  paths.push_back((dir_ / "missing.json").string());
  paths.push_back(write("notes.txt", "not a document\n"));
  paths.push_back(paths[4]);  // a host given twice
  const ToolInfo tool{"pcieval", "test"};
  const std::string one_job = fleet_to_json(merge_node_documents(paths, 1, tool));
  const Fleet fleet = merge_node_documents(paths, 1, tool);
  EXPECT_EQ(fleet.exit_code, kExitFail);
  EXPECT_EQ(fleet.nodes.size(), 35u);
  EXPECT_EQ(fleet.problems.size(), 3u);
  ASSERT_EQ(fleet.outliers.size(), 2u);  // dgx-103's GPU 2, h2d and d2h
  EXPECT_EQ(fleet.outliers[0].host, "dgx-103");
  for (const std::size_t jobs : {2u, 3u, 8u, 64u}) {
    EXPECT_EQ(fleet_to_json(merge_node_documents(paths, jobs, tool)), one_job) << jobs << " jobs";
  }
}

TEST_F(MergeTest, AnErrorInDocumentKNamesItWhateverTheJobCount) {
  std::vector<std::string> paths = fleet_documents(12);
  constexpr std::size_t kBad = 7;
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(paths[kBad]));
  doc["measurements"][3]["median_gbps"] = "fast";
  std::ofstream(paths[kBad], std::ios::trunc) << doc.dump(2);
  for (const std::size_t jobs : {1u, 2u, 4u, 12u, 32u}) {
    const ReadInputs read = read_node_documents(paths, jobs);
    ASSERT_EQ(read.inputs.size(), paths.size());
    EXPECT_THAT(read.problems, ::testing::ElementsAre(paths[kBad] + ": /measurements/3/median_gbps: expected a number"))
        << jobs << " jobs";
    for (std::size_t i = 0; i < paths.size(); ++i) {
      const FleetInput& input = read.inputs[i];
      EXPECT_EQ(input.order, i);
      EXPECT_EQ(input.node.source, paths[i]);
      EXPECT_EQ(input.node.has_results, i != kBad) << i;
      if (i == kBad) {
        EXPECT_EQ(input.node.exit_code, kExitUsage);
        EXPECT_EQ(input.node.host, paths[kBad]);
      }
    }
  }
}

}  // namespace
}  // namespace pcieval
