// nvbandwidth's text is a sequence of tests, each "Running <test>." then a
// one-line description naming the matrix's axes, a header of column indices
// and one row per source ("0     26.03     25.94"), then "SUM <test> <x>".
// The JSON (-j) carries the same matrix as strings. Both are read into the
// same measurements.
#include "ingest/nvbandwidth.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "ingest/detail/tool_json.hpp"

namespace pcieval {
namespace {

// A rate above this is not a bandwidth any bus carries: the text was damaged.
// Matrices are one row per host or GPU; more than this is not nvbandwidth's.
constexpr std::size_t kMaxMatrixIndex = 4096;
// nvbandwidth's text never prints its copy size; its --bufferSize default is
// 512 MiB (PCIE-FACTS section 3, NVIDIA/nvbandwidth common.h @66746a3; 64 MiB
// in the first releases). Recorded as that, with a note.
constexpr std::uint64_t kDefaultBufferBytes = std::uint64_t{512} << 20;

struct TestKind {
  Direction direction;
  CopyMethod method;
  Aggregation aggregation;
  // Device-to-device tests: the matrix is GPU (row) by peer (column), the
  // measurement's key is the peer contract's (tool_output.hpp), and a read
  // test's row GPU read from the column GPU.
  std::string_view peer_probe;
  bool peer_read = false;
};

// The host<->device tests and what their numbers stand for (nvbandwidth
// testcase descriptions: the bidirectional tests report the measured stream
// while the opposite one runs; host_to_all/all_to_host run every GPU at once).
std::optional<TestKind> copy_test(std::string_view name) {
  CopyMethod method;
  if (name.ends_with("_ce")) {
    method = CopyMethod::kCopyEngine;
  } else if (name.ends_with("_sm")) {
    method = CopyMethod::kSmKernel;
  } else {
    return std::nullopt;
  }
  const std::string_view base = name.substr(0, name.size() - 3);
  static constexpr std::pair<std::string_view, std::pair<Direction, Aggregation>> kTests[] = {
      {"host_to_device_memcpy", {Direction::kHostToDevice, Aggregation::kAlone}},
      {"device_to_host_memcpy", {Direction::kDeviceToHost, Aggregation::kAlone}},
      {"host_to_device_bidirectional_memcpy", {Direction::kHostToDevice, Aggregation::kWithReverse}},
      {"device_to_host_bidirectional_memcpy", {Direction::kDeviceToHost, Aggregation::kWithReverse}},
      {"host_to_all_memcpy", {Direction::kHostToDevice, Aggregation::kWithPeers}},
      {"all_to_host_memcpy", {Direction::kDeviceToHost, Aggregation::kWithPeers}},
  };
  for (const auto& [test, kind] : kTests) {
    if (base == test) return TestKind{kind.first, method, kind.second, {}, false};
  }
  // nvbandwidth testcases_ce.cpp / testcases_sm.cpp: a write test copies from
  // the row GPU into the column GPU in the row's context; a read test copies
  // from the column GPU into the row GPU, again driven by the row GPU. The
  // bidirectional ones run the reverse copy at the same time.
  const bool ce = method == CopyMethod::kCopyEngine;
  static constexpr std::pair<std::string_view, std::pair<bool, Aggregation>> kPeerTests[] = {
      {"device_to_device_memcpy_write", {false, Aggregation::kAlone}},
      {"device_to_device_memcpy_read", {true, Aggregation::kAlone}},
      {"device_to_device_bidirectional_memcpy_write", {false, Aggregation::kWithReverse}},
      {"device_to_device_bidirectional_memcpy_read", {true, Aggregation::kWithReverse}},
  };
  for (const auto& [test, kind] : kPeerTests) {
    if (base != test) continue;
    const bool read = kind.first;
    const std::string_view probe = read ? (ce ? kP2pReadCe : kP2pReadSm) : (ce ? kP2pWriteCe : kP2pWriteSm);
    return TestKind{Direction::kDeviceToDevice, method, kind.second, probe, read};
  }
  return std::nullopt;
}

// A bidirectional device-to-device test prints three matrices in versions
// after 0.7 ("Read1", "Read2", "Total"; "Write1", ...): the first is the
// row GPU's copy while the reverse one runs, the second that reverse copy
// (the same pair's number from the other side, already in its own row), the
// third their sum. Older versions print one matrix, the row GPU's.
bool peer_matrix_taken(std::string_view description) {
  for (std::string_view skipped : {"Read2 ", "Write2 ", "Total "}) {
    if (description.find(skipped) != std::string_view::npos) return false;
  }
  return true;
}

bool plausible_name(std::string_view name) {
  if (name.empty() || name.size() > 80) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

ToolMeasurement make_peer_measurement(const TestKind& kind, int gpu, int peer, double gbps, std::string_view source,
                                      std::size_t line, std::uint64_t size_bytes = kDefaultBufferBytes) {
  PeerCopy copy;
  copy.probe = std::string(kind.peer_probe);
  copy.gpu_index = gpu;
  copy.peer_index = peer;
  copy.peer_is_source = kind.peer_read;
  copy.method = kind.method;
  copy.aggregation = kind.aggregation;
  copy.size_bytes = size_bytes;
  return peer_measurement(copy, gbps, source, line);
}

ToolMeasurement make_measurement(std::string_view test, const TestKind& kind, int gpu, double gbps,
                                 std::string_view source, std::size_t line,
                                 std::uint64_t size_bytes = kDefaultBufferBytes) {
  ToolMeasurement printed;
  Measurement& m = printed.measurement;
  m.probe = "nvbandwidth_" + std::string(test);
  m.subject = "GPU " + std::to_string(gpu);
  m.direction = kind.direction;
  m.method = kind.method;
  m.host_memory = HostMemory::kPinned;  // nvbandwidth allocates host buffers with cuMemHostAlloc
  m.aggregation = kind.aggregation;
  m.size_bytes = size_bytes;
  m.bytes_per_trial = size_bytes;
  m.trials_gbps = {gbps};
  m.stats = TrialStats{gbps, gbps, gbps, 0};
  printed.gpu_index = gpu;
  printed.source = std::string(source);
  printed.line = line;
  return printed;
}

// Which axis of a host test's matrix is the GPU: "CPU(row) -> GPU(column)"
// in every version seen; "GPU(row)" is read too rather than misassigned.
std::optional<bool> gpu_is_column(std::string_view description) {
  if (description.find("GPU(column)") != std::string_view::npos) return true;
  if (description.find("GPU(row)") != std::string_view::npos) return false;
  return std::nullopt;
}

// One matrix cell: a rate, "N/A", or damage (nullopt and a note).
struct Cell {
  std::optional<double> gbps;
  bool bad = false;
};

Cell read_cell(std::string_view text) {
  if (text == "N/A") return {};
  const auto value = tool_text::parse_number(text);
  if (!value || *value < 0 || *value > kMaxPlausibleGbps) return {std::nullopt, true};
  return {value, false};
}

// A JSON matrix cell: a string as in the text, a number, or null.
Cell json_cell(const nlohmann::json& value) {
  if (value.is_string()) return read_cell(value.get<std::string>());
  if (value.is_number()) {
    const double gbps = value.get<double>();
    return gbps >= 0 && gbps <= kMaxPlausibleGbps ? Cell{gbps, false} : Cell{std::nullopt, true};
  }
  return Cell{std::nullopt, !value.is_null()};
}

// "Device 0: NVIDIA H100 80GB HBM3 (00000000:18:00)": index, name, address.
void read_device_line(std::string_view text, ToolCapture& capture) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return;
  const auto index = tool_text::parse_count(text.substr(7, colon - 7));
  if (!index || *index > kMaxMatrixIndex) return;
  std::string_view name = text.substr(colon + 1);
  while (name.starts_with(' ')) name.remove_prefix(1);
  const auto open = name.rfind(" (");
  if (open != std::string_view::npos && name.ends_with(')')) {
    const std::string_view bdf = name.substr(open + 2, name.size() - open - 3);
    // dddddddd:bb:dd (nvbandwidth prints no function: GPUs are function 0).
    if (auto address = parse_pci_address(std::string(bdf) + ".0")) {
      capture.gpu_addresses[static_cast<int>(*index)] = address.value();
      name = name.substr(0, open);
    }
  }
  capture.gpu_names[static_cast<int>(*index)] = std::string(name.substr(0, 120));
}

struct TextTest {
  std::string name;
  std::size_t line = 0;
  std::optional<TestKind> kind;
  std::optional<bool> gpu_column;
  bool described = false;
  bool header = false;
  std::size_t rows = 0;
  bool taken = true;  // a device-to-device matrix that is read (peer_matrix_taken)

