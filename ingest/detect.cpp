#include "ingest/detect.hpp"

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "ingest/bandwidth_test.hpp"
#include "ingest/detail/lspci_text.hpp"
#include "ingest/detail/stamped_lines.hpp"
#include "ingest/kernel_log.hpp"
#include "ingest/lspci.hpp"
#include "ingest/nccl_tests.hpp"
#include "ingest/nvbandwidth.hpp"
#include "ingest/nvidia_smi.hpp"
#include "ingest/nvidia_smi_topo.hpp"
#include "ingest/nvidia_smi_xml.hpp"
#include "ingest/p2p_bandwidth_latency.hpp"

namespace pcieval {
namespace {

bool lspci_slot_start(std::string_view line);

// "-[0000:00]-+-00.0  Intel ...", "-+-[0000:00]-+-00.0", " +-[0000:40]-+-00.0",
// " \-[0000:e0]-+-00.0": a root of an lspci -t tree, where its bus numbers
// start. A kernel log line is never one.
// Detection tries this on the first megabyte of every input, a kernel log's
// included: its first kernel line settles it.
bool looks_like_lspci_tree(std::string_view text) {
  bool root = false;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::string_view line = trim_blanks(next_line(text, start));
    if (line.empty()) continue;
    if (is_kernel_log_line(line)) return false;
    for (const std::string_view head : {"-[", "-+-[", "+-[", "\\-["}) {
      if (!line.starts_with(head)) continue;
      const std::string_view rest = line.substr(head.size());
      const auto close = rest.find("]-");
      if (close != std::string_view::npos && close <= 7 && rest.find(':') < close) root = true;
    }
  }
  return root;
}

// "01:00.0 VGA compatible controller [0300]: NVIDIA Corporation ..." or
// "0000:01:00.0 3D controller: ...": lspci's one line per function, at least
// two of them, with no indented detail under them (that is lspci -v) and no
// kernel log line among them.
bool looks_like_lspci_list(std::string_view text) {
  std::size_t functions = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::string_view raw = next_line(text, start);
    const std::string_view line = trim_blanks(raw);
    if (line.empty()) continue;
    if (is_kernel_log_line(line)) return false;  // a kernel line settles it, as in looks_like_lspci_tree
    if (raw.front() == ' ' || raw.front() == '\t') {
      if (functions > 0 && !line.starts_with("+") && !line.starts_with("|")) return false;
      continue;
    }
    const auto space = line.find(' ');
    if (lspci_slot_start(line) && space != std::string_view::npos && line.find(": ", space) != std::string_view::npos) {
      ++functions;
    }
  }
  return functions >= 2;
}

// Detection order (see capture_formats()). To add a format: append its enum
// value, then insert its row where its markers are specific enough; a format
// whose lines can appear inside others' captures goes last.
constexpr std::array kFormats{
    CaptureFormatInfo{CaptureFormat::kNvidiaSmiXml, "nvidia-smi-xml", "nvidia-smi -q -x", &looks_like_nvidia_smi_xml},
    CaptureFormatInfo{CaptureFormat::kNvidiaSmi, "nvidia-smi", "nvidia-smi -q", &looks_like_nvidia_smi},
    CaptureFormatInfo{CaptureFormat::kLspci, "lspci", "lspci -vv", &looks_like_lspci_vv},
    // The tools' JSON first (an object whose keys say whose it is), then their
    // text, whose markers ("nvbandwidth Version:", "[CUDA Bandwidth Test]",
    // the algbw/busbw header) are their own; all before the kernel log.
    CaptureFormatInfo{CaptureFormat::kNvbandwidthJson, "nvbandwidth-json", "nvbandwidth -j",
                      &looks_like_nvbandwidth_json},
    CaptureFormatInfo{CaptureFormat::kNcclTestsJson, "nccl-tests-json", "nccl-tests -J", &looks_like_nccl_tests_json},
    CaptureFormatInfo{CaptureFormat::kNvbandwidth, "nvbandwidth", "nvbandwidth", &looks_like_nvbandwidth},
    CaptureFormatInfo{CaptureFormat::kBandwidthTest, "bandwidthtest", "bandwidthTest", &looks_like_bandwidth_test},
    CaptureFormatInfo{CaptureFormat::kNcclTests, "nccl-tests", "nccl-tests (all_reduce_perf)", &looks_like_nccl_tests},
    // After bandwidthTest: a paste of both is read as bandwidthTest, and its
    // p2pBandwidthLatencyTest part as well (captures.cpp).
    CaptureFormatInfo{CaptureFormat::kP2pBandwidthLatencyTest, "p2pbandwidthlatencytest", "p2pBandwidthLatencyTest",
                      &looks_like_p2p_bandwidth_latency_test},
    CaptureFormatInfo{CaptureFormat::kNvidiaSmiTopoP2p, "nvidia-smi-topo-p2p", "nvidia-smi topo -p2p r|w",
                      &looks_like_nvidia_smi_topo_p2p},
    // Listings without link state: after every format with link state, so a
    // paste that holds lspci -vv too is read as that; before the kernel log.
    CaptureFormatInfo{CaptureFormat::kLspciTree, "lspci-tree", "lspci -tv (no link state)", &looks_like_lspci_tree},
    CaptureFormatInfo{CaptureFormat::kLspciList, "lspci-list", "lspci -nn (no link state)", &looks_like_lspci_list},
    CaptureFormatInfo{CaptureFormat::kKernelLog, "kernel-log", "dmesg / journalctl -k", &looks_like_kernel_log},
};

}  // namespace

