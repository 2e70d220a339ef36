#include "bench/measure_rounds.hpp"

#include <algorithm>
#include <utility>

namespace pcieval {

void begin_rounds(Evidence& evidence, const ProbeOptions& options) {
  const RunConfig& config = options.config;
  evidence.probe_settings =
      ProbeSettings{std::string(to_string(config.mode)), config.size_bytes, config.warmup_trials, config.trials};
  if (options.soak()) evidence.soak = SoakRecord{options.rounds, options.duration_s, false, {}};
}

bool round_starts(const ProbeOptions& options, int index, double elapsed_s) {
  if (index == 1) return true;
  if (!options.soak()) return false;
  if (options.rounds && index > *options.rounds) return false;
  if (options.duration_s && elapsed_s >= *options.duration_s) return false;
  return true;
}

bool merge_round(Evidence& evidence, RoundOutcome round) {
  const bool complete = !round.probes.interrupted;
  if (complete || !evidence.soak) {
    // evidence.gpus_under_load stays as discovery left it: the validator
    // takes each GPU's loaded state from its own samples.
    evidence.link_samples.insert(evidence.link_samples.end(), round.samples.begin(), round.samples.end());
  }
  // Peer access is a property of the node, said once per ordered pair and
  // source however many rounds and probes asked.
  for (PeerStatus& status : round.probes.peer_status) {
    const bool known = std::any_of(evidence.peer_status.begin(), evidence.peer_status.end(), [&](const PeerStatus& s) {
      return s.gpu == status.gpu && s.peer == status.peer && s.capability == status.capability &&
             s.source == status.source;
    });
    if (!known) evidence.peer_status.push_back(std::move(status));
  }
  if (round.index == 1 && (complete || !evidence.soak)) {
    evidence.probes = round.probes.runs;
    evidence.measurements = round.probes.measurements;
  } else if (complete) {
    for (ProbeRun& run : round.probes.runs) {
      if (run.status != ProbeStatus::kFailed) continue;
      const auto kept = std::find_if(evidence.probes.begin(), evidence.probes.end(),
                                     [&](const ProbeRun& p) { return p.key == run.key; });
      if (kept == evidence.probes.end() || kept->status == ProbeStatus::kFailed) continue;
      const std::string prefix = "round " + std::to_string(round.index) + ": ";
      run.reason = prefix + run.reason;
      // Each failed GPU's own verdict names the round too.
      for (GpuFault& fault : run.gpu_faults) fault.error = prefix + fault.error;
      *kept = std::move(run);
    }
  }
  if (!complete) return false;
  if (evidence.soak) {
    SoakRound kept{round.index, round.start_s, round.end_s, std::move(round.probes.measurements), {}};
    for (CounterDelta& delta : round.counters) {
      if (delta.after > delta.before) kept.counters.push_back(std::move(delta));
    }
    evidence.soak->rounds.push_back(std::move(kept));
  }
  return true;
}

void finish_rounds(Evidence& evidence, bool stopped_early, int stop_signal,
                   const std::function<std::string(int)>& stop_name, double elapsed_s) {
  if (stopped_early || stop_signal != 0) evidence.interrupted = stop_name(stop_signal);
  if (!evidence.soak) return;
  evidence.soak->finished = !evidence.interrupted;
  const std::size_t rounds = evidence.soak->rounds.size();
  evidence.notes.push_back("soak: " + std::to_string(rounds) + " complete round" + (rounds == 1 ? "" : "s") + " in " +
                           std::to_string(static_cast<long>(elapsed_s)) + " s" +
                           (evidence.interrupted ? ", stopped by " + *evidence.interrupted : std::string()));
}

}  // namespace pcieval
