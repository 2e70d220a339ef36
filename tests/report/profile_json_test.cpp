#include "report/profile_json.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report/results_reader.hpp"
#include "report/results_writer.hpp"

namespace pcieval {
namespace {

using ::testing::HasSubstr;

// A burn-in profile as a site running HGX H100 and Dell A100 PCIe nodes
// might write it.
constexpr const char* kBurnIn = R"({
  "name": "burn-in",
  "description": "stricter than the defaults for new nodes",
  "defaults": { "floor_fraction": 0.8, "max_cv": 0.05 },
  "overrides": [
    { "match": { "device_id": "0x20B5" }, "per_probe": [ { "probe": "h2d_ce", "direction": "h2d", "floor_fraction": 0.55 } ] },
    { "match": { "name_contains": "H100" }, "warn_fraction": 0.9, "correctable_errors_per_gb": 0.1 }
  ]
})";

TEST(ProfileJson, ReadsAPartialProfileOverTheDefaults) {
  const auto profile = profile_from_json(kBurnIn, "burn-in.json");
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  EXPECT_EQ(profile->name, "burn-in");
  EXPECT_EQ(profile->source, "burn-in.json");
  EXPECT_DOUBLE_EQ(profile->defaults.bandwidth.floor_fraction, 0.8);
  EXPECT_DOUBLE_EQ(profile->defaults.bandwidth.max_cv, 0.05);
  EXPECT_DOUBLE_EQ(profile->defaults.bandwidth.warn_fraction, 0.80);  // unset: built-in
  EXPECT_EQ(profile->defaults.bandwidth.min_trials, 3);
  ASSERT_EQ(profile->overrides.size(), 2U);
  EXPECT_EQ(profile->overrides[0].match.device_id, 0x20b5);
  ASSERT_EQ(profile->overrides[0].per_probe.size(), 1U);
  EXPECT_EQ(profile->overrides[0].per_probe[0].direction, Direction::kHostToDevice);
  EXPECT_EQ(profile->overrides[1].match.name_contains, "H100");
  EXPECT_EQ(profile->overrides[1].warn_fraction, 0.9);
  EXPECT_EQ(profile->overrides[1].floor_fraction, std::nullopt);
}

TEST(ProfileJson, WrittenProfileReadsBackTheSame) {
  auto profile = profile_from_json(kBurnIn, "burn-in.json");
  ASSERT_TRUE(profile.ok());
  const std::string once = profile_to_json(profile.value());
  // The written form carries a source, which a profile file may not: a
  // document's thresholds are read by the results reader, not this one.
  EXPECT_THAT(once, HasSubstr("\"source\": \"burn-in.json\""));
  const auto again = profile_from_json(once, "x");
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.error().message, HasSubstr("unknown field 'source'"));
}

TEST(ProfileJson, AMisspeltThresholdIsAnErrorNotIgnored) {
  const auto profile = profile_from_json(R"({"defaults": {"floor_fration": 0.9}})", "site.json");
  ASSERT_FALSE(profile.ok());
  EXPECT_THAT(profile.error().message, HasSubstr("site.json"));
  EXPECT_THAT(profile.error().message, HasSubstr("/defaults/floor_fration"));
  EXPECT_THAT(profile.error().message, HasSubstr("unknown field 'floor_fration'"));
}

TEST(ProfileJson, BadValuesAreNamedWhereTheyAre) {
  const auto error_of = [](const char* text) {
    const auto profile = profile_from_json(text, "p.json");
    return profile.ok() ? std::string("ok") : profile.error().message;
  };
  EXPECT_THAT(error_of(R"({"overrides": [{"match": {"device_id": "20b"}}]})"),
              HasSubstr("/overrides/0/match/device_id"));
  EXPECT_THAT(error_of(R"({"overrides": [{"floor_fraction": 0.5}]})"), HasSubstr("/overrides/0/match"));
  EXPECT_THAT(error_of(R"({"defaults": {"min_trials": 2.5}})"), HasSubstr("/defaults/min_trials"));
  EXPECT_THAT(error_of(R"({"defaults": {"per_probe": [{"probe": "h2d_ce", "direction": "up"}]}})"),
              HasSubstr("unknown value 'up'"));
  EXPECT_THAT(error_of(R"([1, 2])"), HasSubstr("expected an object"));
  EXPECT_THAT(error_of(R"({"defaults": )"), HasSubstr("p.json"));
  EXPECT_THAT(error_of("\x7f\x45\x4c\x46\x02\x01"), HasSubstr("p.json"));
}

