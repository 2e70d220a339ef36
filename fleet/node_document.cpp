#include "fleet/node_document.hpp"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "model/device.hpp"
#include "model/link.hpp"
#include "model/measurement.hpp"
#include "model/pci_address.hpp"
#include "model/text.hpp"
#include "model/verdict.hpp"
#include "report/document_values.hpp"
#include "report/file_descriptor.hpp"
#include "report/input_file.hpp"
#include "report/results_reader.hpp"

namespace pcieval {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

// As results_reader.cpp: the minor versions that made members required.
constexpr int kMinorWithProbes = 1;
constexpr int kMinorWithThresholds = 2;
constexpr int kMinorWithSoak = 3;
// As report/json_document.cpp: deeper input is not a results document.
constexpr std::size_t kMaxDepth = 64;
// As read_results_file: the cap only stops /dev/zero.
constexpr std::size_t kMaxResultsBytes = std::size_t{64} << 20;

// The fast path answers "this is the entry" or "ask the full reader": it
// never words an error itself, so every error line is the full reader's.
// Each check returns false at the first value the full reader would refuse.
struct Refused {};

// A member by name, the last one when a key repeats: the full reader's DOM
// keeps the last value of a repeated key, and both must read the same value.
std::optional<element> find(const element& value, std::string_view key) {
  object members;
  if (value.get_object().get(members) != simdjson::SUCCESS) throw Refused{};
  std::optional<element> found;
  for (const auto field : members) {
    if (field.key == key) found = field.value;
  }
  return found;
}

element member(const element& value, std::string_view key) {
  auto found = find(value, key);
  if (!found) throw Refused{};
  return *found;
}

bool is_null(const element& value) { return value.type() == element_type::NULL_VALUE; }

std::string_view text_view(const element& value) {
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) throw Refused{};
  return text;
}

std::optional<std::string_view> text_or_null(const element& value) {
  if (is_null(value)) return std::nullopt;
  return text_view(value);
}

std::string_view non_empty_text(const element& value) {
  const std::string_view text = text_view(value);
  if (text.empty()) throw Refused{};
  return text;
}

void strings(const element& value) {
  array items;
  if (value.get_array().get(items) != simdjson::SUCCESS) throw Refused{};
  for (const element item : items) (void)text_view(item);
}

bool boolean(const element& value) {
  bool flag = false;
  if (value.get_bool().get(flag) != simdjson::SUCCESS) throw Refused{};
  return flag;
}

void boolean_or_null(const element& value) {
  if (!is_null(value)) (void)boolean(value);
}

double number(const element& value) {
  double result = 0;
  if (value.get_double().get(result) != simdjson::SUCCESS) throw Refused{};
  return result;
}

std::optional<double> number_or_null(const element& value) {
  if (is_null(value)) return std::nullopt;
  return number(value);
}

double non_negative(const element& value) {
  const double result = number(value);
  if (result < 0) throw Refused{};
  return result;
}

std::optional<std::int64_t> integer_or_null(const element& value, std::int64_t min, std::int64_t max) {
  if (is_null(value)) return std::nullopt;
  // An integer above INT64_MAX is out of every range asked for.
  std::int64_t result = 0;
  if (value.type() != element_type::INT64 || value.get_int64().get(result) != simdjson::SUCCESS) throw Refused{};
  if (result < min || result > max) throw Refused{};
  return result;
}

// A count is an integer written without a minus sign.
std::uint64_t count(const element& value) {
  if (value.type() == element_type::UINT64) return value.get_uint64().value_unsafe();
  std::int64_t result = 0;
  if (value.type() != element_type::INT64 || value.get_int64().get(result) != simdjson::SUCCESS || result < 0) {
    throw Refused{};
  }
  return static_cast<std::uint64_t>(result);
}

void count_or_null(const element& value) {
  if (!is_null(value)) (void)count(value);
}

std::uint64_t positive_count(const element& value) {
  const std::uint64_t result = count(value);
  if (result == 0) throw Refused{};
  return result;
}

std::uint32_t hex_id(const element& value, std::size_t digits) {
  const std::string_view text = text_view(value);
  if (text.size() != digits || text.find_first_not_of("0123456789abcdef") != std::string_view::npos) throw Refused{};
  std::uint32_t id = 0;
  std::from_chars(text.data(), text.data() + text.size(), id, 16);
  return id;
}

PciAddress address(const element& value) {
  auto parsed = parse_pci_address(text_view(value));
  if (!parsed) throw Refused{};
  return parsed.value();
}

