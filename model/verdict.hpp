// Verdicts: the judgement of the evidence, with stable reason codes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/pci_address.hpp"

namespace pcieval {

// The six outcomes of DESIGN.md.
enum class VerdictStatus {
  kPass,
  kLinkDowngraded,
  kBandwidthLow,
  kLinkErrors,
  kMissing,
  kInconclusive,
};

[[nodiscard]] std::string_view to_string(VerdictStatus status);
[[nodiscard]] bool is_failing(VerdictStatus status);

// Stable reason codes. APPEND ONLY: automation keys on the string names, so a
// code is never renamed, reused or removed.
enum class ReasonCode {
  kLinkAtExpectedState,             // "link_at_expected_state"
  kLinkSpeedBelowExpected,          // "link_speed_below_expected"
  kLinkWidthBelowExpected,          // "link_width_below_expected"
  kLinkSpeedAndWidthBelowExpected,  // "link_speed_and_width_below_expected"
  kGpuLinkSpeedIdle,                // "gpu_link_speed_idle"
  kLinkStateUnknown,                // "link_state_unknown"
  kLinkAboveCapability,             // "link_above_capability"
  kGpusMissing,                     // "gpus_missing"
  kLinkPathUnknown,                 // "link_path_unknown"
  kProbeFailed,                     // "probe_failed"
  kBandwidthAtBudget,               // "bandwidth_at_budget"
  kBandwidthBelowBudget,            // "bandwidth_below_budget"
  kBandwidthTooNoisy,               // "bandwidth_too_noisy"
  kBandwidthBelowBaseline,          // "bandwidth_below_baseline"
  kUncorrectableErrorsUnderLoad,    // "uncorrectable_errors_under_load"
  kCorrectableErrorsUnderLoad,      // "correctable_errors_under_load"
  kBandwidthInWarningBand,          // "bandwidth_in_warning_band" (a pass, above the floor, below the warning line)
  kGpuBusyBeforeRun,                // "gpu_busy_before_run"
  kUncorrectableErrorsLogged,       // "uncorrectable_errors_logged" (a captured kernel log)
  kGpuFellOffBus,                   // "gpu_fell_off_bus" (NVIDIA Xid 79 in a captured kernel log)
  kRunInterrupted,                  // "run_interrupted": a signal stopped the run, or a soak never finished
  kBandwidthDipDuringSoak,          // "bandwidth_dip_during_soak": one round well below the soak's median
  kLinkDroppedDuringSoak,           // "link_dropped_during_soak": a round whose best loaded state was low
  kGpuUnresponsive,                 // "gpu_unresponsive": a copy on the GPU missed its deadline; it was retired
  // Schema 1.5: what the evidence can prove (DESIGN.md "A verdict says exactly what its evidence proves").
  kLinkAtOwnCapability,          // "link_at_own_capability" (a pass): the device runs at the most it can reach; the
                                 // hops above it were not in the evidence and were not judged
  kNoLinkBudget,                 // "no_link_budget": a measured GPU whose link budget the evidence cannot give
  kBandwidthAboveBudget,         // "bandwidth_above_budget": more than the budget allows, so the budget is wrong
  kNoLinkToJudgeAgainst,         // "no_link_to_judge_against": tool numbers with no link stated or captured
  kNothingJudged,                // "nothing_judged": the evidence held nothing to judge (an empty tree, no links)
  kCorrectableErrorBurstLogged,  // "correctable_error_burst_logged": a kernel log's correctable errors on one
                                 // port came faster than a link within the spec's bit error rate can log
  // Schema 1.7: every device a kernel log's correctable errors name gets a verdict of its own.
  kCorrectableErrorsWithinSpecRate,  // "correctable_errors_within_spec_rate" (a pass): a kernel log's correctable
                                     // errors on one device, time-stamped, never faster than the spec allows
  kCorrectableErrorRateUnknown,      // "correctable_error_rate_unknown": correctable errors whose rate the log
                                     // cannot give (lines without time stamps, a Gen6+ link)
};

// The code's stable name; "" for a value that is not a code.
[[nodiscard]] std::string_view to_string(ReasonCode code);
// Every code, in enum order: readers accept exactly these names.
[[nodiscard]] std::vector<ReasonCode> all_reason_codes();

struct LinkRef {
  PciAddress downstream;
  PciAddress upstream;

  bool operator==(const LinkRef&) const = default;
};

struct Verdict {
  std::string subject;  // a BDF, or "node" for node-wide verdicts such as missing GPUs
  VerdictStatus status = VerdictStatus::kInconclusive;
  ReasonCode code = ReasonCode::kLinkStateUnknown;
  std::optional<LinkRef> link;
  std::string reason;       // names its evidence
  std::string remediation;  // the next step; empty for pass

  bool operator==(const Verdict&) const = default;
};

enum class Overall { kPass, kFail, kInconclusive };

[[nodiscard]] std::string_view to_string(Overall overall);

// The worst of the verdicts: any failing verdict fails, otherwise any
// inconclusive one makes the node inconclusive. No verdicts at all is
// inconclusive: a pass needs judged evidence.
[[nodiscard]] Overall overall_of(const std::vector<Verdict>& verdicts);

}  // namespace pcieval
