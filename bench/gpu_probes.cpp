// The GPU probes: host<->device bandwidth per GPU, by copy engine and by SM
// kernels, one way and both ways, alone and with every other GPU copying, by
// size, and with the host buffer on the wrong NUMA node. Every number comes
// from run_trials over latched, event-timed, verified trials (kernels/).
//
// Failures are faults of the GPU (ProbeMeasurements::gpu_faults) or errors naming
// the group (ProbeMeasurements::errors), and the other GPUs are still measured: a
// CUDA error, data that did not verify, a latch timeout, and work that missed
// its deadline alike. A GPU whose work missed its deadline is retired
// (kernels/retired_devices.hpp): its fault says so, and the later probes of
// the run report it with the reason and never touch it again. A latch
// timeout is an error rather than a discarded trial with a warning: it means
// the host could not queue one trial's copies within
// RunConfig::latch_timeout_s (or a CUDA call stalled behind the latch), which
// a retry would meet again, and a trial set with holes would hide it. Warnings are kept for numbers that are valid but
// need context (a GPU whose NUMA node is unknown).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/detail/gpu_probe_common.hpp"
#include "bench/gpu_groups.hpp"
#include "bench/gpu_preconditions.hpp"
#include "bench/probe.hpp"
#include "bench/trials.hpp"
#include "kernels/copy_stream.hpp"
#include "kernels/cuda_device.hpp"
#include "kernels/latch.hpp"
#include "kernels/pattern.hpp"
#include "topology/hwloc_locality.hpp"
#include "topology/numa_memory.hpp"

namespace pcieval {
namespace {

using gpu_probe_common::add_gpu_fault;
using gpu_probe_common::add_group_failure;
using gpu_probe_common::all_local;
using gpu_probe_common::check_size;
using gpu_probe_common::common_node;
using gpu_probe_common::gpu_error;
using gpu_probe_common::gpu_latch;
using gpu_probe_common::GpuTarget;
using gpu_probe_common::kAllGpusSubject;
using gpu_probe_common::kBothDirections;
using gpu_probe_common::keep_until_exit;
using gpu_probe_common::kSweepMaxBytes;
using gpu_probe_common::kSweepMaxCopies;
using gpu_probe_common::kSweepMinBytes;
using gpu_probe_common::kSweepTrialBytes;
using gpu_probe_common::local_placement;
using gpu_probe_common::MeasurementSpec;
using gpu_probe_common::numa_node_of;
using gpu_probe_common::Placement;
using gpu_probe_common::remote_placement;
using gpu_probe_common::resolve;
using gpu_probe_common::set_up_stream;
using gpu_probe_common::stream_measurement;
using gpu_probe_common::stream_seed;
using gpu_probe_common::StreamRates;
using gpu_probe_common::StreamSetup;
using gpu_probe_common::time_streams;
using gpu_probe_common::verified_measurement;

// --- The probes

// What every GPU probe shares: the skip reasons, in the order a reader needs
// them (no GPU at all before no CUDA, no CUDA before no device), and the
// resolution of GPUs to CUDA ordinals.
class GpuProbe : public Probe {
 public:
  GpuProbe(std::string_view key, std::string_view description, bool in_quick)
      : key_(key), description_(description), in_quick_(in_quick) {}

  [[nodiscard]] std::string_view key() const override { return key_; }
  [[nodiscard]] std::string_view description() const override { return description_; }
  [[nodiscard]] bool in_quick() const override { return in_quick_; }

  [[nodiscard]] std::optional<std::string> skip_reason(const ProbeContext& context) const override {
    if (gpus_of(context.evidence).empty()) return "no NVIDIA GPU in the evidence";
    if (auto reason = evidence_skip_reason(context.evidence)) return reason;
    if (!built_with_cuda()) return std::string(kBuiltWithoutCudaMessage);
    if (context.topology == nullptr) {
      return "hwloc topology unavailable: host buffers cannot be bound to the GPUs' NUMA nodes";
    }
    if (auto reason = topology_skip_reason(context.evidence, *context.topology)) return reason;
    if (latched()) {
      // Known before any CUDA call: each would fail every trial alike.
      if (auto reason = launch_blocking_skip_reason(context.config.cuda_launch_blocking)) return reason;
      if (auto reason = confidential_computing_skip_reason(context.confidential_computing)) return reason;
    }
    if (auto count = cuda_device_count(); !count) return "no usable CUDA device: " + count.error().message;
    return std::nullopt;
  }

