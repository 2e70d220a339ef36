#include "validate/profile_lookup.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace pcieval {
namespace {

using ::testing::HasSubstr;

// An A100 80GB PCIe (10de:20b5) as NVML names it.
DeviceRecord a100_pcie() {
  DeviceRecord gpu;
  gpu.function.vendor_id = 0x10de;
  gpu.function.device_id = 0x20b5;
  gpu.function.kind = DeviceKind::kGpu;
  gpu.nvml = NvmlGpuLink{};
  gpu.nvml->name = "NVIDIA A100 80GB PCIe";
  return gpu;
}

TEST(Thresholds, MatchByNameIsCaseInsensitiveAndEveryGivenFieldMustFit) {
  const DeviceRecord gpu = a100_pcie();
  EXPECT_TRUE(matches(DeviceMatch{"a100 80gb pcie", std::nullopt, std::nullopt}, gpu));
  EXPECT_TRUE(matches(DeviceMatch{std::nullopt, 0x10de, 0x20b5}, gpu));
  EXPECT_FALSE(matches(DeviceMatch{"A100", std::nullopt, 0x20b0}, gpu));
  EXPECT_FALSE(matches(DeviceMatch{"H100", std::nullopt, std::nullopt}, gpu));
  EXPECT_FALSE(matches(DeviceMatch{}, gpu)) << "an empty match must not apply to every GPU";
  DeviceRecord without_nvml = gpu;
  without_nvml.nvml.reset();
  EXPECT_FALSE(matches(DeviceMatch{"A100", std::nullopt, std::nullopt}, without_nvml));
}

TEST(Thresholds, LaterOverridesWinFieldByField) {
  ThresholdProfile profile;
  ThresholdOverride by_id;
  by_id.match.device_id = 0x20b5;
  by_id.floor_fraction = 0.6;
  by_id.max_cv = 0.2;
  ThresholdOverride by_name;
  by_name.match.name_contains = "A100";
  by_name.floor_fraction = 0.65;
  ThresholdOverride other;
  other.match.device_id = 0x2330;
  other.floor_fraction = 0.9;
  profile.overrides = {by_id, by_name, other};

  const DeviceRecord gpu = a100_pcie();
  const ThresholdSet set = thresholds_for(profile, &gpu);
  EXPECT_DOUBLE_EQ(set.bandwidth.floor_fraction, 0.65);
  EXPECT_DOUBLE_EQ(set.bandwidth.max_cv, 0.2);
  EXPECT_EQ(set.bandwidth.min_trials, 3);
  EXPECT_DOUBLE_EQ(thresholds_for(profile, nullptr).bandwidth.floor_fraction, 0.75);
}

TEST(Thresholds, PerProbeFloorsApplyToTheirProbeAndDirectionOnly) {
  ThresholdSet set;
  set.per_probe = {ProbeThresholds{"group_ce", Direction::kDeviceToHost, 0.6, std::nullopt},
                   ProbeThresholds{"h2d_ce", std::nullopt, 0.9, 0.95}};
  EXPECT_DOUBLE_EQ(bandwidth_thresholds_for(set, "group_ce", Direction::kDeviceToHost).floor_fraction, 0.6);
  EXPECT_DOUBLE_EQ(bandwidth_thresholds_for(set, "group_ce", Direction::kHostToDevice).floor_fraction, 0.75);
  const BandwidthThresholds h2d = bandwidth_thresholds_for(set, "h2d_ce", Direction::kHostToDevice);
  EXPECT_DOUBLE_EQ(h2d.floor_fraction, 0.9);
  EXPECT_DOUBLE_EQ(h2d.warn_fraction, 0.95);
}

TEST(Thresholds, AFloorRaisedAboveTheWarningLineDragsItAlong) {
  ThresholdSet set;
  set.per_probe = {ProbeThresholds{"d2h_ce", std::nullopt, 0.9, std::nullopt}};
  const BandwidthThresholds d2h = bandwidth_thresholds_for(set, "d2h_ce", Direction::kDeviceToHost);
  EXPECT_DOUBLE_EQ(d2h.warn_fraction, 0.9);
}

TEST(CheckProfile, TheBuiltInProfileIsValid) { EXPECT_TRUE(check_profile(ThresholdProfile{}).ok()); }

TEST(CheckProfile, EachBadValueIsNamedByItsField) {
  const auto error_of = [](const ThresholdProfile& profile) {
    const Status status = check_profile(profile);
    return status.ok() ? std::string("ok") : status.error().message;
  };
  ThresholdProfile p;
  p.defaults.bandwidth.floor_fraction = 1.4;
  EXPECT_THAT(error_of(p), HasSubstr("floor_fraction 1.4 is not in (0, 1]"));
  p = {};
  p.defaults.bandwidth.warn_fraction = 0.5;
  EXPECT_THAT(error_of(p), HasSubstr("warn_fraction 0.5 is below floor_fraction 0.75"));
  p = {};
  p.defaults.bandwidth.min_trials = 0;
  EXPECT_THAT(error_of(p), HasSubstr("min_trials must be at least 1"));
  p = {};
  p.defaults.max_gpu_utilization_percent = 101;
  EXPECT_THAT(error_of(p), HasSubstr("max_gpu_utilization_percent"));
  p = {};
  p.overrides.push_back(ThresholdOverride{});
  EXPECT_THAT(error_of(p), HasSubstr("overrides[0].match names no GPU"));
  p = {};
  ThresholdOverride o;
  o.match.device_id = 0x20b5;
  o.per_probe.push_back(ProbeThresholds{"h2d_ce", std::nullopt, 0.0, std::nullopt});
  p.overrides.push_back(o);
  EXPECT_THAT(error_of(p), HasSubstr("overrides[0].per_probe[0].floor_fraction 0 is not in (0, 1]"));
  p = {};
  p.defaults.bandwidth.max_cv = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THAT(error_of(p), HasSubstr("max_cv must be above 0"));
  p = {};
  p.defaults.path_settings.cross_root_peer_floor_gbps = 0.0;
  EXPECT_THAT(error_of(p), HasSubstr("path_settings.cross_root_peer_floor_gbps 0 is not a rate"));
  p.defaults.path_settings.cross_root_peer_floor_gbps = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THAT(error_of(p), HasSubstr("cross_root_peer_floor_gbps"));
  p.defaults.path_settings.cross_root_peer_floor_gbps = 12.5;
  EXPECT_EQ(error_of(p), "ok");
}

}  // namespace
}  // namespace pcieval
