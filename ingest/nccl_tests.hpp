// nccl-tests output (NVIDIA/nccl-tests: all_reduce_perf and friends), the
// text table and the JSON of `-J FILE`.
#pragma once

#include <optional>
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
// An all_reduce capture also becomes measurements (add_all_reduce_measurements).
// NCCL INFO lines are read for one thing: whether peer-to-peer was disabled.
//
// Errors when the text holds no result row.
[[nodiscard]] Result<ToolCapture> parse_nccl_tests(std::string_view text, std::string_view source = "input");

// `-J FILE` (JSON_FILE_VERSION 2): {"version", "args", "config": {"devices":
// [{"rank", "device", "device_hex", "device_info"}]}, "results": [{"size",
// "count", "type", "redop", "out_of_place": {"time", "alg_bw", "bus_bw",
// "nwrong"}, "in_place": {...}}]}. "nan" strings and null halves are skipped.
// "env" tells whether peer-to-peer was disabled. An all_reduce capture also
// becomes measurements.
[[nodiscard]] Result<ToolCapture> parse_nccl_tests_json(std::string_view text, std::string_view source = "input");

// The all-reduce bus bandwidth factor of nccl-tests (doc/PERFORMANCE.md,
// src/all_reduce.cu): busbw = algbw x 2(n-1)/n. REQUIRES: ranks >= 1.
[[nodiscard]] double all_reduce_bus_factor(int ranks);

// The all-reduce's numbers as measurements, one ToolMeasurement per size of the
// out-of-place half with no wrong element: probe kNcclTestsAllReduceProbe, or
// kNcclTestsAllReduceHostProbe when `p2p_disabled_at` says where the capture
// shows peer-to-peer disabled ("file:line" or "file: env"), subject "<n>
// GPUs", gpus the ranks' addresses when every rank has one. Out of place
// because the live all-reduce probes (bench/nccl_probe.cpp) reduce an input
// buffer into a separate output, as that half does: like is compared with
// like (the in-place half differs by a few percent at most and stays in the
// summary). Rows with wrong elements are left out (a number on corrupted data
// is never reported); rows without a data check are kept, verified false. A
// note says which was chosen and whether P2P was shown disabled. Nothing for
// other collectives (no Direction describes them) or an unknown rank count.
void add_all_reduce_measurements(ToolCapture& capture, const std::optional<std::string>& p2p_disabled_at);

// A one-line summary for the evidence notes: the largest size's busbw (out
// of place), the rows with wrong elements, and a busbw/algbw ratio that does
// not match the collective's factor.
[[nodiscard]] std::string summarize_nccl(const ToolCapture& capture);

// Text: an "out-of-place" header with "algbw" and "busbw", or a "# nThread"
// line. JSON: an object with "results" and "config" (and no "nvbandwidth").
[[nodiscard]] bool looks_like_nccl_tests(std::string_view text);
[[nodiscard]] bool looks_like_nccl_tests_json(std::string_view text);

}  // namespace pcieval