  [[nodiscard]] ProbeMeasurements run(const ProbeContext& context) const override {
    ProbeMeasurements output;
    if (auto size = check_size(context.config); !size) {
      output.errors.push_back(size.error().message);
      return output;
    }
    const std::vector<GpuTarget> targets = resolve(context, gpus_of(context.evidence), output);
    if (!targets.empty()) run_on(context, targets, output);
    // A placement warning is found once per stream; say it once.
    std::vector<std::string> unique_warnings;
    for (std::string& warning : output.warnings) {
      if (std::find(unique_warnings.begin(), unique_warnings.end(), warning) == unique_warnings.end()) {
        unique_warnings.push_back(std::move(warning));
      }
    }
    output.warnings = std::move(unique_warnings);
    return output;
  }

 protected:
  [[nodiscard]] virtual std::optional<std::string> evidence_skip_reason(const Evidence& /*evidence*/) const {
    return std::nullopt;
  }
  [[nodiscard]] virtual std::optional<std::string> topology_skip_reason(const Evidence& /*evidence*/,
                                                                        const HwlocTopology& /*topology*/) const {
    return std::nullopt;
  }
  // Whether its trials queue behind the latch kernel in pinned, registered
  // host memory (every probe but pageable_ce).
  [[nodiscard]] virtual bool latched() const { return true; }
  // REQUIRES: !targets.empty(); every target's ordinal resolved.
  virtual void run_on(const ProbeContext& context, const std::vector<GpuTarget>& targets,
                      ProbeMeasurements& output) const = 0;

 private:
  std::string_view key_;
  std::string_view description_;
  bool in_quick_;
};

// One GPU at a time, each behind a latch of its own: where the GPU's host
// buffers go, its latch, then what the probe measures on it.
class PerGpuProbe : public GpuProbe {
 public:
  using GpuProbe::GpuProbe;

 protected:
  // Where `gpu`'s host buffers go: its own node by default. nullopt leaves
  // the GPU out, with the reason already in `output`.
  [[nodiscard]] virtual std::optional<Placement> placement_of(const ProbeContext& context, const GpuTarget& gpu,
                                                              ProbeMeasurements& output) const {
    return local_placement(context, gpu, output);
  }
  virtual void run_gpu(const ProbeContext& context, const GpuTarget& gpu, const Placement& placement, Latch& latch,
                       ProbeMeasurements& output) const = 0;

 private:
  void run_on(const ProbeContext& context, const std::vector<GpuTarget>& targets,
              ProbeMeasurements& output) const final {
    for (const GpuTarget& gpu : targets) {
      const std::optional<Placement> placement = placement_of(context, gpu, output);
      if (!placement) continue;
      auto latch = gpu_latch(context, gpu, output);
      if (!latch) continue;
      run_gpu(context, gpu, *placement, *latch, output);
    }
  }
};

// One GPU at a time, one direction at a time, pinned host memory on the
// GPU's node (or, for remote_numa_ce, on another node).
class SingleGpuProbe final : public PerGpuProbe {
 public:
  enum class Where { kLocal, kRemote };

  SingleGpuProbe(std::string_view key, std::string_view description, std::vector<Direction> directions,
                 CopyMethod method, Where where)
      : PerGpuProbe(key, description, where == Where::kLocal),
        directions_(std::move(directions)),
        method_(method),
        where_(where) {}

 protected:
  [[nodiscard]] std::optional<std::string> topology_skip_reason(const Evidence& evidence,
                                                                const HwlocTopology& topology) const override {
    if (where_ != Where::kRemote) return std::nullopt;
    std::vector<std::optional<int>> gpu_nodes;
    for (const DeviceRecord* gpu : gpus_of(evidence)) gpu_nodes.push_back(numa_node_of(*gpu));
    return remote_numa_skip_reason(numa_nodes(topology).size(), gpu_nodes);
  }

