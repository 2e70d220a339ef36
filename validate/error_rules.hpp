// Judges the error counters read before and after the probes: a link that
// retried or reported errors while it carried the copies.
#pragma once

#include <vector>

#include "model/evidence.hpp"
#include "model/thresholds.hpp"
#include "model/verdict.hpp"

namespace pcieval {

// One link_errors verdict per device whose counters grew during the run
// (Evidence::counters): any rise of aer_fatal or aer_nonfatal
// (uncorrectable_errors_under_load); a rise of aer_correctable or nvml_replay
// above correctable_errors_per_gb (model/thresholds.hpp, resolved for the
// device) times the GB that the GPUs at or below the device
// moved (correctable_errors_under_load). With no byte counted through the
// device the correctable rule does not apply. A counter that fell (a reset
// between the reads) is ignored.
[[nodiscard]] std::vector<Verdict> judge_error_counters(const Evidence& evidence, const ThresholdProfile& profile);

}  // namespace pcieval
