// Trials: warm-up, then timed repetitions with every sample kept. The one
// timing loop every probe uses, so warm-up, failure handling and statistics
// are the same for the host ceiling and for the GPU copies.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "model/measurement.hpp"
#include "model/result.hpp"

namespace pcieval {

// One timed repetition: the seconds the copies took, or why it failed.
// The callee times only the copies (events, or a clock read around a
// barrier), never allocation or verification.
using TrialFn = std::function<Result<double>()>;

struct TrialPlan {
  int warmup_trials = 1;
  int trials = 5;
  std::uint64_t bytes_per_trial = 0;  // bytes moved in one repetition, for the rate
};

// Runs plan.warmup_trials untimed repetitions then plan.trials timed ones and
// returns each timed one's rate in GB/s, in order. The first failure stops the
// run and is returned: a failed repetition is never averaged away. A trial
// that reports zero or negative time is an error (the clock or the latch
// broke), not an infinite bandwidth.
[[nodiscard]] Result<std::vector<double>> run_trials(const TrialPlan& plan, const TrialFn& trial);

}  // namespace pcieval