  [[nodiscard]] std::optional<Placement> placement_of(const ProbeContext& context, const GpuTarget& gpu,
                                                      ProbeMeasurements& output) const override {
    if (where_ == Where::kLocal) return local_placement(context, gpu, output);
    if (!gpu.local_node) {
      // Another GPU's node is known (or the probe would be skipped): this
      // one is left out, which is no fault of the GPU.
      output.warnings.push_back(gpu_error(gpu,
                                          "not measured: its NUMA node is unknown, so no node can be "
                                          "called remote"));
      return std::nullopt;
    }
    auto remote = remote_placement(context, gpu);
    if (!remote) {
      add_gpu_fault(output, gpu, remote.error().message);
      return std::nullopt;
    }
    return remote.value();
  }

  void run_gpu(const ProbeContext& context, const GpuTarget& gpu, const Placement& placement, Latch& latch,
               ProbeMeasurements& output) const override {
    for (Direction direction : directions_) {
      auto setup = set_up_stream(context, gpu, direction, method_, placement, context.config.size_bytes);
      if (!setup) {
        add_gpu_fault(output, gpu, setup.error().message);
        continue;
      }
      CopyStream* streams[] = {setup.value().stream.get()};
      auto rates = time_streams(context, streams, latch);
      if (!rates) {
        add_gpu_fault(output, gpu, rates.error().message);
        continue;
      }
      output.measurements.push_back(
          stream_measurement(key(), gpu, setup.value(), Aggregation::kAlone, std::move(rates.value().stream_gbps[0])));
    }
  }

 private:
  std::vector<Direction> directions_;
  CopyMethod method_;
  Where where_;
};

// Both directions of one GPU at once, each timed by its own events.
class BidirectionalProbe final : public PerGpuProbe {
 public:
  using PerGpuProbe::PerGpuProbe;

 protected:
  void run_gpu(const ProbeContext& context, const GpuTarget& gpu, const Placement& placement, Latch& latch,
               ProbeMeasurements& output) const override {
    std::vector<StreamSetup> setups;
    for (Direction direction : kBothDirections) {
      auto setup =
          set_up_stream(context, gpu, direction, CopyMethod::kCopyEngine, placement, context.config.size_bytes);
      if (!setup) {
        add_gpu_fault(output, gpu, setup.error().message);
        return;
      }
      setups.push_back(std::move(setup).value());
    }
    // One pass per measured direction, the other direction copying twice
    // the bytes, as nvbandwidth does: with equal bytes the faster direction
    // ends first and the slower one's tail runs alone, at the one-way rate,
    // which inflates the "while the other one runs" figure.
    for (std::size_t measured = 0; measured < setups.size(); ++measured) {
      CopyStream& interfering = *setups[1 - measured].stream;
      const CopyShape shape = interfering.shape();
      if (auto doubled = interfering.reshape({shape.size_bytes, 2 * shape.copies}); !doubled) {
        add_gpu_fault(output, gpu, doubled.error().message);
        return;
      }
      CopyStream* streams[] = {setups[0].stream.get(), setups[1].stream.get()};
      auto rates = time_streams(context, streams, latch);
      if (auto restored = interfering.reshape(shape); !restored) {
        add_gpu_fault(output, gpu, restored.error().message);
        return;
      }
      if (!rates) {
        add_gpu_fault(output, gpu, rates.error().message);
        return;
      }
      output.measurements.push_back(stream_measurement(key(), gpu, setups[measured], Aggregation::kWithReverse,
                                                       std::move(rates.value().stream_gbps[measured])));
    }
  }
};

// Pageable copies reach their plateau well below the verdict size (the
// driver stages them through its own pinned buffers a few MiB at a time), and
// their host-side verification runs at a few GB/s; capping the size keeps
// --quick inside its budget on an 8-GPU node.
constexpr std::uint64_t kPageableMaxBytes = std::uint64_t{64} << 20;

// Pageable host memory: on the GPU's node, but not page-locked.
class PageableProbe final : public GpuProbe {
 public:
  using GpuProbe::GpuProbe;

 protected:
  // No latch, no registration: the driver stages through its own buffers.
  [[nodiscard]] bool latched() const override { return false; }

