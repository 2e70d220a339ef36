#include "ingest/captures.hpp"

#include <optional>
#include <utility>

#include "ingest/bandwidth_test.hpp"
#include "ingest/nccl_tests.hpp"
#include "ingest/nvbandwidth.hpp"
#include "ingest/nvidia_smi_topo.hpp"
#include "ingest/nvidia_smi_xml.hpp"
#include "ingest/p2p_bandwidth_latency.hpp"

namespace pcieval {
namespace {

// nullopt when `format` is not one of the bandwidth tools' formats.
std::optional<Result<ToolCapture>> parse_tool_capture(CaptureFormat format, std::string_view text,
                                                      const std::string& name) {
  switch (format) {
    case CaptureFormat::kNvbandwidth:
      return parse_nvbandwidth(text, name);
    case CaptureFormat::kNvbandwidthJson:
      return parse_nvbandwidth_json(text, name);
    case CaptureFormat::kBandwidthTest:
      return parse_bandwidth_test(text, name);
    case CaptureFormat::kNcclTests:
      return parse_nccl_tests(text, name);
    case CaptureFormat::kNcclTestsJson:
      return parse_nccl_tests_json(text, name);
    case CaptureFormat::kP2pBandwidthLatencyTest:
      return parse_p2p_bandwidth_latency_test(text, name);
    case CaptureFormat::kNvidiaSmiTopoP2p:
      return parse_nvidia_smi_topo_p2p(text, name);
    default:
      return std::nullopt;
  }
}

// Parses one section, `first_line` being where it starts in the input.
Status parse_section(CaptureFormat format, std::string_view text, const std::string& name, std::size_t first_line,
                     Captures& captures, std::optional<Result<KernelLogCapture>> read) {
  if (holds_no_link_state(format)) {
    captures.listings.push_back(LinklessListing{name, format, first_line});
    return ok_status();
  }
  if (format == CaptureFormat::kKernelLog) {
    auto parsed = read ? std::move(*read) : parse_kernel_log(text, name, first_line);
    if (!parsed) return parsed.error();
    captures.kernel_logs.push_back(std::move(parsed).value());
    return ok_status();
  }
  // The other parsers count lines from the start of what they are given:
  // blank lines in front keep their numbers right (sections other than a
  // kernel log are kilobytes, so the copy is cheap).
  std::string padded;
  if (first_line > 1) {
    padded.reserve(first_line - 1 + text.size());
    padded.assign(first_line - 1, '\n');
    padded.append(text);
    text = padded;
  }
  switch (format) {
    case CaptureFormat::kLspci: {
      auto parsed = parse_lspci(text, name);
      if (!parsed) return parsed.error();
      captures.lspci.push_back(std::move(parsed).value());
      return ok_status();
    }
    case CaptureFormat::kNvidiaSmi: {
      auto parsed = parse_nvidia_smi(text, name);
      if (!parsed) return parsed.error();
      captures.nvidia_smi.push_back(std::move(parsed).value());
      return ok_status();
    }
    case CaptureFormat::kNvidiaSmiXml: {
      auto parsed = parse_nvidia_smi_xml(text, name);
      if (!parsed) return parsed.error();
      captures.nvidia_smi.push_back(std::move(parsed).value());
      return ok_status();
    }
    default:
      break;
  }
  if (auto tool = parse_tool_capture(format, text, name)) {
    if (!*tool) return tool->error();
    captures.tools.push_back(std::move(*tool).value());
    // bandwidthTest and p2pBandwidthLatencyTest are run one after the other
    // and pasted together: the second is read from the same text.
    if (format == CaptureFormat::kBandwidthTest && looks_like_p2p_bandwidth_latency_test(text)) {
      auto peer = parse_p2p_bandwidth_latency_test(text, name);
      if (!peer) return peer.error();
      captures.tools.push_back(std::move(peer).value());
    }
    return ok_status();
  }
  return make_error(name + ": format " + std::string(to_string(format)) + " is not read by diagnose yet");
}

}  // namespace

std::string linkless_listing_text(const LinklessListing& listing) {
  const std::string what = listing.format == CaptureFormat::kLspciTree ? "an `lspci -tv` tree" : "an `lspci -nn` list";
  const std::string where = listing.first_line > 1 ? " (from line " + std::to_string(listing.first_line) + ")" : "";
  return listing.source + where + " is " + what +
         ": it names PCI devices but holds no link state (no LnkCap/LnkSta), so no link can be judged from it; "
         "capture `sudo lspci -vv` of the whole machine";
}

KernelLogWalker KernelLogsAhead::walker() {
  return [this](std::size_t offset, std::size_t first_line) -> std::optional<WalkedSection> {
    // A section this small may be a wrapped paste: parse_kernel_log reads it.
    if (text_.size() - offset <= kMaxUnwrapBytes) return std::nullopt;
    KernelLogWalk walk = walk_kernel_log(text_.substr(offset), name_, first_line, &ends_kernel_log_at);
    const WalkedSection walked{walk.bytes, walk.lines};
    if (walk.bytes > kMaxUnwrapBytes) {
      walked_.push_back(
          Walked{CaptureSection{CaptureFormat::kKernelLog, offset, walk.bytes, first_line}, std::move(walk.capture)});
    }
    return walked;
  };
}

std::optional<Result<KernelLogCapture>> KernelLogsAhead::take(const CaptureSection& section) {
  for (Walked& walked : walked_) {
    const CaptureSection& read = walked.section;
    if (read.format == section.format && read.offset == section.offset && read.size == section.size &&
        read.first_line == section.first_line && walked.capture) {
      return std::exchange(walked.capture, std::nullopt);
    }
  }
  return std::nullopt;
}

Status add_capture(std::string_view text, const std::string& name, const std::vector<CaptureSection>& sections,
                   Captures& captures, KernelLogsAhead* ahead) {
  captures.names.push_back(name);
  std::string parts;
  for (const CaptureSection& section : sections) {
    if (Status parsed =
            parse_section(section.format, text.substr(section.offset, section.size), name, section.first_line, captures,
                          ahead != nullptr ? ahead->take(section) : std::nullopt);
        !parsed) {
      return parsed;
    }
    parts += (parts.empty() ? "" : ", ") + std::string(to_string(section.format)) + " from line " +
             std::to_string(section.first_line);
  }
  if (sections.size() > 1) captures.notes.push_back(name + " holds several captures, read one by one: " + parts);
  return ok_status();
}

}  // namespace pcieval
