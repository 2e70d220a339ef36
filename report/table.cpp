#include "report/table.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/measurement.hpp"
#include "model/text.hpp"
#include "report/detail/utf8.hpp"

namespace pcieval {

std::string terminal_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    // One '?' per code point, so "caf\xc3\xa9" reads "caf?", not "caf??".
    const char32_t code_point = utf8::next_code_point(text, pos);
    out += code_point >= 0x20 && code_point < 0x7f ? static_cast<char>(code_point) : '?';
  }
  return out;
}

std::string terminal_lines(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const auto end = text.find('\n');
    out += terminal_text(text.substr(0, end));
    if (end == std::string_view::npos) break;
    out += '\n';
    text.remove_prefix(end + 1);
  }
  return out;
}

namespace {

constexpr std::string_view kColumnGap = "  ";

// "Gen4 x16", or "?" when the state could not be read.
std::string state_text(const Reading<LinkState>& state) { return state ? to_string(state.value()) : "?"; }

// The ports from the device up to its root port: the device, then each link's
// ends, skipping a link's downstream end when it repeats the port before it
// (each link starts where the previous one ended, except across a switch,
// whose downstream port and upstream port are two functions).
std::string path_text(const DeviceRecord& record) {
  if (record.path.empty()) return "-";
  std::vector<PciAddress> chain{record.function.bdf};
  for (const Link& link : record.path) {
    if (link.downstream != chain.back()) chain.push_back(link.downstream);
    chain.push_back(link.upstream);
  }
  std::string text;
  for (const PciAddress& port : chain) {
    if (!text.empty()) text += " < ";
    text += to_string(port);
  }
  return text;
}

// Worst first: the row shows the verdict that decides the device.
int severity(VerdictStatus status) {
  if (is_failing(status)) return 2;
  return status == VerdictStatus::kInconclusive ? 1 : 0;
}

const Verdict* verdict_for(const std::vector<Verdict>& verdicts, const std::string& subject) {
  const Verdict* found = nullptr;
  for (const Verdict& verdict : verdicts) {
    if (verdict.subject != subject) continue;
    if (found == nullptr || severity(verdict.status) > severity(found->status)) found = &verdict;
  }
  return found;
}

// A shared uplink appears in the paths of several devices, so the link a
// verdict names is looked for in the device's own path first, then anywhere.
const Link* find_link(const Results& results, const DeviceRecord& record, const LinkRef& ref) {
  const auto matches = [&ref](const Link& link) {
    return link.downstream == ref.downstream && link.upstream == ref.upstream;
  };
  const auto own = std::find_if(record.path.begin(), record.path.end(), matches);
  if (own != record.path.end()) return &*own;
  for (const DeviceRecord& other : results.evidence.devices) {
    const auto it = std::find_if(other.path.begin(), other.path.end(), matches);
    if (it != other.path.end()) return &*it;
  }
  return nullptr;
}

using Row = std::vector<std::string>;

enum class Align { kLeft, kRight };

// Rows as columns as wide as their widest cell, two spaces apart; the header
// is rows[0]. `align` has one entry per column (missing: left). Trailing
// spaces are trimmed, so a blank last cell leaves none. Every cell is
// terminal_text: subjects, probe keys and links come from the document.
std::string aligned(std::vector<Row> rows, const std::vector<Align>& align = {}) {
  for (Row& row : rows) {
    for (std::string& cell : row) cell = terminal_text(cell);
  }
  std::vector<std::size_t> widths;
  for (const Row& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const Row& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i > 0) line += kColumnGap;
      const std::string padding(widths[i] - row[i].size(), ' ');
      const bool right = i < align.size() && align[i] == Align::kRight;
      line += right ? padding + row[i] : row[i] + padding;
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line;
    out += '\n';
  }
  return out;
}

// The GPU's own link as a captured nvidia-smi read it while the GPU was busy,
// with where it came from: "Gen3 x16 (nvidia-smi, busy)". The lspci capture
// beside it may have caught the GPU idle, at its power-saving speed, which is
// not what the verdict judged. nullopt without such a reading, and for a live
// run, whose NVML reading the sysfs link samples stand beside (the verdict
// lines name the state under load there).
std::optional<std::string> busy_own_link_text(const Results& results, const DeviceRecord& record) {
  if (!record.nvml || !record.nvml->under_load || !record.nvml->current_gen || !record.nvml->current_width) {
    return std::nullopt;
  }
  const auto& lines = results.evidence.capture_lines;
  const bool captured = std::any_of(lines.begin(), lines.end(), [&](const CaptureLine& line) {
    return line.device && *line.device == record.function.bdf;
  });
  if (!captured) return std::nullopt;
  return "Gen" + std::to_string(*record.nvml->current_gen) + " x" + std::to_string(*record.nvml->current_width) +
         " (nvidia-smi, busy)";
}

