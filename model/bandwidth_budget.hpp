// The link budget a measurement is shown beside, as every renderer (table,
// Prometheus, HTML) receives it.
#pragma once

#include <string>

#include "model/measurement.hpp"

namespace pcieval {

// The budget one per-GPU measurement is held against, for the BUDGET column,
// the budget metric and the chart's reference line. A budget is judgement
// (validate/ computes it from the link) and report/ depends on model/ only, so
// the caller hands it in.
struct BandwidthBudget {
  std::string subject;  // the measurement's subject: a GPU's address "0000:17:00.0"
  Direction direction = Direction::kHostToDevice;
  std::string link;  // the link state it is the budget of, "Gen5 x16"
  double budget_gbps = 0;
  // Below it the bandwidth rules fail a copy of the GPU alone (the profile's
  // floor_fraction of the budget); 0 when not known.
  double floor_gbps = 0;
};

}  // namespace pcieval