  void run_on(const ProbeContext& context, const std::vector<GpuTarget>& targets,
              ProbeMeasurements& output) const override {
    for (const GpuTarget& gpu : targets) {
      Placement placement = local_placement(context, gpu, output);
      const std::uint64_t size_bytes = std::min(context.config.size_bytes, kPageableMaxBytes);
      for (Direction direction : kBothDirections) {
        auto buffer =
            NumaBuffer::allocate(*context.topology, placement.numa_node, static_cast<std::size_t>(size_bytes));
        if (!buffer) {
          add_gpu_fault(output, gpu, "host buffer: " + buffer.error().message);
          continue;
        }
        auto stream = PageableCopyStream::create(
            gpu.ordinal, direction, std::span<std::byte>(buffer.value().data(), buffer.value().size_bytes()),
            stream_seed(gpu.ordinal, direction, CopyMethod::kCopyEngine));
        if (!stream) {
          add_gpu_fault(output, gpu, stream.error().message);
          continue;
        }
        const TrialPlan plan{context.config.warmup_trials, context.config.trials, stream.value().bytes_per_trial()};
        // The driver stages a pageable copy on the copying thread's CPU:
        // that thread runs on the buffer's node, as the pinned probes' host
        // work does. Only values cross to the thread (it may be abandoned).
        auto bind_error = std::make_shared<std::string>();
        const auto bind_copy_thread = [topology = context.topology, node = placement.numa_node, bind_error] {
          if (auto bound = bind_thread_to_node(*topology, node); !bound) *bind_error = bound.error().message;
        };
        Result<std::vector<double>> trials = [&] {
          LoadScope load(context.load, {gpu.address});
          return run_trials(plan, [&] { return stream.value().run_trial(bind_copy_thread); });
        }();
        if (!stream.value().abandoned() && !bind_error->empty()) {
          output.warnings.push_back(gpu_error(gpu, "the pageable copy's thread was not bound to NUMA node " +
                                                       std::to_string(placement.numa_node) + ": " + *bind_error));
        }
        if (!trials) {
          add_gpu_fault(output, gpu, stream.value().label() + ": " + trials.error().message);
          // The copy given up at its deadline may still be using the buffer.
          if (stream.value().abandoned()) keep_until_exit(std::move(buffer).value());
          continue;
        }
        const bool local_known = placement.local.has_value() && gpu.local_node.has_value();
        output.measurements.push_back(verified_measurement(
            {key(),
             gpu.name,
             {gpu.address},
             direction,
             CopyMethod::kCopyEngine,
             HostMemory::kPageable,
             Aggregation::kAlone,
             size_bytes,
             stream.value().bytes_per_trial(),
             buffer.value().numa_node(),
             local_known ? std::optional<bool>(buffer.value().numa_node() == *gpu.local_node) : placement.local},
            std::move(trials).value()));
      }
    }
  }
};

// Several GPUs copying the same way at once, behind one latch.
Result<StreamRates> run_together(const ProbeContext& context, const std::vector<GpuTarget>& gpus, Direction direction,
                                 std::vector<StreamSetup>& setups, std::vector<GpuTarget>& copied,
                                 ProbeMeasurements& output) {
  for (const GpuTarget& gpu : gpus) {
    auto setup = set_up_stream(context, gpu, direction, CopyMethod::kCopyEngine, local_placement(context, gpu, output),
                               context.config.size_bytes);
    if (!setup) {
      add_gpu_fault(output, gpu, setup.error().message);
      continue;
    }
    setups.push_back(std::move(setup).value());
    copied.push_back(gpu);
  }
  if (setups.empty()) return make_error("no GPU could be set up");
  auto latch = Latch::create(copied.front().ordinal, context.config.latch_timeout_s);
  if (!latch) return latch.error();
  std::vector<CopyStream*> streams;
  streams.reserve(setups.size());
  for (StreamSetup& setup : setups) streams.push_back(setup.stream.get());
  return time_streams(context, streams, latch.value());
}

std::vector<PciAddress> addresses_of(const std::vector<GpuTarget>& gpus) {
  std::vector<PciAddress> addresses;
  addresses.reserve(gpus.size());
  for (const GpuTarget& gpu : gpus) addresses.push_back(gpu.address);
  return addresses;
}

std::string names_of(const std::vector<GpuTarget>& gpus) {
  std::string names;
  for (const GpuTarget& gpu : gpus) names += (names.empty() ? "" : ", ") + gpu.name;
  return names;
}

class AllGpusProbe final : public GpuProbe {
 public:
  using GpuProbe::GpuProbe;

