#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include "bench/host_ceiling.hpp"
#include "bench/nccl_probe.hpp"
#include "bench/probe.hpp"
#include "bench/progress.hpp"

namespace pcieval {

void LoadSignal::raise(const std::vector<PciAddress>& gpus) {
  {
    const std::lock_guard lock(mutex_);
    for (const PciAddress& gpu : gpus) ++per_gpu_[gpu];
  }
  depth_.fetch_add(1, std::memory_order_relaxed);
}

void LoadSignal::lower(const std::vector<PciAddress>& gpus) {
  depth_.fetch_sub(1, std::memory_order_relaxed);
  const std::lock_guard lock(mutex_);
  for (const PciAddress& gpu : gpus) {
    if (auto it = per_gpu_.find(gpu); it != per_gpu_.end() && --it->second <= 0) per_gpu_.erase(it);
  }
}

bool LoadSignal::active_on(const PciAddress& gpu) const {
  const std::lock_guard lock(mutex_);
  return per_gpu_.count(gpu) != 0;
}

std::string_view to_string(ProbeMode mode) { return mode == ProbeMode::kQuick ? "quick" : "full"; }

ProbeRegistry make_probe_registry() {
  ProbeRegistry registry;
  add_gpu_probes(registry);
  add_p2p_probes(registry);
  add_nccl_probes(registry);
  // The host ceiling runs last: on a GPU node its number is the context for
  // the GPU numbers above it, and it is the probe that always runs.
  registry.push_back(make_host_ceiling_probe());
  return registry;
}

namespace {

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : "; ") + part;
  return out;
}

}  // namespace

std::string Probe::progress_subject(const ProbeContext& context) const {
  std::vector<const DeviceRecord*> gpus;
  for (const auto& device : context.evidence.devices) {
    if (device.function.kind == DeviceKind::kGpu) gpus.push_back(&device);
  }
  if (gpus.size() == 1) return to_string(gpus.front()->function.bdf);
  return std::to_string(gpus.size()) + " GPUs";
}

RoundMeasurements run_probes(const ProbeRegistry& registry, const ProbeContext& context, ProbeObserver* observer) {
  // Every skip is decided first, so progress can say "probe 2 of 5" and
  // estimate what is left from the probes that will actually run.
  std::vector<std::optional<std::string>> skipped;
  skipped.reserve(registry.size());
  std::size_t to_run = 0;
  for (const auto& probe : registry) {
    const bool full = context.config.mode == ProbeMode::kFull;
    if (probe->peer_to_peer() && !full && !(context.config.p2p && probe->in_p2p())) {
      skipped.emplace_back(probe->in_p2p() ? "runs with --p2p or --full" : "runs with --full only");
    } else if (!full && !probe->peer_to_peer() && !probe->in_quick()) {
      skipped.emplace_back("runs with --full only");
    } else {
      skipped.push_back(probe->skip_reason(context));
    }
    if (!skipped.back()) ++to_run;
  }

  RoundMeasurements output;
  std::size_t index = 0;
  for (std::size_t i = 0; i < registry.size(); ++i) {
    const Probe& probe = *registry[i];
    ProbeRun run;
    run.key = std::string(probe.key());
    if (!skipped[i] && context.stop != nullptr && context.stop->load() != 0) {
      skipped[i] = "the run was asked to stop before this probe started";
      output.interrupted = true;
    }
    if (skipped[i]) {
      run.status = ProbeStatus::kSkipped;
      run.reason = std::move(*skipped[i]);
      output.runs.push_back(std::move(run));
      continue;
    }
    const ProbeStep step{run.key, observer != nullptr ? probe.progress_subject(context) : std::string(), index++,
                         to_run};
    if (observer != nullptr) observer->probe_started(step);
    const auto started = std::chrono::steady_clock::now();
    ProbeMeasurements result = probe.run(context);
    run.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    // A probe that measured nothing and gave no error has failed just the same:
    // an empty result must not read as a pass.
    if (result.measurements.empty() && result.errors.empty() && result.gpu_faults.empty()) {
      result.errors.push_back("the probe returned no measurement");
    }
    const bool failed = !result.errors.empty() || !result.gpu_faults.empty();
    run.status = failed ? ProbeStatus::kFailed : ProbeStatus::kRan;
    run.only_gpu_faults = result.errors.empty() && !result.gpu_faults.empty();
    // The reason still tells the whole story, in the words of today's
    // documents ("GPU <bdf>: <error>"); gpu_faults says which GPU each is.
    std::vector<std::string> errors = std::move(result.errors);
    for (const GpuFault& fault : result.gpu_faults)
      errors.push_back("GPU " + to_string(fault.gpu) + ": " + fault.error);
    run.reason = join(errors);
    run.gpu_faults = std::move(result.gpu_faults);
    run.warnings = std::move(result.warnings);
    for (auto& measurement : result.measurements) output.measurements.push_back(std::move(measurement));
    for (auto& status : result.peer_status) output.peer_status.push_back(std::move(status));
    if (observer != nullptr) observer->probe_finished(step, run);
    output.runs.push_back(std::move(run));
  }
  return output;
}

}  // namespace pcieval
