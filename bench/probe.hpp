// The probe registry (STYLE 10): each probe is a small declarative object with
// a stable key, a description, an applicability check that yields "skipped,
// with reason" rather than failure, and a run() that returns measurements and
// prints nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/evidence.hpp"
#include "model/measurement.hpp"

namespace pcieval {

class HwlocTopology;
class ProbeObserver;  // bench/progress.hpp

enum class ProbeMode {
  kQuick,  // the verdict size only, local NUMA node: well under 30 s on an 8-GPU node
  kFull,   // adds the 4 KiB..1 GiB size sweep and the remote-NUMA probe
};

[[nodiscard]] std::string_view to_string(ProbeMode mode);

// How every probe times its copies. Parsed and checked once in app/.
struct RunConfig {
  ProbeMode mode = ProbeMode::kQuick;
  // The size of one copy for the verdict measurements. 256 MiB keeps each
  // trial around 5 ms even at Gen5 rates, long against launch and event
  // resolution (microseconds), short enough for --quick.
  std::uint64_t size_bytes = std::uint64_t{256} << 20;
  int warmup_trials = 1;  // untimed, discarded: first-touch, TLB and clock ramp
  int trials = 5;         // timed, all kept
  // How long a latch kernel holds a stream before it gives up (and says so).
  double latch_timeout_s = 5.0;
  // --p2p: the GPU-to-GPU probes a burn-in needs (Probe::in_p2p) run beside
  // the others; --full runs every one of them.
  bool p2p = false;
  // CUDA_LAUNCH_BLOCKING=1 was set in the environment (read once in app/):
  // the latched probes are skipped with the reason (gpu_preconditions.hpp).
  bool cuda_launch_blocking = false;
  // The GPUs are the simulator's (check --simulate, app/simulate.hpp): the
  // probes that would measure this host itself (host_ceiling) are skipped,
  // so no real number sits among the model's.
  bool simulated_node = false;
};

// Set while copies are in flight, and which GPUs they run on, so a link
// sample is marked under load only when a copy ran on a GPU below the port
// read: while one GPU of eight is measured, the other seven idle at Gen1,
// and their readings then say nothing about load. Probes raise it around
// their timed region. Thread-safe.
class LoadSignal {
 public:
  void raise(const std::vector<PciAddress>& gpus = {});
  void lower(const std::vector<PciAddress>& gpus = {});
  // A copy runs anywhere.
  [[nodiscard]] bool active() const { return depth_.load(std::memory_order_relaxed) > 0; }
  // A copy runs on `gpu`.
  [[nodiscard]] bool active_on(const PciAddress& gpu) const;

 private:
  std::atomic<int> depth_{0};
  mutable std::mutex mutex_;
  std::map<PciAddress, int> per_gpu_;  // guarded by mutex_
};

// Raises the signal for `gpus` for its lifetime; a null signal (a context
// without one) makes it a no-op, so probes need not check.
class LoadScope {
 public:
  explicit LoadScope(LoadSignal* signal, std::vector<PciAddress> gpus = {}) : signal_(signal), gpus_(std::move(gpus)) {
    if (signal_ != nullptr) signal_->raise(gpus_);
  }
  LoadScope(const LoadScope&) = delete;
  LoadScope& operator=(const LoadScope&) = delete;
  ~LoadScope() {
    if (signal_ != nullptr) signal_->lower(gpus_);
  }