TEST(ProfileJson, AMissingFileIsAnError) {
  const auto profile = read_profile_file("/nonexistent/pcieval-profile.json");
  ASSERT_FALSE(profile.ok());
  EXPECT_THAT(profile.error().message, HasSubstr("/nonexistent/pcieval-profile.json"));
}

// Issue 29: a key given twice was read as its last value, so a profile could
// loosen the floor it seemed to tighten. At every depth, refused with the
// file and the pointer of the second one.
TEST(ProfileJson, AKeyGivenTwiceIsAnErrorAtAnyDepth) {
  const auto error_of = [](const char* text) {
    const auto profile = profile_from_json(text, "site.json");
    return profile.ok() ? std::string("ok") : profile.error().message;
  };
  const std::string floor = error_of(R"({"defaults": {"floor_fraction": 0.8, "floor_fraction": 0.01}})");
  EXPECT_THAT(floor, HasSubstr("site.json"));
  EXPECT_THAT(floor, HasSubstr("/defaults/floor_fraction"));
  EXPECT_THAT(floor, HasSubstr("duplicate key 'floor_fraction'"));
  EXPECT_THAT(error_of(R"({"name": "a", "name": "b"})"), HasSubstr("/name: duplicate key 'name'"));
  EXPECT_THAT(error_of(R"({"defaults": {}, "defaults": {"floor_fraction": 0.01}})"),
              HasSubstr("/defaults: duplicate key 'defaults'"));
  EXPECT_THAT(error_of(R"({"overrides": [{"match": {"device_id": "2330", "device_id": "26b9"}}]})"),
              HasSubstr("/overrides/0/match/device_id: duplicate key"));
  EXPECT_THAT(
      error_of(R"({"defaults": {"per_probe": [{"probe": "h2d_ce", "floor_fraction": 0.7, "floor_fraction": 0.01}]}})"),
      HasSubstr("/defaults/per_probe/0/floor_fraction: duplicate key"));
  // The same key in two objects is no duplicate.
  EXPECT_EQ(error_of(R"({"defaults": {"floor_fraction": 0.8}, "overrides": [
                          {"match": {"device_id": "2330"}, "floor_fraction": 0.7},
                          {"match": {"device_id": "26b9"}, "floor_fraction": 0.6}]})"),
            "ok");
}

// A per_probe entry for a probe that does not exist matched nothing and was
// silently ignored, leaving the default floor where a stricter one was meant.
TEST(ProfileJson, APerProbeKeyThatNamesNoProbeIsAnError) {
  const auto profile = profile_from_json(R"({"overrides": [{"match": {"device_id": "2330"},
                             "per_probe": [{"probe": "h2d_cee", "floor_fraction": 0.9}]}]})",
                                         "site.json");
  ASSERT_FALSE(profile.ok());
  EXPECT_THAT(profile.error().message, HasSubstr("site.json"));
  EXPECT_THAT(profile.error().message, HasSubstr("/overrides/0/per_probe/0/probe"));
  EXPECT_THAT(profile.error().message, HasSubstr("unknown probe 'h2d_cee'"));
  EXPECT_THAT(profile.error().message, HasSubstr("h2d_ce, d2h_ce"));  // what was meant is listed
  EXPECT_FALSE(profile_from_json(R"({"defaults": {"per_probe": [{"probe": ""}]}})", "p.json").ok());

  // Every live probe and a captured tool's key are accepted.
  for (const char* probe :
       {"h2d_ce", "group_ce", "allreduce_nccl_host", "host_ceiling", "nvbandwidth_host_to_device_memcpy_ce",
        "bandwidthtest_h2d_pinned", "nccltests_all_reduce"}) {
    const std::string text = std::string(R"({"defaults": {"per_probe": [{"probe": ")") + probe + R"("}]}})";
    const auto accepted = profile_from_json(text, "p.json");
    EXPECT_TRUE(accepted.ok()) << probe << ": " << accepted.error().message;
  }
}

