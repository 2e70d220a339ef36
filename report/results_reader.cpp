#include "report/results_reader.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "report/input_file.hpp"
#include "report/json_document.hpp"

namespace pcieval {
namespace {

using json_document::DocumentReader;
using json_document::Node;

// Every value the model names; a value added there (reason codes are
// append-only) must be added here too, or documents holding it cannot be read.
constexpr std::array kKinds = {DeviceKind::kGpu, DeviceKind::kNic, DeviceKind::kNvme, DeviceKind::kOther};
constexpr std::array kPositions = {LinkPosition::kDeviceLink, LinkPosition::kUplink};
constexpr std::array kStatuses = {VerdictStatus::kPass,         VerdictStatus::kLinkDowngraded,
                                  VerdictStatus::kBandwidthLow, VerdictStatus::kLinkErrors,
                                  VerdictStatus::kMissing,      VerdictStatus::kInconclusive};
constexpr std::array kCodes = {ReasonCode::kLinkAtExpectedState,    ReasonCode::kLinkSpeedBelowExpected,
                               ReasonCode::kLinkWidthBelowExpected, ReasonCode::kLinkSpeedAndWidthBelowExpected,
                               ReasonCode::kGpuLinkSpeedIdle,       ReasonCode::kLinkStateUnknown,
                               ReasonCode::kLinkAboveCapability,    ReasonCode::kGpusMissing,
                               ReasonCode::kLinkPathUnknown};
constexpr std::array kOveralls = {Overall::kPass, Overall::kFail, Overall::kInconclusive};

constexpr std::string_view kNotInDocument = "not in the results document";

// A device's "unknown" entries, as the writer formats them: "<bdf>
// <attribute>: <reason>", or "<bdf> <reason>" when the reason already starts
// with the attribute.
class UnknownReasons {
 public:
  explicit UnknownReasons(std::vector<std::string> entries) : entries_(std::move(entries)) {}

  // The entry's text after "<bdf> ": it starts with the attribute, so the
  // writer turns it back into the same entry.
  [[nodiscard]] std::optional<Error> find(const PciAddress& bdf, std::string_view attribute) const {
    const std::string port = to_string(bdf) + " ";
    for (const std::string& entry : entries_) {
      if (!entry.starts_with(port)) continue;
      const std::string_view rest = std::string_view(entry).substr(port.size());
      if (!rest.starts_with(attribute)) continue;
      // "max_link_speed" names that attribute only, not one it is a prefix of.
      const char next = rest.size() > attribute.size() ? rest[attribute.size()] : ':';
      if (next == '_' || (next >= 'a' && next <= 'z') || (next >= '0' && next <= '9')) continue;
      return make_error(std::string(rest));
    }
    return std::nullopt;
  }

  template <class T>
  [[nodiscard]] Reading<T> reading(const std::optional<T>& value, const PciAddress& bdf,
                                   std::string_view attribute) const {
    if (value) return *value;
    auto reason = find(bdf, attribute);
    return reason ? *reason : make_error(std::string(kNotInDocument));
  }

 private:
  std::vector<std::string> entries_;
};

// One link_state object: each half is nullopt where the document has null.
struct StateFields {
  std::optional<PcieGen> gen;
  std::optional<int> width;
};

std::string rate_text(double rate) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", rate);
  return buffer;
}

StateFields read_state(DocumentReader& in, const Node& state) {
  StateFields fields;
  const auto number = in.integer_or_null(in.member(state, "generation"), 1, kMaxPcieGen);
  const Node speed = in.member(state, "speed_gts");
  const auto rate = in.number_or_null(speed);
  const auto width = in.integer_or_null(in.member(state, "width"), 0, 32);
  if (number) {
    fields.gen = static_cast<PcieGen>(*number);
    if (rate && std::abs(*rate - transfer_rate_gts(*fields.gen)) > 1e-6) {
      in.fail(speed, rate_text(*rate) + " GT/s is not the rate of " + to_string(*fields.gen) + " (" +
                         rate_text(transfer_rate_gts(*fields.gen)) + " GT/s)");
    }
  } else if (rate) {
    // A rate without a generation still names the generation.
    const auto gen = gen_from_gts(*rate);
    if (gen) {
      fields.gen = gen.value();
    } else {
      in.fail(speed, rate_text(*rate) + " GT/s is not a PCIe transfer rate");
    }
  }
  if (width) fields.width = static_cast<int>(*width);
  return fields;
}

// "negotiated" and "expected" are derived from the ends' readings, so they
// are checked for shape only and rebuilt when the Results are written again.
void check_derived_state(DocumentReader& in, const Node& state) {
  if (in.object_or_null(state)) (void)read_state(in, state);
}

// One port of a link as the document gives it, resolved into readings once
// the device's unknown list has been read.
struct PortFields {
  PciAddress bdf;
  StateFields max;
  StateFields current;

