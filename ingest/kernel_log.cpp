// The kernel log reader. Logs are pasted by the hundred megabytes (a month of
// journal) and almost every line is not about PCIe, so lines are not searched
// one by one: one pass over the whole text looks for the markers of every
// event at once (marker_scanner.hpp), and only a line that holds a marker is
// read in full. The lines in between are only counted. Measured against
// `grep -cE` by bench/perf/diagnose_vs_grep.sh.
#include "ingest/kernel_log.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <map>
#include <utility>

#include "ingest/detail/kernel_log_lines.hpp"
#include "ingest/detail/kernel_log_markers.hpp"
#include "ingest/detail/lspci_text.hpp"
#include "ingest/detail/marker_scanner.hpp"
#include "ingest/detail/stamped_lines.hpp"
#include "model/enum_names.hpp"

namespace pcieval {
namespace {

using kernel_log_lines::Announced;
using kernel_log_lines::consume;
using kernel_log_lines::contains;
using kernel_log_lines::device_in;
using kernel_log_lines::enumerated_address;
using kernel_log_lines::enumerated_function;
using kernel_log_lines::error_bit;
using kernel_log_lines::error_received;
using kernel_log_lines::fallen_gpu;
using kernel_log_lines::full_address;
using kernel_log_lines::kNamedGpu;
using kernel_log_lines::parse_speed_width;
using kernel_log_lines::parse_xid;

// A dmesg timestamp "[   12.345678]" or "[Thu Dec  3 10:00:00 2026]" at the
// start, or a syslog/journal "kernel:" tag.
bool kernel_shaped(std::string_view line) {
  if (line.starts_with('[')) {
    const auto close = line.find(']');
    if (close != std::string_view::npos && close > 1 && close < 40) return true;
  }
  return contains(line, " kernel: ") || contains(line, " kernel:[");
}

// A kernel message quoted without its time stamp or tag (a bug report, a
// chat, a mail; in a code fence or behind "> "): a PCI device's message that
// holds one of the reader's markers, or the NVIDIA driver's "NVRM: ".
bool quoted_kernel_message(std::string_view line);

// The lines of one AER report or driver message: an event's status dump and
// its echo follow it within this many lines.
constexpr std::size_t kReportLines = 8;

// The indent of an AER status dump line ("pcieport 0000:4a:01.0:    [ 5] SDES").
constexpr std::string_view kStatusDump = "    [";

// A line event() can accept holds one of these substrings; a line that holds
// none is no event, whatever else it says. Most are the substrings event()
// looks for first. Two are narrower: a "fallen off the bus" line counts only
// when fallen_gpu() finds "NVRM: GPU " in it, and an AER status dump line
// ("    [ 0] RxErr") only within kReportLines of the event it belongs to, so
// the reader looks for its indent in the kReportLines after a marker line
// only, not in every line of the log. Adding a branch to event() means adding
// its marker here; KernelLog.EveryMarkerAnywhere checks each one.
//
// Each marker has a two-byte anchor, chosen to be rare in the lines of a GPU
// node's log that are not about PCIe (boot, USB, NVMe, systemd, network), so
// the scan (marker_scanner.hpp) seldom stops. "bw" shares a bucket with "dw"
// (the scanner puts it there): they differ in the first byte's low nibble
// only, so the bucket still passes exactly those two.
constexpr std::array kMarkers{
    ScanMarker{"available PCIe bandwidth", 18},    // "dw"
    ScanMarker{"Link Bandwidth Notification", 8},  // "dw"
    ScanMarker{"PCIe Bus Error: severity=", 23},   // "y="
    ScanMarker{"Surprise Down", 2},                // "rp"
    ScanMarker{"] SDES", 2},                       // "SD"
    ScanMarker{"Xid (", 0},                        // "Xi"
    ScanMarker{"NVRM: GPU ", 1},                   // "VR"
    ScanMarker{"NVRM: The NVIDIA GPU ", 1},        // "VR"
    ScanMarker{"NVRM: fallen off the bus", 1},     // "VR"
    ScanMarker{"] type 0", 2},                     // "ty"
    ScanMarker{"AER: ", 2},                        // "R:"
    ScanMarker{"error status/mask=", 16},          // "k="
    ScanMarker{"bwctrl", 0},                       // "bw"
    ScanMarker{"bw_notification", 0},              // "bw"
};
constexpr MarkerScanner kMarkerScanner{kMarkers};

// The bit of kMarkerScanner.markers_in() that says `text` is in a line; not
// a constant expression (so no build) for a text that is no marker.
consteval std::uint64_t marker_bit(std::string_view text) {
  for (std::size_t i = 0; i < kMarkers.size(); ++i) {
    if (kMarkers[i].text == text) return std::uint64_t{1} << i;
  }
  throw "not one of kMarkers";
}

// True when `line` holds kStatusDump. The lines after a marker line are
// checked for it one by one, and a stamped line starts with "[   12.3": a
// search for the indent's first byte (std::string_view::find) stops at each
// of its spaces, where one for its '[' stops at most a few times a line.
bool holds_status_dump(std::string_view line) {
  constexpr std::size_t kIndent = kStatusDump.size() - 1;
  for (std::size_t at = kIndent; at < line.size();) {
    const void* found = std::memchr(line.data() + at, '[', line.size() - at);
    if (found == nullptr) return false;
    at = static_cast<std::size_t>(static_cast<const char*>(found) - line.data());
    if (line.compare(at - kIndent, kIndent, kStatusDump.substr(0, kIndent)) == 0) return true;
    ++at;
  }
  return false;
}

// The address text an enumeration line names its function by ("pci
// 0000:00:03.1: [1022:1483] type 01 ..." -> "0000:00:03.1"), `at` being
// where "] type 0" starts: the last token before the "[vvvv:dddd]", which
// enumerated_address (device_in) reads first. Empty when the line has not
// that shape.
std::string_view enumeration_token(std::string_view text, std::size_t at) {
  const auto open = text.rfind('[', at);
  if (open == std::string_view::npos || at - open != 10 || text[open + 5] != ':') return {};
  const std::string_view prefix = text.substr(0, open);
  const auto last = prefix.find_last_not_of(' ');
  if (last == std::string_view::npos) return {};
  const auto space = prefix.rfind(' ', last);
  const std::size_t first = space == std::string_view::npos ? 0 : space + 1;
  std::string_view token = prefix.substr(first, last + 1 - first);
  if (token.ends_with(':')) token.remove_suffix(1);
  return token;
}

// The end of the line that holds `from`: its '\n', or the end of the text.
std::size_t line_end(std::string_view text, std::size_t from) {
  const void* found = std::memchr(text.data() + from, '\n', text.size() - from);
  return found == nullptr ? text.size() : static_cast<std::size_t>(static_cast<const char*>(found) - text.data());
}

constexpr EnumNames<KernelEventKind, 7> kKernelEventKindNames{
    {{KernelEventKind::kBandwidthLimited, "bandwidth_limited"},
     {KernelEventKind::kAerCorrected, "aer_corrected"},
     {KernelEventKind::kAerUncorrectedNonFatal, "aer_uncorrected_nonfatal"},
     {KernelEventKind::kAerUncorrectedFatal, "aer_uncorrected_fatal"},
     {KernelEventKind::kSurpriseDown, "surprise_down"},
     {KernelEventKind::kBandwidthNotification, "bandwidth_notification"},
     {KernelEventKind::kGpuFellOffBus, "gpu_fell_off_bus"}}};
static_assert(names_every_value_in_order(kKernelEventKindNames));

bool quoted_kernel_message(std::string_view line) {
  if (contains(line, "NVRM: ")) return true;
  const bool marked = std::any_of(kMarkers.begin(), kMarkers.end(),
                                  [&](const ScanMarker& marker) { return contains(line, marker.text); });
  return marked && device_in(line).has_value();
}

class KernelLogReader {
 public:
  explicit KernelLogReader(std::string_view source) { capture_.source = std::string(source); }

