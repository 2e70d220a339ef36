// The fleet document: written to its schema, read back strictly.
#include "fleet/fleet_json.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fleet_test_data.hpp"
#include "report/schema_validation.hpp"

namespace pcieval {
namespace {

using testing::a100_medians;
using testing::a100_node;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::filesystem::path fleet_schema() {
  return std::filesystem::path(PCIEVAL_SOURCE_DIR) / "results_schema" / "pcieval-fleet.schema.json";
}

// Two nodes of 8 GPUs, one slow GPU, an unreadable file and a duplicate.
Fleet sample_fleet() {
  std::vector<double> slow = a100_medians();
  slow[2] = 19.9;
  std::vector<FleetNode> nodes{node_from_results(a100_node("dgx-01", a100_medians()), "r/dgx-01.json"),
                               node_from_results(a100_node("dgx-02", slow, Overall::kFail), "r/dgx-02.json"),
                               node_without_results("r/bad.json", "r/bad.json", kExitUsage, "unreadable")};
  nodes[1].rank = 1;
  // dgx-01 passes now; its document of the night before failed (1.2.0).
  nodes[0].superseded.push_back(SupersededDocument{
      "r/old/dgx-01.json",
      true,
      Overall::kFail,
      kExitFail,
      "pcieval fail: 0000:17:00.0 Gen4 x8",
      {FleetVerdict{"0000:17:00.0", VerdictStatus::kLinkDowngraded, "link_width_below_expected", "x8 of x16"}}});
  return build_fleet(nodes, {"r/bad.json: /host: missing", "duplicate host dgx-01: a and b; kept b (written later)"},
                     "merge", ToolInfo{"pcieval", "0.1.0"});
}

TEST(FleetJson, ConformsToTheSchema) {
  const std::string text = fleet_to_json(sample_fleet());
  EXPECT_THAT(testing::schema_errors(text, fleet_schema()), IsEmpty());
  // The schema is not a rubber stamp: a wrong exit code and a missing field fail.
  auto document = nlohmann::json::parse(text);
  document["exit_code"] = 4;
  EXPECT_THAT(testing::schema_errors(document.dump(), fleet_schema()), Not(IsEmpty()));
  document = nlohmann::json::parse(text);
  document["nodes"][0].erase("reason");
  EXPECT_THAT(testing::schema_errors(document.dump(), fleet_schema()), Not(IsEmpty()));
}

TEST(FleetJson, NodesSplicedInReadAsOneDocumentDumpedWhole) {
  // The writer renders nodes one at a time; the text must be exactly what
  // dumping the whole document at once gives.
  const std::string text = fleet_to_json(sample_fleet());
  EXPECT_EQ(text, nlohmann::ordered_json::parse(text).dump(2) + "\n");
  EXPECT_EQ(nlohmann::json::parse(text)["nodes"].size(), 3u);
}

TEST(FleetJson, ReadsBackWhatItWrote) {
  const Fleet written = sample_fleet();
  const auto read = fleet_from_json(fleet_to_json(written), "fleet.json");
  ASSERT_TRUE(read.ok()) << read.error().message;
  const Fleet& fleet = read.value();
  EXPECT_EQ(fleet.launch, "merge");
  EXPECT_EQ(fleet.exit_code, 1);
  EXPECT_EQ(fleet.overall, Overall::kFail);
  EXPECT_EQ(fleet.summary, written.summary);
  EXPECT_EQ(fleet.problems, written.problems);
  ASSERT_EQ(fleet.nodes.size(), 3u);
  EXPECT_EQ(fleet.nodes[1].host, "dgx-02");
  EXPECT_EQ(fleet.nodes[1].rank, std::optional<int>(1));
  EXPECT_EQ(fleet.nodes[0].rank, std::nullopt);
  EXPECT_EQ(fleet.nodes[2].has_results, false);
  EXPECT_EQ(fleet.nodes[2].exit_code, 2);
  ASSERT_EQ(fleet.nodes[1].gpus.size(), 16u);
  EXPECT_EQ(fleet.nodes[1].gpus[4].median_gbps, written.nodes[1].gpus[4].median_gbps);
  ASSERT_EQ(fleet.outliers.size(), written.outliers.size());
  ASSERT_FALSE(fleet.outliers.empty());
  EXPECT_EQ(fleet.outliers[0].gpu, "0000:27:00.0");
  EXPECT_EQ(fleet.outliers[0].threshold_gbps, written.outliers[0].threshold_gbps);
  EXPECT_EQ(fleet.groups.size(), written.groups.size());
  ASSERT_EQ(fleet.nodes[0].superseded.size(), 1u);
  EXPECT_EQ(fleet.nodes[0].superseded[0].source, "r/old/dgx-01.json");
  EXPECT_EQ(fleet.nodes[0].superseded[0].overall, Overall::kFail);
  ASSERT_EQ(fleet.nodes[0].superseded[0].verdicts.size(), 1u);
  EXPECT_EQ(fleet.nodes[0].superseded[0].verdicts[0].code, "link_width_below_expected");
  EXPECT_TRUE(fleet.nodes[1].superseded.empty());
  // Written again, the same text.
  EXPECT_EQ(fleet_to_json(fleet), fleet_to_json(written));
}

TEST(FleetJson, RefusesWhatIsNotAFleetDocument) {
  const std::string good = fleet_to_json(sample_fleet());
  const auto with = [&](auto edit) {
    auto document = nlohmann::json::parse(good);
    edit(document);
    return fleet_from_json(document.dump(), "f.json");
  };
  auto truncated = fleet_from_json(good.substr(0, good.size() / 2), "f.json");
  ASSERT_FALSE(truncated.ok());
  EXPECT_THAT(truncated.error().message, HasSubstr("f.json: "));

  auto results = with([](auto& d) { d["kind"] = "pcieval-results"; });
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.error().message, "f.json: /kind: expected \"pcieval-fleet\": not a pcieval fleet document");

