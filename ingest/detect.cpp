#include "ingest/detect.hpp"

#include <array>
#include <string>

#include "ingest/bandwidth_test.hpp"
#include "ingest/kernel_log.hpp"
#include "ingest/lspci.hpp"
#include "ingest/nccl_tests.hpp"
#include "ingest/nvbandwidth.hpp"
#include "ingest/nvidia_smi.hpp"
#include "ingest/nvidia_smi_xml.hpp"

namespace pcieval {
namespace {

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
    CaptureFormatInfo{CaptureFormat::kKernelLog, "kernel-log", "dmesg / journalctl -k", &looks_like_kernel_log},
};

}  // namespace

std::span<const CaptureFormatInfo> capture_formats() { return kFormats; }

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
