// The JSON object a tool wrote (nvbandwidth -j, nccl-tests -J). Internal to
// ingest/: only the readers of JSON include nlohmann.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "model/result.hpp"

namespace pcieval::tool_text {

// The object, or "<source>: not JSON (<writes>)" when the text is not one
// (`writes`: "nvbandwidth -j writes one JSON object").
[[nodiscard]] inline Result<nlohmann::json> parse_json_object(std::string_view text, const std::string& source,
                                                              std::string_view writes) {
  nlohmann::json document = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (document.is_discarded() || !document.is_object()) {
    return make_error(source + ": not JSON (" + std::string(writes) + ")");
  }
  return document;
}

}  // namespace pcieval::tool_text