 private:
  LoadSignal* signal_;
  std::vector<PciAddress> gpus_;
};

// Everything a probe may look at. Probes only read it; the load signal is the
// one thing they touch.
struct ProbeContext {
  const Evidence& evidence;  // GPUs, their paths and NUMA nodes
  const RunConfig& config;
  // The live topology, for binding host buffers and threads to NUMA nodes;
  // nullptr when hwloc could not load it.
  const HwlocTopology* topology = nullptr;
  LoadSignal* load = nullptr;
  // Nonzero once the run was asked to stop (app/ stores the signal number
  // there): the engine starts no further probe. The probe in flight finishes,
  // since a copy cannot be taken back halfway. nullptr: never asked.
  const std::atomic<int>* stop = nullptr;
  // Whether the GPUs run in confidential-computing mode (NVML's system
  // state, read by the measure run, measure_run.hpp); nullopt when unknown.
  // On: the probes that pin or map host memory are skipped with the reason
  // (gpu_preconditions.hpp).
  std::optional<bool> confidential_computing = std::nullopt;
  // GPUs no probe copies through, each with the one-line reason
  // (gpu_preconditions.hpp: MIG mode, another job's PCIe traffic), found by
  // the measure run before the probes. Their probes are faults saying so:
  // inconclusive, never a pass nor a FAIL of the GPU.
  std::map<PciAddress, std::string> unmeasurable_gpus = {};
};

// What one run of one probe produced (Probe::run); run_probes turns it into
// the probe's ProbeRun (model/measurement.hpp: status, reason, faults) and
// keeps its measurements. A subject that could not be measured
// (its data did not verify, a CUDA call failed) is an error naming it; the
// other subjects' measurements are kept. An error that belongs to one GPU
// goes to gpu_faults, not to errors, so that the GPU gets a verdict of its
// own; errors holds the rest (a group of GPUs, a bad setting). The engine
// writes both into the ProbeRun's reason.
struct ProbeMeasurements {
  std::vector<Measurement> measurements;
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
  std::vector<GpuFault> gpu_faults;
  // What the probe learnt of peer access between GPUs (the p2p probes:
  // CUDA's cuDeviceCanAccessPeer); the measure run adds it to the evidence.
  std::vector<PeerStatus> peer_status;
};

class Probe {
 public:
  Probe() = default;
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;
  virtual ~Probe() = default;

  // Stable snake_case key, used in the results document and --list-probes.
  [[nodiscard]] virtual std::string_view key() const = 0;
  // One paragraph: what it measures and what its number means.
  [[nodiscard]] virtual std::string_view description() const = 0;
  // Whether --quick runs it (every probe runs under --full).
  [[nodiscard]] virtual bool in_quick() const { return true; }
  // A GPU-to-GPU probe: it runs under --full, and under --p2p when in_p2p().
  [[nodiscard]] virtual bool peer_to_peer() const { return false; }
  [[nodiscard]] virtual bool in_p2p() const { return false; }
  // nullopt when the probe applies here; otherwise why it is skipped.
  [[nodiscard]] virtual std::optional<std::string> skip_reason(const ProbeContext& context) const = 0;
  // REQUIRES: !skip_reason(context). Prints nothing.
  [[nodiscard]] virtual ProbeMeasurements run(const ProbeContext& context) const = 0;
  // What progress output names while it runs; by default the GPUs of the
  // evidence ("0000:17:00.0", "8 GPUs").
  [[nodiscard]] virtual std::string progress_subject(const ProbeContext& context) const;
};

using ProbeRegistry = std::vector<std::unique_ptr<Probe>>;

// Every probe pcieval has, in the order they run and are listed.
[[nodiscard]] ProbeRegistry make_probe_registry();

// The GPU probes (bench/gpu_probes.cpp): appended by make_probe_registry.
// Built with or without CUDA; without it each one skips with that reason.
void add_gpu_probes(ProbeRegistry& registry);
// The GPU-to-GPU probes (bench/p2p_probes.cpp): appended after them.
void add_p2p_probes(ProbeRegistry& registry);

// What run_probes returns, once per round of a measure run (one round for a
// plain check, measure_rounds.hpp): each probe's ProbeRun, in registry order,
// and the ProbeMeasurements' measurements of every probe that ran.
struct RoundMeasurements {
  std::vector<ProbeRun> runs;
  std::vector<Measurement> measurements;
  // Every probe's ProbeMeasurements::peer_status.
  std::vector<PeerStatus> peer_status;
  // A stop request skipped at least one probe that would have run.
  bool interrupted = false;
};
// Runs every probe of the registry that the mode selects, in order, and
// records each one's outcome (a probe outside the mode is skipped with
// "--full only", a p2p probe outside it with "--p2p or --full"). An observer, when given, is told as each probe that
// runs starts and ends (on this thread); the engine itself prints nothing.
[[nodiscard]] RoundMeasurements run_probes(const ProbeRegistry& registry, const ProbeContext& context,
                                           ProbeObserver* observer = nullptr);

}  // namespace pcieval
