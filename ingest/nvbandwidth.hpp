// nvbandwidth output (NVIDIA/nvbandwidth): the plain text it prints and the
// JSON of `nvbandwidth -j`, read back as measurements.
#pragma once

#include <string_view>

#include "ingest/tool_output.hpp"
#include "model/result.hpp"

namespace pcieval {

// Reads the host<->device tests of an nvbandwidth run:
//   host_to_device_memcpy_{ce,sm}, device_to_host_memcpy_{ce,sm}  -> alone
//   *_bidirectional_memcpy_{ce,sm}                                  -> with_reverse
//   host_to_all_memcpy_*, all_to_host_memcpy_*                      -> with_peers
// one measurement per GPU column, in GB/s as printed (nvbandwidth divides by 1e9).
// And its device-to-device tests, one measurement per ordered GPU pair (the
// diagonal skipped), with the peer contract's keys (tool_output.hpp):
//   device_to_device_memcpy_write_{ce,sm}                 -> p2p_write_{ce,sm}, alone
//   device_to_device_memcpy_read_{ce,sm}                  -> p2p_read_{ce,sm}, alone
//   device_to_device_bidirectional_memcpy_{write,read}_*  -> the same keys, with_reverse
// (of a bidirectional test's Read1/Read2/Total matrices, the first).
// Latency, all-to-one and the other tests are skipped and named in a note. "Device N: name
// (dddddddd:bb:dd)" lines (v0.6 and later) give each index its address.
// Waived and failed tests are noted. Lines that are not nvbandwidth's are
// skipped and counted.
//
// Errors when the text holds no host<->device or device-to-device result.
[[nodiscard]] Result<ToolCapture> parse_nvbandwidth(std::string_view text, std::string_view source = "input");

// `nvbandwidth -j`: {"nvbandwidth": {"testcases": [{"name", "status",
// "bandwidth_description", "bandwidth_matrix": [["26.03", "N/A"]], ...}]}}.
// The same tests are read as from the text; matrix cells are strings or
// numbers. The JSON names no devices, so subjects stay "GPU <index>".
[[nodiscard]] Result<ToolCapture> parse_nvbandwidth_json(std::string_view text, std::string_view source = "input");

// Content checks for format detection: an "nvbandwidth Version:" line or a
// "Running <test>." line followed by a "memcpy CE|SM" matrix header; for JSON,
// an object whose top-level key is "nvbandwidth".
[[nodiscard]] bool looks_like_nvbandwidth(std::string_view text);
[[nodiscard]] bool looks_like_nvbandwidth_json(std::string_view text);

}  // namespace pcieval