template <class E, std::size_t N>
E one_of(const element& value, const std::array<E, N>& values) {
  const std::string_view name = text_view(value);
  for (E candidate : values) {
    if (to_string(candidate) == name) return candidate;
  }
  throw Refused{};
}

template <class E>
E parsed_enum(const element& value, Result<E> (*parse)(std::string_view)) {
  auto parsed = parse(text_view(value));
  if (!parsed) throw Refused{};
  return parsed.value();
}

void object_type(const element& value) {
  if (value.type() != element_type::OBJECT) throw Refused{};
}
bool object_or_null(const element& value) {
  if (is_null(value)) return false;
  object_type(value);
  return true;
}
array items(const element& value) {
  array result;
  if (value.get_array().get(result) != simdjson::SUCCESS) throw Refused{};
  return result;
}

using document_values::kKinds;
using document_values::kOveralls;
using document_values::kPositions;
using document_values::kStatuses;

// The full reader's check_schema_version: "MAJOR.MINOR.PATCH", major 1.
int schema_minor(const element& value) {
  const std::string_view version = text_view(value);
  std::array<int, 3> parts{};
  std::size_t at = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0 && !(at < version.size() && version[at++] == '.')) throw Refused{};
    const char* first = version.data() + at;
    const auto [end, error] = std::from_chars(first, version.data() + version.size(), parts[i]);
    if (error != std::errc{} || end == first || parts[i] < 0) throw Refused{};
    at = static_cast<std::size_t>(end - version.data());
  }
  if (at != version.size() || parts[0] != 1) throw Refused{};
  return parts[1];
}

// The full reader's read_state: generation, speed_gts (which must be that
// generation's rate, or name one) and width, each possibly null.
struct StateFields {
  std::optional<PcieGen> gen;
  std::optional<int> width;
};

StateFields state(const element& value) {
  StateFields fields;
  const auto generation = integer_or_null(member(value, "generation"), 1, kMaxPcieGen);
  const auto rate = number_or_null(member(value, "speed_gts"));
  const auto width = integer_or_null(member(value, "width"), 0, 32);
  if (generation) {
    fields.gen = static_cast<PcieGen>(*generation);
    if (rate && std::abs(*rate - transfer_rate_gts(*fields.gen)) > 1e-6) throw Refused{};
  } else if (rate) {
    auto gen = gen_from_gts(*rate);
    if (!gen) throw Refused{};
    fields.gen = gen.value();
  }
  if (width) fields.width = static_cast<int>(*width);
  return fields;
}

std::optional<LinkState> capable(const StateFields& fields) {
  if (!fields.gen || !fields.width) return std::nullopt;
  return LinkState{*fields.gen, *fields.width};
}

void counters(const element& value) {
  if (!object_or_null(value)) return;
  object counts;
  if (member(value, "counts").get_object().get(counts) != simdjson::SUCCESS) throw Refused{};
  for (const auto field : counts) (void)count(field.value);
  count_or_null(member(value, "total"));
}

void nvml_fields(const element& value) {
  for (const std::string_view key : {"current_generation", "max_generation", "gpu_max_generation"}) {
    (void)integer_or_null(member(value, key), 1, kMaxPcieGen);
  }
  for (const std::string_view key : {"current_width", "max_width"}) (void)integer_or_null(member(value, key), 0, 32);
  for (const std::string_view key : {"replay_counter", "tx_kbps", "rx_kbps"}) count_or_null(member(value, key));
  (void)integer_or_null(member(value, "pstate"), 0, 15);
  (void)boolean(member(value, "under_load"));
  if (const auto busy = find(value, "utilization_gpu_percent")) (void)integer_or_null(*busy, 0, 100);
  if (const auto host_max = find(value, "host_max_generation")) (void)integer_or_null(*host_max, 1, kMaxPcieGen);
}

// What the fleet entry takes from a device: its ids, its model name and the
// link its whole path should train to.
struct DeviceEntry {
  PciAddress bdf;
  std::string device_id;  // "10de:20b0"
  std::optional<std::string_view> nvml_name;
  std::string link;  // "Gen4 x16" or "unknown"
};

