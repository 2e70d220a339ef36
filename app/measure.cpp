// The measure stage of `pcieval check` and `retrain`, wired: the environment
// and the signals are app/'s; the run itself is bench/'s (measure_run.hpp).
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "app/commands.hpp"
#include "app/stop_signal.hpp"
#include "bench/gpu_groups.hpp"
#include "bench/gpu_preconditions.hpp"
#include "bench/measure_run.hpp"
#include "bench/nccl_probe.hpp"

namespace pcieval::app {

void measure(Evidence& evidence, const ProbeOptions& options, const std::atomic<int>* stop,
             const std::function<void(const Evidence&)>& after_round) {
  // The environment is read and written here, before this run starts any
  // thread (NVML's worker, the link sampler, the progress ticker): setenv
  // races with getenv in other threads. NCCL's variables are set once for
  // the whole run, not by the probe that needs them (nccl_probe.hpp).
  ProbeOptions resolved = options;
  resolved.config.cuda_launch_blocking = launch_blocking_requested(std::getenv("CUDA_LAUNCH_BLOCKING"));
  resolved.config.simulated_node = evidence.host.simulated;
  prepare_nccl_environment(gpus_of(evidence).size() >= 2);

  MeasureHooks hooks;
  hooks.stop = stop;
  hooks.stop_name = signal_name;
  hooks.after_round = after_round;
  // Progress on stderr: redrawn on a terminal, plain lines for logs.
  hooks.progress = &std::cerr;
  hooks.progress_style =
      ::isatty(STDERR_FILENO) != 0 ? ProgressReporter::Style::kTerminal : ProgressReporter::Style::kLines;
  measure_machine(evidence, resolved, hooks);
}

}  // namespace pcieval::app
