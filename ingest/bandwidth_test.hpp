// CUDA samples bandwidthTest output (NVIDIA/cuda-samples
// Samples/1_Utilities/bandwidthTest), old and new, read back as measurements.
#pragma once

#include <string_view>

#include "ingest/tool_output.hpp"
#include "model/result.hpp"

namespace pcieval {

// Reads every "Host to Device" / "Device to Host" table of one or more
// bandwidthTest runs (quick, range and --mode=shmoo tables, PINNED and
// PAGEABLE memory) and the --csv lines ("bandwidthTest-H2D-Pinned, Bandwidth =
// 26.8 GB/s, ..., Size = 32000000 bytes, NumDevsUsed = 1"). One measurement per
// table row: probe "bandwidthtest_h2d_pinned" etc., size_bytes from the row.
//
// Units: cuda-samples since CUDA 10 print "Bandwidth(GB/s)", computed as
// bytes / 1e9 / s (bandwidthTest.cu: `(memSize * MEMCOPY_ITERATIONS) /
// (double)1e9 / time_s`); older samples print "Bandwidth(MB/s)", computed as
// `(1e3f * memSize * MEMCOPY_ITERATIONS) / (elapsedTimeInMs * (1 << 20))`,
// that is MiB/s, converted here to GB/s (x 1048576 / 1e9).
//
// Each table belongs to the device of the run's " Device N: name" line. A run
// over several devices (--device=all, "K Device(s)") prints their sum: its
// measurements have no GPU index and subject "sum of K GPUs". Device-to-device
// tables are not host-path numbers and are skipped (noted).
//
// Errors when the text holds no host<->device row at all.
[[nodiscard]] Result<ToolCapture> parse_bandwidth_test(std::string_view text, std::string_view source = "input");

// "[CUDA Bandwidth Test]" banner, or a "Host to Device Bandwidth" /
// "Device to Host Bandwidth" table header, or a --csv "bandwidthTest-" line.
[[nodiscard]] bool looks_like_bandwidth_test(std::string_view text);

}  // namespace pcieval