DeviceEntry device(const element& value, int minor) {
  DeviceEntry entry;
  entry.bdf = address(member(value, "bdf"));
  (void)one_of(member(value, "kind"), kKinds);
  const std::uint32_t vendor_id = hex_id(member(value, "vendor_id"), 4);
  entry.device_id = hex_text(vendor_id, 4) + ":" + hex_text(hex_id(member(value, "device_id"), 4), 4);
  (void)hex_id(member(value, "class_code"), 6);
  (void)boolean(member(value, "virtual_function"));
  (void)integer_or_null(member(value, "numa_node"), 0, std::numeric_limits<int>::max());
  (void)text_or_null(member(value, "cpulist"));
  if (const element link = member(value, "link"); object_or_null(link)) {
    (void)state(member(link, "max"));
    (void)state(member(link, "current"));
  }
  // The narrowest hop wins (fleet.cpp's expected_path_link); a hop whose
  // capability is unknown at either end makes the whole path unknown.
  std::optional<LinkState> lowest;
  bool known = true;
  std::size_t hops = 0;
  for (const element hop : items(member(value, "path"))) {
    ++hops;
    (void)address(member(hop, "downstream"));
    (void)address(member(hop, "upstream"));
    if (const auto id = find(hop, "upstream_id"); id && !parse_pci_id(text_view(*id))) throw Refused{};
    (void)one_of(member(hop, "position"), kPositions);
    const auto down = capable(state(member(hop, "downstream_max")));
    const auto up = capable(state(member(hop, "upstream_max")));
    (void)state(member(hop, "downstream_current"));
    (void)state(member(hop, "upstream_current"));
    for (const std::string_view derived : {"negotiated", "expected"}) {
      if (const element s = member(hop, derived); object_or_null(s)) (void)state(s);
    }
    if (!down || !up) {
      known = false;
      continue;
    }
    const LinkState expected = lower_of(*down, *up);
    lowest = lowest ? lower_of(*lowest, expected) : expected;
  }
  entry.link = hops > 0 && known ? to_string(*lowest) : "unknown";
  if (const element locality = member(value, "locality"); object_or_null(locality)) {
    (void)integer_or_null(member(locality, "numa_node"), 0, std::numeric_limits<int>::max());
    (void)text_or_null(member(locality, "cpulist"));
    for (const element bridge : items(member(locality, "ancestor_bridges"))) (void)address(bridge);
  }
  const element aer = member(value, "aer");
  for (const std::string_view severity : {"correctable", "fatal", "nonfatal"}) counters(member(aer, severity));
  strings(member(value, "notes"));
  strings(member(value, "unknown"));
  const auto nvml = minor >= kMinorWithProbes ? std::optional<element>(member(value, "nvml")) : find(value, "nvml");
  if (nvml && object_or_null(*nvml)) {
    nvml_fields(*nvml);
    if (const auto name = find(*nvml, "name")) entry.nvml_name = text_or_null(*name);
  }
  return entry;
}

// The full reader's read_measurement, and whether the fleet compares it:
// h2d_ce or d2h_ce of one GPU alone on the copy engine.
struct MeasurementEntry {
  std::string_view probe;
  std::optional<PciAddress> gpu;  // set for the fleet's probes only
  Direction direction = Direction::kHostToDevice;
  double median_gbps = 0;
};

MeasurementEntry measurement(const element& value) {
  MeasurementEntry entry;
  entry.probe = non_empty_text(member(value, "probe"));
  (void)non_empty_text(member(value, "subject"));
  std::optional<PciAddress> first_gpu;
  std::size_t gpus = 0;
  for (const element gpu : items(member(value, "gpus"))) {
    const PciAddress bdf = address(gpu);
    if (gpus++ == 0) first_gpu = bdf;
  }
  entry.direction = parsed_enum(member(value, "direction"), direction_from_string);
  const CopyMethod method = parsed_enum(member(value, "method"), copy_method_from_string);
  (void)parsed_enum(member(value, "host_memory"), host_memory_from_string);
  const Aggregation aggregation = parsed_enum(member(value, "aggregation"), aggregation_from_string);
  (void)positive_count(member(value, "size_bytes"));
  (void)positive_count(member(value, "bytes_per_trial"));
  std::size_t trials = 0;
  for (const element trial : items(member(value, "trials_gbps"))) {
    (void)non_negative(trial);
    ++trials;
  }
  if (trials == 0) throw Refused{};
  entry.median_gbps = non_negative(member(value, "median_gbps"));
  const double min_gbps = non_negative(member(value, "min_gbps"));
  const double max_gbps = non_negative(member(value, "max_gbps"));
  if (!(min_gbps <= entry.median_gbps && entry.median_gbps <= max_gbps)) throw Refused{};
  (void)non_negative(member(value, "cv"));
  (void)integer_or_null(member(value, "host_numa_node"), 0, std::numeric_limits<int>::max());
  boolean_or_null(member(value, "host_numa_local"));
  (void)boolean(member(value, "verified"));
  const bool fleet_probe = (entry.probe == "h2d_ce" || entry.probe == "d2h_ce") && gpus == 1 &&
                           aggregation == Aggregation::kAlone && method == CopyMethod::kCopyEngine;
  if (fleet_probe) entry.gpu = first_gpu;
  return entry;
}

