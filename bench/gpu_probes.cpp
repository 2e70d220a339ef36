// The GPU probes: host<->device bandwidth per GPU, by copy engine and by SM
// kernels, one way and both ways, alone and with every other GPU copying, by
// size, and with the host buffer on the wrong NUMA node. Every number comes
// from run_trials over latched, event-timed, verified trials (kernels/).
//
// Failures are errors naming the GPU (or group) in ProbeOutput::errors, and
// the other GPUs are still measured: a CUDA error, data that did not verify,
// and a latch timeout alike. A latch timeout is an error rather than a
// discarded trial with a warning: it means the host could not queue one
// trial's copies within RunConfig::latch_timeout_s (or a CUDA call stalled
// behind the latch), which a retry would meet again, and a trial set with
// holes would hide it. Warnings are kept for numbers that are valid but need
// context (a GPU whose NUMA node is unknown).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/gpu_groups.hpp"
#include "bench/probe.hpp"
#include "bench/trials.hpp"
#include "kernels/copy_lane.hpp"
#include "kernels/cuda_device.hpp"
#include "kernels/latch.hpp"
#include "kernels/pattern.hpp"
#include "topology/hwloc_locality.hpp"
#include "topology/numa_memory.hpp"

namespace pcieval {
namespace {

constexpr Direction kBothDirections[] = {Direction::kHostToDevice, Direction::kDeviceToHost};

// The sweep: 4 KiB to 1 GiB in powers of 4. Below kSweepTrialBytes a trial
// repeats the copy so it lasts long enough to time (events resolve about half
// a microsecond), up to kSweepMaxCopies: more copies queued behind one latch
// could fill the stream's queue, and the host would block queueing while the
// latch holds the stream.
constexpr std::uint64_t kSweepMinBytes = std::uint64_t{4} << 10;
constexpr std::uint64_t kSweepMaxBytes = std::uint64_t{1} << 30;
constexpr std::uint64_t kSweepTrialBytes = std::uint64_t{64} << 20;
constexpr int kSweepMaxCopies = 256;

constexpr std::string_view kAllGpusSubject = "all gpus";

// --- Planning: which GPUs, which CUDA ordinals, which NUMA nodes.

struct GpuTarget {
  PciAddress address;
  std::string name;  // "0000:17:00.0"
  int ordinal = -1;
  std::optional<int> local_node;  // the GPU's nearest NUMA node, when known
};

std::string gpu_error(const GpuTarget& gpu, const std::string& message) { return "GPU " + gpu.name + ": " + message; }

// hwloc's answer first (it is what the buffers are bound with), then sysfs.
std::optional<int> numa_node_of(const DeviceRecord& gpu) {
  if (gpu.locality && gpu.locality->numa_node) return gpu.locality->numa_node;
  if (gpu.function.numa_node.ok() && gpu.function.numa_node.value() >= 0) return gpu.function.numa_node.value();
  return std::nullopt;
}

// The CUDA ordinal of each GPU. A GPU of the evidence that CUDA does not see
// (CUDA_VISIBLE_DEVICES, a broken device) is an error naming it, never a
// silent omission.
std::vector<GpuTarget> resolve(const std::vector<const DeviceRecord*>& gpus, ProbeOutput& output) {
  std::vector<GpuTarget> targets;
  for (const DeviceRecord* gpu : gpus) {
    GpuTarget target{gpu->function.bdf, to_string(gpu->function.bdf), -1, numa_node_of(*gpu)};
    auto ordinal = cuda_ordinal_of(target.address);
    if (!ordinal) {
      output.errors.push_back(gpu_error(target, ordinal.error().message));
      continue;
    }
    target.ordinal = ordinal.value();
    targets.push_back(std::move(target));
  }
  return targets;
}

struct Placement {
  int numa_node = 0;
  std::optional<bool> local;  // Measurement::host_numa_local
};

// The GPU's own node. Unknown on a one-node machine is still local; unknown
// on several nodes uses the first node and says so.
Placement local_placement(const ProbeContext& context, const GpuTarget& gpu, ProbeOutput& output) {
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
std::uint32_t lane_seed(int ordinal, Direction direction, CopyMethod method) {
  return 0x9c1e0000U + static_cast<std::uint32_t>(ordinal) * 16U + static_cast<std::uint32_t>(direction) * 4U +
         static_cast<std::uint32_t>(method);
}

// --- Timing

// Raises the load signal (when there is one) for its lifetime, so link
// samples taken while copies run count as under load.
class LoadGuard {
 public:
  explicit LoadGuard(const ProbeContext& context) {
    if (context.load != nullptr) scope_.emplace(*context.load);
  }

 private:
  std::optional<LoadScope> scope_;
};

struct LaneRates {
  std::vector<double> wall_gbps;               // every lane's bytes over the wall time, per kept trial
  std::vector<std::vector<double>> lane_gbps;  // [lane][trial]: each lane's bytes over its own time
};

// Runs warm-up and timed trials of `lanes` together through run_trials (whose
// own rates are the total over the wall time) and recovers each lane's rate
// from the same trials.
Result<LaneRates> time_lanes(const ProbeContext& context, std::span<CopyLane* const> lanes, Latch& latch) {
  std::uint64_t total_bytes = 0;
  for (const CopyLane* lane : lanes) total_bytes += lane->bytes_per_trial();
  const TrialPlan plan{context.config.warmup_trials, context.config.trials, total_bytes};
  std::vector<TrialTiming> timings;
  Result<std::vector<double>> wall_gbps = [&] {
    LoadGuard load(context);
    return run_trials(plan, [&]() -> Result<double> {
      auto timing = run_latched_trial(lanes, latch);
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

  LaneRates rates{std::move(wall_gbps).value(), std::vector<std::vector<double>>(lanes.size())};
  for (std::size_t lane = 0; lane < lanes.size(); ++lane) {
    for (const TrialTiming& timing : timings) {
      const double seconds = timing.lane_s[lane];
      if (!(seconds > 0)) {
        return make_error(lanes[lane]->label() + ": a trial reported " + std::to_string(seconds) +
                          " s: the event timer did not advance");
      }
      rates.lane_gbps[lane].push_back(gbps_of(lanes[lane]->bytes_per_trial(), seconds));
    }
  }
  return rates;
}

// --- Measurements

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

// Only called for trials that all verified (run_latched_trial and
// PageableLane::run_trial return no time for data that did not).
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

// One GPU's buffer and lane in one direction.
struct LaneSetup {
  NumaBuffer buffer;  // declared first: destroyed after the lane that registered it
  std::unique_ptr<CopyLane> lane;
  Placement placement;
};

Result<LaneSetup> set_up_lane(const ProbeContext& context, const GpuTarget& gpu, Direction direction, CopyMethod method,
                              Placement placement, std::uint64_t bytes) {
  auto buffer = NumaBuffer::allocate(*context.topology, placement.numa_node, static_cast<std::size_t>(bytes));
  if (!buffer) return make_error("host buffer: " + buffer.error().message);
  const int found_node = buffer.value().numa_node();
  placement.local = placement.local.has_value() && gpu.local_node ? std::optional<bool>(found_node == *gpu.local_node)
                                                                  : placement.local;
  placement.numa_node = found_node;
  std::span<std::byte> host(buffer.value().data(), buffer.value().size_bytes());
  auto lane = CopyLane::create(gpu.ordinal, direction, method, host, lane_seed(gpu.ordinal, direction, method));
  if (!lane) return lane.error();
  return LaneSetup{std::move(buffer).value(), std::make_unique<CopyLane>(std::move(lane).value()), placement};
}

// The placement of several lanes together: one node if they share it.
std::optional<int> common_node(const std::vector<LaneSetup>& setups) {
  if (setups.empty()) return std::nullopt;
  const int node = setups.front().placement.numa_node;
  for (const LaneSetup& setup : setups) {
    if (setup.placement.numa_node != node) return std::nullopt;
  }
  return node;
}

// Every lane local: true; any remote: false; otherwise unknown.
std::optional<bool> all_local(const std::vector<LaneSetup>& setups) {
  bool unknown = false;
  for (const LaneSetup& setup : setups) {
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
    if (auto reason = topology_skip_reason(*context.topology)) return reason;
    if (auto count = cuda_device_count(); !count) return "no usable CUDA device: " + count.error().message;
    return std::nullopt;
  }

  [[nodiscard]] ProbeOutput run(const ProbeContext& context) const override {
    ProbeOutput output;
    if (auto size = check_size(context.config); !size) {
      output.errors.push_back(size.error().message);
      return output;
    }
    const std::vector<GpuTarget> targets = resolve(gpus_of(context.evidence), output);
    if (!targets.empty()) run_on(context, targets, output);
    // A placement warning is found once per lane; say it once.
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
  [[nodiscard]] virtual std::optional<std::string> topology_skip_reason(const HwlocTopology& /*topology*/) const {
    return std::nullopt;
  }
  // REQUIRES: !targets.empty(); every target's ordinal resolved.
  virtual void run_on(const ProbeContext& context, const std::vector<GpuTarget>& targets,
                      ProbeOutput& output) const = 0;

 private:
  std::string_view key_;
  std::string_view description_;
  bool in_quick_;
};

// One GPU at a time, one direction at a time, pinned host memory on the
// GPU's node (or, for remote_numa_ce, on another node).
class SingleGpuProbe final : public GpuProbe {
 public:
  enum class Where { kLocal, kRemote };

  SingleGpuProbe(std::string_view key, std::string_view description, std::vector<Direction> directions,
                 CopyMethod method, Where where)
      : GpuProbe(key, description, where == Where::kLocal),
        directions_(std::move(directions)),
        method_(method),
        where_(where) {}

 protected:
  [[nodiscard]] std::optional<std::string> topology_skip_reason(const HwlocTopology& topology) const override {
    if (where_ == Where::kRemote && numa_nodes(topology).size() < 2) {
      return "this machine has one NUMA node: there is no remote node to place the host buffer on";
    }
    return std::nullopt;
  }

  void run_on(const ProbeContext& context, const std::vector<GpuTarget>& targets, ProbeOutput& output) const override {
    for (const GpuTarget& gpu : targets) {
      Placement placement;
      if (where_ == Where::kLocal) {
        placement = local_placement(context, gpu, output);
      } else {
        auto remote = remote_placement(context, gpu);
        if (!remote) {
          output.errors.push_back(gpu_error(gpu, remote.error().message));
          continue;
        }
        placement = remote.value();
      }
      auto latch = Latch::create(gpu.ordinal, context.config.latch_timeout_s);
      if (!latch) {
        output.errors.push_back(gpu_error(gpu, latch.error().message));
        continue;
      }
      for (Direction direction : directions_) {
        auto setup = set_up_lane(context, gpu, direction, method_, placement, context.config.size_bytes);
        if (!setup) {
          output.errors.push_back(gpu_error(gpu, setup.error().message));
          continue;
        }
        CopyLane* lanes[] = {setup.value().lane.get()};
        auto rates = time_lanes(context, lanes, latch.value());
        if (!rates) {
          output.errors.push_back(gpu_error(gpu, rates.error().message));
          continue;
        }
        const CopyLane& lane = *setup.value().lane;
        output.measurements.push_back(verified_measurement({key(),
                                                            gpu.name,
                                                            {gpu.address},
                                                            direction,
                                                            method_,
                                                            HostMemory::kPinned,
                                                            Aggregation::kAlone,
                                                            lane.shape().size_bytes,
                                                            lane.bytes_per_trial(),
                                                            setup.value().placement.numa_node,
                                                            setup.value().placement.local},
                                                           std::move(rates.value().lane_gbps[0])));
      }
    }
  }

 private:
  std::vector<Direction> directions_;
  CopyMethod method_;
  Where where_;
};

// Both directions of one GPU at once, each timed by its own events.
class BidirectionalProbe final : public GpuProbe {
 public:
  using GpuProbe::GpuProbe;

 protected:
  void run_on(const ProbeContext& context, const std::vector<GpuTarget>& targets, ProbeOutput& output) const override {
    for (const GpuTarget& gpu : targets) {
      const Placement placement = local_placement(context, gpu, output);
      auto latch = Latch::create(gpu.ordinal, context.config.latch_timeout_s);
      if (!latch) {
        output.errors.push_back(gpu_error(gpu, latch.error().message));
        continue;
      }
      std::vector<LaneSetup> setups;
      for (Direction direction : kBothDirections) {
        auto setup =
            set_up_lane(context, gpu, direction, CopyMethod::kCopyEngine, placement, context.config.size_bytes);
        if (!setup) {
          output.errors.push_back(gpu_error(gpu, setup.error().message));
          break;
        }
        setups.push_back(std::move(setup).value());
      }
      if (setups.size() != 2) continue;
      CopyLane* lanes[] = {setups[0].lane.get(), setups[1].lane.get()};
      auto rates = time_lanes(context, lanes, latch.value());
      if (!rates) {
        output.errors.push_back(gpu_error(gpu, rates.error().message));
        continue;
      }
      for (std::size_t i = 0; i < setups.size(); ++i) {
        const CopyLane& lane = *setups[i].lane;
        output.measurements.push_back(verified_measurement({key(),
                                                            gpu.name,
                                                            {gpu.address},
                                                            lane.direction(),
                                                            CopyMethod::kCopyEngine,
                                                            HostMemory::kPinned,
                                                            Aggregation::kWithReverse,
                                                            lane.shape().size_bytes,
                                                            lane.bytes_per_trial(),
                                                            setups[i].placement.numa_node,
                                                            setups[i].placement.local},
                                                           std::move(rates.value().lane_gbps[i])));
      }
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
  void run_on(const ProbeContext& context, const std::vector<GpuTarget>& targets, ProbeOutput& output) const override {
    for (const GpuTarget& gpu : targets) {
      Placement placement = local_placement(context, gpu, output);
      const std::uint64_t size_bytes = std::min(context.config.size_bytes, kPageableMaxBytes);
      for (Direction direction : kBothDirections) {
        auto buffer =
            NumaBuffer::allocate(*context.topology, placement.numa_node, static_cast<std::size_t>(size_bytes));
        if (!buffer) {
          output.errors.push_back(gpu_error(gpu, "host buffer: " + buffer.error().message));
          continue;
        }
        auto lane = PageableLane::create(gpu.ordinal, direction,
                                         std::span<std::byte>(buffer.value().data(), buffer.value().size_bytes()),
                                         lane_seed(gpu.ordinal, direction, CopyMethod::kCopyEngine));
        if (!lane) {
          output.errors.push_back(gpu_error(gpu, lane.error().message));
          continue;
        }
        const TrialPlan plan{context.config.warmup_trials, context.config.trials, lane.value().bytes_per_trial()};
        Result<std::vector<double>> trials = [&] {
          LoadGuard load(context);
          return run_trials(plan, [&] { return lane.value().run_trial(); });
        }();
        if (!trials) {
          output.errors.push_back(gpu_error(gpu, lane.value().label() + ": " + trials.error().message));
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
             lane.value().bytes_per_trial(),
             buffer.value().numa_node(),
             local_known ? std::optional<bool>(buffer.value().numa_node() == *gpu.local_node) : placement.local},
            std::move(trials).value()));
      }
    }
  }
};

// Several GPUs copying the same way at once, behind one latch.
Result<LaneRates> run_together(const ProbeContext& context, const std::vector<GpuTarget>& gpus, Direction direction,
                               std::vector<LaneSetup>& setups, std::vector<GpuTarget>& copied, ProbeOutput& output) {
  for (const GpuTarget& gpu : gpus) {
    auto setup = set_up_lane(context, gpu, direction, CopyMethod::kCopyEngine, local_placement(context, gpu, output),
                             context.config.size_bytes);
    if (!setup) {
      output.errors.push_back(gpu_error(gpu, setup.error().message));
      continue;
    }
    setups.push_back(std::move(setup).value());
    copied.push_back(gpu);
  }
  if (setups.empty()) return make_error("no GPU could be set up");
  auto latch = Latch::create(copied.front().ordinal, context.config.latch_timeout_s);
  if (!latch) return latch.error();
  std::vector<CopyLane*> lanes;
  lanes.reserve(setups.size());
  for (LaneSetup& setup : setups) lanes.push_back(setup.lane.get());
  return time_lanes(context, lanes, latch.value());
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
  void run_on(const ProbeContext& context, const std::vector<GpuTarget>& targets, ProbeOutput& output) const override {
    for (Direction direction : kBothDirections) {
      std::vector<LaneSetup> setups;
      std::vector<GpuTarget> copied;
      auto rates = run_together(context, targets, direction, setups, copied, output);
      if (!rates) {
        output.errors.push_back("all GPUs " + std::string(to_string(direction)) + " (" + names_of(targets) +
                                "): " + rates.error().message);
        continue;
      }
      const std::uint64_t size = context.config.size_bytes;
      std::uint64_t total_bytes = 0;
      for (std::size_t i = 0; i < copied.size(); ++i) {
        const CopyLane& lane = *setups[i].lane;
        total_bytes += lane.bytes_per_trial();
        output.measurements.push_back(verified_measurement({key(),
                                                            copied[i].name,
                                                            {copied[i].address},
                                                            direction,
                                                            CopyMethod::kCopyEngine,
                                                            HostMemory::kPinned,
                                                            Aggregation::kWithPeers,
                                                            size,
                                                            lane.bytes_per_trial(),
                                                            setups[i].placement.numa_node,
                                                            setups[i].placement.local},
                                                           std::move(rates.value().lane_gbps[i])));
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

  void run_on(const ProbeContext& context, const std::vector<GpuTarget>& targets, ProbeOutput& output) const override {
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
        std::vector<LaneSetup> setups;
        std::vector<GpuTarget> copied;
        auto rates = run_together(context, members, direction, setups, copied, output);
        if (!rates) {
          output.errors.push_back(group.subject + " " + std::string(to_string(direction)) + " (" + names_of(members) +
                                  "): " + rates.error().message);
          continue;
        }
        std::uint64_t total_bytes = 0;
        for (const LaneSetup& setup : setups) total_bytes += setup.lane->bytes_per_trial();
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

class SweepProbe final : public GpuProbe {
 public:
  using GpuProbe::GpuProbe;

 protected:
  void run_on(const ProbeContext& context, const std::vector<GpuTarget>& targets, ProbeOutput& output) const override {
    for (const GpuTarget& gpu : targets) {
      const Placement placement = local_placement(context, gpu, output);
      auto latch = Latch::create(gpu.ordinal, context.config.latch_timeout_s);
      if (!latch) {
        output.errors.push_back(gpu_error(gpu, latch.error().message));
        continue;
      }
      for (Direction direction : kBothDirections) {
        // One buffer of the largest size serves every size: registering
        // pins every page, which is slow, so it is done once.
        auto setup = set_up_lane(context, gpu, direction, CopyMethod::kCopyEngine, placement, kSweepMaxBytes);
        if (!setup) {
          output.errors.push_back(gpu_error(gpu, setup.error().message));
          continue;
        }
        CopyLane& lane = *setup.value().lane;
        for (std::uint64_t size : sweep_sizes()) {
          const std::string at = std::string(to_string(direction)) + " at " + std::to_string(size) + " bytes: ";
          if (auto reshaped = lane.reshape({static_cast<std::size_t>(size), sweep_copies(size)}); !reshaped) {
            output.errors.push_back(gpu_error(gpu, at + reshaped.error().message));
            continue;
          }
          CopyLane* lanes[] = {&lane};
          auto rates = time_lanes(context, lanes, latch.value());
          if (!rates) {
            output.errors.push_back(gpu_error(gpu, at + rates.error().message));
            continue;
          }
          output.measurements.push_back(verified_measurement({key(),
                                                              gpu.name,
                                                              {gpu.address},
                                                              direction,
                                                              CopyMethod::kCopyEngine,
                                                              HostMemory::kPinned,
                                                              Aggregation::kAlone,
                                                              size,
                                                              lane.bytes_per_trial(),
                                                              setup.value().placement.numa_node,
                                                              setup.value().placement.local},
                                                             std::move(rates.value().lane_gbps[0])));
        }
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
    "aggregation with_reverse (this direction's rate while the other one runs). Their sum shows how much of a "
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
  registry.push_back(std::make_unique<SweepProbe>("sweep_ce", kSweepCeDescription, false));
}

}  // namespace pcieval
