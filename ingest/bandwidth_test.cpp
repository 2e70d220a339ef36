// bandwidthTest prints, per direction, a table header ("Host to Device
// Bandwidth, 1 Device(s)", the memory kind, "Transfer Size (Bytes)
// Bandwidth(GB/s)") and one "<bytes> <rate>" row per size; several runs are
// often pasted one after another, each with its own " Device N:" line.
#include "ingest/bandwidth_test.hpp"

#include <optional>
#include <string>

namespace pcieval {
namespace {

constexpr std::uint64_t kMaxDevices = 4096;
// Old samples' "MB" is 2^20 bytes (see the header).
constexpr double kGbpsPerMibps = 1048576.0 / 1e9;

enum class Kind { kHostToDevice, kDeviceToHost, kDeviceToDevice };

struct Table {
  Kind kind = Kind::kHostToDevice;
  std::uint64_t devices = 1;  // "K Device(s)"
  HostMemory memory = HostMemory::kPinned;
  std::optional<double> gbps_per_unit;  // set by the column header
};

std::string_view trim(std::string_view t) {
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  return t;
}

// "Host to Device Bandwidth, 1 Device(s)".
std::optional<Table> table_header(std::string_view t) {
  Table table;
  std::string_view rest;
  if (t.starts_with("Host to Device Bandwidth")) {
    table.kind = Kind::kHostToDevice;
    rest = t.substr(24);
  } else if (t.starts_with("Device to Host Bandwidth")) {
    table.kind = Kind::kDeviceToHost;
    rest = t.substr(24);
  } else if (t.starts_with("Device to Device Bandwidth")) {
    table.kind = Kind::kDeviceToDevice;
    rest = t.substr(26);
  } else {
    return std::nullopt;
  }
  const auto cells = tool_text::fields(rest);
  for (std::size_t i = 0; i + 1 < cells.size(); ++i) {
    if (cells[i + 1].starts_with("Device(s)")) {
      if (const auto count = tool_text::parse_count(cells[i]); count && *count >= 1 && *count <= kMaxDevices) {
        table.devices = *count;
      }
    }
  }
  return table;
}

std::string probe_of(Kind kind, HostMemory memory) {
  return std::string("bandwidthtest_") + (kind == Kind::kHostToDevice ? "h2d_" : "d2h_") +
         (memory == HostMemory::kPinned ? "pinned" : "pageable");
}

struct Run {
  std::vector<int> devices;  // " Device N:" lines of the current run
};

ToolMeasurement make_measurement(const Table& table, const Run& run, std::uint64_t size_bytes, double gbps,
                                 std::string_view source, std::size_t line) {
  ToolMeasurement printed;
  Measurement& m = printed.measurement;
  m.probe = probe_of(table.kind, table.memory);
  m.direction = table.kind == Kind::kHostToDevice ? Direction::kHostToDevice : Direction::kDeviceToHost;
  m.method = CopyMethod::kCopyEngine;  // cudaMemcpy(Async): the copy engines move the bytes
  m.host_memory = table.memory;
  m.aggregation = Aggregation::kAlone;
  m.size_bytes = size_bytes;
  m.bytes_per_trial = size_bytes;
  m.trials_gbps = {gbps};
  m.stats = TrialStats{gbps, gbps, gbps, 0};
  if (table.devices > 1) {
    m.subject = "sum of " + std::to_string(table.devices) + " GPUs";
  } else if (run.devices.size() == 1) {
    printed.gpu_index = run.devices.front();
    m.subject = "GPU " + std::to_string(run.devices.front());
  } else {
    m.subject = "GPU ?";
  }
  printed.source = std::string(source);
  printed.line = line;
  return printed;
}

// "bandwidthTest-H2D-Pinned, Bandwidth = 26.8 GB/s, Time = 0.00119 s, Size =
// 32000000 bytes, NumDevsUsed = 1" (--csv).
bool read_csv_line(std::string_view t, const Run& run, ToolCapture& capture, std::size_t number) {
  if (!t.starts_with("bandwidthTest-")) return false;
  Table table;
  const std::string_view what = t.substr(14, t.find(',') == std::string_view::npos ? 0 : t.find(',') - 14);
  if (what.starts_with("H2D-")) {
    table.kind = Kind::kHostToDevice;
  } else if (what.starts_with("D2H-")) {
    table.kind = Kind::kDeviceToHost;
  } else {
    return what.starts_with("D2D");  // recognised, not a host-path number
  }
  table.memory = what.substr(4).starts_with("Paged") || what.substr(4).starts_with("Pageable") ? HostMemory::kPageable
                                                                                               : HostMemory::kPinned;
  const auto cells = tool_text::fields(t);
  std::optional<double> rate;
  std::optional<double> unit;
  std::optional<std::uint64_t> size;
  for (std::size_t i = 0; i + 2 < cells.size(); ++i) {
    if (cells[i] == "Bandwidth" && cells[i + 1] == "=" && i + 3 < cells.size()) {
      rate = tool_text::parse_number(cells[i + 2]);
      const std::string_view u = cells[i + 3];
      if (u.starts_with("GB/s")) unit = 1.0;
      if (u.starts_with("MB/s")) unit = kGbpsPerMibps;
    }
    if (cells[i] == "Size" && cells[i + 1] == "=") size = tool_text::parse_count(cells[i + 2]);
    if (cells[i] == "NumDevsUsed" && cells[i + 1] == "=") {
      std::string_view n = cells[i + 2];
      if (n.ends_with(',')) n.remove_suffix(1);
      if (const auto devices = tool_text::parse_count(n); devices && *devices >= 1 && *devices <= kMaxDevices) {
        table.devices = *devices;
      }
    }
  }
  if (!rate || !unit || !size || *size == 0 || *rate < 0 || *rate * *unit > kMaxPlausibleGbps) return false;
  capture.measurements.push_back(make_measurement(table, run, *size, *rate * *unit, capture.source, number));
  return true;
}

bool only_dots(std::string_view t) { return !t.empty() && t.find_first_not_of('.') == std::string_view::npos; }

}  // namespace

Result<ToolCapture> parse_bandwidth_test(std::string_view text, std::string_view source) {
  ToolCapture capture = empty_capture("bandwidthTest", source);
  Run run;
  std::optional<Table> table;
  bool device_to_device = false;
  std::size_t mib_rows = 0;

  for (const tool_text::Line& line : tool_text::split_lines(text)) {
    const std::string_view t = trim(line.text);
    if (t.empty()) continue;
    if (t.starts_with("[CUDA Bandwidth Test]") || t.starts_with("[bandwidthTest]")) {
      run = Run{};
      table.reset();
      continue;
    }
    if (t.starts_with("Device ") && t.size() > 7 && t[7] >= '0' && t[7] <= '9') {
      const auto colon = t.find(':');
      const auto index =
          colon == std::string_view::npos ? std::nullopt : tool_text::parse_count(t.substr(7, colon - 7));
      if (index && *index < kMaxDevices) {
        const int device = static_cast<int>(*index);
        // A run lists its devices before its first table; a line after a
        // table starts the next pasted run.
        if (table) {
          run = Run{};
          table.reset();
        }
        run.devices.push_back(device);
        capture.gpu_names[device] = std::string(trim(t.substr(colon + 1)).substr(0, 120));
        continue;
      }
    }
    if (auto header = table_header(t)) {
      table = header;
      if (header->kind == Kind::kDeviceToDevice) device_to_device = true;
      continue;
    }
    if (table && (t.starts_with("PINNED Memory Transfers") || t.starts_with("PAGEABLE Memory Transfers"))) {
      table->memory = t.starts_with("PINNED") ? HostMemory::kPinned : HostMemory::kPageable;
      continue;
    }
    if (table && t.starts_with("Transfer Size (Bytes)")) {
      if (t.find("Bandwidth(GB/s)") != std::string_view::npos) table->gbps_per_unit = 1.0;
      if (t.find("Bandwidth(MB/s)") != std::string_view::npos) table->gbps_per_unit = kGbpsPerMibps;
      continue;
    }
    const auto cells = tool_text::fields(t);
    if (table && table->gbps_per_unit && cells.size() == 2) {
      const auto size = tool_text::parse_count(cells[0]);
      const auto rate = tool_text::parse_number(cells[1]);
      if (size && *size > 0 && rate && *rate >= 0 && *rate * *table->gbps_per_unit <= kMaxPlausibleGbps) {
        if (table->kind != Kind::kDeviceToDevice) {
          if (*table->gbps_per_unit != 1.0) ++mib_rows;
          capture.measurements.push_back(
              make_measurement(*table, run, *size, *rate * *table->gbps_per_unit, source, line.number));
        }
        continue;
      }
    }
    if (read_csv_line(t, run, capture, line.number)) continue;
    if (only_dots(t) || t.starts_with("Running on") || t.starts_with("Quick Mode") || t.starts_with("Shmoo Mode") ||
        t.starts_with("Range Mode") || t.starts_with("Result = ") || t.starts_with("NOTE: The CUDA Samples") ||
        t.starts_with("!!!!!Cumulative") || t.starts_with("Device No is not set")) {
      continue;
    }
    ++capture.skipped_lines;
  }

  if (capture.measurements.empty()) {
    return make_error(capture.source + ": no host-to-device or device-to-host row in this bandwidthTest output");
  }
  if (mib_rows > 0) {
    capture.notes.push_back(capture.source + ": " + std::to_string(mib_rows) +
                            " rows in the old samples' MB/s (2^20 bytes/s) were converted to GB/s (1e9 bytes/s)");
  }
  if (device_to_device) {
    capture.notes.push_back(capture.source + ": device-to-device tables are GPU memory bandwidth, not read");
  }
  for (const ToolMeasurement& printed : capture.measurements) {
    if (!printed.gpu_index && printed.measurement.subject.starts_with("sum of")) {
      capture.notes.push_back(capture.source + ":" + std::to_string(printed.line) + ": " + printed.measurement.subject +
                              " (--device=all): a sum of each GPU's own rate, not judged against one link");
      break;
    }
  }
  return capture;
}

bool looks_like_bandwidth_test(std::string_view text) {
  return text.find("[CUDA Bandwidth Test]") != std::string_view::npos ||
         text.find("Host to Device Bandwidth, ") != std::string_view::npos ||
         text.find("Device to Host Bandwidth, ") != std::string_view::npos ||
         text.find("bandwidthTest-H2D-") != std::string_view::npos ||
         text.find("bandwidthTest-D2H-") != std::string_view::npos;
}

}  // namespace pcieval
