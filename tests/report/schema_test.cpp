// Emitted documents and the hand-written examples conform to
// results_schema/, and documents that break the contract are rejected (so
// these tests can fail).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "report/results_writer.hpp"
#include "report/sample_results.hpp"
#include "report/schema_validation.hpp"

namespace pcieval {
namespace {

using ::testing::IsEmpty;
using ::testing::Not;
using Json = nlohmann::json;

std::vector<std::string> errors_of(const Json& document) { return testing::schema_errors(document.dump()); }

TEST(ResultsSchemaTest, EmittedDocumentConforms) {
  const std::string text = results_to_json(testing::hgx_spr_results());
  const auto errors = testing::schema_errors(text);
  EXPECT_THAT(errors, IsEmpty()) << testing::join_lines(errors);
}

TEST(ResultsSchemaTest, EmittedDocumentWithProbeEvidenceConforms) {
  const std::string text = results_to_json(testing::hgx_spr_results_probed());
  const auto errors = testing::schema_errors(text);
  EXPECT_THAT(errors, IsEmpty()) << testing::join_lines(errors);
  // The sample holds every kind of new value, nulls included.
  const Json document = Json::parse(text);
  EXPECT_FALSE(document["measurements"].empty());
  EXPECT_TRUE(document["link_samples"][4]["generation"].is_null());
  EXPECT_TRUE(document["devices"][4]["nvml"]["tx_kbps"].is_null());
  EXPECT_TRUE(document["devices"][0]["nvml"].is_null());
}

TEST(ResultsSchemaTest, Version10DocumentWithoutTheNewFieldsConforms) {
  const std::string text = testing::read_text_file(testing::report_test_data_dir() / "pass-1gpu-l40s-genoa-1.0.0.json");
  ASSERT_EQ(Json::parse(text)["schema_version"], "1.0.0");
  ASSERT_FALSE(Json::parse(text).contains("measurements"));
  const auto errors = testing::schema_errors(text);
  EXPECT_THAT(errors, IsEmpty()) << testing::join_lines(errors);
}

TEST(ResultsSchemaTest, EmptyDocumentConforms) {
  const auto errors = testing::schema_errors(results_to_json(Results{}));
  EXPECT_THAT(errors, IsEmpty()) << testing::join_lines(errors);
}

TEST(ResultsSchemaTest, DocumentWithEveryReadingUnknownConforms) {
  Results results = testing::hgx_spr_results();
  for (DeviceRecord& record : results.evidence.devices) {
    record.function.numa_node = make_error("not read");
    record.function.local_cpulist = make_error("not read");
    if (record.function.link) *record.function.link = PortLinkReading{};
    for (Link& link : record.path) link.downstream_end = link.upstream_end = PortLinkReading{};
  }
  results.evidence.topology.reset();
  const auto errors = testing::schema_errors(results_to_json(results));
  EXPECT_THAT(errors, IsEmpty()) << testing::join_lines(errors);
}

TEST(ResultsSchemaTest, EveryExampleConforms) {
  int examples = 0;
  for (const auto& entry : std::filesystem::directory_iterator(testing::results_examples_dir())) {
    if (!testing::is_results_example(entry.path())) continue;
    ++examples;
    const auto errors = testing::schema_errors(testing::read_text_file(entry.path()));
    EXPECT_THAT(errors, IsEmpty()) << entry.path() << "\n" << testing::join_lines(errors);
  }
  EXPECT_GE(examples, 3);
}

TEST(ResultsSchemaTest, ExamplesCarryTheCurrentVersion) {
  for (const auto& entry : std::filesystem::directory_iterator(testing::results_examples_dir())) {
    if (!testing::is_results_example(entry.path())) continue;
    EXPECT_EQ(Json::parse(testing::read_text_file(entry.path()))["schema_version"], kResultsSchemaVersion)
        << entry.path();
  }
}

// Each mutation breaks one rule of the contract; the validator must notice.
struct Mutation {
  const char* name;  // a test name: letters, digits and underscores
  std::function<void(Json&)> apply;
};

void PrintTo(const Mutation& mutation, std::ostream* out) { *out << mutation.name; }

class RejectedDocumentTest : public ::testing::TestWithParam<Mutation> {};

TEST_P(RejectedDocumentTest, IsRejected) {
  Json document = Json::parse(results_to_json(testing::hgx_spr_results_probed()));
  ASSERT_THAT(errors_of(document), IsEmpty());
  GetParam().apply(document);
  EXPECT_THAT(errors_of(document), Not(IsEmpty()));
}

const Mutation kMutations[] = {
    {"status_ok", [](Json& d) { d["verdicts"][0]["status"] = "ok"; }},
    {"speed_as_string", [](Json& d) { d["devices"][1]["link"]["max"]["speed_gts"] = "32.0"; }},
    {"width_as_na", [](Json& d) { d["devices"][1]["path"][0]["expected"]["width"] = "N/A"; }},
    {"generation_8", [](Json& d) { d["devices"][1]["link"]["max"]["generation"] = 8; }},
    {"uppercase_bdf", [](Json& d) { d["devices"][1]["bdf"] = "0000:CA:00.0"; }},
    {"short_bdf", [](Json& d) { d["devices"][1]["bdf"] = "17:00.0"; }},
    {"vendor_id_as_number", [](Json& d) { d["devices"][1]["vendor_id"] = 4318; }},
    {"unknown_kind", [](Json& d) { d["devices"][1]["kind"] = "fpga"; }},
    {"extra_device_field", [](Json& d) { d["devices"][1]["speed"] = 16; }},
    {"extra_top_level_field", [](Json& d) { d["gpu_count"] = 2; }},
    {"missing_verdicts", [](Json& d) { d.erase("verdicts"); }},
    {"missing_unknown", [](Json& d) { d["devices"][1].erase("unknown"); }},
    {"major_version_2", [](Json& d) { d["schema_version"] = "2.0.0"; }},
    {"overall_ok", [](Json& d) { d["overall"] = "ok"; }},
    {"code_with_spaces", [](Json& d) { d["verdicts"][0]["code"] = "Link Width"; }},
    {"position_sideways", [](Json& d) { d["devices"][1]["path"][0]["position"] = "side"; }},
    {"negative_aer_count", [](Json& d) { d["devices"][1]["aer"]["correctable"]["counts"]["RxErr"] = -1; }},
    {"gpus_under_load_as_string", [](Json& d) { d["sources"]["gpus_under_load"] = "no"; }},
    {"verdict_link_without_upstream", [](Json& d) { d["verdicts"][0]["link"].erase("upstream"); }},
    // The measurement engine's fields (1.1).
    {"version_1_8_of_a_later_schema", [](Json& d) { d["schema_version"] = "1.8.0"; }},
    // The probes' GPU faults (1.4).
    {"gpu_fault_without_retired", [](Json& d) { d["probes"][0]["gpu_faults"][0].erase("retired"); }},
    {"gpu_fault_short_bdf", [](Json& d) { d["probes"][0]["gpu_faults"][0]["gpu"] = "ca:00.0"; }},
    {"gpu_fault_empty_error", [](Json& d) { d["probes"][0]["gpu_faults"][0]["error"] = ""; }},
    {"gpu_fault_extra_field", [](Json& d) { d["probes"][0]["gpu_faults"][0]["ordinal"] = 1; }},
    {"only_gpu_faults_as_string", [](Json& d) { d["probes"][0]["only_gpu_faults"] = "yes"; }},
    {"version_1_1_without_measurements", [](Json& d) { d.erase("measurements"); }},
    {"version_1_1_without_probe_settings", [](Json& d) { d.erase("probe_settings"); }},
    {"version_1_1_device_without_nvml", [](Json& d) { d["devices"][2].erase("nvml"); }},
    {"direction_sideways", [](Json& d) { d["measurements"][0]["direction"] = "sideways"; }},
    {"aggregation_sum", [](Json& d) { d["measurements"][0]["aggregation"] = "sum"; }},
    {"method_dma", [](Json& d) { d["measurements"][0]["method"] = "dma"; }},
    {"host_memory_huge", [](Json& d) { d["measurements"][0]["host_memory"] = "huge"; }},
    {"no_trials", [](Json& d) { d["measurements"][0]["trials_gbps"] = Json::array(); }},
    {"trial_as_string", [](Json& d) { d["measurements"][0]["trials_gbps"][0] = "27.5"; }},
    {"negative_median", [](Json& d) { d["measurements"][0]["median_gbps"] = -1; }},
    {"size_zero", [](Json& d) { d["measurements"][0]["size_bytes"] = 0; }},
    {"host_numa_local_as_string", [](Json& d) { d["measurements"][0]["host_numa_local"] = "yes"; }},
    {"gpu_uppercase", [](Json& d) { d["measurements"][0]["gpus"][0] = "0000:CA:00.0"; }},
    {"measurement_extra_field", [](Json& d) { d["measurements"][0]["mean_gbps"] = 27.6; }},
    {"measurement_without_cv", [](Json& d) { d["measurements"][0].erase("cv"); }},
    {"probe_status_ok", [](Json& d) { d["probes"][0]["status"] = "ok"; }},
    {"probe_key_with_spaces", [](Json& d) { d["probes"][0]["key"] = "H2D CE"; }},
    {"probe_without_warnings", [](Json& d) { d["probes"][0].erase("warnings"); }},
    {"probe_mode_fast", [](Json& d) { d["probe_settings"]["mode"] = "fast"; }},
    {"zero_trials_setting", [](Json& d) { d["probe_settings"]["trials"] = 0; }},
    {"sample_source_lspci", [](Json& d) { d["link_samples"][0]["source"] = "lspci"; }},
    {"sample_generation_8", [](Json& d) { d["link_samples"][0]["generation"] = 8; }},
    {"sample_without_width", [](Json& d) { d["link_samples"][0].erase("width"); }},
    {"counter_negative", [](Json& d) { d["counters"][0]["before"] = -1; }},
    {"counter_name_uppercase", [](Json& d) { d["counters"][0]["counter"] = "AER"; }},
    {"nvml_pstate_16", [](Json& d) { d["devices"][1]["nvml"]["pstate"] = 16; }},
    {"nvml_width_as_string", [](Json& d) { d["devices"][1]["nvml"]["current_width"] = "8x"; }},
    {"nvml_extra_field", [](Json& d) { d["devices"][1]["nvml"]["bus_id"] = "00000000:17:00.0"; }},
};

INSTANTIATE_TEST_SUITE_P(Mutations, RejectedDocumentTest, ::testing::ValuesIn(kMutations),
                         [](const ::testing::TestParamInfo<Mutation>& info) { return std::string(info.param.name); });

// valijson ignores keywords it does not know, so a 2020-12-only keyword would
// pass these tests while constraining nothing. Keep the schema to the subset
// its "$comment" names.
//
// An if/then/else holds conditions (a version pattern, fields made required),
// not shapes, so its objects need not be closed.
void check_keywords(const Json& node, const std::string& where, bool in_condition = false) {
  static const std::set<std::string> kUnsupported = {"prefixItems",       "unevaluatedProperties", "unevaluatedItems",
                                                     "dependentRequired", "dependentSchemas",      "$anchor",
                                                     "$dynamicRef",       "$dynamicAnchor",        "$recursiveRef"};
  static const std::set<std::string> kAnnotations = {"$ref", "description", "title", "$comment"};
  if (node.is_array()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      check_keywords(node[i], where + "/" + std::to_string(i), in_condition);
    }
    return;
  }
  if (!node.is_object()) return;
  for (const auto& [key, value] : node.items()) {
    EXPECT_FALSE(kUnsupported.count(key)) << where << " uses " << key;
    if (node.contains("$ref")) EXPECT_TRUE(kAnnotations.count(key)) << where << ": " << key << " beside $ref";
    const bool condition = in_condition || key == "if" || key == "then" || key == "else";
    check_keywords(value, where + "/" + key, condition);
  }
  if (node.contains("properties") && !in_condition) {
    EXPECT_EQ(node.value("additionalProperties", Json(true)), Json(false)) << where << " is not closed";
  }
}

TEST(ResultsSchemaTest, UsesOnlyKeywordsValijsonEnforces) {
  const Json schema = Json::parse(testing::read_text_file(testing::results_schema_path()));
  EXPECT_EQ(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
  EXPECT_TRUE(schema.contains("$id"));
  for (const char* def : {"bdf", "link_state", "link", "device", "verdict", "nvml_or_null", "probe_settings_or_null",
                          "probe", "measurement", "link_sample", "counter"}) {
    EXPECT_TRUE(schema["$defs"].contains(def)) << def;
  }
  check_keywords(schema, "#");
}

TEST(ResultsSchemaTest, BrokenSchemaIsReportedNotPassed) {
  const auto missing = testing::schema_errors("{}", "/nonexistent/schema.json");
  EXPECT_THAT(missing, Not(IsEmpty()));
  EXPECT_THAT(testing::schema_errors("not json"), Not(IsEmpty()));
}

}  // namespace
}  // namespace pcieval
