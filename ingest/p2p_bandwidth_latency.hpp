// CUDA samples' p2pBandwidthLatencyTest output, read back as peer statuses
// and device-to-device measurements.
#pragma once

#include <string_view>

#include "ingest/tool_output.hpp"
#include "model/result.hpp"

namespace pcieval {

// Reads what p2pBandwidthLatencyTest prints (cuda-samples
// Samples/5_Domain_Specific/p2pBandwidthLatencyTest):
//   "Device: 0, NAME, pciBusID: c1, pciDeviceID: 0, pciDomainID:0"  -> each index's address (hex)
//   "Device=0 CAN Access Peer Device=1" / "CANNOT"                   -> peer status, capability access
//   Unidirectional P2P=Disabled Bandwidth Matrix         -> p2p_staged_ce, alone
//   Unidirectional P2P=Enabled Bandwidth (P2P Writes)    -> p2p_write_ce, alone
//   Unidirectional P2P=Enabled Bandwidth (P2P Reads)     -> p2p_read_ce, alone (-p2p_read)
//   Bidirectional P2P=Disabled / P2P=Enabled             -> the same keys, total_over_wall_time
// one measurement per ordered pair, row GPU first; the diagonal (a GPU's
// copy within itself) and the latency matrices are not read. The
// bidirectional matrices count the bytes of both copies over the time of
// both (the sample doubles them), hence total_over_wall_time, not a
// direction's with_reverse. A pair that CANNOT access its peer copies
// through the host in the P2P=Enabled matrices too: those cells are not read
// as peer copies, and a note says so. With -sm_copy on the command line the
// enabled copies are SM copies (p2p_write_sm). The copy size is the sample's
// numElems (40000000 ints, 160 MB, unless -numElems= is on the command
// line). Lines of other output (a bandwidthTest run pasted before it) are
// skipped.
//
// Errors when the text holds neither a device line, an access line nor a
// bandwidth matrix.
[[nodiscard]] Result<ToolCapture> parse_p2p_bandwidth_latency_test(std::string_view text,
                                                                   std::string_view source = "input");

// The sample's banner "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]" or a
// "P2P=Enabled"/"P2P=Disabled" bandwidth matrix title.
[[nodiscard]] bool looks_like_p2p_bandwidth_latency_test(std::string_view text);

}  // namespace pcieval
