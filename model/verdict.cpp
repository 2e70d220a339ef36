#include "model/verdict.hpp"

#include <algorithm>

#include "model/enum_names.hpp"

namespace pcieval {
namespace {

constexpr EnumNames<VerdictStatus, 7> kVerdictStatusNames{{{VerdictStatus::kPass, "pass"},
                                                           {VerdictStatus::kLinkDowngraded, "link_downgraded"},
                                                           {VerdictStatus::kBandwidthLow, "bandwidth_low"},
                                                           {VerdictStatus::kLinkErrors, "link_errors"},
                                                           {VerdictStatus::kMissing, "missing"},
                                                           {VerdictStatus::kInconclusive, "inconclusive"},
                                                           {VerdictStatus::kMisconfigured, "misconfigured"}}};
static_assert(names_every_value_in_order(kVerdictStatusNames));

// Codes are appended, never removed, so they run from 0 without a gap: a
// code appended to verdict.hpp is appended here, and becomes the last below.
constexpr EnumNames<ReasonCode, 44> kReasonCodeNames{{
    {ReasonCode::kLinkAtExpectedState, "link_at_expected_state"},
    {ReasonCode::kLinkSpeedBelowExpected, "link_speed_below_expected"},
    {ReasonCode::kLinkWidthBelowExpected, "link_width_below_expected"},
    {ReasonCode::kLinkSpeedAndWidthBelowExpected, "link_speed_and_width_below_expected"},
    {ReasonCode::kGpuLinkSpeedIdle, "gpu_link_speed_idle"},
    {ReasonCode::kLinkStateUnknown, "link_state_unknown"},
    {ReasonCode::kLinkAboveCapability, "link_above_capability"},
    {ReasonCode::kGpusMissing, "gpus_missing"},
    {ReasonCode::kLinkPathUnknown, "link_path_unknown"},
    {ReasonCode::kProbeFailed, "probe_failed"},
    {ReasonCode::kBandwidthAtBudget, "bandwidth_at_budget"},
    {ReasonCode::kBandwidthBelowBudget, "bandwidth_below_budget"},
    {ReasonCode::kBandwidthTooNoisy, "bandwidth_too_noisy"},
    {ReasonCode::kBandwidthBelowBaseline, "bandwidth_below_baseline"},
    {ReasonCode::kUncorrectableErrorsUnderLoad, "uncorrectable_errors_under_load"},
    {ReasonCode::kCorrectableErrorsUnderLoad, "correctable_errors_under_load"},
    {ReasonCode::kBandwidthInWarningBand, "bandwidth_in_warning_band"},
    {ReasonCode::kGpuBusyBeforeRun, "gpu_busy_before_run"},
    {ReasonCode::kUncorrectableErrorsLogged, "uncorrectable_errors_logged"},
    {ReasonCode::kGpuFellOffBus, "gpu_fell_off_bus"},
    {ReasonCode::kRunInterrupted, "run_interrupted"},
    {ReasonCode::kBandwidthDipDuringSoak, "bandwidth_dip_during_soak"},
    {ReasonCode::kLinkDroppedDuringSoak, "link_dropped_during_soak"},
    {ReasonCode::kGpuUnresponsive, "gpu_unresponsive"},
    {ReasonCode::kLinkAtOwnCapability, "link_at_own_capability"},
    {ReasonCode::kNoLinkBudget, "no_link_budget"},
    {ReasonCode::kBandwidthAboveBudget, "bandwidth_above_budget"},
    {ReasonCode::kNoLinkToJudgeAgainst, "no_link_to_judge_against"},
    {ReasonCode::kNothingJudged, "nothing_judged"},
    {ReasonCode::kCorrectableErrorBurstLogged, "correctable_error_burst_logged"},
    {ReasonCode::kCorrectableErrorsWithinSpecRate, "correctable_errors_within_spec_rate"},
    {ReasonCode::kCorrectableErrorRateUnknown, "correctable_error_rate_unknown"},
    {ReasonCode::kAcsRedirectsPeerTraffic, "acs_redirects_peer_traffic"},
    {ReasonCode::kPayloadBelowSupported, "payload_below_supported"},
    {ReasonCode::kPayloadAbovePort, "payload_above_port"},
    {ReasonCode::kAspmEnabled, "aspm_enabled"},
    {ReasonCode::kIommuTranslated, "iommu_translated"},
    {ReasonCode::kPathSettingsAsExpected, "path_settings_as_expected"},
    {ReasonCode::kPathSettingsNotRead, "path_settings_not_read"},
    {ReasonCode::kPeerBandwidthAtBudget, "peer_bandwidth_at_budget"},
    {ReasonCode::kPeerBandwidthBelowBudget, "peer_bandwidth_below_budget"},
    {ReasonCode::kPeerSlowerThanHostStaged, "peer_slower_than_host_staged"},
    {ReasonCode::kPeerAccessUnavailable, "peer_access_unavailable"},
    {ReasonCode::kPeerBandwidthBelowFloor, "peer_bandwidth_below_floor"},
}};
static_assert(names_every_value_in_order(kReasonCodeNames) &&
              kReasonCodeNames.size() == static_cast<std::size_t>(ReasonCode::kPeerBandwidthBelowFloor) + 1);

constexpr EnumNames<Overall, 3> kOverallNames{
    {{Overall::kPass, "pass"}, {Overall::kFail, "fail"}, {Overall::kInconclusive, "inconclusive"}}};
static_assert(names_every_value_in_order(kOverallNames));

}  // namespace

std::string_view to_string(VerdictStatus status) { return name_of(kVerdictStatusNames, status, "inconclusive"); }

bool is_failing(VerdictStatus status) {
  return status == VerdictStatus::kLinkDowngraded || status == VerdictStatus::kBandwidthLow ||
         status == VerdictStatus::kLinkErrors || status == VerdictStatus::kMissing ||
         status == VerdictStatus::kMisconfigured;
}

std::string_view to_string(ReasonCode code) {
  return name_of(kReasonCodeNames, code, "");  // "": not a code
}

std::vector<ReasonCode> all_reason_codes() {
  std::vector<ReasonCode> codes;
  codes.reserve(kReasonCodeNames.size());
  for (const auto& [code, name] : kReasonCodeNames) codes.push_back(code);
  return codes;
}

std::string_view to_string(Overall overall) { return name_of(kOverallNames, overall, "inconclusive"); }

Overall overall_of(const std::vector<Verdict>& verdicts) {
  if (verdicts.empty()) return Overall::kInconclusive;
  const auto failing = [](const Verdict& v) { return is_failing(v.status); };
  if (std::any_of(verdicts.begin(), verdicts.end(), failing)) return Overall::kFail;
  const auto inconclusive = [](const Verdict& v) { return v.status == VerdictStatus::kInconclusive; };
  if (std::any_of(verdicts.begin(), verdicts.end(), inconclusive)) return Overall::kInconclusive;
  return Overall::kPass;
}

}  // namespace pcieval