std::span<const CaptureFormatInfo> capture_formats() { return kFormats; }

bool holds_no_link_state(CaptureFormat format) {
  return format == CaptureFormat::kLspciTree || format == CaptureFormat::kLspciList;
}

std::string supported_formats_text() {
  std::string text;
  for (const CaptureFormatInfo& info : kFormats) text += (text.empty() ? "" : ", ") + std::string(info.description);
  return text;
}

Result<CaptureFormat> detect_capture_format(std::string_view text) {
  const std::string_view prefix = text.substr(0, kDetectPrefixBytes);
  for (const CaptureFormatInfo& info : kFormats) {
    if (info.looks_like(prefix)) return info.format;
  }
  return make_error("not a recognised capture (supported: " + supported_formats_text() +
                    "; --format names one explicitly)");
}

namespace {

// "01:00.0 " or "0000:01:00.0 " at the start: the shape of an lspci block
// header, checked before the header's own parser runs. lspci prints hex in
// lower case, so a syslog line ("Dec  3 ...") or an ISO journal stamp
// ("2026-12-03T...") fails at once.
bool lspci_slot_start(std::string_view line) {
  const auto hex = [&](std::size_t at) {
    return at < line.size() && ((line[at] >= '0' && line[at] <= '9') || (line[at] >= 'a' && line[at] <= 'f'));
  };
  const auto at = [&](std::size_t i, char c) { return i < line.size() && line[i] == c; };
  if (hex(0) && hex(1) && at(2, ':') && hex(3) && hex(4) && at(5, '.')) return true;
  return hex(0) && hex(1) && hex(2) && hex(3) && at(4, ':') && hex(5) && hex(6) && at(7, ':') && at(10, '.');
}

std::string_view trim_start(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  return first == std::string_view::npos ? std::string_view{} : text.substr(first);
}

// An lspci slot at the start, or behind a prefix (a script's "Card: ", a
// quote's "> ", a line number) or an indent. A kernel log line starting with
// "[" is neither, and this runs on every line of a 100 MB log: it costs that
// line one byte compare.
bool lspci_head_start(std::string_view line) {
  if (lspci_slot_start(line)) return true;
  if (line.front() == '[') return false;
  const std::string_view rest = trim_start(line.substr(lspci_line_prefix_length(line)));
  return rest.size() < line.size() && lspci_slot_start(rest);
}

std::size_t end_of_line(std::string_view text, std::size_t from) {
  const auto end = text.find('\n', from);
  return end == std::string_view::npos ? text.size() : end;
}

// The format whose output visibly begins at the line [start, end), when it is
// not `current`'s.
std::optional<CaptureFormat> section_head(std::string_view text, std::size_t start, std::size_t end,
                                          std::optional<CaptureFormat> current) {
  const std::string_view line = text.substr(start, end - start);
  if (line.empty()) return std::nullopt;
  const auto other = [&](CaptureFormat format) -> std::optional<CaptureFormat> {
    if (current == format) return std::nullopt;
    return format;
  };
  switch (line.front()) {
    case '=':
      if (line.find("==NVSMI LOG==") != std::string_view::npos) return other(CaptureFormat::kNvidiaSmi);
      return std::nullopt;
    case '<':
      if (line.starts_with("<?xml") && text.substr(start, 512).find("<nvidia_smi_log") != std::string_view::npos) {
        return other(CaptureFormat::kNvidiaSmiXml);
      }
      return std::nullopt;
    default:
      break;
  }
  if (current != CaptureFormat::kLspci && lspci_head_start(line)) {
    // The header and the line under it, which lspci indents.
    const std::size_t next_end = end < text.size() ? end_of_line(text, end + 1) : end;
    if (looks_like_lspci_vv(text.substr(start, next_end - start))) return CaptureFormat::kLspci;
  }
  // Inside a kernel log every line is one: only a change of format counts.
  if (current != CaptureFormat::kKernelLog && is_kernel_log_line(line)) return CaptureFormat::kKernelLog;
  return std::nullopt;
}

}  // namespace

