// The HTML report: one self-contained page about one node, for the person
// investigating it.
#pragma once

#include <span>
#include <string>

#include "model/bandwidth_budget.hpp"
#include "model/results.hpp"
#include "report/table.hpp"

namespace pcieval {

// One HTML5 document, a pure function of its arguments: inline CSS and
// inline SVG only, no script, no URL to fetch (a Content-Security-Policy
// meta tag of default-src 'none' makes the browser refuse one anyway), so it
// can be mailed, attached to a ticket or opened offline. Sections, in order,
// each a <section> with a stable id:
// - "verdict": the overall result as a word (PASS, FAIL, INCONCLUSIVE) and a
//   colour, the summary line, host, tool and the count of verdicts by status;
// - "topology": every device with a path under its root port and switch
//   ports, each physical link labelled with its negotiated and expected state
//   and coloured by them (at expected, below expected, unknown; the word is
//   written too), and each device with the status of its verdicts;
// - "measurements": one table row per measurement but the size sweep, with
//   the budget from `budgets` (matched as render_check_table does) and the
//   median as a percentage of it; then every probe run with its status;
// - "curves": one SVG chart per subject and direction of the size sweep
//   (probe "sweep_ce"): median GB/s against copy size on a log axis, min-max
//   whiskers, the budget as a dashed line when `budgets` has one;
// - "samples": link samples over time, per port: negotiated speed (GT/s)
//   and width (lanes), one series per source, idle readings hollow;
// - "evidence": every verdict that is not a pass, failing ones first: status,
//   code, the link it names, reason, remediation, and the evidence of its
//   subject in the document (its path link by link, its measurements and
//   error counters).
// Then the document's notes. A section with nothing to show says so in a
// sentence. Every string taken from `results` is escaped (html::escape), so no
// hostname, model name or reason can add markup.
// `loaded_links`: each path link's state under load (a live check's): the
// topology's badges and the path tables show it, marked "under load", beside
// the reading of discovery. A median below its budget's floor is marked low.
[[nodiscard]] std::string render_html(const Results& results, std::span<const BandwidthBudget> budgets = {},
                                      std::span<const LoadedLink> loaded_links = {});

}  // namespace pcieval
