#include "validate/error_rules.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "model/units.hpp"
#include "validate/profile_lookup.hpp"

namespace pcieval {
namespace {

// Whether `device` is `gpu` itself or a port on its path.
bool on_path_of(const DeviceRecord& gpu, const PciAddress& device) {
  if (gpu.function.bdf == device) return true;
  return std::any_of(gpu.path.begin(), gpu.path.end(),
                     [&](const Link& link) { return link.downstream == device || link.upstream == device; });
}

// Bytes the GPUs at or below `device` moved in the timed trials (warm-ups
// are not counted, so the rate errs towards more errors per GB, never fewer
// than were there).
double gigabytes_through(const Evidence& evidence, const PciAddress& device) {
  double bytes = 0;
  for (const Measurement& m : evidence.measurements) {
    if (m.gpus.empty()) continue;
    const double per_gpu_bytes = static_cast<double>(m.bytes_per_trial) / static_cast<double>(m.gpus.size()) *
                                 static_cast<double>(m.trials_gbps.size());
    for (const PciAddress& gpu : m.gpus) {
      const DeviceRecord* record = find_device(evidence, gpu);
      if (record != nullptr && on_path_of(*record, device)) bytes += per_gpu_bytes;
    }
  }
  return bytes / kBytesPerGigabyte;
}

}  // namespace

std::vector<Verdict> judge_error_counters(const Evidence& evidence, const ThresholdProfile& profile) {
  std::map<PciAddress, std::vector<const CounterDelta*>> grown;
  for (const CounterDelta& delta : evidence.counters) {
    if (delta.after > delta.before) grown[delta.device].push_back(&delta);
  }
  std::vector<Verdict> verdicts;
  for (const auto& [device, deltas] : grown) {
    std::string uncorrectable;
    std::string correctable;
    std::uint64_t correctable_count = 0;
    for (const CounterDelta* delta : deltas) {
      const std::string text =
          delta->counter + " " + std::to_string(delta->before) + " -> " + std::to_string(delta->after);
      if (delta->counter == "aer_fatal" || delta->counter == "aer_nonfatal") {
        uncorrectable += (uncorrectable.empty() ? "" : ", ") + text;
      } else if (delta->counter == "aer_correctable" || delta->counter == "nvml_replay") {
        correctable += (correctable.empty() ? "" : ", ") + text;
        correctable_count += delta->after - delta->before;
      }
    }
    Verdict verdict;
    verdict.subject = to_string(device);
    verdict.status = VerdictStatus::kLinkErrors;
    if (!uncorrectable.empty()) {
      verdict.code = ReasonCode::kUncorrectableErrorsUnderLoad;
      verdict.reason = "uncorrectable PCIe errors while the probes ran: " + uncorrectable;
      verdict.remediation =
          "Uncorrectable errors lose or poison data: drain the node, check dmesg for AER and "
          "NVIDIA Xid messages naming " +
          verdict.subject + ", reseat the device and its riser or cable.";
      verdicts.push_back(std::move(verdict));
      continue;
    }
    const double gigabytes = gigabytes_through(evidence, device);
    if (correctable.empty() || gigabytes <= 0) continue;
    const double per_gb = static_cast<double>(correctable_count) / gigabytes;
    // A GPU's own override applies to its counters; a port's are held to
    // the node-wide defaults (find_device knows endpoints only).
    const double tolerated_per_gb = thresholds_for(profile, find_device(evidence, device)).correctable_errors_per_gb;
    if (per_gb <= tolerated_per_gb) continue;
    char rate[96];
    std::snprintf(rate, sizeof rate, "%.2f per GB over %.1f GB, tolerated %g per GB", per_gb, gigabytes,
                  tolerated_per_gb);
    verdict.code = ReasonCode::kCorrectableErrorsUnderLoad;
    verdict.reason = "correctable PCIe errors while the probes ran: " + correctable + " (" + rate + ")";
    verdict.remediation =
        "Each correctable error is a replayed packet: the link works but its signal is marginal. Reseat " +
        verdict.subject +
        " and its riser or cable, check retimers and the slot, and watch `lspci -vv` AER status; a link that "
        "keeps retrying often retrains to a lower speed later.";
    verdicts.push_back(std::move(verdict));
  }
  return verdicts;
}

}  // namespace pcieval
