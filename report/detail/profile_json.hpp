// Internal to report/: the thresholds object inside a results document, read
// and written with the document's own JSON reader and writer.
#pragma once

#include <nlohmann/json.hpp>

#include "model/thresholds.hpp"
#include "report/json_document.hpp"

namespace pcieval::profile_json {

[[nodiscard]] nlohmann::ordered_json to_json(const ThresholdProfile& profile);

// Reads a profile object at `node`; problems are recorded in `in`.
// `with_source`: a results document names where its thresholds came from; a
// profile file is its own source.
[[nodiscard]] ThresholdProfile read(json_document::DocumentReader& in, const json_document::Node& node,
                                    bool with_source);

}  // namespace pcieval::profile_json