Row device_row(const Results& results, const DeviceRecord& record, std::span<const ShownLink> shown_links,
               std::span<const LoadedLink> loaded_links) {
  const std::string bdf = to_string(record.function.bdf);
  const Verdict* verdict = verdict_for(results.verdicts, bdf);

  std::string expected = "-";
  std::string negotiated = "-";
  const Link* shown = nullptr;
  if (verdict != nullptr && verdict->link) {
    // A verdict about a link the evidence does not hold cannot be shown
    // against another link's numbers.
    shown = find_link(results, record, *verdict->link);
    expected = shown != nullptr ? state_text(shown->expected()) : "?";
    negotiated = shown != nullptr ? state_text(shown->negotiated()) : "?";
  } else if (!record.path.empty()) {
    shown = &record.path.front();
    expected = state_text(shown->expected());
    negotiated = state_text(shown->negotiated());
  }
  const std::string own_bdf = bdf;
  if (const auto it = std::find_if(shown_links.begin(), shown_links.end(),
                                   [&](const ShownLink& s) { return s.subject == own_bdf; });
      it != shown_links.end()) {
    expected = it->expected;
    if (record.path.empty()) negotiated = it->negotiated;
  }
  // The GPU's own link (or, without a path, the only link known) read busy
  // replaces an idle reading that differs from it.
  const bool own_link = shown != nullptr ? shown->downstream == record.function.bdf : record.path.empty();
  if (const auto busy = busy_own_link_text(results, record); busy && own_link && !busy->starts_with(negotiated + " ")) {
    negotiated = *busy;
  }
  if (shown != nullptr) {
    const auto loaded = std::find_if(loaded_links.begin(), loaded_links.end(),
                                     [&](const LoadedLink& l) { return l.port == shown->downstream; });
    // A capture's busy reading ("Gen3 x16 (nvidia-smi, busy)") already says it.
    const std::string state = loaded != loaded_links.end() ? to_string(loaded->state) : std::string();
    if (loaded != loaded_links.end() && state != negotiated && !negotiated.starts_with(state + " ")) {
      negotiated = state + " (under load)";
    }
  }
  std::string status = "not judged";
  if (verdict != nullptr) {
    status = std::string(to_string(verdict->status));
  } else if (record.function.bdf.function != 0 && !record.path.empty()) {
    // Function 1 of a GPU or a NIC reports function 0's link, judged there.
    PciAddress zero = record.function.bdf;
    zero.function = 0;
    if (verdict_for(results.verdicts, to_string(zero)) != nullptr) status = "see " + to_string(zero);
  }
  return Row{bdf,
             std::string(to_string(record.function.kind)),
             path_text(record),
             std::move(expected),
             std::move(negotiated),
             std::move(status)};
}

// The probe whose measurements are a bandwidth curve, not verdict numbers.

std::string host_numa_text(const Measurement& measurement) {
  if (!measurement.host_numa_node) return "-";
  std::string text = std::to_string(*measurement.host_numa_node);
  if (measurement.host_numa_local) text += *measurement.host_numa_local ? " local" : " remote";
  return text;
}

// A budget is per GPU and per direction: a group's total over wall time is
// not held against one link's budget.
std::string budget_text(const Measurement& measurement, std::span<const BandwidthBudget> budgets) {
  if (measurement.aggregation == Aggregation::kTotalOverWallTime) return "";
  for (const BandwidthBudget& budget : budgets) {
    if (budget.subject == measurement.subject && budget.direction == measurement.direction) {
      return fixed_text(budget.budget_gbps, 1) + " (" + budget.link + ")";
    }
  }
  return "";
}

// A peer pair's copies one way and both ways at once share a probe key and a
// subject: the direction cell tells them apart ("d2d both": this direction
// while the reverse ran; "d2d sum": both directions' bytes over their time,
// as p2pBandwidthLatencyTest prints them).
std::string direction_text(const Measurement& m) {
  std::string text(to_string(m.direction));
  if (m.direction != Direction::kDeviceToDevice) return text;
  if (m.aggregation == Aggregation::kWithReverse) text += " both";
  if (m.aggregation == Aggregation::kTotalOverWallTime) text += " sum";
  return text;
}

std::string measurements_table(const std::vector<Measurement>& measurements, std::span<const BandwidthBudget> budgets) {
  std::vector<Row> rows;
  rows.push_back({"PROBE", "SUBJECT", "DIR", "SIZE", "MEDIAN GB/s", "MIN", "MAX", "CV %", "HOST NUMA", "BUDGET"});
  for (const Measurement& m : measurements) {
    if (m.probe == kSweepProbeKey) continue;
    rows.push_back({m.probe, m.subject, direction_text(m), binary_size_text(static_cast<double>(m.size_bytes)),
                    fixed_text(m.stats.median_gbps, 2), fixed_text(m.stats.min_gbps, 2),
                    fixed_text(m.stats.max_gbps, 2), fixed_text(m.stats.cv * 100, 1), host_numa_text(m),
                    budget_text(m, budgets)});
  }
  if (rows.size() == 1) return "";
  const Align l = Align::kLeft;
  const Align r = Align::kRight;
  return aligned(rows, {l, l, l, r, r, r, r, r, l, l});
}

