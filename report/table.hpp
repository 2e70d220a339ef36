// The human table of `pcieval check`.
#pragma once

#include <span>
#include <string>

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
[[nodiscard]] std::string render_check_table(const Results& results, std::span<const BandwidthBudget> budgets = {},
                                             std::span<const ShownLink> shown_links = {});

}  // namespace pcieval
