#include "validate/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "model/text.hpp"
#include "validate/bandwidth_rules.hpp"
#include "validate/link_rules.hpp"

namespace pcieval {
namespace {

int severity(VerdictStatus status) {
  if (is_failing(status)) return 2;
  return status == VerdictStatus::kInconclusive ? 1 : 0;
}

SubjectOutcome outcome_of(const Results& results, const std::string& subject) {
  SubjectOutcome outcome;
  for (const Verdict& verdict : results.verdicts) {
    if (verdict.subject != subject) continue;
    if (!outcome.present || severity(verdict.status) > severity(outcome.status)) {
      outcome.status = verdict.status;
      outcome.code = std::string(to_string(verdict.code));
    }
    outcome.present = true;
  }
  return outcome;
}

// The device link's state as the verdict would see it: the best state under
// load when samples exist, else as read.
std::optional<std::string> device_link(const Results& results, const std::string& subject) {
  for (const DeviceRecord& device : results.evidence.devices) {
    if (to_string(device.function.bdf) != subject || device.path.empty()) continue;
    const Link& link = device.path.front();
    if (auto loaded = best_state_under_load(results.evidence.link_samples, link.downstream)) {
      return to_string(*loaded);
    }
    if (auto negotiated = link.negotiated()) return to_string(negotiated.value());
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<double> median_of(const Evidence& evidence, const std::string& subject, const std::string& probe,
                                Direction direction) {
  for (const Measurement& m : evidence.measurements) {
    if (is_link_budget_measurement(m) && m.subject == subject && m.probe == probe && m.direction == direction) {
      return m.stats.median_gbps;
    }
  }
  return std::nullopt;
}

// The number alone ("-" when not measured): the unit follows the pair.
std::string gbps_number_text(const std::optional<double>& gbps) { return gbps ? fixed_text(*gbps, 1) : "-"; }

std::string outcome_text(const SubjectOutcome& outcome) {
  return outcome.present ? std::string(to_string(outcome.status)) : std::string("absent");
}

}  // namespace

Comparison compare_results(const Results& before, const Results& after, const CompareOptions& options) {
  std::vector<std::string> subjects;
  for (const Results* run : {&after, &before}) {
    for (const Verdict& verdict : run->verdicts) {
      if (std::find(subjects.begin(), subjects.end(), verdict.subject) == subjects.end()) {
        subjects.push_back(verdict.subject);
      }
    }
  }

  Comparison comparison;
  comparison.after_overall = overall_of(after.verdicts);
  for (const std::string& subject : subjects) {
    SubjectChange change;
    change.subject = subject;
    change.before = outcome_of(before, subject);
    change.after = outcome_of(after, subject);
    change.link_before = device_link(before, subject);
    change.link_after = device_link(after, subject);
    change.line = subject;
    if (change.link_before || change.link_after) {
      change.line += " link " + change.link_before.value_or("-") + " -> " + change.link_after.value_or("-") + ",";
    }
    for (const auto& [probe, direction] : {std::pair{std::string("h2d_ce"), Direction::kHostToDevice},
                                           std::pair{std::string("d2h_ce"), Direction::kDeviceToHost}}) {
      BandwidthChange bandwidth{probe, direction, median_of(before.evidence, subject, probe, direction),
                                median_of(after.evidence, subject, probe, direction)};
      if (!bandwidth.before_gbps && !bandwidth.after_gbps) continue;
      change.line += " " + probe + " " + gbps_number_text(bandwidth.before_gbps) + " -> " +
                     gbps_number_text(bandwidth.after_gbps) + " GB/s,";
      if (bandwidth.before_gbps && bandwidth.after_gbps &&
          *bandwidth.after_gbps < (1.0 - options.max_drop_fraction) * *bandwidth.before_gbps) {
        change.why_worse.push_back(probe + " fell from " + gbps_number_text(bandwidth.before_gbps) + " to " +
                                   gbps_number_text(bandwidth.after_gbps) + " GB/s");
      }
      change.bandwidth.push_back(std::move(bandwidth));
    }
    change.line += " " + outcome_text(change.before) + " -> " + outcome_text(change.after);
    if (change.before.present && !change.after.present) {
      change.why_worse.push_back("absent from the after run");
    } else if (change.after.present && change.before.present &&
               severity(change.after.status) > severity(change.before.status)) {
      change.why_worse.push_back("verdict " + outcome_text(change.before) + " became " + outcome_text(change.after));
    }
    change.worse = !change.why_worse.empty();
    if (change.worse) {
      std::string why;
      for (const auto& reason : change.why_worse) why += (why.empty() ? "" : "; ") + reason;
      change.line += " (WORSE: " + why + ")";
    }
    comparison.any_worse = comparison.any_worse || change.worse;
    comparison.subjects.push_back(std::move(change));
  }
  return comparison;
}

std::vector<Verdict> judge_against_baseline(const Evidence& now, const Evidence& baseline,
                                            const CompareOptions& options) {
  std::vector<Verdict> verdicts;
  for (const Measurement& m : now.measurements) {
    if (!is_link_budget_measurement(m)) continue;
    const auto known_good = median_of(baseline, m.subject, m.probe, m.direction);
    if (!known_good || m.stats.median_gbps >= (1.0 - options.max_drop_fraction) * *known_good) continue;
    Verdict verdict;
    verdict.subject = m.subject;
    verdict.status = VerdictStatus::kBandwidthLow;
    verdict.code = ReasonCode::kBandwidthBelowBaseline;
    verdict.reason = m.probe + " " + gbps_number_text(m.stats.median_gbps) + " GB/s is more than " +
                     std::to_string(std::lround(options.max_drop_fraction * 100)) + "% below the baseline's " +
                     gbps_number_text(known_good) + " GB/s";
    verdict.remediation =
        "Compare the link state and AER counters with the baseline run (`pcieval compare BASELINE NOW`); check "
        "what changed on the node since (firmware, BIOS settings, a reseat, other jobs on the GPU).";
    verdicts.push_back(std::move(verdict));
  }
  return verdicts;
}

}  // namespace pcieval
