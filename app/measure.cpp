// The measure stage of `pcieval check`: runs the probe registry on this
// machine while sampling every GPU path's link state, and adds what it saw to
// the evidence. Only app/ wires topology/ (NVML, sampler, counters) and
// bench/ (the probes) together.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <string>

#include "app/commands.hpp"
#include "app/stop_signal.hpp"
#include "bench/gpu_groups.hpp"
#include "bench/gpu_preconditions.hpp"
#include "bench/nccl_probe.hpp"
#include "bench/probe.hpp"
#include "bench/progress.hpp"
#include "topology/error_counters.hpp"
#include "topology/hwloc_locality.hpp"
#include "topology/link_sampler.hpp"
#include "topology/nvml.hpp"

namespace pcieval::app {

void measure(Evidence& evidence, const ProbeOptions& options, const std::atomic<int>* stop,
             const std::function<void(const Evidence&)>& after_round) {
  // The environment is read and written here, before this run starts any
  // thread (NVML's worker, the link sampler, the progress ticker): setenv
  // races with getenv in other threads. NCCL's variables are set once for
  // the whole run, not by the probe that needs them (nccl_probe.hpp).
  RunConfig config = options.config;
  config.cuda_launch_blocking = launch_blocking_requested(std::getenv("CUDA_LAUNCH_BLOCKING"));
  prepare_nccl_environment(gpus_of(evidence).size() >= 2);
  evidence.probe_settings =
      ProbeSettings{std::string(to_string(config.mode)), config.size_bytes, config.warmup_trials, config.trials};

  // The live topology binds host buffers and threads; the one discovery used
  // may be gone (it is not kept), and loading it costs milliseconds.
  std::optional<HwlocTopology> topology;
  if (auto loaded = HwlocTopology::load_live()) {
    topology.emplace(std::move(loaded).value());
  } else {
    evidence.notes.push_back("hwloc could not load this machine (" + loaded.error().message +
                             "): probes that bind host memory to a NUMA node are skipped");
  }

  const std::vector<PciAddress> gpu_addresses = gpus_to_sample(evidence);
  const bool gpus = !gpu_addresses.empty();
  std::optional<NvmlLibrary> nvml;
  if (gpus) {
    if (auto loaded = NvmlLibrary::load()) {
      nvml.emplace(std::move(loaded).value());
    } else {
      evidence.notes.push_back("NVML unavailable (" + loaded.error().message +
                               "): GPU links are sampled through sysfs only, without replay counters");
    }
  }
  std::optional<NvmlReader> reader;
  if (nvml) reader.emplace(*nvml);
  const NvmlReader* nvml_reader = reader ? &*reader : nullptr;
  // Confidential-computing mode: the pinned probes cannot run there, and
  // say so instead of failing one by one.
  std::optional<bool> confidential_computing;
  if (nvml_reader != nullptr) {
    if (auto cc = nvml_reader->read_confidential_computing()) {
      confidential_computing = cc.value();
      if (cc.value()) {
        evidence.notes.push_back(
            "the GPUs run in confidential-computing mode: probes that pin or map host memory are skipped");
      }
    }
  }

  // Counters of every port a GPU's copies cross: a rise between the reads is
  // a link that retried under this load. Every device's totals are already in
  // the discovery evidence.
  // Before anything of ours runs: a GPU already busy is someone else's job
  // sharing the link, and the validator will not trust its numbers.
  std::map<PciAddress, int> utilization_before;
  if (nvml_reader != nullptr) {
    for (const PciAddress& gpu : gpu_addresses) {
      if (auto busy = nvml_reader->read_utilization_gpu_percent(gpu)) {
        utilization_before[gpu] = busy.value();
      } else {
        evidence.notes.push_back("NVML utilisation of " + to_string(gpu) + " not read (" + busy.error().message +
                                 "): whether it was busy before the probes is unknown");
      }
    }
  }

  const std::vector<PciAddress> path_ports = ports_to_sample(evidence);
  const auto counters_before = read_error_counters(evidence.sysfs_root, path_ports, nvml_reader, gpu_addresses);

  LoadSignal load;
  LinkSamplerOptions sampler_options;
  sampler_options.sysfs_root = evidence.sysfs_root;
  sampler_options.ports = path_ports;
  sampler_options.nvml_gpus = gpu_addresses;
  sampler_options.nvml = nvml_reader;
  sampler_options.under_load = [&load] { return load.active(); };
  LinkSampler sampler(std::move(sampler_options));

  const ProbeRegistry registry = make_probe_registry();
  ProbeContext context{evidence, config, topology ? &*topology : nullptr, &load};
  context.stop = stop;
  context.confidential_computing = confidential_computing;
  if (options.soak()) evidence.soak = SoakRecord{options.rounds, options.duration_s, false, {}};

  // One round is a plain check. The sampler restarts each round (its clock
  // with it), so every sample is shifted onto the soak's clock, and the
  // unchanged readings of a long soak are dropped as each round ends.
  const auto soak_started = std::chrono::steady_clock::now();
  const auto elapsed_s = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - soak_started).count();
  };
  bool sampling_failed = false;
  // Whether the signal cost a probe or a round that would have run. A signal
  // that arrives while the last probe finishes still marks the run
  // interrupted (below): the operator asked it to stop, and a burn-in gate
  // must not read that as a pass.
  bool stopped_early = false;
  for (int index = 1;; ++index) {
    if (index > 1) {
      if (!options.soak()) break;
      if (options.rounds && index > *options.rounds) break;
      if (options.duration_s && elapsed_s() >= *options.duration_s) break;
    }
    if (stop != nullptr && stop->load() != 0) {
      stopped_early = true;
      break;
    }

    const auto round_counters_before =
        evidence.soak ? read_error_counters(evidence.sysfs_root, path_ports, nvml_reader, gpu_addresses)
                      : CounterSnapshot{};
    const double round_start_s = elapsed_s();
    if (gpus && !sampling_failed) {
      if (auto started = sampler.start(); !started) {
        evidence.notes.push_back("link sampling did not start: " + started.error().message);
        sampling_failed = true;
      }
    }
    EngineOutput output;
    {
      // Progress on stderr: redrawn on a terminal, plain lines for logs. Gone
      // (its status line cleared) before the table is printed.
      std::optional<ProgressReporter> progress;
      if (options.progress) {
        progress.emplace(std::cerr, ::isatty(STDERR_FILENO) != 0 ? ProgressReporter::Style::kTerminal
                                                                 : ProgressReporter::Style::kLines);
      }
      output = run_probes(registry, context, progress ? &*progress : nullptr);
    }
    std::vector<LinkSample> samples;
    if (sampler.running()) samples = compact_link_samples(sampler.stop());
    for (LinkSample& sample : samples) sample.t_s += round_start_s;
    const double round_end_s = elapsed_s();

    // A soak keeps only complete rounds, so that rounds compare like with
    // like; a plain check keeps whatever probes finished.
    const bool complete = !output.interrupted;
    if (complete || !evidence.soak) {
      // evidence.gpus_under_load stays as discovery left it: the validator
      // takes each GPU's loaded state from its own samples.
      evidence.link_samples.insert(evidence.link_samples.end(), samples.begin(), samples.end());
    }
    if (index == 1 && (complete || !evidence.soak)) {
      evidence.probes = output.runs;
      evidence.measurements = output.measurements;
    } else if (complete) {
      // A probe that fails in a later round (a GPU that hung, fell off the
      // bus) must not hide behind round 1's success: its first failure
      // replaces the entry, naming the round.
      for (ProbeRun& run : output.runs) {
        if (run.status != ProbeStatus::kFailed) continue;
        const auto kept = std::find_if(evidence.probes.begin(), evidence.probes.end(),
                                       [&](const ProbeRun& p) { return p.key == run.key; });
        if (kept == evidence.probes.end() || kept->status == ProbeStatus::kFailed) continue;
        const std::string round = "round " + std::to_string(index) + ": ";
        run.reason = round + run.reason;
        // Each failed GPU's own verdict names the round too.
        for (GpuFault& fault : run.gpu_faults) fault.error = round + fault.error;
        *kept = std::move(run);
      }
    }
    if (!complete) {
      stopped_early = true;
      break;
    }
    if (evidence.soak) {
      SoakRound round{index, round_start_s, round_end_s, std::move(output.measurements), {}};
      const auto round_counters_after =
          read_error_counters(evidence.sysfs_root, path_ports, nvml_reader, gpu_addresses);
      for (CounterDelta& delta : counter_deltas(round_counters_before, round_counters_after)) {
        if (delta.after > delta.before) round.counters.push_back(std::move(delta));
      }
      evidence.soak->rounds.push_back(std::move(round));
      if (options.progress) {
        std::cerr << "soak: round " << index << (options.rounds ? " of " + std::to_string(*options.rounds) : "")
                  << " done, " << static_cast<long>(round_end_s) << " s"
                  << (options.duration_s ? " of " + std::to_string(static_cast<long>(*options.duration_s)) : "")
                  << "\n";
      }
      if (after_round) after_round(evidence);
    }
  }
  if (stopped_early || (stop != nullptr && stop->load() != 0)) evidence.interrupted = signal_name(stop->load());
  if (evidence.soak) {
    evidence.soak->finished = !evidence.interrupted;
    const std::size_t rounds = evidence.soak->rounds.size();
    evidence.notes.push_back("soak: " + std::to_string(rounds) + " complete round" + (rounds == 1 ? "" : "s") + " in " +
                             std::to_string(static_cast<long>(elapsed_s())) + " s" +
                             (evidence.interrupted ? ", stopped by " + *evidence.interrupted : std::string()));
  }

  const auto counters_after = read_error_counters(evidence.sysfs_root, path_ports, nvml_reader, gpu_addresses);
  evidence.counters = counter_deltas(counters_before, counters_after);
  for (const auto& note : counters_after.notes) evidence.notes.push_back("error counters: " + note);

  if (nvml_reader != nullptr) {
    for (auto& device : evidence.devices) {
      if (device.function.kind != DeviceKind::kGpu) continue;
      std::vector<std::string> notes;
      if (auto link = nvml_reader->read(device.function.bdf, &notes)) {
        device.nvml = std::move(link).value();
        if (const auto busy = utilization_before.find(device.function.bdf); busy != utilization_before.end()) {
          device.nvml->utilization_gpu_percent = busy->second;
        }
      } else {
        device.notes.push_back("NVML: " + link.error().message);
      }
      for (auto& note : notes) device.notes.push_back("NVML: " + note);
    }
  }
}

}  // namespace pcieval::app
