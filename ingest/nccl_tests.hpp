// nccl-tests output (NVIDIA/nccl-tests: all_reduce_perf and friends), the
// text table and the JSON of `-J FILE`.
#pragma once

#include <string>
#include <string_view>

#include "ingest/tool_output.hpp"
#include "model/result.hpp"

namespace pcieval {

// Reads the result table: per size, the out-of-place and the in-place halves
// (time, algbw, busbw, #wrong) into ToolCapture::nccl_rows; the "#  Rank N
// ... device D [0000:1b:00] name" lines into gpu_addresses (older "[0x1b]"
// lines name a bus only and are not mapped) and nccl_ranks; the collective
// from "# Collective test starting: all_reduce_perf" when printed. The header
// line names the columns, so tables with or without "root", with "cputime"
// or a timestamp column read the same. GB/s as printed (nccl-tests divides by
// 1e9). Interleaved NCCL INFO lines and mpirun tags are skipped.
//
// Errors when the text holds no result row.
[[nodiscard]] Result<ToolCapture> parse_nccl_tests(std::string_view text, std::string_view source = "input");

// `-J FILE` (JSON_FILE_VERSION 2): {"version", "args", "config": {"devices":
// [{"rank", "device", "device_hex", "device_info"}]}, "results": [{"size",
// "count", "type", "redop", "out_of_place": {"time", "alg_bw", "bus_bw",
// "nwrong"}, "in_place": {...}}]}. "nan" strings and null halves are skipped.
[[nodiscard]] Result<ToolCapture> parse_nccl_tests_json(std::string_view text, std::string_view source = "input");

// The all-reduce bus bandwidth factor of nccl-tests (doc/PERFORMANCE.md,
// src/all_reduce.cu): busbw = algbw x 2(n-1)/n. REQUIRES: ranks >= 1.
[[nodiscard]] double all_reduce_bus_factor(int ranks);

// A one-line summary for the evidence notes: the largest size's busbw (out
// of place), the rows with wrong elements, and a busbw/algbw ratio that does
// not match the collective's factor.
[[nodiscard]] std::string summarize_nccl(const ToolCapture& capture);

// Text: an "out-of-place" header with "algbw" and "busbw", or a "# nThread"
// line. JSON: an object with "results" and "config" (and no "nvbandwidth").
[[nodiscard]] bool looks_like_nccl_tests(std::string_view text);
[[nodiscard]] bool looks_like_nccl_tests_json(std::string_view text);

}  // namespace pcieval
