// What `pcieval diagnose` read from captured text beyond the PCIe tree and
// NVML readings: the kernel log events verdicts rest on, the link the user
// stated (--link), and the file and line of each device's block and each tool
// number. A live run has none of it. It is evidence, stored in the results
// document (schema 1.3), so that `validate` of a diagnose document re-judges
// it to the same verdicts.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "model/link.hpp"
#include "model/pci_address.hpp"
#include "model/result.hpp"

namespace pcieval {

// One kernel log line in model terms (ingest/kernel_log reads the text).
struct CapturedEvent {
  enum class Kind {
    kLinkLimited,         // "link_limited": "available PCIe bandwidth, limited by ... at <port>"
    kCorrectableError,    // "correctable_error": AER severity=Corrected
    kUncorrectableError,  // "uncorrectable_error": AER severity=Uncorrected (Non-Fatal)
    kFatalError,          // "fatal_error": AER severity=Uncorrected (Fatal)
    kSurpriseDown,        // "surprise_down": the link went down without warning
    kFellOffBus,          // "fell_off_bus": NVIDIA Xid 79 / "GPU has fallen off the bus"
  };
  Kind kind = Kind::kCorrectableError;
  PciAddress device;  // the function the line names
  // kLinkLimited only: the port whose link limits `device` (nullopt:
  // "<unknown>"), the state it allows and the device's capability.
  std::optional<PciAddress> limiting_port;
  std::optional<LinkState> limited_to;
  std::optional<LinkState> capable;
  std::string source;    // the file's name as given ("dmesg.txt", "stdin")
  std::size_t line = 0;  // 1-based line in that file
  std::string text;      // the line as the parser quoted it (cut, control bytes replaced)
  // The line's time stamp in seconds, when it has one (ingest/kernel_log.hpp
  // kernel_log_time): since boot for dmesg's "[  12.345678]", since 1970 or
  // the start of a year for wall-clock stamps. Only differences between the
  // events of one source mean anything; a burst of errors is measured so.
  std::optional<double> time_s;
};

[[nodiscard]] std::string_view to_string(CapturedEvent::Kind kind);
[[nodiscard]] Result<CapturedEvent::Kind> captured_event_kind_from_string(std::string_view text);

// "dmesg.txt:42": where a verdict on the event rests; the file alone for line 0.
[[nodiscard]] std::string origin_of(const CapturedEvent& event);

// The link the user said the numbers crossed (`diagnose --link gen4x16`).
struct StatedLink {
  LinkState link;
  std::string source;  // how it was stated: "--link gen4x16"
};

// A line of captured text a reading rests on: the lspci block or nvidia-smi
// link section of `device`, or the line of tool number `measurement` (an
// index into Evidence::measurements). Exactly one of the two is set.
struct CaptureLine {
  std::optional<PciAddress> device;
  std::optional<std::size_t> measurement;
  std::string source;
  std::size_t line = 0;
};

// "lspci.txt:61"; the file alone for line 0 (a JSON capture's number).
[[nodiscard]] std::string origin_of(const CaptureLine& line);

// Probe keys of nccl-tests' all-reduce numbers read from a capture: one
// measurement per size, nccl-tests' busbw of the out-of-place half
// (Direction::kAllReduce, CopyMethod::kNccl, Aggregation::kBusBandwidth).
// "_host" when the capture shows peer-to-peer disabled (NCCL's own INFO line
// "NCCL_P2P_DISABLE set by environment to 1", or NCCL_P2P_LEVEL LOC, or the
// -J document's "env"): every byte then crossed each GPU's PCIe link through
// host memory, as in the live allreduce_nccl_host probe. Otherwise NCCL may
// have used NVLink or peer-to-peer, which no host link's budget bounds.
inline constexpr std::string_view kNcclTestsAllReduceProbe = "nccltests_all_reduce";
inline constexpr std::string_view kNcclTestsAllReduceHostProbe = "nccltests_all_reduce_host";

}  // namespace pcieval
