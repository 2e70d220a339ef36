#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/detail/cuda_check.cuh"
#include "kernels/detail/kernels.cuh"
#include "kernels/pattern.hpp"

namespace pcieval::detail {
namespace {

constexpr int kThreadsPerBlock = 256;
// Loads issued before the first store in the copy loop: independent loads in
// flight per thread hide PCIe latency better than one load-store pair.
constexpr int kCopyUnroll = 4;

__device__ inline std::size_t global_thread() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ inline std::size_t grid_threads() { return static_cast<std::size_t>(gridDim.x) * blockDim.x; }

__device__ inline uint4 pattern_vector(std::size_t vector_index, std::uint32_t seed) {
  const std::uint64_t word = static_cast<std::uint64_t>(vector_index) * 4;
  return make_uint4(pattern_word(word, seed), pattern_word(word + 1, seed), pattern_word(word + 2, seed),
                    pattern_word(word + 3, seed));
}

__global__ void fill_pattern_kernel(uint4* data, std::size_t vectors, std::uint32_t seed) {
  for (std::size_t i = global_thread(); i < vectors; i += grid_threads()) data[i] = pattern_vector(i, seed);
}

__global__ void poison_kernel(uint4* data, std::size_t vectors) {
  const uint4 poison = make_uint4(kPoisonWord, kPoisonWord, kPoisonWord, kPoisonWord);
  for (std::size_t i = global_thread(); i < vectors; i += grid_threads()) data[i] = poison;
}

__global__ void count_mismatches_kernel(const uint4* data, std::size_t vectors, std::uint32_t seed,
                                        unsigned long long* counter) {
  unsigned long long mismatches = 0;
  for (std::size_t i = global_thread(); i < vectors; i += grid_threads()) {
    // ld.cv: a cached line of mapped host memory counts as stale and is
    // fetched again, so the check reads what the copy left in host memory,
    // not what the poison kernel left in L2.
    const uint4 got = __ldcv(&data[i]);
    const uint4 want = pattern_vector(i, seed);
    mismatches += (got.x != want.x) + (got.y != want.y) + (got.z != want.z) + (got.w != want.w);
  }
  // Warp sum, then one atomic per warp.
  for (int offset = 16; offset > 0; offset /= 2) mismatches += __shfl_down_sync(0xffffffffU, mismatches, offset);
  if ((threadIdx.x & 31U) == 0 && mismatches != 0) atomicAdd(counter, mismatches);
}

__global__ void sm_copy_kernel(uint4* __restrict__ destination, const uint4* __restrict__ source, std::size_t vectors) {
  const std::size_t stride = grid_threads();
  std::size_t i = global_thread();
  for (; i + (kCopyUnroll - 1) * stride < vectors; i += kCopyUnroll * stride) {
    uint4 staged[kCopyUnroll];
#pragma unroll
    for (int u = 0; u < kCopyUnroll; ++u) staged[u] = source[i + u * stride];
#pragma unroll
    for (int u = 0; u < kCopyUnroll; ++u) destination[i + u * stride] = staged[u];
  }
  for (; i < vectors; i += stride) destination[i] = source[i];
}

__device__ inline unsigned long long global_timer_ns() {
  unsigned long long now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

__global__ void latch_kernel(const volatile int* release, volatile int* timed_out, unsigned long long timeout_ns) {
  const unsigned long long start_ns = global_timer_ns();
  while (*release == 0) {
    if (global_timer_ns() - start_ns > timeout_ns) {
      *timed_out = 1;
      __threadfence_system();
      return;
    }
    // Each poll is a read across PCIe; a short sleep keeps the spinning
    // thread from flooding the link while the host queues the copies.
    __nanosleep(100);
  }
}

unsigned int grid_for(int blocks, std::size_t vectors) {
  // No more blocks than there is work for, and at least one.
  const std::size_t needed = (vectors + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const std::size_t chosen = needed < static_cast<std::size_t>(blocks) ? needed : static_cast<std::size_t>(blocks);
  return static_cast<unsigned int>(chosen > 0 ? chosen : 1);
}

Status launched(const char* kernel) { return cuda_status(kernel, cudaGetLastError()); }

}  // namespace

Result<int> saturating_blocks(int ordinal) {
  int sm_count = 0;
  int threads_per_sm = 0;
  PCIEVAL_CUDA_TRY(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, ordinal));
  PCIEVAL_CUDA_TRY(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, ordinal));
  const int per_sm = threads_per_sm / kThreadsPerBlock;
  return sm_count * (per_sm > 0 ? per_sm : 1);
}

Status launch_fill_pattern(cudaStream_t stream, int blocks, std::byte* data, std::size_t bytes, std::uint32_t seed) {
  const std::size_t vectors = bytes / sizeof(uint4);
  fill_pattern_kernel<<<grid_for(blocks, vectors), kThreadsPerBlock, 0, stream>>>(reinterpret_cast<uint4*>(data),
                                                                                  vectors, seed);
  return launched("fill_pattern_kernel");
}

Status launch_poison(cudaStream_t stream, int blocks, std::byte* data, std::size_t bytes) {
  const std::size_t vectors = bytes / sizeof(uint4);
  poison_kernel<<<grid_for(blocks, vectors), kThreadsPerBlock, 0, stream>>>(reinterpret_cast<uint4*>(data), vectors);
  return launched("poison_kernel");
}

Status launch_count_mismatches(cudaStream_t stream, int blocks, const std::byte* data, std::size_t bytes,
                               std::uint32_t seed, unsigned long long* counter) {
  const std::size_t vectors = bytes / sizeof(uint4);
  count_mismatches_kernel<<<grid_for(blocks, vectors), kThreadsPerBlock, 0, stream>>>(
      reinterpret_cast<const uint4*>(data), vectors, seed, counter);
  return launched("count_mismatches_kernel");
}

Status launch_sm_copy(cudaStream_t stream, int blocks, std::byte* destination, const std::byte* source,
                      std::size_t bytes) {
  const std::size_t vectors = bytes / sizeof(uint4);
  sm_copy_kernel<<<grid_for(blocks, vectors), kThreadsPerBlock, 0, stream>>>(
      reinterpret_cast<uint4*>(destination), reinterpret_cast<const uint4*>(source), vectors);
  return launched("sm_copy_kernel");
}

Status launch_latch(cudaStream_t stream, const int* release, int* timed_out, unsigned long long timeout_ns) {
  latch_kernel<<<1, 1, 0, stream>>>(release, timed_out, timeout_ns);
  return launched("latch_kernel");
}

Status load_kernels_on_current_device() {
  cudaFuncAttributes unused{};
  PCIEVAL_CUDA_TRY(cudaFuncGetAttributes(&unused, fill_pattern_kernel));
  PCIEVAL_CUDA_TRY(cudaFuncGetAttributes(&unused, poison_kernel));
  PCIEVAL_CUDA_TRY(cudaFuncGetAttributes(&unused, count_mismatches_kernel));
  PCIEVAL_CUDA_TRY(cudaFuncGetAttributes(&unused, sm_copy_kernel));
  PCIEVAL_CUDA_TRY(cudaFuncGetAttributes(&unused, latch_kernel));
  return ok_status();
}

}  // namespace pcieval::detail
