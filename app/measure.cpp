// The measure stage of `pcieval check`: runs the probe registry on this
// machine while sampling every GPU path's link state, and adds what it saw to
// the evidence. Only app/ wires topology/ (NVML, sampler, counters) and
// bench/ (the probes) together.
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <string>

#include "app/commands.hpp"
#include "bench/probe.hpp"
#include "bench/progress.hpp"
#include "topology/error_counters.hpp"
#include "topology/hwloc_locality.hpp"
#include "topology/link_sampler.hpp"
#include "topology/nvml.hpp"

namespace pcieval::app {

void measure(Evidence& evidence, const ProbeOptions& options) {
  const RunConfig& config = options.config;
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
  if (gpus) {
    if (auto started = sampler.start(); !started) {
      evidence.notes.push_back("link sampling did not start: " + started.error().message);
    }
  }

  const ProbeRegistry registry = make_probe_registry();
  const ProbeContext context{evidence, config, topology ? &*topology : nullptr, &load};
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

  // evidence.gpus_under_load stays as discovery left it: the validator takes
  // each GPU's loaded state from its own samples, so a GPU the sampler could
  // not read is never judged as if it had been under load.
  if (sampler.running()) evidence.link_samples = sampler.stop();
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
  evidence.probes = std::move(output.runs);
  evidence.measurements = std::move(output.measurements);
}

}  // namespace pcieval::app
