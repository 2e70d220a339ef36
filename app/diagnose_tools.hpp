// The bandwidth tools' outputs in `pcieval diagnose` (nvbandwidth text and
// -j, bandwidthTest, nccl-tests text and -J): parsing by format, turning the
// numbers into measurements of the evidence, and judging them after the
// rules ran (JudgeOptions::amend_verdicts), against the link stated with
// --link or the GPU's captured path.
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

// What add_tool_captures leaves for judge_tool_captures.
struct ToolEvidence {
  std::map<std::size_t, std::string> origins;  // evidence.measurements index -> "file:line"
  bool any = false;
};

// Appends each capture's readings to evidence.measurements and its notes to
// evidence.notes. A reading's GPU index becomes the GPU's address when the
// capture prints addresses (nvbandwidth v0.6+, nccl-tests), or, failing that,
// when the other captures describe exactly as many NVIDIA GPUs as the tool
// used: they are then matched in PCI bus order, which is CUDA's order on a
// node of one GPU model (CUDA_DEVICE_ORDER=PCI_BUS_ID in general), and a note
// says so. nccl-tests tables become one summary note each (see
// summarize_nccl): a collective has no single-link budget.
[[nodiscard]] ToolEvidence add_tool_captures(Evidence& evidence, const std::vector<ToolCapture>& captures);

// After judge(): the tool numbers' verdicts (validate/stated_link_rules) and
// notes, appended; overall and summary recomputed by the caller.
void judge_tool_captures(Results& results, const ToolEvidence& tools, const std::optional<LinkState>& stated_link);

}  // namespace pcieval::app
