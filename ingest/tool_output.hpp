// What the bandwidth tools people already run print (nvbandwidth,
// bandwidthTest, nccl-tests), read back as measurements. Shared by the three
// parsers; each keeps where every number came from, so a verdict can name the
// file and line it rests on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/measurement.hpp"
#include "model/pci_address.hpp"
#include "model/port_settings.hpp"
#include "model/result.hpp"

namespace pcieval {

// One host<->device number a tool printed. measurement.probe is
// "<tool>_<test>" in the schema's snake_case ("nvbandwidth_host_to_device_memcpy_ce",
// "bandwidthtest_h2d_pinned"); its subject is "GPU <index>" until an address
// is known (assign_gpu_addresses), then the address; gpus holds that address.
// size_bytes is the copy size the capture prints (bandwidthTest, nvbandwidth
// JSON's bufferSize), else the tool's default (see parse_nvbandwidth);
// bytes_per_trial is the same. The tool aggregated its own samples (nvbandwidth: median of its trials;
// bandwidthTest: mean over 100 copies), so trials_gbps holds the one number
// it printed, with cv 0: the spread is not known.
//
// A device-to-device number (Direction::kDeviceToDevice, probe key
// p2p_write_ce, p2p_read_ce, p2p_write_sm, p2p_read_sm or p2p_staged_ce) also
// has a peer_index: gpus becomes {gpu, peer} (the GPU whose engine or SMs
// moved the bytes first) and subject "SRC->DST", the addresses in the
// direction the data went: the GPU to its peer for a write or a staged copy,
// the peer to the GPU for a read ("GPU 1->GPU 0" until the addresses are
// known).
struct ToolMeasurement {
  Measurement measurement;
  std::optional<int> gpu_index;   // the CUDA device index; nullopt for a sum over GPUs
  std::optional<int> peer_index;  // device-to-device only: the peer's CUDA index
  bool peer_is_source = false;    // device-to-device reads: the data went from the peer to the GPU
  std::string source;
  std::size_t line = 0;  // 1-based line of the number (text) or of the test (JSON)
};

// Whether one GPU may reach another, by CUDA index, as a tool printed it:
// p2pBandwidthLatencyTest's "Device=0 CAN Access Peer Device=1",
// `nvidia-smi topo -p2p r`'s matrix. Becomes a PeerStatus once both indices
// have addresses (tool_evidence.hpp).
struct ToolPeerStatus {
  int gpu_index = 0;
  int peer_index = 0;
  PeerCapability capability = PeerCapability::kAccess;
  std::string status;       // PeerStatus's words: "ok", "chipset_not_supported", ...
  std::string status_from;  // PeerStatus::source: "p2pBandwidthLatencyTest", "nvidia-smi topo -p2p r"
  std::string source;       // the capture's name
  std::size_t line = 0;
};

// One row of an nccl-tests result table (out-of-place or in-place half).
// Not a Measurement: a collective moves data both ways on every GPU at once,
// which no Direction describes.
struct NcclRow {
  std::uint64_t size_bytes = 0;
  std::uint64_t count = 0;
  std::string type;   // "float"
  std::string redop;  // "sum"
  bool in_place = false;
  double time_us = 0;
  double algbw_gbps = 0;  // size / time, GB = 1e9 bytes
  double busbw_gbps = 0;  // algbw x the collective's factor (2(n-1)/n for all-reduce)
  // The #wrong column; nullopt when the run did not check data (-c 0, "N/A").
  std::optional<double> wrong_elements;
  std::size_t line = 0;  // 1-based line of the row; 0 for JSON
};

struct ToolCapture {
  std::string tool;  // "nvbandwidth", "bandwidthTest", "nccl-tests"
  std::string source;
  std::vector<ToolMeasurement> measurements;
  std::vector<NcclRow> nccl_rows;           // nccl-tests only
  std::string nccl_collective;              // "all_reduce" when known
  std::optional<int> nccl_ranks;            // number of "Rank" device lines / JSON devices
  std::map<int, PciAddress> gpu_addresses;  // CUDA index -> address, where the capture prints one
  std::map<int, std::string> gpu_names;     // CUDA index -> "NVIDIA H100 80GB HBM3"
  std::vector<ToolPeerStatus> peer_status;  // p2pBandwidthLatencyTest, nvidia-smi topo -p2p
  std::vector<std::string> notes;           // caveats and what was not read, one line each
  std::size_t skipped_lines = 0;            // non-blank lines that were not part of the tool's output
};

// Sets each measurement's subject and gpus from an index -> address map; measurements
// whose index is not in it keep "GPU <index>" (a device-to-device one needs
// both of its indices in it). Returns how many were mapped.
std::size_t assign_gpu_addresses(ToolCapture& capture, const std::map<int, PciAddress>& addresses);

// A rate above this is not a bandwidth any bus carries: the text was damaged.
inline constexpr double kMaxPlausibleGbps = 1e5;

// The probe keys of device-to-device numbers (the measurement contract of
// issue 28, shared with bench/'s peer probes): gpus[0]'s copy engine or SMs
// write into gpus[1] or read from it; "staged" is the same copy with peer
// access off, which CUDA stages through host memory.
inline constexpr std::string_view kP2pWriteCe = "p2p_write_ce";
inline constexpr std::string_view kP2pReadCe = "p2p_read_ce";
inline constexpr std::string_view kP2pWriteSm = "p2p_write_sm";
inline constexpr std::string_view kP2pReadSm = "p2p_read_sm";
inline constexpr std::string_view kP2pStagedCe = "p2p_staged_ce";

// One device-to-device copy a tool timed, by CUDA index.
struct PeerCopy {
  std::string probe;  // kP2pWriteCe, ...
  int gpu_index = 0;  // whose engine or SMs moved the bytes (the matrix row)
  int peer_index = 0;
  bool peer_is_source = false;  // a read: the data went from the peer to the GPU
  CopyMethod method = CopyMethod::kCopyEngine;
  Aggregation aggregation = Aggregation::kAlone;
  std::uint64_t size_bytes = 0;
};

// The measurement of `copy` at `gbps`, the tool's one number (verified false,
// host_memory left at its default: no host buffer takes part).
[[nodiscard]] ToolMeasurement peer_measurement(const PeerCopy& copy, double gbps, std::string_view source,
                                               std::size_t line);

// An empty capture of `tool`'s output read from `source`.
[[nodiscard]] ToolCapture empty_capture(std::string_view tool, std::string_view source);

namespace tool_text {

// A line of a capture with its 1-based number; `text` has no line break and
// no leading "[1,0]<stdout>:" tag that `mpirun --tag-output` adds.
struct Line {
  std::string_view text;
  std::size_t number = 0;
};

// Splits at '\n' (a '\r' before it is dropped) and strips MPI output tags.
[[nodiscard]] std::vector<Line> split_lines(std::string_view text);

// The whitespace-separated fields of a line.
[[nodiscard]] std::vector<std::string_view> fields(std::string_view line);

// A finite decimal number, nothing else (no "nan", "inf", hex or trailing
// text).
[[nodiscard]] std::optional<double> parse_number(std::string_view text);

// A non-negative integer that fits 64 bits, nothing else.
[[nodiscard]] std::optional<std::uint64_t> parse_count(std::string_view text);

// A printable one-line excerpt, for notes and error messages.
[[nodiscard]] std::string quote(std::string_view text);

}  // namespace tool_text
}  // namespace pcieval
