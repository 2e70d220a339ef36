#include "validate/profile_lookup.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace pcieval {
namespace {

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

void apply(BandwidthThresholds& bandwidth, const ProbeThresholds& probe) {
  if (probe.floor_fraction) bandwidth.floor_fraction = *probe.floor_fraction;
  if (probe.warn_fraction) bandwidth.warn_fraction = *probe.warn_fraction;
}

std::string number_text(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

Status check_fraction(const std::string& field, std::optional<double> value, bool zero_allowed) {
  if (!value) return ok_status();
  if (!(*value <= 1.0) || (zero_allowed ? *value < 0 : *value <= 0)) {
    return make_error(field + " " + number_text(*value) + " is not in " + (zero_allowed ? "[0, 1]" : "(0, 1]"));
  }
  return ok_status();
}

Status check_floor_and_warn(const std::string& where, std::optional<double> floor, std::optional<double> warn) {
  if (auto ok = check_fraction(where + "floor_fraction", floor, false); !ok) return ok;
  if (auto ok = check_fraction(where + "warn_fraction", warn, false); !ok) return ok;
  if (floor && warn && *warn < *floor) {
    return make_error(where + "warn_fraction " + number_text(*warn) + " is below floor_fraction " +
                      number_text(*floor) + ": the warning band sits above the floor");
  }
  return ok_status();
}

Status check_per_probe(const std::string& where, const std::vector<ProbeThresholds>& entries) {
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string at = where + "per_probe[" + std::to_string(i) + "].";
    if (entries[i].probe.empty()) return make_error(at + "probe is empty");
    if (auto ok = check_floor_and_warn(at, entries[i].floor_fraction, entries[i].warn_fraction); !ok) return ok;
  }
  return ok_status();
}

Status check_rates(const std::string& where, std::optional<int> min_trials, std::optional<double> max_cv,
                   std::optional<double> errors_per_gb, std::optional<int> utilization) {
  if (min_trials && *min_trials < 1) return make_error(where + "min_trials must be at least 1");
  if (max_cv && !(*max_cv > 0)) return make_error(where + "max_cv must be above 0");
  if (errors_per_gb && !(*errors_per_gb >= 0)) return make_error(where + "correctable_errors_per_gb must be >= 0");
  if (utilization && (*utilization < 0 || *utilization > 100)) {
    return make_error(where + "max_gpu_utilization_percent must be 0..100");
  }
  return ok_status();
}

}  // namespace

bool matches(const DeviceMatch& match, const DeviceRecord& device) {
  if (!match.name_contains && !match.vendor_id && !match.device_id) return false;
  if (match.vendor_id && *match.vendor_id != device.function.vendor_id) return false;
  if (match.device_id && *match.device_id != device.function.device_id) return false;
  if (match.name_contains) {
    if (!device.nvml || !device.nvml->name) return false;
    if (lowercase(*device.nvml->name).find(lowercase(*match.name_contains)) == std::string::npos) return false;
  }
  return true;
}

ThresholdSet thresholds_for(const ThresholdProfile& profile, const DeviceRecord* device) {
  ThresholdSet set = profile.defaults;
  if (device == nullptr) return set;
  for (const ThresholdOverride& o : profile.overrides) {
    if (!matches(o.match, *device)) continue;
    if (o.floor_fraction) set.bandwidth.floor_fraction = *o.floor_fraction;
    if (o.warn_fraction) set.bandwidth.warn_fraction = *o.warn_fraction;
    if (o.min_trials) set.bandwidth.min_trials = *o.min_trials;
    if (o.max_cv) set.bandwidth.max_cv = *o.max_cv;
    if (o.correctable_errors_per_gb) set.correctable_errors_per_gb = *o.correctable_errors_per_gb;
    if (o.max_gpu_utilization_percent) set.max_gpu_utilization_percent = *o.max_gpu_utilization_percent;
    set.per_probe.insert(set.per_probe.end(), o.per_probe.begin(), o.per_probe.end());
  }
  return set;
}

BandwidthThresholds bandwidth_thresholds_for(const ThresholdSet& set, const std::string& probe, Direction direction) {
  BandwidthThresholds bandwidth = set.bandwidth;
  for (const ProbeThresholds& entry : set.per_probe) {
    if (entry.probe == probe && (!entry.direction || *entry.direction == direction)) apply(bandwidth, entry);
  }
  // A floor raised above the default warning band drags the band with it:
  // a warning below the floor would never be seen.
  bandwidth.warn_fraction = std::max(bandwidth.warn_fraction, bandwidth.floor_fraction);
  return bandwidth;
}

Status check_profile(const ThresholdProfile& profile) {
  const ThresholdSet& d = profile.defaults;
  if (auto ok = check_floor_and_warn("", d.bandwidth.floor_fraction, d.bandwidth.warn_fraction); !ok) return ok;
  if (auto ok = check_rates("", d.bandwidth.min_trials, d.bandwidth.max_cv, d.correctable_errors_per_gb,
                            d.max_gpu_utilization_percent);
      !ok) {
    return ok;
  }
  if (auto ok = check_fraction("baseline_max_drop_fraction", d.baseline_max_drop_fraction, true); !ok) return ok;
  if (auto ok = check_per_probe("", d.per_probe); !ok) return ok;
  if (const auto floor = d.path_settings.cross_root_peer_floor_gbps; floor && !(*floor > 0 && *floor < 1e6)) {
    return make_error("path_settings.cross_root_peer_floor_gbps " + number_text(*floor) +
                      " is not a rate in GB/s above 0 (leave it out, or null, to report such pairs unjudged)");
  }
  for (std::size_t i = 0; i < profile.overrides.size(); ++i) {
    const ThresholdOverride& o = profile.overrides[i];
    const std::string at = "overrides[" + std::to_string(i) + "].";
    if (!o.match.name_contains && !o.match.vendor_id && !o.match.device_id) {
      return make_error(at + "match names no GPU (give name_contains, vendor_id or device_id)");
    }
    if (o.match.name_contains && o.match.name_contains->empty()) return make_error(at + "match.name_contains is empty");
    if (auto ok = check_floor_and_warn(at, o.floor_fraction, o.warn_fraction); !ok) return ok;
    if (auto ok = check_rates(at, o.min_trials, o.max_cv, o.correctable_errors_per_gb, o.max_gpu_utilization_percent);
        !ok) {
      return ok;
    }
    if (auto ok = check_per_probe(at, o.per_probe); !ok) return ok;
  }
  return ok_status();
}

}  // namespace pcieval