 protected:
  void run_on(const ProbeContext& context, const std::vector<GpuTarget>& targets,
              ProbeMeasurements& output) const override {
    for (Direction direction : kBothDirections) {
      std::vector<StreamSetup> setups;
      std::vector<GpuTarget> copied;
      auto rates = run_together(context, targets, direction, setups, copied, output);
      if (!rates) {
        // With no GPU set up, each one's own fault already says why.
        if (!copied.empty()) {
          add_group_failure(output, copied,
                            "all GPUs " + std::string(to_string(direction)) + " (" + names_of(targets) + ")",
                            rates.error().message);
        }
        continue;
      }
      const std::uint64_t size = context.config.size_bytes;
      std::uint64_t total_bytes = 0;
      for (std::size_t i = 0; i < copied.size(); ++i) {
        total_bytes += setups[i].stream->bytes_per_trial();
        output.measurements.push_back(stream_measurement(key(), copied[i], setups[i], Aggregation::kWithPeers,
                                                         std::move(rates.value().stream_gbps[i])));
      }
      output.measurements.push_back(
          verified_measurement({key(), std::string(kAllGpusSubject), addresses_of(copied), direction,
                                CopyMethod::kCopyEngine, HostMemory::kPinned, Aggregation::kTotalOverWallTime, size,
                                total_bytes, common_node(setups), all_local(setups)},
                               std::move(rates.value().wall_gbps)));
    }
  }
};

class GroupProbe final : public GpuProbe {
 public:
  using GpuProbe::GpuProbe;

 protected:
  [[nodiscard]] std::optional<std::string> evidence_skip_reason(const Evidence& evidence) const override {
    if (shared_uplink_groups(evidence).empty()) {
      return "no switch or root port is shared by two or more GPUs: each GPU's uplink carries only its own traffic";
    }
    return std::nullopt;
  }

  void run_on(const ProbeContext& context, const std::vector<GpuTarget>& targets,
              ProbeMeasurements& output) const override {
    for (const GpuGroup& group : shared_uplink_groups(context.evidence)) {
      // GPUs CUDA could not resolve were reported by resolve(); a group is
      // measured with the members that remain, if two or more do.
      std::vector<GpuTarget> members;
      for (const GpuTarget& gpu : targets) {
        if (std::find(group.gpus.begin(), group.gpus.end(), gpu.address) != group.gpus.end()) members.push_back(gpu);
      }
      if (members.size() < 2) {
        output.errors.push_back(group.subject + ": fewer than two of its GPUs are usable by CUDA");
        continue;
      }
      for (Direction direction : kBothDirections) {
        std::vector<StreamSetup> setups;
        std::vector<GpuTarget> copied;
        auto rates = run_together(context, members, direction, setups, copied, output);
        if (!rates) {
          if (!copied.empty()) {
            add_group_failure(output, copied,
                              group.subject + " " + std::string(to_string(direction)) + " (" + names_of(members) + ")",
                              rates.error().message);
          }
          continue;
        }
        std::uint64_t total_bytes = 0;
        for (const StreamSetup& setup : setups) total_bytes += setup.stream->bytes_per_trial();
        output.measurements.push_back(
            verified_measurement({key(), group.subject, addresses_of(copied), direction, CopyMethod::kCopyEngine,
                                  HostMemory::kPinned, Aggregation::kTotalOverWallTime, context.config.size_bytes,
                                  total_bytes, common_node(setups), all_local(setups)},
                                 std::move(rates.value().wall_gbps)));
      }
    }
  }
};

std::vector<std::uint64_t> sweep_sizes() {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = kSweepMinBytes; size <= kSweepMaxBytes; size *= 4) sizes.push_back(size);
  return sizes;
}

int sweep_copies(std::uint64_t size_bytes) {
  const std::uint64_t copies = kSweepTrialBytes / size_bytes;
  return static_cast<int>(std::clamp<std::uint64_t>(copies, 1, kSweepMaxCopies));
}

class SweepProbe final : public PerGpuProbe {
 public:
  using PerGpuProbe::PerGpuProbe;

