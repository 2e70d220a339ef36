#include "report/results_writer.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "report/detail/profile_json.hpp"
#include "report/detail/settings_json.hpp"

namespace pcieval {
namespace {

// Insertion order, so the document reads in the order the schema lists its
// fields rather than alphabetically.
using Json = nlohmann::ordered_json;

// Lowercase, zero-padded, as lspci -n and sysfs print ids.
std::string hex(std::uint32_t value, int digits) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%0*x", digits, value);
  return buffer;
}

template <class T>
Json value_or_null(const Reading<T>& reading) {
  return reading ? Json(reading.value()) : Json(nullptr);
}

template <class T>
Json value_or_null(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

// A link state whose halves are read separately: each half is null on its own
// when its reading failed, so a known width survives an unknown speed.
Json link_state_json(const Reading<PcieGen>& speed, const Reading<int>& width) {
  Json state = Json::object();
  state["generation"] = speed ? Json(generation_number(speed.value())) : Json(nullptr);
  state["speed_gts"] = speed ? Json(transfer_rate_gts(speed.value())) : Json(nullptr);
  state["width"] = value_or_null(width);
  return state;
}

Json link_state_json(const Reading<LinkState>& state) {
  if (!state) return nullptr;
  return link_state_json(state->gen, state->width);
}

Json link_json(const Link& link) {
  Json out = Json::object();
  out["downstream"] = to_string(link.downstream);
  out["upstream"] = to_string(link.upstream);
  if (link.upstream_id) out["upstream_id"] = to_string(*link.upstream_id);
  out["position"] = std::string(to_string(link.position));
  out["downstream_max"] = link_state_json(link.downstream_end.max_speed, link.downstream_end.max_width);
  out["upstream_max"] = link_state_json(link.upstream_end.max_speed, link.upstream_end.max_width);
  out["downstream_current"] = link_state_json(link.downstream_end.current_speed, link.downstream_end.current_width);
  out["upstream_current"] = link_state_json(link.upstream_end.current_speed, link.upstream_end.current_width);
  out["negotiated"] = link_state_json(link.negotiated());
  out["expected"] = link_state_json(link.expected());
  settings_json::add_settings(out, "downstream_", link.downstream_end.settings);  // 1.7
  settings_json::add_settings(out, "upstream_", link.upstream_end.settings);
  return out;
}

Json aer_counters_json(const std::optional<AerCounters>& counters) {
  if (!counters) return nullptr;
  Json counts = Json::object();
  for (const auto& [name, count] : counters->counts) counts[name] = count;
  Json out = Json::object();
  out["counts"] = std::move(counts);
  out["total"] = value_or_null(counters->total);
  return out;
}

Json aer_json(const AerReadings& aer) {
  Json out = Json::object();
  out["correctable"] = aer_counters_json(aer.correctable);
  out["fatal"] = aer_counters_json(aer.fatal);
  out["nonfatal"] = aer_counters_json(aer.nonfatal);
  return out;
}

Json locality_json(const std::optional<Locality>& locality) {
  if (!locality) return nullptr;
  Json bridges = Json::array();
  for (const auto& bridge : locality->ancestor_bridges) bridges.push_back(to_string(bridge));
  Json out = Json::object();
  out["numa_node"] = value_or_null(locality->numa_node);
  out["cpulist"] = value_or_null(locality->cpulist);
  out["ancestor_bridges"] = std::move(bridges);
  return out;
}

// Every null written for a failed reading has its reason here. Each entry
// names the port and the sysfs attribute, so that one reason shared by several
// readings ("not read") still says which values it explains; a port read once
// but seen twice (a device's own link is also the downstream end of path[0])
// is listed once.
class UnknownReasons {
 public:
  template <class T>
  void add(const PciAddress& bdf, std::string_view attribute, const Reading<T>& reading) {
    if (reading) return;
    // Readers usually name the attribute already ("numa_node: no NUMA affinity").
    const std::string& message = reading.error().message;
    std::string entry =
        to_string(bdf) + " " + (message.starts_with(attribute) ? message : std::string(attribute) + ": " + message);
    if (seen_.insert(entry).second) reasons_.push_back(std::move(entry));
  }

  void add_port(const PciAddress& bdf, const PortLinkReading& port) {
    add(bdf, "max_link_speed", port.max_speed);
    add(bdf, "max_link_width", port.max_width);
    add(bdf, "current_link_speed", port.current_speed);
    add(bdf, "current_link_width", port.current_width);
  }

  [[nodiscard]] Json to_json() const { return Json(reasons_); }

 private:
  std::vector<std::string> reasons_;
  std::set<std::string> seen_;
};

// What NVML said about a GPU's link; every value null on its own when NVML
// could not give it.
Json nvml_json(const std::optional<NvmlGpuLink>& nvml) {
  if (!nvml) return nullptr;
  Json out = Json::object();
  out["current_generation"] = value_or_null(nvml->current_gen);
  out["max_generation"] = value_or_null(nvml->max_gen);
  out["gpu_max_generation"] = value_or_null(nvml->gpu_max_gen);
  out["current_width"] = value_or_null(nvml->current_width);
  out["max_width"] = value_or_null(nvml->max_width);
  out["replay_counter"] = value_or_null(nvml->replay_counter);
  out["tx_kbps"] = value_or_null(nvml->tx_kbps);
  out["rx_kbps"] = value_or_null(nvml->rx_kbps);
  out["pstate"] = value_or_null(nvml->pstate);
  out["under_load"] = nvml->under_load;
  out["name"] = value_or_null(nvml->name);
  out["utilization_gpu_percent"] = value_or_null(nvml->utilization_gpu_percent);
  out["host_max_generation"] = value_or_null(nvml->host_max_gen);  // 1.3
  return out;
}

Json device_json(const DeviceRecord& record) {
  const PciFunction& function = record.function;
  const std::optional<Locality>& locality = record.locality;

  // sysfs is the kernel's own answer; hwloc's is the fallback for kernels or
  // platforms that leave numa_node at -1.
  Json numa_node = value_or_null(function.numa_node);
  if (numa_node.is_null() && locality) numa_node = value_or_null(locality->numa_node);
  Json cpulist = value_or_null(function.local_cpulist);
  if (cpulist.is_null() && locality) cpulist = value_or_null(locality->cpulist);

  UnknownReasons unknown;
  unknown.add(function.bdf, "numa_node", function.numa_node);
  unknown.add(function.bdf, "local_cpulist", function.local_cpulist);

  Json own_link = nullptr;
  if (function.link) {
    own_link = Json::object();
    own_link["max"] = link_state_json(function.link->max_speed, function.link->max_width);
    own_link["current"] = link_state_json(function.link->current_speed, function.link->current_width);
    settings_json::add_settings(own_link, "", function.link->settings);  // 1.7
    unknown.add_port(function.bdf, *function.link);
  }

  Json path = Json::array();
  for (const Link& link : record.path) {
    path.push_back(link_json(link));
    unknown.add_port(link.downstream, link.downstream_end);
    unknown.add_port(link.upstream, link.upstream_end);
  }

  Json out = Json::object();
  out["bdf"] = to_string(function.bdf);
  out["kind"] = std::string(to_string(function.kind));
  out["vendor_id"] = hex(function.vendor_id, 4);
  out["device_id"] = hex(function.device_id, 4);
  out["class_code"] = hex(function.class_code & 0xffffffU, 6);
  out["virtual_function"] = function.is_virtual_function;
  out["numa_node"] = std::move(numa_node);
  out["cpulist"] = std::move(cpulist);
  out["link"] = std::move(own_link);
  out["path"] = std::move(path);
  out["locality"] = locality_json(locality);
  out["aer"] = aer_json(function.aer);
  out["notes"] = Json(record.notes);
  out["unknown"] = unknown.to_json();
  out["nvml"] = nvml_json(record.nvml);
  if (function.iommu) out["iommu"] = settings_json::iommu_json(*function.iommu);  // 1.7, where read
  return out;
}

Json devices_json(const Evidence& evidence) {
  Json devices = Json::array();
  for (const DeviceRecord& record : evidence.devices) devices.push_back(device_json(record));
  return devices;
}

Json probe_settings_json(const std::optional<ProbeSettings>& settings) {
  if (!settings) return nullptr;
  Json out = Json::object();
  out["mode"] = settings->mode;
  out["size_bytes"] = settings->size_bytes;
  out["warmup_trials"] = settings->warmup_trials;
  out["trials"] = settings->trials;
  return out;
}

Json probe_json(const ProbeRun& run) {
  Json out = Json::object();
  out["key"] = run.key;
  out["status"] = std::string(to_string(run.status));
  out["reason"] = run.reason;
  out["warnings"] = Json(run.warnings);
  out["duration_s"] = run.duration_s;
  Json faults = Json::array();
  for (const GpuFault& fault : run.gpu_faults) {
    Json item = Json::object();
    item["gpu"] = to_string(fault.gpu);
    item["error"] = fault.error;
    item["retired"] = fault.retired;
    faults.push_back(std::move(item));
  }
  out["gpu_faults"] = std::move(faults);
  out["only_gpu_faults"] = run.only_gpu_faults;
  return out;
}

// Every trial is written with the statistics beside it, so a reader can check
// the statistics against the trials or recompute them another way.
Json measurement_json(const Measurement& measurement) {
  Json gpus = Json::array();
  for (const PciAddress& gpu : measurement.gpus) gpus.push_back(to_string(gpu));
  Json out = Json::object();
  out["probe"] = measurement.probe;
  out["subject"] = measurement.subject;
  out["gpus"] = std::move(gpus);
  out["direction"] = std::string(to_string(measurement.direction));
  out["method"] = std::string(to_string(measurement.method));
  out["host_memory"] = std::string(to_string(measurement.host_memory));
  out["aggregation"] = std::string(to_string(measurement.aggregation));
  out["size_bytes"] = measurement.size_bytes;
  out["bytes_per_trial"] = measurement.bytes_per_trial;
  out["trials_gbps"] = Json(measurement.trials_gbps);
  out["median_gbps"] = measurement.stats.median_gbps;
  out["min_gbps"] = measurement.stats.min_gbps;
  out["max_gbps"] = measurement.stats.max_gbps;
  out["cv"] = measurement.stats.cv;
  out["host_numa_node"] = value_or_null(measurement.host_numa_node);
  out["host_numa_local"] = value_or_null(measurement.host_numa_local);
  out["verified"] = measurement.verified;
  return out;
}

Json link_sample_json(const LinkSample& sample) {
  Json out = Json::object();
  out["port"] = to_string(sample.port);
  out["source"] = std::string(to_string(sample.source));
  out["t_s"] = sample.t_s;
  out["under_load"] = sample.under_load;
  out["generation"] = sample.speed ? Json(generation_number(*sample.speed)) : Json(nullptr);
  out["speed_gts"] = sample.speed ? Json(transfer_rate_gts(*sample.speed)) : Json(nullptr);
  out["width"] = value_or_null(sample.width);
  return out;
}

// Schema 1.3: what diagnose read from captured text (model/captured_event.hpp).
Json whole_state_json(const std::optional<LinkState>& state) {
  if (!state) return nullptr;
  return link_state_json(Reading<PcieGen>(state->gen), Reading<int>(state->width));
}

Json captured_event_json(const CapturedEvent& event) {
  Json out = Json::object();
  out.get_ref<Json::object_t&>().reserve(9);  // a diagnose writes thousands: see results_to_json
  out["kind"] = std::string(to_string(event.kind));
  out["device"] = to_string(event.device);
  out["limiting_port"] = event.limiting_port ? Json(to_string(*event.limiting_port)) : Json(nullptr);
  out["limited_to"] = whole_state_json(event.limited_to);
  out["capable"] = whole_state_json(event.capable);
  out["source"] = event.source;
  out["line"] = event.line;
  out["text"] = event.text;
  // Optional (schema 1.x): written only when the line had a time stamp.
  if (event.time_s) out["time_s"] = *event.time_s;
  return out;
}

Json stated_link_json(const std::optional<StatedLink>& stated) {
  if (!stated) return nullptr;
  Json out = Json::object();
  out["link"] = whole_state_json(stated->link);
  out["source"] = stated->source;
  return out;
}

Json reference_copy_json(const ReferenceCopy& copy) {
  Json out = Json::object();
  out["tool"] = copy.tool;
  out["gpu"] = to_string(copy.gpu);
  out["direction"] = std::string(to_string(copy.direction));
  out["size_bytes"] = copy.size_bytes;
  out["reference_median_gbps"] = copy.reference_median_gbps;
  out["pcieval_median_gbps"] = value_or_null(copy.pcieval_median_gbps);
  out["ratio"] = value_or_null(copy.ratio);
  return out;
}

Json capture_line_json(const CaptureLine& line) {
  Json out = Json::object();
  out["device"] = line.device ? Json(to_string(*line.device)) : Json(nullptr);
  out["measurement"] = value_or_null(line.measurement);
  out["source"] = line.source;
  out["line"] = line.line;
  return out;
}

Json counter_json(const CounterDelta& counter) {
  Json out = Json::object();
  out["device"] = to_string(counter.device);
  out["counter"] = counter.counter;
  out["before"] = counter.before;
  out["after"] = counter.after;
  return out;
}

template <class T, class ToJson>
Json array_of(const std::vector<T>& items, ToJson to_json) {
  Json out = Json::array();
  out.get_ref<Json::array_t&>().reserve(items.size());
  for (const T& item : items) out.push_back(to_json(item));
  return out;
}

Json soak_round_json(const SoakRound& round) {
  Json out = Json::object();
  out["index"] = round.index;
  out["start_s"] = round.start_s;
  out["end_s"] = round.end_s;
  out["measurements"] = array_of(round.measurements, measurement_json);
  out["counters"] = array_of(round.counters, counter_json);
  return out;
}

Json soak_json(const std::optional<SoakRecord>& soak) {
  if (!soak) return nullptr;
  Json out = Json::object();
  out["requested_rounds"] = value_or_null(soak->requested_rounds);
  out["requested_duration_s"] = value_or_null(soak->requested_duration_s);
  out["finished"] = soak->finished;
  out["rounds"] = array_of(soak->rounds, soak_round_json);
  return out;
}

Json host_json(const HostInfo& host) {
  Json out = Json::object();
  out["hostname"] = host.hostname;
  out["kernel"] = host.kernel;
  if (host.hypervisor) out["hypervisor"] = *host.hypervisor;
  // Written only when true: every real node's document stays as it was.
  if (host.simulated) out["simulated"] = true;
  if (host.kernel_command_line) out["kernel_command_line"] = *host.kernel_command_line;  // 1.7
  return out;
}

Json verdict_json(const Verdict& verdict) {
  Json link = nullptr;
  if (verdict.link) {
    link = Json::object();
    link["downstream"] = to_string(verdict.link->downstream);
    link["upstream"] = to_string(verdict.link->upstream);
  }
  Json out = Json::object();
  out["subject"] = verdict.subject;
  out["status"] = std::string(to_string(verdict.status));
  out["code"] = std::string(to_string(verdict.code));
  out["link"] = std::move(link);
  out["reason"] = verdict.reason;
  out["remediation"] = verdict.remediation;
  return out;
}

// Invalid UTF-8 (a hostname or a sysfs string with stray bytes) is replaced
// rather than thrown on: losing one character beats losing the document.
std::string serialize(const Json& document) {
  return document.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace

std::string results_to_json(const Results& results) {
  const Evidence& evidence = results.evidence;

  Json tool = Json::object();
  tool["name"] = results.tool.name;
  tool["version"] = results.tool.version;

  Json sources = Json::object();
  sources["sysfs_root"] = evidence.sysfs_root;
  sources["topology"] = value_or_null(evidence.topology);
  sources["gpus_under_load"] = evidence.gpus_under_load;
  if (evidence.load_per_gpu) sources["load_per_gpu"] = true;

  Json verdicts = Json::array();
  for (const Verdict& verdict : results.verdicts) verdicts.push_back(verdict_json(verdict));

  Json document = Json::object();
  // Room for every key up front. An ordered_json object is a vector of
  // pair<const string, json>, whose move is not noexcept (the const key is
  // copied), so each time it grows it deep-copies every value it holds:
  // growing past 16 keys, after captured_events, copied a diagnose of a
  // 100 MB log's thousands of events, a tenth of diagnose's time.
  document.get_ref<Json::object_t&>().reserve(32);
  document["schema_version"] = kResultsSchemaVersion;
  document["tool"] = std::move(tool);
  document["host"] = host_json(evidence.host);
  document["sources"] = std::move(sources);
  document["devices"] = devices_json(evidence);
  // The measurement engine's evidence (schema 1.1): always written, null and
  // empty when no probe ran, so a reader never has to guess what is absent.
  document["probe_settings"] = probe_settings_json(evidence.probe_settings);
  document["probes"] = array_of(evidence.probes, probe_json);
  document["measurements"] = array_of(evidence.measurements, measurement_json);
  document["link_samples"] = array_of(evidence.link_samples, link_sample_json);
  document["counters"] = array_of(evidence.counters, counter_json);
  // Schema 1.2: the thresholds the verdicts below were drawn with.
  document["thresholds"] = profile_json::to_json(results.thresholds);
  // Schema 1.3: whether a signal cut the run short, and the soak's rounds.
  document["interrupted"] = value_or_null(evidence.interrupted);
  document["soak"] = soak_json(evidence.soak);
  // Schema 1.3: captured text's evidence (diagnose); empty and null otherwise.
  document["captured_events"] = array_of(evidence.captured_events, captured_event_json);
  document["stated_link"] = stated_link_json(evidence.stated_link);
  document["capture_lines"] = array_of(evidence.capture_lines, capture_line_json);
  // Optional within 1.4: written only when a reference was given
  // (check --reference), so documents without one are unchanged.
  if (!evidence.reference_copies.empty()) {
    document["reference_copies"] = array_of(evidence.reference_copies, reference_copy_json);
  }
  // Optional within 1.7: written only when peer access was read.
  if (!evidence.peer_status.empty()) {
    document["peer_status"] = array_of(evidence.peer_status, settings_json::peer_status_json);
  }
  document["verdicts"] = std::move(verdicts);
  document["overall"] = std::string(to_string(results.overall));
  document["summary"] = results.summary;
  document["notes"] = Json(evidence.notes);
  return serialize(document);
}

std::string devices_to_json(const Evidence& evidence) {
  Json document = Json::object();
  document["schema_version"] = kResultsSchemaVersion;
  document["host"] = host_json(evidence.host);
  document["devices"] = devices_json(evidence);
  return serialize(document);
}

}  // namespace pcieval
