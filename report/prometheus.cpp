#include "report/prometheus.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "model/measurement.hpp"
#include "report/detail/utf8.hpp"

namespace pcieval {
namespace {

struct Label {
  std::string_view name;
  std::string value;
};

// Callers list labels in name order: Prometheus shows them sorted, so the
// file reads the same as a scrape of it.
using Labels = std::vector<Label>;

std::string escaped_label_value(std::string_view raw) {
  const std::string text = utf8::sanitized(raw);
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// The shortest text that reads back as the same double, without an exponent
// ("16", "2.5", "1718000000.25"), which Prometheus' parser accepts as is.
std::string number_text(double value) {
  std::array<char, 400> buffer{};  // fixed notation of the largest double fits
  const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::fixed);
  if (ec != std::errc{}) return "0";  // unreachable for finite values: the buffer is large enough
  return std::string(buffer.data(), end);
}

// Builds the exposition family by family. A family's HELP and TYPE lines are
// written with its first series, so a family without series leaves no trace;
// a series already written is dropped, so the text never holds a duplicate
// even when the results document repeats itself.
class Exposition {
 public:
  void begin_family(std::string_view name, std::string_view help) {
    family_ = name;
    help_ = help;
    header_written_ = false;
  }

  // REQUIRES: std::isfinite(value).
  void sample(const Labels& labels, double value) {
    std::string series(family_);
    if (!labels.empty()) {
      series += '{';
      for (std::size_t i = 0; i < labels.size(); ++i) {
        if (i > 0) series += ',';
        series += labels[i].name;
        series += "=\"";
        series += escaped_label_value(labels[i].value);
        series += '"';
      }
      series += '}';
    }
    if (!written_.insert(series).second) return;
    if (!header_written_) {
      text_ += "# HELP " + family_ + " " + help_ + "\n";
      text_ += "# TYPE " + family_ + " gauge\n";
      header_written_ = true;
    }
    text_ += series + " " + number_text(value) + "\n";
  }

  [[nodiscard]] std::string take() && { return std::move(text_); }