  // A line that holds a marker (see kMarkers), or a status dump line in the
  // kReportLines after one: read in full.
  void line(std::string_view raw, std::size_t number) {
    enumeration_ = false;
    const std::string_view text = trim_blanks(raw);
    if (text.empty()) return;
    ++capture_.lines;
    shaped_ = shaped_ || kernel_shaped(text);
    quoted_ = quoted_ || quoted_kernel_message(text);
    if (!event(text, kMarkerScanner.markers_in(text), number)) ++capture_.skipped_lines;
  }

  // Any other line: event() would accept nothing in it, so it is only
  // counted (and looked at for a kernel log's shape until one is seen).
  void plain_line(std::string_view raw) {
    if (raw.empty()) return;
    const char first = raw.front();
    if (first == ' ' || first == '\t' || first == '\r') {
      raw = trim_blanks(raw);
      if (raw.empty()) return;
    }
    ++capture_.lines;
    ++capture_.skipped_lines;
    if (!shaped_) shaped_ = kernel_shaped(trim_blanks(raw));
  }

  // `count` stamped lines without a marker, once the log's shape is known:
  // what plain_line would make of each.
  void stamped_lines(std::size_t count) {
    capture_.lines += count;
    capture_.skipped_lines += count;
  }
  [[nodiscard]] bool shaped() const { return shaped_; }

