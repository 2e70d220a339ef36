#include "bench/measure_run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>

#include "bench/gpu_preconditions.hpp"
#include "bench/probe.hpp"
#include "kernels/cuda_driver.hpp"
#include "support/shared_library.hpp"
#include "topology/error_counters.hpp"
#include "topology/hwloc_locality.hpp"
#include "topology/link_sampler.hpp"
#include "topology/nvml.hpp"

namespace pcieval {
namespace {

// NVML's PCIe throughput is a 20 ms sample: a job that copies in bursts is
// read a few times, and the most is kept.
constexpr int kTrafficReadsBeforeRun = 3;

}  // namespace

void measure_machine(Evidence& evidence, const ProbeOptions& options, const MeasureHooks& hooks) {
  begin_rounds(evidence, options);

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
    if (auto loaded = NvmlLibrary::load(library_from_environment(kNvmlLibraryEnvironment, kNvmlLibraryName))) {
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

  // GPUs no probe may copy through (gpu_preconditions.hpp): in MIG mode
  // CUDA would copy through one slice's copy engines, a fraction of the
  // link; a GPU already moving another job's data over PCIe (which its SM
  // utilisation does not show) shares the link with the probes.
  std::map<PciAddress, std::string> unmeasurable_gpus;
  if (nvml_reader != nullptr) {
    std::map<PciAddress, std::uint64_t> most_traffic_kbps;
    for (int read = 0; read < kTrafficReadsBeforeRun; ++read) {
      for (const PciAddress& gpu : gpu_addresses) {
        auto traffic = nvml_reader->read_pcie_traffic_kbps(gpu);
        if (!traffic) {
          if (read == 0) {
            evidence.notes.push_back("NVML PCIe throughput of " + to_string(gpu) + " not read (" +
                                     traffic.error().message + "): whether another job copies through it is unknown");
          }
          continue;
        }
        most_traffic_kbps[gpu] = std::max(most_traffic_kbps[gpu], traffic.value());
      }
    }
    for (const PciAddress& gpu : gpu_addresses) {
      if (auto mig = nvml_reader->read_mig_enabled(gpu); !mig) {
        evidence.notes.push_back("MIG mode of " + to_string(gpu) + " not read (" + mig.error().message +
                                 "): if it is on, its copies measure one MIG slice, not the link");
      } else if (auto reason = mig_skip_reason(mig.value(), to_string(gpu))) {
        unmeasurable_gpus.emplace(gpu, *reason);
        continue;
      }
      if (const auto seen = most_traffic_kbps.find(gpu); seen != most_traffic_kbps.end()) {
        if (auto reason = pcie_traffic_skip_reason(seen->second)) unmeasurable_gpus.emplace(gpu, *reason);
      }
    }
  }

  const std::vector<PciAddress> path_ports = ports_to_sample(evidence);
  const auto read_counters = [&] {
    return read_error_counters(evidence.sysfs_root, path_ports, nvml_reader, gpu_addresses);
  };
  const auto counters_before = read_counters();

  LoadSignal load;
  LinkSamplerOptions sampler_options;
  sampler_options.sysfs_root = evidence.sysfs_root;
  sampler_options.ports = path_ports;
  sampler_options.nvml_gpus = gpu_addresses;
  sampler_options.nvml = nvml_reader;
  // Which GPUs each sampled port carries: a port is read under load only
  // while one of them copies.
  std::map<PciAddress, std::vector<PciAddress>> gpus_below;
  for (const DeviceRecord& device : evidence.devices) {
    if (device.function.kind != DeviceKind::kGpu) continue;
    gpus_below[device.function.bdf].push_back(device.function.bdf);
    for (const Link& link : device.path) {
      gpus_below[link.downstream].push_back(device.function.bdf);
      gpus_below[link.upstream].push_back(device.function.bdf);
    }
  }
  sampler_options.under_load = [&load, gpus_below](const PciAddress& port) {
    const auto carried = gpus_below.find(port);
    if (carried == gpus_below.end()) return load.active();
    return std::any_of(carried->second.begin(), carried->second.end(),
                       [&load](const PciAddress& gpu) { return load.active_on(gpu); });
  };
  evidence.load_per_gpu = true;
  LinkSampler sampler(std::move(sampler_options));

  const ProbeRegistry registry = make_probe_registry();
  ProbeContext context{evidence, options.config, topology ? &*topology : nullptr, &load};
  context.stop = hooks.stop;
  context.confidential_computing = confidential_computing;
  context.unmeasurable_gpus = unmeasurable_gpus;
  const bool progress = options.progress && hooks.progress != nullptr;

  // The sampler restarts each round (its clock with it), so every sample is
  // shifted onto the run's clock, and the unchanged readings of a long soak
  // are dropped as each round ends.
  const auto started = std::chrono::steady_clock::now();
  const auto elapsed_s = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  const auto stop_requested = [&] { return hooks.stop != nullptr && hooks.stop->load() != 0; };
  bool sampling_failed = false;
  // Whether the signal cost a probe or a round that would have run. A signal
  // that arrives while the last probe finishes still marks the run
  // interrupted (finish_rounds): the operator asked it to stop, and a burn-in
  // gate must not read that as a pass.
  bool stopped_early = false;
  for (int index = 1; round_starts(options, index, elapsed_s()); ++index) {
    if (stop_requested()) {
      stopped_early = true;
      break;
    }
    const auto round_counters_before = evidence.soak ? read_counters() : CounterSnapshot{};
    RoundOutcome round;
    round.index = index;
    round.start_s = elapsed_s();
    // The simulated node arms the faults its scenario sets for this round.
    if (options.config.simulated_node) tell_simulator_round(index);
    if (gpus && !sampling_failed) {
      if (auto sampling = sampler.start(); !sampling) {
        evidence.notes.push_back("link sampling did not start: " + sampling.error().message);
        sampling_failed = true;
      }
    }
    {
      // Progress: redrawn on a terminal, plain lines for logs. Gone (its
      // status line cleared) before the table is printed.
      std::optional<ProgressReporter> reporter;
      if (progress) reporter.emplace(*hooks.progress, hooks.progress_style);
      round.probes = run_probes(registry, context, reporter ? &*reporter : nullptr);
    }
    if (sampler.running()) round.samples = compact_link_samples(sampler.stop());
    for (LinkSample& sample : round.samples) sample.t_s += round.start_s;
    round.end_s = elapsed_s();
    if (evidence.soak && !round.probes.interrupted)
      round.counters = counter_deltas(round_counters_before, read_counters());
    const double end_s = round.end_s;
    if (!merge_round(evidence, std::move(round))) {
      stopped_early = true;
      break;
    }
    if (!evidence.soak) continue;
    if (progress) {
      *hooks.progress << "soak: round " << index << (options.rounds ? " of " + std::to_string(*options.rounds) : "")
                      << " done, " << static_cast<long>(end_s) << " s"
                      << (options.duration_s ? " of " + std::to_string(static_cast<long>(*options.duration_s)) : "")
                      << "\n";
    }
    if (hooks.after_round) hooks.after_round(evidence);
  }
  finish_rounds(evidence, stopped_early, hooks.stop != nullptr ? hooks.stop->load() : 0, hooks.stop_name, elapsed_s());

  const auto counters_after = read_counters();
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
    // Whether the driver lets each GPU reach each other's memory, and if not
    // why (the chipset, the topology, a registry key): the peer rules tell a
    // pair without access from a slow one by it (issue 28).
    if (gpu_addresses.size() > 1) {
      std::vector<std::string> notes;
      auto statuses = nvml_reader->read_peer_status(gpu_addresses, &notes);
      for (auto& status : statuses) evidence.peer_status.push_back(std::move(status));
      for (auto& note : notes) evidence.notes.push_back("NVML: " + note);
    }
  }
}

}  // namespace pcieval
