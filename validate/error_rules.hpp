// Judges the error counters read before and after the probes: a link that
// retried or reported errors while it carried the copies.
#pragma once

#include <vector>

#include "model/evidence.hpp"
#include "model/verdict.hpp"

namespace pcieval {

struct ErrorRuleOptions {
  // Correctable errors (AER correctable, NVML replays) tolerated per GB that
  // crossed the port. PCIe Gen1-Gen5 require a bit error rate of at most
  // 1e-12: 1 GB is 8e9 bits, so a link at the spec limit retries about 0.008
  // times per GB. 1 per GB is over a hundred times that: a link that bad is
  // marginal (signal integrity), not unlucky.
  double correctable_per_gb = 1.0;
};

// One link_errors verdict per device whose counters grew during the run
// (Evidence::counters): any rise of aer_fatal or aer_nonfatal
// (uncorrectable_errors_under_load); a rise of aer_correctable or nvml_replay
// above correctable_per_gb times the GB that the GPUs at or below the device
// moved (correctable_errors_under_load). With no byte counted through the
// device the correctable rule does not apply. A counter that fell (a reset
// between the reads) is ignored.
[[nodiscard]] std::vector<Verdict> judge_error_counters(const Evidence& evidence, const ErrorRuleOptions& options);

}  // namespace pcieval