  // Whether the status dump lines in the kReportLines after the last line
  // read may belong to it. Not when it enumerated a function (no event, no
  // named GPU) in a log of kernel shape: a dump line there can only belong
  // to an event above, whose own report covers it, and reading it instead of
  // counting it changes nothing else once the shape is known. Boot-time
  // enumeration is hundreds of such lines in a row, and the lines after each
  // were read one by one.
  [[nodiscard]] bool opens_report() const { return !(enumeration_ && shaped_); }
  void note(std::string text) { capture_.notes.push_back(std::move(text)); }

  Result<KernelLogCapture> finish() && {
    if (!shaped_ && !quoted_ && capture_.events.empty()) {
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
    event.time_s = kernel_log_time(text);
    capture_.events.push_back(std::move(event));
    pending_ = false;
  }

  // The last event, when it is about `device` and at most a few lines above:
  // the lines that belong to one report.
  KernelLogEvent* recent(const PciAddress& device, std::size_t number) {
    if (capture_.events.empty()) return nullptr;
    KernelLogEvent& last = capture_.events.back();
    return last.device == device && number - last.line <= kReportLines ? &last : nullptr;
  }

  // True when the line is a PCIe event (recorded) or a line about one this
  // reader recognises and deliberately leaves out. kMarkers lists what a line
  // must hold for any branch to accept it; `held` says which it holds
  // (markers_in), so the line is scanned once, not once per branch.
  bool event(std::string_view text, std::uint64_t held, std::size_t number) {
    const auto holds = [held](std::uint64_t bits) { return (held & bits) != 0; };
    if (holds(marker_bit("available PCIe bandwidth"))) {
      if (auto limited = parse_bandwidth_limited(text)) {
        limited->line = number;
        limited->time_s = kernel_log_time(text);
        capture_.events.push_back(std::move(*limited));
        return true;
      }
      // The verbose form without a limit ("... (16.0 GT/s PCIe x16 link)") is healthy.
      return !contains(text, "limited by");
    }
    if (holds(marker_bit("PCIe Bus Error: severity="))) {
      const auto at = text.find("PCIe Bus Error: severity=");
      const auto device = device_in(text.substr(0, at));
      if (!device) return false;
      // Kernels before 6.x say "Corrected" / "Uncorrected (Fatal)", later
      // ones "Correctable" / "Uncorrectable (Fatal)".
      const std::string_view severity = text.substr(at + 25);
      KernelEventKind kind = KernelEventKind::kAerCorrected;
      if (severity.starts_with("Corrected") || severity.starts_with("Correctable")) {
        kind = KernelEventKind::kAerCorrected;
      } else if (severity.starts_with("Uncorrected (Fatal)") || severity.starts_with("Uncorrectable (Fatal)") ||
                 severity.starts_with("Fatal")) {
        kind = KernelEventKind::kAerUncorrectedFatal;
      } else if (severity.starts_with("Uncorrected") || severity.starts_with("Uncorrectable")) {
        kind = KernelEventKind::kAerUncorrectedNonFatal;
      } else {
        return false;
      }
      if (KernelLogEvent* received = pending_received(number, kind)) {
        // The detail of the error the root port announced: one error, cited
        // at the line that names the device that logged it.
        received->device = *device;
        received->line = number;
        received->text = quoted(text);
        if (auto time = kernel_log_time(text)) received->time_s = time;
        pending_ = false;
        return true;
      }
      add(kind, *device, text, number);
      return true;
    }
    if (holds(marker_bit("Surprise Down") | marker_bit("] SDES"))) {
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
    if (holds(marker_bit("Xid ("))) {
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
      std::optional<PciAddress> gpu = fallen_gpu(text);
      // "NVRM: fallen off the bus ..." ends the message whose first line
      // named the GPU: the event is at that line.
      const bool continued = !gpu && named_gpu_ && number - named_gpu_->line <= kReportLines;
      if (continued) gpu = named_gpu_->device;
      if (!gpu) return false;
      const std::size_t at_line = continued ? named_gpu_->line : number;
      // The driver repeats an Xid 79 in words on the next lines: one event.
      if (KernelLogEvent* previous = recent(*gpu, at_line);
          previous != nullptr && previous->kind == KernelEventKind::kGpuFellOffBus) {
        return true;
      }
      if (continued) {
        add(KernelEventKind::kGpuFellOffBus, *gpu, named_gpu_->text, at_line);
        named_gpu_.reset();
      } else {
        add(KernelEventKind::kGpuFellOffBus, *gpu, text, number);
      }
      return true;
    }
    if (holds(marker_bit(kNamedGpu))) {
      // The first line of a message the driver goes on with on the next
      // lines; what it says is not known yet, so the line is not counted as
      // read unless its end says the GPU fell off the bus.
      if (auto gpu = fallen_gpu(text)) named_gpu_ = NamedGpu{*gpu, number, std::string(text)};
      return false;
    }
    if (holds(marker_bit("] type 0"))) {
      const auto at = text.find("] type 0");
      // A function the kernel enumerated: what it is, for the devices the
      // events name. Not a PCIe event, so counted with the lines skipped.
      // A log enumerates each function once per boot, and many boots are
      // pasted: a function already known is not parsed again.
      enumeration_ = true;
      // Known by its address text: every boot of a pasted log enumerates
      // the same functions, and a compare costs less than a parse.
      const std::string_view token = enumeration_token(text, at);
      if (!token.empty() && std::find(known_tokens_.begin(), known_tokens_.end(), token) != known_tokens_.end()) {
        return false;
      }
      const auto bdf = enumerated_address(text, at);
      if (!bdf) return false;
      if (!known_function(*bdf)) {
        if (auto function = enumerated_function(text, at)) {
          function->line = number;
          if (!known_function(function->bdf)) capture_.enumerated.push_back(std::move(*function));
        }
      }
      // The text stands for the function only where it is what named it.
      if (!token.empty() && known_function(*bdf) && full_address(token) == bdf) known_tokens_.emplace_back(token);
      return false;
    }
    if (holds(marker_bit("bwctrl") | marker_bit("Link Bandwidth Notification") | marker_bit("bw_notification"))) {
      const auto device = device_in(text);
      if (!device) return false;
      add(KernelEventKind::kBandwidthNotification, *device, text, number);
      return true;
    }
    if (holds(marker_bit("AER: "))) {
      const auto at = text.find("AER: ");
      // An announcement is an error of its own until the detail line of the
      // same severity claims it: the detail is rate-limited, missing on old
      // kernels, or left out of a quote in a bug report.
      if (auto announced = error_received(text, at)) {
        add(announced->kind, announced->device, text, number);
        pending_ = true;
        return true;
      }
    }
    // A status dump line names one error bit of the report above it
    // ("    [ 6] BadTLP", "    [12] Replay Timer Timeout"); 5.x kernels put
    // "AER: " before the indent.
    if (const auto at = text.find(kStatusDump); at != std::string_view::npos) {
      const auto device = device_in(text.substr(0, at));
      KernelLogEvent* report = device ? recent(*device, number) : nullptr;
      if (report != nullptr) {
        if (auto bit = error_bit(text.substr(at + kStatusDump.size() - 1))) report->error_bits.emplace_back(*bit);
        return true;
      }
    }
    // AER's other lines about an error already counted above (the "device
    // [10de:2330] error status/mask" line, uncorrected "error received"
    // lines, "AER: enabled with IRQ") are recognised, not skipped.
    return holds(marker_bit("AER: ") | marker_bit("error status/mask="));
  }

  [[nodiscard]] bool known_function(const PciAddress& bdf) const {
    return std::any_of(capture_.enumerated.begin(), capture_.enumerated.end(),
                       [&](const EnumeratedFunction& f) { return f.bdf == bdf; });
  }

  // The error of severity `kind` announced by the last line, when it is at
  // most a report's length above `number` and no detail line has claimed it.
  KernelLogEvent* pending_received(std::size_t number, KernelEventKind kind) {
    if (!pending_ || capture_.events.empty()) return nullptr;
    KernelLogEvent& last = capture_.events.back();
    return last.kind == kind && number - last.line <= kReportLines ? &last : nullptr;
  }

  // "NVRM: The NVIDIA GPU <bdf>": the line the rest of the message belongs to.
  struct NamedGpu {
    PciAddress device;
    std::size_t line = 0;
    std::string text;
  };

  KernelLogCapture capture_;
  bool shaped_ = false;
  bool quoted_ = false;       // a kernel message quoted without its stamp (quoted_kernel_message)
  bool pending_ = false;      // the last event is a root port's "error received" announcement
  bool enumeration_ = false;  // the last line read enumerated a function ("] type 0")
  std::optional<NamedGpu> named_gpu_;
  std::vector<std::string> known_tokens_;  // enumeration_token of each function in capture_.enumerated
  std::map<int, std::size_t> other_xids_;
};

}  // namespace

std::string_view to_string(KernelEventKind kind) { return name_of(kKernelEventKindNames, kind); }

std::size_t kernel_log_markers_in(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(kMarkers.begin(), kMarkers.end(), [&](const ScanMarker& marker) {
    return text.find(marker.text) != std::string_view::npos;
  }));
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
  if (!consume(rest, kAt)) return std::nullopt;
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

bool is_kernel_log_line(std::string_view line) {
  if (line.starts_with('[')) {
    const auto close = line.find(']');
    if (close == std::string_view::npos || close > 40) return false;
    const std::string_view stamp = trim_blanks(line.substr(1, close - 1));
    // "12.345678": seconds since boot.
    const auto dot = stamp.find('.');
    const auto digits = [](std::string_view part) {
      return !part.empty() && part.find_first_not_of("0123456789") == std::string_view::npos;
    };
    if (dot != std::string_view::npos && digits(stamp.substr(0, dot)) && digits(stamp.substr(dot + 1))) return true;
    // "Thu Dec  3 10:00:00 2026": dmesg -T.
    constexpr std::string_view kDays[] = {"Mon ", "Tue ", "Wed ", "Thu ", "Fri ", "Sat ", "Sun "};
    for (const std::string_view day : kDays) {
      if (stamp.starts_with(day) && stamp.find(':') != std::string_view::npos) return true;
    }
    return false;
  }
  return contains(line, " kernel: ") || contains(line, " kernel:[");
}

bool looks_like_kernel_log(std::string_view text) {
  std::size_t start = 0;
  while (start < text.size()) {
    const std::string_view line = trim_blanks(next_line(text, start));
    if (line.empty()) continue;
    if (kernel_shaped(line) || contains(line, "available PCIe bandwidth") || contains(line, "PCIe Bus Error:") ||
        contains(line, "NVRM: Xid (") || quoted_kernel_message(line)) {
      return true;
    }
  }
  return false;
}

namespace {

// Where read_kernel_log stopped: the bytes and the lines it read.
struct ReadExtent {
  std::size_t bytes = 0;
  std::size_t lines = 0;
};

// Reads `text` to its end, or, with `ends_at`, to the first line after the
// first where it says a capture of another format begins; `extent`, when
// given, says where that was.
Result<KernelLogCapture> read_kernel_log(std::string_view text, std::string_view source, std::size_t first_line,
                                         std::size_t joined_lines, CaptureHeadTest ends_at = nullptr,
                                         ReadExtent* extent = nullptr) {
  KernelLogReader reader(source);
  std::size_t start = 0;                                     // the first line not yet read or counted
  std::size_t number = first_line > 0 ? first_line - 1 : 0;  // lines before `start`
  const std::size_t first_number = number;
  std::size_t read_until = 0;  // the last line of the last marker line's report
  // A capture of another format begins at a line without a time stamp only
  // (split_capture_sections passes the stamped ones), and each such line is
  // looked at below as a line start, read by itself or a marker's line.
  std::size_t looked_at = text.size();
  const auto ends_here = [&](std::size_t at) {
    if (ends_at == nullptr || at == 0 || at >= text.size() || text[at] == '[' || at == looked_at) return false;
    looked_at = at;
    return ends_at(text, at);
  };
  bool ended = false;  // at `start`, where another capture begins
  while (start < text.size()) {
    if (ends_here(start)) {
      ended = true;
      break;
    }
    std::size_t marker = text.size();       // a position inside the next marker
    std::size_t marker_line = text.size();  // the start of its line
    const auto find_line = [&] {
      if (marker == text.size()) return;
      const std::size_t newline = text.rfind('\n', marker);
      marker_line = newline == std::string_view::npos ? 0 : newline + 1;
    };
    if (number >= read_until && reader.shaped() && text[start] == '[') {
      // Past the report of the last marker line, with the shape known,
      // stamped lines are only counted: one walk finds the next marker and
      // counts the lines before it, or stops at a line without a stamp.
      std::size_t passed = 0;
      const std::size_t stop = kMarkerScanner.next_or_unstamped_line(text, start, passed);
      number += passed;
      reader.stamped_lines(passed);
      if (stop == text.size() || (text[stop - 1] == '\n' && text[stop] != '[')) {
        start = stop;  // the end, or a line without a stamp: read below
        continue;
      }
      marker = stop;
      find_line();
      start = marker_line;
    } else {
      // `start` begins a line, so the marker's line starts no earlier.
      marker = kMarkerScanner.next(text, start);
      find_line();
      // The lines before it hold no marker: counted, not read, except for a
      // status dump line in the report of the marker line above.
      while (start < marker_line) {
        // Past that report, with the shape known, a stamped line is only
        // counted: pass a run of them at once.
        if (number >= read_until && reader.shaped() && text[start] == '[') {
          std::size_t passed = 0;
          start = next_unstamped_line(text.substr(0, marker_line), start, passed);
          number += passed;
          reader.stamped_lines(passed);
          continue;
        }
        if (ends_here(start)) {
          ended = true;
          break;
        }
        const std::size_t end = line_end(text, start);
        const std::string_view line = text.substr(start, end - start);
        if (++number <= read_until && holds_status_dump(line)) {
          reader.line(line, number);
        } else {
          reader.plain_line(line);
        }
        start = end + 1;
      }
      if (ended) break;
    }
    if (marker == text.size()) break;
    if (ends_here(marker_line)) {
      start = marker_line;
      ended = true;
      break;
    }
    const std::size_t end = line_end(text, marker);
    reader.line(text.substr(marker_line, end - marker_line), ++number);
    if (reader.opens_report()) read_until = number + kReportLines;
    start = end + 1;
  }
  if (extent != nullptr) *extent = ReadExtent{ended ? start : text.size(), number - first_number};
  if (joined_lines > 0) {
    reader.note(std::string(source) + ": joined " + std::to_string(joined_lines) +
                (joined_lines == 1 ? " line" : " lines") +
                " without a time stamp to the line above (a wrapped paste), where only the joined text is a kernel "
                "message");
  }
  return std::move(reader).finish();
}

}  // namespace

Result<KernelLogCapture> parse_kernel_log(std::string_view text, std::string_view source, std::size_t first_line) {
  std::size_t joined = 0;
  if (auto unwrapped = unwrap_kernel_log(text, &joined)) {
    return read_kernel_log(*unwrapped, source, first_line, joined);
  }
  return read_kernel_log(text, source, first_line, 0);
}

KernelLogWalk walk_kernel_log(std::string_view text, std::string_view source, std::size_t first_line,
                              CaptureHeadTest ends_at) {
  ReadExtent extent;
  auto capture = read_kernel_log(text, source, first_line, 0, ends_at, &extent);
  return KernelLogWalk{std::move(capture), extent.bytes, extent.lines};
}

}  // namespace pcieval
