// The fleet document as JSON (results_schema/pcieval-fleet.schema.json).
// The JSON library stays behind this header, as it does for report/.
#pragma once

#include <string>
#include <string_view>

#include "fleet/fleet.hpp"
#include "model/result.hpp"

namespace pcieval {

// The whole fleet document, version kFleetSchemaVersion: pretty-printed with a
// 2-space indent and a trailing newline, numbers as JSON numbers, text that
// is not valid UTF-8 written with U+FFFD in place of the bad bytes.
[[nodiscard]] std::string fleet_to_json(const Fleet& fleet);

// The inverse of fleet_to_json, strict: fails with one line
// "<source_name>: <JSON pointer>: <problem>" on text that is not JSON, a
// "kind" other than "pcieval-fleet", a schema_version whose major is not 1,
// and on the first missing field, wrong type, out-of-range value or unknown
// enum value (fields of a later minor version are ignored). Never throws.
[[nodiscard]] Result<Fleet> fleet_from_json(std::string_view text, std::string_view source_name);

// Reads the file at `path` ("-": standard input), then fleet_from_json.
[[nodiscard]] Result<Fleet> read_fleet_file(const std::string& path);

}  // namespace pcieval
