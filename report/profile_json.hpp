// Threshold profiles as JSON: the `--profile FILE` a user writes, and the
// `thresholds` object every results document carries (the same shape, so a
// document's thresholds can be saved as a profile and given back).
#pragma once

#include <string>
#include <string_view>

#include "model/result.hpp"
#include "model/thresholds.hpp"

namespace pcieval {

// {"name", "description"?, "defaults": {...}, "overrides": [...]}; every field
// of defaults and of each override is optional (unset keeps the built-in
// value). Unknown keys, a key given twice in one object (at any depth) and a
// per_probe "probe" that is no probe key (model/probe_keys.hpp) are errors
// naming `source_name` and the JSON pointer, so a misspelt or repeated
// threshold never silently loosens a floor. Ids are 4 hex digits ("2331",
// "0x2331"). The source is `source_name`. Range checks are validate/'s
// (check_profile).
[[nodiscard]] Result<ThresholdProfile> profile_from_json(std::string_view text, std::string_view source_name);

// Reads `path` ("-" is stdin) with profile_from_json.
[[nodiscard]] Result<ThresholdProfile> read_profile_file(const std::string& path);

// Every field written, defaults in full.
[[nodiscard]] std::string profile_to_json(const ThresholdProfile& profile);

}  // namespace pcieval
