#include "report/profile_json.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace pcieval
