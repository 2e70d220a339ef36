// The human table of `pcieval check`.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "model/bandwidth_budget.hpp"
#include "model/results.hpp"

namespace pcieval {

// What the validator holds a device's shown link to where that is not the
// lower of both ends' capabilities (an emulated port above it, or no port
// above it in the evidence): the EXPECTED column shows it, and NEGOTIATED the
// device's own state when the row has no path to show.
struct ShownLink {
  std::string subject;  // the device's address
  std::string expected;
  std::string negotiated;
};

// A link of a GPU's path as a live check read it under load: the state the
// verdicts hold it to (validate/ computes it; report/ does not depend on
// validate/). Discovery reads an idle GPU, which lowers its link on purpose,
// so its reading alone would show Gen1 beside a verdict about Gen3 under load.
struct LoadedLink {
  PciAddress port;  // the link's downstream end
  LinkState state;
};

// One row per device of the evidence (DEVICE, KIND, PATH, EXPECTED,
// NEGOTIATED, VERDICT). When the evidence holds the measurement engine's part,
// then:
// - one row per measurement other than the size sweep (probe "sweep_ce"), in
//   evidence order: PROBE, SUBJECT, DIR, SIZE (binary units, "256 MiB"),
//   MEDIAN GB/s, MIN, MAX, CV %, HOST NUMA ("0 local", "1 remote", "0" when
//   locality is unknown, "-" when not recorded) and BUDGET: "57.6 (Gen5 x16)"
//   from the first of `budgets` whose subject and direction match a per-GPU
//   row (aggregation alone, with_peers or with_reverse), blank otherwise;
// - the size sweep as one line per subject, direction, host memory and
//   aggregation: each size with its median GB/s, smallest size first;
// - every probe that was skipped or failed with its reason and warnings, a
//   probe that ran with warnings with those, and one line counting the probes
//   by outcome.
// Then every verdict that is not a pass with its remediation, the devices'
// notes, and the summary line. Evidence without probes or measurements gives
// the device table, verdicts, notes and summary alone. Plain ASCII, columns as
// wide as their content, no trailing spaces, every line ending in a newline.
// Text from a document, a capture or an argument as a terminal may print it:
// one line of printable ASCII. Every code point outside U+0020..U+007E (C0
// controls with newline and tab, DEL, C1 controls such as U+009B CSI, and
// everything above, whose UTF-8 bytes a Latin-1 terminal would read as C1)
// becomes one '?', as does each byte that is not well-formed UTF-8. A reason
// of "ok \x1b[1A\x1b[2K\rpcieval: pass" then cannot move the cursor or
// redraw what the operator reads, and a newline cannot forge a line.
// pcieval's own text is ASCII, so only foreign text changes.
[[nodiscard]] std::string terminal_text(std::string_view text);

// terminal_text for text of several lines (a rendered tree): each line made
// safe, the newlines between them kept.
[[nodiscard]] std::string terminal_lines(std::string_view text);

// NEGOTIATED shows the state under load of `loaded_links`, marked "(under
// load)", where it differs from the reading of discovery.
[[nodiscard]] std::string render_check_table(const Results& results, std::span<const BandwidthBudget> budgets = {},
                                             std::span<const ShownLink> shown_links = {},
                                             std::span<const LoadedLink> loaded_links = {});

}  // namespace pcieval
