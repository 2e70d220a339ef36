// The kernel log reader: one pass over the lines, a handful of substring
// searches per line, no regular expressions. Logs are pasted by the hundred
// megabytes (a month of journal), and almost every line is not about PCIe, so
// the common path is "no marker in this line: count it, move on".
#include "ingest/kernel_log.hpp"

#include <charconv>
#include <cstring>
#include <map>
#include <utility>

#include "ingest/lspci_text.hpp"

namespace pcieval {
namespace {

bool contains(std::string_view line, std::string_view marker) { return line.find(marker) != std::string_view::npos; }

// A full sysfs-style address token ("0000:01:00.0"), as dev_printk prints it.
std::optional<PciAddress> full_address(std::string_view token) {
  if (token.size() < 12 || token.find(':') < 4) return std::nullopt;
  return parse_lspci_slot(token);
}

// The device a dev_printk line is about: the last "<driver> <bdf>:" token of
// `prefix` ("pci 0000:01:00.0:", "pcieport 0000:00:01.0:", "nvidia
// 0000:17:00.0:"). Searching backwards keeps syslog prefixes out of the way.
std::optional<PciAddress> device_in(std::string_view prefix) {
  std::optional<PciAddress> found;
  std::size_t start = 0;
  while (start < prefix.size()) {
    auto end = prefix.find(' ', start);
    if (end == std::string_view::npos) end = prefix.size();
    std::string_view token = prefix.substr(start, end - start);
    if (token.ends_with(':')) token.remove_suffix(1);
    if (auto address = full_address(token)) found = address;
    start = end + 1;
  }
  return found;
}

// "8.0 GT/s PCIe x8 link" / "8 GT/s x8 link" / "Unknown x8 link" at `text`:
// the state, and how far the parse got.
std::optional<LinkState> parse_speed_width(std::string_view text, std::size_t& used) {
  const auto gts = text.find(" GT/s");
  const auto x = text.find(" x");
  if (gts == std::string_view::npos || x == std::string_view::npos || x < gts) return std::nullopt;
  double rate = 0;
  const auto [rate_end, rate_ec] = std::from_chars(text.data(), text.data() + gts, rate);
  if (rate_ec != std::errc{} || rate_end != text.data() + gts) return std::nullopt;
  std::string_view between = text.substr(gts + 5, x - gts - 5);
  if (!between.empty() && between != " PCIe") return std::nullopt;
  int width = 0;
  const char* width_start = text.data() + x + 2;
  const auto [width_end, width_ec] = std::from_chars(width_start, text.data() + text.size(), width);
  if (width_ec != std::errc{} || !is_valid_link_width(width)) return std::nullopt;
  auto gen = gen_from_gts(rate);
  if (!gen) return std::nullopt;
  used = static_cast<std::size_t>(width_end - text.data());
  return LinkState{gen.value(), width};
}

// "NVRM: Xid (PCI:0000:2b:00): 79, pid=..." -> the GPU (function 0) and 79.
// Old drivers print "Xid (0000:01:00): 3, ...".
std::optional<std::pair<PciAddress, int>> parse_xid(std::string_view line) {
  constexpr std::string_view kMarker = "Xid (";
  const auto at = line.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + kMarker.size());
  if (rest.starts_with("PCI:")) rest.remove_prefix(4);
  const auto close = rest.find(')');
  if (close == std::string_view::npos) return std::nullopt;
  auto address = full_address(std::string(rest.substr(0, close)) + ".0");
  if (!address) return std::nullopt;
  rest = rest.substr(close + 1);
  if (!rest.starts_with(": ")) return std::nullopt;
  rest.remove_prefix(2);
  int xid = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), xid);
  if (ec != std::errc{}) return std::nullopt;
  return std::pair{*address, xid};
}

