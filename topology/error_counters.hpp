// Error counters read before and after the probes. A link that retried while
// copying shows it here even when its speed and width look right: AER totals
// on both ends of the link (errors may be counted at the link partner,
// PCIE-FACTS 4.2) and the GPU's own replay counter.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/pci_address.hpp"
#include "model/samples.hpp"
#include "topology/nvml.hpp"

namespace pcieval {

inline constexpr std::string_view kCounterAerCorrectable = "aer_correctable";  // aer_dev_correctable TOTAL_ERR_COR
inline constexpr std::string_view kCounterAerFatal = "aer_fatal";              // aer_dev_fatal TOTAL_ERR_FATAL
inline constexpr std::string_view kCounterAerNonfatal = "aer_nonfatal";        // aer_dev_nonfatal TOTAL_ERR_NONFATAL
inline constexpr std::string_view kCounterNvmlReplay = "nvml_replay";          // nvmlDeviceGetPcieReplayCounter

// Every counter read at one moment. A counter that could not be read is
// absent, not zero (a zero would hide a rise); `notes` says why for anything
// other than an AER file the kernel does not provide (AER off is normal).
struct CounterSnapshot {
  std::map<PciAddress, std::map<std::string, std::uint64_t>> values;
  std::vector<std::string> notes;
};

// Reads the AER totals of `devices` from `<sysfs_root>/bus/pci/devices/<bdf>/`
// and, when `nvml` is given, the replay counter of each of `nvml_gpus`.
[[nodiscard]] CounterSnapshot read_error_counters(const std::filesystem::path& sysfs_root,
                                                  const std::vector<PciAddress>& devices,
                                                  const NvmlReader* nvml = nullptr,
                                                  const std::vector<PciAddress>& nvml_gpus = {});

// Pairs two snapshots into one delta per counter read both times, ordered by
// device then counter name. A counter present in only one snapshot is left
// out: with one side unknown there is no rise to report, and inventing a zero
// for the missing side would turn "not read" into a count. A counter that
// fell (a device reset or a driver reload between the reads) is kept as read,
// for the validator to judge.
[[nodiscard]] std::vector<CounterDelta> counter_deltas(const CounterSnapshot& before, const CounterSnapshot& after);

}  // namespace pcieval
