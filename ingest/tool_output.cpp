#include "ingest/tool_output.hpp"

#include <charconv>
#include <cmath>

#include "ingest/detail/lspci_text.hpp"

namespace pcieval {

std::size_t assign_gpu_addresses(ToolCapture& capture, const std::map<int, PciAddress>& addresses) {
  std::size_t mapped = 0;
  for (ToolMeasurement& printed : capture.measurements) {
    if (!printed.gpu_index) continue;
    const auto found = addresses.find(*printed.gpu_index);
    if (found == addresses.end()) continue;
    if (printed.peer_index) {
      const auto peer = addresses.find(*printed.peer_index);
      if (peer == addresses.end()) continue;
      printed.measurement.subject = printed.peer_is_source ? to_string(peer->second) + "->" + to_string(found->second)
                                                           : to_string(found->second) + "->" + to_string(peer->second);
      printed.measurement.gpus = {found->second, peer->second};
      ++mapped;
      continue;
    }
    printed.measurement.subject = to_string(found->second);
    printed.measurement.gpus = {found->second};
    ++mapped;
  }
  return mapped;
}

ToolMeasurement peer_measurement(const PeerCopy& copy, double gbps, std::string_view source, std::size_t line) {
  ToolMeasurement printed;
  Measurement& m = printed.measurement;
  m.probe = copy.probe;
  const std::string gpu = "GPU " + std::to_string(copy.gpu_index);
  const std::string peer = "GPU " + std::to_string(copy.peer_index);
  m.subject = copy.peer_is_source ? peer + "->" + gpu : gpu + "->" + peer;
  m.direction = Direction::kDeviceToDevice;
  m.method = copy.method;
  m.aggregation = copy.aggregation;
  m.size_bytes = copy.size_bytes;
  m.bytes_per_trial = copy.size_bytes;
  m.trials_gbps = {gbps};
  m.stats = TrialStats{gbps, gbps, gbps, 0};
  printed.gpu_index = copy.gpu_index;
  printed.peer_index = copy.peer_index;
  printed.peer_is_source = copy.peer_is_source;
  printed.source = std::string(source);
  printed.line = line;
  return printed;
}

ToolCapture empty_capture(std::string_view tool, std::string_view source) {
  ToolCapture capture;
  capture.tool = std::string(tool);
  capture.source = std::string(source);
  return capture;
}

namespace tool_text {

namespace {

// `mpirun --tag-output` prefixes "[1,0]<stdout>:"; Slurm's `srun --label`
// prefixes "0: ". Only the first is stripped: a bare "0: " is also how
// nvbandwidth's matrix rows could look after trimming.
std::string_view strip_mpi_tag(std::string_view line) {
  if (!line.starts_with('[')) return line;
  const auto close = line.find("]<std");
  if (close == std::string_view::npos || close > 16) return line;
  const auto colon = line.find(">:", close);
  if (colon == std::string_view::npos || colon > close + 8) return line;
  return line.substr(colon + 2);
}

}  // namespace

std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> lines;
  std::size_t number = 0;
  while (!text.empty()) {
    const auto end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    lines.push_back({strip_mpi_tag(line), ++number});
  }
  return lines;
}

std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (at < line.size()) {
    const auto start = line.find_first_not_of(" \t\r", at);
    if (start == std::string_view::npos) break;
    auto end = line.find_first_of(" \t\r", start);
    if (end == std::string_view::npos) end = line.size();
    out.push_back(line.substr(start, end - start));
    at = end;
  }
  return out;
}

std::optional<double> parse_number(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  // from_chars accepts "inf", "nan" and hex floats only on request; digits
  // must lead so "nan" and "-" are refused before it sees them.
  const char first = text.front() == '-' || text.front() == '+' ? (text.size() > 1 ? text[1] : 'x') : text.front();
  if (!(first >= '0' && first <= '9') && first != '.') return std::nullopt;
  if (text.front() == '+') text.remove_prefix(1);
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::general);
  if (ec != std::errc{} || ptr != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<std::uint64_t> parse_count(std::string_view text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string quote(std::string_view text) { return quoted(trim_blanks(text)); }

}  // namespace tool_text
}  // namespace pcieval
