#include <cuda_runtime.h>

#include <string>
#include <utility>

#include "kernels/cuda_device.hpp"
#include "kernels/detail/cuda_check.cuh"
#include "kernels/detail/kernels.cuh"
#include "kernels/nccl_rank.hpp"

namespace pcieval {
namespace {

constexpr unsigned int kThreadsPerBlock = 256;

// The pattern of nccl_rank.hpp. Values stay below 62, so a sum over up to
// 2^18 ranks is an integer below 2^24, exact in float.
__host__ __device__ inline float input_value(int rank, std::size_t index) {
  return static_cast<float>((index + 7U * static_cast<std::size_t>(rank)) % 61U + 1U);
}

__device__ inline std::size_t global_thread() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::size_t grid_threads() { return static_cast<std::size_t>(gridDim.x) * blockDim.x; }

__global__ void fill_rank_kernel(float* input, float* output, std::size_t count, int rank) {
  for (std::size_t i = global_thread(); i < count; i += grid_threads()) {
    input[i] = input_value(rank, i);
    // NaN compares unequal to every sum: an output never written cannot pass.
    output[i] = __int_as_float(0x7fc00000);
  }
}

__global__ void count_sum_mismatches_kernel(const float* output, std::size_t count, int ranks,
                                            unsigned long long* counter) {
  unsigned long long local = 0;
  for (std::size_t i = global_thread(); i < count; i += grid_threads()) {
    float expected = 0;
    for (int r = 0; r < ranks; ++r) expected += input_value(r, i);
    if (!(output[i] == expected)) ++local;
  }
  if (local != 0) atomicAdd(counter, local);
}

unsigned int grid_for(int blocks, std::size_t count) {
  const std::size_t needed = (count + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const std::size_t chosen = needed < static_cast<std::size_t>(blocks) ? needed : static_cast<std::size_t>(blocks);
  return static_cast<unsigned int>(chosen == 0 ? 1 : chosen);
}

Status check_count(std::size_t count, std::size_t max_count) {
  if (count == 0 || count > max_count) {
    return make_error("all-reduce of " + std::to_string(count) + " floats does not fit buffers of " +
                      std::to_string(max_count));
  }
  return ok_status();
}

}  // namespace

namespace detail {

Status load_all_reduce_kernels_on_current_device() {
  cudaFuncAttributes unused{};
  PCIEVAL_CUDA_TRY(cudaFuncGetAttributes(&unused, fill_rank_kernel));
  PCIEVAL_CUDA_TRY(cudaFuncGetAttributes(&unused, count_sum_mismatches_kernel));
  return ok_status();
}

}  // namespace detail

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
  fill_rank_kernel<<<grid_for(blocks, count), kThreadsPerBlock, 0, stream_.handle()>>>(
      static_cast<float*>(static_cast<void*>(input_.data())), static_cast<float*>(static_cast<void*>(output_.data())),
      count, rank_);
  PCIEVAL_CUDA_TRY(cudaGetLastError());
  return stream_.synchronize(policy);
}

Result<bool> AllReduceRank::idle() const {
  if (auto reason = cuda_device_retired_reason(ordinal())) return make_error(*reason);
  return detail::cuda_ready("cudaStreamQuery", cudaStreamQuery(stream_.handle()));
}

Result<std::uint64_t> AllReduceRank::count_mismatches(std::size_t count, int ranks, const PollPolicy& policy) const {
  PCIEVAL_TRY_STATUS(check_count(count, max_count_));
  if (ranks < 1) return make_error("an all-reduce has at least one rank");
  PCIEVAL_TRY_STATUS(detail::use_device(ordinal()));
  PCIEVAL_ASSIGN_OR_RETURN(int blocks, detail::saturating_blocks(ordinal()));
  auto* count_word = static_cast<unsigned long long*>(static_cast<void*>(counter_.data()));
  PCIEVAL_CUDA_TRY(cudaMemsetAsync(count_word, 0, sizeof(unsigned long long), stream_.handle()));
  count_sum_mismatches_kernel<<<grid_for(blocks, count), kThreadsPerBlock, 0, stream_.handle()>>>(
      static_cast<const float*>(static_cast<const void*>(output_.data())), count, ranks, count_word);
  PCIEVAL_CUDA_TRY(cudaGetLastError());
  return detail::read_counter(
      stream_, counter_, readback_, policy,
      "the all-reduce check of rank " + std::to_string(rank_) + " on CUDA device " + std::to_string(ordinal()));
}

}  // namespace pcieval
