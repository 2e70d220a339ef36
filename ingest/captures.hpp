// Everything `pcieval diagnose` read, by format: one input's text, split into
// sections (detect.hpp), parsed section by section. The file reading itself
// (size cap, stdin) is app/'s; from text on it is here.
#pragma once

#include <string>
#include <string_view>
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

// Parses the sections of one input's `text` (split_capture_sections, or one
// section when --format names the format) into `captures`, and records its
// `name` ("stdin" for "-"). Line numbers are the input's own, so each verdict
// cites the file's lines. The first section that does not parse is the
// error, the one line diagnose prints.
[[nodiscard]] Status add_capture(std::string_view text, const std::string& name,
                                 const std::vector<CaptureSection>& sections, Captures& captures);

}  // namespace pcieval
