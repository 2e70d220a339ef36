// Rules over time: a run cut short, and the rounds of a soak. A soak fails
// when a GPU's bandwidth dips in one round well below its own median over the
// soak, or when a hop of its path never reached its expected state under load
// in a round while it did in others: the downgrades that come and go with heat
// and retraining, which a single check at a cold start misses.
#pragma once

#include <vector>

#include "model/evidence.hpp"
#include "model/thresholds.hpp"
#include "model/verdict.hpp"

namespace pcieval {

// - evidence.interrupted, or a soak that did not finish: one `inconclusive`
//   verdict, subject "node", code run_interrupted.
// - Per GPU measurement (same probe, subject, direction, method, memory,
//   aggregation and size in every round) over 2 or more rounds: the round
//   whose median is furthest below the median of the rounds' medians, when it
//   is more than the GPU's baseline_max_drop_fraction below it, is a
//   `bandwidth_low` verdict, code bandwidth_dip_during_soak, naming the round
//   and its time. Host-only measurements (the host ceiling) are context and
//   are not judged.
// - Per hop of a GPU's path sampled under load in 2 or more rounds: a round
//   whose best loaded state is below the hop's expected state, when another
//   round reached it, is a `link_downgraded` verdict, code
//   link_dropped_during_soak (a hop low in every round is the link rules'
//   downgrade already).
[[nodiscard]] std::vector<Verdict> judge_soak(const Evidence& evidence, const ThresholdProfile& profile);

}  // namespace pcieval
