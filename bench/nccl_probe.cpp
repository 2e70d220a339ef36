#include "bench/nccl_probe.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/detail/gpu_probe_common.hpp"
#include "bench/detail/nccl_session.hpp"
#include "bench/gpu_groups.hpp"
#include "bench/trials.hpp"
#include "kernels/cuda_device.hpp"
#include "kernels/nccl_rank.hpp"
#include "model/text.hpp"

namespace pcieval {
namespace {

using gpu_probe_common::GpuTarget;
using nccl_session::AllReduceSession;
using nccl_session::nccl_library;
using nccl_session::Participants;
using nccl_session::Transport;

constexpr std::string_view kHostKey = "allreduce_nccl_host";
constexpr std::string_view kNormalKey = "allreduce_nccl";

// --- The probe

class NcclAllReduceProbe final : public Probe {
 public:
  enum class Mode { kHostPath, kNormal };

  NcclAllReduceProbe(Mode mode, NcclProbeOptions options) : mode_(mode), options_(std::move(options)) {}

  [[nodiscard]] std::string_view key() const override { return mode_ == Mode::kHostPath ? kHostKey : kNormalKey; }
  [[nodiscard]] std::string_view description() const override;
  [[nodiscard]] bool in_quick() const override { return mode_ == Mode::kHostPath; }

  [[nodiscard]] std::optional<std::string> skip_reason(const ProbeContext& context) const override {
    const std::size_t gpus = gpus_of(context.evidence).size();
    if (gpus < 2) return "all-reduce needs 2 or more GPUs (found " + std::to_string(gpus) + ")";
    if (!built_with_cuda()) return std::string(kBuiltWithoutCudaMessage);
    const Result<NcclLibrary>& library = nccl_library(options_.library_name);
    if (!library) return "NCCL not loadable: " + library.error().message;
    if (auto count = cuda_device_count(); !count) return "no usable CUDA device: " + count.error().message;
    return std::nullopt;
  }

  [[nodiscard]] ProbeMeasurements run(const ProbeContext& context) const override;

 private:
  // Ascending sweep sizes (--full), then the verdict size.
  [[nodiscard]] static std::vector<std::uint64_t> sizes(const RunConfig& config);

