#include "bench/trials.hpp"

#include <string>

namespace pcieval {

Result<std::vector<double>> run_trials(const TrialPlan& plan, const TrialFn& trial) {
  if (plan.trials < 1) return make_error("at least one timed trial is needed, got " + std::to_string(plan.trials));
  if (plan.warmup_trials < 0) return make_error("warm-up trials cannot be negative");
  if (plan.bytes_per_trial == 0) return make_error("a trial must move at least one byte");

  for (int i = 0; i < plan.warmup_trials; ++i) {
    auto seconds = trial();
    if (!seconds) return make_error("warm-up trial " + std::to_string(i + 1) + ": " + seconds.error().message);
  }
  std::vector<double> rates_gbps;
  rates_gbps.reserve(static_cast<std::size_t>(plan.trials));
  for (int i = 0; i < plan.trials; ++i) {
    auto seconds = trial();
    if (!seconds) return make_error("trial " + std::to_string(i + 1) + ": " + seconds.error().message);
    // A zero or negative interval is a broken clock or a latch that never
    // held the stream, not an infinite bandwidth.
    if (!(seconds.value() > 0)) {
      return make_error("trial " + std::to_string(i + 1) + " reported " + std::to_string(seconds.value()) +
                        " s: the timer did not advance");
    }
    rates_gbps.push_back(gbps_of(plan.bytes_per_trial, seconds.value()));
  }
  return rates_gbps;
}

}  // namespace pcieval
