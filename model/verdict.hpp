// Verdicts: the judgement of the evidence, with stable reason codes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/pci_address.hpp"

namespace pcieval {

// The outcomes of DESIGN.md.
enum class VerdictStatus {
  kPass,
  kLinkDowngraded,
  kBandwidthLow,
  kLinkErrors,
  kMissing,
  kInconclusive,
  // Schema 1.7 (issue 28), failing: a setting on the path (ACS redirect on a
  // switch port, a payload size, ASPM, IOMMU translation) reroutes or slows
  // traffic on links that trained at full Gen and width. "misconfigured".
  kMisconfigured,
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
  // Schema 1.7 (issue 28): the settings on a path, and traffic between GPUs.
  kAcsRedirectsPeerTraffic,   // "acs_redirects_peer_traffic": ACS request/completion redirect on a switch port that
                              // a GPU pair's peer traffic crosses: it goes up through the root complex
  kPayloadBelowSupported,     // "payload_below_supported": Max_Payload_Size programmed below what every hop of the
                              // path supports
  kPayloadAbovePort,          // "payload_above_port": a device programmed with a larger Max_Payload_Size than the
                              // port above it (malformed-TLP risk)
  kAspmEnabled,               // "aspm_enabled": ASPM L0s or L1 enabled on a link a GPU's traffic crosses
  kIommuTranslated,           // "iommu_translated": the GPUs' DMA goes through IOMMU translation (not iommu=pt)
  kPathSettingsAsExpected,    // "path_settings_as_expected" (a pass): payload, ASPM and ACS on the path read and
                              // none costs bandwidth or reroutes peer traffic
  kPathSettingsNotRead,       // "path_settings_not_read": config space was not readable (needs root, a capture
                              // without the registers) where peer routing was asked to be judged
  kPeerBandwidthAtBudget,     // "peer_bandwidth_at_budget" (a pass): a GPU pair's peer copies within its path's budget
  kPeerBandwidthBelowBudget,  // "peer_bandwidth_below_budget": a GPU pair's peer copies below the floor of its budget
  kPeerSlowerThanHostStaged,  // "peer_slower_than_host_staged": peer copies slower than the same copy staged through
                              // host memory: a routing fault whatever the link
  kPeerAccessUnavailable,     // "peer_access_unavailable": a GPU pair that shares a switch without peer access
  kPeerBandwidthBelowFloor,   // "peer_bandwidth_below_floor": a pair whose traffic crosses the root complex by
                              // design, below the site profile's floor for such pairs
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
