// The GPU-to-GPU probes (--p2p, --full): copies between every pair of GPUs
// (p2p_pairs.hpp), by copy engine and by SM kernel, writes and reads, one way
// and both ways, and the same copy with peer access off (staged through host
// memory by the driver). nvbandwidth's method, as the host copy probes use
// it: every trial queued behind a latch kernel, timed by events around the
// copies only, the destination checked after the timed region on every
// trial (run_latched_trial), median of the trials.
//
// A pair without peer access (cuDeviceCanAccessPeer 0 in either direction
// the probe needs) is not measured by the peer-access probes: it is listed
// in their warnings as "no peer access" and measured by p2p_staged_ce only,
// never reported as a slow peer copy. What CUDA said of every ordered pair
// goes into the evidence as peer_status (capability access, source cuda).
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "bench/detail/gpu_probe_common.hpp"
#include "bench/gpu_groups.hpp"
#include "bench/gpu_preconditions.hpp"
#include "bench/p2p_pairs.hpp"
#include "bench/probe.hpp"
#include "kernels/copy_stream.hpp"
#include "kernels/cuda_device.hpp"
#include "kernels/latch.hpp"
#include "kernels/peer_access.hpp"

namespace pcieval {
namespace {

using gpu_probe_common::add_group_failure;
using gpu_probe_common::GpuTarget;
using gpu_probe_common::resolve;
using gpu_probe_common::stream_seed;
using gpu_probe_common::time_streams;
using gpu_probe_common::verified_measurement;

struct P2pSpec {
  std::string_view key;
  std::string_view description;
  PeerTransfer transfer = PeerTransfer::kWrite;
  CopyMethod method = CopyMethod::kCopyEngine;
  bool peer_access = true;  // false: p2p_staged_ce, peer access held off
  bool both_ways = true;    // also both directions of each pair at once
  bool in_p2p = false;      // runs under --p2p (every p2p probe runs under --full)
};

// Peer access as this probe needs it on one ordered pair, held for a scope.
struct AccessHold {
  std::vector<PeerAccessScope> scopes;
};

class P2pProbe final : public Probe {
 public:
  explicit P2pProbe(P2pSpec spec) : spec_(spec) {}

  [[nodiscard]] std::string_view key() const override { return spec_.key; }
  [[nodiscard]] std::string_view description() const override { return spec_.description; }
  [[nodiscard]] bool in_quick() const override { return false; }
  [[nodiscard]] bool peer_to_peer() const override { return true; }
  [[nodiscard]] bool in_p2p() const override { return spec_.in_p2p; }

  [[nodiscard]] std::optional<std::string> skip_reason(const ProbeContext& context) const override {
    const std::size_t gpus = gpus_of(context.evidence).size();
    if (gpus == 0) return "no NVIDIA GPU in the evidence";
    if (gpus < 2) return "one GPU: no pair to copy between";
    if (!built_with_cuda()) return std::string(kBuiltWithoutCudaMessage);
    if (auto reason = launch_blocking_skip_reason(context.config.cuda_launch_blocking)) return reason;
    if (auto reason = confidential_computing_skip_reason(context.confidential_computing)) return reason;
    if (auto count = cuda_device_count(); !count) return "no usable CUDA device: " + count.error().message;
    return std::nullopt;
  }

  [[nodiscard]] std::string progress_subject(const ProbeContext& context) const override {
    return std::to_string(plan_p2p_pairs(context.evidence).pairs.size()) + " GPU pairs";
  }

  [[nodiscard]] ProbeMeasurements run(const ProbeContext& context) const override {
    ProbeMeasurements output;
    if (auto size = gpu_probe_common::check_size(context.config); !size) {
      output.errors.push_back(size.error().message);
      return output;
    }
    const std::vector<GpuTarget> targets = resolve(context, gpus_of(context.evidence), output);
    const P2pPairPlan plan = plan_p2p_pairs(context.evidence);
    if (!plan.sampled_note.empty()) output.warnings.push_back(plan.sampled_note);
    const auto target_of = [&targets](const PciAddress& address) -> const GpuTarget* {
      const auto found = std::find_if(targets.begin(), targets.end(),
                                      [&address](const GpuTarget& gpu) { return gpu.address == address; });
      return found == targets.end() ? nullptr : &*found;
    };
    for (const auto& [first, second] : plan.pairs) {
      const GpuTarget* a = target_of(first);
      const GpuTarget* b = target_of(second);
      if (a == nullptr || b == nullptr) continue;  // resolve() reported it
      if (context.stop != nullptr && context.stop->load() != 0) break;
      run_pair(context, *a, *b, output);
    }
    return output;
  }

 private:
  // Whether `from` can reach `to`'s memory, recorded as peer status; nullopt
  // (with the error recorded) when CUDA could not say.
  std::optional<bool> access(const GpuTarget& from, const GpuTarget& to, ProbeMeasurements& output) const {
    auto can = cuda_can_access_peer(from.ordinal, to.ordinal);
    if (!can) {
      output.errors.push_back(p2p_subject(from.address, to.address) + ": " + can.error().message);
      return std::nullopt;
    }
    output.peer_status.push_back(
        PeerStatus{from.address, to.address, PeerCapability::kAccess, can.value() ? "ok" : "not_supported", "cuda"});
    return can.value();
  }