// Schema 1.7: what a finding about a path's settings does to the node. A
// virtualisation host keeps ACS redirect on to isolate passed-through GPUs
// and says so; a burn-in site fails ASPM and judges cross-socket peers.
TEST(ProfileJson, PathSettingsSeveritiesAndTheCrossRootFloorAreRead) {
  const auto profile = profile_from_json(R"({"name": "vm-host", "defaults": {"path_settings": {
      "acs_redirect": "warn", "aspm_enabled": "fail", "iommu_translated": "inconclusive",
      "cross_root_peer_floor_gbps": 12.5}}})",
                                         "vm-host.json");
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  const PathSettingThresholds& p = profile->defaults.path_settings;
  EXPECT_EQ(p.acs_redirect, SettingSeverity::kWarn);
  EXPECT_EQ(p.aspm_enabled, SettingSeverity::kFail);
  EXPECT_EQ(p.iommu_translated, SettingSeverity::kInconclusive);
  EXPECT_EQ(p.payload_above_port, SettingSeverity::kFail);       // unset: built-in
  EXPECT_EQ(p.payload_below_supported, SettingSeverity::kWarn);  // unset: built-in
  EXPECT_EQ(p.cross_root_peer_floor_gbps, 12.5);

  const std::string written = profile_to_json(profile.value());
  EXPECT_THAT(written, HasSubstr(R"("acs_redirect": "warn")"));
  EXPECT_THAT(written, HasSubstr(R"("payload_above_port": "fail")"));
  EXPECT_THAT(written, HasSubstr(R"("cross_root_peer_floor_gbps": 12.5)"));
  // The built-in profile writes every field, the floor as null.
  const std::string built_in = profile_to_json(ThresholdProfile{});
  EXPECT_THAT(built_in, HasSubstr(R"("acs_redirect": "fail")"));
  EXPECT_THAT(built_in, HasSubstr(R"("aspm_enabled": "warn")"));
  EXPECT_THAT(built_in, HasSubstr(R"("cross_root_peer_floor_gbps": null)"));
}

// A document carries the severities it was judged with, so `validate`
// re-judges with them; a document written before 1.7 has none and reads as
// the built-in ones.
TEST(ProfileJson, AResultsDocumentKeepsItsPathSettings) {
  Results results;
  results.thresholds.defaults.path_settings.acs_redirect = SettingSeverity::kInconclusive;
  results.thresholds.defaults.path_settings.cross_root_peer_floor_gbps = 20.0;
  const std::string text = results_to_json(results);
  const auto read = results_from_json(text, "r.json");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->thresholds.defaults.path_settings.acs_redirect, SettingSeverity::kInconclusive);
  EXPECT_EQ(read->thresholds.defaults.path_settings.cross_root_peer_floor_gbps, 20.0);
  EXPECT_EQ(results_to_json(read.value()), text);

  nlohmann::ordered_json document = nlohmann::ordered_json::parse(text);
  ASSERT_EQ(document["thresholds"]["defaults"].erase("path_settings"), 1U);
  const std::string older = document.dump(2);
  const auto before = results_from_json(older, "r16.json");
  ASSERT_TRUE(before) << before.error().message;
  EXPECT_EQ(before->thresholds.defaults.path_settings.acs_redirect, SettingSeverity::kFail);
  EXPECT_FALSE(before->thresholds.defaults.path_settings.cross_root_peer_floor_gbps);
}

TEST(ProfileJson, AnUnknownSeverityOrPathSettingIsAnError) {
  const auto error_of = [](const char* text) {
    const auto profile = profile_from_json(text, "site.json");
    return profile.ok() ? std::string("ok") : profile.error().message;
  };
  const std::string severity = error_of(R"({"defaults": {"path_settings": {"acs_redirect": "ignore"}}})");
  EXPECT_THAT(severity, HasSubstr("site.json"));
  EXPECT_THAT(severity, HasSubstr("/defaults/path_settings/acs_redirect"));
  EXPECT_THAT(severity, HasSubstr("unknown value 'ignore'; expected one of fail, inconclusive, warn"));
  EXPECT_THAT(error_of(R"({"defaults": {"path_settings": {"acs": "warn"}}})"), HasSubstr("unknown field 'acs'"));
  EXPECT_THAT(error_of(R"({"defaults": {"path_settings": {"aspm_enabled": true}}})"),
              HasSubstr("/defaults/path_settings/aspm_enabled"));
  EXPECT_THAT(error_of(R"({"defaults": {"path_settings": {"cross_root_peer_floor_gbps": "fast"}}})"),
              HasSubstr("/defaults/path_settings/cross_root_peer_floor_gbps"));
  // Node-wide: an override may not set it.
  EXPECT_THAT(error_of(R"({"overrides": [{"match": {"device_id": "2330"}, "path_settings": {}}]})"),
              HasSubstr("unknown field 'path_settings'"));
  // Peer keys and their direction are accepted in per_probe.
  EXPECT_EQ(error_of(R"({"defaults": {"per_probe": [{"probe": "p2p_write_ce", "direction": "d2d",
                                                     "floor_fraction": 0.6}]}})"),
            "ok");
}

}  // namespace
}  // namespace pcieval
