// What the GPU probes (gpu_probes.cpp, nccl_probe.cpp) share: which GPUs and
// CUDA ordinals, where their host buffers go, how a set of streams is timed, and
// how a verified measurement is recorded. Internal to bench/.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/probe.hpp"
#include "kernels/copy_stream.hpp"
#include "kernels/deadline_wait.hpp"
#include "kernels/latch.hpp"
#include "model/evidence.hpp"
#include "model/measurement.hpp"
#include "model/result.hpp"
#include "topology/numa_memory.hpp"

namespace pcieval::gpu_probe_common {

inline constexpr Direction kBothDirections[] = {Direction::kHostToDevice, Direction::kDeviceToHost};

// The sweep: 4 KiB to 1 GiB in powers of 4. Below kSweepTrialBytes a trial
// repeats the copy so it lasts long enough to time (events resolve about half
// a microsecond), up to kSweepMaxCopies: more copies queued behind one latch
// could fill the stream's queue, and the host would block queueing while the
// latch holds the stream.
inline constexpr std::uint64_t kSweepMinBytes = std::uint64_t{4} << 10;
inline constexpr std::uint64_t kSweepMaxBytes = std::uint64_t{1} << 30;
inline constexpr std::uint64_t kSweepTrialBytes = std::uint64_t{64} << 20;
inline constexpr int kSweepMaxCopies = 256;

inline constexpr std::string_view kAllGpusSubject = "all gpus";

// The floor of every trial's deadline (run_latched_trial). A RunConfig field
// (operation_timeout_s) is to replace it; until then every run uses this.
inline constexpr double kOperationTimeoutS = kDefaultOperationTimeoutS;

struct GpuTarget {
  PciAddress address;
  std::string name;  // "0000:17:00.0"
  int ordinal = -1;
  std::optional<int> local_node;  // the GPU's nearest NUMA node, when known
};

struct Placement {
  int numa_node = 0;
  std::optional<bool> local;  // Measurement::host_numa_local
};

struct StreamRates {
  std::vector<double> wall_gbps;                 // every stream's bytes over the wall time, per kept trial
  std::vector<std::vector<double>> stream_gbps;  // [stream][trial]: each stream's bytes over its own time
};

struct MeasurementSpec {
  std::string_view probe;
  std::string subject;
  std::vector<PciAddress> gpus;
  Direction direction = Direction::kHostToDevice;
  CopyMethod method = CopyMethod::kCopyEngine;
  HostMemory host_memory = HostMemory::kPinned;
  Aggregation aggregation = Aggregation::kAlone;
  std::uint64_t size_bytes = 0;
  std::uint64_t bytes_per_trial = 0;
  std::optional<int> host_numa_node;
  std::optional<bool> host_numa_local;
};

// One GPU's buffer and stream in one direction.
struct StreamSetup {
  StreamSetup(NumaBuffer buffer_in, std::unique_ptr<CopyStream> stream_in, Placement placement_in)
      : buffer(std::move(buffer_in)), stream(std::move(stream_in)), placement(placement_in) {}
  StreamSetup(StreamSetup&&) noexcept = default;
  // Assigning would free the old buffer without the check of the destructor.
  StreamSetup& operator=(StreamSetup&&) = delete;
  StreamSetup(const StreamSetup&) = delete;
  StreamSetup& operator=(const StreamSetup&) = delete;
  // A stream whose device was retired (a wait on it timed out) keeps its host
  // range registered and may still be copying into it, so the range must be
  // neither freed nor reused: buffer and stream are then kept, untouched, until
  // the process exits.
  ~StreamSetup();

  NumaBuffer buffer;  // declared first: destroyed after the stream that registered it
  std::unique_ptr<CopyStream> stream;
  Placement placement;
};

// Keeps a host buffer that a CUDA call given up at its deadline may still
// read or write (registration, a pageable copy) until the process exits.
void keep_until_exit(NumaBuffer buffer);

[[nodiscard]] std::string gpu_error(const GpuTarget& gpu, const std::string& message);
// Records that `gpu` could not be measured (ProbeMeasurements::gpu_faults), marked
// retired when its device hung (work of the GPU timed out, now or earlier);
// not when it was retired for slow host work (cuda_device_hung).
void add_gpu_fault(ProbeMeasurements& output, const GpuTarget& gpu, std::string error);
// A failure of several GPUs copying together (`what`: "all GPUs h2d (...)").
// The trial stops at the first stream that misses its deadline and retires
// that stream's GPU, so each GPU retired now is a fault of its own, the hang
// named; when none was, the failure is the group's: one error.
// REQUIRES: no GPU of `gpus` was retired before the attempt.
void add_group_failure(ProbeMeasurements& output, const std::vector<GpuTarget>& gpus, const std::string& what,
                       const std::string& message);
[[nodiscard]] std::optional<int> numa_node_of(const DeviceRecord& gpu);
// The GPUs CUDA can measure, with their ordinals; each other GPU is a fault
// of `output` saying why (CUDA does not see it, it was retired, or
// context.unmeasurable_gpus names it).
[[nodiscard]] std::vector<GpuTarget> resolve(const ProbeContext& context, const std::vector<const DeviceRecord*>& gpus,
                                             ProbeMeasurements& output);
[[nodiscard]] Placement local_placement(const ProbeContext& context, const GpuTarget& gpu, ProbeMeasurements& output);
[[nodiscard]] Result<Placement> remote_placement(const ProbeContext& context, const GpuTarget& gpu);
[[nodiscard]] std::uint32_t stream_seed(int ordinal, Direction direction, CopyMethod method);
[[nodiscard]] Result<StreamRates> time_streams(const ProbeContext& context, std::span<CopyStream* const> streams,
                                               Latch& latch);
[[nodiscard]] Measurement verified_measurement(MeasurementSpec spec, std::vector<double> trials_gbps);
// The verified measurement of one GPU's stream (the GPU is its subject): the
// stream's direction, method and shape, pinned host memory where the setup
// placed it.
[[nodiscard]] Measurement stream_measurement(std::string_view probe, const GpuTarget& gpu, const StreamSetup& setup,
                                             Aggregation aggregation, std::vector<double> trials_gbps);
// The latch every trial of `gpu` queues behind; nullopt, with the GPU's
// fault recorded, when it cannot be created.
[[nodiscard]] std::optional<Latch> gpu_latch(const ProbeContext& context, const GpuTarget& gpu,
                                             ProbeMeasurements& output);
[[nodiscard]] Result<StreamSetup> set_up_stream(const ProbeContext& context, const GpuTarget& gpu, Direction direction,
                                                CopyMethod method, Placement placement, std::uint64_t bytes);
[[nodiscard]] std::optional<int> common_node(const std::vector<StreamSetup>& setups);
[[nodiscard]] std::optional<bool> all_local(const std::vector<StreamSetup>& setups);
[[nodiscard]] Status check_size(const RunConfig& config);

}  // namespace pcieval::gpu_probe_common
