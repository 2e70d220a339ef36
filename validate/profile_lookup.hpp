// What a threshold profile (model/thresholds.hpp) means for one GPU and one
// probe: the defaults, then every override whose match fits the GPU, then
// per-probe floors.
#pragma once

#include <string>

#include "model/evidence.hpp"
#include "model/result.hpp"
#include "model/thresholds.hpp"

namespace pcieval {

// Whether `device` is one of the GPUs `match` names. An empty match matches
// nothing (an override that names no GPU would silently apply to all).
[[nodiscard]] bool matches(const DeviceMatch& match, const DeviceRecord& device);

// The profile's numbers for `device` (nullptr: a node-wide subject, defaults
// only): overrides applied in order, later ones winning field by field.
[[nodiscard]] ThresholdSet thresholds_for(const ThresholdProfile& profile, const DeviceRecord* device);

// The bandwidth thresholds of one probe and direction under `set`.
[[nodiscard]] BandwidthThresholds bandwidth_thresholds_for(const ThresholdSet& set, const std::string& probe,
                                                           Direction direction);

// Ranges that keep every rule meaningful: 0 < floor <= warn <= 1, at least
// one trial, a positive spread, non-negative rates, a utilisation 0..100, a
// cross-root peer floor above 0 GB/s.
// The error names the field ("overrides[1].floor_fraction 1.4 is not in
// (0, 1]").
[[nodiscard]] Status check_profile(const ThresholdProfile& profile);

}  // namespace pcieval
