#include "fleet/fleet_table.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace pcieval {
namespace {

using Row = std::vector<std::string>;

// Columns padded to their widest cell; the last column is never padded, so
// no line has trailing spaces.
std::string render_rows(const std::vector<Row>& rows) {
  std::vector<std::size_t> widths;
  for (const Row& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string text;
  for (const Row& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    text += line + "\n";
  }
  return text;
}

std::string fixed2(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

// Host names, reasons and models come from files: keep them to one printable
// ASCII line so a hostile document cannot move the terminal's cursor.
std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    out += byte >= 0x20 && byte < 0x7f ? c : '?';
  }
  return out;
}

std::string short_reason(const FleetNode& node) {
  const std::string prefix = "pcieval " + std::string(to_string(node.overall)) + ": ";
  const std::string& reason = node.reason;
  return printable(reason.starts_with(prefix) ? reason.substr(prefix.size()) : reason);
}

}  // namespace

std::string render_fleet_table(const Fleet& fleet) {
  std::vector<Row> nodes{{"HOST", "VERDICT", "EXIT", "REASON"}};
  for (const FleetNode& node : fleet.nodes) {
    nodes.push_back({printable(node.host), std::string(to_string(node.overall)), std::to_string(node.exit_code),
                     short_reason(node)});
  }
  std::string text = render_rows(nodes);

  std::size_t compared = 0;
  std::size_t judged = 0;
  std::vector<const FleetGroup*> small;
  for (const FleetGroup& group : fleet.groups) {
    if (group.judged) {
      ++judged;
      compared += group.gpus;
    } else {
      small.push_back(&group);
    }
  }
  text += "\n";
  if (fleet.outliers.empty()) {
    text += "no outlier: " + std::to_string(compared) + " GPU medians compared in " + std::to_string(judged) +
            " group" + (judged == 1 ? "" : "s") + "\n";
  } else {
    std::vector<Row> rows{
        {"HOST", "GPU", "MODEL", "LINK", "PROBE", "MEDIAN GB/s", "GROUP MEDIAN", "THRESHOLD", "GROUP"}};
    for (const FleetOutlier& o : fleet.outliers) {
      rows.push_back({printable(o.host), printable(o.gpu), printable(o.model), printable(o.link), printable(o.probe),
                      fixed2(o.median_gbps), fixed2(o.group_median_gbps), fixed2(o.threshold_gbps),
                      std::to_string(o.group_gpus) + " GPUs"});
    }
    text += "outliers: below median - " + fixed2(fleet.rule.k) + " x 1.4826 x MAD and below " +
            std::to_string(static_cast<int>(fleet.rule.max_fraction_of_median * 100 + 0.5)) +
            " % of the median of the same model, link, probe and direction\n";
    text += render_rows(rows);
  }
  for (const FleetGroup* group : small) {
    text += "not judged for outliers: " + printable(group->model) + " " + printable(group->link) + " " +
            printable(group->probe) + ": " + std::to_string(group->gpus) + " GPU" + (group->gpus == 1 ? "" : "s") +
            ", fewer than " + std::to_string(fleet.rule.min_group_size) + "\n";
  }
  if (fleet.allreduce) text += "\n" + printable(describe_fleet_allreduce(*fleet.allreduce)) + "\n";
  if (!fleet.problems.empty()) text += "\n";
  for (const std::string& problem : fleet.problems) text += "problem: " + printable(problem) + "\n";
  text += "\n" + printable(fleet.summary) + "\n";
  return text;
}

}  // namespace pcieval
