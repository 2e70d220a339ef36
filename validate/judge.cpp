#include "validate/judge.hpp"

#include <utility>

#include "validate/bandwidth_rules.hpp"
#include "validate/capture_rules.hpp"
#include "validate/collective_rules.hpp"
#include "validate/compare.hpp"
#include "validate/error_rules.hpp"
#include "validate/expectation.hpp"
#include "validate/link_rules.hpp"
#include "validate/path_settings_rules.hpp"
#include "validate/peer_rules.hpp"
#include "validate/probe_rules.hpp"
#include "validate/soak_rules.hpp"

namespace pcieval {
namespace {

void append(std::vector<Verdict>& to, std::vector<Verdict> more) {
  for (Verdict& verdict : more) to.push_back(std::move(verdict));
}

Verdict nothing_judged(const Evidence& evidence) {
  Verdict verdict;
  verdict.subject = "node";
  verdict.status = VerdictStatus::kInconclusive;
  verdict.code = ReasonCode::kNothingJudged;
  const std::size_t devices = evidence.devices.size();
  verdict.reason = "nothing was judged: " +
                   // Said of the evidence, not of the machine: a captured
                   // lspci -tv tree or a kernel log names devices it holds no
                   // link of.
                   (devices == 0 ? std::string("no PCI device with a link, no measurement and no kernel log event "
                                               "is in the evidence")
                                 : std::to_string(devices) + (devices == 1 ? " device" : " devices") +
                                       ", none with a PCIe link, and no measurement with a link to hold it against");
  if (!evidence.sysfs_root.empty()) verdict.reason += " (PCI tree read from " + evidence.sysfs_root + ")";
  verdict.remediation =
      "Nothing here exposes a PCIe link (a VM's virtio devices, integrated controllers, or a container without the "
      "host's /sys): on a GPU node run `pcieval check` as root with the host's /sys, or capture `sudo lspci -vv` of "
      "the whole machine and `nvidia-smi -q` and give them to `pcieval diagnose`.";
  return verdict;
}

}  // namespace

std::vector<Verdict> judge_all(const Evidence& evidence, const ThresholdProfile& profile,
                               const JudgeAllOptions& options) {
  LinkRuleOptions links;
  links.expected_gpus = options.expected_gpus;
  links.expectation = expectation_options(profile);
  std::vector<Verdict> verdicts = judge_links(evidence, links);
  append(verdicts, judge_bandwidth(evidence, profile));
  append(verdicts, judge_collectives(evidence, profile));
  append(verdicts, judge_error_counters(evidence, profile));
  append(verdicts, judge_probes(evidence));
  append(verdicts, judge_soak(evidence, profile));
  // The settings on each GPU's path and the peer copies between GPUs (issue 28).
  append(verdicts, judge_path_settings(evidence, profile).verdicts);
  append(verdicts, judge_peers(evidence, profile).verdicts);
  // Captured text's evidence (diagnose; nothing for a live run): every verdict
  // above that rests on a device's captured lines cites them.
  cite_capture_lines(verdicts, evidence);
  append(verdicts, judge_captured(evidence, profile));
  if (options.baseline != nullptr) {
    CompareOptions against_baseline;
    against_baseline.max_drop_fraction = profile.defaults.baseline_max_drop_fraction;
    append(verdicts, judge_against_baseline(evidence, *options.baseline, against_baseline));
  }
  if (verdicts.empty()) verdicts.push_back(nothing_judged(evidence));
  return verdicts;
}

std::vector<std::string> unjudged_notes(const Evidence& evidence, const ThresholdProfile& profile) {
  std::vector<std::string> notes = judge_path_settings(evidence, profile).notes;
  for (std::string& note : judge_peers(evidence, profile).notes) notes.push_back(std::move(note));
  return notes;
}

}  // namespace pcieval
