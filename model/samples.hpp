// Link state and error counters read while probes ran: the evidence that lets
// the validator use the state under load and ignore idle downshifts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/link.hpp"
#include "model/pci_address.hpp"
#include "model/result.hpp"

namespace pcieval {

enum class SampleSource {
  kSysfs,  // "sysfs": current_link_speed / current_link_width of the port
  kNvml,   // "nvml": nvmlDeviceGetCurrPcieLinkGeneration / Width of the GPU
};

[[nodiscard]] std::string_view to_string(SampleSource source);
[[nodiscard]] Result<SampleSource> sample_source_from_string(std::string_view text);

// One reading of one port's negotiated link.
struct LinkSample {
  PciAddress port;  // the function read: a GPU, or a bridge port on its path
  SampleSource source = SampleSource::kSysfs;
  double t_s = 0;                // seconds since sampling started
  bool under_load = false;       // a copy was running on a GPU below this port when it was read
  std::optional<PcieGen> speed;  // nullopt when the reading failed
  std::optional<int> width;

  bool operator==(const LinkSample&) const = default;
};

// The samples where something changed: per port and source, the first
// reading, each one whose speed, width or load differs from the reading
// before it, and the last. A port read every 50 ms through a 30-minute soak
// is tens of thousands of identical readings; what the validator and a reader
// need (the best loaded state, when a state began and ended) survives.
// `samples` in time order; the result too.
[[nodiscard]] std::vector<LinkSample> compact_link_samples(const std::vector<LinkSample>& samples);

// A counter read before and after the probes (AER totals, the GPU's replay
// counter). A counter that rose while copying is a link that retried.
struct CounterDelta {
  PciAddress device;
  std::string counter;  // "aer_correctable", "aer_nonfatal", "aer_fatal", "nvml_replay"
  std::uint64_t before = 0;
  std::uint64_t after = 0;

  bool operator==(const CounterDelta&) const = default;
};

// What NVML says about one GPU's link, read once under load when it could be.
struct NvmlGpuLink {
  std::optional<int> current_gen;  // nvmlDeviceGetCurrPcieLinkGeneration
  std::optional<int> max_gen;      // nvmlDeviceGetMaxPcieLinkGeneration (GPU and system)
  std::optional<int> gpu_max_gen;  // nvmlDeviceGetGpuMaxPcieLinkGeneration (GPU alone)
  std::optional<int> current_width;
  std::optional<int> max_width;
  std::optional<std::uint64_t> replay_counter;
  std::optional<std::uint64_t> tx_kbps;  // nvmlDeviceGetPcieThroughput, KB/s over 20 ms
  std::optional<std::uint64_t> rx_kbps;
  std::optional<int> pstate;  // 0 (P0, full power) .. 15
  bool under_load = false;
  std::optional<std::string> name;  // nvmlDeviceGetName: "NVIDIA H100 80GB HBM3"
  // nvmlDeviceGetUtilizationRates' gpu: the percent of the last sample period
  // in which a kernel ran. A live run reads it before any probe (another
  // job's kernels would share the link); a capture states it at capture time.
  std::optional<int> utilization_gpu_percent;
  // Schema 1.3. nvidia-smi -q's "Host Max" generation (PCIe Generation
  // section): the most the port above the GPU allows. Where it is below the
  // GPU's own max, the host caps the link; max_gen is then the lower of the
  // two. NVML's live reader has no call for it alone: nullopt there.
  std::optional<int> host_max_gen;

  bool operator==(const NvmlGpuLink&) const = default;
};

}  // namespace pcieval
