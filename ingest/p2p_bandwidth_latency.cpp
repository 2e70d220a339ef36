// p2pBandwidthLatencyTest prints its devices, one "CAN/CANNOT Access Peer"
// line per ordered pair, a connectivity matrix, then titled matrices
// ("   D\D     0      1" and one "     0 801.28  22.23" row per GPU), the
// bandwidth ones in GB/s (1e9 bytes) and the latency ones in us.
#include "ingest/p2p_bandwidth_latency.hpp"

#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

namespace pcieval {
namespace {

constexpr std::string_view kP2pTestTool = "p2pBandwidthLatencyTest";
constexpr std::size_t kMaxP2pDevices = 4096;
// The sample's numElems default: 40000000 ints (4 bytes each) per copy.
constexpr std::uint64_t kDefaultElements = 40000000;

std::string_view p2p_trim(std::string_view t) {
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  return t;
}

std::optional<std::uint32_t> p2p_hex_after(std::string_view text, std::string_view key) {
  const auto at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view value = p2p_trim(text.substr(at + key.size()));
  value = value.substr(0, value.find_first_of(", \t"));
  std::uint32_t number = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), number, 16);
  if (value.empty() || ec != std::errc{} || ptr != value.data() + value.size()) return std::nullopt;
  return number;
}

// "Device: 0, NVIDIA RTX 6000 Ada Generation, pciBusID: c1, pciDeviceID: 0, pciDomainID:0"
// (printf "%x" for the three ids).
bool read_p2p_device_line(std::string_view t, ToolCapture& capture) {
  const auto comma = t.find(',');
  if (comma == std::string_view::npos) return false;
  const auto index = tool_text::parse_count(p2p_trim(t.substr(8, comma - 8)));
  const auto bus_at = t.find(", pciBusID:");
  if (!index || *index >= kMaxP2pDevices || bus_at == std::string_view::npos || bus_at < comma) return false;
  const auto bus = p2p_hex_after(t, "pciBusID:");
  const auto device = p2p_hex_after(t, "pciDeviceID:");
  const auto domain = p2p_hex_after(t, "pciDomainID:");
  const int gpu = static_cast<int>(*index);
  capture.gpu_names[gpu] = std::string(p2p_trim(t.substr(comma + 1, bus_at - comma - 1)).substr(0, 120));
  if (bus && device && domain && *bus <= 0xff && *device <= 0x1f) {
    capture.gpu_addresses[gpu] =
        PciAddress{*domain, static_cast<std::uint8_t>(*bus), static_cast<std::uint8_t>(*device), 0};
  } else {
    capture.notes.push_back(capture.source + ": device " + std::to_string(gpu) +
                            "'s ids do not read as a PCI address: " + tool_text::quote(t));
  }
  return true;
}

// "Device=0 CAN Access Peer Device=1", "Device=1 CANNOT Access Peer Device=0".
std::optional<std::tuple<int, int, bool>> p2p_access_line(std::string_view t) {
  const auto fields = tool_text::fields(t);
  if (fields.size() != 5 || fields[2] != "Access" || fields[3] != "Peer") return std::nullopt;
  if (fields[1] != "CAN" && fields[1] != "CANNOT") return std::nullopt;
  if (!fields[0].starts_with("Device=") || !fields[4].starts_with("Device=")) return std::nullopt;
  const auto gpu = tool_text::parse_count(fields[0].substr(7));
  const auto peer = tool_text::parse_count(fields[4].substr(7));
  if (!gpu || !peer || *gpu >= kMaxP2pDevices || *peer >= kMaxP2pDevices) return std::nullopt;
  return std::tuple{static_cast<int>(*gpu), static_cast<int>(*peer), fields[1] == "CAN"};
}

enum class P2pMatrixKind { kConnectivity, kBandwidth, kLatency };

struct P2pMatrix {
  P2pMatrixKind kind = P2pMatrixKind::kLatency;
  std::string probe;  // bandwidth only
  Aggregation aggregation = Aggregation::kAlone;
  bool peer_read = false;
  bool enabled = false;  // P2P=Enabled: peer access was on where the pair CAN
};

