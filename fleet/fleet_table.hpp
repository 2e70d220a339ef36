// The human table of a fleet: what `pcieval fleet merge` and rank 0 of an MPI
// fleet run print.
#pragma once

#include <string>

#include "fleet/fleet.hpp"

namespace pcieval {

// One row per node (HOST, VERDICT, EXIT, REASON: the node's summary without
// its "pcieval <overall>: " prefix), then the outliers (HOST, GPU, MODEL,
// LINK, PROBE, MEDIAN GB/s, GROUP MEDIAN, THRESHOLD, GROUP) or a line saying
// there are none and how many GPUs and groups were compared, then the groups
// too small to judge, the problems (unreadable inputs, duplicate hosts) and
// the summary line. Plain ASCII, columns as wide as their content, no
// trailing spaces, every line ending in a newline.
[[nodiscard]] std::string render_fleet_table(const Fleet& fleet);

}  // namespace pcieval
