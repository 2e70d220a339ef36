// Judges the measurement engine's own outcome: a probe that could not measure
// is one verdict (STYLE 6), never a silent gap in the numbers.
#pragma once

#include <vector>

#include "model/evidence.hpp"
#include "model/verdict.hpp"

namespace pcieval {

// One inconclusive verdict (code probe_failed) per probe run whose status is
// failed, in registry order, subject "probe <key>". Skipped probes are not
// verdicts: they did not apply, and the evidence records why.
[[nodiscard]] std::vector<Verdict> judge_probes(const Evidence& evidence);

}  // namespace pcieval