 protected:
  void run_gpu(const ProbeContext& context, const GpuTarget& gpu, const Placement& placement, Latch& latch,
               ProbeMeasurements& output) const override {
    for (Direction direction : kBothDirections) {
      // One buffer of the largest size serves every size: registering
      // pins every page, which is slow, so it is done once.
      auto setup = set_up_stream(context, gpu, direction, CopyMethod::kCopyEngine, placement, kSweepMaxBytes);
      if (!setup) {
        add_gpu_fault(output, gpu, setup.error().message);
        continue;
      }
      CopyStream& stream = *setup.value().stream;
      for (std::uint64_t size : sweep_sizes()) {
        const std::string at = std::string(to_string(direction)) + " at " + std::to_string(size) + " bytes: ";
        if (auto reshaped = stream.reshape({static_cast<std::size_t>(size), sweep_copies(size)}); !reshaped) {
          add_gpu_fault(output, gpu, at + reshaped.error().message);
          continue;
        }
        CopyStream* streams[] = {&stream};
        auto rates = time_streams(context, streams, latch);
        if (!rates) {
          add_gpu_fault(output, gpu, at + rates.error().message);
          // A retired GPU would fail every later size the same way.
          if (stream.abandoned()) break;
          continue;
        }
        output.measurements.push_back(stream_measurement(key(), gpu, setup.value(), Aggregation::kAlone,
                                                         std::move(rates.value().stream_gbps[0])));
      }
    }
  }
};

// --- Descriptions: what each number means and how it is aggregated.

constexpr std::string_view kH2dCeDescription =
    "Host-to-device bandwidth of each GPU alone, by its copy engine (cudaMemcpyAsync), from a pinned host buffer "
    "bound to the GPU's own NUMA node. Every trial queues its copy behind a latch kernel, is timed with CUDA events "
    "around the copy only, and is verified afterwards. One measurement per GPU (aggregation alone): the rate of "
    "each trial, with median, min, max and CV. This is the number the link budget is checked against.";
constexpr std::string_view kD2hCeDescription =
    "Device-to-host bandwidth of each GPU alone, by its copy engine (cudaMemcpyAsync), into a pinned host buffer "
    "bound to the GPU's own NUMA node; latched, event-timed and verified like h2d_ce. One measurement per GPU "
    "(aggregation alone). Writes to the host are posted, so this direction is often a little faster than h2d.";
constexpr std::string_view kH2dSmDescription =
    "Host-to-device bandwidth of each GPU alone when its SMs do the copy: a grid-stride kernel loads mapped pinned "
    "host memory on the GPU's NUMA node 16 bytes per thread and stores it to device memory. One measurement per "
    "GPU (aggregation alone). SM reads of host memory are limited by the requests a GPU keeps in flight, so this "
    "is often well below h2d_ce and d2h_sm (nvbandwidth shows about 35 GB/s on H100 where the copy engine gives "
    "55); that gap alone is not a link fault.";
constexpr std::string_view kD2hSmDescription =
    "Device-to-host bandwidth of each GPU alone when its SMs do the copy: a grid-stride kernel loads device memory "
    "and stores it 16 bytes per thread to mapped pinned host memory on the GPU's NUMA node. One measurement per "
    "GPU (aggregation alone); posted writes usually reach copy-engine rates.";
constexpr std::string_view kBidirCeDescription =
    "Both directions of each GPU at once by copy engine: a host-to-device and a device-to-host stream released "
    "together by one latch, each timed by its own events. Two measurements per GPU, one per direction, each with "
    "aggregation with_reverse (this direction's rate while the other one runs: in its pass the other direction "
    "copies twice the bytes, so it runs for the whole of the measured copy). Their sum shows how much of a "
    "full-duplex link the GPU and host can use at once; compare each with a per-direction budget, not with twice "
    "it.";
constexpr std::string_view kPageableCeDescription =
    "Copy-engine bandwidth of each GPU in both directions through pageable (not page-locked) host memory on the "
    "GPU's NUMA node, as applications that skip pinning see it: cudaMemcpy stages through the driver's own "
    "buffers. Timed on the host clock around the copy and a device synchronize; verified after each trial; at most 64 "
    "MiB per copy. One "
    "measurement per GPU and direction (aggregation alone, host memory pageable). Expect well under the pinned "
    "numbers; it says what the node gives unpinned code, not what the link can carry.";
constexpr std::string_view kAllGpusCeDescription =
    "Every GPU copying at once by copy engine, one direction at a time, each from pinned memory on its own NUMA "
    "node, all released together by one latch. Per direction: one measurement per GPU (aggregation with_peers: "
    "that GPU's rate while all copy) and one for subject \"all gpus\" (aggregation total_over_wall_time: every "
    "byte over the wall time from the first start to the last end). GPUs that lose bandwidth here but not alone "
    "share a switch uplink, a root port or the host's memory bandwidth.";
constexpr std::string_view kGroupCeDescription =
    "For each switch upstream port or root port whose uplink two or more GPUs share, those GPUs copy at once by "
    "copy engine, one direction at a time, released together by one latch. One measurement per group and "
    "direction, subject \"port <address>\", aggregation total_over_wall_time: every byte of the group over the "
    "wall time from the first start to the last end, which is what the shared uplink carried. Compare it with "
    "the uplink's budget, not with the GPUs' own links.";
constexpr std::string_view kRemoteNumaCeDescription =
    "Copy-engine bandwidth of each GPU alone in both directions with the pinned host buffer on a NUMA node other "
    "than the GPU's (host_numa_local false), to show what a misplaced buffer costs: the traffic then crosses the "
    "inter-socket link. One measurement per GPU and direction (aggregation alone). Not a link check: a low number "
    "here with a good h2d_ce says to bind buffers and threads to the GPU's node.";
constexpr std::string_view kSweepCeDescription =
    "Copy-engine bandwidth of each GPU alone in both directions at 4 KiB, 16 KiB, ... 1 GiB (powers of 4), pinned "
    "memory on the GPU's NUMA node. Small sizes repeat the copy within a trial (up to 256 copies, at least 64 MiB "
    "where that allows), so bytes_per_trial is size times copies. One measurement per GPU, size and direction "
    "(aggregation alone): the bandwidth curve, where per-copy overhead dominates small sizes and the link large "
    "ones.";

}  // namespace