 private:
  std::string family_;
  std::string help_;
  bool header_written_ = false;
  std::set<std::string> written_;
  std::string text_;
};

// The kind label of a verdict's subject.
std::string kind_of_subject(const Results& results, const std::string& subject) {
  if (subject == "node") return "node";
  for (const DeviceRecord& device : results.evidence.devices) {
    if (to_string(device.function.bdf) == subject) return std::string(to_string(device.function.kind));
  }
  return "unknown";
}

// A link to write, and the device whose own link it is (nullptr for uplinks).
struct LinkToWrite {
  const Link* link = nullptr;
  const DeviceRecord* device = nullptr;
};

// The links of every device that has a verdict, each physical link once
// (first met wins), in evidence order from each device upward.
std::vector<LinkToWrite> judged_links(const Results& results) {
  std::set<std::string> subjects;
  for (const Verdict& verdict : results.verdicts) subjects.insert(verdict.subject);
  std::set<std::pair<PciAddress, PciAddress>> seen;
  std::vector<LinkToWrite> links;
  for (const DeviceRecord& device : results.evidence.devices) {
    if (subjects.count(to_string(device.function.bdf)) == 0) continue;
    for (const Link& link : device.path) {
      if (!seen.emplace(link.downstream, link.upstream).second) continue;
      links.push_back({&link, link.position == LinkPosition::kDeviceLink ? &device : nullptr});
    }
  }
  return links;
}

template <class T>
std::optional<T> known(const Reading<T>& reading) {
  return reading ? std::optional<T>(reading.value()) : std::nullopt;
}

template <class T>
std::optional<T> lower(const Reading<T>& a, const Reading<T>& b) {
  if (!a || !b) return std::nullopt;
  return std::min(a.value(), b.value());
}

template <class T>
std::optional<T> first_known(const Reading<T>& a, const Reading<T>& b) {
  if (a) return a.value();
  return known(b);
}

// One state of a link, speed and width each present only when known.
struct StateValues {
  std::string_view state;
  std::optional<PcieGen> speed;
  std::optional<int> width;
};

std::array<StateValues, 4> states_of(const Link& link) {
  const PortLinkReading& down = link.downstream_end;
  const PortLinkReading& up = link.upstream_end;
  return {{
      {"expected", lower(down.max_speed, up.max_speed), lower(down.max_width, up.max_width)},
      {"negotiated", first_known(down.current_speed, up.current_speed),
       first_known(down.current_width, up.current_width)},
      {"downstream_max", known(down.max_speed), known(down.max_width)},
      {"upstream_max", known(up.max_speed), known(up.max_width)},
  }};
}

Labels link_labels(const LinkToWrite& entry, std::string_view state) {
  Labels labels;
  if (entry.device != nullptr) {
    labels.push_back({"bdf", to_string(entry.device->function.bdf)});
    labels.push_back({"kind", std::string(to_string(entry.device->function.kind))});
  }
  labels.push_back({"link_downstream", to_string(entry.link->downstream)});
  labels.push_back({"link_upstream", to_string(entry.link->upstream)});
  labels.push_back({"position", std::string(to_string(entry.link->position))});
  labels.push_back({"state", std::string(state)});
  return labels;
}

void write_overall(Exposition& out, Overall overall) {
  out.begin_family("pcieval_overall",
                   "Overall result of the last pcieval run: 1 for the result it had, 0 for the other two.");
  for (const Overall result : {Overall::kPass, Overall::kFail, Overall::kInconclusive}) {
    out.sample({{"result", std::string(to_string(result))}}, result == overall ? 1 : 0);
  }
}

void write_devices(Exposition& out, const Results& results) {
  // Subjects in the order of their first verdict, each with whether all of
  // its verdicts passed.
  std::vector<std::string> subjects;
  std::map<std::string, bool> all_pass;
  for (const Verdict& verdict : results.verdicts) {
    const auto [it, inserted] = all_pass.emplace(verdict.subject, true);
    if (inserted) subjects.push_back(verdict.subject);
    if (verdict.status != VerdictStatus::kPass) it->second = false;
  }
  out.begin_family("pcieval_device_ok",
                   "1 when every verdict on the device (bdf \"node\": the node as a whole) is pass, 0 otherwise.");
  for (const std::string& subject : subjects) {
    out.sample({{"bdf", subject}, {"kind", kind_of_subject(results, subject)}}, all_pass[subject] ? 1 : 0);
  }
  out.begin_family("pcieval_device_verdict",
                   "Verdict of the last run on a device: always 1, the verdict is in the status and code labels.");
  for (const Verdict& verdict : results.verdicts) {
    out.sample({{"bdf", verdict.subject},
                {"code", std::string(to_string(verdict.code))},
                {"kind", kind_of_subject(results, verdict.subject)},
                {"status", std::string(to_string(verdict.status))}},
               1);
  }
}

void write_links(Exposition& out, const Results& results) {
  const std::vector<LinkToWrite> links = judged_links(results);
  out.begin_family("pcieval_link_speed_gigatransfers_per_second",
                   "PCIe link speed per lane in GT/s of every link on a judged device's path, by state.");
  for (const LinkToWrite& entry : links) {
    for (const StateValues& values : states_of(*entry.link)) {
      if (values.speed) out.sample(link_labels(entry, values.state), transfer_rate_gts(*values.speed));
    }
  }
  out.begin_family("pcieval_link_width_lanes",
                   "PCIe link width in lanes of every link on a judged device's path, by state.");
  for (const LinkToWrite& entry : links) {
    for (const StateValues& values : states_of(*entry.link)) {
      if (values.width) out.sample(link_labels(entry, values.state), *values.width);
    }
  }
}

void write_counts(Exposition& out, const Results& results) {
  int gpus = 0;
  for (const DeviceRecord& device : results.evidence.devices) {
    if (device.function.kind == DeviceKind::kGpu && !device.function.is_virtual_function) ++gpus;
  }
  std::set<std::string> judged;
  for (const Verdict& verdict : results.verdicts) {
    if (verdict.subject != "node") judged.insert(verdict.subject);
  }
  out.begin_family("pcieval_gpus_found", "NVIDIA GPUs found on the node (SR-IOV virtual functions not counted).");
  out.sample({}, gpus);
  out.begin_family("pcieval_devices_judged", "PCIe devices that received a verdict in the last run.");
  out.sample({}, static_cast<double>(judged.size()));
}

// The size sweep's points describe a curve, not the node: they would add a
// series per copy size and none of them is what a verdict rests on.

// bdf names the GPU of a one-GPU measurement, so bandwidth series join to
// pcieval_device_ok and the link series on it; group and host measurements
// have none (node_exporter serves them with bdf="").
Labels measurement_labels(const Measurement& measurement) {
  Labels labels{{"aggregation", std::string(to_string(measurement.aggregation))}};
  if (measurement.gpus.size() == 1) labels.push_back({"bdf", to_string(measurement.gpus.front())});
  labels.push_back({"direction", std::string(to_string(measurement.direction))});
  labels.push_back({"host_memory", std::string(to_string(measurement.host_memory))});
  labels.push_back({"probe", measurement.probe});
  labels.push_back({"subject", measurement.subject});
  return labels;
}

void write_measurements(Exposition& out, const Results& results) {
  const std::vector<Measurement>& measurements = results.evidence.measurements;
  out.begin_family("pcieval_bandwidth_gigabytes_per_second",
                   "Median bandwidth of a measurement of the last run in GB/s (1e9 bytes/s); size sweep left out.");
  for (const Measurement& measurement : measurements) {
    if (measurement.probe == kSweepProbeKey || !std::isfinite(measurement.stats.median_gbps)) continue;
    out.sample(measurement_labels(measurement), measurement.stats.median_gbps);
  }
  out.begin_family("pcieval_bandwidth_cv_ratio",
                   "Coefficient of variation of a measurement's trials (standard deviation over mean, a fraction).");
  for (const Measurement& measurement : measurements) {
    if (measurement.probe == kSweepProbeKey || !std::isfinite(measurement.stats.cv)) continue;
    out.sample(measurement_labels(measurement), measurement.stats.cv);
  }
}

void write_budgets(Exposition& out, std::span<const BandwidthBudget> budgets) {
  out.begin_family("pcieval_bandwidth_budget_gigabytes_per_second",
                   "Link budget in GB/s (1e9 bytes/s) a GPU's copy bandwidth is held against, per direction, for the "
                   "link state its path should train to.");
  for (const BandwidthBudget& budget : budgets) {
    if (!std::isfinite(budget.budget_gbps) || budget.budget_gbps <= 0) continue;
    out.sample({{"bdf", budget.subject},
                {"direction", std::string(to_string(budget.direction))},
                {"expected_link", budget.link}},
               budget.budget_gbps);
  }
}

void write_probes(Exposition& out, const Results& results) {
  out.begin_family("pcieval_probe_status",
                   "Outcome of each probe in the last run: 1 for the status it had, 0 for the other two.");
  for (const ProbeRun& probe : results.evidence.probes) {
    for (const ProbeStatus status : {ProbeStatus::kRan, ProbeStatus::kSkipped, ProbeStatus::kFailed}) {
      out.sample({{"probe", probe.key}, {"status", std::string(to_string(status))}}, status == probe.status ? 1 : 0);
    }
  }
}

void write_run(Exposition& out, std::optional<double> timestamp_seconds, std::optional<double> duration_seconds) {
  if (timestamp_seconds && std::isfinite(*timestamp_seconds)) {
    out.begin_family("pcieval_last_run_timestamp_seconds", "Unix time at which the last pcieval run started.");
    out.sample({}, *timestamp_seconds);
  }
  if (duration_seconds && std::isfinite(*duration_seconds) && *duration_seconds >= 0) {
    out.begin_family("pcieval_last_run_duration_seconds", "Wall time the last pcieval run took, in seconds.");
    out.sample({}, *duration_seconds);
  }
}

}  // namespace

std::string render_prometheus(const Results& results, std::optional<double> run_timestamp_seconds,
                              std::optional<double> run_duration_seconds, std::span<const BandwidthBudget> budgets) {
  Exposition out;
  write_overall(out, results.overall);
  write_devices(out, results);
  write_links(out, results);
  write_counts(out, results);
  write_measurements(out, results);
  write_budgets(out, budgets);
  write_probes(out, results);
  write_run(out, run_timestamp_seconds, run_duration_seconds);
  return std::move(out).take();
}

}  // namespace pcieval