// The title lines the sample prints before each matrix.
std::optional<P2pMatrix> p2p_matrix_title(std::string_view t, CopyMethod enabled_method) {
  if (t == "P2P Connectivity Matrix")
    return P2pMatrix{P2pMatrixKind::kConnectivity, {}, Aggregation::kAlone, false, false};
  if (t.find("Latency") != std::string_view::npos && t.find("Matrix") != std::string_view::npos &&
      t.find("P2P=") != std::string_view::npos) {
    return P2pMatrix{};
  }
  if (!t.ends_with("Matrix (GB/s)") || t.find("Bandwidth") == std::string_view::npos) return std::nullopt;
  P2pMatrix matrix{P2pMatrixKind::kBandwidth, {}, Aggregation::kAlone, false, false};
  if (t.starts_with("Bidirectional ")) {
    matrix.aggregation = Aggregation::kTotalOverWallTime;
  } else if (!t.starts_with("Unidirectional ")) {
    return std::nullopt;
  }
  const bool sm = enabled_method == CopyMethod::kSmKernel;
  if (t.find("P2P=Disabled") != std::string_view::npos) {
    matrix.probe = std::string(kP2pStagedCe);
  } else if (t.find("P2P=Enabled") != std::string_view::npos) {
    matrix.enabled = true;
    matrix.peer_read = t.find("(P2P Reads)") != std::string_view::npos;
    matrix.probe = std::string(matrix.peer_read ? (sm ? kP2pReadSm : kP2pReadCe) : (sm ? kP2pWriteSm : kP2pWriteCe));
  } else {
    return std::nullopt;
  }
  return matrix;
}

// The pasted command line: "$ ./p2pBandwidthLatencyTest -sm_copy -numElems=1000000".
std::string_view p2p_command_line(std::string_view text) {
  for (const tool_text::Line& line : tool_text::split_lines(text)) {
    const auto at = line.text.find("p2pBandwidthLatencyTest");
    if (at == std::string_view::npos || line.text.find(" -", at) == std::string_view::npos) continue;
    return line.text.substr(at);
  }
  return {};
}

// "-numElems=N" on the command line.
std::optional<std::uint64_t> p2p_elements_option(std::string_view command) {
  const auto at = command.find("numElems=");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view value = command.substr(at + 9);
  value = value.substr(0, value.find_first_not_of("0123456789"));
  const auto count = tool_text::parse_count(value);
  if (!count || *count == 0 || *count > (std::uint64_t{1} << 40)) return std::nullopt;
  return count;
}

}  // namespace

