#include "report/profile_json.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <initializer_list>

#include "model/probe_keys.hpp"
#include "model/text.hpp"
#include "report/detail/profile_json.hpp"
#include "report/input_file.hpp"

namespace pcieval {
namespace {

using Json = nlohmann::ordered_json;
using json_document::DocumentReader;
using json_document::Node;

constexpr std::array kDirections = {Direction::kHostToDevice, Direction::kDeviceToHost, Direction::kHostToHost,
                                    Direction::kDeviceToDevice};
constexpr std::array kSeverities = {SettingSeverity::kFail, SettingSeverity::kInconclusive, SettingSeverity::kWarn};

template <class T>
Json or_null(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

// Only the keys in `allowed`: a typo in a threshold must not pass unnoticed.
void only_keys(DocumentReader& in, const Node& object, std::initializer_list<std::string_view> allowed) {
  if (!object.json->is_object()) {
    in.fail(object, "expected an object");
    return;
  }
  for (const auto& [key, value] : in.members(object)) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string names;
      for (std::string_view name : allowed) names += (names.empty() ? "" : ", ") + std::string(name);
      in.fail(value, "unknown field " + json_document::quote(key) + "; expected one of " + names);
      return;
    }
  }
}

std::optional<double> optional_number(DocumentReader& in, const Node& object, std::string_view key) {
  const auto node = in.member_if_present(object, key);
  return node ? in.number_or_null(*node) : std::nullopt;
}

std::optional<int> optional_int(DocumentReader& in, const Node& object, std::string_view key, int min, int max) {
  const auto node = in.member_if_present(object, key);
  if (!node) return std::nullopt;
  const auto value = in.integer_or_null(*node, min, max);
  return value ? std::optional<int>(static_cast<int>(*value)) : std::nullopt;
}

std::optional<std::uint16_t> optional_id(DocumentReader& in, const Node& object, std::string_view key) {
  const auto node = in.member_if_present(object, key);
  if (!node) return std::nullopt;
  const auto text = in.text_or_null(*node);
  if (!text) return std::nullopt;
  std::string_view digits = *text;
  if (digits.rfind("0x", 0) == 0 || digits.rfind("0X", 0) == 0) digits.remove_prefix(2);
  unsigned value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
  if (digits.size() != 4 || error != std::errc{} || end != digits.data() + digits.size()) {
    in.fail(*node, json_document::quote(*text) + " is not a 4-digit hex PCI id such as \"2331\"");
    return std::nullopt;
  }
  return static_cast<std::uint16_t>(value);
}

Json per_probe_json(const std::vector<ProbeThresholds>& entries) {
  Json out = Json::array();
  for (const ProbeThresholds& entry : entries) {
    Json item = Json::object();
    item["probe"] = entry.probe;
    item["direction"] = entry.direction ? Json(std::string(to_string(*entry.direction))) : Json(nullptr);
    item["floor_fraction"] = or_null(entry.floor_fraction);
    item["warn_fraction"] = or_null(entry.warn_fraction);
    out.push_back(std::move(item));
  }
  return out;
}

// A profile's per_probe key must name a probe: a misspelt one ("h2d_cee")
// would match no measurement, and the floor it was meant to set would stay
// the default without a word.
void known_probe(DocumentReader& in, const Node& node, const std::string& probe) {
  if (!in.ok() || is_probe_key(probe)) return;
  std::string registry;
  for (std::string_view key : kRegistryProbeKeys) registry += (registry.empty() ? "" : ", ") + std::string(key);
  in.fail(node, "unknown probe " + json_document::quote(probe) + "; expected a key of `pcieval check --list-probes` (" +
                    registry + ") or of a captured tool (docs/verdicts.md lists them)");
}

// `user_file`: a --profile file, whose probe keys are checked. A results
// document's thresholds are not: they were checked when that run read its
// profile, and an older document may name a probe since retired.
std::vector<ProbeThresholds> read_per_probe(DocumentReader& in, const Node& object, bool user_file) {
  std::vector<ProbeThresholds> entries;
  const auto list = in.member_if_present(object, "per_probe");
  if (!list) return entries;
  for (const Node& item : in.items(*list)) {
    only_keys(in, item, {"probe", "direction", "floor_fraction", "warn_fraction"});
    ProbeThresholds entry;
    const Node probe = in.member(item, "probe");
    entry.probe = in.text(probe);
    if (user_file) known_probe(in, probe, entry.probe);
    if (const auto direction = in.member_if_present(item, "direction"); direction && !direction->json->is_null()) {
      entry.direction = in.one_of(*direction, kDirections);
    }
    entry.floor_fraction = optional_number(in, item, "floor_fraction");
    entry.warn_fraction = optional_number(in, item, "warn_fraction");
    entries.push_back(std::move(entry));
  }
  return entries;
}

Json path_settings_json(const PathSettingThresholds& p) {
  Json out = Json::object();
  out["acs_redirect"] = std::string(to_string(p.acs_redirect));
  out["payload_below_supported"] = std::string(to_string(p.payload_below_supported));
  out["payload_above_port"] = std::string(to_string(p.payload_above_port));
  out["aspm_enabled"] = std::string(to_string(p.aspm_enabled));
  out["iommu_translated"] = std::string(to_string(p.iommu_translated));
  out["cross_root_peer_floor_gbps"] = or_null(p.cross_root_peer_floor_gbps);
  return out;
}

// Schema 1.7. Each severity is "fail", "inconclusive" or "warn"; anything
// else is an error naming the field, never a silent default.
PathSettingThresholds read_path_settings(DocumentReader& in, const Node& object) {
  PathSettingThresholds p;
  only_keys(in, object,
            {"acs_redirect", "payload_below_supported", "payload_above_port", "aspm_enabled", "iommu_translated",
             "cross_root_peer_floor_gbps"});
  const auto severity = [&](std::string_view key, SettingSeverity& field) {
    if (const auto node = in.member_if_present(object, key)) field = in.one_of(*node, kSeverities);
  };
  severity("acs_redirect", p.acs_redirect);
  severity("payload_below_supported", p.payload_below_supported);
  severity("payload_above_port", p.payload_above_port);
  severity("aspm_enabled", p.aspm_enabled);
  severity("iommu_translated", p.iommu_translated);
  p.cross_root_peer_floor_gbps = optional_number(in, object, "cross_root_peer_floor_gbps");
  return p;
}

Json match_json(const DeviceMatch& match) {
  Json out = Json::object();
  out["name_contains"] = or_null(match.name_contains);
  out["vendor_id"] = match.vendor_id ? Json(hex_text(*match.vendor_id, 4)) : Json(nullptr);
  out["device_id"] = match.device_id ? Json(hex_text(*match.device_id, 4)) : Json(nullptr);
  return out;
}

}  // namespace

