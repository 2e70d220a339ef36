// Everything `pcieval diagnose` read, by format: one input's text, split into
// sections (detect.hpp), parsed section by section. The file reading itself
// (size cap, stdin) is app/'s; from text on it is here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ingest/detect.hpp"
#include "ingest/kernel_log.hpp"
#include "ingest/lspci.hpp"
#include "ingest/nvidia_smi.hpp"
#include "ingest/tool_output.hpp"
#include "model/result.hpp"

namespace pcieval {

// An input (or a section of one) that names PCI functions without any link
// state: an lspci -tv tree, an lspci -nn list.
struct LinklessListing {
  std::string source;
  CaptureFormat format = CaptureFormat::kLspciTree;
  std::size_t first_line = 1;
};

// One line for a listing: what it is, that it holds no link state, and the
// capture that does.
[[nodiscard]] std::string linkless_listing_text(const LinklessListing& listing);

struct Captures {
  std::vector<LspciCapture> lspci;
  std::vector<NvidiaSmiCapture> nvidia_smi;
  std::vector<KernelLogCapture> kernel_logs;
  std::vector<ToolCapture> tools;         // nvbandwidth, bandwidthTest, nccl-tests
  std::vector<LinklessListing> listings;  // read only to say they hold no link state
  std::vector<std::string> names;         // each input's name, in the order read
  std::vector<std::string> notes;         // how inputs that mix formats were split
};

// The kernel log sections of one input's `text` read while the section split
// found them (split_capture_sections with walker()), for add_capture to take
// instead of reading them again: a 100 MB log is walked once. Only a section
// too large to unwrap (kMaxUnwrapBytes) is kept; a smaller one is read by
// add_capture as before. The text must outlive it.
class KernelLogsAhead {
 public:
  KernelLogsAhead(std::string_view text, std::string name) : text_(text), name_(std::move(name)) {}
  [[nodiscard]] KernelLogWalker walker();
  // What was read for exactly `section`, when it was.
  [[nodiscard]] std::optional<Result<KernelLogCapture>> take(const CaptureSection& section);

 private:
  struct Walked {
    CaptureSection section;
    std::optional<Result<KernelLogCapture>> capture;
  };
  std::string_view text_;
  std::string name_;
  std::vector<Walked> walked_;
};

// Parses the sections of one input's `text` (split_capture_sections, or one
// section when --format names the format) into `captures`, and records its
// `name` ("stdin" for "-"). Line numbers are the input's own, so each verdict
// cites the file's lines. The first section that does not parse is the
// error, the one line diagnose prints.
// `ahead`, when given, holds kernel log sections the split already read.
[[nodiscard]] Status add_capture(std::string_view text, const std::string& name,
                                 const std::vector<CaptureSection>& sections, Captures& captures,
                                 KernelLogsAhead* ahead = nullptr);

}  // namespace pcieval