  [[nodiscard]] bool peer() const { return kind && !kind->peer_probe.empty(); }
  // The next matrix of the same test (a bidirectional peer test's second).
  void next_matrix() {
    described = header = false;
    rows = 0;
  }
};

bool is_header_row(const std::vector<std::string_view>& cells) {
  if (cells.empty()) return false;
  for (std::string_view cell : cells) {
    if (!tool_text::parse_count(cell)) return false;
  }
  return true;
}

void note_skipped_tests(ToolCapture& capture, const std::set<std::string>& other_tests) {
  if (other_tests.empty()) return;
  std::string names;
  for (const auto& name : other_tests) names += (names.empty() ? "" : ", ") + name;
  capture.notes.push_back(capture.source + ": not host<->device or device-to-device copy tests, not read: " + names);
}

Status finish(ToolCapture& capture, std::string_view what) {
  if (capture.measurements.empty()) {
    return make_error(capture.source + ": no host<->device result in this " + std::string(what) +
                      " (host_to_device_memcpy_ce and the like), nor a device-to-device one "
                      "(device_to_device_memcpy_write_ce and the like)");
  }
  return ok_status();
}

}  // namespace

Result<ToolCapture> parse_nvbandwidth(std::string_view text, std::string_view source) {
  ToolCapture capture = empty_capture("nvbandwidth", source);
  std::optional<TextTest> test;
  std::set<std::string> other_tests;
  std::size_t bad_cells = 0;

  for (const tool_text::Line& line : tool_text::split_lines(text)) {
    std::string_view t = line.text;
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
    if (t.empty()) {
      // A matrix ends at the blank line after it; a peer test may print more.
      if (test && test->rows > 0) {
        if (test->peer()) {
          test->next_matrix();
        } else {
          test.reset();
        }
      }
      continue;
    }
    if (t.starts_with("Running ") && t.ends_with('.')) {
      const std::string_view name = t.substr(8, t.size() - 9);
      test.reset();
      if (!plausible_name(name)) {
        ++capture.skipped_lines;
        continue;
      }
      test = TextTest{std::string(name), line.number, copy_test(name), std::nullopt, false, false, 0};
      if (!test->kind) other_tests.insert(test->name);
      continue;
    }
    if (t.starts_with("Device ") && t.find(':') != std::string_view::npos) {
      read_device_line(t, capture);
      continue;
    }
    if (t.starts_with("nvbandwidth Version:") || t.starts_with("Built from Git version") ||
        t.starts_with("CUDA Runtime Version") || t.starts_with("CUDA Driver Version") ||
        t.starts_with("Driver Version") || t.starts_with("NOTE:") || t.starts_with("Additional system-specific") ||
        t.starts_with("Performance can vary") || t.starts_with("SUM ") || t.starts_with("COEFFICIENT_OF_VARIATION ")) {
      if (t.starts_with("SUM ")) {
        if (test && test->peer()) {
          test->next_matrix();
        } else {
          test.reset();
        }
      }
      continue;
    }
    if (t.starts_with("Waived") || t.starts_with("ERROR") || t.starts_with("Not Found")) {
      capture.notes.push_back(capture.source + ":" + std::to_string(line.number) + ": " +
                              (test ? test->name + " " : std::string()) + tool_text::quote(t));
      test.reset();
      continue;
    }
    if (test && !test->described && (t.starts_with("memcpy ") || t.starts_with("memory "))) {
      test->described = true;
      test->gpu_column = gpu_is_column(t);
      test->taken = peer_matrix_taken(t);
      continue;
    }
    const auto cells = tool_text::fields(t);
    if (test && test->described && !test->header && is_header_row(cells)) {
      test->header = true;
      continue;
    }
    if (test && test->header && cells.size() >= 2 && tool_text::parse_count(cells[0])) {
      ++test->rows;
      const auto row = tool_text::parse_count(cells[0]).value();
      if (row > kMaxMatrixIndex) continue;
      if (test->peer()) {
        if (!test->taken) continue;
        // GPU (row) by peer (column); the diagonal is a GPU to itself.
        for (std::size_t column = 1; column < cells.size() && column <= kMaxMatrixIndex + 1; ++column) {
          if (column - 1 == row) continue;
          const Cell cell = read_cell(cells[column]);
          if (cell.bad) ++bad_cells;
          if (!cell.gbps) continue;
          capture.measurements.push_back(make_peer_measurement(
              *test->kind, static_cast<int>(row), static_cast<int>(column - 1), *cell.gbps, source, line.number));
        }
        continue;
      }
      if (!test->kind || !test->gpu_column) continue;
      // One host (row 0) per GPU column; a GPU row has one host column.
      for (std::size_t column = 1; column < cells.size() && column <= kMaxMatrixIndex + 1; ++column) {
        const Cell cell = read_cell(cells[column]);
        if (cell.bad) ++bad_cells;
        if (!cell.gbps) continue;
        const int gpu = *test->gpu_column ? static_cast<int>(column - 1) : static_cast<int>(row);
        if (*test->gpu_column && row != 0) continue;
        capture.measurements.push_back(make_measurement(test->name, *test->kind, gpu, *cell.gbps, source, line.number));
      }
      continue;
    }
    ++capture.skipped_lines;
  }

  if (bad_cells > 0) {
    capture.notes.push_back(capture.source + ": " + std::to_string(bad_cells) +
                            " matrix cells were not rates (damaged text) and were not read");
  }
  note_skipped_tests(capture, other_tests);
  if (Status done = finish(capture, "nvbandwidth output"); !done) return done.error();
  capture.notes.push_back(capture.source + ": nvbandwidth prints no copy size; recorded as its default 512 MiB");
  assign_gpu_addresses(capture, capture.gpu_addresses);
  return capture;
}

Result<ToolCapture> parse_nvbandwidth_json(std::string_view text, std::string_view source) {
  ToolCapture capture = empty_capture("nvbandwidth", source);
  auto parsed = tool_text::parse_json_object(text, capture.source, "nvbandwidth -j writes one JSON object");
  if (!parsed) return parsed.error();
  const nlohmann::json& document = parsed.value();
  const nlohmann::json* root = tool_text::member(document, "nvbandwidth", nlohmann::json::value_t::object);
  if (root == nullptr) {
    return make_error(capture.source + ": JSON without an \"nvbandwidth\" object: not nvbandwidth -j output");
  }
  const nlohmann::json* testcases = tool_text::member(*root, "testcases", nlohmann::json::value_t::array);
  if (testcases == nullptr) {
    return make_error(capture.source + ": nvbandwidth JSON without \"testcases\"");
  }
  std::set<std::string> other_tests;
  std::size_t bad_cells = 0;
  std::size_t search_from = 0;
  // Newer versions write "bufferSize" (bytes); older ones none.
  std::uint64_t size_bytes = kDefaultBufferBytes;
  bool size_known = false;
  if (const auto buffer = root->find("bufferSize");
      buffer != root->end() && buffer->is_number_unsigned() && buffer->get<std::uint64_t>() > 0) {
    size_bytes = buffer->get<std::uint64_t>();
    size_known = true;
  }
  for (const nlohmann::json& testcase : *testcases) {
    if (!testcase.is_object()) continue;
    const auto name_it = testcase.find("name");
    if (name_it == testcase.end() || !name_it->is_string()) continue;
    const std::string name = name_it->get<std::string>();
    if (!plausible_name(name)) continue;
    // The JSON has no line numbers; the test's name in the text is where a
    // reader looks for it.
    std::size_t line = 0;
    if (const auto at = text.find("\"" + name + "\"", search_from); at != std::string_view::npos) {
      line =
          1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
      search_from = at + 1;
    }
    const auto kind = copy_test(name);
    if (!kind) {
      other_tests.insert(name);
      continue;
    }
    const auto status = testcase.find("status");
    if (status != testcase.end() && status->is_string() && *status != "Passed" && *status != "passed") {
      capture.notes.push_back(capture.source + ":" + std::to_string(line) + ": " + name + " " +
                              tool_text::quote(status->get<std::string>()));
      continue;
    }
    const auto description = testcase.find("bandwidth_description");
    const auto matrix = testcase.find("bandwidth_matrix");
    if (description == testcase.end() || !description->is_string() || matrix == testcase.end() || !matrix->is_array()) {
      continue;
    }
    if (!kind->peer_probe.empty()) {
      if (!peer_matrix_taken(description->get<std::string>())) continue;
      for (std::size_t row = 0; row < matrix->size() && row <= kMaxMatrixIndex; ++row) {
        const nlohmann::json& cells = (*matrix)[row];
        if (!cells.is_array()) continue;
        for (std::size_t col = 0; col < cells.size() && col <= kMaxMatrixIndex; ++col) {
          if (col == row) continue;
          const Cell cell = json_cell(cells[col]);
          if (cell.bad) ++bad_cells;
          if (!cell.gbps) continue;
          capture.measurements.push_back(make_peer_measurement(*kind, static_cast<int>(row), static_cast<int>(col),
                                                               *cell.gbps, source, line, size_bytes));
        }
      }
      continue;
    }
    const auto column = gpu_is_column(description->get<std::string>());
    if (!column) continue;
    for (std::size_t row = 0; row < matrix->size() && row <= kMaxMatrixIndex; ++row) {
      const nlohmann::json& cells = (*matrix)[row];
      if (!cells.is_array()) continue;
      if (*column && row != 0) continue;
      for (std::size_t col = 0; col < cells.size() && col <= kMaxMatrixIndex; ++col) {
        const Cell cell = json_cell(cells[col]);
        if (cell.bad) ++bad_cells;
        if (!cell.gbps) continue;
        const int gpu = *column ? static_cast<int>(col) : static_cast<int>(row);
        capture.measurements.push_back(make_measurement(name, *kind, gpu, *cell.gbps, source, line, size_bytes));
      }
    }
  }
  if (bad_cells > 0) {
    capture.notes.push_back(capture.source + ": " + std::to_string(bad_cells) +
                            " matrix cells were not rates and were not read");
  }
  note_skipped_tests(capture, other_tests);
  if (Status done = finish(capture, "nvbandwidth JSON"); !done) return done.error();
  if (!size_known) {
    capture.notes.push_back(capture.source +
                            ": the JSON names no bufferSize; copies recorded as nvbandwidth's "
                            "default 512 MiB");
  }
  return capture;
}

bool looks_like_nvbandwidth(std::string_view text) {
  if (text.find("nvbandwidth Version:") != std::string_view::npos) return true;
  const auto running = text.find("Running ");
  if (running == std::string_view::npos) return false;
  return text.find("memcpy CE ", running) != std::string_view::npos ||
         text.find("memcpy SM ", running) != std::string_view::npos;
}

bool looks_like_nvbandwidth_json(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] != '{') return false;
  const auto key = text.find("\"nvbandwidth\"");
  return key != std::string_view::npos && key < first + 64;
}

}  // namespace pcieval
