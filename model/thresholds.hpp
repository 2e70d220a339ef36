// The numbers the validator judges with: a threshold profile (the built-in
// defaults, or a --profile file) with overrides per GPU model or PCI device
// id. The effective profile is written into every results document, so a
// verdict can always be traced to the thresholds that produced it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/measurement.hpp"

namespace pcieval {

// How a copy's median is held against its link budget.
struct BandwidthThresholds {
  // bandwidth_low below this fraction of the budget. Derived from PCIE-FACTS
  // section 3 against this project's budget (reads for h2d, posted writes for
  // d2h, MPS 256): healthy GPUs reach 0.95 (H100 Gen5 x16, nvbandwidth CE
  // 55.3 of 58.45 h2d), 0.88 (A100 Gen4, bandwidthTest 25.7 of 29.22) and 0.83
  // (P100 Gen3, 12.15 of 14.61); Azure's per-SKU acceptance floors sit at 0.82
  // (H100, 48) and 0.72 (A100, 21). 0.75 passes every healthy figure there
  // and fails the platform-limited A100 PCIe host (17.3 h2d, 0.59).
  double floor_fraction = 0.75;
  // Between the floor and this fraction a copy passes with a warning
  // (bandwidth_in_warning_band): worth a look, not a drain. Every healthy
  // figure of PCIE-FACTS section 3 clears 0.80 (the lowest: an RTX 4090's
  // 23.90 of 29.22 GB/s, 0.82; a P100's 0.83), so a warning names a card
  // slower than every healthy reference. Azure's band (its floor to 1.05 x
  // its floor) is narrower because its floors are per SKU.
  double warn_fraction = 0.80;
  int min_trials = 3;
  // A spread above this (coefficient of variation of the trials) means the
  // median cannot be trusted: something else used the link or the host.
  // Trials on an idle node agree within a few percent (PCIE-FACTS section 3).
  double max_cv = 0.10;
};

// A floor for one probe, and optionally one direction of it: group_ce's
// total, say, may be held to a lower fraction than one GPU alone.
struct ProbeThresholds {
  std::string probe;                   // "h2d_ce", "group_ce", ...
  std::optional<Direction> direction;  // nullopt: both directions
  std::optional<double> floor_fraction;
  std::optional<double> warn_fraction;
};

// What a finding about a path's settings does to the node (issue 28): fails
// it (status misconfigured, exit 1), leaves it inconclusive, or passes with a
// warning code (as bandwidth_in_warning_band does). "fail", "inconclusive",
// "warn".
enum class SettingSeverity { kFail, kInconclusive, kWarn };

// "fail", "inconclusive", "warn": the profile's words.
[[nodiscard]] constexpr std::string_view to_string(SettingSeverity severity) {
  switch (severity) {
    case SettingSeverity::kFail:
      return "fail";
    case SettingSeverity::kInconclusive:
      return "inconclusive";
    case SettingSeverity::kWarn:
      return "warn";
  }
  return "fail";
}

// The path-settings rules' severities, and the floor for peer traffic that
// crosses the root complex by design. Node-wide: read from `defaults` only.
struct PathSettingThresholds {
  // ACS redirect on a switch port between two GPUs sends their peer traffic
  // through the root complex: NCCL at a fraction of its rate or hung (NCCL's
  // troubleshooting guide). On a bare-metal GPU node that is a fault; a
  // virtualisation host that keeps ACS on to isolate passed-through GPUs says
  // "warn" or "inconclusive" in its profile.
  SettingSeverity acs_redirect = SettingSeverity::kFail;
  // A path programmed at 128 bytes where every hop supports 256 or more
  // costs ~7 % of a link's budget (PCIE-FACTS 2.3), which the budget now
  // charges; many healthy hosts ship so. A warning.
  SettingSeverity payload_below_supported = SettingSeverity::kWarn;
  // A device programmed larger than the port above it sends TLPs the port
  // must reject as malformed: a fault.
  SettingSeverity payload_above_port = SettingSeverity::kFail;
  // ASPM on a GPU's link is the trigger for the retrain-on-wake the mission
  // names; under load the link stays in L0, so it warns by default.
  SettingSeverity aspm_enabled = SettingSeverity::kWarn;
  // DMA through IOMMU translation (not iommu=pt) can slow or block peer
  // traffic; it is a choice (security, VMs), so it warns by default.
  SettingSeverity iommu_translated = SettingSeverity::kWarn;
  // Peer copies between GPUs whose traffic crosses the root complex by
  // design (different root ports or sockets) are judged against this floor
  // in GB/s when set; unset, they are reported and not judged.
  std::optional<double> cross_root_peer_floor_gbps;
};

// The tunable numbers of every rule.
struct ThresholdSet {
  BandwidthThresholds bandwidth;
  std::vector<ProbeThresholds> per_probe;  // later entries win
  // Correctable errors (AER correctable, NVML replays) tolerated per GB that
  // crossed the port. PCIe Gen1-Gen5 require a bit error rate of at most
  // 1e-12: 1 GB is 8e9 bits, so a link at the spec limit retries about 0.008
  // times per GB. 1 per GB is over a hundred times that: a link that bad is
  // marginal (signal integrity), not unlucky.
  double correctable_errors_per_gb = 1.0;
  // A GPU busier than this before the probes ran (NVML utilisation) shares
  // its link with someone else's job: its copies prove nothing. An idle GPU
  // reads 0; 5 % forgives a monitoring agent's sample that caught a kernel.
  int max_gpu_utilization_percent = 5;
  // --baseline: a median that fell by more than this fraction is low.
  double baseline_max_drop_fraction = 0.10;
  // A GPU under an emulated port (QEMU's pcie-root-port, a guest with no
  // port above the GPU) has no physical link above it in the evidence: the
  // hypervisor hides the slot. Cloud GPU platforms wire their GPUs at full
  // speed and width, so by default the GPU's own capability is what its link
  // is held to (and its budget computed from), said in a note. false: such a
  // link is inconclusive instead. Node-wide: read from `defaults` only.
  bool assume_full_link_behind_virtual_port = true;
  // Schema 1.7.
  PathSettingThresholds path_settings;
};

// Which GPUs an override applies to: every given field must match.
struct DeviceMatch {
  std::optional<std::string> name_contains;  // case-insensitive, against NVML's name ("H100 PCIe")
  std::optional<std::uint16_t> vendor_id;    // 0x10de
  std::optional<std::uint16_t> device_id;    // 0x2331
};

// Partial thresholds for matching GPUs; what is unset keeps the default.
struct ThresholdOverride {
  DeviceMatch match;
  std::optional<double> floor_fraction;
  std::optional<double> warn_fraction;
  std::optional<int> min_trials;
  std::optional<double> max_cv;
  std::vector<ProbeThresholds> per_probe;
  std::optional<double> correctable_errors_per_gb;
  std::optional<int> max_gpu_utilization_percent;
};

struct ThresholdProfile {
  std::string name = "default";
  std::string source = "built-in";  // "built-in", or the --profile file as given
  ThresholdSet defaults;
  std::vector<ThresholdOverride> overrides;  // in file order; later matches win
};

}  // namespace pcieval