namespace profile_json {

Json to_json(const ThresholdProfile& profile) {
  const ThresholdSet& d = profile.defaults;
  Json defaults = Json::object();
  defaults["floor_fraction"] = d.bandwidth.floor_fraction;
  defaults["warn_fraction"] = d.bandwidth.warn_fraction;
  defaults["min_trials"] = d.bandwidth.min_trials;
  defaults["max_cv"] = d.bandwidth.max_cv;
  defaults["per_probe"] = per_probe_json(d.per_probe);
  defaults["correctable_errors_per_gb"] = d.correctable_errors_per_gb;
  defaults["max_gpu_utilization_percent"] = d.max_gpu_utilization_percent;
  defaults["baseline_max_drop_fraction"] = d.baseline_max_drop_fraction;
  defaults["assume_full_link_behind_virtual_port"] = d.assume_full_link_behind_virtual_port;
  defaults["path_settings"] = path_settings_json(d.path_settings);

  Json overrides = Json::array();
  for (const ThresholdOverride& o : profile.overrides) {
    Json item = Json::object();
    item["match"] = match_json(o.match);
    item["floor_fraction"] = or_null(o.floor_fraction);
    item["warn_fraction"] = or_null(o.warn_fraction);
    item["min_trials"] = or_null(o.min_trials);
    item["max_cv"] = or_null(o.max_cv);
    item["per_probe"] = per_probe_json(o.per_probe);
    item["correctable_errors_per_gb"] = or_null(o.correctable_errors_per_gb);
    item["max_gpu_utilization_percent"] = or_null(o.max_gpu_utilization_percent);
    overrides.push_back(std::move(item));
  }

  Json out = Json::object();
  out["name"] = profile.name;
  out["source"] = profile.source;
  out["defaults"] = std::move(defaults);
  out["overrides"] = std::move(overrides);
  return out;
}

ThresholdProfile read(DocumentReader& in, const Node& node, bool with_source) {
  ThresholdProfile profile;
  if (with_source) {
    only_keys(in, node, {"name", "source", "defaults", "overrides"});
    profile.source = in.text(in.member(node, "source"));
  } else {
    only_keys(in, node, {"name", "description", "defaults", "overrides"});
    if (const auto description = in.member_if_present(node, "description")) (void)in.text(*description);
  }
  if (!in.ok()) return profile;
  if (const auto name = in.member_if_present(node, "name")) profile.name = in.text(*name);

  if (const auto defaults = in.member_if_present(node, "defaults")) {
    only_keys(in, *defaults,
              {"floor_fraction", "warn_fraction", "min_trials", "max_cv", "per_probe", "correctable_errors_per_gb",
               "max_gpu_utilization_percent", "baseline_max_drop_fraction", "assume_full_link_behind_virtual_port",
               "path_settings"});
    ThresholdSet& d = profile.defaults;
    d.bandwidth.floor_fraction = optional_number(in, *defaults, "floor_fraction").value_or(d.bandwidth.floor_fraction);
    d.bandwidth.warn_fraction = optional_number(in, *defaults, "warn_fraction").value_or(d.bandwidth.warn_fraction);
    d.bandwidth.min_trials = optional_int(in, *defaults, "min_trials", 0, 1000000).value_or(d.bandwidth.min_trials);
    d.bandwidth.max_cv = optional_number(in, *defaults, "max_cv").value_or(d.bandwidth.max_cv);
    d.per_probe = read_per_probe(in, *defaults, !with_source);
    d.correctable_errors_per_gb =
        optional_number(in, *defaults, "correctable_errors_per_gb").value_or(d.correctable_errors_per_gb);
    d.max_gpu_utilization_percent =
        optional_int(in, *defaults, "max_gpu_utilization_percent", -1000, 1000).value_or(d.max_gpu_utilization_percent);
    d.baseline_max_drop_fraction =
        optional_number(in, *defaults, "baseline_max_drop_fraction").value_or(d.baseline_max_drop_fraction);
    if (const auto assume = in.member_if_present(*defaults, "assume_full_link_behind_virtual_port")) {
      d.assume_full_link_behind_virtual_port = in.boolean(*assume);
    }
    if (const auto path_settings = in.member_if_present(*defaults, "path_settings")) {
      d.path_settings = read_path_settings(in, *path_settings);
    }
  }
  if (const auto overrides = in.member_if_present(node, "overrides")) {
    for (const Node& item : in.items(*overrides)) {
      only_keys(in, item,
                {"match", "floor_fraction", "warn_fraction", "min_trials", "max_cv", "per_probe",
                 "correctable_errors_per_gb", "max_gpu_utilization_percent"});
      ThresholdOverride o;
      const Node match = in.member(item, "match");
      only_keys(in, match, {"name_contains", "vendor_id", "device_id"});
      if (const auto name = in.member_if_present(match, "name_contains"))
        o.match.name_contains = in.text_or_null(*name);
      o.match.vendor_id = optional_id(in, match, "vendor_id");
      o.match.device_id = optional_id(in, match, "device_id");
      o.floor_fraction = optional_number(in, item, "floor_fraction");
      o.warn_fraction = optional_number(in, item, "warn_fraction");
      o.min_trials = optional_int(in, item, "min_trials", 0, 1000000);
      o.max_cv = optional_number(in, item, "max_cv");
      o.per_probe = read_per_probe(in, item, !with_source);
      o.correctable_errors_per_gb = optional_number(in, item, "correctable_errors_per_gb");
      o.max_gpu_utilization_percent = optional_int(in, item, "max_gpu_utilization_percent", -1000, 1000);
      profile.overrides.push_back(std::move(o));
    }
  }
  return profile;
}

}  // namespace profile_json

