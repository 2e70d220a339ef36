// The human table of a fleet: what `pcieval fleet merge` and rank 0 of an MPI
// fleet run print.
#pragma once

#include <string>

#include "fleet/fleet.hpp"

namespace pcieval {

// One row per node (HOST, VERDICT, EXIT, REASON: the node's summary without
// its "pcieval <overall>: " prefix); above kListEveryNodeUpTo nodes
// (fleet_overview.hpp) only the nodes that need a look get a row, failing
// ones first, and the passing rest is counted per kind of node (NODES, GPUS,
// LINK, HOSTS). Then the outliers (HOST, GPU, MODEL,
// LINK, PROBE, MEDIAN GB/s, GROUP MEDIAN, THRESHOLD, GROUP) or a line saying
// there are none and how many GPUs and groups were compared, then the groups
// too small to judge, the problems (unreadable inputs, duplicate hosts) and
// the summary line. Plain ASCII, columns as wide as their content, no
// trailing spaces, every line ending in a newline. A large fleet's node,
// outlier and problem lists stop at kMaxListedRows, saying how many more the
// fleet document has.
[[nodiscard]] std::string render_fleet_table(const Fleet& fleet);

}  // namespace pcieval
