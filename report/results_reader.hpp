// Reading a results document back (results_schema/pcieval-results.schema.json),
// the inverse of results_to_json, so an earlier run can be judged again.
// The JSON library stays behind this header, as it does for the writer.
#pragma once

#include <string>
#include <string_view>

#include "model/result.hpp"
#include "model/results.hpp"

namespace pcieval {

// Rebuilds the Results that results_to_json wrote: tool, evidence (host,
// sources, devices with their own link, path, locality, AER counters, notes
// and NVML reading, evidence notes, and the measurement engine's probe
// settings, probe runs, measurements, link samples and counters), verdicts,
// overall and summary, as the document states them (nothing is re-judged or
// recomputed here: a measurement's statistics are read as written, and every
// number reads back to the double that was written).
//
// The measurement engine's fields came with schema 1.1: a 1.0.x document
// lacks them and reads as "no probe ran" (no settings, empty lists, no NVML
// reading); from 1.1 on they are required like any other field. Enum values
// (direction, method, host memory, aggregation, probe status, sample source)
// are the model's names, read with the model's own parsers.
//
// A reading that is null in the document becomes an error reading whose
// message is the device's "unknown" entry for that port and attribute, less
// the leading bdf ("max_link_speed: kernel reports ..."), so writing the
// Results again gives the same entry; with no such entry the message is "not
// in the results document". "negotiated" and "expected" are derived by the
// writer and are checked for type only; PciFunction's parent, is_bridge and
// role are not in the document and keep their defaults (every device of the
// document is an endpoint).
//
// Fails, with one line "<source_name>: <JSON pointer>: <problem>", on text
// that is not JSON (truncated included; the pointer is where parsing stopped),
// on a schema_version whose major is not 1, and on the first missing field,
// wrong type, out-of-range value or unknown enum value met (fields of a later
// minor version are ignored). A measurement whose trials_gbps is empty, or
// whose median_gbps lies outside [min_gbps, max_gbps], is refused too: no
// writer of pcieval produces one, so the file was edited or corrupted, and a
// verdict must not rest on it. Never throws.
[[nodiscard]] Result<Results> results_from_json(std::string_view text, std::string_view source_name);

// Reads the file at `path` ("-": standard input) and then results_from_json
// with the path as source name. A missing, unreadable or oversized file is an
// error naming the path and the system's reason.
[[nodiscard]] Result<Results> read_results_file(const std::string& path);

}  // namespace pcieval
