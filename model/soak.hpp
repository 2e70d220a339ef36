// A soak: the verdict probes repeated round after round for a duration or a
// count (`check --duration`, `--rounds`), because the downgrades pcieval
// hunts often appear only after minutes under load (a slot warms up, a link
// retrains) and a check at a cold start misses them.
#pragma once

#include <optional>
#include <vector>

#include "model/measurement.hpp"
#include "model/samples.hpp"

namespace pcieval {

// One complete round: every verdict probe ran once. A round cut short by a
// signal is not kept, so each round's numbers are comparable with the others.
struct SoakRound {
  int index = 0;       // 1, 2, ...
  double start_s = 0;  // seconds since the soak started: the clock of link_samples' t_s
  double end_s = 0;
  std::vector<Measurement> measurements;
  // Counters that rose during this round only (a counter that did not move
  // is left out: a long soak would otherwise repeat every port every round).
  std::vector<CounterDelta> counters;
};

struct SoakRecord {
  std::optional<int> requested_rounds;         // --rounds
  std::optional<double> requested_duration_s;  // --duration
  // False in a document flushed between rounds: a run that crashed or lost
  // power leaves one that says so.
  bool finished = false;
  std::vector<SoakRound> rounds;
};

}  // namespace pcieval
