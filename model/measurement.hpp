// Measurements: what a probe observed, with every trial kept and the statistics
// computed from them. Evidence, not judgement: the budget a number is compared
// with lives in validate/.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/pci_address.hpp"
#include "model/result.hpp"

namespace pcieval {

// Which way the bytes went. Bidirectional runs are two measurements, one per
// direction, each with Aggregation::kWithReverse.
enum class Direction {
  kHostToDevice,  // "h2d": the GPU reads host memory (non-posted reads + completions)
  kDeviceToHost,  // "d2h": the GPU writes host memory (posted writes)
  kHostToHost,    // "h2h": CPU threads copy between host buffers (the host ceiling)
  // "all_reduce": an all-reduce across GPUs; bytes go every way at once, and
  // the number follows nccl-tests' bus bandwidth convention.
  kAllReduce,
  // "d2d" (schema 1.7): one GPU's memory to another's over PCIe, peer to peer;
  // gpus[0] is the GPU whose engine or SMs moved the bytes, gpus[1] its peer;
  // the probe key says whether gpus[0] wrote to the peer or read from it, and
  // the subject "A->B" the way the bytes went (a read's peer first).
  kDeviceToDevice,
};

// What moved the bytes.
enum class CopyMethod {
  kCopyEngine,  // "ce": cudaMemcpyAsync on a DMA copy engine
  kSmKernel,    // "sm": a kernel's threads load/store mapped host memory, 16 bytes each
  kCpuThreads,  // "cpu": host threads with memcpy
  kNccl,        // "nccl": NCCL collectives, over whatever transport NCCL chose
};

enum class HostMemory {
  kPinned,    // "pinned": page-locked, bound to a chosen NUMA node
  kPageable,  // "pageable": ordinary malloc memory; the driver stages it
};

// What a number stands for (STYLE 9): the validator compares like with like.
enum class Aggregation {
  kAlone,              // "alone": one stream of one GPU, nothing else copying
  kWithReverse,        // "with_reverse": this direction while the opposite runs on the same GPU
  kWithPeers,          // "with_peers": this GPU's stream while every GPU of the group copies the same way
  kTotalOverWallTime,  // "total_over_wall_time": every byte of the group (or of all threads) over the
                       // wall time from the first start to the last end
  kBusBandwidth,       // "bus_bandwidth": nccl-tests' busbw, algbw x 2(n-1)/n for an all-reduce of n
                       // ranks: the rate each rank's link carries, comparable to one link's budget
};

[[nodiscard]] std::string_view to_string(Direction direction);
[[nodiscard]] std::string_view to_string(CopyMethod method);
[[nodiscard]] std::string_view to_string(HostMemory memory);
[[nodiscard]] std::string_view to_string(Aggregation aggregation);
[[nodiscard]] Result<Direction> direction_from_string(std::string_view text);
[[nodiscard]] Result<CopyMethod> copy_method_from_string(std::string_view text);
[[nodiscard]] Result<HostMemory> host_memory_from_string(std::string_view text);
[[nodiscard]] Result<Aggregation> aggregation_from_string(std::string_view text);

// Statistics of the kept trials, in GB/s (1e9 bytes/s, model/units.hpp).
struct TrialStats {
  double median_gbps = 0;
  double min_gbps = 0;
  double max_gbps = 0;
  // Sample standard deviation over mean (n-1 in the denominator); 0 for one
  // trial. A CV above a few percent means the number is noise-limited.
  double cv = 0;

