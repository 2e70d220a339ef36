// What the results-reader tests share: a document read and written again,
// and the error of reading a JSON document.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "report/results_reader.hpp"
#include "report/results_writer.hpp"

namespace pcieval::testing {

// `text` read and written again; "read failed: ..." when it cannot be read.
inline std::string rewrite(const std::string& text) {
  const auto read = results_from_json(text, "results.json");
  if (!read) return "read failed: " + read.error().message;
  return results_to_json(read.value());
}

// The error of reading `document`, or "read".
inline std::string error_of(const nlohmann::json& document) {
  const auto read = results_from_json(document.dump(2), "results.json");
  return read ? std::string("read") : read.error().message;
}

}  // namespace pcieval::testing
