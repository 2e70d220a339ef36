// The bandwidth tools' outputs (nvbandwidth text and -j, bandwidthTest,
// nccl-tests text and -J) as measurements of the evidence, judged with the
// rest of the captured evidence (validate/capture_rules.hpp) against the link
// stated with --link or the GPU's captured path.
#pragma once

#include <vector>

#include "ingest/tool_output.hpp"
#include "model/evidence.hpp"

namespace pcieval {

// Appends each capture's measurements to evidence.measurements, the line each
// was read from to evidence.capture_lines, and the capture's notes to
// evidence.notes. A measurement's GPU index becomes the GPU's address when the
// capture prints addresses (nvbandwidth v0.6+, nccl-tests), or, failing that,
// when the other captures describe exactly as many NVIDIA GPUs as the tool
// used: they are then matched in PCI bus order, which is CUDA's order on a
// node of one GPU model (CUDA_DEVICE_ORDER=PCI_BUS_ID in general), and a note
// says so. nccl-tests tables become one summary note each (see
// summarize_nccl): a collective has no single-link budget. What validate/
// will not judge, and why, is its notes' business (app/ adds them).
void add_tool_captures(Evidence& evidence, const std::vector<ToolCapture>& captures);

}  // namespace pcieval
