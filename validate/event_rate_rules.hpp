// Judges the rate of correctable errors that captured text records: bursts of
// corrected AER errors in a kernel log with time stamps, and the PCIe replay
// counters nvidia-smi prints. A live run measures how many bytes crossed a
// link and judges errors per GB (error_rules.hpp); a capture says only when
// each error was logged, so these rules judge errors per minute against the
// most a link within the spec could log.
#pragma once

#include <string>
#include <vector>

#include "model/evidence.hpp"
#include "model/link.hpp"
#include "model/thresholds.hpp"
#include "model/verdict.hpp"

namespace pcieval {

// PCIe Gen1 to Gen5 require a bit error rate of at most 1e-12 (PCIE-FACTS,
// model/thresholds.hpp); each bit error costs one correctable error (a bad
// TLP or DLLP, a receiver error) and a replay.
inline constexpr double kSpecBitErrorRate = 1e-12;
// A burst needs at least this many errors within one window: one disturbance
// can be reported twice (the root port's "Multiple Corrected error received"
// and the device's detail), so two prove no rate.
inline constexpr std::size_t kMinBurstErrors = 3;
inline constexpr double kBurstWindowS = 60.0;

// The correctable errors per minute that `link`, saturated in both
// directions at the spec's bit error rate, logs: raw transfer rate x lanes x
// 2 x 60 s x 1e-12 (Gen4 x16: 30.7; Gen5 x16: 61.4; Gen1 x1: 0.3). A port
// that logs faster errs beyond the spec whatever it carried. Scaled by the
// profile's correctable_errors_per_gb against its default of 1 per GB, so a
// profile that tolerates fewer errors per GB flags slower bursts too.
[[nodiscard]] double burst_errors_per_minute(const LinkState& link, double correctable_errors_per_gb);

struct CapturedRates {
  std::vector<Verdict> verdicts;
  std::vector<std::string> notes;
};

// Correctable AER errors of the evidence's captured events, by the device
// each names (a port or an endpoint), and the replay counters of GPUs read
// from captured nvidia-smi output:
// - a device whose time-stamped errors reach at least kMinBurstErrors within
//   kBurstWindowS, and more than burst_errors_per_minute of its link (its
//   own capability, or the path link it is an end of; Gen5 x16, the fastest
//   link the 1e-12 rule covers, when the evidence has neither): link_errors,
//   correctable_error_burst_logged, citing the first and last line of the
//   densest minute. Links of Gen6 and above are left to the notes (their
//   spec error rate is before forward error correction);
// - every other device with correctable errors: pass,
//   correctable_errors_within_spec_rate, when its time-stamped errors never
//   came faster (the error rate only: its link is not judged here); or
//   inconclusive, correctable_error_rate_unknown, when the lines carry no
//   time stamps or its link is Gen6 or above;
// - every device with correctable errors: a note naming it, the count, the
//   lines and the most logged within one minute (or that the lines carried
//   no time stamps);
// - every GPU with a capture line and a replay counter: a note naming the
//   count. nvidia-smi does not say since when the counter ran (a reset, a
//   driver load), so no rate and no verdict.
// Empty for a live run (no captured events, no capture lines).
[[nodiscard]] CapturedRates judge_captured_rates(const Evidence& evidence, const ThresholdProfile& profile);

}  // namespace pcieval
