// The measure stage of `pcieval check`: runs the probe registry on this
// machine, round after round for a soak (measure_rounds.hpp), while sampling
// every GPU path's link state, and adds what it saw to the evidence. It wires
// topology/ (hwloc, NVML, the link sampler, error counters) to the probes.
#pragma once

#include <atomic>
#include <functional>
#include <iosfwd>
#include <string>

#include "bench/measure_rounds.hpp"
#include "bench/progress.hpp"
#include "model/evidence.hpp"

namespace pcieval {

// What the caller hands the run besides the options: the stop request and
// how to name it, the per-round callback, where progress goes.
struct MeasureHooks {
  // Nonzero ends the run between probes: a plain check keeps the probes that
  // finished, a soak its complete rounds. nullptr: never asked.
  const std::atomic<int>* stop = nullptr;
  // How evidence.interrupted names the value `stop` held ("SIGTERM").
  std::function<std::string(int)> stop_name;
  // Called after each complete soak round with the evidence so far (the
  // per-round flush of -o).
  std::function<void(const Evidence&)> after_round;
  // Progress of the probes and of each soak round, when options.progress
  // asks for it; nullptr: none.
  std::ostream* progress = nullptr;
  ProgressReporter::Style progress_style = ProgressReporter::Style::kLines;
};

// Runs the probes the options select on this machine, sampling the links of
// every GPU path meanwhile, and adds the probe runs, measurements, link
// samples, counters and NVML readings to `evidence` (a soak's rounds to
// evidence.soak). What could not be used (NVML, hwloc) becomes a note;
// nothing here fails.
// REQUIRES: the environment read and set before (options.config's
// cuda_launch_blocking, prepare_nccl_environment): this starts threads.
void measure_machine(Evidence& evidence, const ProbeOptions& options, const MeasureHooks& hooks);

}  // namespace pcieval
