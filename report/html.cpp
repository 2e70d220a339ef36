#include "report/html.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "model/measurement.hpp"
#include "model/text.hpp"
#include "report/address_tree.hpp"
#include "report/html_page.hpp"
#include "report/svg.hpp"

namespace pcieval {
namespace {

// The page helpers (escape, sections, number text) the fleet page shares.
using html::escape;
using html::none;
using html::number_text;
using html::overall_class;
using html::section_open;

// The node page's own rules, after html::base_page_style(): the topology
// tree, link badges, charts and findings. The page reads in grey too.
constexpr std::string_view kStyle = R"(
.tree,.tree ul{list-style:none;margin:0;padding-left:22px}.tree{padding-left:0}
.tree li{position:relative;padding:3px 0 3px 14px;border-left:1px solid #b7bec7}
.tree li:last-child{border-left-color:transparent}
.tree li::before{content:"";position:absolute;left:-1px;top:0;width:12px;height:14px;border-left:1px solid #b7bec7;border-bottom:1px solid #b7bec7}
.node{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12.5px}
.role{color:#4a5561}
.link{display:inline-block;border-radius:4px;padding:0 6px;margin-left:6px;font-size:12px;border:1px solid}
.link.ok{background:#e7f5ea;border-color:#1e7b34;color:#14561f}
.link.low{background:#fbe9e9;border-color:#b3261e;color:#8c1d18;font-weight:600}
td.low{background:#fbe9e9;color:#8c1d18;font-weight:600}
.link.unknown{background:#fff4dc;border-color:#9a6700;color:#6b4800}
.link.named{outline:2px solid #b3261e;outline-offset:1px}
.legend-row span{margin-right:10px}
.charts{display:flex;flex-wrap:wrap;gap:12px}
svg.chart{width:560px;max-width:100%;height:auto;background:#fff;border:1px solid #d5d9df;border-radius:6px}
svg .plot{fill:#fff;stroke:#b7bec7}svg .grid{stroke:#eceff2}svg .tick,svg .legend{font-size:10.5px;fill:#4a5561}
svg .axis{font-size:11.5px;fill:#1d232b}svg .chart-title{font-size:13px;font-weight:600;fill:#1d232b}
svg .line{fill:none;stroke-width:2}svg .whisker{stroke-width:1.5}
svg .reference{stroke:#b3261e;stroke-dasharray:6 4;stroke-width:1.5}svg .reference-label{font-size:11px;fill:#b3261e}
article.finding{background:#fff;border:1px solid #d5d9df;border-left:6px solid;border-radius:6px;padding:8px 14px;margin:10px 0}
article.finding.fail{border-left-color:#b3261e}article.finding.inconclusive{border-left-color:#9a6700}
)";

// The colour class of a verdict status: failing, inconclusive or pass.
std::string_view status_class(VerdictStatus status) {
  if (status == VerdictStatus::kPass) return "pass";
  return is_failing(status) ? "fail" : "inconclusive";
}

// "Gen4 x16"; an unread half is "?" so the other half still says something.
std::string state_text(const std::optional<PcieGen>& speed, const std::optional<int>& width) {
  if (!speed && !width) return "unknown";
  return (speed ? to_string(*speed) : std::string("Gen?")) + " x" + (width ? std::to_string(*width) : "?");
}

std::string reading_text(const Reading<LinkState>& state) { return state ? to_string(state.value()) : "unknown"; }

std::string status_span(VerdictStatus status) {
  return "<span class=\"status " + std::string(status_class(status)) + "\">" + std::string(to_string(status)) +
         "</span>";
}

// ---- verdict --------------------------------------------------------------

std::string verdict_section(const Results& results) {
  const std::string_view cls = overall_class(results.overall);
  std::string word(to_string(results.overall));
  std::transform(word.begin(), word.end(), word.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  std::map<std::string, int> by_status;
  for (const Verdict& verdict : results.verdicts) ++by_status[std::string(to_string(verdict.status))];

  std::string out = "<section id=\"verdict\" class=\"" + std::string(cls) + "\">\n";
  out += "<div class=\"result-word\">" + word + "</div>\n";
  out += "<p class=\"summary\">" + escape(results.summary) + "</p>\n";
  out += "<p class=\"meta\">host <b>" + escape(results.evidence.host.hostname) + "</b> &middot; kernel " +
         escape(results.evidence.host.kernel) + " &middot; " + escape(results.tool.name) + " " +
         escape(results.tool.version);
  if (results.evidence.probe_settings) out += " &middot; probes " + escape(results.evidence.probe_settings->mode);
  // A live check reads the links at discovery, with the GPUs idle, and again
  // while they copy (link_samples): the verdicts rest on the second.
  const auto& samples = results.evidence.link_samples;
  const bool sampled_under_load =
      std::any_of(samples.begin(), samples.end(), [](const LinkSample& sample) { return sample.under_load; });
  out += " &middot; ";
  if (sampled_under_load) {
    out += "links sampled under load";
  } else {
    out += "GPUs read " + std::string(results.evidence.gpus_under_load ? "under load" : "without load");
  }
  out += "</p>\n";
  out += "<p class=\"meta\">" + std::to_string(results.verdicts.size()) + " verdicts";
  for (const auto& [status, count] : by_status) out += ", " + std::to_string(count) + " " + escape(status);
  out += "</p>\n</section>\n";
  return out;
}

// ---- topology -------------------------------------------------------------

// The worst status among a subject's verdicts, shown beside the device.
std::map<std::string, VerdictStatus> worst_status_by_subject(const Results& results) {
  const auto rank = [](VerdictStatus status) {
    return is_failing(status) ? 2 : status == VerdictStatus::kPass ? 0 : 1;
  };
  std::map<std::string, VerdictStatus> worst;
  for (const Verdict& verdict : results.verdicts) {
    const auto [it, inserted] = worst.emplace(verdict.subject, verdict.status);
    if (!inserted && rank(verdict.status) > rank(it->second)) it->second = verdict.status;
  }
  return worst;
}

// Each path link's state under load, by its downstream end.
using LoadedStates = std::map<PciAddress, LinkState>;

// "Gen3 x16 under load (Gen1 x16 at discovery)" where the two differ.
std::string negotiated_text(const Link& link, const LoadedStates& loaded) {
  const auto found = loaded.find(link.downstream);
  const Reading<LinkState> read = link.negotiated();
  if (found == loaded.end() || (read && read.value() == found->second)) return reading_text(read);
  return to_string(found->second) + " under load (" + reading_text(read) + " at discovery)";
}

// Links a non-passing verdict names, with that verdict's status.
using NamedLinks = std::map<std::pair<PciAddress, PciAddress>, VerdictStatus>;

NamedLinks named_links(const Results& results) {
  NamedLinks named;
  for (const Verdict& verdict : results.verdicts) {
    if (verdict.link && verdict.status != VerdictStatus::kPass) {
      named.emplace(std::make_pair(verdict.link->downstream, verdict.link->upstream), verdict.status);
    }
  }
  return named;
}

template <class T>
std::optional<T> known(const Reading<T>& reading) {
  return reading ? std::optional<T>(reading.value()) : std::nullopt;
}

// Negotiated against expected, compared here only to pick a colour: the
// verdicts (which know about idle GPUs and load) are shown beside it.
std::string link_badge(const Link& link, const NamedLinks& named, const LoadedStates& loaded) {
  const Reading<LinkState> expected = link.expected();
  const auto under_load = loaded.find(link.downstream);
  const Reading<LinkState> negotiated =
      under_load != loaded.end() ? Reading<LinkState>(under_load->second) : link.negotiated();
  std::string cls = "unknown";
  std::string word = "state unknown";
  if (expected && negotiated) {
    const bool below =
        generation_number(negotiated->gen) < generation_number(expected->gen) || negotiated->width < expected->width;
    cls = below ? "low" : "ok";
    word = below ? "below expected" : "at expected";
  }
  std::string text = negotiated_text(link, loaded) + " of " + reading_text(expected) + ", " + word;
  const auto found = named.find({link.downstream, link.upstream});
  if (found != named.end()) {
    cls += " named";
    text += "; named by a verdict: " + std::string(to_string(found->second));
  }
  return "<span class=\"link " + cls + "\" title=\"" + escape(std::string(to_string(link.position))) + "\">" +
         escape(text) + "</span>";
}

std::string device_line(const DeviceRecord& record, const std::map<std::string, VerdictStatus>& worst) {
  const PciFunction& function = record.function;
  const std::string bdf = to_string(function.bdf);
  std::string line = "<span class=\"node\">" + escape(bdf) + "</span> <b>" +
                     escape(std::string(to_string(function.kind))) + "</b> <span class=\"role\">" +
                     hex_text(function.vendor_id, 4) + ":" + hex_text(function.device_id, 4);
  if (record.nvml && record.nvml->name) line += " " + escape(*record.nvml->name);
  line += "</span>";
  const auto found = worst.find(bdf);
  line += found != worst.end() ? " " + status_span(found->second) : " <span class=\"role\">not judged</span>";
  return line;
}

void insert_device(AddressTree& root, const DeviceRecord& record, const std::map<std::string, VerdictStatus>& worst,
                   const NamedLinks& named, const LoadedStates& loaded) {
  // Bottom-up: the device (with its own link), then for each link the port
  // above it; a switch upstream port appears with the uplink above it.
  std::vector<TreeStep> bottom_up{
      {record.function.bdf, device_line(record, worst) + link_badge(record.path.front(), named, loaded)}};
  for (std::size_t i = 0; i < record.path.size(); ++i) {
    const Link& link = record.path[i];
    if (link.downstream != bottom_up.back().bdf) {
      bottom_up.push_back({link.downstream, "<span class=\"node\">" + escape(to_string(link.downstream)) +
                                                "</span> <span class=\"role\">switch upstream port</span>" +
                                                link_badge(link, named, loaded)});
    }
    const bool is_root = i + 1 == record.path.size();
    bottom_up.push_back({link.upstream, "<span class=\"node\">" + escape(to_string(link.upstream)) +
                                            "</span> <span class=\"role\">" +
                                            (is_root ? "root port" : "switch downstream port") + "</span>"});
  }
  insert_bottom_up(root, bottom_up);
}

void render_tree(const AddressTree& node, std::string& out) {
  for (const AddressTree& child : node.children) {
    out += "<li>" + child.line;  // markup, escaped already
    if (!child.children.empty()) {
      out += "\n<ul>\n";
      render_tree(child, out);
      out += "</ul>";
    }
    out += "</li>\n";
  }
}

std::string topology_section(const Results& results, const LoadedStates& loaded) {
  std::string out = section_open("topology", "Topology");
  const auto worst = worst_status_by_subject(results);
  const NamedLinks named = named_links(results);
  AddressTree root;
  std::vector<const DeviceRecord*> without_path;
  for (const DeviceRecord& record : results.evidence.devices) {
    if (record.path.empty()) {
      without_path.push_back(&record);
    } else {
      insert_device(root, record, worst, named, loaded);
    }
  }
  if (results.evidence.devices.empty()) return out + none("The document lists no PCIe devices.") + "</section>\n";
  out +=
      "<p class=\"legend-row\"><span class=\"link ok\">at expected</span><span class=\"link low\">below "
      "expected</span><span class=\"link unknown\">state unknown</span><span class=\"link low named\">named by a "
      "verdict</span> negotiated state of each link, of the state both of its ends can reach</p>\n";
  if (root.children.empty()) {
    out += none("No device sits behind a PCIe port with link attributes.");
  } else {
    out += "<ul class=\"tree\">\n";
    render_tree(root, out);
    out += "</ul>\n";
  }
  if (!without_path.empty()) {
    out += "<h3>Not behind a PCIe port</h3>\n<ul class=\"tree\">\n";
    for (const DeviceRecord* record : without_path) out += "<li>" + device_line(*record, worst) + "</li>\n";
    out += "</ul>\n";
  }
  return out + "</section>\n";
}

// ---- measurements ---------------------------------------------------------

// The budget of a per-GPU row, matched as the check table matches it.
const BandwidthBudget* budget_for(const Measurement& m, std::span<const BandwidthBudget> budgets) {
  if (m.gpus.size() > 1 || m.aggregation == Aggregation::kTotalOverWallTime) return nullptr;
  for (const BandwidthBudget& budget : budgets) {
    if (budget.subject == m.subject && budget.direction == m.direction) return &budget;
  }
  return nullptr;
}

std::string numa_text(const Measurement& m) {
  if (!m.host_numa_node) return "-";
  std::string text = std::to_string(*m.host_numa_node);
  if (m.host_numa_local) text += *m.host_numa_local ? " local" : " remote";
  return text;
}

std::string measurements_section(const Results& results, std::span<const BandwidthBudget> budgets) {
  const Evidence& evidence = results.evidence;
  std::string out = section_open("measurements", "Measurements against budgets");
  std::string rows;
  for (const Measurement& m : evidence.measurements) {
    if (m.probe == kSweepProbeKey) continue;
    const BandwidthBudget* budget = budget_for(m, budgets);
    // A pinned copy-engine copy of the GPU alone below its floor is what
    // bandwidth_low fails: its cells are marked as links below expected are.
    const bool low = budget != nullptr && budget->floor_gbps > 0 && m.method == CopyMethod::kCopyEngine &&
                     m.aggregation == Aggregation::kAlone && m.host_memory == HostMemory::kPinned &&
                     m.stats.median_gbps < budget->floor_gbps;
    const std::string low_cell =
        low ? " low\" title=\"below the floor of " + number_text(budget->floor_gbps, 1) + " GB/s" : "";
    rows += "<tr><td class=\"mono\">" + escape(m.probe) + "</td><td class=\"mono\">" + escape(m.subject) + "</td><td>" +
            escape(std::string(to_string(m.direction))) + "</td><td>" + escape(std::string(to_string(m.method))) +
            "</td><td>" + escape(std::string(to_string(m.host_memory))) + "</td><td>" +
            escape(std::string(to_string(m.aggregation))) + "</td><td class=\"num\">" +
            escape(binary_size_text(static_cast<double>(m.size_bytes))) + "</td><td class=\"num" + low_cell + "\"><b>" +
            number_text(m.stats.median_gbps, 2) + "</b></td><td class=\"num\">" + number_text(m.stats.min_gbps, 2) +
            "</td><td class=\"num\">" + number_text(m.stats.max_gbps, 2) + "</td><td class=\"num\">" +
            number_text(m.stats.cv * 100, 1) + "</td><td>" + numa_text(m) + "</td>";
    if (budget != nullptr && budget->budget_gbps > 0) {
      rows += "<td class=\"num\">" + number_text(budget->budget_gbps, 1) + " (" + escape(budget->link) +
              ")</td><td class=\"num" + low_cell + "\">" +
              number_text(100 * m.stats.median_gbps / budget->budget_gbps, 0) + " %</td>";
    } else {
      rows += "<td>-</td><td>-</td>";
    }
    rows += "<td>" + std::string(m.verified ? "yes" : "no") + "</td></tr>\n";
  }
  if (rows.empty()) {
    out += none("No measurements in this document (no probe ran, or only the size sweep).");
  } else {
    out +=
        "<div class=\"scroll\"><table "
        "id=\"measurement-table\">\n<thead><tr><th>probe</th><th>subject</th><th>dir</th><th>method</th>"
        "<th>host memory</th><th>aggregation</th><th>size</th><th>median GB/s</th><th>min</th><th>max</th>"
        "<th>CV %</th><th>host NUMA</th><th>budget GB/s</th><th>of budget</th><th>verified</th></tr></thead>\n"
        "<tbody>\n" +
        rows + "</tbody>\n</table></div>\n";
  }
  if (!evidence.probes.empty()) {
    out +=
        "<h3>Probes</h3>\n<table id=\"probe-table\">\n<thead><tr><th>probe</th><th>status</th><th>seconds</th>"
        "<th>reason and warnings</th></tr></thead>\n<tbody>\n";
    for (const ProbeRun& probe : evidence.probes) {
      std::string detail = escape(probe.reason);
      for (const std::string& warning : probe.warnings) detail += (detail.empty() ? "" : "<br>") + escape(warning);
      const std::string cls = probe.status == ProbeStatus::kFailed    ? "inconclusive"
                              : probe.status == ProbeStatus::kSkipped ? "role"
                                                                      : "pass";
      out += "<tr><td class=\"mono\">" + escape(probe.key) + "</td><td class=\"status " + cls + "\">" +
             std::string(to_string(probe.status)) + "</td><td class=\"num\">" + number_text(probe.duration_s, 2) +
             "</td><td>" + detail + "</td></tr>\n";
    }
    out += "</tbody>\n</table>\n";
  }
  return out + "</section>\n";
}

// ---- curves ---------------------------------------------------------------

std::string_view direction_words(Direction direction) {
  switch (direction) {
    case Direction::kHostToDevice:
      return "host to device";
    case Direction::kDeviceToHost:
      return "device to host";
    case Direction::kAllReduce:
      return "all-reduce (bus bandwidth)";
    case Direction::kDeviceToDevice:
      return "device to device (peer)";
    case Direction::kHostToHost:
      break;
  }
  return "host to host";
}

std::string curves_section(const Results& results, std::span<const BandwidthBudget> budgets) {
  std::string out = section_open("curves", "Bandwidth versus copy size");
  // Charts in order of first appearance, one per subject and direction; one
  // series per kind of copy within it.
  std::vector<std::pair<std::string, Direction>> order;
  std::map<std::pair<std::string, Direction>, std::vector<const Measurement*>> groups;
  for (const Measurement& m : results.evidence.measurements) {
    if (m.probe != kSweepProbeKey) continue;
    const auto key = std::make_pair(m.subject, m.direction);
    if (groups.count(key) == 0) order.push_back(key);
    groups[key].push_back(&m);
  }
  if (order.empty()) {
    return out + none("No size sweep in this document: `pcieval check --full` runs probe sweep_ce.") + "</section>\n";
  }
  out += "<div class=\"charts\">\n";
  for (const auto& key : order) {
    svg::Chart chart;
    chart.title =
        key.first + " " + std::string(to_string(key.second)) + " (" + std::string(direction_words(key.second)) + ")";
    chart.x_label = "copy size";
    chart.y_label = "GB/s (median, min-max)";
    chart.x_format = svg::AxisFormat::kBytes;
    chart.x_log2 = true;
    std::map<std::string, std::size_t> series_index;
    for (const Measurement* m : groups[key]) {
      const std::string name = std::string(to_string(m->method)) + " " + std::string(to_string(m->host_memory)) + " " +
                               std::string(to_string(m->aggregation));
      const auto [it, inserted] = series_index.emplace(name, chart.series.size());
      if (inserted) chart.series.push_back({name, {}, false});
      svg::Point point;
      point.x = static_cast<double>(m->size_bytes);
      point.y = m->stats.median_gbps;
      point.y_low = m->stats.min_gbps;
      point.y_high = m->stats.max_gbps;
      point.tooltip = binary_size_text(point.x) + ": " + number_text(point.y, 2) + " GB/s (" +
                      std::to_string(m->trials_gbps.size()) + " trials, " + number_text(m->stats.min_gbps, 2) + "-" +
                      number_text(m->stats.max_gbps, 2) + ")";
      chart.series[it->second].points.push_back(point);
    }
    for (svg::Series& series : chart.series) {
      std::sort(series.points.begin(), series.points.end(),
                [](const svg::Point& a, const svg::Point& b) { return a.x < b.x; });
    }
    const Measurement probe_like = *groups[key].front();
    if (const BandwidthBudget* budget = budget_for(probe_like, budgets); budget != nullptr) {
      chart.reference_y = budget->budget_gbps;
      chart.reference_label = "budget " + number_text(budget->budget_gbps, 1) + " GB/s (" + budget->link + ")";
    }
    out += svg::render_chart(chart);
  }
  return out + "</div>\n</section>\n";
}

// ---- soak -----------------------------------------------------------------

std::string soak_section(const Results& results) {
  const std::optional<SoakRecord>& soak = results.evidence.soak;
  if (!soak) return "";
  std::string out = section_open("soak", "Soak: bandwidth round by round");
  const double span_s = soak->rounds.empty() ? 0 : soak->rounds.back().end_s;
  std::string state = soak->finished                 ? "finished"
                      : results.evidence.interrupted ? "stopped by " + *results.evidence.interrupted
                                                     : "not finished (the document was written between rounds)";
  out += "<p class=\"meta\">" + std::to_string(soak->rounds.size()) + " complete round" +
         (soak->rounds.size() == 1 ? "" : "s") + " in " + number_text(span_s, 0) + " s, " + escape(state) +
         (soak->requested_rounds ? "; asked for " + std::to_string(*soak->requested_rounds) + " rounds" : "") +
         (soak->requested_duration_s ? "; asked for " + number_text(*soak->requested_duration_s, 0) + " s" : "") +
         ". Each point is one round's median (min-max of its trials); link changes are under Link state over "
         "time.</p>\n";
  if (soak->rounds.empty()) return out + none("No round completed.") + "</section>\n";
  // One chart per subject, one series per kind of measurement in it.
  std::vector<std::string> subjects;
  std::map<std::string, std::vector<svg::Series>> charts;
  std::map<std::pair<std::string, std::string>, std::size_t> series_index;
  for (const SoakRound& round : soak->rounds) {
    for (const Measurement& m : round.measurements) {
      if (charts.count(m.subject) == 0) subjects.push_back(m.subject);
      std::vector<svg::Series>& series = charts[m.subject];
      std::string name = m.probe + " " + std::string(to_string(m.direction));
      if (m.aggregation != Aggregation::kAlone) name += " " + std::string(to_string(m.aggregation));
      const auto [it, inserted] = series_index.emplace(std::make_pair(m.subject, name), series.size());
      if (inserted) series.push_back({name, {}, false});
      svg::Point point;
      point.x = round.start_s;
      point.y = m.stats.median_gbps;
      point.y_low = m.stats.min_gbps;
      point.y_high = m.stats.max_gbps;
      point.tooltip = "round " + std::to_string(round.index) + " at " + number_text(round.start_s, 0) +
                      " s: " + number_text(m.stats.median_gbps, 2) + " GB/s";
      series[it->second].points.push_back(point);
    }
  }
  out += "<div class=\"charts\">\n";
  for (const std::string& subject : subjects) {
    svg::Chart chart;
    chart.title = subject;
    chart.x_label = "seconds since the soak started";
    chart.x_format = svg::AxisFormat::kSeconds;
    chart.y_label = "GB/s (median, min-max)";
    chart.series = std::move(charts[subject]);
    out += svg::render_chart(chart);
  }
  return out + "</div>\n</section>\n";
}

// ---- link samples ---------------------------------------------------------

std::string samples_section(const Results& results) {
  std::string out = section_open("samples", "Link state over time");
  const std::vector<LinkSample>& samples = results.evidence.link_samples;
  if (samples.empty()) {
    return out + none("No link samples in this document: links are sampled while the probes copy.") + "</section>\n";
  }
  out +=
      "<p class=\"meta\">Negotiated state of each port on a GPU's path while the probes ran; filled markers were "
      "read under load, hollow ones idle.</p>\n<div class=\"charts\">\n";
  std::vector<PciAddress> ports;
  for (const LinkSample& sample : samples) {
    if (std::find(ports.begin(), ports.end(), sample.port) == ports.end()) ports.push_back(sample.port);
  }
  for (const PciAddress& port : ports) {
    svg::Chart speed;
    speed.title = to_string(port) + " speed";
    speed.y_label = "GT/s per lane";
    svg::Chart width;
    width.title = to_string(port) + " width";
    width.y_label = "lanes";
    for (svg::Chart* chart : {&speed, &width}) {
      chart->x_label = "seconds since sampling started";
      chart->x_format = svg::AxisFormat::kSeconds;
    }
    for (const SampleSource source : {SampleSource::kSysfs, SampleSource::kNvml}) {
      svg::Series speed_series{std::string(to_string(source)), {}, true};
      svg::Series width_series{std::string(to_string(source)), {}, true};
      for (const LinkSample& sample : samples) {
        if (sample.port != port || sample.source != source) continue;
        const std::string when = number_text(sample.t_s, 2) + " s, " + (sample.under_load ? "under load" : "idle") +
                                 ": " + state_text(sample.speed, sample.width);
        if (sample.speed)
          speed_series.points.push_back(
              {sample.t_s, transfer_rate_gts(*sample.speed), std::nullopt, std::nullopt, sample.under_load, when});
        if (sample.width)
          width_series.points.push_back(
              {sample.t_s, static_cast<double>(*sample.width), std::nullopt, std::nullopt, sample.under_load, when});
      }
      if (!speed_series.points.empty()) speed.series.push_back(std::move(speed_series));
      if (!width_series.points.empty()) width.series.push_back(std::move(width_series));
    }
    out += svg::render_chart(speed) + svg::render_chart(width);
  }
  return out + "</div>\n</section>\n";
}

// ---- evidence -------------------------------------------------------------

std::string path_table(const DeviceRecord& record, const LoadedStates& loaded) {
  std::string out =
      "<table class=\"path\">\n<thead><tr><th>link</th><th>position</th><th>downstream max</th><th>upstream "
      "max</th><th>expected</th><th>negotiated</th></tr></thead>\n<tbody>\n";
  for (const Link& link : record.path) {
    const PortLinkReading& down = link.downstream_end;
    const PortLinkReading& up = link.upstream_end;
    out += "<tr><td class=\"mono\">" + escape(to_string(link.downstream)) + " &harr; " +
           escape(to_string(link.upstream)) + "</td><td>" + escape(std::string(to_string(link.position))) +
           "</td><td>" + state_text(known(down.max_speed), known(down.max_width)) + "</td><td>" +
           state_text(known(up.max_speed), known(up.max_width)) + "</td><td>" + reading_text(link.expected()) +
           "</td><td>" + negotiated_text(link, loaded) + "</td></tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string finding(const Results& results, const Verdict& verdict, std::size_t index, const LoadedStates& loaded) {
  const Evidence& evidence = results.evidence;
  std::string out = "<article class=\"finding " + std::string(status_class(verdict.status)) + "\" id=\"finding-" +
                    std::to_string(index) + "\">\n<h3><span class=\"mono\">" + escape(verdict.subject) + "</span> " +
                    status_span(verdict.status) + " <code>" + escape(std::string(to_string(verdict.code))) +
                    "</code></h3>\n";
  if (verdict.link) {
    out += "<p><b>Link</b> <span class=\"mono\">" + escape(to_string(verdict.link->downstream)) + " &harr; " +
           escape(to_string(verdict.link->upstream)) + "</span></p>\n";
  }
  out += "<p><b>Reason</b> " + escape(verdict.reason) + "</p>\n";
  if (!verdict.remediation.empty()) out += "<p><b>Next step</b> " + escape(verdict.remediation) + "</p>\n";

  const auto subject = parse_pci_address(verdict.subject);
  const DeviceRecord* device = subject ? find_device(evidence, subject.value()) : nullptr;
  if (device != nullptr && !device->path.empty()) out += path_table(*device, loaded);
  std::string measured;
  for (const Measurement& m : evidence.measurements) {
    if (m.subject != verdict.subject || m.probe == kSweepProbeKey) continue;
    measured += "<li><code>" + escape(m.probe) + "</code> " + escape(std::string(to_string(m.direction))) + " " +
                number_text(m.stats.median_gbps, 2) + " GB/s median of " + std::to_string(m.trials_gbps.size()) +
                " trials</li>\n";
  }
  if (!measured.empty()) out += "<p><b>Measured</b></p>\n<ul>\n" + measured + "</ul>\n";
  std::string counted;
  for (const CounterDelta& counter : evidence.counters) {
    if (to_string(counter.device) != verdict.subject) continue;
    counted += "<li><code>" + escape(counter.counter) + "</code> " + std::to_string(counter.before) + " &rarr; " +
               std::to_string(counter.after) + "</li>\n";
  }
  if (!counted.empty()) out += "<p><b>Error counters before and after the probes</b></p>\n<ul>\n" + counted + "</ul>\n";
  if (device != nullptr) {
    for (const std::string& note : device->notes) out += "<p class=\"meta\">note: " + escape(note) + "</p>\n";
  }
  return out + "</article>\n";
}

std::string evidence_section(const Results& results, const LoadedStates& loaded) {
  std::string out = section_open("evidence", "Evidence behind each verdict that is not a pass");
  std::size_t index = 0;
  for (const bool failing : {true, false}) {
    for (const Verdict& verdict : results.verdicts) {
      if (verdict.status == VerdictStatus::kPass || is_failing(verdict.status) != failing) continue;
      out += finding(results, verdict, index++, loaded);
    }
  }
  if (index == 0) out += none("Every verdict is a pass.");
  return out + "</section>\n";
}

std::string notes_section(const Results& results) {
  if (results.evidence.notes.empty()) return "";
  std::string out = section_open("notes", "Notes") + "<ul>\n";
  for (const std::string& note : results.evidence.notes) out += "<li>" + escape(note) + "</li>\n";
  return out + "</ul>\n</section>\n";
}

}  // namespace

std::string render_html(const Results& results, std::span<const BandwidthBudget> budgets,
                        std::span<const LoadedLink> loaded_links) {
  LoadedStates loaded;
  for (const LoadedLink& link : loaded_links) loaded.emplace(link.port, link.state);
  std::string word(to_string(results.overall));
  std::string out =
      html::page_open("pcieval " + escape(results.evidence.host.hostname) + ": " + word, kStyle,
                      "pcieval report: " + escape(results.evidence.host.hostname), html::HeadOrder::kPolicyFirst);
  out += verdict_section(results);
  out += topology_section(results, loaded);
  out += measurements_section(results, budgets);
  out += curves_section(results, budgets);
  out += soak_section(results);
  out += samples_section(results);
  out += evidence_section(results, loaded);
  out += notes_section(results);
  out += html::page_close();
  return out;
}

}  // namespace pcieval