// One curve per subject, direction, host memory and aggregation, in the order
// the curves first appear; each curve's points smallest size first.
std::string sweep_section(const std::vector<Measurement>& measurements) {
  std::vector<std::string> names;
  std::map<std::string, std::vector<const Measurement*>> curves;
  for (const Measurement& m : measurements) {
    if (m.probe != kSweepProbeKey) continue;
    std::string name = m.subject + " " + std::string(to_string(m.direction));
    if (m.host_memory != HostMemory::kPinned) name += " " + std::string(to_string(m.host_memory));
    if (m.aggregation != Aggregation::kAlone) name += " " + std::string(to_string(m.aggregation));
    auto [it, inserted] = curves.try_emplace(name);
    if (inserted) names.push_back(name);
    it->second.push_back(&m);
  }
  if (names.empty()) return "";
  std::string out = "SIZE SWEEP (" + std::string(kSweepProbeKey) + ", median GB/s by copy size)\n";
  for (const std::string& name : names) {
    std::vector<const Measurement*>& points = curves[name];
    std::stable_sort(points.begin(), points.end(),
                     [](const Measurement* a, const Measurement* b) { return a->size_bytes < b->size_bytes; });
    std::string line = terminal_text(name) + ":";
    for (std::size_t i = 0; i < points.size(); ++i) {
      line += (i == 0 ? " " : ", ") + binary_size_text(static_cast<double>(points[i]->size_bytes)) + " " +
              fixed_text(points[i]->stats.median_gbps, 2);
    }
    out += line + "\n";
  }
  return out;
}

// Probes that did not run as asked, and probes that ran but warned, then the
// count of each outcome.
std::string probes_section(const std::vector<ProbeRun>& probes) {
  std::string out;
  int ran = 0;
  int skipped = 0;
  int failed = 0;
  for (const ProbeRun& probe : probes) {
    ran += probe.status == ProbeStatus::kRan ? 1 : 0;
    skipped += probe.status == ProbeStatus::kSkipped ? 1 : 0;
    failed += probe.status == ProbeStatus::kFailed ? 1 : 0;
    if (probe.status == ProbeStatus::kRan && probe.warnings.empty()) continue;
    std::string line = "probe " + terminal_text(probe.key) + " " + std::string(to_string(probe.status));
    if (probe.status == ProbeStatus::kRan) line += " with warnings";
    if (!probe.reason.empty()) line += ": " + terminal_text(probe.reason);
    out += line + "\n";
    for (const std::string& warning : probe.warnings) out += "  warning: " + terminal_text(warning) + "\n";
  }
  out += "probes: " + std::to_string(ran) + " ran, " + std::to_string(skipped) + " skipped, " + std::to_string(failed) +
         " failed\n";
  return out;
}

}  // namespace

std::string render_check_table(const Results& results, std::span<const BandwidthBudget> budgets,
                               std::span<const ShownLink> shown_links, std::span<const LoadedLink> loaded_links) {
  std::vector<Row> rows;
  rows.push_back(Row{"DEVICE", "KIND", "PATH", "EXPECTED", "NEGOTIATED", "VERDICT"});
  for (const DeviceRecord& record : results.evidence.devices) {
    rows.push_back(device_row(results, record, shown_links, loaded_links));
  }

  std::string out = aligned(rows);
  if (results.evidence.devices.empty()) {
    // A kernel log alone names devices in its events, not in records: "no
    // devices found" would be false there.
    out += results.evidence.captured_events.empty()
               ? "(no PCIe device with a link in the evidence)\n"
               : "(no device record with a link: the devices below are named only by kernel log events)\n";
  }

  // The measurement engine's part, each section only when it has something.
  const Evidence& evidence = results.evidence;
  for (const std::string& section :
       {measurements_table(evidence.measurements, budgets), sweep_section(evidence.measurements),
        evidence.probes.empty() ? std::string() : probes_section(evidence.probes)}) {
    if (!section.empty()) out += "\n" + section;
  }

  bool first = true;
  for (const Verdict& verdict : results.verdicts) {
    if (verdict.status == VerdictStatus::kPass) continue;
    if (first) out += '\n';
    first = false;
    out += terminal_text(verdict.subject) + ": " + std::string(to_string(verdict.status)) + " [" +
           std::string(to_string(verdict.code)) + "] " + terminal_text(verdict.reason) + "\n";
    if (!verdict.remediation.empty()) out += "  -> " + terminal_text(verdict.remediation) + "\n";
  }

  // Caveats found while reading (hwloc and sysfs disagreeing, unreadable
  // identity files) belong beside the verdicts, not only in the JSON.
  first = true;
  for (const DeviceRecord& record : results.evidence.devices) {
    for (const std::string& note : record.notes) {
      if (first) out += '\n';
      first = false;
      out += to_string(record.function.bdf) + ": note: " + terminal_text(note) + "\n";
    }
  }

  if (!results.summary.empty()) out += "\n" + terminal_text(results.summary) + "\n";
  return out;
}

}  // namespace pcieval
