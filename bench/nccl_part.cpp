#include "bench/nccl_part.hpp"

#include <memory>
#include <string_view>
#include <utility>

#include "bench/detail/nccl_session.hpp"
#include "kernels/cuda_device.hpp"
#include "kernels/nccl_rank.hpp"
#include "kernels/retired_devices.hpp"

namespace pcieval {
namespace {

using nccl_session::AllReduceSession;
using nccl_session::nccl_library;
using nccl_session::Participants;
using nccl_session::Transport;

// Who set up a fleet all-reduce's communicators, as the P2P latch names it.
constexpr std::string_view kFleetKey = "the fleet all-reduce";

}  // namespace

Result<std::vector<int>> allreduce_part_ordinals(const NcclProbeOptions& options) {
  if (!built_with_cuda()) return make_error(std::string(kBuiltWithoutCudaMessage));
  const Result<NcclLibrary>& library = nccl_library(options.library_name);
  if (!library) return make_error("NCCL not loadable: " + library.error().message);
  auto count = cuda_device_count();
  if (!count) return make_error("no usable CUDA device: " + count.error().message);
  std::vector<int> ordinals;
  for (int ordinal = 0; ordinal < count.value(); ++ordinal) {
    if (!cuda_device_retired(ordinal)) ordinals.push_back(ordinal);
  }
  if (ordinals.empty()) {
    return make_error(count.value() == 0 ? std::string("no CUDA device")
                                         : "every CUDA device was retired earlier in this run");
  }
  return ordinals;
}

Result<NcclUniqueId> make_nccl_unique_id(const NcclProbeOptions& options) {
  const Result<NcclLibrary>& library = nccl_library(options.library_name);
  if (!library) return make_error("NCCL not loadable: " + library.error().message);
  const NcclApi& api = library.value().api();
  NcclUniqueId id{};
  if (NcclResult code = api.get_unique_id(&id); code != kNcclSuccess) {
    return make_error(nccl_error_text(api, "ncclGetUniqueId", code));
  }
  return id;
}

Result<AllReducePartResult> run_allreduce_part(const AllReducePart& part, const NcclProbeOptions& options) {
  if (part.size_bytes == 0 || part.size_bytes % sizeof(float) != 0) {
    return make_error("the all-reduce size must be a non-zero multiple of 4 bytes (floats), got " +
                      std::to_string(part.size_bytes));
  }
  if (part.ordinals.empty() || part.first_rank < 0 || part.trials < 1 ||
      part.first_rank + static_cast<int>(part.ordinals.size()) > part.total_ranks) {
    return make_error("this process's ranks " + std::to_string(part.first_rank) + " + " +
                      std::to_string(part.ordinals.size()) + " do not fit in " + std::to_string(part.total_ranks));
  }
  const Result<NcclLibrary>& library = nccl_library(options.library_name);
  if (!library) return make_error("NCCL not loadable: " + library.error().message);
  const auto count = static_cast<std::size_t>(part.size_bytes / sizeof(float));
  std::vector<AllReduceRank> ranks;
  for (std::size_t i = 0; i < part.ordinals.size(); ++i) {
    auto rank = AllReduceRank::create(part.ordinals[i], part.first_rank + static_cast<int>(i), count);
    if (!rank) return make_error("CUDA device " + std::to_string(part.ordinals[i]) + ": " + rank.error().message);
    ranks.push_back(std::move(rank).value());
  }
  AllReducePartResult result;
  const Participants participants{part.id, part.first_rank, part.total_ranks};
  auto session = AllReduceSession::open(library.value(), participants, std::move(ranks), Transport::kNcclChoice,
                                        kFleetKey, options.timeout_s, result.warnings);
  if (!session) return session.error();
  if (auto prepared = session.value()->prepare(count); !prepared) return prepared.error();
  for (int trial = 0; trial < part.warmup_trials + part.trials; ++trial) {
    if (part.before_trial) {
      if (auto lined_up = part.before_trial(); !lined_up) return lined_up.error();
    }
    auto seconds = session.value()->trial(count);
    if (!seconds) return seconds.error();
    if (trial >= part.warmup_trials) result.trial_s.push_back(seconds.value());
  }
  result.warnings.push_back(session.value()->transport_chosen());
  if (const auto wrong = session.value()->verify(count); !wrong.empty()) {
    std::string joined;
    for (const auto& [index, error] : wrong) {
      joined +=
          (joined.empty() ? "CUDA device " : "; CUDA device ") + std::to_string(part.ordinals[index]) + ": " + error;
    }
    return make_error(joined);
  }
  return result;
}

}  // namespace pcieval