  Mode mode_;
  NcclProbeOptions options_;
};

constexpr std::string_view kHostDescription =
    "NCCL all-reduce (sum of floats) over every local GPU at once, one communicator per GPU in one process, with "
    "peer-to-peer disabled (NCCL_P2P_DISABLE=1, NCCL_NVLS_ENABLE=0, NCCL_SHM_DISABLE=0): NCCL moves every byte "
    "through host memory, so each GPU's PCIe link carries the bus bandwidth in both directions at once. One "
    "measurement at the verdict size (and, with --full, 8 KiB to 1 GiB), subject \"N GPUs\", aggregation "
    "bus_bandwidth: nccl-tests' busbw = algbw x 2(n-1)/n, GB = 1e9; bytes_per_trial is size x 2(n-1)/n, what each "
    "GPU sent. Each result is checked against the exact sum on every GPU. Judged against the narrowest GPU link's "
    "budget (the lower of its read and write budgets).";
constexpr std::string_view kNormalDescription =
    "NCCL all-reduce (sum of floats) over every local GPU, like allreduce_nccl_host but over the transport NCCL "
    "chooses (NVLink, NVLS or peer-to-peer PCIe): what collectives get on this node, as bus bandwidth (busbw = "
    "algbw x 2(n-1)/n, subject \"N GPUs\"; --full only, with the same sizes). Reported as measured, never "
    "judged against a PCIe budget; a warning names the transport NCCL chose, from NCCL's own INFO log. NCCL "
    "keeps the P2P setting of a process's first communicator, so after allreduce_nccl_host in the same run this "
    "one went through host memory too, and a warning says so.";

std::string_view NcclAllReduceProbe::description() const {
  return mode_ == Mode::kHostPath ? kHostDescription : kNormalDescription;
}

std::vector<std::uint64_t> NcclAllReduceProbe::sizes(const RunConfig& config) {
  std::vector<std::uint64_t> sizes;
  if (config.mode == ProbeMode::kFull) {
    for (std::uint64_t size : allreduce_sweep_sizes()) {
      if (size != config.size_bytes) sizes.push_back(size);
    }
  }
  sizes.push_back(config.size_bytes);
  return sizes;
}

ProbeMeasurements NcclAllReduceProbe::run(const ProbeContext& context) const {
  ProbeMeasurements output;
  const RunConfig& config = context.config;
  if (mode_ == Mode::kHostPath && !nccl_session::host_path_environment_prepared()) {
    // Setting the variables now would race with the threads reading the
    // environment (prepare_nccl_environment).
    output.errors.push_back(
        "the host-path NCCL settings (NCCL_P2P_DISABLE=1, NCCL_NVLS_ENABLE=0, NCCL_SHM_DISABLE=0) were not set "
        "before the run's threads started (prepare_nccl_environment), so the transport cannot be forced");
    return output;
  }
  if (config.size_bytes == 0 || config.size_bytes % sizeof(float) != 0) {
    output.errors.push_back("the all-reduce size must be a non-zero multiple of 4 bytes (floats), got " +
                            std::to_string(config.size_bytes));
    return output;
  }
  const std::vector<GpuTarget> targets = gpu_probe_common::resolve(context, gpus_of(context.evidence), output);
  if (targets.size() < 2) {
    output.errors.push_back("all-reduce needs 2 or more usable GPUs; " + std::to_string(targets.size()) +
                            " could be used");
    return output;
  }
  const Result<NcclLibrary>& library = nccl_library(options_.library_name);
  if (!library) {
    output.errors.push_back("NCCL not loadable: " + library.error().message);
    return output;
  }
  const NcclApi& api = library.value().api();
  const std::vector<std::uint64_t> plan = sizes(config);
  const std::uint64_t max_bytes = *std::max_element(plan.begin(), plan.end());
  const int n = static_cast<int>(targets.size());
  const double bus_factor = allreduce_bus_factor(n);

  std::vector<AllReduceRank> ranks;
  ranks.reserve(targets.size());
  for (std::size_t i = 0; i < targets.size(); ++i) {
    auto rank = AllReduceRank::create(targets[i].ordinal, static_cast<int>(i),
                                      static_cast<std::size_t>(max_bytes / sizeof(float)));
    if (!rank) {
      gpu_probe_common::add_gpu_fault(output, targets[i], rank.error().message);
      return output;
    }
    ranks.push_back(std::move(rank).value());
  }
  Participants participants;
  participants.total_ranks = n;
  if (NcclResult code = api.get_unique_id(&participants.id); code != kNcclSuccess) {
    output.errors.push_back(nccl_error_text(api, "ncclGetUniqueId", code));
    return output;
  }
  auto session = AllReduceSession::open(library.value(), participants, std::move(ranks),
                                        mode_ == Mode::kHostPath ? Transport::kHostPath : Transport::kNcclChoice, key(),
                                        options_.timeout_s, output.warnings);
  const std::string what = "all-reduce (" + std::to_string(n) + " GPUs)";
  if (!session) {
    gpu_probe_common::add_group_failure(output, targets, what, session.error().message);
    return output;
  }
  AllReduceSession& all_reduce = *session.value();

  std::vector<PciAddress> addresses;
  for (const GpuTarget& target : targets) addresses.push_back(target.address);
  for (std::uint64_t size : plan) {
    const std::size_t count = static_cast<std::size_t>(size / sizeof(float));
    const std::string at = "at " + exact_size_text(size) + ": ";
    if (auto prepared = all_reduce.prepare(count); !prepared) {
      gpu_probe_common::add_group_failure(output, targets, what, at + prepared.error().message);
      break;
    }
    const TrialPlan trial_plan{config.warmup_trials, config.trials, size};
    Result<std::vector<double>> algbw = [&] {
      LoadScope load(context.load, addresses);
      return run_trials(trial_plan, [&] { return all_reduce.trial(count); });
    }();
    if (!algbw) {
      // The communicators were aborted or failed: no later size can run.
      gpu_probe_common::add_group_failure(output, targets, what, at + algbw.error().message);
      break;
    }
    // The check comes after the timed trials, never inside them; the last
    // trial's result is in every output buffer.
    const auto wrong = all_reduce.verify(count);
    for (const auto& [index, error] : wrong) gpu_probe_common::add_gpu_fault(output, targets[index], at + error);
    if (!wrong.empty()) continue;
    std::vector<double> busbw = std::move(algbw).value();
    for (double& rate : busbw) rate *= bus_factor;
    output.measurements.push_back(gpu_probe_common::verified_measurement(
        {key(), std::to_string(n) + " GPUs", addresses, Direction::kAllReduce, CopyMethod::kNccl, HostMemory::kPinned,
         Aggregation::kBusBandwidth, size,
         static_cast<std::uint64_t>(std::llround(static_cast<double>(size) * bus_factor)), std::nullopt, std::nullopt},
        std::move(busbw)));
  }
  output.warnings.push_back(all_reduce.transport_chosen());
  return output;
}

}  // namespace

double allreduce_bus_factor(int ranks) {
  if (ranks < 1) return 0;
  return 2.0 * static_cast<double>(ranks - 1) / static_cast<double>(ranks);
}

std::vector<std::uint64_t> allreduce_sweep_sizes() {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = std::uint64_t{8} << 10; size < (std::uint64_t{1} << 30); size *= 4) sizes.push_back(size);
  sizes.push_back(std::uint64_t{1} << 30);
  return sizes;
}

void prepare_nccl_environment(bool host_path) { nccl_session::prepare_environment(host_path); }

void add_nccl_probes(ProbeRegistry& registry, const NcclProbeOptions& options) {
  registry.push_back(std::make_unique<NcclAllReduceProbe>(NcclAllReduceProbe::Mode::kHostPath, options));
  registry.push_back(std::make_unique<NcclAllReduceProbe>(NcclAllReduceProbe::Mode::kNormal, options));
}

}  // namespace pcieval
