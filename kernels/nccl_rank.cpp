#include "kernels/nccl_rank.hpp"

#include <string>
#include <utility>

#include "kernels/cuda_device.hpp"
#include "kernels/detail/cuda_check.hpp"
#include "kernels/detail/launchers.hpp"

namespace pcieval {
namespace {

Status check_count(std::size_t count, std::size_t max_count) {
  if (count == 0 || count > max_count) {
    return make_error("all-reduce of " + std::to_string(count) + " floats does not fit buffers of " +
                      std::to_string(max_count));
  }
  return ok_status();
}

}  // namespace

Status use_cuda_device(int ordinal) { return detail::use_device(ordinal); }

Result<AllReduceRank> AllReduceRank::create(int ordinal, int rank, std::size_t max_count) {
  if (max_count == 0) return make_error("an all-reduce needs at least one element");
  // Before any stream of the rank can be held by a latch (preload_kernels).
  PCIEVAL_TRY_STATUS(preload_kernels(ordinal));
  PCIEVAL_ASSIGN_OR_RETURN(DeviceBuffer input, DeviceBuffer::allocate(ordinal, max_count * sizeof(float)));
  PCIEVAL_ASSIGN_OR_RETURN(DeviceBuffer output, DeviceBuffer::allocate(ordinal, max_count * sizeof(float)));
  PCIEVAL_ASSIGN_OR_RETURN(DeviceBuffer counter, DeviceBuffer::allocate(ordinal, sizeof(unsigned long long)));
  PCIEVAL_ASSIGN_OR_RETURN(PinnedHostBuffer readback, PinnedHostBuffer::allocate(ordinal, sizeof(unsigned long long)));
  PCIEVAL_ASSIGN_OR_RETURN(Stream stream, Stream::create(ordinal));
  PCIEVAL_ASSIGN_OR_RETURN(EventPair events, EventPair::create(ordinal));
  return AllReduceRank(rank, max_count, std::move(input), std::move(output), std::move(counter), std::move(readback),
                       std::move(stream), std::move(events));
}

Status AllReduceRank::prepare(std::size_t count, const PollPolicy& policy) {
  PCIEVAL_TRY_STATUS(check_count(count, max_count_));
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal()));
  PCIEVAL_ASSIGN_OR_RETURN(int blocks, detail::saturating_blocks(ordinal()));
  PCIEVAL_TRY_STATUS(detail::launch_fill_rank(stream_, blocks, input_.data(), output_.data(), count, rank_));
  return stream_.synchronize(policy);
}

Result<bool> AllReduceRank::idle() const {
  if (auto reason = cuda_device_retired_reason(ordinal())) return make_error(*reason);
  return detail::device_ready(ordinal(), "cuStreamQuery", detail::cu().stream_query(stream_.handle()));
}

Result<std::uint64_t> AllReduceRank::count_mismatches(std::size_t count, int ranks, const PollPolicy& policy) const {
  PCIEVAL_TRY_STATUS(check_count(count, max_count_));
  if (ranks < 1) return make_error("an all-reduce has at least one rank");
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal()));
  PCIEVAL_ASSIGN_OR_RETURN(int blocks, detail::saturating_blocks(ordinal()));
  // Two 32-bit zeros: the count is one 64-bit word.
  PCIEVAL_CU_TRY("cuMemsetD32Async",
                 detail::cu().memset_d32_async(detail::device_address(counter_.data()), 0U, 2, stream_.handle()));
  PCIEVAL_TRY_STATUS(
      detail::launch_count_sum_mismatches(stream_, blocks, output_.data(), count, ranks, counter_.data()));
  return detail::read_counter(
      stream_, counter_, readback_, policy,
      "the all-reduce check of rank " + std::to_string(rank_) + " on CUDA device " + std::to_string(ordinal()));
}

}  // namespace pcieval
