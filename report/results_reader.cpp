#include "report/results_reader.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "report/detail/profile_json.hpp"
#include "report/detail/settings_json.hpp"
#include "report/document_values.hpp"
#include "report/input_file.hpp"
#include "report/json_document.hpp"

namespace pcieval {
namespace {

using json_document::DocumentReader;
using json_document::Node;

// Every value the model names; a value added there (reason codes are
// append-only) must be added here too, or documents holding it cannot be read.
using document_values::kKinds;
using document_values::kOveralls;
using document_values::kPositions;
using document_values::kStatuses;
constexpr std::array kDirections = {Direction::kHostToDevice, Direction::kDeviceToHost, Direction::kHostToHost,
                                    Direction::kAllReduce, Direction::kDeviceToDevice};
constexpr std::array kMethods = {CopyMethod::kCopyEngine, CopyMethod::kSmKernel, CopyMethod::kCpuThreads,
                                 CopyMethod::kNccl};
constexpr std::array kHostMemories = {HostMemory::kPinned, HostMemory::kPageable};
constexpr std::array kAggregations = {Aggregation::kAlone, Aggregation::kWithReverse, Aggregation::kWithPeers,
                                      Aggregation::kTotalOverWallTime, Aggregation::kBusBandwidth};
constexpr std::array kProbeStatuses = {ProbeStatus::kRan, ProbeStatus::kSkipped, ProbeStatus::kFailed};
constexpr std::array kSampleSources = {SampleSource::kSysfs, SampleSource::kNvml};
constexpr std::array<std::string_view, 2> kProbeModes = {"quick", "full"};

// The minor version that added the measurement engine's evidence: documents
// of 1.0.x lack those fields and read as "no probe ran"; from 1.1 on they are
// required like any other.
constexpr int kMinorWithProbes = 1;
// The minor version that added the thresholds object and NVML name and
// utilisation.
constexpr int kMinorWithThresholds = 2;
// The minor version that added `interrupted` and `soak`.
constexpr int kMinorWithSoak = 3;
// The minor version that added each probe's `gpu_faults` and
// `only_gpu_faults`.
constexpr int kMinorWithGpuFaults = 4;

constexpr std::string_view kNotInDocument = "not in the results document";

// A device's "unknown" entries, as the writer formats them: "<bdf>
// <attribute>: <reason>", or "<bdf> <reason>" when the reason already starts
// with the attribute.
class UnknownEntries {
 public:
  explicit UnknownEntries(std::vector<std::string> entries) : entries_(std::move(entries)) {}

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

// An enum value named by the model's own parser, so the reader accepts
// exactly what the model writes; `values` lists the names in the message.
template <class E, std::size_t N>
E parsed_enum(DocumentReader& in, const Node& node, Result<E> (*parse)(std::string_view),
              const std::array<E, N>& values) {
  const std::string name = in.text(node);
  if (!in.ok()) return values.front();
  const Result<E> parsed = parse(name);
  if (parsed) return parsed.value();
  std::string names;
  for (E value : values) names += (names.empty() ? "" : ", ") + std::string(to_string(value));
  in.fail(node, "unknown value " + json_document::quote(name) + "; expected one of " + names);
  return values.front();
}

double non_negative(DocumentReader& in, const Node& node) {
  const double value = in.number(node);
  if (in.ok() && value < 0) in.fail(node, "expected a number >= 0, got " + node.json->dump());
  return value;
}

std::uint64_t positive_count(DocumentReader& in, const Node& node) {
  const std::uint64_t value = in.count(node);
  if (in.ok() && value == 0) in.fail(node, "expected a count above 0");
  return value;
}

std::string non_empty_text(DocumentReader& in, const Node& node, std::string_view what) {
  std::string value = in.text(node);
  if (in.ok() && value.empty()) in.fail(node, "expected " + std::string(what) + ", got an empty string");
  return value;
}

template <class T>
std::optional<T> narrowed(std::optional<std::int64_t> value) {
  return value ? std::optional<T>(static_cast<T>(*value)) : std::nullopt;
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

  [[nodiscard]] PortLinkReading resolve(const UnknownEntries& unknown) const {
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
Reading<T> sysfs_reading(const std::optional<T>& shown, const UnknownEntries& unknown, const PciAddress& bdf,
                         std::string_view attribute) {
  if (auto reason = unknown.find(bdf, attribute)) return *reason;
  return unknown.reading(shown, bdf, attribute);
}

std::optional<NvmlGpuLink> read_nvml(DocumentReader& in, const Node& node) {
  if (!in.object_or_null(node)) return std::nullopt;
  NvmlGpuLink nvml;
  nvml.current_gen = narrowed<int>(in.integer_or_null(in.member(node, "current_generation"), 1, kMaxPcieGen));
  nvml.max_gen = narrowed<int>(in.integer_or_null(in.member(node, "max_generation"), 1, kMaxPcieGen));
  nvml.gpu_max_gen = narrowed<int>(in.integer_or_null(in.member(node, "gpu_max_generation"), 1, kMaxPcieGen));
  nvml.current_width = narrowed<int>(in.integer_or_null(in.member(node, "current_width"), 0, 32));
  nvml.max_width = narrowed<int>(in.integer_or_null(in.member(node, "max_width"), 0, 32));
  nvml.replay_counter = in.count_or_null(in.member(node, "replay_counter"));
  nvml.tx_kbps = in.count_or_null(in.member(node, "tx_kbps"));
  nvml.rx_kbps = in.count_or_null(in.member(node, "rx_kbps"));
  nvml.pstate = narrowed<int>(in.integer_or_null(in.member(node, "pstate"), 0, 15));
  nvml.under_load = in.boolean(in.member(node, "under_load"));
  // Added in 1.2: absent in older documents.
  if (const auto name = in.member_if_present(node, "name")) nvml.name = in.text_or_null(*name);
  if (const auto busy = in.member_if_present(node, "utilization_gpu_percent")) {
    nvml.utilization_gpu_percent = narrowed<int>(in.integer_or_null(*busy, 0, 100));
  }
  // Added in 1.3; read where present, so 1.3 documents written before it
  // still read.
  if (const auto host_max = in.member_if_present(node, "host_max_generation")) {
    nvml.host_max_gen = narrowed<int>(in.integer_or_null(*host_max, 1, kMaxPcieGen));
  }
  return nvml;
}

// `key` of `object`: required from schema 1.1 on, absent allowed in 1.0.x.
std::optional<Node> field_since_1_1(DocumentReader& in, const Node& object, std::string_view key, int minor) {
  if (minor >= kMinorWithProbes) return in.member(object, key);
  return in.member_if_present(object, key);
}

DeviceRecord read_device(DocumentReader& in, const Node& node, int minor) {
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

  // Readings wait for the unknown list (only nvml follows it), so that
  // problems are still reported in document order.
  std::optional<PortFields> own;
  Reading<PortSettings> own_settings = make_error("not read");
  if (const Node link = in.member(node, "link"); in.object_or_null(link)) {
    own = PortFields{function.bdf, read_state(in, in.member(link, "max")), read_state(in, in.member(link, "current"))};
    own_settings = settings_json::read_settings(in, link, "");
  }
  std::vector<std::pair<PortFields, PortFields>> ends;
  std::vector<std::pair<Reading<PortSettings>, Reading<PortSettings>>> end_settings;
  for (const Node& hop : in.items(in.member(node, "path"))) {
    Link link;
    link.downstream = in.address(in.member(hop, "downstream"));
    link.upstream = in.address(in.member(hop, "upstream"));
    if (const auto id = in.member_if_present(hop, "upstream_id")) {
      if (auto parsed = parse_pci_id(in.text(*id))) {
        link.upstream_id = parsed.value();
      } else if (in.ok()) {
        in.fail(*id, parsed.error().message);
      }
    }
    link.position = in.one_of(in.member(hop, "position"), kPositions);
    PortFields down{link.downstream, read_state(in, in.member(hop, "downstream_max")), {}};
    PortFields up{link.upstream, read_state(in, in.member(hop, "upstream_max")), {}};
    down.current = read_state(in, in.member(hop, "downstream_current"));
    up.current = read_state(in, in.member(hop, "upstream_current"));
    check_derived_state(in, in.member(hop, "negotiated"));
    check_derived_state(in, in.member(hop, "expected"));
    record.path.push_back(std::move(link));
    ends.emplace_back(down, up);
    end_settings.emplace_back(settings_json::read_settings(in, hop, "downstream_"),
                              settings_json::read_settings(in, hop, "upstream_"));
  }
  record.locality = read_locality(in, in.member(node, "locality"));
  const Node aer = in.member(node, "aer");
  function.aer.correctable = read_counters(in, in.member(aer, "correctable"));
  function.aer.fatal = read_counters(in, in.member(aer, "fatal"));
  function.aer.nonfatal = read_counters(in, in.member(aer, "nonfatal"));
  record.notes = in.strings(in.member(node, "notes"));

  const UnknownEntries unknown(in.strings(in.member(node, "unknown")));
  if (const auto nvml = field_since_1_1(in, node, "nvml", minor)) record.nvml = read_nvml(in, *nvml);
  function.numa_node = sysfs_reading(numa_node, unknown, function.bdf, "numa_node");
  function.local_cpulist = sysfs_reading(cpulist, unknown, function.bdf, "local_cpulist");
  if (own) {
    function.link = own->resolve(unknown);
    function.link->settings = std::move(own_settings);
  }
  for (std::size_t i = 0; i < ends.size(); ++i) {
    record.path[i].downstream_end = ends[i].first.resolve(unknown);
    record.path[i].upstream_end = ends[i].second.resolve(unknown);
    record.path[i].downstream_end.settings = std::move(end_settings[i].first);
    record.path[i].upstream_end.settings = std::move(end_settings[i].second);
  }
  if (const auto iommu = in.member_if_present(node, "iommu")) function.iommu = settings_json::read_iommu(in, *iommu);
  return record;
}

std::optional<ProbeSettings> read_probe_settings(DocumentReader& in, const Node& node) {
  if (!in.object_or_null(node)) return std::nullopt;
  ProbeSettings settings;
  const Node mode = in.member(node, "mode");
  settings.mode = in.text(mode);
  if (in.ok() && std::find(kProbeModes.begin(), kProbeModes.end(), settings.mode) == kProbeModes.end()) {
    in.fail(mode, "unknown value " + json_document::quote(settings.mode) + "; expected one of quick, full");
  }
  settings.size_bytes = positive_count(in, in.member(node, "size_bytes"));
  constexpr std::int64_t kMaxTrials = std::numeric_limits<int>::max();
  settings.warmup_trials = static_cast<int>(in.integer(in.member(node, "warmup_trials"), 0, kMaxTrials));
  settings.trials = static_cast<int>(in.integer(in.member(node, "trials"), 1, kMaxTrials));
  return settings;
}

GpuFault read_gpu_fault(DocumentReader& in, const Node& node) {
  GpuFault fault;
  fault.gpu = in.address(in.member(node, "gpu"));
  fault.error = non_empty_text(in, in.member(node, "error"), "the error");
  fault.retired = in.boolean(in.member(node, "retired"));
  return fault;
}

// Documents before 1.4 name no GPU fault: their failed probes are judged as a
// whole, as they were then. From 1.4 on both fields are written; read where
// present, so a document made by other tools without them (bench/perf/fleet_docs.py)
// still reads, as "no GPU fault". Two things no writer of pcieval produces are
// refused, since a verdict would rest on them: a GPU fault of a probe that
// did not fail, and a probe judged by its GPU faults that has none.
ProbeRun read_probe(DocumentReader& in, const Node& node, int minor) {
  ProbeRun run;
  run.key = non_empty_text(in, in.member(node, "key"), "a probe key");
  run.status = parsed_enum(in, in.member(node, "status"), probe_status_from_string, kProbeStatuses);
  run.reason = in.text(in.member(node, "reason"));
  run.warnings = in.strings(in.member(node, "warnings"));
  run.duration_s = non_negative(in, in.member(node, "duration_s"));
  if (minor < kMinorWithGpuFaults) return run;
  if (const auto faults = in.member_if_present(node, "gpu_faults")) {
    for (const Node& fault : in.items(*faults)) run.gpu_faults.push_back(read_gpu_fault(in, fault));
    if (in.ok() && !run.gpu_faults.empty() && run.status != ProbeStatus::kFailed) {
      in.fail(*faults, "GPU faults on a probe whose status is " + std::string(to_string(run.status)) + ", not failed");
    }
  }
  if (const auto only = in.member_if_present(node, "only_gpu_faults")) {
    run.only_gpu_faults = in.boolean(*only);
    if (in.ok() && run.only_gpu_faults && run.gpu_faults.empty()) in.fail(*only, "true, but gpu_faults is empty");
  }
  return run;
}

// The statistics are read as written, never recomputed: a document judged
// again must be judged on the numbers it states. Two things no writer of
// pcieval produces are refused instead, since a verdict would rest on them: a
// measurement without trials, and a median outside [min, max].
Measurement read_measurement(DocumentReader& in, const Node& node) {
  Measurement measurement;
  measurement.probe = non_empty_text(in, in.member(node, "probe"), "a probe key");
  measurement.subject = non_empty_text(in, in.member(node, "subject"), "a subject");
  for (const Node& gpu : in.items(in.member(node, "gpus"))) measurement.gpus.push_back(in.address(gpu));
  measurement.direction = parsed_enum(in, in.member(node, "direction"), direction_from_string, kDirections);
  measurement.method = parsed_enum(in, in.member(node, "method"), copy_method_from_string, kMethods);
  measurement.host_memory = parsed_enum(in, in.member(node, "host_memory"), host_memory_from_string, kHostMemories);
  measurement.aggregation = parsed_enum(in, in.member(node, "aggregation"), aggregation_from_string, kAggregations);
  measurement.size_bytes = positive_count(in, in.member(node, "size_bytes"));
  measurement.bytes_per_trial = positive_count(in, in.member(node, "bytes_per_trial"));
  const Node trials = in.member(node, "trials_gbps");
  for (const Node& trial : in.items(trials)) measurement.trials_gbps.push_back(non_negative(in, trial));
  if (in.ok() && measurement.trials_gbps.empty()) in.fail(trials, "expected at least one trial, got none");
  const Node median = in.member(node, "median_gbps");
  measurement.stats.median_gbps = non_negative(in, median);
  measurement.stats.min_gbps = non_negative(in, in.member(node, "min_gbps"));
  measurement.stats.max_gbps = non_negative(in, in.member(node, "max_gbps"));
  const TrialStats& stats = measurement.stats;
  if (in.ok() && !(stats.min_gbps <= stats.median_gbps && stats.median_gbps <= stats.max_gbps)) {
    in.fail(median, rate_text(stats.median_gbps) + " is outside [min_gbps, max_gbps] = [" + rate_text(stats.min_gbps) +
                        ", " + rate_text(stats.max_gbps) + "]");
  }
  measurement.stats.cv = non_negative(in, in.member(node, "cv"));
  measurement.host_numa_node =
      narrowed<int>(in.integer_or_null(in.member(node, "host_numa_node"), 0, std::numeric_limits<int>::max()));
  measurement.host_numa_local = in.boolean_or_null(in.member(node, "host_numa_local"));
  measurement.verified = in.boolean(in.member(node, "verified"));
  return measurement;
}

LinkSample read_link_sample(DocumentReader& in, const Node& node) {
  LinkSample sample;
  sample.port = in.address(in.member(node, "port"));
  sample.source = parsed_enum(in, in.member(node, "source"), sample_source_from_string, kSampleSources);
  sample.t_s = non_negative(in, in.member(node, "t_s"));
  sample.under_load = in.boolean(in.member(node, "under_load"));
  // generation, speed_gts and width, checked as a link state's are.
  const StateFields state = read_state(in, node);
  sample.speed = state.gen;
  sample.width = state.width;
  return sample;
}

CounterDelta read_counter(DocumentReader& in, const Node& node) {
  CounterDelta counter;
  counter.device = in.address(in.member(node, "device"));
  counter.counter = non_empty_text(in, in.member(node, "counter"), "a counter name");
  counter.before = in.count(in.member(node, "before"));
  counter.after = in.count(in.member(node, "after"));
  return counter;
}

// A code this pcieval knows; a newer document's new code is an error, since
// its verdicts could not be re-judged or compared faithfully.
std::optional<SoakRecord> read_soak(DocumentReader& in, const Node& node) {
  if (!in.object_or_null(node)) return std::nullopt;
  SoakRecord soak;
  soak.requested_rounds = narrowed<int>(in.integer_or_null(in.member(node, "requested_rounds"), 1, 1'000'000'000));
  soak.requested_duration_s = in.number_or_null(in.member(node, "requested_duration_s"));
  soak.finished = in.boolean(in.member(node, "finished"));
  for (const Node& item : in.items(in.member(node, "rounds"))) {
    SoakRound round;
    round.index = static_cast<int>(in.integer(in.member(item, "index"), 1, 1'000'000'000));
    round.start_s = non_negative(in, in.member(item, "start_s"));
    round.end_s = non_negative(in, in.member(item, "end_s"));
    if (in.ok() && round.end_s < round.start_s) in.fail(item, "end_s is before start_s");
    for (const Node& m : in.items(in.member(item, "measurements")))
      round.measurements.push_back(read_measurement(in, m));
    for (const Node& c : in.items(in.member(item, "counters"))) round.counters.push_back(read_counter(in, c));
    soak.rounds.push_back(std::move(round));
  }
  return soak;
}

// Schema 1.3, captured text's evidence. A link state here is whole: both
// halves or null.
std::optional<LinkState> read_whole_state(DocumentReader& in, const Node& node) {
  if (!in.object_or_null(node)) return std::nullopt;
  const StateFields fields = read_state(in, node);
  if (!in.ok()) return std::nullopt;
  if (!fields.gen || !fields.width) {
    in.fail(node, "expected a generation and a width");
    return std::nullopt;
  }
  return LinkState{*fields.gen, *fields.width};
}

constexpr std::array kEventKinds = {CapturedEvent::Kind::kLinkLimited,        CapturedEvent::Kind::kCorrectableError,
                                    CapturedEvent::Kind::kUncorrectableError, CapturedEvent::Kind::kFatalError,
                                    CapturedEvent::Kind::kSurpriseDown,       CapturedEvent::Kind::kFellOffBus};

CapturedEvent read_captured_event(DocumentReader& in, const Node& node) {
  CapturedEvent event;
  event.kind = parsed_enum(in, in.member(node, "kind"), captured_event_kind_from_string, kEventKinds);
  event.device = in.address(in.member(node, "device"));
  if (const Node port = in.member(node, "limiting_port"); !port.json->is_null()) event.limiting_port = in.address(port);
  event.limited_to = read_whole_state(in, in.member(node, "limited_to"));
  event.capable = read_whole_state(in, in.member(node, "capable"));
  event.source = in.text(in.member(node, "source"));
  event.line = static_cast<std::size_t>(in.count(in.member(node, "line")));
  event.text = in.text(in.member(node, "text"));
  if (const auto time = in.member_if_present(node, "time_s")) event.time_s = in.number_or_null(*time);
  return event;
}

std::optional<StatedLink> read_stated_link(DocumentReader& in, const Node& node) {
  if (!in.object_or_null(node)) return std::nullopt;
  const Node link = in.member(node, "link");
  auto state = read_whole_state(in, link);
  if (in.ok() && !state) in.fail(link, "expected a link state");
  std::string source = in.text(in.member(node, "source"));
  if (!state) return std::nullopt;
  return StatedLink{*state, std::move(source)};
}

ReferenceCopy read_reference_copy(DocumentReader& in, const Node& node) {
  ReferenceCopy copy;
  copy.tool = non_empty_text(in, in.member(node, "tool"), "the reference tool's name");
  copy.gpu = in.address(in.member(node, "gpu"));
  copy.direction = parsed_enum(in, in.member(node, "direction"), direction_from_string, kDirections);
  copy.size_bytes = positive_count(in, in.member(node, "size_bytes"));
  copy.reference_median_gbps = non_negative(in, in.member(node, "reference_median_gbps"));
  copy.pcieval_median_gbps = in.number_or_null(in.member(node, "pcieval_median_gbps"));
  const Node ratio = in.member(node, "ratio");
  copy.ratio = in.number_or_null(ratio);
  if (in.ok() && copy.ratio.has_value() != copy.pcieval_median_gbps.has_value()) {
    in.fail(ratio, "expected a ratio exactly when pcieval_median_gbps is given");
  }
  return copy;
}

CaptureLine read_capture_line(DocumentReader& in, const Node& node, std::size_t measurements) {
  CaptureLine line;
  if (const Node device = in.member(node, "device"); !device.json->is_null()) line.device = in.address(device);
  const Node measurement = in.member(node, "measurement");
  if (const auto index = in.count_or_null(measurement)) {
    if (in.ok() && *index >= measurements) {
      in.fail(measurement, "no measurement has index " + std::to_string(*index));
    }
    line.measurement = static_cast<std::size_t>(*index);
  }
  if (in.ok() && line.device.has_value() == line.measurement.has_value()) {
    in.fail(node, "expected either a device or a measurement");
  }
  line.source = in.text(in.member(node, "source"));
  line.line = static_cast<std::size_t>(in.count(in.member(node, "line")));
  return line;
}

ReasonCode read_code(DocumentReader& in, const Node& node) {
  const std::string name = in.text(node);
  if (!in.ok()) return ReasonCode::kLinkStateUnknown;
  for (ReasonCode code : all_reason_codes()) {
    if (to_string(code) == name) return code;
  }
  in.fail(node, "unknown reason code " + json_document::quote(name));
  return ReasonCode::kLinkStateUnknown;
}

Verdict read_verdict(DocumentReader& in, const Node& node) {
  Verdict verdict;
  const Node subject = in.member(node, "subject");
  verdict.subject = in.text(subject);
  if (in.ok() && verdict.subject.empty()) in.fail(subject, "expected a bdf or \"node\", got an empty string");
  verdict.status = in.one_of(in.member(node, "status"), kStatuses);
  verdict.code = read_code(in, in.member(node, "code"));
  if (const Node link = in.member(node, "link"); in.object_or_null(link)) {
    verdict.link = LinkRef{in.address(in.member(link, "downstream")), in.address(in.member(link, "upstream"))};
  }
  verdict.reason = in.text(in.member(node, "reason"));
  verdict.remediation = in.text(in.member(node, "remediation"));
  return verdict;
}

// "MAJOR.MINOR.PATCH"; a reader of major 1 reads every 1.x (fields added in a
// later minor are ignored) and refuses any other major. Returns the minor
// version (0 after a problem).
int check_schema_version(DocumentReader& in, const Node& node) {
  const std::string version = in.text(node);
  if (!in.ok()) return 0;
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
  return in.ok() ? parts[1] : 0;
}

Results read_document(DocumentReader& in, const Node& root) {
  Results results;
  if (!root.json->is_object()) {
    in.fail(root, "expected a JSON object (a pcieval results document)");
    return results;
  }
  // The version decides how the rest reads, so it is checked first.
  const int minor = check_schema_version(in, in.member(root, "schema_version"));

  const Node tool = in.member(root, "tool");
  results.tool.name = in.text(in.member(tool, "name"));
  results.tool.version = in.text(in.member(tool, "version"));

  Evidence& evidence = results.evidence;
  const Node host = in.member(root, "host");
  evidence.host.hostname = in.text(in.member(host, "hostname"));
  evidence.host.kernel = in.text(in.member(host, "kernel"));
  if (const auto simulated = in.member_if_present(host, "simulated")) {
    evidence.host.simulated = in.boolean_or_null(*simulated).value_or(false);
  }
  if (const auto command_line = in.member_if_present(host, "kernel_command_line")) {
    evidence.host.kernel_command_line = in.text(*command_line);
  }
  if (const auto hypervisor = in.member_if_present(host, "hypervisor")) {
    evidence.host.hypervisor = in.boolean_or_null(*hypervisor);
  }
  const Node sources = in.member(root, "sources");
  evidence.sysfs_root = in.text(in.member(sources, "sysfs_root"));
  evidence.topology = in.text_or_null(in.member(sources, "topology"));
  evidence.gpus_under_load = in.boolean(in.member(sources, "gpus_under_load"));
  if (const auto per_gpu = in.member_if_present(sources, "load_per_gpu")) {
    evidence.load_per_gpu = in.boolean_or_null(*per_gpu).value_or(false);
  }

  for (const Node& device : in.items(in.member(root, "devices"))) {
    evidence.devices.push_back(read_device(in, device, minor));
  }
  if (const auto settings = field_since_1_1(in, root, "probe_settings", minor)) {
    evidence.probe_settings = read_probe_settings(in, *settings);
  }
  if (const auto probes = field_since_1_1(in, root, "probes", minor)) {
    for (const Node& probe : in.items(*probes)) evidence.probes.push_back(read_probe(in, probe, minor));
  }
  if (const auto measurements = field_since_1_1(in, root, "measurements", minor)) {
    for (const Node& item : in.items(*measurements)) evidence.measurements.push_back(read_measurement(in, item));
  }
  if (const auto samples = field_since_1_1(in, root, "link_samples", minor)) {
    for (const Node& item : in.items(*samples)) evidence.link_samples.push_back(read_link_sample(in, item));
  }
  if (const auto counters = field_since_1_1(in, root, "counters", minor)) {
    for (const Node& item : in.items(*counters)) evidence.counters.push_back(read_counter(in, item));
  }
  // 1.2 added the thresholds; an older document was judged with the
  // defaults of its day, which the built-in profile stands in for.
  if (minor >= kMinorWithThresholds) {
    results.thresholds = profile_json::read(in, in.member(root, "thresholds"), true);
  }
  if (minor >= kMinorWithSoak) {
    evidence.interrupted = in.text_or_null(in.member(root, "interrupted"));
    evidence.soak = read_soak(in, in.member(root, "soak"));
    // Captured text's evidence, added within 1.3: read where present, so
    // 1.3 documents written before it still read.
    if (const auto events = in.member_if_present(root, "captured_events")) {
      for (const Node& item : in.items(*events)) evidence.captured_events.push_back(read_captured_event(in, item));
    }
    if (const auto stated = in.member_if_present(root, "stated_link")) {
      evidence.stated_link = read_stated_link(in, *stated);
    }
    if (const auto lines = in.member_if_present(root, "capture_lines")) {
      for (const Node& item : in.items(*lines)) {
        evidence.capture_lines.push_back(read_capture_line(in, item, evidence.measurements.size()));
      }
    }
  }
  // Optional (written within 1.4 only when check --reference was given).
  if (const auto copies = in.member_if_present(root, "reference_copies")) {
    for (const Node& item : in.items(*copies)) evidence.reference_copies.push_back(read_reference_copy(in, item));
  }
  // Optional (written within 1.7 only when peer access was read).
  if (const auto peers = in.member_if_present(root, "peer_status")) {
    for (const Node& item : in.items(*peers)) evidence.peer_status.push_back(settings_json::read_peer_status(in, item));
  }
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