  // Peer access for copies run by `from` over `to`: on for the peer-access
  // probes, off both ways for the staged one. Kept in `hold` until the pair
  // is done; restored then (PeerAccessScope).
  Status hold_access(const GpuTarget& from, const GpuTarget& to, AccessHold& hold) const {
    const auto keep = [&hold](Result<PeerAccessScope> scope) -> Status {
      if (!scope) return scope.error();
      hold.scopes.push_back(std::move(scope).value());
      return ok_status();
    };
    if (spec_.peer_access) return keep(PeerAccessScope::enable(from.ordinal, to.ordinal));
    if (auto held = keep(PeerAccessScope::disable(from.ordinal, to.ordinal)); !held) return held;
    return keep(PeerAccessScope::disable(to.ordinal, from.ordinal));
  }

  std::uint32_t seed_of(const GpuTarget& from, const GpuTarget& to) const {
    return stream_seed(from.ordinal, Direction::kDeviceToDevice, spec_.method) ^
           (static_cast<std::uint32_t>(to.ordinal + 1) << 12) ^ (spec_.transfer == PeerTransfer::kRead ? 0x100U : 0U);
  }

  Measurement measurement_of(const GpuTarget& from, const GpuTarget& to, const CopyStream& stream,
                             Aggregation aggregation, std::vector<double> trials_gbps) const {
    // No host buffer: the host-memory fields keep their defaults (a staged
    // copy goes through the driver's own pinned buffers), NUMA unknown.
    // The subject's arrow is the way the bytes went, whoever moved them: a
    // read's data comes from the peer, as the capture readers name it too.
    const bool read = spec_.transfer == PeerTransfer::kRead;
    return verified_measurement({spec_.key,
                                 read ? p2p_subject(to.address, from.address) : p2p_subject(from.address, to.address),
                                 {from.address, to.address},
                                 Direction::kDeviceToDevice,
                                 spec_.method,
                                 HostMemory::kPinned,
                                 aggregation,
                                 stream.shape().size_bytes,
                                 stream.bytes_per_trial(),
                                 std::nullopt,
                                 std::nullopt},
                                std::move(trials_gbps));
  }

  // The stream of `from` copying over `to`, with the access it needs held
  // in `hold`; nullopt, the failure recorded, when either cannot be had.
  std::optional<CopyStream> set_up(const ProbeContext& context, const GpuTarget& from, const GpuTarget& to,
                                   AccessHold& hold, ProbeMeasurements& output) const {
    const std::string subject = p2p_subject(from.address, to.address);
    if (auto held = hold_access(from, to, hold); !held) {
      add_group_failure(output, {from, to}, subject, held.error().message);
      return std::nullopt;
    }
    auto stream = CopyStream::create_peer(from.ordinal, to.ordinal, spec_.transfer, spec_.method,
                                          static_cast<std::size_t>(context.config.size_bytes), seed_of(from, to));
    if (!stream) {
      add_group_failure(output, {from, to}, subject, stream.error().message);
      return std::nullopt;
    }
    return std::move(stream).value();
  }

  // Times `streams` together and records one measurement per stream;
  // `what` names the run in a failure.
  void measure(const ProbeContext& context, const std::vector<std::pair<const GpuTarget*, const GpuTarget*>>& ends,
               std::vector<CopyStream*> streams, Latch& latch, const std::string& what,
               ProbeMeasurements& output) const {
    auto rates = time_streams(context, streams, latch);
    if (!rates) return add_group_failure(output, {*ends[0].first, *ends[0].second}, what, rates.error().message);
    const Aggregation aggregation = streams.size() > 1 ? Aggregation::kWithReverse : Aggregation::kAlone;
    for (std::size_t i = 0; i < streams.size(); ++i) {
      output.measurements.push_back(measurement_of(*ends[i].first, *ends[i].second, *streams[i], aggregation,
                                                   std::move(rates.value().stream_gbps[i])));
    }
  }

