#include "validate/probe_rules.hpp"

#include <string>

namespace pcieval {

std::vector<Verdict> judge_probes(const Evidence& evidence) {
  std::vector<Verdict> verdicts;
  for (const ProbeRun& run : evidence.probes) {
    if (run.status != ProbeStatus::kFailed) continue;
    Verdict verdict;
    verdict.subject = "probe " + run.key;
    verdict.status = VerdictStatus::kInconclusive;
    verdict.code = ReasonCode::kProbeFailed;
    verdict.reason = run.key + " could not measure: " + run.reason;
    // A failed copy says nothing about the link's speed, but some failures
    // are faults in their own right: wrong data crossed the link.
    verdict.remediation =
        "Run `pcieval check` again on an idle node. If data did not verify, the copy corrupted bytes: check dmesg for "
        "AER and NVIDIA Xid errors and `nvidia-smi -q -d ECC`, and drain the node. If a CUDA call failed, check "
        "`nvidia-smi` (GPU busy, in exclusive mode, or fallen off the bus) and CUDA_VISIBLE_DEVICES.";
    verdicts.push_back(std::move(verdict));
  }
  return verdicts;
}

}  // namespace pcieval
