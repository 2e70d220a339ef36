// The human table of `pcieval check`.
#pragma once

#include <string>

#include "model/results.hpp"

namespace pcieval {

// One row per device of the evidence (DEVICE, KIND, PATH, EXPECTED,
// NEGOTIATED, VERDICT), then every verdict that is not a pass with its
// remediation, then the summary line. Plain ASCII, columns as wide as their
// content, every line ending in a newline.
[[nodiscard]] std::string render_check_table(const Results& results);

}  // namespace pcieval