bool known_reason_code(std::string_view name) {
  static const std::vector<std::string_view> kNames = [] {
    std::vector<std::string_view> names;
    for (const ReasonCode code : all_reason_codes()) names.push_back(to_string(code));
    return names;
  }();
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

// Members the full reader reads but the entry does not use: present, of the
// JSON type it needs.
void present_array(const element& root, std::string_view key) { (void)items(member(root, key)); }
void present_object_or_null(const element& root, std::string_view key) { (void)object_or_null(member(root, key)); }

FleetNode entry_of(const element& root, std::string source) {
  object_type(root);
  const int minor = schema_minor(member(root, "schema_version"));
  FleetNode node;
  node.source = std::move(source);
  node.has_results = true;
  const element tool = member(root, "tool");
  (void)text_view(member(tool, "name"));
  node.tool_version = std::string(text_view(member(tool, "version")));
  const element host = member(root, "host");
  node.host = std::string(text_view(member(host, "hostname")));
  (void)text_view(member(host, "kernel"));
  if (const auto hypervisor = find(host, "hypervisor")) boolean_or_null(*hypervisor);
  if (const auto simulated = find(host, "simulated")) node.simulated = !is_null(*simulated) && boolean(*simulated);
  const element sources = member(root, "sources");
  (void)text_view(member(sources, "sysfs_root"));
  (void)text_or_null(member(sources, "topology"));
  (void)boolean(member(sources, "gpus_under_load"));
  if (const auto per_gpu = find(sources, "load_per_gpu")) boolean_or_null(*per_gpu);

  std::vector<DeviceEntry> devices;
  for (const element value : items(member(root, "devices"))) devices.push_back(device(value, minor));

  const bool since_1_1 = minor >= kMinorWithProbes;
  if (since_1_1 || find(root, "probe_settings")) present_object_or_null(root, "probe_settings");
  if (since_1_1 || find(root, "probes")) present_array(root, "probes");
  if (since_1_1 || find(root, "measurements")) {
    for (const element value : items(member(root, "measurements"))) {
      const MeasurementEntry m = measurement(value);
      if (!m.gpu) continue;
      FleetGpuMeasurement gpu;
      gpu.gpu = to_string(*m.gpu);
      gpu.probe = std::string(m.probe);
      gpu.direction = m.direction;
      gpu.median_gbps = m.median_gbps;
      const auto it =
          std::find_if(devices.begin(), devices.end(), [&](const DeviceEntry& d) { return d.bdf == *m.gpu; });
      if (it != devices.end()) {
        gpu.device_id = it->device_id;
        gpu.model = it->nvml_name ? std::string(*it->nvml_name) : it->device_id;
        gpu.link = it->link;
      } else {
        gpu.device_id = "unknown";
        gpu.model = "unknown";
        gpu.link = "unknown";
      }
      node.gpus.push_back(std::move(gpu));
    }
  }
  if (since_1_1 || find(root, "link_samples")) present_array(root, "link_samples");
  if (since_1_1 || find(root, "counters")) present_array(root, "counters");
  if (minor >= kMinorWithThresholds) object_type(member(root, "thresholds"));
  if (minor >= kMinorWithSoak) {
    (void)text_or_null(member(root, "interrupted"));
    present_object_or_null(root, "soak");
    for (const std::string_view key : {"captured_events", "capture_lines"}) {
      if (find(root, key)) present_array(root, key);
    }
    if (find(root, "stated_link")) present_object_or_null(root, "stated_link");
  }
  if (find(root, "reference_copies")) present_array(root, "reference_copies");

  for (const element value : items(member(root, "verdicts"))) {
    FleetVerdict verdict;
    verdict.subject = std::string(non_empty_text(member(value, "subject")));
    verdict.status = one_of(member(value, "status"), kStatuses);
    verdict.code = std::string(text_view(member(value, "code")));
    if (!known_reason_code(verdict.code)) throw Refused{};
    if (const element link = member(value, "link"); object_or_null(link)) {
      (void)address(member(link, "downstream"));
      (void)address(member(link, "upstream"));
    }
    verdict.reason = std::string(text_view(member(value, "reason")));
    (void)text_view(member(value, "remediation"));
    if (verdict.status != VerdictStatus::kPass) node.verdicts.push_back(std::move(verdict));
  }
  node.overall = one_of(member(root, "overall"), kOveralls);
  node.exit_code = exit_code_of(node.overall);
  node.reason = std::string(text_view(member(root, "summary")));
  strings(member(root, "notes"));
  return node;
}

// The bytes of the regular file at `path` into `buffer`, which keeps
// simdjson's padding after them and is reused from one document to the next
// (a fresh string per document cost more in page faults than the parse).
// False for anything out of the ordinary (no such file, not a regular file,
// over the cap, a read error): read_input_file then reads it and words the
// error as every other command does.
bool read_into(const std::string& path, std::vector<char>& buffer, std::size_t& size_bytes) {
  if (path == "-") return false;
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat info {};
  if (fd.get() < 0 || ::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) return false;
  // One read for the file as stat sees it and one to find its end.
  const std::size_t expected = static_cast<std::size_t>(std::max<off_t>(info.st_size, 0)) + 1;
  if (buffer.size() < expected + simdjson::SIMDJSON_PADDING) buffer.resize(expected + simdjson::SIMDJSON_PADDING);
  size_bytes = 0;
  for (;;) {
    if (buffer.size() - simdjson::SIMDJSON_PADDING - size_bytes == 0) buffer.resize(buffer.size() * 2);
    const ssize_t got =
        ::read(fd.get(), buffer.data() + size_bytes, buffer.size() - simdjson::SIMDJSON_PADDING - size_bytes);
    if (got < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (got == 0) return true;
    size_bytes += static_cast<std::size_t>(got);
    if (size_bytes > kMaxResultsBytes) return false;
  }
}

}  // namespace

struct NodeDocumentReader::Parser {
  // The depth is the full reader's limit; the capacity grows, within parse,
  // to the largest document met and is kept for the next ones.
  Parser() : ready(dom.allocate(kInitialCapacityBytes, kMaxDepth) == simdjson::SUCCESS) {}
  static constexpr std::size_t kInitialCapacityBytes = std::size_t{128} << 10;
  simdjson::dom::parser dom;
  std::vector<char> text;  // the document being read, padded for simdjson
  bool ready;              // false: out of memory already; the full reader takes every document
};

NodeDocumentReader::NodeDocumentReader() : parser_(std::make_unique<Parser>()) {}
NodeDocumentReader::NodeDocumentReader(NodeDocumentReader&&) noexcept = default;
NodeDocumentReader& NodeDocumentReader::operator=(NodeDocumentReader&&) noexcept = default;
NodeDocumentReader::~NodeDocumentReader() = default;

Result<FleetNode> NodeDocumentReader::read(std::string_view text, std::string_view source_name, std::string source) {
  return read_text(text, false, source_name, std::move(source));
}

Result<FleetNode> NodeDocumentReader::read_text(std::string_view text, bool padded, std::string_view source_name,
                                                std::string source) {
  try {
    element root;
    // Unpadded text is copied into the parser's own padded buffer first.
    if (parser_->ready && parser_->dom.parse(text.data(), text.size(), !padded).get(root) == simdjson::SUCCESS) {
      return entry_of(root, std::move(source));
    }
  } catch (const Refused&) {
    // The full reader says what is wrong, below.
  } catch (const std::exception& e) {
    return make_error(std::string(source_name) + ": cannot read the results document: " + e.what());
  }
  ++full_reads_;
  auto results = results_from_json(text, source_name);
  if (!results) return results.error();
  // The full reader accepted what the fast path refused: its reading stands.
  return node_from_results(results.value(), std::move(source));
}

Result<FleetNode> NodeDocumentReader::read_file(const std::string& path) {
  std::size_t size_bytes = 0;
  if (read_into(path, parser_->text, size_bytes)) {
    return read_text(std::string_view(parser_->text.data(), size_bytes), true, path, path);
  }
  auto text = read_input_file(path, kMaxResultsBytes, "a pcieval results document");
  if (!text) return text.error();
  return read_text(text.value(), false, path == "-" ? "stdin" : path, path);
}

}  // namespace pcieval