Result<ToolCapture> parse_p2p_bandwidth_latency_test(std::string_view text, std::string_view source) {
  ToolCapture capture = empty_capture(kP2pTestTool, source);
  const std::string_view command = p2p_command_line(text);
  const CopyMethod enabled_method =
      command.find("-sm_copy") != std::string_view::npos ? CopyMethod::kSmKernel : CopyMethod::kCopyEngine;
  const auto elements = p2p_elements_option(command);
  const std::uint64_t size_bytes = elements.value_or(kDefaultElements) * 4;

  std::map<std::pair<int, int>, bool> access;  // (gpu, peer) -> CAN
  std::optional<P2pMatrix> matrix;
  bool header = false;
  bool anything = false;
  std::set<std::pair<int, int>> staged_in_enabled;
  std::size_t bad_cells = 0;

  for (const tool_text::Line& line : tool_text::split_lines(text)) {
    const std::string_view t = p2p_trim(line.text);
    if (t.empty()) continue;
    if (t.starts_with("Device: ") && read_p2p_device_line(t, capture)) {
      anything = true;
      continue;
    }
    if (const auto pair = p2p_access_line(t)) {
      const auto [gpu, peer, can] = *pair;
      anything = true;
      access.emplace(std::pair{gpu, peer}, can);
      capture.peer_status.push_back(ToolPeerStatus{gpu, peer, PeerCapability::kAccess, can ? "ok" : "not_supported",
                                                   std::string(kP2pTestTool), capture.source, line.number});
      continue;
    }
    if (auto title = p2p_matrix_title(t, enabled_method)) {
      matrix = std::move(title);
      header = false;
      anything = true;
      continue;
    }
    const auto cells = tool_text::fields(t);
    if (matrix && !header && !cells.empty() && (cells[0] == "D\\D" || cells[0] == "GPU" || cells[0] == "CPU")) {
      header = true;
      continue;
    }
    if (matrix && header && cells.size() >= 2 && tool_text::parse_count(cells[0])) {
      if (matrix->kind != P2pMatrixKind::kBandwidth) continue;
      const auto row = tool_text::parse_count(cells[0]).value();
      if (row >= kMaxP2pDevices) continue;
      const int gpu = static_cast<int>(row);
      for (std::size_t column = 1; column < cells.size() && column <= kMaxP2pDevices; ++column) {
        const int peer = static_cast<int>(column - 1);
        if (peer == gpu) continue;  // a copy within one GPU
        const auto gbps = tool_text::parse_number(cells[column]);
        if (!gbps || *gbps < 0 || *gbps > kMaxPlausibleGbps) {
          ++bad_cells;
          continue;
        }
        if (matrix->enabled) {
          const auto known = access.find({gpu, peer});
          if (known != access.end() && !known->second) {
            // The sample falls back to cudaMemcpyPeer through the host.
            staged_in_enabled.insert({gpu, peer});
            continue;
          }
        }
        PeerCopy copy;
        copy.probe = matrix->probe;
        copy.gpu_index = gpu;
        copy.peer_index = peer;
        copy.peer_is_source = matrix->peer_read;
        copy.method = matrix->enabled ? enabled_method : CopyMethod::kCopyEngine;
        copy.aggregation = matrix->aggregation;
        copy.size_bytes = size_bytes;
        capture.measurements.push_back(peer_measurement(copy, *gbps, capture.source, line.number));
      }
      continue;
    }
    // The latency matrices' second half starts with its own "CPU" header;
    // every other line is someone else's (a prompt, a bandwidthTest run, the
    // sample's NOTE).
    if (!matrix) ++capture.skipped_lines;
  }

  if (!anything) {
    return make_error(capture.source +
                      ": no p2pBandwidthLatencyTest device line, peer access line or bandwidth "
                      "matrix");
  }
  if (!staged_in_enabled.empty()) {
    std::string pairs;
    for (const auto& [gpu, peer] : staged_in_enabled) {
      pairs += (pairs.empty() ? "" : ", ") + std::to_string(gpu) + "->" + std::to_string(peer);
    }
    capture.notes.push_back(capture.source + ": GPU pairs " + pairs +
                            " CANNOT access their peer: their P2P=Enabled numbers are copies staged through the host "
                            "and are not read as peer copies");
  }
  if (bad_cells > 0) {
    capture.notes.push_back(capture.source + ": " + std::to_string(bad_cells) +
                            " p2pBandwidthLatencyTest matrix cells were not rates (damaged text) and were not read");
  }
  if (!capture.measurements.empty()) {
    capture.notes.push_back(capture.source + ": p2pBandwidthLatencyTest prints no copy size; recorded as " +
                            (elements ? "its -numElems=" + std::to_string(*elements) : std::string("its default")) +
                            " (" + std::to_string(size_bytes) +
                            " bytes); its bidirectional numbers are both copies' bytes over their common time");
  }
  if (enabled_method == CopyMethod::kSmKernel) {
    capture.notes.push_back(capture.source + ": run with -sm_copy: its P2P=Enabled copies are SM copies");
  }
  assign_gpu_addresses(capture, capture.gpu_addresses);
  return capture;
}

bool looks_like_p2p_bandwidth_latency_test(std::string_view text) {
  return text.find("[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]") != std::string_view::npos ||
         text.find("P2P=Enabled Bandwidth") != std::string_view::npos ||
         text.find("P2P=Disabled Bandwidth") != std::string_view::npos;
}

}  // namespace pcieval
