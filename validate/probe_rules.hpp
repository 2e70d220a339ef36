// Judges the measurement engine's own outcome: a probe that could not measure
// is a verdict (STYLE 6), never a silent gap in the numbers.
#pragma once

#include <vector>

#include "model/evidence.hpp"
#include "model/verdict.hpp"

namespace pcieval {

// For the probe runs whose status is failed:
// - one verdict per GPU named in their gpu_faults, subject the GPU's address,
//   in the order the GPUs first failed; the reason names every probe that
//   could not measure it, with the error. A GPU that was retired (a copy on
//   it missed its deadline: it hung or fell off the bus) is link_errors with
//   code gpu_unresponsive, since it must not take jobs; any other GPU fault
//   is inconclusive with code probe_failed.
// - one inconclusive verdict (code probe_failed, subject "probe <key>") per
//   failed probe that also failed on something that is no one GPU's (a group
//   of GPUs, a setting), or that names no GPU at all (a document written
//   before gpu_faults existed), in registry order. A probe whose every error
//   is a GPU fault has none: its GPUs' verdicts say it.
// Skipped probes are not verdicts: they did not apply, and the evidence
// records why.
[[nodiscard]] std::vector<Verdict> judge_probes(const Evidence& evidence);

}  // namespace pcieval