  [[nodiscard]] PortLinkReading resolve(const UnknownReasons& unknown) const {
    PortLinkReading port;
    port.max_speed = unknown.reading(max.gen, bdf, "max_link_speed");
    port.max_width = unknown.reading(max.width, bdf, "max_link_width");
    port.current_speed = unknown.reading(current.gen, bdf, "current_link_speed");
    port.current_width = unknown.reading(current.width, bdf, "current_link_width");
    return port;
  }
};

std::optional<AerCounters> read_counters(DocumentReader& in, const Node& node) {
  if (!in.object_or_null(node)) return std::nullopt;
  AerCounters counters;
  for (const auto& [name, count] : in.members(in.member(node, "counts"))) counters.counts[name] = in.count(count);
  counters.total = in.count_or_null(in.member(node, "total"));
  return counters;
}

std::optional<Locality> read_locality(DocumentReader& in, const Node& node) {
  if (!in.object_or_null(node)) return std::nullopt;
  Locality locality;
  const auto numa_node = in.integer_or_null(in.member(node, "numa_node"), 0, std::numeric_limits<int>::max());
  if (numa_node) locality.numa_node = static_cast<int>(*numa_node);
  locality.cpulist = in.text_or_null(in.member(node, "cpulist"));
  for (const Node& bridge : in.items(in.member(node, "ancestor_bridges"))) {
    locality.ancestor_bridges.push_back(in.address(bridge));
  }
  return locality;
}

// The writer prefers sysfs's NUMA node and CPU list and falls back on
// hwloc's, so for these two an "unknown" entry, not a null, is what says the
// sysfs reading failed (the value shown is then hwloc's, kept in locality).
template <class T>
Reading<T> sysfs_reading(const std::optional<T>& shown, const UnknownReasons& unknown, const PciAddress& bdf,
                         std::string_view attribute) {
  if (auto reason = unknown.find(bdf, attribute)) return *reason;
  return unknown.reading(shown, bdf, attribute);
}

DeviceRecord read_device(DocumentReader& in, const Node& node) {
  DeviceRecord record;
  PciFunction& function = record.function;
  function.bdf = in.address(in.member(node, "bdf"));
  function.kind = in.one_of(in.member(node, "kind"), kKinds);
  function.vendor_id = static_cast<std::uint16_t>(in.hex_id(in.member(node, "vendor_id"), 4));
  function.device_id = static_cast<std::uint16_t>(in.hex_id(in.member(node, "device_id"), 4));
  function.class_code = in.hex_id(in.member(node, "class_code"), 6);
  function.is_virtual_function = in.boolean(in.member(node, "virtual_function"));
  const auto numa_value = in.integer_or_null(in.member(node, "numa_node"), 0, std::numeric_limits<int>::max());
  const std::optional<int> numa_node =
      numa_value ? std::optional<int>(static_cast<int>(*numa_value)) : std::optional<int>();
  const std::optional<std::string> cpulist = in.text_or_null(in.member(node, "cpulist"));

  // Readings wait for the unknown list, the device's last field, so that
  // problems are still reported in document order.
  std::optional<PortFields> own;
  if (const Node link = in.member(node, "link"); in.object_or_null(link)) {
    own = PortFields{function.bdf, read_state(in, in.member(link, "max")), read_state(in, in.member(link, "current"))};
  }
  std::vector<std::pair<PortFields, PortFields>> ends;
  for (const Node& hop : in.items(in.member(node, "path"))) {
    Link link;
    link.downstream = in.address(in.member(hop, "downstream"));
    link.upstream = in.address(in.member(hop, "upstream"));
    link.position = in.one_of(in.member(hop, "position"), kPositions);
    PortFields down{link.downstream, read_state(in, in.member(hop, "downstream_max")), {}};
    PortFields up{link.upstream, read_state(in, in.member(hop, "upstream_max")), {}};
    down.current = read_state(in, in.member(hop, "downstream_current"));
    up.current = read_state(in, in.member(hop, "upstream_current"));
    check_derived_state(in, in.member(hop, "negotiated"));
    check_derived_state(in, in.member(hop, "expected"));
    record.path.push_back(std::move(link));
    ends.emplace_back(down, up);
  }
  record.locality = read_locality(in, in.member(node, "locality"));
  const Node aer = in.member(node, "aer");
  function.aer.correctable = read_counters(in, in.member(aer, "correctable"));
  function.aer.fatal = read_counters(in, in.member(aer, "fatal"));
  function.aer.nonfatal = read_counters(in, in.member(aer, "nonfatal"));
  record.notes = in.strings(in.member(node, "notes"));

  const UnknownReasons unknown(in.strings(in.member(node, "unknown")));
  function.numa_node = sysfs_reading(numa_node, unknown, function.bdf, "numa_node");
  function.local_cpulist = sysfs_reading(cpulist, unknown, function.bdf, "local_cpulist");
  if (own) function.link = own->resolve(unknown);
  for (std::size_t i = 0; i < ends.size(); ++i) {
    record.path[i].downstream_end = ends[i].first.resolve(unknown);
    record.path[i].upstream_end = ends[i].second.resolve(unknown);
  }
  return record;
}

Verdict read_verdict(DocumentReader& in, const Node& node) {
  Verdict verdict;
  const Node subject = in.member(node, "subject");
  verdict.subject = in.text(subject);
  if (in.ok() && verdict.subject.empty()) in.fail(subject, "expected a bdf or \"node\", got an empty string");
  verdict.status = in.one_of(in.member(node, "status"), kStatuses);
  verdict.code = in.one_of(in.member(node, "code"), kCodes);
  if (const Node link = in.member(node, "link"); in.object_or_null(link)) {
    verdict.link = LinkRef{in.address(in.member(link, "downstream")), in.address(in.member(link, "upstream"))};
  }
  verdict.reason = in.text(in.member(node, "reason"));
  verdict.remediation = in.text(in.member(node, "remediation"));
  return verdict;
}

// "MAJOR.MINOR.PATCH"; a reader of major 1 reads every 1.x (fields added in a
// later minor are ignored) and refuses any other major.
void check_schema_version(DocumentReader& in, const Node& node) {
  const std::string version = in.text(node);
  if (!in.ok()) return;
  std::array<int, 3> parts{};
  std::size_t at = 0;
  bool valid = true;
  for (std::size_t i = 0; i < parts.size() && valid; ++i) {
    if (i > 0) valid = at < version.size() && version[at++] == '.';
    const char* first = version.data() + at;
    const char* last = version.data() + version.size();
    const auto [end, error] = std::from_chars(first, last, parts[i]);
    valid = valid && error == std::errc{} && end != first && parts[i] >= 0;
    at = static_cast<std::size_t>(end - version.data());
  }
  if (!valid || at != version.size()) {
    in.fail(node, json_document::quote(version) + " is not a schema version MAJOR.MINOR.PATCH");
  } else if (parts[0] != 1) {
    in.fail(node, "schema version " + version + " is not supported: this pcieval reads 1.x (it writes " +
                      kResultsSchemaVersion + ")");
  }
}

Results read_document(DocumentReader& in, const Node& root) {
  Results results;
  if (!root.json->is_object()) {
    in.fail(root, "expected a JSON object (a pcieval results document)");
    return results;
  }
  // The version decides how the rest reads, so it is checked first.
  check_schema_version(in, in.member(root, "schema_version"));

  const Node tool = in.member(root, "tool");
  results.tool.name = in.text(in.member(tool, "name"));
  results.tool.version = in.text(in.member(tool, "version"));

  Evidence& evidence = results.evidence;
  const Node host = in.member(root, "host");
  evidence.host.hostname = in.text(in.member(host, "hostname"));
  evidence.host.kernel = in.text(in.member(host, "kernel"));
  const Node sources = in.member(root, "sources");
  evidence.sysfs_root = in.text(in.member(sources, "sysfs_root"));
  evidence.topology = in.text_or_null(in.member(sources, "topology"));
  evidence.gpus_under_load = in.boolean(in.member(sources, "gpus_under_load"));

  for (const Node& device : in.items(in.member(root, "devices"))) evidence.devices.push_back(read_device(in, device));
  for (const Node& verdict : in.items(in.member(root, "verdicts")))
    results.verdicts.push_back(read_verdict(in, verdict));
  results.overall = in.one_of(in.member(root, "overall"), kOveralls);
  results.summary = in.text(in.member(root, "summary"));
  evidence.notes = in.strings(in.member(root, "notes"));
  return results;
}

}  // namespace

Result<Results> results_from_json(std::string_view text, std::string_view source_name) {
  try {
    auto document = json_document::parse(text, source_name);
    if (!document) return document.error();
    DocumentReader in(source_name);
    Results results = read_document(in, Node{&document.value(), ""});
    if (!in.ok()) return in.error();
    return results;
  } catch (const std::exception& e) {
    // Out of memory on a huge document; the parse itself reports by value.
    return make_error(std::string(source_name) + ": cannot read the results document: " + e.what());
  } catch (...) {
    return make_error(std::string(source_name) + ": cannot read the results document");
  }
}

Result<Results> read_results_file(const std::string& path) {
  // No results document comes near this; the cap only stops /dev/zero.
  constexpr std::size_t kMaxResultsBytes = std::size_t{64} << 20;
  auto text = read_input_file(path, kMaxResultsBytes, "a pcieval results document");
  if (!text) return text.error();
  return results_from_json(text.value(), path == "-" ? "stdin" : path);
}

}  // namespace pcieval
