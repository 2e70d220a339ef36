// The bandwidth tools' outputs in `pcieval diagnose` (nvbandwidth text and
// -j, bandwidthTest, nccl-tests text and -J): parsing by format, turning the
// numbers into measurements of the evidence. They are judged with the rest of
// the captured evidence (validate/capture_rules.hpp, judge_captured), against
// the link stated with --link or the GPU's captured path.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/detect.hpp"
#include "ingest/tool_output.hpp"
#include "model/evidence.hpp"
#include "model/link.hpp"
#include "model/results.hpp"

namespace pcieval::app {

// nullopt when `format` is not one of the tools' formats; otherwise the
// parse, whose error is the one line diagnose prints.
[[nodiscard]] std::optional<Result<ToolCapture>> parse_tool_capture(CaptureFormat format, std::string_view text,
                                                                    const std::string& name);

// Appends each capture's readings to evidence.measurements, the line each
// was read from to evidence.capture_lines, and the capture's notes to
// evidence.notes, with the notes of what will not be judged and why
// (judge_tool_bandwidth's, against evidence.stated_link: set it first). A
// reading's GPU index becomes the GPU's address when the
// capture prints addresses (nvbandwidth v0.6+, nccl-tests), or, failing that,
// when the other captures describe exactly as many NVIDIA GPUs as the tool
// used: they are then matched in PCI bus order, which is CUDA's order on a
// node of one GPU model (CUDA_DEVICE_ORDER=PCI_BUS_ID in general), and a note
// says so. nccl-tests tables become one summary note each (see
// summarize_nccl): a collective has no single-link budget.
void add_tool_captures(Evidence& evidence, const std::vector<ToolCapture>& captures);

}  // namespace pcieval::app