  auto major = with([](auto& d) { d["schema_version"] = "2.0.0"; });
  ASSERT_FALSE(major.ok());
  EXPECT_THAT(major.error().message, HasSubstr("/schema_version: fleet schema version 2.0.0 is not supported"));

  auto missing = with([](auto& d) { d["nodes"][1].erase("exit_code"); });
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("/nodes/1/exit_code"));

  auto code = with([](auto& d) { d["exit_code"] = 7; });
  ASSERT_FALSE(code.ok());
  EXPECT_THAT(code.error().message, HasSubstr("/exit_code"));

  auto direction = with([](auto& d) { d["outliers"][0]["direction"] = "sideways"; });
  ASSERT_FALSE(direction.ok());
  EXPECT_THAT(direction.error().message, HasSubstr("/outliers/0/direction: unknown value 'sideways'"));

  // A later minor version's new field is ignored.
  EXPECT_TRUE(with([](auto& d) {
                d["schema_version"] = "1.4.0";
                d["new_field"] = 1;
              }).ok());
}

// 1.2.0 added nodes[].superseded; a 1.1 document has none and still reads.
TEST(FleetJson, ADocumentWithoutSupersededReadsAsReplacingNothing) {
  nlohmann::json document = nlohmann::json::parse(fleet_to_json(sample_fleet()));
  document["schema_version"] = "1.1.0";
  for (auto& node : document["nodes"]) node.erase("superseded");
  EXPECT_THAT(testing::schema_errors(document.dump(), fleet_schema()), IsEmpty());
  const auto read = fleet_from_json(document.dump(), "fleet.json");
  ASSERT_TRUE(read.ok()) << read.error().message;
  for (const FleetNode& node : read->nodes) EXPECT_TRUE(node.superseded.empty()) << node.host;
}

TEST(FleetJson, TheExampleConformsAndReads) {
  const auto path = testing::results_examples_dir() / "fleet-hgx-a100.json";
  const std::string text = testing::read_text_file(path);
  ASSERT_FALSE(text.empty()) << path;
  EXPECT_THAT(testing::schema_errors(text, fleet_schema()), IsEmpty());
  const auto fleet = read_fleet_file(path.string());
  ASSERT_TRUE(fleet.ok()) << fleet.error().message;
  EXPECT_FALSE(fleet->outliers.empty());
  EXPECT_EQ(fleet->exit_code, 1);
}

}  // namespace
}  // namespace pcieval