Result<ThresholdProfile> profile_from_json(std::string_view text, std::string_view source_name) {
  try {
    // A key given twice would let the last value win: "floor_fraction": 0.8
    // followed by "floor_fraction": 0.01 must not pass as 0.01.
    auto document = json_document::parse(text, source_name, json_document::DuplicateKeys::kRefuse);
    if (!document) return document.error();
    DocumentReader in(source_name);
    ThresholdProfile profile = profile_json::read(in, Node{&document.value(), ""}, false);
    if (!in.ok()) return in.error();
    profile.source = std::string(source_name);
    return profile;
  } catch (const std::exception& e) {
    return make_error(std::string(source_name) + ": cannot read the threshold profile: " + e.what());
  }
}

Result<ThresholdProfile> read_profile_file(const std::string& path) {
  // A profile is a few hundred bytes; the cap only stops /dev/zero.
  constexpr std::size_t kMaxProfileBytes = std::size_t{1} << 20;
  auto text = read_input_file(path, kMaxProfileBytes, "a pcieval threshold profile");
  if (!text) return text.error();
  return profile_from_json(text.value(), path == "-" ? "stdin" : path);
}

std::string profile_to_json(const ThresholdProfile& profile) { return profile_json::to_json(profile).dump(2) + "\n"; }

}  // namespace pcieval
