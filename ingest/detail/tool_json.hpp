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

// The member `key` of `object` when it is there with the JSON type `type`;
// nullptr when it is missing or of another type, which the tools' readers
// treat alike (a member they do not know how to read is not there).
[[nodiscard]] inline const nlohmann::json* member(const nlohmann::json& object, const char* key,
                                                  nlohmann::json::value_t type) {
  const auto found = object.find(key);
  return found != object.end() && found->type() == type ? &*found : nullptr;
}

}  // namespace pcieval::tool_text