  bool operator==(const TrialStats&) const = default;
};

// REQUIRES: !trials_gbps.empty(). The median of an even count is the mean of
// the middle two.
[[nodiscard]] TrialStats summarize_trials(std::span<const double> trials_gbps);

// Rate of `bytes` moved in `seconds`, in GB/s. REQUIRES: seconds > 0.
[[nodiscard]] double gbps_of(std::uint64_t bytes, double seconds);

// The size sweep's probe key (bench/gpu_probes.cpp): one measurement per copy
// size, which the table, Prometheus and the HTML report chart apart from the
// per-GPU rows instead of listing each size.
inline constexpr std::string_view kSweepProbeKey = "sweep_ce";

struct Measurement {
  std::string probe;             // registry key, "h2d_ce"
  std::string subject;           // a GPU's address "0000:17:00.0", "numa0", or a group "port 0000:15:01.0"
  std::vector<PciAddress> gpus;  // every GPU that copied in this measurement (empty for the host)
  Direction direction = Direction::kHostToDevice;
  CopyMethod method = CopyMethod::kCopyEngine;
  HostMemory host_memory = HostMemory::kPinned;
  Aggregation aggregation = Aggregation::kAlone;
  std::uint64_t size_bytes = 0;       // bytes of one copy (per GPU, per direction)
  std::uint64_t bytes_per_trial = 0;  // bytes counted in one trial's rate
  std::vector<double> trials_gbps;    // every timed trial, in order; warm-up excluded
  TrialStats stats;                   // from trials_gbps
  std::optional<int> host_numa_node;  // where the host buffer's pages are (verified)
  // Whether that node is the one nearest the GPU; nullopt for the host ceiling
  // or when the GPU's NUMA node is unknown.
  std::optional<bool> host_numa_local;
  // The data was checked after the timed region. The engine never reports a
  // number whose data was wrong: such a trial set becomes a probe failure.
  bool verified = false;

  bool operator==(const Measurement&) const = default;
};

enum class ProbeStatus {
  kRan,      // "ran": every subject measured
  kSkipped,  // "skipped": does not apply here (reason says why)
  kFailed,   // "failed": at least one subject could not be measured (reason says which and why)
};

[[nodiscard]] std::string_view to_string(ProbeStatus status);
[[nodiscard]] Result<ProbeStatus> probe_status_from_string(std::string_view text);

// One GPU that a probe could not measure, and why. Kept apart from the
// probe's joined reason so that the GPU, not only the probe, gets a verdict
// (issue 8: a GPU that errors or hangs is judged while the others finish).
struct GpuFault {
  PciAddress gpu;
  // What failed, without the address: "cudaMemcpyAsync h2d did not complete
  // within 30 s on 0000:17:00.0".
  std::string error;
  // The GPU was retired (kernels/retired_devices.hpp): a wait on it did not
  // complete by its deadline, in this probe or an earlier one, so it hung or
  // fell off the bus, and no later probe of the run touches it. False for an
  // error the GPU answered (a CUDA call refused, data that did not verify).
  bool retired = false;

  bool operator==(const GpuFault&) const = default;
};

// One registry entry's outcome in this run.
struct ProbeRun {
  std::string key;
  ProbeStatus status = ProbeStatus::kRan;
  std::string reason;                 // empty when ran; every error, the GPU faults' included
  std::vector<std::string> warnings;  // ran, but something is worth a look (a latch timed out)
  double duration_s = 0;
  // The GPUs it could not measure, in the order it met them (empty unless
  // failed). A GPU may appear more than once (one entry per failed copy).
  std::vector<GpuFault> gpu_faults;
  // Every error of this failed probe named one GPU and is in gpu_faults: the
  // probe then needs no verdict of its own beside those GPUs' verdicts.
  // False when it also failed on something that is no one GPU's (a group of
  // GPUs, the copy size, a probe that returned nothing).
  bool only_gpu_faults = false;

  bool operator==(const ProbeRun&) const = default;
};

// The settings the probes ran with, recorded so a number can be reproduced.
struct ProbeSettings {
  std::string mode;  // "quick" or "full"
  std::uint64_t size_bytes = 0;
  int warmup_trials = 0;
  int trials = 0;

  bool operator==(const ProbeSettings&) const = default;
};

}  // namespace pcieval
