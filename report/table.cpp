#include "report/table.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

namespace pcieval {
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

using Row = std::array<std::string, 6>;

Row device_row(const Results& results, const DeviceRecord& record) {
  const std::string bdf = to_string(record.function.bdf);
  const Verdict* verdict = verdict_for(results.verdicts, bdf);

  std::string expected = "-";
  std::string negotiated = "-";
  if (verdict != nullptr && verdict->link) {
    // A verdict about a link the evidence does not hold cannot be shown
    // against another link's numbers.
    const Link* link = find_link(results, record, *verdict->link);
    expected = link != nullptr ? state_text(link->expected()) : "?";
    negotiated = link != nullptr ? state_text(link->negotiated()) : "?";
  } else if (!record.path.empty()) {
    expected = state_text(record.path.front().expected());
    negotiated = state_text(record.path.front().negotiated());
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

void append_row(std::string& out, const Row& row, const std::array<std::size_t, 6>& widths) {
  std::string line;
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (i > 0) line += kColumnGap;
    line += row[i];
    if (i + 1 < row.size()) line.append(widths[i] - row[i].size(), ' ');
  }
  out += line;
  out += '\n';
}

}  // namespace

std::string render_check_table(const Results& results) {
  std::vector<Row> rows;
  rows.push_back(Row{"DEVICE", "KIND", "PATH", "EXPECTED", "NEGOTIATED", "VERDICT"});
  for (const DeviceRecord& record : results.evidence.devices) rows.push_back(device_row(results, record));

  std::array<std::size_t, 6> widths{};
  for (const Row& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }

  std::string out;
  for (const Row& row : rows) append_row(out, row, widths);
  if (results.evidence.devices.empty()) out += "(no PCIe devices found)\n";

  bool first = true;
  for (const Verdict& verdict : results.verdicts) {
    if (verdict.status == VerdictStatus::kPass) continue;
    if (first) out += '\n';
    first = false;
    out += verdict.subject + ": " + std::string(to_string(verdict.status)) + " [" +
           std::string(to_string(verdict.code)) + "] " + verdict.reason + "\n";
    if (!verdict.remediation.empty()) out += "  -> " + verdict.remediation + "\n";
  }

  // Caveats found while reading (hwloc and sysfs disagreeing, unreadable
  // identity files) belong beside the verdicts, not only in the JSON.
  first = true;
  for (const DeviceRecord& record : results.evidence.devices) {
    for (const std::string& note : record.notes) {
      if (first) out += '\n';
      first = false;
      out += to_string(record.function.bdf) + ": note: " + note + "\n";
    }
  }

  if (!results.summary.empty()) out += "\n" + results.summary + "\n";
  return out;
}

}  // namespace pcieval
