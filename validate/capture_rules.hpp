// Judges what only captured text records: kernel log events (the kernel's
// "limited by" bandwidth lines, AER errors, Surprise Down, a GPU that fell off
// the bus). The link state the capture holds goes through judge_links like a
// live run's; these are the verdicts that come on top.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/evidence.hpp"
#include "model/verdict.hpp"

namespace pcieval {

// One kernel log line in model terms (ingest/kernel_log turns text into it).
struct CapturedEvent {
  enum class Kind {
    kLinkLimited,         // "available PCIe bandwidth, limited by ... at <port>"
    kCorrectableError,    // AER severity=Corrected
    kUncorrectableError,  // AER severity=Uncorrected (Non-Fatal)
    kFatalError,          // AER severity=Uncorrected (Fatal)
    kSurpriseDown,        // the link went down without warning
    kFellOffBus,          // NVIDIA Xid 79 / "GPU has fallen off the bus"
  };
  Kind kind = Kind::kCorrectableError;
  PciAddress device;  // the function the line names
  // kLinkLimited only: the port whose link limits `device` (nullopt:
  // "<unknown>"), the state it allows and the device's capability.
  std::optional<PciAddress> limiting_port;
  std::optional<LinkState> limited_to;
  std::optional<LinkState> capable;
  std::string origin;  // "dmesg.txt:42": where the verdict rests
};

// Verdicts, one per device and finding, in device order:
// - uncorrectable AER errors (fatal or not), Surprise Down and a GPU that fell
//   off the bus: link_errors (uncorrectable_errors_logged, gpu_fell_off_bus).
//   An event on a port counts against every device of the evidence whose path
//   runs through that port; with none known it is judged on the port itself;
// - a "limited by" line: link_downgraded at the link of the named port (the
//   kernel names the upper end of the limiting link on a tie), with the
//   link_*_below_expected code of what was lost. The kernel prints it at
//   enumeration, when an NVIDIA GPU may still idle: a speed-only limit on the
//   GPU's own link (or, without the device's path, on a link that may be its
//   own) is inconclusive (gpu_link_speed_idle), as judge_links treats an idle
//   reading; a lost width, or a limit above the GPU's own link, is judged as
//   read; the idle case gives no verdict when the evidence holds a link sample
//   of the GPU under load (that reading is judged by judge_links). A line
//   whose states are unknown is not judged.
// Correctable errors make no verdict (a few are normal); correctable_summary
// reports them with their counts.
[[nodiscard]] std::vector<Verdict> judge_captured_events(const Evidence& evidence,
                                                         const std::vector<CapturedEvent>& events);

// GPUs that only nvidia-smi describes (no path: lspci gives paths), judged
// from NVML's max and current link, where Max already is the lower of the GPU
// and the port above (PCIE-FACTS 6): captured under load (nvml.under_load) a
// lower speed or width is link_downgraded; captured idle (P8 or deeper, 0 %)
// either is inconclusive (gpu_link_speed_idle: idle GPUs read narrower too);
// otherwise a lower width is judged as read and a lower speed inconclusive. A GPU
// at its max gets no verdict here; judge_links still calls its path unknown.
[[nodiscard]] std::vector<Verdict> judge_nvml_only_gpus(const Evidence& evidence);

// "0000:c1:00.0 x12 (first dmesg.txt:40)" per device with correctable
// errors, joined by "; "; empty when there are none.
[[nodiscard]] std::string correctable_summary(const std::vector<CapturedEvent>& events);

}  // namespace pcieval
