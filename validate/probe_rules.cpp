#include "validate/probe_rules.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace pcieval {
namespace {

constexpr std::string_view kProbeFailedRemediation =
    "Run `pcieval check` again on an idle node. If data did not verify, the copy corrupted bytes: check dmesg for "
    "AER and NVIDIA Xid errors and `nvidia-smi -q -d ECC`, and drain the node. If a CUDA call failed, check "
    "`nvidia-smi` (GPU busy, in exclusive mode, or fallen off the bus) and CUDA_VISIBLE_DEVICES.";

// A GPU that stopped completing copies fails the node, whatever its link
// registers say: a job on it would hang the same way.
std::string unresponsive_remediation(const std::string& gpu) {
  return "Drain the node: a GPU that hangs under a copy must not take jobs. Check `dmesg` for NVIDIA Xid 79 (fallen "
         "off the bus), Xid 8 or 119 and for AER errors on its path, and `nvidia-smi -q -i " +
         gpu +
         "`; then reseat the GPU, check its slot, riser and power cables, and run `pcieval check` again after a "
         "reboot.";
}

struct Failure {
  std::string key;  // the probe
  const GpuFault* fault;
};

struct FailedGpu {
  PciAddress gpu;
  std::vector<Failure> failures;  // in probe order, then the probe's own order
};

// "h2d_ce, d2h_ce: <error>; bidir_ce: <other error>": the probes that met
// each distinct error, in the order first met.
std::string errors_by_message(const std::vector<const Failure*>& failures) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // error, probe keys
  for (const Failure* failure : failures) {
    auto group =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == failure->fault->error; });
    if (group == groups.end()) {
      groups.emplace_back(failure->fault->error, std::vector<std::string>{});
      group = groups.end() - 1;
    }
    if (std::find(group->second.begin(), group->second.end(), failure->key) == group->second.end()) {
      group->second.push_back(failure->key);
    }
  }
  std::string text;
  for (const auto& [error, keys] : groups) {
    std::string probes;
    for (const std::string& key : keys) probes += (probes.empty() ? "" : ", ") + key;
    text += (text.empty() ? "" : "; ") + probes + ": " + error;
  }
  return text;
}

Verdict gpu_verdict(const FailedGpu& failed) {
  Verdict verdict;
  verdict.subject = to_string(failed.gpu);
  const auto hung =
      std::find_if(failed.failures.begin(), failed.failures.end(), [](const Failure& f) { return f.fault->retired; });
  std::vector<const Failure*> answered;  // errors the GPU answered with
  for (const Failure& failure : failed.failures) {
    if (!failure.fault->retired) answered.push_back(&failure);
  }
  if (hung == failed.failures.end()) {
    verdict.status = VerdictStatus::kInconclusive;
    verdict.code = ReasonCode::kProbeFailed;
    verdict.reason = verdict.subject + " could not be measured: " + errors_by_message(answered);
    verdict.remediation = std::string(kProbeFailedRemediation);
    return verdict;
  }
  // The first retired fault is the copy that hung; every later one is a
  // probe that refused the retired GPU, and says only that.
  verdict.status = VerdictStatus::kLinkErrors;
  verdict.code = ReasonCode::kGpuUnresponsive;
  verdict.reason = verdict.subject + " stopped responding in " + hung->key + ": " + hung->fault->error +
                   "; it was not used again in this run";
  std::vector<std::string> skipped_by;
  for (auto later = hung + 1; later != failed.failures.end(); ++later) {
    if (!later->fault->retired || later->key == hung->key) continue;
    if (std::find(skipped_by.begin(), skipped_by.end(), later->key) == skipped_by.end()) {
      skipped_by.push_back(later->key);
    }
  }
  if (!skipped_by.empty()) {
    std::string keys;
    for (const std::string& key : skipped_by) keys += (keys.empty() ? "" : ", ") + key;
    verdict.reason += " (not measured by " + keys + ")";
  }
  if (!answered.empty()) verdict.reason += "; it also failed in " + errors_by_message(answered);
  verdict.remediation = unresponsive_remediation(verdict.subject);
  return verdict;
}

}  // namespace

std::vector<Verdict> judge_probes(const Evidence& evidence) {
  std::vector<Verdict> verdicts;
  std::vector<FailedGpu> failed_gpus;
  for (const ProbeRun& run : evidence.probes) {
    if (run.status != ProbeStatus::kFailed) continue;
    for (const GpuFault& fault : run.gpu_faults) {
      auto failed =
          std::find_if(failed_gpus.begin(), failed_gpus.end(), [&](const FailedGpu& f) { return f.gpu == fault.gpu; });
      if (failed == failed_gpus.end()) {
        failed_gpus.push_back({fault.gpu, {}});
        failed = failed_gpus.end() - 1;
      }
      failed->failures.push_back({run.key, &fault});
    }
    if (run.only_gpu_faults && !run.gpu_faults.empty()) continue;
    Verdict verdict;
    verdict.subject = "probe " + run.key;
    verdict.status = VerdictStatus::kInconclusive;
    verdict.code = ReasonCode::kProbeFailed;
    verdict.reason = run.key + " could not measure: " + run.reason;
    // A failed copy says nothing about the link's speed, but some failures
    // are faults in their own right: wrong data crossed the link.
    verdict.remediation = std::string(kProbeFailedRemediation);
    verdicts.push_back(std::move(verdict));
  }
  for (const FailedGpu& failed : failed_gpus) verdicts.push_back(gpu_verdict(failed));
  return verdicts;
}

}  // namespace pcieval