void add_gpu_probes(ProbeRegistry& registry) {
  using Where = SingleGpuProbe::Where;
  registry.push_back(std::make_unique<SingleGpuProbe>("h2d_ce", kH2dCeDescription,
                                                      std::vector<Direction>{Direction::kHostToDevice},
                                                      CopyMethod::kCopyEngine, Where::kLocal));
  registry.push_back(std::make_unique<SingleGpuProbe>("d2h_ce", kD2hCeDescription,
                                                      std::vector<Direction>{Direction::kDeviceToHost},
                                                      CopyMethod::kCopyEngine, Where::kLocal));
  registry.push_back(std::make_unique<SingleGpuProbe>("h2d_sm", kH2dSmDescription,
                                                      std::vector<Direction>{Direction::kHostToDevice},
                                                      CopyMethod::kSmKernel, Where::kLocal));
  registry.push_back(std::make_unique<SingleGpuProbe>("d2h_sm", kD2hSmDescription,
                                                      std::vector<Direction>{Direction::kDeviceToHost},
                                                      CopyMethod::kSmKernel, Where::kLocal));
  registry.push_back(std::make_unique<BidirectionalProbe>("bidir_ce", kBidirCeDescription, true));
  registry.push_back(std::make_unique<PageableProbe>("pageable_ce", kPageableCeDescription, true));
  registry.push_back(std::make_unique<AllGpusProbe>("all_gpus_ce", kAllGpusCeDescription, true));
  registry.push_back(std::make_unique<GroupProbe>("group_ce", kGroupCeDescription, true));
  registry.push_back(
      std::make_unique<SingleGpuProbe>("remote_numa_ce", kRemoteNumaCeDescription,
                                       std::vector<Direction>(std::begin(kBothDirections), std::end(kBothDirections)),
                                       CopyMethod::kCopyEngine, Where::kRemote));
  registry.push_back(std::make_unique<SweepProbe>(kSweepProbeKey, kSweepCeDescription, false));
}

}  // namespace pcieval
