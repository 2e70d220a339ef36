// The round rules of a measure run (measure_run.hpp): which rounds start,
// what each round leaves in the evidence, and how the run is closed. One
// round is a plain check; a soak (check --rounds, --duration) repeats the
// probes back to back. Pure: the runner does the measuring, the clocks and
// the counter reads, and hands each round's outcome here.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/probe.hpp"
#include "model/evidence.hpp"
#include "model/samples.hpp"

namespace pcieval {

// Which probes check runs (--quick, --full, --no-probes) and how often.
struct ProbeOptions {
  bool enabled = true;
  RunConfig config;      // mode quick unless --full
  bool progress = true;  // progress on stderr while probes run (off with --quiet)
  // A soak (--rounds, --duration): the probes again and again, back to back,
  // until the count or the time is reached; the round running at the
  // deadline finishes. Neither: one round, a plain check.
  std::optional<int> rounds;
  std::optional<double> duration_s;
  [[nodiscard]] bool soak() const { return rounds.has_value() || duration_s.has_value(); }
};

// What one round of the probes gave.
struct RoundOutcome {
  int index = 1;             // 1, 2, ...
  RoundMeasurements probes;  // probes.interrupted: a stop request skipped a probe of this round
  // The link samples taken during the round, on the run's clock (seconds
  // since it started, like start_s and end_s).
  std::vector<LinkSample> samples;
  double start_s = 0;
  double end_s = 0;
  // Error counters read before and after the round (soak rounds only);
  // only those that rose are kept.
  std::vector<CounterDelta> counters;
};

// Records the run's settings in the evidence, and an empty soak record
// (unfinished) when the options ask for a soak.
void begin_rounds(Evidence& evidence, const ProbeOptions& options);

// Whether round `index` starts, `elapsed_s` into the run: round 1 always; a
// later one only in a soak, while the count is not reached and the duration
// not over (the round running at the deadline finishes, none starts after).
[[nodiscard]] bool round_starts(const ProbeOptions& options, int index, double elapsed_s);

// Adds one round to the evidence (begin_rounds first). Returns false when the
// round was cut short by a stop request: the run ends there.
//  - A plain check keeps whatever probes finished, cut short or not: its
//    probe runs, measurements and link samples.
//  - A soak keeps complete rounds only, so that rounds compare like with
//    like: round 1 gives the top-level probe runs and measurements (what a
//    plain check measures); every complete round is kept in evidence.soak
//    with its times, measurements and the counters that rose, and its link
//    samples are added. A round cut short leaves nothing.
//  - A probe that fails in a later complete round (a GPU that hung, fell off
//    the bus) must not hide behind round 1's success: its first failure
//    replaces the entry, its reason and each GPU fault prefixed with
//    "round k: ". An entry that already failed is kept.
[[nodiscard]] bool merge_round(Evidence& evidence, RoundOutcome round);

// Closes the run: when it stopped early or a stop was requested
// (`stop_signal` nonzero), evidence.interrupted is stop_name(stop_signal);
// a soak is marked finished unless interrupted, and a note counts its
// complete rounds over `elapsed_s`.
void finish_rounds(Evidence& evidence, bool stopped_early, int stop_signal,
                   const std::function<std::string(int)>& stop_name, double elapsed_s);

}  // namespace pcieval
