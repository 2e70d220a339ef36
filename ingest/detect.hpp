// Which capture format a text is: one table, read in order, so that adding a
// format (nvbandwidth, bandwidthTest, nccl-tests, a results document) is one
// enum value and one row in detect.cpp. Formats are told apart by content,
// never by file name: tickets carry "output.txt" and "log" as often as
// anything.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/result.hpp"

namespace pcieval {

// APPEND new formats at the end; the names are the --format values and are
// stable.
enum class CaptureFormat {
  kLspci,            // "lspci": lspci -vv / -vvv
  kNvidiaSmi,        // "nvidia-smi": nvidia-smi -q
  kNvidiaSmiXml,     // "nvidia-smi-xml": nvidia-smi -q -x
  kKernelLog,        // "kernel-log": dmesg, journalctl -k, /var/log/kern.log
  kNvbandwidth,      // "nvbandwidth": nvbandwidth's text output
  kNvbandwidthJson,  // "nvbandwidth-json": nvbandwidth -j
  kBandwidthTest,    // "bandwidthtest": CUDA samples bandwidthTest
  kNcclTests,        // "nccl-tests": all_reduce_perf and the other nccl-tests text tables
  kNcclTestsJson,    // "nccl-tests-json": nccl-tests -J FILE
  // Listings that name devices but hold no link register: read only to say
  // so, and which capture would hold the link (lspci -vv).
  kLspciTree,  // "lspci-tree": lspci -t / -tv
  kLspciList,  // "lspci-list": lspci / lspci -nn, one line per function
  // Peer-to-peer evidence (issue 28).
  kP2pBandwidthLatencyTest,  // "p2pbandwidthlatencytest": CUDA samples p2pBandwidthLatencyTest
  kNvidiaSmiTopoP2p,         // "nvidia-smi-topo-p2p": nvidia-smi topo -p2p r|w
};

// True for the formats that name PCI functions without any link state.
[[nodiscard]] bool holds_no_link_state(CaptureFormat format);

struct CaptureFormatInfo {
  CaptureFormat format;
  std::string_view name;         // the --format value: "nvidia-smi-xml"
  std::string_view description;  // for error messages: "nvidia-smi -q -x"
  // True when the text is this format. Called on at most the first
  // kDetectPrefixBytes of the text, so detection stays cheap on a 100 MB log;
  // a format whose marker can sit deeper (a kernel log) must accept a prefix.
  bool (*looks_like)(std::string_view text);
};

// Detection reads no further than this into a capture.
inline constexpr std::size_t kDetectPrefixBytes = std::size_t{1} << 20;

// Every known format, in detection order: the more specific markers first
// (XML before text, nvidia-smi's banner before lspci blocks, kernel log last
// because its lines can be pasted into anything).
[[nodiscard]] std::span<const CaptureFormatInfo> capture_formats();

// The first format of capture_formats() whose looks_like accepts the text;
// an error naming the supported formats when none does.
[[nodiscard]] Result<CaptureFormat> detect_capture_format(std::string_view text);

// One part of a capture, in one format: tickets hold `lspci -vv` output
// followed by `dmesg`, or nvidia-smi -q then a kernel log, in one paste.
struct CaptureSection {
  CaptureFormat format = CaptureFormat::kKernelLog;
  std::size_t offset = 0;      // bytes into the text
  std::size_t size = 0;        // bytes
  std::size_t first_line = 1;  // 1-based line of the text where it starts
};

// The sections of a text, in order, covering it whole. A section begins at
// the head of a format other than the current one: nvidia-smi -q's "NVSMI
// LOG" banner, nvidia-smi -q -x's XML prolog, an lspci block header followed
// by an indented line, a kernel log line (is_kernel_log_line). Text before
// the first head (a prompt, a note) joins the first section unless it is a
// capture of its own by detect_capture_format. A text with one format or none
// of these heads is one section, in the format detect_capture_format finds,
// with its error when it finds none. One look at the first bytes of each line;
// lines of the current format are not examined further, so a 100 MB kernel log
// costs one pass of memchr.
[[nodiscard]] Result<std::vector<CaptureSection>> split_capture_sections(std::string_view text);

// Whether a capture of another format than a kernel log begins at the line
// of `text` that starts at `start`, inside a kernel log section: the split's
// own test (a line with a time stamp never is one).
[[nodiscard]] bool ends_kernel_log_at(std::string_view text, std::size_t start);

// Reads the kernel log section the split has come to, from `offset` (line
// `first_line` of the text) to where ends_kernel_log_at says it ends or to
// the end of the text, and says how far that was; nullopt leaves it to the
// split. The split then goes on from there: a large log is walked once, by
// the reader, and not once more by the split before it (captures.hpp,
// KernelLogsAhead).
struct WalkedSection {
  std::size_t bytes = 0;
  std::size_t lines = 0;
};
using KernelLogWalker = std::function<std::optional<WalkedSection>(std::size_t offset, std::size_t first_line)>;
// The same sections as split_capture_sections(text), each kernel log
// section's extent found by `walker`.
[[nodiscard]] Result<std::vector<CaptureSection>> split_capture_sections(std::string_view text,
                                                                         const KernelLogWalker& walker);

// The format named by a --format value; an error listing the names otherwise.
[[nodiscard]] Result<CaptureFormat> capture_format_from_name(std::string_view name);

[[nodiscard]] std::string_view to_string(CaptureFormat format);

// "lspci -vv, nvidia-smi -q, ..." for messages.
[[nodiscard]] std::string supported_formats_text();

}  // namespace pcieval