// "NVRM: GPU at 0000:01:00.0 has fallen off the bus." / "NVRM: GPU
// 0000:2b:00.0: GPU has fallen off the bus." / "GPU at PCI:0000:01:00".
std::optional<PciAddress> fallen_gpu(std::string_view line) {
  const auto nvrm = line.find("NVRM: GPU ");
  if (nvrm == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(nvrm + 10);
  if (rest.starts_with("at ")) rest.remove_prefix(3);
  if (rest.starts_with("PCI:")) rest.remove_prefix(4);
  const auto end = rest.find_first_of(" )");
  std::string_view token = rest.substr(0, end);
  if (token.ends_with(':')) token.remove_suffix(1);
  if (auto address = full_address(token)) return address;
  return full_address(std::string(token) + ".0");
}

// A dmesg timestamp "[   12.345678]" or "[Thu Dec  3 10:00:00 2026]" at the
// start, or a syslog/journal "kernel:" tag.
bool kernel_shaped(std::string_view line) {
  if (line.starts_with('[')) {
    const auto close = line.find(']');
    if (close != std::string_view::npos && close > 1 && close < 40) return true;
  }
  return contains(line, " kernel: ") || contains(line, " kernel:[");
}

class Reader {
 public:
  explicit Reader(std::string_view source) { capture_.source = std::string(source); }

  void line(std::string_view raw, std::size_t number) {
    const std::string_view text = trim_blanks(raw);
    if (text.empty()) return;
    ++capture_.lines;
    shaped_ = shaped_ || kernel_shaped(text);
    if (!event(text, number)) ++capture_.skipped_lines;
  }

  Result<KernelLogCapture> finish() && {
    if (!shaped_ && capture_.events.empty()) {
      return make_error(capture_.source +
                        ": no kernel log line found (expected dmesg or journalctl -k output: '[   12.345678] ...' "
                        "or '... kernel: ...')");
    }
    if (!other_xids_.empty()) {
      std::string list;
      for (const auto& [xid, count] : other_xids_) {
        list += (list.empty() ? "" : ", ") + std::string("Xid ") + std::to_string(xid) + " x" + std::to_string(count);
      }
      capture_.notes.push_back(capture_.source +
                               ": NVIDIA Xid events that do not concern the PCIe bus (not judged): " + list);
    }
    return std::move(capture_);
  }

 private:
  void add(KernelEventKind kind, const PciAddress& device, std::string_view text, std::size_t number) {
    KernelLogEvent event;
    event.kind = kind;
    event.device = device;
    event.line = number;
    event.text = quoted(text);
    capture_.events.push_back(std::move(event));
  }

  // The last event, when it is about `device` and at most a few lines above:
  // the lines that belong to one report.
  KernelLogEvent* recent(const PciAddress& device, std::size_t number) {
    constexpr std::size_t kReportLines = 8;
    if (capture_.events.empty()) return nullptr;
    KernelLogEvent& last = capture_.events.back();
    return last.device == device && number - last.line <= kReportLines ? &last : nullptr;
  }

  // True when the line is a PCIe event (recorded) or a line about one this
  // reader recognises and deliberately leaves out.
  bool event(std::string_view text, std::size_t number) {
    if (contains(text, "available PCIe bandwidth")) {
      if (auto limited = parse_bandwidth_limited(text)) {
        limited->line = number;
        capture_.events.push_back(std::move(*limited));
        return true;
      }
      // The verbose form without a limit ("... (16.0 GT/s PCIe x16 link)") is healthy.
      return !contains(text, "limited by");
    }
    if (const auto at = text.find("PCIe Bus Error: severity="); at != std::string_view::npos) {
      const auto device = device_in(text.substr(0, at));
      if (!device) return false;
      const std::string_view severity = text.substr(at + 25);
      if (severity.starts_with("Corrected")) {
        add(KernelEventKind::kAerCorrected, *device, text, number);
      } else if (severity.starts_with("Uncorrected (Fatal)") || severity.starts_with("Fatal")) {
        add(KernelEventKind::kAerUncorrectedFatal, *device, text, number);
      } else if (severity.starts_with("Uncorrected")) {
        add(KernelEventKind::kAerUncorrectedNonFatal, *device, text, number);
      } else {
        return false;
      }
      return true;
    }
    if (contains(text, "Surprise Down") || contains(text, "] SDES")) {
      const auto device = device_in(text);
      if (!device) return false;
      // The status dump under an uncorrected error names its cause: the same
      // error, not another one.
      if (KernelLogEvent* previous = recent(*device, number);
          previous != nullptr && (previous->kind == KernelEventKind::kAerUncorrectedFatal ||
                                  previous->kind == KernelEventKind::kAerUncorrectedNonFatal)) {
        previous->kind = KernelEventKind::kSurpriseDown;
        return true;
      }
      add(KernelEventKind::kSurpriseDown, *device, text, number);
      return true;
    }
    if (contains(text, "Xid (")) {
      const auto xid = parse_xid(text);
      if (!xid) return false;
      // Xid 79 is the one about the bus ("GPU has fallen off the bus", NVIDIA
      // Xid catalog, docs.nvidia.com/deploy/xid-errors); 74 is NVLink, 119
      // and 120 are GSP: not PCIe evidence.
      if (xid->second != 79) {
        ++other_xids_[xid->second];
        return true;
      }
      add(KernelEventKind::kGpuFellOffBus, xid->first, text, number);
      capture_.events.back().xid = 79;
      return true;
    }
    if (contains(text, "fallen off the bus")) {
      const auto gpu = fallen_gpu(text);
      if (!gpu) return false;
      // The driver repeats an Xid 79 in words on the next lines: one event.
      if (KernelLogEvent* previous = recent(*gpu, number);
          previous != nullptr && previous->kind == KernelEventKind::kGpuFellOffBus) {
        return true;
      }
      add(KernelEventKind::kGpuFellOffBus, *gpu, text, number);
      return true;
    }
    if (contains(text, "bwctrl") || contains(text, "Link Bandwidth Notification") ||
        contains(text, "bw_notification")) {
      const auto device = device_in(text);
      if (!device) return false;
      add(KernelEventKind::kBandwidthNotification, *device, text, number);
      return true;
    }
    // AER's other lines about an error already counted above (the root
    // port's "AER: Corrected error received: <bdf>", the "device [10de:2330]
    // error status/mask" and "[ 0] RxErr" dumps) are recognised, not skipped.
    if (contains(text, "AER: ") || contains(text, "error status/mask=")) return true;
    if (contains(text, "    [")) {
      const auto device = device_in(text);
      return device && recent(*device, number) != nullptr;
    }
    return false;
  }

  KernelLogCapture capture_;
  bool shaped_ = false;
  std::map<int, std::size_t> other_xids_;
};

}  // namespace