  // One pair: each way alone, then both ways at once (`a` running its copy
  // over `b` and `b` its copy over `a`, released by one latch: one
  // measurement per direction, with_reverse). The two streams serve all
  // three runs: allocating and filling a buffer costs more than a trial.
  void run_pair(const ProbeContext& context, const GpuTarget& a, const GpuTarget& b, ProbeMeasurements& output) const {
    const std::optional<bool> ab = access(a, b, output);
    const std::optional<bool> ba = access(b, a, output);
    bool forward_wanted = true;
    bool backward_wanted = true;
    if (spec_.peer_access) {
      // Never a slow peer copy: a way the driver gives no peer access is
      // said as such, and p2p_staged_ce measures it.
      for (const auto& [from, to, can] : {std::tuple{&a, &b, ab}, std::tuple{&b, &a, ba}}) {
        if (can && !*can) {
          output.warnings.push_back(p2p_subject(from->address, to->address) +
                                    ": no peer access (cuDeviceCanAccessPeer 0): measured by p2p_staged_ce only");
        }
      }
      forward_wanted = ab.value_or(false);
      backward_wanted = ba.value_or(false);
    }
    if (!forward_wanted && !backward_wanted) return;
    AccessHold hold;  // declared first: restored after the streams are done
    std::optional<CopyStream> forward;
    std::optional<CopyStream> backward;
    if (forward_wanted) forward = set_up(context, a, b, hold, output);
    if (backward_wanted) backward = set_up(context, b, a, hold, output);
    if (!forward && !backward) return;
    auto latch = Latch::create((forward ? a : b).ordinal, context.config.latch_timeout_s);
    if (!latch) return add_group_failure(output, {a, b}, p2p_subject(a.address, b.address), latch.error().message);
    const auto usable = [](const std::optional<CopyStream>& stream) { return stream && !stream->abandoned(); };
    if (usable(forward)) {
      measure(context, {{&a, &b}}, {&*forward}, latch.value(), p2p_subject(a.address, b.address), output);
    }
    if (usable(backward)) {
      measure(context, {{&b, &a}}, {&*backward}, latch.value(), p2p_subject(b.address, a.address), output);
    }
    if (spec_.both_ways && usable(forward) && usable(backward)) {
      measure(context, {{&a, &b}, {&b, &a}}, {&*forward, &*backward}, latch.value(),
              p2p_subject(a.address, b.address) + " both ways", output);
    }
  }

  P2pSpec spec_;
};

constexpr std::string_view kWriteCeDescription =
    "GPU-to-GPU writes by copy engine, for every pair of GPUs (a sample on nodes of more than 8): gpus[0]'s copy "
    "engine copies gpus[0]'s buffer into gpus[1]'s memory (cuMemcpyPeerAsync with peer access on), subject "
    "\"SRC->DST\". Latched, event-timed, the destination verified after every trial. One measurement per ordered "
    "pair (aggregation alone) and, with both GPUs writing to each other at once, one per direction (aggregation "
    "with_reverse). A pair without peer access is not measured here (warning \"no peer access\"); see "
    "p2p_staged_ce. Compare a pair behind one switch with its path's narrowest link.";
constexpr std::string_view kReadCeDescription =
    "GPU-to-GPU reads by copy engine: gpus[0]'s copy engine copies gpus[1]'s buffer into gpus[0]'s memory over "
    "peer access, one way (alone) and both ways (with_reverse), as p2p_write_ce. Reads wait for completions, so "
    "they are often a little below writes on the same pair.";
constexpr std::string_view kWriteSmDescription =
    "GPU-to-GPU writes by SM kernel: a grid-stride copy kernel on gpus[0] stores into gpus[1]'s memory through "
    "the peer pointer (peer access on), one way (alone) and both ways (with_reverse), verified as p2p_write_ce.";
constexpr std::string_view kReadSmDescription =
    "GPU-to-GPU reads by SM kernel: a copy kernel on gpus[0] loads gpus[1]'s memory through the peer pointer, one "
    "way (alone) and both ways (with_reverse). SM reads over PCIe are bound by the requests in flight, so this is "
    "often the lowest of the four.";
constexpr std::string_view kStagedCeDescription =
    "The copy of p2p_write_ce with peer access held off in both directions: the driver stages the bytes through "
    "host memory (what p2pBandwidthLatencyTest's \"P2P=Disabled\" matrices measure). One measurement per ordered "
    "pair (alone), every pair measured, with or without peer access. A peer-access copy slower than this on the "
    "same pair is a routing fault whatever the link: its traffic takes a detour (ACS redirect, IOMMU).";

}  // namespace

void add_p2p_probes(ProbeRegistry& registry) {
  registry.push_back(std::make_unique<P2pProbe>(
      P2pSpec{"p2p_write_ce", kWriteCeDescription, PeerTransfer::kWrite, CopyMethod::kCopyEngine, true, true, true}));
  registry.push_back(std::make_unique<P2pProbe>(
      P2pSpec{"p2p_read_ce", kReadCeDescription, PeerTransfer::kRead, CopyMethod::kCopyEngine, true, true, false}));
  registry.push_back(std::make_unique<P2pProbe>(
      P2pSpec{"p2p_write_sm", kWriteSmDescription, PeerTransfer::kWrite, CopyMethod::kSmKernel, true, true, false}));
  registry.push_back(std::make_unique<P2pProbe>(
      P2pSpec{"p2p_read_sm", kReadSmDescription, PeerTransfer::kRead, CopyMethod::kSmKernel, true, true, false}));
  registry.push_back(std::make_unique<P2pProbe>(P2pSpec{"p2p_staged_ce", kStagedCeDescription, PeerTransfer::kWrite,
                                                        CopyMethod::kCopyEngine, false, false, true}));
}

}  // namespace pcieval
