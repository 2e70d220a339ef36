#include "model/verdict.hpp"

#include <algorithm>

namespace pcieval {

std::string_view to_string(VerdictStatus status) {
  switch (status) {
    case VerdictStatus::kPass:
      return "pass";
    case VerdictStatus::kLinkDowngraded:
      return "link_downgraded";
    case VerdictStatus::kBandwidthLow:
      return "bandwidth_low";
    case VerdictStatus::kLinkErrors:
      return "link_errors";
    case VerdictStatus::kMissing:
      return "missing";
    case VerdictStatus::kInconclusive:
      return "inconclusive";
  }
  return "inconclusive";
}

bool is_failing(VerdictStatus status) {
  return status == VerdictStatus::kLinkDowngraded || status == VerdictStatus::kBandwidthLow ||
         status == VerdictStatus::kLinkErrors || status == VerdictStatus::kMissing;
}

std::string_view to_string(ReasonCode code) {
  switch (code) {
    case ReasonCode::kLinkAtExpectedState:
      return "link_at_expected_state";
    case ReasonCode::kLinkSpeedBelowExpected:
      return "link_speed_below_expected";
    case ReasonCode::kLinkWidthBelowExpected:
      return "link_width_below_expected";
    case ReasonCode::kLinkSpeedAndWidthBelowExpected:
      return "link_speed_and_width_below_expected";
    case ReasonCode::kGpuLinkSpeedIdle:
      return "gpu_link_speed_idle";
    case ReasonCode::kLinkStateUnknown:
      return "link_state_unknown";
    case ReasonCode::kLinkAboveCapability:
      return "link_above_capability";
    case ReasonCode::kGpusMissing:
      return "gpus_missing";
    case ReasonCode::kLinkPathUnknown:
      return "link_path_unknown";
    case ReasonCode::kProbeFailed:
      return "probe_failed";
    case ReasonCode::kBandwidthAtBudget:
      return "bandwidth_at_budget";
    case ReasonCode::kBandwidthBelowBudget:
      return "bandwidth_below_budget";
    case ReasonCode::kBandwidthTooNoisy:
      return "bandwidth_too_noisy";
    case ReasonCode::kBandwidthBelowBaseline:
      return "bandwidth_below_baseline";
    case ReasonCode::kUncorrectableErrorsUnderLoad:
      return "uncorrectable_errors_under_load";
    case ReasonCode::kCorrectableErrorsUnderLoad:
      return "correctable_errors_under_load";
    case ReasonCode::kBandwidthInWarningBand:
      return "bandwidth_in_warning_band";
    case ReasonCode::kGpuBusyBeforeRun:
      return "gpu_busy_before_run";
    case ReasonCode::kUncorrectableErrorsLogged:
      return "uncorrectable_errors_logged";
    case ReasonCode::kGpuFellOffBus:
      return "gpu_fell_off_bus";
    case ReasonCode::kRunInterrupted:
      return "run_interrupted";
    case ReasonCode::kBandwidthDipDuringSoak:
      return "bandwidth_dip_during_soak";
    case ReasonCode::kLinkDroppedDuringSoak:
      return "link_dropped_during_soak";
    case ReasonCode::kGpuUnresponsive:
      return "gpu_unresponsive";
    case ReasonCode::kLinkAtOwnCapability:
      return "link_at_own_capability";
    case ReasonCode::kNoLinkBudget:
      return "no_link_budget";
    case ReasonCode::kBandwidthAboveBudget:
      return "bandwidth_above_budget";
    case ReasonCode::kNoLinkToJudgeAgainst:
      return "no_link_to_judge_against";
    case ReasonCode::kNothingJudged:
      return "nothing_judged";
    case ReasonCode::kCorrectableErrorBurstLogged:
      return "correctable_error_burst_logged";
  }
  return "";  // not a code: all_reason_codes stops here
}

std::vector<ReasonCode> all_reason_codes() {
  // Codes are appended, never removed, so they run from 0 without a gap.
  std::vector<ReasonCode> codes;
  for (int value = 0; !to_string(static_cast<ReasonCode>(value)).empty(); ++value) {
    codes.push_back(static_cast<ReasonCode>(value));
  }
  return codes;
}

std::string_view to_string(Overall overall) {
  switch (overall) {
    case Overall::kPass:
      return "pass";
    case Overall::kFail:
      return "fail";
    case Overall::kInconclusive:
      return "inconclusive";
  }
  return "inconclusive";
}

Overall overall_of(const std::vector<Verdict>& verdicts) {
  if (verdicts.empty()) return Overall::kInconclusive;
  const auto failing = [](const Verdict& v) { return is_failing(v.status); };
  if (std::any_of(verdicts.begin(), verdicts.end(), failing)) return Overall::kFail;
  const auto inconclusive = [](const Verdict& v) { return v.status == VerdictStatus::kInconclusive; };
  if (std::any_of(verdicts.begin(), verdicts.end(), inconclusive)) return Overall::kInconclusive;
  return Overall::kPass;
}

}  // namespace pcieval
