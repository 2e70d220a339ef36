// Captured kernel logs (dmesg, dmesg -T, journalctl -k, /var/log/kern.log or
// syslog) reduced to the PCIe events pcieval judges: the kernel's "limited by"
// bandwidth lines, AER errors, Surprise Down, link bandwidth notifications and
// the NVIDIA driver's "fallen off the bus" (Xid 79).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/link.hpp"
#include "model/pci_address.hpp"
#include "model/result.hpp"

namespace pcieval {

enum class KernelEventKind {
  // "<bdf>: 63.008 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8
  // link at <port> (capable of 126.016 Gb/s with 8.0 GT/s PCIe x16 link)":
  // pcie_report_downtraining() at enumeration (PCIE-FACTS 4.4).
  kBandwidthLimited,
  // "PCIe Bus Error: severity=Corrected" (6.x: "Correctable"), or a root
  // port's "AER: [Multiple ]Corrected error received: ..." with no detail
  // line after it (the detail is rate-limited, or the kernel predates it).
  kAerCorrected,
  kAerUncorrectedNonFatal,  // "severity=Uncorrected (Non-Fatal)" / "Uncorrectable (Non-Fatal)"
  kAerUncorrectedFatal,     // "severity=Uncorrected (Fatal)" / "Uncorrectable (Fatal)"
  kSurpriseDown,            // "Surprise Down Error" / "[ 5] SDES" in an AER status dump
  kBandwidthNotification,   // bwctrl / "Link Bandwidth Notification" lines
  kGpuFellOffBus,           // "NVRM: Xid (PCI:0000:17:00): 79" or "NVRM: GPU ... has fallen off the bus"
};

[[nodiscard]] std::string_view to_string(KernelEventKind kind);

struct KernelLogEvent {
  KernelEventKind kind = KernelEventKind::kAerCorrected;
  PciAddress device;  // the device the line is about (an Xid names function 0)
  std::size_t line = 0;
  // kBandwidthLimited: the port whose link limits the device (nullopt for the
  // kernel's "<unknown>"), the state the limit allows and the device's own
  // capability.
  std::optional<PciAddress> limiting_port;
  std::optional<LinkState> limited_to;
  std::optional<LinkState> capable;
  std::optional<int> xid;  // kGpuFellOffBus from an Xid line
  std::string text;        // the line, quoted and cut for a note
  // The line's time stamp in seconds (kernel_log_time), when it has one.
  std::optional<double> time_s;
  // AER errors: the names of the status bits the report listed ("RxErr",
  // "BadTLP", "Replay Timer Timeout"), in the order printed.
  std::vector<std::string> error_bits;
};

// A function the kernel enumerated at boot: "pci 0000:00:03.1: [1022:1483]
// type 01 class 0x060400 PCIe Root Port" (the port type on kernels from 6.x
// on). What the device is, where no lspci block says it: a GPU, an NVMe drive,
// a root port.
struct EnumeratedFunction {
  PciAddress bdf;
  std::uint16_t vendor_id = 0;
  std::uint16_t device_id = 0;
  std::uint32_t class_code = 0;
  std::string port_type;  // "PCIe Root Port", "PCIe Legacy Endpoint", ...; "" on older kernels
  std::size_t line = 0;
};

struct KernelLogCapture {
  std::string source;
  std::vector<KernelLogEvent> events;          // in log order
  std::vector<EnumeratedFunction> enumerated;  // in log order, each address once
  std::vector<std::string> notes;
  std::size_t lines = 0;          // non-blank lines read
  std::size_t skipped_lines = 0;  // non-blank lines that are no PCIe event
};

// True when some line of the text has a kernel log's shape: a dmesg
// timestamp ("[   12.345678] "), a syslog/journal "kernel:" tag, or one of
// the PCIe messages this reader understands.
[[nodiscard]] bool looks_like_kernel_log(std::string_view text);

// True when the line starts the way a kernel log's lines do: a dmesg
// timestamp ("[   12.345678] ", dmesg -T's "[Thu Dec  3 10:00:00 2026] ") or
// a syslog/journal "kernel:" tag. Stricter than looks_like_kernel_log: a
// shell prompt "[root@gpu-a17 ~]# lspci -vv" is not one. Where a kernel log
// begins inside a pasted ticket (detect.hpp split_capture_sections).
[[nodiscard]] bool is_kernel_log_line(std::string_view line);

// The time stamp at the start of a kernel log line, in seconds on the clock
// the log's format prints; nullopt for a line without one. Seconds since boot
// for dmesg's "[  123.456789]" (also inside a syslog line, after "kernel: ",
// which is preferred there for its resolution); seconds since 1970 for
// dmesg -T's "[Thu Dec  3 10:00:00 2026]" and journalctl -o short-iso's
// "2026-12-03T10:00:00+0100" (the offset applied); seconds since the start
// of an arbitrary year for syslog's and journalctl's "Dec  3 10:00:00[.123]",
// which print no year. So only differences between stamps of one log mean
// anything, and only across less than a year.
[[nodiscard]] std::optional<double> kernel_log_time(std::string_view line);

// Reads every line; lines that are no PCIe event are skipped and counted.
// A line without a time stamp under one that has one (a mail client wrapped
// the paste at 72 columns) is joined to it when only the joined text holds a
// message this reader knows (unwrap_kernel_log). A message the NVIDIA driver
// prints over several lines ("NVRM: The NVIDIA GPU <bdf>" ... "NVRM: fallen
// off the bus") is one event, at the line that names the GPU.
// Messages are found anywhere in the line, whatever prefix it has (dmesg,
// dmesg -T, journalctl -k short/short-iso/short-precise, syslog with or without
// the kernel's own stamp); each event keeps the line's time stamp. A root
// port's "AER: Corrected error received" line and the "PCIe Bus Error" line
// that details it within the report are one error. Errors when no line of the text has a kernel log's shape. An Xid
// other than 79 is not a bus event (74 is NVLink, 119/120 GSP): it is counted
// in a note, not an event.
// `first_line` is the number of the text's first line in the file it came
// from, when the text is a section of a larger capture.
[[nodiscard]] Result<KernelLogCapture> parse_kernel_log(std::string_view text, std::string_view source = "input",
                                                        std::size_t first_line = 1);

// Whether a capture of another format than a kernel log begins at the line
// of `text` that starts at `start` (detect.cpp, ends_kernel_log_at).
using CaptureHeadTest = bool (*)(std::string_view text, std::size_t start);

// A kernel log section read as the section split comes to it
// (split_capture_sections with a KernelLogWalker): from the start of `text`
// to the first line after the first where `ends_at` says another capture
// begins, or to the end. `capture` is what parse_kernel_log returns for
// text.substr(0, bytes) when that is too large to unwrap (kMaxUnwrapBytes),
// so a 100 MB log is walked once, by the reader, and not once more by the
// split before it.
struct KernelLogWalk {
  Result<KernelLogCapture> capture;
  std::size_t bytes = 0;  // the section's size
  std::size_t lines = 0;  // the lines in it
};
[[nodiscard]] KernelLogWalk walk_kernel_log(std::string_view text, std::string_view source, std::size_t first_line,
                                            CaptureHeadTest ends_at);

// The text with each wrapped continuation line joined to the line above it
// (the continuation's own line left blank, so line numbers stay the file's),
// when the joined text holds a message the two lines do not hold apart: a
// marker split by the break, or a "limited by" line cut before its
// capability. nullopt when nothing was joined, or the text is larger than a
// pasted e-mail can be (kMaxUnwrapBytes).
inline constexpr std::size_t kMaxUnwrapBytes = std::size_t{8} << 20;
// `joined_lines`, when given, counts the continuations joined.
[[nodiscard]] std::optional<std::string> unwrap_kernel_log(std::string_view text, std::size_t* joined_lines = nullptr);

// One "limited by" message, without its prefix: "63.008 Gb/s available PCIe
// bandwidth, limited by 8.0 GT/s PCIe x8 link at 0000:00:01.0 (capable of
// 126.016 Gb/s with 8.0 GT/s PCIe x16 link)". Speeds as kernels >= 5.7 print
// them ("8.0 GT/s PCIe") and older ones ("8 GT/s", "2.5 GT/s").
[[nodiscard]] std::optional<KernelLogEvent> parse_bandwidth_limited(std::string_view line);

}  // namespace pcieval