std::string_view to_string(KernelEventKind kind) {
  switch (kind) {
    case KernelEventKind::kBandwidthLimited:
      return "bandwidth_limited";
    case KernelEventKind::kAerCorrected:
      return "aer_corrected";
    case KernelEventKind::kAerUncorrectedNonFatal:
      return "aer_uncorrected_nonfatal";
    case KernelEventKind::kAerUncorrectedFatal:
      return "aer_uncorrected_fatal";
    case KernelEventKind::kSurpriseDown:
      return "surprise_down";
    case KernelEventKind::kBandwidthNotification:
      return "bandwidth_notification";
    case KernelEventKind::kGpuFellOffBus:
      return "gpu_fell_off_bus";
  }
  return "unknown";
}

std::optional<KernelLogEvent> parse_bandwidth_limited(std::string_view line) {
  constexpr std::string_view kAvailable = " Gb/s available PCIe bandwidth, limited by ";
  const auto at = line.find(kAvailable);
  if (at == std::string_view::npos) return std::nullopt;
  KernelLogEvent event;
  event.kind = KernelEventKind::kBandwidthLimited;
  event.text = quoted(trim_blanks(line));
  // The device is the dev_printk prefix before the bandwidth number.
  const auto number_start = line.rfind(' ', at > 0 ? at - 1 : 0);
  const auto device = device_in(line.substr(0, number_start == std::string_view::npos ? 0 : number_start));
  if (!device) return std::nullopt;
  event.device = *device;

  std::string_view rest = line.substr(at + kAvailable.size());
  std::size_t used = 0;
  if (auto state = parse_speed_width(rest, used)) {
    event.limited_to = state;
    rest.remove_prefix(used);
  } else {
    // "Unknown x16 link at ...": the kernel could not decode the speed.
    const auto link = rest.find(" link at ");
    if (link == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(link);
  }
  constexpr std::string_view kAt = " link at ";
  if (!rest.starts_with(kAt)) return std::nullopt;
  rest.remove_prefix(kAt.size());
  const auto port_end = rest.find(' ');
  event.limiting_port = full_address(rest.substr(0, port_end));  // nullopt for "<unknown>"
  constexpr std::string_view kWith = " Gb/s with ";
  if (const auto with = rest.find(kWith); with != std::string_view::npos) {
    std::string_view capable = rest.substr(with + kWith.size());
    std::size_t capable_used = 0;
    event.capable = parse_speed_width(capable, capable_used);
  }
  return event;
}

bool looks_like_kernel_log(std::string_view text) {
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = trim_blanks(text.substr(start, end - start));
    start = end + 1;
    if (line.empty()) continue;
    if (kernel_shaped(line) || contains(line, "available PCIe bandwidth") || contains(line, "PCIe Bus Error:") ||
        contains(line, "NVRM: Xid (")) {
      return true;
    }
  }
  return false;
}

Result<KernelLogCapture> parse_kernel_log(std::string_view text, std::string_view source) {
  Reader reader(source);
  std::size_t start = 0;
  std::size_t number = 0;
  while (start < text.size()) {
    const void* found = std::memchr(text.data() + start, '\n', text.size() - start);
    const std::size_t end =
        found == nullptr ? text.size() : static_cast<std::size_t>(static_cast<const char*>(found) - text.data());
    reader.line(text.substr(start, end - start), ++number);
    start = end + 1;
  }
  return std::move(reader).finish();
}

}  // namespace pcieval
