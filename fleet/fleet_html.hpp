// The fleet page: the fleet document as one self-contained HTML file, what
// `pcieval fleet merge --html FILE` (and an MPI fleet run's --fleet-html)
// writes. Like report/html.hpp's node page it has inline CSS and inline SVG,
// no script, and a Content-Security-Policy that refuses any fetch, so it can be
// attached to a ticket and opened offline.
#pragma once

#include <string>

#include "fleet/fleet.hpp"

namespace pcieval {

// A pure function of the fleet. In order: the fleet verdict (section
// "verdict": the overall word, the worst exit code, how many nodes pass, fail
// and are inconclusive, the summary line), the nodes (section "nodes": host,
// overall, exit code, the one-line reason; above kListEveryNodeUpTo nodes
// only those that need a look, failing first, and a table "passing-kinds"
// counting the passing rest per kind of node), the outliers (section
// "outliers": host, GPU, model, link, probe, direction, median against the
// group median and threshold), the groups too small to judge (section
// "small-groups"), the inputs that could not be used (section "problems"),
// and per GPU model and expected link a strip plot of every GPU's median per
// probe and direction with the group median and threshold marked and the
// outliers drawn apart (section "medians"; a row of more than 400 GPUs draws
// the ones that are not outliers as a histogram). A large fleet's node,
// outlier and problem lists stop at kMaxListedRows, so a 10,000-node page
// stays a few hundred kilobytes. Every string of the fleet is
// escaped (html::escape): host names and reasons are data, never markup.
[[nodiscard]] std::string render_fleet_html(const Fleet& fleet);

}  // namespace pcieval
