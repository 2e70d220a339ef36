// Every GPU kernel of pcieval, compiled to one PTX module (never to host
// code: nvcc -ptx, kernels/CMakeLists.txt) that kernels/module.cpp loads into
// each device's context with the driver API and launches by name. extern "C"
// keeps the names unmangled, which is what module.cpp looks them up by.
//
// Written for a PTX ISA that the oldest supported driver (R535, CUDA 12.2,
// PTX 8.2) can compile: nothing here needs a newer instruction, and the
// build checks it (ptx_version_test).
#include <cstddef>
#include <cstdint>

#include "kernels/pattern.hpp"

namespace {

// Loads issued before the first store in the copy loop: independent loads in
// flight per thread hide PCIe latency better than one load-store pair.
constexpr int kCopyUnroll = 4;

__device__ inline std::size_t global_thread() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ inline std::size_t grid_threads() { return static_cast<std::size_t>(gridDim.x) * blockDim.x; }

__device__ inline uint4 pattern_vector(std::size_t vector_index, std::uint32_t seed) {
  const std::uint64_t word = static_cast<std::uint64_t>(vector_index) * 4;
  return make_uint4(pcieval::pattern_word(word, seed), pcieval::pattern_word(word + 1, seed),
                    pcieval::pattern_word(word + 2, seed), pcieval::pattern_word(word + 3, seed));
}

__device__ inline unsigned long long global_timer_ns() {
  unsigned long long now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

// The all-reduce rank's pattern (kernels/nccl_rank.hpp). Values stay below
// 62, so a sum over up to 2^18 ranks is an integer below 2^24, exact in float.
__device__ inline float rank_input_value(int rank, std::size_t index) {
  return static_cast<float>((index + 7U * static_cast<std::size_t>(rank)) % 61U + 1U);
}

}  // namespace

extern "C" {

__global__ void pcieval_fill_pattern(uint4* data, std::size_t vectors, std::uint32_t seed) {
  for (std::size_t i = global_thread(); i < vectors; i += grid_threads()) data[i] = pattern_vector(i, seed);
}

__global__ void pcieval_poison(uint4* data, std::size_t vectors) {
  const uint4 poison =
      make_uint4(pcieval::kPoisonWord, pcieval::kPoisonWord, pcieval::kPoisonWord, pcieval::kPoisonWord);
  for (std::size_t i = global_thread(); i < vectors; i += grid_threads()) data[i] = poison;
}

__global__ void pcieval_count_mismatches(const uint4* data, std::size_t vectors, std::uint32_t seed,
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
  // Warp sum, then one atomic per warp. The launcher's blocks are whole warps.
  for (int offset = 16; offset > 0; offset /= 2) mismatches += __shfl_down_sync(0xffffffffU, mismatches, offset);
  if ((threadIdx.x & 31U) == 0 && mismatches != 0) atomicAdd(counter, mismatches);
}

__global__ void pcieval_sm_copy(uint4* __restrict__ destination, const uint4* __restrict__ source,
                                std::size_t vectors) {
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

__global__ void pcieval_latch(const volatile int* release, volatile int* timed_out, unsigned long long timeout_ns) {
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

__global__ void pcieval_fill_rank(float* input, float* output, std::size_t count, int rank) {
  for (std::size_t i = global_thread(); i < count; i += grid_threads()) {
    input[i] = rank_input_value(rank, i);
    // NaN compares unequal to every sum: an output never written cannot pass.
    output[i] = __int_as_float(0x7fc00000);
  }
}

__global__ void pcieval_count_sum_mismatches(const float* output, std::size_t count, int ranks,
                                             unsigned long long* counter) {
  unsigned long long local = 0;
  for (std::size_t i = global_thread(); i < count; i += grid_threads()) {
    float expected = 0;
    for (int r = 0; r < ranks; ++r) expected += rank_input_value(r, i);
    if (!(output[i] == expected)) ++local;
  }
  if (local != 0) atomicAdd(counter, local);
}

}  // extern "C"
