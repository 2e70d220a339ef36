// `nvidia-smi topo -p2p r|w|n|a|p` output: the driver's peer-to-peer status
// of every GPU pair, read back as peer statuses.
#pragma once

#include <string_view>

#include "ingest/tool_output.hpp"
#include "model/result.hpp"

namespace pcieval {

// Reads the matrix nvidia-smi prints for `topo -p2p <c>`:
//          GPU0    GPU1
//   GPU0   X       OK
//   GPU1   CNS     X
// and its legend (OK, CNS chipset not supported, GNS GPU not supported, TNS
// topology not supported, NS not supported, U unknown). One status per
// ordered pair, row GPU first, diagonal skipped, with PeerStatus's words and
// source "nvidia-smi topo -p2p r" (or w). The matrix itself does not say
// which capability it shows: that is read from the command line pasted
// above it (`nvidia-smi topo -p2p r`, `--p2pstatus w`). A matrix without
// one, or of a capability PeerStatus has no word for (n: NVLink, a:
// atomics, p: prop), is noted and not read. GPUs are named by index only:
// their addresses come from the other captures (tool_evidence.hpp) or not
// at all.
//
// Errors when the text holds no such matrix.
[[nodiscard]] Result<ToolCapture> parse_nvidia_smi_topo_p2p(std::string_view text, std::string_view source = "input");

// A "GPU<n>" row whose other cells are all legend words, one of them X.
[[nodiscard]] bool looks_like_nvidia_smi_topo_p2p(std::string_view text);

}  // namespace pcieval
