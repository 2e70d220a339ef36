#include "fleet/fleet_html.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "fleet/fleet_overview.hpp"
#include "report/html_page.hpp"

namespace pcieval {
namespace {

// The page helpers (escape, sections, number text) the node page shares.
using html::escape;
using html::none;
using html::number_text;
using html::overall_class;
using html::section_open;

// The fleet page's own rules (the strip plots), after the base the node
// page starts from too (html::base_page_style), so both read alike.
constexpr std::string_view kStyle = R"(
svg.strip{width:760px;max-width:100%;height:auto;background:#fff;border:1px solid #d5d9df;border-radius:6px}
svg .band{fill:#f6f7f9}svg .grid{stroke:#eceff2}svg .tick,svg .row-note{font-size:10.5px;fill:#4a5561}
svg .row-label{font-size:12px;fill:#1d232b}svg .axis{font-size:11.5px;fill:#1d232b}
svg .dot{fill:#0072b2;fill-opacity:.75}svg .density{fill:#0072b2;fill-opacity:.6}svg .dot.outlier{fill:#b3261e;fill-opacity:1}
svg .median{stroke:#1d232b;stroke-width:2}svg .threshold{stroke:#b3261e;stroke-width:1.5;stroke-dasharray:4 3}
)";

std::string status_span(Overall overall) {
  return "<span class=\"status " + std::string(overall_class(overall)) + "\">" + std::string(to_string(overall)) +
         "</span>";
}

std::string plural(std::size_t count, std::string_view word) {
  return std::to_string(count) + " " + std::string(word) + (count == 1 ? "" : "s");
}

std::string_view exit_meaning(int exit_code) {
  switch (exit_code) {
    case kExitPass:
      return "every node passes";
    case kExitFail:
      return "a node fails";
    case kExitUsage:
      return "an input could not be read, or a node's check errored";
    case kExitInconclusive:
      return "a node is inconclusive";
    default:
      return "unknown";
  }
}

std::string direction_text(Direction direction) { return std::string(to_string(direction)); }

// ---- verdict --------------------------------------------------------------

std::string verdict_section(const Fleet& fleet) {
  std::size_t pass = 0;
  std::size_t fail = 0;
  std::size_t inconclusive = 0;
  std::vector<std::string> failing;
  for (const FleetNode& node : fleet.nodes) {
    switch (node.overall) {
      case Overall::kPass:
        ++pass;
        break;
      case Overall::kFail:
        ++fail;
        failing.push_back(node.host);
        break;
      case Overall::kInconclusive:
        ++inconclusive;
        break;
    }
  }
  std::string word(to_string(fleet.overall));
  std::transform(word.begin(), word.end(), word.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  std::string out = "<section id=\"verdict\" class=\"" + std::string(overall_class(fleet.overall)) +
                    "\">\n<div class=\"result-word\">" + word + "</div>\n";
  out += "<p class=\"summary\">" + escape(fleet.summary) + "</p>\n";
  out += "<p class=\"meta\" id=\"node-counts\"><b>" + grouped_count(fleet.nodes.size()) +
         (fleet.nodes.size() == 1 ? " node" : " nodes") + "</b>: " + grouped_count(pass) + " pass, " +
         grouped_count(fail) + " fail, " + grouped_count(inconclusive) + " inconclusive &middot; exit code <b>" +
         std::to_string(fleet.exit_code) + "</b> (" + std::string(exit_meaning(fleet.exit_code)) + ") &middot; " +
         plural(fleet.outliers.size(), "outlier GPU") + "</p>\n";
  out += "<p class=\"meta\">launch " + escape(fleet.launch) + " &middot; " + escape(fleet.tool.name) + " " +
         escape(fleet.tool.version) + "</p>\n</section>\n";
  return out;
}

// ---- nodes ----------------------------------------------------------------

std::string node_row(const FleetNode& node) {
  return "<tr><td class=\"mono\">" + escape(node.host) + "</td><td>" + status_span(node.overall) +
         "</td><td class=\"num\">" + std::to_string(node.exit_code) + "</td><td>" + escape(row_reason(node)) +
         "</td><td class=\"mono\">" + escape(node.source) + "</td></tr>\n";
}

// A small fleet: every node in host order. A large one: the nodes that need
// a look (failing first), then the passing rest counted per kind of node.
std::string nodes_section(const Fleet& fleet, const FleetOverview& overview) {
  std::string out = section_open("nodes", "Nodes");
  if (fleet.nodes.empty()) return out + none("No node in this fleet document.") + "</section>\n";
  std::size_t passing = 0;
  for (const PassingKind& kind : overview.passing) passing += kind.nodes;
  if (!overview.every_node) {
    out += "<p class=\"meta\" id=\"node-overview\"><b>" + grouped_count(overview.listed.size() + overview.not_listed) +
           " of " + grouped_count(fleet.nodes.size()) +
           " nodes need a look</b> (failing first, then an outlier GPU, unreadable, inconclusive); the " +
           grouped_count(passing) + " passing nodes without an outlier GPU are counted by GPUs and link below.</p>\n";
  }
  if (overview.listed.empty()) {
    out += none("No node needs a look.");
  } else {
    out +=
        "<div class=\"scroll\"><table id=\"node-table\">\n<tr><th>host</th><th>overall</th><th>exit</th>"
        "<th>reason</th><th>source</th></tr>\n";
    for (const FleetNode* node : overview.listed) out += node_row(*node);
    out += "</table></div>\n";
  }
  if (overview.not_listed > 0) {
    out += "<p class=\"meta\">+" + grouped_count(overview.not_listed) +
           " more nodes that need a look: the fleet document (JSON) lists every node.</p>\n";
  }
  if (overview.every_node) return out + "</section>\n";
  out += "<h3>Passing nodes without an outlier GPU</h3>\n";
  if (overview.passing.empty()) return out + none("None.") + "</section>\n";
  out +=
      "<div class=\"scroll\"><table id=\"passing-kinds\">\n<tr><th>nodes</th><th>GPUs per node</th>"
      "<th>expected link</th><th>hosts</th></tr>\n";
  for (const PassingKind& kind : overview.passing) {
    out += "<tr><td class=\"num\"><b>" + grouped_count(kind.nodes) + "</b></td><td>" + escape(kind.gpus) + "</td><td>" +
           escape(kind.link) + "</td><td class=\"mono\">" + escape(kind.first_host) +
           (kind.nodes > 1 ? " &hellip; " + escape(kind.last_host) : std::string()) + "</td></tr>\n";
  }
  return out + "</table></div>\n</section>\n";
}

// ---- outliers -------------------------------------------------------------

std::string rule_text(const OutlierRule& rule) {
  return "An outlier's median is below the group median &minus; " + number_text(rule.k) +
         " &times; 1.4826 &times; MAD " + "and below " + number_text(rule.max_fraction_of_median * 100, 0) +
         " % of the group median; a group is one GPU model, expected link, probe and direction across the fleet, "
         "judged from " +
         std::to_string(rule.min_group_size) + " GPUs. Outliers do not change the exit code.";
}

std::string outliers_section(const Fleet& fleet, std::size_t max_rows) {
  std::string out = section_open("outliers", "Outliers");
  out += "<p class=\"meta\">" + rule_text(fleet.rule) + "</p>\n";
  if (fleet.outliers.empty()) {
    std::size_t compared = 0;
    std::size_t judged = 0;
    for (const FleetGroup& group : fleet.groups) {
      if (!group.judged) continue;
      ++judged;
      compared += group.gpus;
    }
    return out +
           none("No outlier: " + std::to_string(compared) + " GPU medians compared in " + plural(judged, "group") +
                ".") +
           "</section>\n";
  }
  out +=
      "<div class=\"scroll\"><table id=\"outlier-table\">\n<tr><th>GPU</th><th>node</th><th>model</th><th>link</th>"
      "<th>probe</th><th>direction</th><th>median GB/s</th><th>group median GB/s</th><th>threshold GB/s</th>"
      "<th>group</th></tr>\n";
  for (std::size_t i = 0; i < fleet.outliers.size() && i < max_rows; ++i) {
    const FleetOutlier& o = fleet.outliers[i];
    out += "<tr><td class=\"mono\">" + escape(o.gpu) + "</td><td class=\"mono\">" + escape(o.host) + "</td><td>" +
           escape(o.model) + "</td><td>" + escape(o.link) + "</td><td>" + escape(o.probe) + "</td><td>" +
           direction_text(o.direction) + "</td><td class=\"num\"><b>" + number_text(o.median_gbps) +
           "</b></td><td class=\"num\">" + number_text(o.group_median_gbps) + "</td><td class=\"num\">" +
           number_text(o.threshold_gbps) + "</td><td class=\"num\">" + plural(o.group_gpus, "GPU") + "</td></tr>\n";
  }
  out += "</table></div>\n";
  if (fleet.outliers.size() > max_rows) {
    out += "<p class=\"meta\">+" + grouped_count(fleet.outliers.size() - max_rows) +
           " more outliers: the fleet document (JSON) lists them all.</p>\n";
  }
  return out + "</section>\n";
}

std::string small_groups_section(const Fleet& fleet) {
  std::string out = section_open("small-groups", "Groups too small to judge");
  std::string rows;
  for (const FleetGroup& group : fleet.groups) {
    if (group.judged) continue;
    rows += "<tr><td>" + escape(group.model) + "</td><td class=\"mono\">" + escape(group.device_id) + "</td><td>" +
            escape(group.link) + "</td><td>" + escape(group.probe) + "</td><td>" + direction_text(group.direction) +
            "</td><td class=\"num\">" + plural(group.gpus, "GPU") + "</td><td class=\"num\">" +
            number_text(group.median_gbps) + "</td></tr>\n";
  }
  if (rows.empty()) return out + none("Every group had enough GPUs to judge.") + "</section>\n";
  out += "<p class=\"meta\">Fewer than " + plural(fleet.rule.min_group_size, "GPU") +
         ": their median and MAD say too little, so no GPU of these is called an outlier.</p>\n";
  out +=
      "<div class=\"scroll\"><table id=\"small-group-table\">\n<tr><th>model</th><th>device id</th><th>link</th>"
      "<th>probe</th><th>direction</th><th>GPUs</th><th>median GB/s</th></tr>\n" +
      rows + "</table></div>\n";
  return out + "</section>\n";
}

std::string problems_section(const Fleet& fleet, std::size_t max_rows) {
  std::string out = section_open("problems", "Inputs not used");
  if (fleet.problems.empty()) return out + none("Every input was read; no host appeared twice.") + "</section>\n";
  out += "<ul id=\"problem-list\">\n";
  for (std::size_t i = 0; i < fleet.problems.size() && i < max_rows; ++i) {
    out += "<li class=\"mono\">" + escape(fleet.problems[i]) + "</li>\n";
  }
  out += "</ul>\n";
  if (fleet.problems.size() > max_rows) {
    out += "<p class=\"meta\">+" + grouped_count(fleet.problems.size() - max_rows) +
           " more: the fleet document (JSON) lists them all.</p>\n";
  }
  return out + "</section>\n";
}

// The fleet all-reduce of an MPI run; a merge has none and shows nothing.
std::string allreduce_section(const Fleet& fleet) {
  if (!fleet.allreduce) return {};
  std::string out = section_open("allreduce", "All-reduce across the fleet");
  out += "<p id=\"allreduce-line\">" + escape(describe_fleet_allreduce(*fleet.allreduce)) + "</p>\n";
  if (fleet.allreduce->notes.empty()) return out + "</section>\n";
  out += "<ul id=\"allreduce-notes\">\n";
  for (const std::string& note : fleet.allreduce->notes) out += "<li class=\"mono\">" + escape(note) + "</li>\n";
  return out + "</ul>\n</section>\n";
}

// ---- strip plots ----------------------------------------------------------

struct Dot {
  const std::string* host = nullptr;
  const std::string* gpu = nullptr;
  double median_gbps = 0;
  bool outlier = false;
};

using GroupKey = std::tuple<std::string, std::string, std::string, Direction>;  // device id, link, probe, direction

constexpr double kWidth = 760;
constexpr double kLeft = 170;
constexpr double kRight = 24;
constexpr double kTop = 12;
constexpr double kRowHeight = 44;
constexpr double kBottom = 40;

constexpr std::size_t kMaxDotsPerRow = 400;
constexpr std::size_t kDensityBins = 120;

// The GPUs of a row that are not outliers as a histogram over [lo, hi].
std::string density_strip(const std::vector<Dot>& row, double top, double lo, double hi, double plot_w) {
  std::vector<std::size_t> counts(kDensityBins, 0);
  const double bin_gbps = (hi - lo) / static_cast<double>(kDensityBins);
  for (const Dot& d : row) {
    if (d.outlier || !std::isfinite(d.median_gbps)) continue;
    const double at = std::floor((d.median_gbps - lo) / bin_gbps);
    counts[static_cast<std::size_t>(std::clamp(at, 0.0, static_cast<double>(kDensityBins - 1)))]++;
  }
  const std::size_t fullest = *std::max_element(counts.begin(), counts.end());
  std::string out;
  const double bin_w = plot_w / static_cast<double>(kDensityBins);
  const double max_h = kRowHeight - 10;
  for (std::size_t b = 0; b < counts.size(); ++b) {
    if (counts[b] == 0) continue;
    const double h = std::max(1.5, max_h * static_cast<double>(counts[b]) / static_cast<double>(fullest));
    const double from = lo + bin_gbps * static_cast<double>(b);
    out += "<rect class=\"density\" x=\"" + number_text(kLeft + bin_w * static_cast<double>(b), 1) + "\" y=\"" +
           number_text(top + kRowHeight / 2 - h / 2, 1) + "\" width=\"" + number_text(bin_w, 2) + "\" height=\"" +
           number_text(h, 1) + "\"><title>" + plural(counts[b], "GPU") + " at " + number_text(from) + " to " +
           number_text(from + bin_gbps) + " GB/s</title></rect>\n";
  }
  return out;
}

// One SVG for one model and link: a row per probe and direction, each GPU's
// median a dot (outliers red and larger), the group median a solid mark and,
// when judged, the threshold dashed. Dots are spread over the row's height
// in a fixed pattern so that equal medians stay countable.
std::string strip_plot(const std::string& title, const std::vector<const FleetGroup*>& groups,
                       const std::map<GroupKey, std::vector<Dot>>& dots) {
  double lo = INFINITY;
  double hi = -INFINITY;
  const auto widen = [&](double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  };
  static const std::vector<Dot> kNoDots;
  const auto dots_of = [&](const FleetGroup& g) -> const std::vector<Dot>& {
    const auto it = dots.find(GroupKey{g.device_id, g.link, g.probe, g.direction});
    return it == dots.end() ? kNoDots : it->second;
  };
  for (const FleetGroup* g : groups) {
    widen(g->median_gbps);
    if (g->judged) widen(g->threshold_gbps);
    for (const Dot& d : dots_of(*g)) widen(d.median_gbps);
  }
  if (!(lo <= hi)) {
    lo = 0;
    hi = 1;
  }
  // At least 10 % of the top value wide (1 GB/s at the least), so that a
  // tight group's spread of a few hundredths looks as small as it is.
  const double min_span = std::max(1.0, 0.1 * std::fabs(hi));
  if (hi - lo < min_span) {
    const double centre = (lo + hi) / 2;
    lo = centre - min_span / 2;
    hi = centre + min_span / 2;
  }
  const double pad = 0.06 * (hi - lo);
  lo -= pad;
  hi += pad;
  const double plot_w = kWidth - kLeft - kRight;
  const double height = kTop + kRowHeight * static_cast<double>(groups.size()) + kBottom;
  const auto x_of = [&](double v) { return number_text(kLeft + (v - lo) / (hi - lo) * plot_w, 1); };

  std::string out = "<svg class=\"strip\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
                    number_text(kWidth, 0) + " " + number_text(height, 0) + "\" role=\"img\" aria-label=\"" +
                    escape(title) + "\">\n";
  const double plot_bottom = kTop + kRowHeight * static_cast<double>(groups.size());
  // Ticks at 1, 2 or 5 times a power of ten, about five of them.
  const double raw_step = (hi - lo) / 5;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw_step)));
  double step = 10 * magnitude;
  for (const double factor : {1.0, 2.0, 5.0}) {
    if (raw_step <= factor * magnitude) {
      step = factor * magnitude;
      break;
    }
  }
  const int decimals = step >= 1 ? 0 : step >= 0.1 ? 1 : 2;
  for (double v = std::ceil(lo / step) * step; v <= hi; v += step) {
    const std::string x = x_of(v);
    out += "<line class=\"grid\" x1=\"" + x + "\" y1=\"" + number_text(kTop, 0) + "\" x2=\"" + x + "\" y2=\"" +
           number_text(plot_bottom, 0) + "\"/><text class=\"tick\" x=\"" + x + "\" y=\"" +
           number_text(plot_bottom + 14, 0) + "\" text-anchor=\"middle\">" + number_text(v, decimals) + "</text>\n";
  }
  out += "<text class=\"axis\" x=\"" + number_text(kLeft + plot_w / 2, 0) + "\" y=\"" +
         number_text(plot_bottom + 32, 0) + "\" text-anchor=\"middle\">median GB/s (1e9 B/s) of each GPU</text>\n";
  for (std::size_t r = 0; r < groups.size(); ++r) {
    const FleetGroup& g = *groups[r];
    const double top = kTop + kRowHeight * static_cast<double>(r);
    const double mid = top + kRowHeight / 2;
    out += "<rect class=\"band\" x=\"" + number_text(kLeft, 0) + "\" y=\"" + number_text(top + 3, 0) + "\" width=\"" +
           number_text(plot_w, 0) + "\" height=\"" + number_text(kRowHeight - 6, 0) + "\"/>\n";
    out += "<text class=\"row-label\" x=\"" + number_text(kLeft - 8, 0) + "\" y=\"" + number_text(mid - 2, 0) +
           "\" text-anchor=\"end\">" + escape(g.probe) + " " + direction_text(g.direction) + "</text>";
    out += "<text class=\"row-note\" x=\"" + number_text(kLeft - 8, 0) + "\" y=\"" + number_text(mid + 12, 0) +
           "\" text-anchor=\"end\">" + plural(g.gpus, "GPU") + (g.judged ? "" : ", not judged") + "</text>\n";
    if (g.judged && std::isfinite(g.threshold_gbps)) {
      const std::string x = x_of(g.threshold_gbps);
      out += "<line class=\"threshold\" x1=\"" + x + "\" y1=\"" + number_text(top + 4, 0) + "\" x2=\"" + x +
             "\" y2=\"" + number_text(top + kRowHeight - 4, 0) + "\"><title>threshold " +
             number_text(g.threshold_gbps) + " GB/s</title></line>\n";
    }
    const std::vector<Dot>& row = dots_of(g);
    // Past kMaxDotsPerRow a dot per GPU makes a page of megabytes that shows
    // one blot: the GPUs that are not outliers become a histogram of
    // kDensityBins columns, each as tall as its share of the fullest one.
    const bool dense = row.size() > kMaxDotsPerRow;
    if (dense) out += density_strip(row, top, lo, hi, plot_w);
    for (std::size_t i = 0; i < row.size(); ++i) {
      const Dot& d = row[i];
      if (!std::isfinite(d.median_gbps) || (dense && !d.outlier)) continue;
      const double y = mid + 4.0 * (static_cast<double>(i % 7) - 3.0);
      out += "<circle class=\"dot" + std::string(d.outlier ? " outlier" : "") + "\" cx=\"" + x_of(d.median_gbps) +
             "\" cy=\"" + number_text(y, 1) + "\" r=\"" + (d.outlier ? "5" : "3.5") + "\"><title>" + escape(*d.host) +
             " " + escape(*d.gpu) + ": " + number_text(d.median_gbps) + " GB/s" + (d.outlier ? " (outlier)" : "") +
             "</title></circle>\n";
    }
    if (std::isfinite(g.median_gbps)) {
      const std::string x = x_of(g.median_gbps);
      out += "<line class=\"median\" x1=\"" + x + "\" y1=\"" + number_text(top + 4, 0) + "\" x2=\"" + x + "\" y2=\"" +
             number_text(top + kRowHeight - 4, 0) + "\"><title>group median " + number_text(g.median_gbps) +
             " GB/s</title></line>\n";
    }
  }
  return out + "</svg>\n";
}

std::string medians_section(const Fleet& fleet) {
  std::string out = section_open("medians", "GPU medians by model and link");
  if (fleet.groups.empty()) return out + none("No per-GPU copy-engine median in this fleet.") + "</section>\n";
  out +=
      "<p class=\"meta\">One dot per GPU (h2d_ce and d2h_ce medians, copies taken alone); the solid mark is the "
      "group median, the dashed one the outlier threshold of a judged group; outliers are red. A row of more than " +
      std::to_string(kMaxDotsPerRow) +
      " GPUs shows the GPUs that are not outliers as a histogram (hover a bar for its count).</p>\n";

  std::set<std::tuple<std::string, std::string, std::string, Direction>> outliers;
  for (const FleetOutlier& o : fleet.outliers) outliers.emplace(o.host, o.gpu, o.probe, o.direction);
  std::map<GroupKey, std::vector<Dot>> dots;
  for (const FleetNode& node : fleet.nodes) {
    for (const FleetGpuMeasurement& m : node.gpus) {
      const bool outlier = outliers.contains({node.host, m.gpu, m.probe, m.direction});
      dots[GroupKey{m.device_id, m.link, m.probe, m.direction}].push_back(
          Dot{&node.host, &m.gpu, m.median_gbps, outlier});
    }
  }
  // Groups of one model and link side by side, in the document's order.
  std::vector<std::pair<std::pair<std::string, std::string>, std::vector<const FleetGroup*>>> plots;
  for (const FleetGroup& group : fleet.groups) {
    const std::pair<std::string, std::string> key{group.device_id, group.link};
    const auto it = std::find_if(plots.begin(), plots.end(), [&](const auto& p) { return p.first == key; });
    if (it == plots.end()) {
      plots.push_back({key, {&group}});
    } else {
      it->second.push_back(&group);
    }
  }
  for (const auto& [key, groups] : plots) {
    const std::string title = groups.front()->model + " (" + key.first + "), " + key.second;
    out += "<h3>" + escape(title) + "</h3>\n" + strip_plot(title, groups, dots);
  }
  return out + "</section>\n";
}

}  // namespace

std::string render_fleet_html(const Fleet& fleet) {
  std::string word(to_string(fleet.overall));
  std::string out = html::page_open("pcieval fleet: " + word + ", " + plural(fleet.nodes.size(), "node"), kStyle,
                                    "pcieval fleet", html::HeadOrder::kViewportFirst);
  const FleetOverview overview = overview_of(fleet);
  // A large fleet's long lists are cut so the page stays small enough to
  // open at once; the fleet document has them whole.
  const std::size_t max_rows = overview.every_node ? fleet.outliers.size() + fleet.problems.size() : kMaxListedRows;
  out += verdict_section(fleet);
  out += nodes_section(fleet, overview);
  out += outliers_section(fleet, max_rows);
  out += small_groups_section(fleet);
  out += problems_section(fleet, max_rows);
  out += allreduce_section(fleet);
  out += medians_section(fleet);
  out += html::page_close();
  return out;
}

}  // namespace pcieval
