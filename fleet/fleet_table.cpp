#include "fleet/fleet_table.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "fleet/fleet_overview.hpp"
#include "report/table.hpp"

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
// ASCII line so a hostile document cannot move the terminal's cursor (the one
// rule every table pcieval prints follows: report/table.hpp).
std::string printable(const std::string& text) { return terminal_text(text); }

// The row's reason as the terminal may print it (printable: no control bytes).
std::string printable_reason(const FleetNode& node) { return printable(row_reason(node)); }

// A large fleet: the nodes that need a look, then the passing rest counted
// per kind of node.
std::string overview_text(const Fleet& fleet, const FleetOverview& overview) {
  const std::size_t look = overview.listed.size() + overview.not_listed;
  std::string text = grouped_count(look) + " of " + grouped_count(fleet.nodes.size()) +
                     " nodes need a look (failing, an outlier GPU, unreadable, inconclusive)" +
                     (look > 0 ? ":\n" : "\n");
  if (!overview.listed.empty()) {
    std::vector<Row> nodes{{"HOST", "VERDICT", "EXIT", "REASON"}};
    for (const FleetNode* node : overview.listed) {
      nodes.push_back({printable(node->host), std::string(to_string(node->overall)), std::to_string(node->exit_code),
                       printable_reason(*node)});
    }
    text += render_rows(nodes);
  }
  if (overview.not_listed > 0) {
    text += "+" + grouped_count(overview.not_listed) + " more: the fleet document (-o FILE) lists every node\n";
  }
  std::size_t passing = 0;
  for (const PassingKind& kind : overview.passing) passing += kind.nodes;
  text += "\n" + grouped_count(passing) + " passing nodes without an outlier GPU, by GPUs and expected link:\n";
  if (overview.passing.empty()) return text;
  std::vector<Row> rows{{"NODES", "GPUS", "LINK", "HOSTS"}};
  for (const PassingKind& kind : overview.passing) {
    rows.push_back({grouped_count(kind.nodes), printable(kind.gpus), printable(kind.link),
                    printable(kind.first_host) + (kind.nodes > 1 ? " .. " + printable(kind.last_host) : "")});
  }
  return text + render_rows(rows);
}

}  // namespace

std::string render_fleet_table(const Fleet& fleet) {
  const FleetOverview overview = overview_of(fleet);
  std::string text;
  if (overview.every_node) {
    std::vector<Row> nodes{{"HOST", "VERDICT", "EXIT", "REASON"}};
    for (const FleetNode* node : overview.listed) {
      nodes.push_back({printable(node->host), std::string(to_string(node->overall)), std::to_string(node->exit_code),
                       printable_reason(*node)});
    }
    text = render_rows(nodes);
  } else {
    text = overview_text(fleet, overview);
  }
  // A large fleet's long lists are cut; the fleet document has them whole.
  const std::size_t max_rows = overview.every_node ? fleet.outliers.size() + fleet.problems.size() : kMaxListedRows;

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
    for (std::size_t i = 0; i < fleet.outliers.size() && i < max_rows; ++i) {
      const FleetOutlier& o = fleet.outliers[i];
      rows.push_back({printable(o.host), printable(o.gpu), printable(o.model), printable(o.link), printable(o.probe),
                      fixed2(o.median_gbps), fixed2(o.group_median_gbps), fixed2(o.threshold_gbps),
                      std::to_string(o.group_gpus) + " GPUs"});
    }
    text += "outliers: below median - " + fixed2(fleet.rule.k) + " x 1.4826 x MAD and below " +
            std::to_string(static_cast<int>(fleet.rule.max_fraction_of_median * 100 + 0.5)) +
            " % of the median of the same model, link, probe and direction\n";
    text += render_rows(rows);
    if (fleet.outliers.size() > max_rows) {
      text += "+" + grouped_count(fleet.outliers.size() - max_rows) + " more outliers in the fleet document\n";
    }
  }
  for (const FleetGroup* group : small) {
    text += "not judged for outliers: " + printable(group->model) + " " + printable(group->link) + " " +
            printable(group->probe) + ": " + std::to_string(group->gpus) + " GPU" + (group->gpus == 1 ? "" : "s") +
            ", fewer than " + std::to_string(fleet.rule.min_group_size) + "\n";
  }
  if (fleet.allreduce) text += "\n" + printable(describe_fleet_allreduce(*fleet.allreduce)) + "\n";
  if (!fleet.problems.empty()) text += "\n";
  for (std::size_t i = 0; i < fleet.problems.size() && i < max_rows; ++i) {
    text += "problem: " + printable(fleet.problems[i]) + "\n";
  }
  if (fleet.problems.size() > max_rows) {
    text += "+" + grouped_count(fleet.problems.size() - max_rows) + " more problems in the fleet document\n";
  }
  text += "\n" + printable(fleet.summary) + "\n";
  return text;
}

}  // namespace pcieval
