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
// sources, devices with their own link, path, locality, AER counters and
// notes, evidence notes), verdicts, overall and summary, as the document
// states them (nothing is re-judged here).
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
// wrong type or unknown enum value met (fields of a later minor version are
// ignored). Never throws.
[[nodiscard]] Result<Results> results_from_json(std::string_view text, std::string_view source_name);

// Reads the file at `path` ("-": standard input) and then results_from_json
// with the path as source name. A missing, unreadable or oversized file is an
// error naming the path and the system's reason.
[[nodiscard]] Result<Results> read_results_file(const std::string& path);

}  // namespace pcieval