bool ends_kernel_log_at(std::string_view text, std::size_t start) {
  return start < text.size() && text[start] != '[' &&
         section_head(text, start, end_of_line(text, start), CaptureFormat::kKernelLog).has_value();
}

Result<std::vector<CaptureSection>> split_capture_sections(std::string_view text) {
  return split_capture_sections(text, KernelLogWalker{});
}

Result<std::vector<CaptureSection>> split_capture_sections(std::string_view text, const KernelLogWalker& walker) {
  struct Head {
    CaptureFormat format;
    std::size_t offset;
    std::size_t line;
  };
  std::vector<Head> heads;
  // What comes before the first head: a capture of its own (nvidia-smi -q
  // pasted without its banner), or a prompt or note that belongs to what
  // follows. It holds no kernel log line (that would have been a head), so
  // detection's looser kernel log test ("[root@gpu-a17 ~]#") is no capture.
  // Its format when it stands alone, worked out once (a walker needs it
  // as soon as the first head is found).
  std::optional<std::optional<CaptureFormat>> before_first;
  const auto stands_alone = [&](const Head& first) -> std::optional<CaptureFormat> {
    if (!before_first) {
      const auto before = detect_capture_format(text.substr(0, first.offset));
      before_first = before && before.value() != first.format && before.value() != CaptureFormat::kKernelLog
                         ? std::optional<CaptureFormat>(before.value())
                         : std::nullopt;
    }
    return *before_first;
  };
  std::optional<CaptureFormat> current;
  std::size_t number = 0;
  for (std::size_t start = 0; start < text.size();) {
    // Inside a kernel log a stamped line never begins another capture.
    if (current == CaptureFormat::kKernelLog && text[start] == '[') {
      start = next_unstamped_line(text, start, number);
      continue;
    }
    const std::size_t end = end_of_line(text, start);
    ++number;
    if (auto head = section_head(text, start, end, current)) {
      heads.push_back(Head{*head, start, number});
      current = *head;
      if (*head == CaptureFormat::kKernelLog && walker) {
        // The section starts at its head, or at the text's start when what
        // is before the first head joins it.
        const bool joined = heads.size() == 1 && start > 0 && !stands_alone(heads.front()).has_value();
        const std::size_t from = joined ? 0 : start;
        const std::size_t from_line = joined ? 1 : number;
        if (const auto walked = walker(from, from_line)) {
          // Where it ends is the next head, or the end of the text.
          start = from + walked->bytes;
          number = from_line - 1 + walked->lines;
          continue;
        }
      }
    }
    start = end + 1;
  }
  std::vector<CaptureSection> sections;
  if (!heads.empty() && heads.front().offset > 0) {
    if (const auto before = stands_alone(heads.front())) {
      sections.push_back(CaptureSection{*before, 0, heads.front().offset, 1});
    } else {
      heads.front().offset = 0;
      heads.front().line = 1;
    }
  }
  for (std::size_t i = 0; i < heads.size(); ++i) {
    const std::size_t end = i + 1 < heads.size() ? heads[i + 1].offset : text.size();
    sections.push_back(CaptureSection{heads[i].format, heads[i].offset, end - heads[i].offset, heads[i].line});
  }
  if (sections.size() >= 2) return sections;
  // One format: read as a whole, as detection has always read it.
  auto format = detect_capture_format(text);
  if (!format) return format.error();
  return std::vector<CaptureSection>{CaptureSection{format.value(), 0, text.size(), 1}};
}

Result<CaptureFormat> capture_format_from_name(std::string_view name) {
  std::string names;
  for (const CaptureFormatInfo& info : kFormats) {
    if (info.name == name) return info.format;
    names += (names.empty() ? "" : "|") + std::string(info.name);
  }
  return make_error("unknown format '" + std::string(name) + "' (expected " + names + ")");
}

std::string_view to_string(CaptureFormat format) {
  for (const CaptureFormatInfo& info : kFormats) {
    if (info.format == format) return info.name;
  }
  return "unknown";
}

}  // namespace pcieval
