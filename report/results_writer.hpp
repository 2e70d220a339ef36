// The results document as JSON (results_schema/pcieval-results.schema.json).
// The JSON library stays behind this header: callers get text, so a change of
// library never reaches app/ or the tests.
#pragma once

#include <string>

#include "model/evidence.hpp"
#include "model/results.hpp"

namespace pcieval {

// The whole results document, version kResultsSchemaVersion: pretty-printed
// with a 2-space indent and a trailing newline. Numbers are JSON numbers and
// a value that could not be read is null, its reason listed in the device's
// "unknown" array. Text that is not valid UTF-8 is written with U+FFFD in
// place of the bad bytes rather than failing the whole document.
//
// The measurement engine's evidence (probe_settings, probes, measurements,
// link_samples, counters, and each device's nvml) is always written: null or
// empty when no probe ran. Measurements keep every trial beside the
// statistics computed from them. Doubles are written so that they read back
// to the same value.
[[nodiscard]] std::string results_to_json(const Results& results);

// The devices alone, for `pcieval topo --json`:
// {"schema_version", "host", "devices"}, each device the same object as in
// results_to_json.
[[nodiscard]] std::string devices_to_json(const Evidence& evidence);

}  // namespace pcieval
