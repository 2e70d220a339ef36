#include "bench/detail/gpu_probe_common.hpp"

#include <mutex>
#include <utility>

#include "bench/trials.hpp"
#include "kernels/cuda_device.hpp"
#include "kernels/pattern.hpp"
#include "kernels/retired_devices.hpp"

namespace pcieval::gpu_probe_common {
namespace {

// Stream setups of retired devices, kept for the life of the process. Reached
// through a static pointer, so leak checkers see it as reachable.
struct Kept {
  std::mutex mutex;
  std::vector<std::pair<NumaBuffer, std::unique_ptr<CopyStream>>> setups;  // guarded by mutex
  std::vector<NumaBuffer> buffers;                                         // guarded by mutex
};

Kept& kept() {
  static Kept* instance = new Kept;  // never destroyed: see StreamSetup::~StreamSetup
  return *instance;
}

}  // namespace

StreamSetup::~StreamSetup() {
  if (stream == nullptr || !stream->abandoned()) return;
  Kept& k = kept();
  const std::lock_guard lock(k.mutex);
  k.setups.emplace_back(std::move(buffer), std::move(stream));
}

void keep_until_exit(NumaBuffer buffer) {
  Kept& k = kept();
  const std::lock_guard lock(k.mutex);
  k.buffers.push_back(std::move(buffer));
}

// --- Planning: which GPUs, which CUDA ordinals, which NUMA nodes.

std::string gpu_error(const GpuTarget& gpu, const std::string& message) { return "GPU " + gpu.name + ": " + message; }

void add_gpu_fault(ProbeMeasurements& output, const GpuTarget& gpu, std::string error) {
  // Marked retired (gpu_unresponsive) only when work of the GPU hung; a GPU
  // retired because host work for it was slow (pinning) is not judged.
  const bool retired = gpu.ordinal >= 0 && cuda_device_hung(gpu.ordinal);
  output.gpu_faults.push_back({gpu.address, std::move(error), retired});
}

void add_group_failure(ProbeMeasurements& output, const std::vector<GpuTarget>& gpus, const std::string& what,
                       const std::string& message) {
  bool any_retired = false;
  for (const GpuTarget& gpu : gpus) {
    if (gpu.ordinal < 0 || !cuda_device_retired(gpu.ordinal)) continue;
    add_gpu_fault(output, gpu, what + ": " + message);
    any_retired = true;
  }
  if (!any_retired) output.errors.push_back(what + ": " + message);
}

// hwloc's answer first (it is what the buffers are bound with), then sysfs.
std::optional<int> numa_node_of(const DeviceRecord& gpu) {
  if (gpu.locality && gpu.locality->numa_node) return gpu.locality->numa_node;
  if (gpu.function.numa_node.ok() && gpu.function.numa_node.value() >= 0) return gpu.function.numa_node.value();
  return std::nullopt;
}

// The CUDA ordinal of each GPU. A GPU of the evidence that CUDA does not see
// (CUDA_VISIBLE_DEVICES, a broken device) is an error naming it, never a
// silent omission.
std::vector<GpuTarget> resolve(const ProbeContext& context, const std::vector<const DeviceRecord*>& gpus,
                               ProbeMeasurements& output) {
  std::vector<GpuTarget> targets;
  for (const DeviceRecord* gpu : gpus) {
    GpuTarget target{gpu->function.bdf, to_string(gpu->function.bdf), -1, numa_node_of(*gpu)};
    if (const auto why = context.unmeasurable_gpus.find(target.address); why != context.unmeasurable_gpus.end()) {
      add_gpu_fault(output, target, why->second);
      continue;
    }
    auto ordinal = cuda_ordinal_of(target.address);
    if (!ordinal) {
      add_gpu_fault(output, target, ordinal.error().message);
      continue;
    }
    target.ordinal = ordinal.value();
    // A GPU whose work missed its deadline in an earlier probe: its context
    // may be wedged, so no probe touches it again.
    if (auto retired = cuda_device_retired_reason(target.ordinal)) {
      add_gpu_fault(output, target, *retired);
      continue;
    }
    targets.push_back(std::move(target));
  }
  return targets;
}

// The GPU's own node. Unknown on a one-node machine is still local; unknown
// on several nodes uses the first node and says so.
Placement local_placement(const ProbeContext& context, const GpuTarget& gpu, ProbeMeasurements& output) {
  if (gpu.local_node) return {*gpu.local_node, true};
  const std::vector<int> nodes = numa_nodes(*context.topology);
  const int first = nodes.empty() ? 0 : nodes.front();
  if (nodes.size() <= 1) return {first, true};
  output.warnings.push_back(gpu_error(
      gpu, "its NUMA node is unknown; the host buffer is on node " + std::to_string(first) + ", which may be remote"));
  return {first, std::nullopt};
}

// The first node other than the GPU's own.
Result<Placement> remote_placement(const ProbeContext& context, const GpuTarget& gpu) {
  if (!gpu.local_node) return make_error("its NUMA node is unknown, so no node can be called remote");
  for (int node : numa_nodes(*context.topology)) {
    if (node != *gpu.local_node) return Placement{node, false};
  }
  return make_error("no NUMA node other than its own node " + std::to_string(*gpu.local_node));
}

// A distinct pattern per GPU, direction and method, so a copy that landed in
// the wrong buffer cannot verify.
std::uint32_t stream_seed(int ordinal, Direction direction, CopyMethod method) {
  return 0x9c1e0000U + static_cast<std::uint32_t>(ordinal) * 16U + static_cast<std::uint32_t>(direction) * 4U +
         static_cast<std::uint32_t>(method);
}

// --- Timing

// Runs warm-up and timed trials of `streams` together through run_trials (whose
// own rates are the total over the wall time) and recovers each stream's rate
// from the same trials.
Result<StreamRates> time_streams(const ProbeContext& context, std::span<CopyStream* const> streams, Latch& latch) {
  std::uint64_t total_bytes = 0;
  for (const CopyStream* stream : streams) total_bytes += stream->bytes_per_trial();
  const TrialPlan plan{context.config.warmup_trials, context.config.trials, total_bytes};
  std::vector<TrialTiming> timings;
  std::vector<PciAddress> loaded;
  for (const CopyStream* stream : streams) {
    if (auto address = cuda_pci_address(stream->ordinal())) loaded.push_back(address.value());
    // A peer copy loads the peer's link too.
    if (stream->peer() >= 0) {
      if (auto address = cuda_pci_address(stream->peer())) loaded.push_back(address.value());
    }
  }
  Result<std::vector<double>> wall_gbps = [&] {
    LoadScope load(context.load, loaded);
    return run_trials(plan, [&]() -> Result<double> {
      auto timing = run_latched_trial(streams, latch, kOperationTimeoutS);
      if (!timing) return timing.error();
      timings.push_back(timing.value());
      return timing.value().wall_s;
    });
  }();
  if (!wall_gbps) return wall_gbps.error();
  // run_trials ran the warm-ups first; the kept trials are the last ones.
  const std::size_t kept = wall_gbps.value().size();
  if (timings.size() < kept) return make_error("fewer trial times than trials (internal error)");
  timings.erase(timings.begin(), timings.end() - static_cast<std::ptrdiff_t>(kept));

  StreamRates rates{std::move(wall_gbps).value(), std::vector<std::vector<double>>(streams.size())};
  for (std::size_t stream = 0; stream < streams.size(); ++stream) {
    for (const TrialTiming& timing : timings) {
      const double seconds = timing.stream_s[stream];
      if (!(seconds > 0)) {
        return make_error(streams[stream]->label() + ": a trial reported " + std::to_string(seconds) +
                          " s: the event timer did not advance");
      }
      rates.stream_gbps[stream].push_back(gbps_of(streams[stream]->bytes_per_trial(), seconds));
    }
  }
  return rates;
}

// --- Measurements

// Only called for trials that all verified (run_latched_trial and
// PageableCopyStream::run_trial return no time for data that did not).
Measurement verified_measurement(MeasurementSpec spec, std::vector<double> trials_gbps) {
  Measurement measurement;
  measurement.probe = std::string(spec.probe);
  measurement.subject = std::move(spec.subject);
  measurement.gpus = std::move(spec.gpus);
  measurement.direction = spec.direction;
  measurement.method = spec.method;
  measurement.host_memory = spec.host_memory;
  measurement.aggregation = spec.aggregation;
  measurement.size_bytes = spec.size_bytes;
  measurement.bytes_per_trial = spec.bytes_per_trial;
  measurement.stats = summarize_trials(trials_gbps);
  measurement.trials_gbps = std::move(trials_gbps);
  measurement.host_numa_node = spec.host_numa_node;
  measurement.host_numa_local = spec.host_numa_local;
  measurement.verified = true;
  return measurement;
}

Measurement stream_measurement(std::string_view probe, const GpuTarget& gpu, const StreamSetup& setup,
                               Aggregation aggregation, std::vector<double> trials_gbps) {
  const CopyStream& stream = *setup.stream;
  return verified_measurement({probe,
                               gpu.name,
                               {gpu.address},
                               stream.direction(),
                               stream.method(),
                               HostMemory::kPinned,
                               aggregation,
                               stream.shape().size_bytes,
                               stream.bytes_per_trial(),
                               setup.placement.numa_node,
                               setup.placement.local},
                              std::move(trials_gbps));
}

std::optional<Latch> gpu_latch(const ProbeContext& context, const GpuTarget& gpu, ProbeMeasurements& output) {
  auto latch = Latch::create(gpu.ordinal, context.config.latch_timeout_s);
  if (!latch) {
    add_gpu_fault(output, gpu, latch.error().message);
    return std::nullopt;
  }
  return std::move(latch).value();
}

Result<StreamSetup> set_up_stream(const ProbeContext& context, const GpuTarget& gpu, Direction direction,
                                  CopyMethod method, Placement placement, std::uint64_t bytes) {
  auto buffer = NumaBuffer::allocate(*context.topology, placement.numa_node, static_cast<std::size_t>(bytes));
  if (!buffer) return make_error("host buffer: " + buffer.error().message);
  const int found_node = buffer.value().numa_node();
  placement.local = placement.local.has_value() && gpu.local_node ? std::optional<bool>(found_node == *gpu.local_node)
                                                                  : placement.local;
  placement.numa_node = found_node;
  std::span<std::byte> host(buffer.value().data(), buffer.value().size_bytes());
  auto stream = CopyStream::create(gpu.ordinal, direction, method, host, stream_seed(gpu.ordinal, direction, method));
  if (!stream) {
    // A registration that timed out (the device is then retired) may still
    // pin the range from its abandoned thread.
    if (cuda_device_retired(gpu.ordinal)) keep_until_exit(std::move(buffer).value());
    return stream.error();
  }
  StreamSetup setup{std::move(buffer).value(), std::make_unique<CopyStream>(std::move(stream).value()), placement};
  // Placement was checked before pinning; registration may have migrated
  // pages, and a number measured from the wrong node would be judged as if
  // local. (Destroying the setup unregisters before the buffer is freed.)
  if (auto still = setup.buffer.verify_node(); !still) return make_error("host buffer: " + still.error().message);
  return setup;
}

// The placement of several streams together: one node if they share it.
std::optional<int> common_node(const std::vector<StreamSetup>& setups) {
  if (setups.empty()) return std::nullopt;
  const int node = setups.front().placement.numa_node;
  for (const StreamSetup& setup : setups) {
    if (setup.placement.numa_node != node) return std::nullopt;
  }
  return node;
}

// Every stream local: true; any remote: false; otherwise unknown.
std::optional<bool> all_local(const std::vector<StreamSetup>& setups) {
  bool unknown = false;
  for (const StreamSetup& setup : setups) {
    if (!setup.placement.local) {
      unknown = true;
    } else if (!*setup.placement.local) {
      return false;
    }
  }
  return unknown ? std::nullopt : std::optional<bool>(true);
}

Status check_size(const RunConfig& config) {
  if (config.size_bytes == 0 || config.size_bytes % kPatternGranuleBytes != 0) {
    return make_error("the copy size must be a non-zero multiple of 16 bytes, got " +
                      std::to_string(config.size_bytes));
  }
  return ok_status();
}

}  // namespace pcieval::gpu_probe_common
